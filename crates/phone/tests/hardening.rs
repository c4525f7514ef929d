//! What an agent's input or an app's own bugs can do to the phone: text that XML cannot carry,
//! megabytes of typing, screens and actions that fail on their data. None of it may make the
//! phone unusable or return an error; each is shown to the agent.

use std::path::{Path, PathBuf};

use phonebench_actions::{Action, Key, Point, Target};
use phonebench_apps::AppPackage;
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Catalog, MAX_FIELD_CHARS, Outcome, Phone, PhoneConfig};
use phonebench_uitree::{Node, WindowKind};

fn apps_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps")
}

/// The first node (topmost window first) whose resource id ends with `:id/<key>`, or whose text
/// or content-desc is `key`.
fn find(phone: &mut Phone, key: &str) -> Option<Node> {
    phonebench_testkit::find_node(phone.tree().expect("the screen renders"), key).cloned()
}

fn target(phone: &mut Phone, key: &str) -> Target {
    let node = find(phone, key).unwrap_or_else(|| panic!("no `{key}` on screen"));
    let (x, y) = node.bounds.center();
    Target::Point(Point { x, y })
}

fn act(phone: &mut Phone, action: Action) -> Outcome {
    phone.apply(&action).unwrap_or_else(|e| panic!("{action:?} failed: {e}"))
}

fn tap(phone: &mut Phone, key: &str) -> Outcome {
    let target = target(phone, key);
    act(phone, Action::Tap { target })
}

fn type_into(phone: &mut Phone, key: &str, text: &str) -> Outcome {
    let target = target(phone, key);
    act(phone, Action::Type { text: text.to_string(), target: Some(target), clear: true, enter: false })
}

fn contacts_phone() -> Phone {
    let catalog = Catalog::load_dir(&apps_dir()).expect("the real apps load");
    let mut phone = Phone::new(catalog, PhoneConfig::default()).expect("the phone starts");
    act(&mut phone, Action::OpenApp { app: "contacts".into() });
    phone
}

/// Every observation format and the screenshot of the current screen work.
fn assert_renders(phone: &mut Phone) {
    for format in ObservationFormat::ALL {
        phone.observe(format).unwrap_or_else(|e| panic!("{format:?} does not render: {e}"));
    }
    phone.screenshot().expect("the screen draws");
}

#[test]
fn control_characters_typed_and_saved_leave_the_phone_usable() {
    let mut phone = contacts_phone();
    tap(&mut phone, "Create contact");
    let typed = "Esc\u{1b}ape\u{1}\u{FFFF}\u{FFFE}\u{0}!";
    let outcome = type_into(&mut phone, "first_name", typed);
    assert!(
        outcome.notes.iter().any(|n| n.contains("5 character(s)") && n.contains("U+FFFD")),
        "the agent is told: {:?}",
        outcome.notes
    );
    let entered = "Esc\u{FFFD}ape\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}!";
    assert_eq!(find(&mut phone, "first_name").map(|n| n.text).as_deref(), Some(entered));
    tap(&mut phone, "Save");
    let stored = phone
        .query("contacts", "SELECT first_name FROM contacts ORDER BY id DESC LIMIT 1")
        .expect("the query runs");
    assert_eq!(stored[0]["first_name"], entered, "the app stored the text as the phone let it in");
    assert_renders(&mut phone);
    // The contact's screen shows the stored name; the list renders with it.
    let tree = phone.tree().expect("the screen renders");
    assert!(tree.iter().any(|(_, n)| n.text.contains("Esc\u{FFFD}ape")), "{:?}", phone.current_screen());
    act(&mut phone, Action::Key { key: Key::Back });
    assert_eq!(phone.current_screen(), Some(("contacts", "list")));
    assert_renders(&mut phone);
}

#[test]
fn ten_megabytes_typed_are_cut_to_the_field_limit_with_a_note() {
    let mut phone = contacts_phone();
    tap(&mut phone, "Create contact");
    let huge = "x".repeat(10 << 20);
    let outcome = type_into(&mut phone, "notes", &huge);
    assert!(
        outcome.notes.iter().any(|n| n.contains(&format!("at most {MAX_FIELD_CHARS} characters"))),
        "{:?}",
        outcome.notes
    );
    let shown = find(&mut phone, "notes").expect("the notes field").text;
    assert_eq!(shown.chars().count(), MAX_FIELD_CHARS);
    // A full field takes no more: typing again adds nothing, and says so.
    let target = target(&mut phone, "notes");
    let outcome = act(
        &mut phone,
        Action::Type { text: "more".into(), target: Some(target), clear: false, enter: false },
    );
    assert!(outcome.notes.iter().any(|n| n.contains("only the first 0 character(s)")), "{:?}", outcome.notes);
    assert_eq!(find(&mut phone, "notes").expect("the notes field").text.chars().count(), MAX_FIELD_CHARS);
    assert_renders(&mut phone);
}

