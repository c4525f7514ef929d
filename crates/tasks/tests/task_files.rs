//! Task files: a good one parses and instantiates deterministically; every malformed one fails
//! with the file, the line and the reason.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use phonebench_tasks::{CriterionKind, RefStep, TaskSpec};

const GOOD: &str = r#"
id = "contacts.add"
goal = "Add {{ first }} with number {{ phone }}; then tell me {{ who.name }}'s number."
category = "completion"
apps = ["contacts"]
max_steps = 25
start = { app = "contacts" }
reference = [
  "tap #add",
  "type #first_name \"{{ first }}\"",
  "answer \"{{ phone }}\"",
]

[tags]
length = "medium"
actions = ["tap", "type"]

[params]
first = { pool = ["Ada", "Grace", "Linus", "Barbara"] }
phone = { range = [1000, 9999] }
who = { query = "SELECT name FROM contacts", app = "contacts" }
full = { template = "{{ first }} Q." }

[[facts]]
about = ["number"]
answer = "Use {{ phone }}."

[[criteria]]
state = { app = "contacts", sql = "SELECT count(*) FROM contacts WHERE name = :first", equals = 1 }

[[criteria]]
name = "answered"
answer = { number = { value = 1.0, tolerance = 0.5 } }
"#;

fn parse(text: &str) -> Result<TaskSpec, String> {
    TaskSpec::parse(Path::new("suite/tasks/t.toml"), text).map_err(|e| e.to_string())
}

fn rows(_app: &str, _sql: &str) -> Result<Vec<serde_json::Value>, String> {
    Ok(vec![serde_json::json!({"name": "Zed"}), serde_json::json!({"name": "Yara"})])
}

#[test]
fn a_good_task_parses_and_instantiates_deterministically() {
    let spec = parse(GOOD).unwrap();
    assert_eq!(spec.id, "contacts.add");
    assert_eq!(spec.reference.len(), 3);
    assert!(matches!(spec.criteria[0].kind, CriterionKind::State(_)));
    assert_eq!(spec.criteria[1].label(), "answered");
    let a = spec.instantiate(7, 0, &mut rows).unwrap();
    let b = spec.instantiate(7, 0, &mut rows).unwrap();
    assert_eq!(a, b, "same seed and instance, same instance");
    assert!(a.goal.starts_with("Add "));
    assert!(!a.goal.contains("{{"));
    assert_eq!(a.params["full"], serde_json::json!(format!("{} Q.", a.params["first"].as_str().unwrap())));
    // Query parameters bind as `:name_column`.
    assert!(a.sql_params.contains_key("who_name"));
    let RefStep::Type { text, .. } = &a.reference[1] else { panic!("type step") };
    assert_eq!(text, a.params["first"].as_str().unwrap());
    // Different instances draw differently somewhere across a few tries.
    let goals: std::collections::BTreeSet<String> =
        (0..8).map(|i| spec.instantiate(7, i, &mut rows).unwrap().goal).collect();
    assert!(goals.len() > 1, "instances should differ: {goals:?}");
}

