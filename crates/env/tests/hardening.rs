//! Episodes an agent or an app package tries to break: text XML cannot carry, a screen that
//! fails on its data, a deadline that has passed. None of them ends as an infrastructure failure.

use std::path::{Path, PathBuf};
use std::time::Instant;

use phonebench_actions::{Action, FinishStatus, Key, Point, Target};
use phonebench_apps::AppPackage;
use phonebench_env::{Episode, EpisodeEnd, EpisodeOptions, Trajectory};
use phonebench_phone::Catalog;
use phonebench_tasks::{TaskInstance, TaskSpec};

fn instance(app: &str) -> TaskInstance {
    let task = format!(
        "id = \"t\"\ngoal = \"Do it.\"\ncategory = \"completion\"\napps = [\"{app}\"]\nmax_steps = 10\n\
         start = {{ app = \"{app}\" }}\nreference = [\"finish\"]\n\n[[criteria]]\nasked = {{ min = 1 }}\n"
    );
    let spec = TaskSpec::parse(Path::new("t.toml"), &task).expect("the task parses");
    spec.instantiate(0, 0, &mut |_, _| Ok(vec![])).expect("the task instantiates")
}

/// The centre of the first node whose resource id ends with `:id/<key>` or whose text is `key`.
fn point(ep: &Episode, key: &str) -> Target {
    let tree = ep.tree();
    let suffix = format!(":id/{key}");
    let (_, node) = tree
        .iter()
        .find(|(_, n)| n.text == key || n.content_desc == key || n.resource_id.ends_with(&suffix))
        .unwrap_or_else(|| panic!("no `{key}` on screen"));
    let (x, y) = node.bounds.center();
    Target::Point(Point { x, y })
}

fn step(ep: &mut Episode, action: Action) -> Option<String> {
    let raw = serde_json::to_string(&action).expect("actions print");
    ep.step(raw, Ok(action)).expect("the step runs").message
}

#[test]
fn control_characters_typed_and_saved_are_noted_and_the_episode_is_scored() {
    let catalog = Catalog::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps")).expect("apps");
    let mut ep = Episode::start(&catalog, &instance("contacts"), EpisodeOptions::default()).expect("starts");
    let create = point(&ep, "Create contact");
    step(&mut ep, Action::Tap { target: create });
    let field = point(&ep, "first_name");
    let text = "Bad\u{1}\u{1b}\u{FFFF}\u{FFFE}name".to_string();
    let note = step(&mut ep, Action::Type { text, target: Some(field), clear: true, enter: false });
    assert!(
        note.as_deref().is_some_and(|n| n.contains("4 character(s)") && n.contains("U+FFFD")),
        "{note:?}"
    );
    let save = point(&ep, "Save");
    step(&mut ep, Action::Tap { target: save });
    assert!(
        ep.observation().text.contains("Bad\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}name"),
        "{}",
        ep.observation().text
    );
    step(&mut ep, Action::Key { key: Key::Back });
    step(&mut ep, Action::Finish { status: FinishStatus::Complete, reason: None });
    let t: Trajectory = ep.finish().expect("finishes");
    assert_eq!(t.end, Some(EpisodeEnd::Finished { status: FinishStatus::Complete }));
    assert!(t.steps[1].feedback.as_deref().is_some_and(|f| f.contains("U+FFFD")), "the note is recorded");
    assert_eq!(t.screens.len(), t.steps.len() + 1);
}

/// A package whose entry screen opens `broken`, a screen whose template reads a missing table.
fn broken_app(case: &str) -> (Catalog, PathBuf) {
    let files = [
        ("schema.sql", "CREATE TABLE opened (id INTEGER PRIMARY KEY);\n"),
        (
            "actions.toml",
            "[open]\nsteps = [{ sql = \"INSERT INTO opened DEFAULT VALUES\" }, { navigate = \"broken\" }]\n",
        ),
        (
            "screens/main.xml",
            "<LinearLayout><Button id=\"open\" text=\"Open\" on-click=\"open\"/></LinearLayout>\n",
        ),
        (
            "screens/broken.xml",
            "<LinearLayout>\n{% if query_value('SELECT count(*) FROM opened') > 0 %}\
             <TextView text=\"{{ query_value('SELECT x FROM missing') }}\"/>{% endif %}\n</LinearLayout>\n",
        ),
    ];
    let (root, dir) = phonebench_testkit::probe_package(&format!("env-hardening-{case}"), &files);
    let package = AppPackage::load(&dir).unwrap_or_else(|e| panic!("the probe package loads: {e}"));
    (Catalog::new(vec![package]).expect("the catalog"), root)
}

#[test]
fn a_screen_failing_on_app_data_is_shown_and_the_episode_goes_on() {
    let (catalog, root) = broken_app("screen");
    let mut ep = Episode::start(&catalog, &instance("probe"), EpisodeOptions::default()).expect("starts");
    let open = point(&ep, "Open");
    let note = step(&mut ep, Action::Tap { target: open });
    assert!(
        note.as_deref().is_some_and(|n| n.starts_with("Probe keeps stopping: ") && n.contains("missing")),
        "{note:?}"
    );
    assert!(ep.observation().text.contains("Probe keeps stopping"), "{}", ep.observation().text);
    assert!(!ep.is_done());
    step(&mut ep, Action::Key { key: Key::Back });
    assert_eq!(ep.phone().expect("the simulated phone").current_screen(), Some(("probe", "main")));
    assert!(ep.observation().text.contains("Open"));
    step(&mut ep, Action::Finish { status: FinishStatus::Complete, reason: None });
    let t = ep.finish().expect("finishes");
    assert_eq!(
        t.end,
        Some(EpisodeEnd::Finished { status: FinishStatus::Complete }),
        "scored, not infrastructure"
    );
    assert_eq!(t.screens[1].activity, "broken");
    std::fs::remove_dir_all(root).expect("clean up");
}

#[test]
fn a_step_after_the_deadline_ends_the_episode_as_a_timeout() {
    let catalog = Catalog::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps")).expect("apps");
    let mut ep = Episode::start(&catalog, &instance("contacts"), EpisodeOptions::default()).expect("starts");
    step(&mut ep, Action::Key { key: Key::Back });
    // A deadline of now has passed by the time the next step looks at it.
    ep.set_deadline(Some(Instant::now()));
    let raw = "back".to_string();
    let feedback = ep.step(raw, Ok(Action::Key { key: Key::Back })).expect("the step is taken");
    assert!(feedback.done);
    let t = ep.finish().expect("finishes");
    assert_eq!(t.end, Some(EpisodeEnd::Timeout));
    assert_eq!(t.steps.len(), 1, "the late action is not taken");
    assert_eq!(t.screens.len(), 2);
}
