//! The trace-to-app pipeline on real recordings (read in place from the shared data folder):
//! DroidBot's qqmusic UTG and the DroidTask Clock data (exploration run, UTG and user tasks)
//! become app packages that load and play, with fidelity measured, and task suites whose every
//! task validates. Also: generation is deterministic, and recorded text never becomes template
//! or SQL source.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use phonebench_synth::app::{AppOptions, SynthApp, synthesize_app};
use phonebench_synth::fidelity::{measure, phone_for};
use phonebench_synth::tasks::{synthesize_tasks, validate_suite};
use phonebench_testkit::shared;
use phonebench_traces::analyze::PageType;
use phonebench_traces::{Trace, TraceFormat, analyze, ingest};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-synth-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn qqmusic() -> Vec<Trace> {
    let read = ingest(TraceFormat::Droidbot, &[shared("realdata/droidbot_utg/qqmusic_small")]);
    assert!(read.problems.is_empty(), "{:?}", read.problems);
    read.traces
}

fn clock() -> Vec<Trace> {
    let mut read = ingest(TraceFormat::Droidbot, &[shared("realdata/droidtask/clock_run")]);
    read.extend(ingest(
        TraceFormat::Droidtask,
        &[shared("realdata/droidtask/raw_utgs/clock.yaml"), shared("realdata/droidtask/user_tasks/clock")],
    ));
    assert!(read.problems.is_empty(), "{:?}", read.problems);
    read.traces
}