#[test]
fn parameter_values_are_not_templates() {
    // A parameter whose value looks like a template stays text in the goal.
    let text = GOOD.replace(r#"["Ada", "Grace", "Linus", "Barbara"]"#, r#"["{{ 7*7 }}"]"#);
    let spec = parse(&text).unwrap();
    let inst = spec.instantiate(1, 0, &mut rows).unwrap();
    assert!(inst.goal.starts_with("Add {{ 7*7 }} with"), "{}", inst.goal);
}

/// Each case: a replacement applied to GOOD, and (line, words) the error must contain.
#[test]
fn malformed_files_name_file_line_and_reason() {
    let cases: &[(&str, &str, usize, &str)] = &[
        ("category = \"completion\"", "category = \"done\"", 4, "unknown variant `done`"),
        ("max_steps = 25", "max_steps = 0", 6, "at least 1"),
        ("length = \"medium\"", "length = \"huge\"", 15, "not one of"),
        ("length = \"medium\"", "colour = \"red\"", 15, "unknown tag axis `colour`"),
        ("phone = { range = [1000, 9999] }", "phone = { range = [9, 1] }", 20, "is empty"),
        ("phone = { range = [1000, 9999] }", "phone = { }", 20, "exactly one of"),
        ("\"tap #add\",", "\"tapp #add\",", 9, "unknown step `tapp`"),
        ("\"tap #add\",", "\"tap Save\",", 9, "quote text"),
        ("state = { app", "answer = { exact = \"x\" }\nstate = { app", 28, "exactly one kind"),
        (
            "answer = { number = { value = 1.0, tolerance = 0.5 } }",
            "element = { text = { regex = \"(\" } }",
            31,
            "bad regex",
        ),
        ("answer = { number", "answr = { number", 31, "unknown field `answr`"),
        ("Add {{ first }}", "Add {{ frist }}", 3, "`{{ frist }}` is not a declared parameter"),
        ("answer = \"Use {{ phone }}.\"", "answer = \"Use {{ phone }.\"", 24, "fact: bad template"),
        (
            "state = { app",
            "judge = { question = \"?\" }\nstate = { app",
            28,
            "cannot be combined with `state`",
        ),
        (
            "state = { app",
            "judge = { prompt = \"?\" }\n[[criteria]]\nstate = { app",
            28,
            "unknown field `prompt`",
        ),
        ("state = { app", "judge = { screens = 0 }\n[[criteria]]\nstate = { app", 28, "at least 1"),
        (
            "state = { app",
            "all = [{ judge = { question = \"?\" } }]\n[[criteria]]\nstate = { app",
            28,
            "only appear at the top level",
        ),
        (
            "state = { app",
            "judge = { question = \"{{ nope }}\" }\n[[criteria]]\nstate = { app",
            28,
            "not a declared parameter",
        ),
        ("start = { app = \"contacts\" }", "start = { screen = \"list\" }", 7, "needs `start.app`"),
    ];
    for (from, to, line, words) in cases {
        assert!(GOOD.contains(from), "case {from:?} does not apply");
        let text = GOOD.replacen(from, to, 1);
        let err = parse(&text).expect_err(&format!("{to:?} should be rejected"));
        let prefix = format!("suite/tasks/t.toml:{line}: ");
        assert!(err.starts_with(&prefix), "{to:?}: expected {prefix}…, got: {err}");
        assert!(err.contains(words), "{to:?}: expected {words:?} in: {err}");
    }
}

#[test]
fn judge_entries_are_kept_apart_from_the_criteria_and_rendered() {
    let text = format!(
        "{GOOD}\n[[criteria]]\nname = \"a model sees it\"\njudge = {{ question = \"Is {{{{ first }}}} saved?\", screens = 2, images = true }}\n"
    );
    let spec = parse(&text).unwrap();
    assert_eq!(spec.criteria.len(), 2, "judges are not deterministic criteria");
    assert_eq!(spec.judges.len(), 1);
    assert_eq!(spec.judges[0].name.as_deref(), Some("a model sees it"));
    assert_eq!((spec.judges[0].screens, spec.judges[0].images), (2, true));
    let inst = spec.instantiate(7, 0, &mut rows).unwrap();
    let first = inst.params["first"].as_str().unwrap();
    assert_eq!(inst.judges[0].question.as_deref(), Some(format!("Is {first} saved?").as_str()));
    // A task with only judges has nothing the reference must pass.
    let only_judges = format!(
        "{}[[criteria]]\njudge = {{ question = \"?\" }}\n",
        GOOD.split("[[criteria]]").next().unwrap()
    );
    assert!(parse(&only_judges).unwrap_err().contains("at least one deterministic criterion"));
}

#[test]
fn missing_reference_or_criteria_is_an_error() {
    let no_criteria: String = GOOD.split("[[criteria]]").next().unwrap().to_string();
    let err = parse(&no_criteria).unwrap_err();
    assert!(err.contains("t.toml:") && err.contains("criteria"), "{err}");
    let no_reference = GOOD.replace("reference = [\n  \"tap #add\",\n  \"type #first_name \\\"{{ first }}\\\"\",\n  \"answer \\\"{{ phone }}\\\"\",\n]", "reference = []");
    let err = parse(&no_reference).unwrap_err();
    assert!(err.contains("`reference` is empty"), "{err}");
}

#[test]
fn guards_are_top_level_and_a_task_needs_more_than_guards() {
    let text = GOOD.replacen("name = \"answered\"", "name = \"answered\"\nguard = true", 1);
    let spec = parse(&text).unwrap();
    assert_eq!(spec.criteria.iter().map(|c| c.guard).collect::<Vec<_>>(), [false, true]);
    // A guard survives instantiation (it is what evaluation reads).
    let inst = spec.instantiate(7, 0, &mut rows).unwrap();
    assert!(inst.criteria[1].guard && !inst.criteria[0].guard);

    // Inside a combinator a guard would mean nothing: refused at the criterion's line.
    let nested = GOOD.replacen(
        "answer = { number = { value = 1.0, tolerance = 0.5 } }",
        "not = { guard = true, answer = { exact = \"x\" } }",
        1,
    );
    let err = parse(&nested).unwrap_err();
    assert!(err.starts_with("suite/tasks/t.toml:31: ") && err.contains("top-level"), "{err}");
    let nested = GOOD.replacen(
        "answer = { number = { value = 1.0, tolerance = 0.5 } }",
        "all = [{ guard = true, text = \"x\" }]",
        1,
    );
    assert!(parse(&nested).unwrap_err().contains("cannot stand inside `all`"));

    // Guards only: nothing to achieve.
    let only_guards = text.replacen("[[criteria]]\nstate", "[[criteria]]\nguard = true\nstate", 1);
    let err = parse(&only_guards).unwrap_err();
    assert!(
        err.starts_with("suite/tasks/t.toml:28: ") && err.contains("every criterion is a `guard`"),
        "{err}"
    );
}

#[test]
fn the_lines_of_setup_and_criterion_sql_are_recorded() {
    let text = r#"id = "t.sql"
goal = "g"
category = "completion"
apps = ["contacts"]
reference = ["back"]

[[setup]]
app = "contacts"
sql = """
INSERT INTO a VALUES (1);
INSERT INTO b
  VALUES (2);
"""

[[setup]]
app = "contacts"
sql = "DELETE FROM c"

[[criteria]]
name = "judged apart"
judge = { question = "?" }

[[criteria]]
all = [
  { state = { app = "contacts", sql = "SELECT 1" } },
  { not = { changes = { app = "contacts", table = "t", only = true } } },
]

[[criteria]]
state = { app = "contacts", sql = '''
SELECT 2''' }
"#;
    let spec = parse(text).unwrap();
    // The first setup's SQL text starts on line 10 (after the newline that opens it).
    assert_eq!(spec.lines.setup_sql, [10, 17]);
    assert_eq!(spec.lines.setup_sql_line(0, 2), 11, "the second statement");
    assert_eq!(spec.lines.setup_sql_line(1, 1), 17);
    assert_eq!(spec.lines.criteria_sql, [vec![25, 26], vec![31]]);
    let leaves: Vec<String> = spec.criteria[0].sql_leaves().iter().map(|c| c.label()).collect();
    assert_eq!(leaves, ["contacts: SELECT 1", "contacts.t changes"]);
    assert_eq!(spec.lines.criterion_sql(0, 1), 26);
    // Past what was recorded: the criterion's own line.
    assert_eq!(spec.lines.criterion_sql(1, 5), spec.lines.criteria[1]);
}

#[test]
fn runaway_goal_templates_run_out_of_fuel_instead_of_hanging_or_filling_memory() {
    // Only declared parameters may appear (no `range`), but a string can still be repeated and
    // iterated: nested loops (time) and a huge repetition (memory) both end with an error.
    let loops = "{% for a in first * 100000 %}{% for b in first * 100000 %}x{% endfor %}{% endfor %}";
    let huge = "{{ first * 1000000000000 }}";
    for body in [loops, huge] {
        let text = GOOD.replace(
            r#"goal = "Add {{ first }} with number {{ phone }}; then tell me {{ who.name }}'s number.""#,
            &format!("goal = \"{body}\""),
        );
        let spec = parse(&text).unwrap();
        let e = spec.instantiate(1, 0, &mut rows).unwrap_err().to_string();
        assert!(e.starts_with("suite/tasks/t.toml:3:"), "{e}");
        assert!(e.contains("fuel") || e.contains("too large"), "{e}");
    }
}

#[cfg(unix)]
#[test]
fn a_symlinked_task_file_is_refused_without_reading_its_target() {
    let dir = std::env::temp_dir().join(format!("phonebench-suite-link-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tasks")).unwrap();
    std::fs::write(dir.join("suite.toml"), "name = \"s\"\n").unwrap();
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, "password = hunter2\n").unwrap();
    std::os::unix::fs::symlink(&secret, dir.join("tasks/leak.toml")).unwrap();
    let Err(errors) = phonebench_tasks::Suite::load(&dir) else { panic!("a linked task file loads") };
    let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(text.len(), 1, "{text:?}");
    assert!(text[0].contains("leak.toml") && text[0].contains("symbolic link"), "{text:?}");
    assert!(!text[0].contains("hunter2"), "{text:?}");
}

