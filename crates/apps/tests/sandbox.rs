//! Hostile packages: SQL that reaches files or the host clock, templates that loop without end,
//! symbolic links out of the folder. Each is refused with a `LoadError` (or a render error) that
//! names the file, the line and the cause.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use minijinja::Value;
use phonebench_apps::templates::template_error;
use phonebench_apps::{AppPackage, DATA_KEY, DataSource, RenderData};

/// A copy of the worked example package under the temp folder, with `files` written over it.
fn package(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/example-notes");
    let dir = std::env::temp_dir().join(format!("phonebench-apps-sandbox-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("screens")).expect("temp folder");
    for file in ["app.toml", "schema.sql", "seed.sql", "actions.toml"] {
        fs::copy(example.join(file), dir.join(file)).expect("copy the example");
    }
    for screen in fs::read_dir(example.join("screens")).expect("example screens") {
        let screen = screen.expect("entry").path();
        fs::copy(&screen, dir.join("screens").join(screen.file_name().expect("name"))).expect("copy");
    }
    for (file, text) in files {
        fs::write(dir.join(file), text).expect("write a package file");
    }
    dir
}

fn load_error(dir: &Path) -> String {
    match AppPackage::load(dir) {
        Ok(_) => panic!("{} loaded", dir.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_example_loads_as_it_is() {
    AppPackage::load(&package("plain", &[])).expect("the example package loads");
}

#[test]
fn action_sql_that_reaches_files_or_the_clock_is_refused_at_its_line() {
    let base = fs::read_to_string(package("base", &[]).join("actions.toml")).expect("actions");
    // The probe's `steps` line: after the example's lines, a blank line and `[probe]`.
    let line = base.lines().count() + 3;
    for (sql, cause) in [
        ("ATTACH DATABASE '/tmp/x.sqlite' AS x", "ATTACH is not allowed"),
        ("ATTACH DATABASE '/tmp/' || 'x.sqlite' AS x", "ATTACH is not allowed"),
        ("DETACH DATABASE main", "DETACH is not allowed"),
        ("SELECT load_extension('/tmp/x.so')", "load_extension() is not allowed"),
        ("INSERT INTO notes (body, created_at) VALUES ('x', CURRENT_TIMESTAMP)", "CURRENT_TIMESTAMP"),
        ("INSERT INTO notes (body, created_at) VALUES ('x', date())", "host clock"),
        ("INSERT INTO notes (body, created_at) VALUES ('x', unixepoch())", "host clock"),
        ("INSERT INTO notes (body, created_at) VALUES ('x', datetime('NOW'))", "host clock"),
        ("INSERT INTO notes (body, created_at) VALUES ('x', strftime('%s', 'now'))", "host clock"),
        (
            "INSERT INTO notes (body, created_at) VALUES (datetime(0, 'unixepoch', 'localtime'), 0)",
            "time zone",
        ),
    ] {
        let actions = format!("{base}\n[probe]\nsteps = [ {{ sql = \"{sql}\" }} ]\n");
        let e = load_error(&package("action", &[("actions.toml", &actions)]));
        assert!(e.contains(&format!("actions.toml:{line}: action `probe`")), "`{sql}`: {e}");
        assert!(e.contains(cause), "`{sql}`: expected `{cause}` in {e}");
    }
}

#[test]
fn template_sql_that_visibly_reads_the_clock_is_refused_at_its_line() {
    for sql in [
        "SELECT datetime('NOW')",
        "SELECT strftime('%s', ' now ')",
        "SELECT datetime(0, 'unixepoch', 'localtime')",
    ] {
        let screen = format!(
            "<LinearLayout>\n  <TextView text=\"{{{{ query_value(\"{sql}\") }}}}\"/>\n</LinearLayout>\n"
        );
        let e = load_error(&package("template", &[("screens/probe.xml", &screen)]));
        assert!(e.contains("probe.xml:2: "), "{e}");
        assert!(e.contains("host"), "{e}");
    }
}

#[test]
fn symbolic_links_are_refused() {
    let outside = std::env::temp_dir().join(format!("phonebench-outside-{}.xml", std::process::id()));
    fs::write(&outside, "<TextView text=\"secret\"/>").expect("an outside file");
    let dir = package("link", &[]);
    std::os::unix::fs::symlink(&outside, dir.join("screens/leak.xml")).expect("symlink");
    let e = load_error(&dir);
    assert!(e.contains("leak.xml: is a symbolic link"), "{e}");

    let dir = package("seedlink", &[]);
    fs::remove_file(dir.join("seed.sql")).expect("remove seed");
    std::os::unix::fs::symlink(&outside, dir.join("seed.sql")).expect("symlink");
    let e = load_error(&dir);
    assert!(e.contains("seed.sql: is a symbolic link"), "{e}");

    // A link to a file inside the package is refused as well: links are not allowed at all.
    let dir = package("innerlink", &[]);
    std::os::unix::fs::symlink(dir.join("screens/list.xml"), dir.join("screens/other.xml")).expect("symlink");
    assert!(load_error(&dir).contains("other.xml: is a symbolic link"));

    let dir = package("dirlink", &[]);
    let screens = dir.join("screens");
    let real = dir.with_extension("screens");
    let _ = fs::remove_dir_all(&real);
    fs::rename(&screens, &real).expect("move screens");
    std::os::unix::fs::symlink(&real, &screens).expect("symlink");
    assert!(load_error(&dir).contains("screens: is a symbolic link"));
    let _ = fs::remove_file(outside);
}

#[derive(Debug)]
struct Failing;
impl DataSource for Failing {
    fn query(&self, _: Option<&str>, sql: &str, _: &[(String, Value)]) -> Result<Vec<Value>, String> {
        Err(format!("refused `{sql}`"))
    }
    fn search(&self, _: &str, _: &str, _: usize) -> Result<Vec<Value>, String> {
        Ok(Vec::new())
    }
}

fn render(package: &AppPackage, screen: &str) -> Result<String, String> {
    render_with(package, screen, Arc::new(Failing))
}

fn render_with(package: &AppPackage, screen: &str, data: Arc<dyn DataSource>) -> Result<String, String> {
    let file = package.dir.join("screens").join(format!("{screen}.xml"));
    let template = package.env.get_template(&format!("{screen}.xml")).map_err(|e| e.to_string())?;
    let ctx = Value::from_pairs([(DATA_KEY, Value::from_object(RenderData(data)))]);
    template.render(ctx).map_err(|e| template_error(&file, &e).to_string())
}

#[test]
fn render_errors_name_the_template_file_and_source_line() {
    let dir = package(
        "lines",
        &[
            (
                "screens/probe.xml",
                "<LinearLayout>\n  {% include '_part.xml' %}\n  {% for x in [1] %}\n    <TextView text=\"{{ query_value('SELECT 1') }}\"/>\n  {% endfor %}\n</LinearLayout>\n",
            ),
            ("screens/_part.xml", "<TextView text=\"a\"/>\n"),
            ("screens/probe2.xml", "<LinearLayout>\n  {% include '_bad.xml' %}\n</LinearLayout>\n"),
            ("screens/_bad.xml", "<TextView/>\n<TextView text=\"{{ query('SELECT 2') }}\"/>\n"),
        ],
    );
    let package = AppPackage::load(&dir).expect("loads");
    let e = render(&package, "probe").expect_err("the query fails");
    assert!(e.contains("probe.xml:4: "), "{e}");
    assert!(e.contains("refused `SELECT 1`"), "{e}");
    assert_eq!(e.matches("refused").count(), 1, "the cause is said once: {e}");
    let e = render(&package, "probe2").expect_err("the partial's query fails");
    assert!(e.contains("_bad.xml:2: "), "the partial is named with its own line: {e}");
}

#[test]
fn templates_that_loop_without_end_run_out_of_fuel() {
    let dir = package(
        "fuel",
        &[(
            "screens/probe.xml",
            "<LinearLayout>{% for i in range(100000) %}{% for j in range(100000) %}.{% endfor %}{% endfor %}</LinearLayout>\n",
        )],
    );
    let package = AppPackage::load(&dir).expect("loads");
    let first = render(&package, "probe").expect_err("out of fuel");
    assert!(first.contains("fuel"), "{first}");
    assert!(first.contains("probe.xml:1"), "{first}");
    assert_eq!(render(&package, "probe").expect_err("again"), first, "the same error every time");
}

#[test]
fn templates_cannot_build_strings_that_fill_memory() {
    // A hostile tester's screen: one big repetition, then joins without a separator (which
    // minijinja charges per item, not per byte); and plain doubling by concatenation.
    let join = "{% set a = \"x\" * 100000000 %}{% set b = [a,a,a,a,a,a,a,a,a,a]|join %}\
                {% set c = [b,b,b,b,b]|join %}<LinearLayout><TextView text=\"{{ c|length }}\"/></LinearLayout>\n";
    let small_join = "{% set a = \"x\" * 1000000 %}{% set b = [a,a,a,a,a,a,a,a,a,a]|join %}\
                      <LinearLayout><TextView text=\"{{ b|length }}\"/></LinearLayout>\n";
    let doubling = "{% set ns = namespace(s=\"xxxxxxxxxxxxxxxx\") %}{% for i in range(40) %}\
                    {% set ns.s = ns.s ~ ns.s %}{% endfor %}<LinearLayout><TextView text=\"{{ ns.s|length }}\"/></LinearLayout>\n";
    for (case, screen) in [("join", join), ("small-join", small_join), ("doubling", doubling)] {
        let dir = package(&format!("memory-{case}"), &[("screens/probe.xml", screen)]);
        let package = AppPackage::load(&dir).expect("loads");
        let e = render(&package, "probe").expect_err(case);
        assert!(e.contains("probe.xml:1"), "{case}: {e}");
        assert!(e.contains("fuel") || e.contains("join would build a string over"), "{case}: {e}");
    }
    // Joining within the limit still works.
    let dir = package(
        "memory-ok",
        &[(
            "screens/probe.xml",
            "<LinearLayout><TextView text=\"{{ ['a','b','c']|join(', ') }}\"/></LinearLayout>\n",
        )],
    );
    let package = AppPackage::load(&dir).expect("loads");
    assert!(render(&package, "probe").expect("renders").contains("a, b, c"));
}

/// Counts the limit a template's `search` call asks for.
#[derive(Debug)]
struct Limits;
impl DataSource for Limits {
    fn query(&self, _: Option<&str>, sql: &str, _: &[(String, Value)]) -> Result<Vec<Value>, String> {
        Err(format!("refused `{sql}`"))
    }
    fn search(&self, _: &str, _: &str, limit: usize) -> Result<Vec<Value>, String> {
        Ok((0..limit).map(Value::from).collect())
    }
}

#[test]
fn search_takes_its_limit_by_position_or_by_name() {
    let dir = package(
        "searchlimit",
        &[(
            "screens/hits.xml",
            "<LinearLayout><TextView text=\"{{ search('x', 'q', 3) | length }} {{ search('x', 'q', limit=5) | length }} {{ search('x', 'q') | length }}\"/></LinearLayout>",
        )],
    );
    let out =
        render_with(&AppPackage::load(&dir).expect("loads"), "hits", Arc::new(Limits)).expect("renders");
    assert!(out.contains("3 5 20"), "{out}");
    let bad = "<LinearLayout><TextView text=\"{{ search('x', 'q', 3, limit=5) | length }}\"/></LinearLayout>";
    let dir = package("searchlimit2", &[("screens/hits.xml", bad)]);
    let e = render_with(&AppPackage::load(&dir).expect("loads"), "hits", Arc::new(Limits))
        .expect_err("limit twice");
    assert!(e.contains("`limit` given twice"), "{e}");
}
