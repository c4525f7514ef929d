//! Loading SPHINX trajectory directories: reference (`meta.json`) and agent (`actions.json`)
//! forms, and errors that name the file and the problem.

// Test helpers outside `#[test]` functions unwrap too (clippy only exempts the functions).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use phonebench_actions::{Action, Swipe};
use phonebench_env::EpisodeEnd;
use phonebench_eval::{EvalContext, criteria_from_sphinx_json, evaluate, load_groundtruth, stop_after};

/// A fresh directory under the system temp dir (per test name and process).
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-eval-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const SCREEN: &str = r#"<?xml version='1.0' encoding='UTF-8'?><hierarchy rotation="0">
<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.x" bounds="[0,0][768,1280]">
<node index="0" text="OK" resource-id="com.x:id/ok" class="android.widget.Button" package="com.x" bounds="[100,100][201,201]"/>
</node></hierarchy>"#;

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

const ACTIVITIES: &str = r#"[["com.x","com.x.Main"],["com.x","PopupWindow"],["com.x","com.x.Main"]]"#;

#[test]
fn agent_traces_load_from_actions_json() {
    let dir = scratch("agent");
    write(
        &dir,
        &[
            ("0.xml", SCREEN),
            ("1.xml", SCREEN),
            ("2.xml", SCREEN),
            ("activities.json", ACTIVITIES),
            // An agent run keeps its summary in meta.json; the actions are in actions.json.
            ("meta.json", r#"{"success": true, "length": 2, "error_message": "none"}"#),
            (
                "actions.json",
                r#"[{"action_type":"CLICK","element":{"bounds":"[100,100][201,201]","text":"OK"}},
                    {"action_type":"SWIPE","coords":[[10,900],[10,300]]},
                    {"action_type":"STOP"}]"#,
            ),
        ],
    );
    let t = load_groundtruth(&dir).unwrap();
    assert_eq!((t.screens.len(), t.steps.len()), (3, 2));
    // Centre with Python's floor division: (100 + 201) // 2 = 150.
    assert_eq!(t.steps[0].point, Some((150, 150)));
    assert_eq!(t.steps[0].hit.as_ref().map(|n| n.text.as_str()), Some("OK"));
    assert!(matches!(t.steps[1].action, Some(Action::Swipe(Swipe::Between { .. }))));
    assert_eq!(t.screens[1].activity, "PopupWindow");
    assert_eq!(t.end, Some(EpisodeEnd::Finished { status: phonebench_actions::FinishStatus::Complete }));

    let criteria = criteria_from_sphinx_json(
        r#"[{"type":"findaction","match_type":"equal","match_rules":{"action_type":"click","resource-id":"com.x:id/ok"},
             "check_type":"equal","check_rules":{}},
            {"type":"lastaction","check_type":"equal","check_rules":{"action_type":"swipe"}}]"#,
    )
    .unwrap();
    let v = evaluate(&criteria, &t, &EvalContext::default());
    assert!(v.success, "{:#?}", v.criteria);
    // Stopped after the click, the swipe is gone and is no longer the last action.
    let v = evaluate(&criteria, &stop_after(&t, 1), &EvalContext::default());
    assert_eq!(v.criteria.iter().map(|c| c.passed).collect::<Vec<_>>(), [true, false]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_agent_that_never_stopped_ends_on_its_last_screen() {
    let dir = scratch("nostop");
    write(
        &dir,
        &[
            ("0.xml", SCREEN),
            ("1.xml", SCREEN),
            ("activities.json", ACTIVITIES),
            ("actions.json", r#"[{"action_type":"BACK"}]"#),
        ],
    );
    let t = load_groundtruth(&dir).unwrap();
    assert_eq!((t.screens.len(), t.steps.len(), t.steps[0].sphinx_type()), (2, 1, "back"));
    assert_eq!(t.end, Some(EpisodeEnd::Budget));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn load_errors_name_the_file_and_the_problem() {
    let dir = scratch("errors");
    let err = |dir: &Path| load_groundtruth(dir).unwrap_err().to_string();
    assert!(err(&dir).contains("neither meta.json"), "{}", err(&dir));

    let meta = r#"[{"type":"click","element":{"bounds":"[0,0][10,10]"}},{"type":"stop","element":null}]"#;
    write(&dir, &[("meta.json", meta), ("activities.json", r#"[["com.x","A"]]"#)]);
    let e = err(&dir);
    assert!(e.contains("activities.json") && e.contains("1 activities for 2 screens"), "{e}");

    write(&dir, &[("activities.json", ACTIVITIES), ("0.xml", SCREEN)]);
    let e = err(&dir);
    assert!(e.contains("1.xml"), "{e}");

    write(&dir, &[("1.xml", "<hierarchy><node bounds=\"[0,0][1,1]\"></hierarchy>")]);
    let e = err(&dir);
    assert!(e.contains("1.xml") && e.contains("line 1"), "{e}");

    write(&dir, &[("1.xml", SCREEN), ("meta.json", r#"[{"type":"stop"},{"type":"back"}]"#)]);
    let e = err(&dir);
    assert!(e.contains("meta.json") && e.contains("action 1 comes after the stop"), "{e}");

    write(
        &dir,
        &[("meta.json", r#"[{"type":"input","element":{"bounds":"[0,0][10,10]"}},{"type":"stop"}]"#)],
    );
    let e = err(&dir);
    assert!(e.contains("action 0: input needs a string `message`"), "{e}");

    write(&dir, &[("meta.json", r#"[{"type":"click","element":{"bounds":"nowhere"}},{"type":"stop"}]"#)]);
    let e = err(&dir);
    assert!(e.contains("element bounds"), "{e}");

    write(&dir, &[("meta.json", meta)]);
    assert!(load_groundtruth(&dir).is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_reference_trajectory_loads_with_one_screen_per_meta_entry() {
    let root = phonebench_testkit::shared("sphinx-data/groundtruth");
    let mut seen = 0;
    for task in std::fs::read_dir(&root).unwrap() {
        for pair in std::fs::read_dir(task.unwrap().path()).unwrap() {
            let dir = pair.unwrap().path();
            let meta: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
            let entries = meta.as_array().unwrap();
            let t = load_groundtruth(&dir).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(t.screens.len(), entries.len(), "{}", dir.display());
            assert_eq!(t.steps.len() + 1, entries.len());
            // `sphinx_type` gives back the recorded type name.
            for (step, entry) in t.steps.iter().zip(entries) {
                assert_eq!(step.sphinx_type(), entry["type"].as_str().unwrap(), "{}", dir.display());
                assert_eq!(step.message(), entry.get("message").and_then(|m| m.as_str()));
            }
            seen += 1;
        }
    }
    assert_eq!(seen, 11);
}