/// A suite folder `base` with three tasks (two apps) and views beside it.
fn suites_with_views(tag: &str) -> std::path::PathBuf {
    let root = std::env::temp_dir().join(format!("phonebench-views-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("base/tasks")).unwrap();
    std::fs::write(root.join("base/suite.toml"), "name = \"base\"\nseed = 7\n").unwrap();
    for (id, app) in [("contacts.add", "contacts"), ("contacts.count", "contacts"), ("clock.alarm", "clock")]
    {
        let text = GOOD
            .replace("id = \"contacts.add\"", &format!("id = \"{id}\""))
            .replace("apps = [\"contacts\"]", &format!("apps = [\"{app}\"]"));
        std::fs::write(root.join("base/tasks").join(format!("{id}.toml")), text).unwrap();
    }
    root
}

fn view(root: &Path, name: &str, manifest: &str) -> Result<phonebench_tasks::Suite, Vec<String>> {
    std::fs::create_dir_all(root.join(name)).unwrap();
    std::fs::write(root.join(name).join("suite.toml"), manifest).unwrap();
    phonebench_tasks::Suite::load(&root.join(name)).map_err(|e| e.iter().map(|e| e.to_string()).collect())
}

#[test]
fn views_select_tasks_of_their_base_and_inherit_its_seed() {
    let root = suites_with_views("ok");
    let ids = |s: &phonebench_tasks::Suite| s.tasks.iter().map(|t| t.id.clone()).collect::<Vec<_>>();
    let lite = view(&root, "lite", "name = \"lite\"\nbase = \"base\"\ntasks = [\"contacts.*\"]\n").unwrap();
    assert_eq!(ids(&lite), ["contacts.add", "contacts.count"]);
    assert_eq!(lite.manifest.seed, 7, "a view without a seed takes its base's");
    assert_eq!(lite.tasks[0].file, root.join("base/tasks/contacts.add.toml"), "the base's files, not copies");
    let by_app =
        view(&root, "clocks", "name = \"c\"\nbase = \"base\"\napps = [\"clock\"]\nseed = 3\n").unwrap();
    assert_eq!(ids(&by_app), ["clock.alarm"]);
    assert_eq!(by_app.manifest.seed, 3);
    let base = phonebench_tasks::Suite::load(&root.join("base")).unwrap();
    let per_app = base.for_app("contacts").unwrap();
    assert_eq!(per_app.manifest.name, "base:contacts");
    assert_eq!(ids(&per_app), ["contacts.add", "contacts.count"]);
    assert!(base.for_app("maps").is_none());
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn bad_views_are_refused_with_the_line() {
    let root = suites_with_views("bad");
    let err = |name: &str, manifest: &str| view(&root, name, manifest).unwrap_err().join("\n");
    let e = err("a", "name = \"a\"\nbase = \"base\"\ntasks = [\n  \"contacts.add\",\n  \"maps.*\",\n]\n");
    assert!(e.contains("suite.toml:5") && e.contains("`maps.*` matches no task"), "{e}");
    let e = err("b", "name = \"b\"\nbase = \"../base\"\n");
    assert!(e.contains("suite.toml:2") && e.contains("not `../base`"), "{e}");
    let e = err("c", "name = \"c\"\ntasks = [\"x\"]\n");
    assert!(e.contains("add `base"), "{e}");
    let e = err("d", "name = \"d\"\nbase = \"nowhere\"\n");
    assert!(e.contains("base suite `nowhere`"), "{e}");
    let e = err("e", "name = \"e\"\nbase = \"base\"\napps = [\"maps\"]\n");
    assert!(e.contains("involves app `maps`"), "{e}");
    // Two views naming each other are refused, not followed forever.
    std::fs::create_dir_all(root.join("y")).unwrap();
    std::fs::write(root.join("y/suite.toml"), "name = \"y\"\nbase = \"x\"\n").unwrap();
    let e = err("x", "name = \"x\"\nbase = \"y\"\n");
    assert!(e.contains("is itself a view"), "{e}");
    // A view with task files of its own would silently ignore them.
    std::fs::create_dir_all(root.join("f/tasks")).unwrap();
    let e = err("f", "name = \"f\"\nbase = \"base\"\n");
    assert!(e.contains("no `tasks/` folder"), "{e}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_reference_step_after_finish_or_answer_is_refused_at_its_line() {
    for end in ["finish infeasible \\\"no such list\\\"", "answer \\\"42\\\""] {
        let text = format!(
            "id = \"t\"\ngoal = \"g\"\ncategory = \"completion\"\napps = [\"contacts\"]\nreference = [\n  \"{end}\",\n  \"tap #add\",\n]\n[[criteria]]\nanswer = {{ contains = \"42\" }}\n"
        );
        let e = parse(&text).unwrap_err();
        assert!(e.contains("t.toml:7") && e.contains("never runs"), "{e}");
    }
}