/// A package whose `detail` screen fails once `taps` has a row (a template that reads a missing
/// table, or markup with an unknown attribute), and whose `dup` action fails the second time (a
/// primary key taken): bugs that show only at run time, on the app's data.
fn buggy_phone(case: &str, detail: &str) -> (Phone, PathBuf) {
    let files = [
        ("schema.sql", "CREATE TABLE taps (id INTEGER PRIMARY KEY, what TEXT NOT NULL);\n"),
        (
            "actions.toml",
            "[hello]\nsteps = [{ toast = \"Saved\" }]\n\
             [open_detail]\nsteps = [{ sql = \"INSERT INTO taps (what) VALUES ('open')\" }, { navigate = \"detail\" }]\n\
             [dup]\nsteps = [{ navigate = \"detail\" }, { sql = \"INSERT INTO taps (id, what) VALUES (100, 'dup')\" }]\n",
        ),
        (
            "screens/main.xml",
            "<LinearLayout width=\"match\" height=\"match\">\n\
             \x20 <Button id=\"open\" text=\"Open\" on-click=\"open_detail\"/>\n\
             \x20 <Button id=\"dup\" text=\"Dup\" on-click=\"dup\"/>\n\
             \x20 <Button id=\"hello\" text=\"Hello\" on-click=\"hello\"/>\n\
             </LinearLayout>\n",
        ),
        ("screens/detail.xml", detail),
    ];
    let (root, dir) = phonebench_testkit::probe_package(&format!("hardening-{case}"), &files);
    let package = AppPackage::load(&dir).unwrap_or_else(|e| panic!("the probe package loads: {e}"));
    let catalog = Catalog::new(vec![package]).unwrap_or_else(|e| panic!("the probe catalog loads: {e}"));
    let mut phone = Phone::new(catalog, PhoneConfig::default()).expect("the phone starts");
    act(&mut phone, Action::OpenApp { app: "probe".into() });
    (phone, root)
}

const SQL_DETAIL: &str = "<LinearLayout width=\"match\" height=\"match\">\n\
     {% if query_value(\"SELECT count(*) FROM taps WHERE what = 'open'\") > 0 %}\n\
     <TextView text=\"{{ query_value('SELECT name FROM nowhere') }}\"/>\n\
     {% endif %}\n\
     <TextView text=\"Detail\"/>\n\
     </LinearLayout>\n";

/// The bad element is on template line 6, and on a later line of the rendered output.
const MARKUP_DETAIL: &str = "<LinearLayout width=\"match\" height=\"match\">\n\
     {% for i in range(3) %}\n\
     <TextView text=\"row {{ i }}\"/>\n\
     {% endfor %}\n\
     {% for t in query(\"SELECT what FROM taps WHERE what = 'open'\") %}\n\
     <TextView colour=\"red\" text=\"{{ t.what }}\"/>\n\
     {% endfor %}\n\
     </LinearLayout>\n";

/// The "keeps stopping" dialog is on screen, naming the app and saying `words`.
fn assert_crash_shown(phone: &mut Phone, words: &[&str]) {
    let title = find(phone, "alertTitle").expect("a dialog title").text;
    assert_eq!(title, "Probe keeps stopping");
    let message = find(phone, "message").expect("the dialog's message").text;
    for w in words {
        assert!(message.contains(w), "`{message}` does not say `{w}`");
    }
    assert!(find(phone, "Close app").is_some(), "the dialog offers Close app");
}