fn build(traces: &[Trace], id: &str, root: &Path) -> SynthApp {
    let analysis = analyze(traces);
    let options = AppOptions::new(id);
    synthesize_app(traces, &analysis, &options, &root.join("apps").join(id)).unwrap()
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().display().to_string(), fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn qqmusic_becomes_an_app_with_tasks_that_validate() {
    let root = tmp("qq");
    let traces = qqmusic();
    let analysis = analyze(&traces);
    // The launcher, the WebView shell's menu, its browser screen and the About dialog.
    assert_eq!(analysis.pages.len(), 4);
    assert_eq!(analysis.pages[0].kind, PageType::Launcher);
    assert!(analysis.pages.iter().any(|p| p.kind == PageType::Dialog));
    let app = build(&traces, "qqmusic", &root);
    // The package the screens show (the UTG's app handed over to the WebView shell).
    assert_eq!(app.package, "org.chromium.webview_shell");
    assert_eq!(app.screens.len(), 3, "the launcher is not part of the app");
    let fidelity = measure(&app, &traces).unwrap();
    assert_eq!(fidelity.screens_open, 3, "{:?}", fidelity.screens);
    assert_eq!((fidelity.reproduced, fidelity.transitions.len()), (3, 3), "{:?}", fidelity.transitions);
    assert!(fidelity.mean_similarity > 0.3, "{}", fidelity.mean_similarity);

    let outcome = synthesize_tasks(&app.dir, &root.join("suite")).unwrap();
    assert_eq!(outcome.screens_reached, 3);
    assert!(outcome.kept.len() >= 5, "kept {:?}, dropped {:?}", outcome.kept, outcome.dropped);
    // The About dialog's `key : value` lines are asked about, and every answer is grounded:
    // it is recorded text of the app.
    let reads: Vec<&String> = outcome.kept.iter().filter(|id| id.starts_with("qqmusic.read_")).collect();
    assert!(reads.len() >= 10, "{:?}", outcome.kept);
    let phone = phone_for(&app.dir).unwrap();
    let texts: Vec<String> = phone
        .query("qqmusic", "SELECT text FROM texts")
        .unwrap()
        .iter()
        .map(|r| r["text"].as_str().unwrap().to_string())
        .collect();
    for id in reads {
        let file = root.join("suite/tasks").join(format!("{}.toml", id.replace('.', "_")));
        let task = fs::read_to_string(&file).unwrap();
        let answer = task.split("normalized = \"").nth(1).and_then(|r| r.split('"').next()).unwrap();
        assert!(texts.iter().any(|t| t.contains(answer)), "{id}: `{answer}` is not recorded text");
    }
    // What is left in the folder is exactly what was kept, and it validates again from disk.
    let verdicts = validate_suite(phone.catalog(), &root.join("suite")).unwrap();
    assert_eq!(verdicts.len(), outcome.kept.len());
    assert!(verdicts.iter().all(|(_, problems)| problems.is_empty()), "{verdicts:?}");
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn the_clock_data_becomes_an_app_with_tasks_of_every_kind() {
    let root = tmp("clock");
    let traces = clock();
    let app = build(&traces, "clock", &root);
    assert_eq!(app.package, "com.simplemobiletools.clock");
    assert!(app.screens.len() >= 8, "{}", app.screens.len());
    // The main activity is where the app starts: the run enters it from the launcher.
    assert!(app.entry.contains("main"), "{}", app.entry);
    let fidelity = measure(&app, &traces).unwrap();
    assert_eq!(fidelity.screens_open, app.screens.len(), "{:?}", fidelity.screens);
    assert!(fidelity.transitions.len() >= 20);
    assert!(fidelity.transition_share() >= 0.5, "{:?}", fidelity.transitions);
    assert!(fidelity.mean_similarity >= 0.7, "{}", fidelity.mean_similarity);
    // The settings screen keeps its switches as user state.
    let phone = phone_for(&app.dir).unwrap();
    let toggles = phone
        .query("clock", "SELECT label, checked FROM toggles WHERE label = 'Start week on Sunday'")
        .unwrap();
    assert!(!toggles.is_empty());

    let outcome = synthesize_tasks(&app.dir, &root.join("suite")).unwrap();
    assert!(outcome.kept.len() >= 5, "{:?}", outcome.dropped);
    for kind in ["open_", "read_", "toggle_"] {
        assert!(outcome.kept.iter().any(|id| id.contains(kind)), "no {kind} task kept: {:?}", outcome.kept);
    }
    let text = fs::read_to_string(root.join("suite/tasks/clock_read_snooze_time.toml")).unwrap();
    assert!(text.contains("answer = { normalized = \"10 minutes\" }"), "{text}");
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn synthesis_is_deterministic() {
    let traces = clock();
    let (a, b) = (tmp("det-a"), tmp("det-b"));
    let app_a = build(&traces, "clock", &a);
    let app_b = build(&traces, "clock", &b);
    assert_eq!(files(&app_a.dir), files(&app_b.dir));
    synthesize_tasks(&app_a.dir, &a.join("suite")).unwrap();
    synthesize_tasks(&app_b.dir, &b.join("suite")).unwrap();
    assert_eq!(files(&a.join("suite")), files(&b.join("suite")));
    let _ = fs::remove_dir_all(&a);
    let _ = fs::remove_dir_all(&b);
}

#[test]
fn recorded_text_is_data_in_the_generated_app() {
    let root = tmp("hostile");
    // A DroidTask record whose texts look like templates, SQL and markup.
    let nasty =
        ["{{ 7*7 }}", "'); DROP TABLE texts; --", "</TextView><Button text=\"x\"/>", "{% for x in y %}"];
    let state: String =
        nasty.iter().enumerate().map(|(i, t)| format!("<p id={i}>{t}</p>\n")).collect::<String>()
            + "<button id=4>Next</button>\n";
    let yaml = format!(
        "task_name: open next\nstep_num: 2\nrecords:\n- Choice: 4\n  Input: 'null'\n  State: {}\n  new_state_str: b\n  state_str: a\n- Choice: -1\n  Input: 'null'\n  State: '<p id=0>Done</p>'\n  new_state_str: c\n  state_str: b\n",
        serde_json::to_string(&state).unwrap()
    );
    fs::write(root.join("t.yaml"), yaml).unwrap();
    let read = ingest(TraceFormat::Droidtask, &[root.join("t.yaml")]);
    assert!(read.problems.is_empty(), "{:?}", read.problems);
    // Outlines name no package: the app gets one of ours.
    let analysis = analyze(&read.traces);
    let options = AppOptions::new("nasty");
    let app = synthesize_app(&read.traces, &analysis, &options, &root.join("apps/nasty")).unwrap();
    assert_eq!(app.package, "phonebench.generated.nasty");
    // A recorded package that is no package name (here one trying to add a manifest key) is
    // not written into the manifest either.
    let mut traces = read.traces.clone();
    for s in &mut traces[0].screens {
        s.package = Some("x\"\nboot = \"evil".into());
    }
    let analysis2 = analyze(&traces);
    let other =
        synthesize_app(&traces, &analysis2, &AppOptions::new("nasty2"), &root.join("apps/nasty2")).unwrap();
    assert_eq!(other.package, "phonebench.generated.nasty2");
    assert!(!fs::read_to_string(other.dir.join("app.toml")).unwrap().contains("evil"));
    phone_for(&other.dir).unwrap();
    let mut phone = phone_for(&app.dir).unwrap();
    phone.start_app("nasty", None, &BTreeMap::new()).unwrap();
    let tree = phone.tree().unwrap().clone();
    let texts: Vec<&str> = tree.iter().map(|(_, n)| n.text.as_str()).collect();
    for t in nasty {
        assert!(texts.contains(&t), "`{t}` not shown as it is: {texts:?}");
    }
    // Four hostile texts and "Next" on the first screen, "Done" on the second: all rows, none run.
    assert_eq!(phone.query("nasty", "SELECT count(*) AS n FROM texts").unwrap()[0]["n"], 6);
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn a_folder_that_is_not_empty_is_refused() {
    let root = tmp("busy");
    let traces = qqmusic();
    let analysis = analyze(&traces);
    fs::create_dir_all(root.join("apps/qq")).unwrap();
    fs::write(root.join("apps/qq/keep.txt"), "mine").unwrap();
    let err = synthesize_app(&traces, &analysis, &AppOptions::new("qq"), &root.join("apps/qq"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("not empty"), "{err}");
    assert_eq!(fs::read_to_string(root.join("apps/qq/keep.txt")).unwrap(), "mine");
    let err = synthesize_app(&traces, &analysis, &AppOptions::new("Bad Id"), &root.join("x"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("not an app id"), "{err}");
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn a_recorded_search_field_searches_the_rebuilt_content() {
    let root = tmp("search");
    // DroidTask's Contacts tasks start on a list with a search field (`<input>Search</input>`).
    let read = ingest(TraceFormat::Droidtask, &[shared("realdata/droidtask/user_tasks/contacts")]);
    assert!(read.problems.is_empty(), "{:?}", read.problems);
    let analysis = analyze(&read.traces);
    let options = AppOptions::new("contacts");
    let app = synthesize_app(&read.traces, &analysis, &options, &root.join("apps/contacts")).unwrap();
    assert!(app.dir.join("screens/search_results.xml").is_file());
    let mut phone = phone_for(&app.dir).unwrap();
    phone.start_app("contacts", None, &BTreeMap::new()).unwrap();
    let tree = phone.tree().unwrap().clone();
    let field = tree.iter().find(|(_, n)| n.is_editable()).map(|(id, _)| id).unwrap();
    let (x, y) = tree.node(field).bounds.center();
    let typed = phonebench_actions::Action::Type {
        text: "Classmates".into(),
        target: Some(phonebench_actions::Target::Point(phonebench_actions::Point { x, y })),
        clear: true,
        enter: true,
    };
    phone.apply(&typed).unwrap();
    assert_eq!(phone.current_screen().unwrap().1, "search_results");
    let tree = phone.tree().unwrap().clone();
    let titles: Vec<String> = tree
        .iter()
        .filter(|(_, n)| n.resource_id.ends_with("/result_title"))
        .map(|(_, n)| n.text.clone())
        .collect();
    assert_eq!(titles.first().map(String::as_str), Some("Classmates"), "{titles:?}");
    // The hit opens the page it came from.
    let hit = tree.iter().find(|(_, n)| n.resource_id.ends_with("/result_row")).map(|(id, _)| id).unwrap();
    let (x, y) = tree.node(hit).bounds.center();
    phone
        .apply(&phonebench_actions::Action::Tap {
            target: phonebench_actions::Target::Point(phonebench_actions::Point { x, y }),
        })
        .unwrap();
    let screen = phone.current_screen().unwrap().1.to_string();
    assert!(screen.contains("classmates"), "{screen}");
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn values_further_down_a_long_screen_are_asked_with_a_scroll() {
    let root = tmp("long");
    // One recorded screen of 40 settings rows ("Setting N" over its value), then a detail.
    let rows: String =
        (0..40).map(|i| format!("<button id={i}>Setting {i}<br>Value {i}</button>\n")).collect();
    let yaml = format!(
        "task_name: open the first setting\nstep_num: 2\nrecords:\n- Choice: 0\n  Input: 'null'\n  State: {}\n  new_state_str: b\n  state_str: a\n- Choice: -1\n  Input: 'null'\n  State: '<p id=0>Detail</p>'\n  new_state_str: c\n  state_str: b\n",
        serde_json::to_string(&rows).unwrap()
    );
    fs::write(root.join("long.yaml"), yaml).unwrap();
    let read = ingest(TraceFormat::Droidtask, &[root.join("long.yaml")]);
    let analysis = analyze(&read.traces);
    let app =
        synthesize_app(&read.traces, &analysis, &AppOptions::new("long"), &root.join("apps/long")).unwrap();
    let outcome = synthesize_tasks(&app.dir, &root.join("suite")).unwrap();
    let text = fs::read_to_string(root.join("suite/tasks/long_read_setting_39.toml")).unwrap_or_else(|e| {
        panic!("no task about the last row ({e}): kept {:?}, dropped {:?}", outcome.kept, outcome.dropped)
    });
    assert!(text.contains(r#""scroll_to ~\"Setting 39\"","#), "{text}");
    assert!(text.contains("normalized = \"Value 39\""), "{text}");
    assert!(outcome.kept.iter().any(|k| k == "long.read_setting_39"));
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn the_long_tail_can_be_left_out() {
    let root = tmp("p0");
    let traces = clock();
    let analysis = analyze(&traces);
    let options = AppOptions { min_priority: phonebench_traces::Priority::P0, ..AppOptions::new("clock") };
    let app = synthesize_app(&traces, &analysis, &options, &root.join("apps/clock")).unwrap();
    let full = build(&traces, "clock", &root.join("all"));
    assert!(app.screens.len() < full.screens.len(), "{} vs {}", app.screens.len(), full.screens.len());
    // Only must-build pages, plus the entry; no transition leads out of the app.
    let must: Vec<&str> = analysis
        .pages
        .iter()
        .filter(|p| p.priority == phonebench_traces::Priority::P0)
        .map(|p| p.id.as_str())
        .collect();
    for s in &app.screens {
        assert!(must.contains(&s.page.as_str()) || s.name == app.entry, "{} is not P0", s.name);
    }
    let names: Vec<&str> = app.screens.iter().map(|s| s.name.as_str()).collect();
    assert!(app.transitions.iter().all(|t| names.contains(&t.to.as_str())));
    let fidelity = measure(&app, &traces).unwrap();
    assert_eq!(fidelity.screens_open, app.screens.len());
    let _ = fs::remove_dir_all(&root);
}