#[test]
fn a_screen_that_fails_on_its_data_shows_the_crash_dialog_and_back_leaves_it() {
    for (case, detail, words) in [
        ("sql", SQL_DETAIL, &["probe/screens/detail.xml:3: ", "nowhere"][..]),
        (
            "markup",
            MARKUP_DETAIL,
            &[
                "probe/screens/detail.xml:6: ",
                "colour",
                "rendered line 1",
                "`<TextView colour=\"red\" text=\"open\"/>`",
            ],
        ),
    ] {
        let (mut phone, root) = buggy_phone(case, detail);
        let outcome = tap(&mut phone, "Open");
        assert!(
            outcome.notes.iter().any(|n| n.starts_with("Probe keeps stopping: ")),
            "{case}: the agent is told: {:?}",
            outcome.notes
        );
        let place = root.to_string_lossy().to_string();
        assert!(
            outcome.notes.iter().all(|n| !n.contains(&place)),
            "{case}: files are named from the package"
        );
        assert_eq!(phone.current_screen(), Some(("probe", "detail")));
        assert_crash_shown(&mut phone, words);
        assert_renders(&mut phone);
        // Back leaves the broken screen, and the app works again.
        act(&mut phone, Action::Key { key: Key::Back });
        assert_eq!(phone.current_screen(), Some(("probe", "main")), "{case}");
        assert!(find(&mut phone, "alertTitle").is_none(), "{case}: no dialog on the main screen");
        assert!(find(&mut phone, "Open").is_some());
        // Close app from the broken screen: home, and the app starts afresh.
        tap(&mut phone, "Open");
        tap(&mut phone, "Close app");
        assert_eq!(phone.foreground_app(), None, "{case}: Close app goes home");
        act(&mut phone, Action::OpenApp { app: "probe".into() });
        assert_eq!(phone.current_screen(), Some(("probe", "main")), "{case}");
        std::fs::remove_dir_all(root).expect("clean up");
    }
}

#[test]
fn an_action_that_fails_on_its_data_is_undone_and_shown_as_a_dialog() {
    let detail =
        "<LinearLayout width=\"match\" height=\"match\"><TextView text=\"Detail\"/></LinearLayout>\n";
    let (mut phone, root) = buggy_phone("action", detail);
    let count = |phone: &Phone| {
        phone.query("probe", "SELECT count(*) AS n FROM taps").expect("query")[0]["n"].clone()
    };
    let outcome = tap(&mut phone, "Dup");
    assert!(outcome.notes.is_empty(), "the first run works: {:?}", outcome.notes);
    assert_eq!(phone.current_screen(), Some(("probe", "detail")));
    act(&mut phone, Action::Key { key: Key::Back });
    let outcome = tap(&mut phone, "Dup");
    assert!(
        outcome.notes.iter().any(|n| n.contains("Probe keeps stopping") && n.contains("UNIQUE")),
        "{:?}",
        outcome.notes
    );
    // Nothing of the failed run is left: no row, no screen pushed.
    assert_eq!(count(&phone), serde_json::json!(1));
    assert_eq!(phone.current_screen(), Some(("probe", "main")));
    let tree = phone.tree().expect("renders");
    assert!(
        tree.windows().iter().filter(|w| w.kind == WindowKind::Application).count() >= 2,
        "a dialog window"
    );
    assert_crash_shown(&mut phone, &["probe/actions.toml:", "dup", "UNIQUE"]);
    assert_renders(&mut phone);
    act(&mut phone, Action::Key { key: Key::Back });
    assert!(find(&mut phone, "alertTitle").is_none(), "back dismisses the dialog");
    assert!(find(&mut phone, "Open").is_some(), "the screen under it is back");
    std::fs::remove_dir_all(root).expect("clean up");
}

#[test]
fn toast_text_is_light_on_the_dark_pill() {
    let detail = "<LinearLayout><TextView text=\"Detail\"/></LinearLayout>\n";
    let (mut phone, root) = buggy_phone("toast", detail);
    tap(&mut phone, "Hello");
    let tree = phone.tree().expect("renders");
    let toast = tree.windows().iter().find(|w| w.layer == 10).expect("a toast window").root;
    let message =
        tree.dfs(toast).map(|id| tree.node(id)).find(|n| n.text == "Saved").expect("the toast text");
    let bounds = message.bounds;
    let shot = phone.screenshot().expect("the screen draws");
    // The pill is dark (#303030 in the light theme); along the text's middle rows, away from the
    // pill's rounded ends (only pill there), the brightest pixels are the text's, and must be light.
    let (_, cy) = bounds.center();
    let inset = bounds.height() as i32 / 2;
    let brightest = (cy - 3..=cy + 3)
        .flat_map(|y| (bounds.left + inset..bounds.right - inset).map(move |x| (x, y)))
        .filter_map(|(x, y)| shot.pixel(u32::try_from(x).ok()?, u32::try_from(y).ok()?))
        .map(|p| p.red().min(p.green()).min(p.blue()))
        .max()
        .expect("the toast has pixels");
    assert!(brightest > 200, "the toast text's brightest pixel is {brightest}: dark on dark");
    std::fs::remove_dir_all(root).expect("clean up");
}

#[test]
fn an_sql_error_names_its_statement_once() {
    let catalog = Catalog::load_dir(&apps_dir()).expect("the real apps load");
    let mut phone = Phone::new(catalog, PhoneConfig::default()).expect("the phone starts");
    let sql = "INSERT INTO nowhere (x) VALUES (1)";
    let e = phone.execute("contacts", sql, &Default::default()).expect_err("no such table").to_string();
    assert_eq!(e.matches(sql).count(), 1, "{e}");
    assert!(e.contains("no such table: nowhere"), "{e}");
}

#[test]
fn a_render_running_past_the_deadline_is_stopped_and_is_not_shown_as_an_app_failure() {
    // Counting to 200 000 takes far more SQLite operations than the deadline check's interval.
    let detail = "<LinearLayout>\n<TextView text=\"{{ query_value('WITH RECURSIVE c(x) AS (SELECT 1 \
                  UNION ALL SELECT x + 1 FROM c WHERE x < 200000) SELECT count(*) FROM c') }}\"/>\n</LinearLayout>\n";
    let (mut phone, root) = buggy_phone("deadline", detail);
    phone.set_deadline(Some(std::time::Instant::now()));
    let target = target(&mut phone, "Open");
    let err = phone.apply(&Action::Tap { target }).expect_err("the render is stopped").to_string();
    assert!(phonebench_apps::sandbox::is_deadline(&err), "{err}");
    // Without the deadline the same screen renders (the phone is not left broken).
    phone.set_deadline(None);
    assert_eq!(find(&mut phone, "200000").map(|n| n.text).as_deref(), Some("200000"));
    std::fs::remove_dir_all(root).expect("clean up");
}

/// A detail screen nesting `depth` LinearLayouts (after the first tap) around a text.
fn nested(depth: usize) -> String {
    format!(
        "{{% for i in range({n}) %}}<LinearLayout>{{% endfor %}}<TextView text=\"deep\"/>\
         {{% for i in range({n}) %}}</LinearLayout>{{% endfor %}}\n",
        n = depth - 1
    )
}

#[test]
fn a_layout_at_the_depth_limit_renders_on_a_small_thread_stack() {
    // Tokio's worker threads have 2 MiB stacks; layout and drawing recurse over the view tree.
    let worker = std::thread::Builder::new().stack_size(2 * 1024 * 1024).spawn(|| {
        let (mut phone, root) = buggy_phone("depth-ok", &nested(phonebench_phone::MAX_LAYOUT_DEPTH));
        tap(&mut phone, "Open");
        assert!(find(&mut phone, "alertTitle").is_none(), "no crash at the limit");
        assert!(find(&mut phone, "deep").is_some(), "the innermost text is on screen");
        phone.screenshot().expect("drawn");
        std::fs::remove_dir_all(root).expect("clean up");
    });
    worker.expect("a thread").join().expect("no stack overflow at the depth limit");
}

#[test]
fn layouts_too_deep_or_too_wide_show_the_crash_dialog_instead_of_aborting() {
    let wide = "<LinearLayout>{% for i in range(30000) %}<View/>{% endfor %}</LinearLayout>\n".to_string();
    for (case, detail, words) in [
        ("depth-1000", nested(1_000), "nests deeper than 64 views"),
        ("depth-100000", nested(100_000), "nests deeper than 64 views"),
        ("wide", wide, "more than 20000 views"),
    ] {
        let worker = std::thread::Builder::new().stack_size(2 * 1024 * 1024).spawn(move || {
            let (mut phone, root) = buggy_phone(case, &detail);
            tap(&mut phone, "Open");
            assert_crash_shown(&mut phone, &[words]);
            act(&mut phone, Action::Key { key: Key::Back });
            assert_eq!(phone.current_screen(), Some(("probe", "main")), "{case}");
            std::fs::remove_dir_all(root).expect("clean up");
        });
        worker.expect("a thread").join().unwrap_or_else(|_| panic!("{case}: no panic or overflow"));
    }
}
