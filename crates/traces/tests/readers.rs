//! Every trace reader on real files (read in place from the shared data folder), on malformed
//! copies made at test time (each bad file is a Problem naming it, and the good files of the same
//! batch are still read), and through traces.db and back.

#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};

use phonebench_actions::{Action, FinishStatus, Key, Point, Swipe, Target};
use phonebench_testkit::{shared, workspace_root};
use phonebench_traces::{Detail, Ingested, Trace, TraceDb, TraceFormat, TraceKind, ingest};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-traces-readers-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Copies the regular files of `src` (not recursively) into `dst`.
fn copy_files(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    for entry in fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            fs::copy(&path, dst.join(path.file_name().unwrap())).unwrap();
        }
    }
}

fn truncate(file: &Path, keep: usize) {
    let bytes = fs::read(file).unwrap();
    fs::write(file, &bytes[..keep.min(bytes.len())]).unwrap();
}

fn problem_about<'a>(read: &'a Ingested, file: &Path) -> Vec<&'a str> {
    let name = file.display().to_string();
    read.problems.iter().filter(|p| p.path == name).map(|p| p.message.as_str()).collect()
}

fn assert_problem(read: &Ingested, file: &Path, needle: &str) {
    let messages = problem_about(read, file);
    assert!(
        messages.iter().any(|m| m.contains(needle)),
        "expected a problem about {} containing {needle:?}; problems: {:#?}",
        file.display(),
        read.problems
    );
}

fn llamatouch_trace() -> PathBuf {
    shared("realdata/traces/llamatouch/generated_trace_18_duolingo_pronunciation")
}

fn aitw_dir() -> PathBuf {
    shared("realdata/traces/aitz_aitw/GOOGLE_APPS-523638528775825151")
}

fn sphinx_root() -> PathBuf {
    shared("sphinx-data/groundtruth")
}

// ---------------------------------------------------------------------------------------------
// Real files

#[test]
fn droidbot_reads_the_clock_exploration_and_the_qqmusic_graph() {
    let read = ingest(TraceFormat::Droidbot, &[shared("realdata/droidtask/clock_run")]);
    assert!(read.problems.is_empty(), "{:#?}", read.problems);
    let [trace] = read.traces.as_slice() else { panic!("one trace, got {}", read.traces.len()) };
    assert_eq!(trace.kind, TraceKind::Exploration);
    assert_eq!(trace.steps.len(), 169, "one step per events/*.json");
    // The events name 39 distinct states; one more has a states/ file but no event.
    assert_eq!(trace.screens.len(), 40);
    assert_eq!(trace.screens.iter().filter(|s| s.detail == Detail::Full).count(), 7, "7 states/*.json");
    // The first event kills the app: Home, on and back to the same state.
    assert_eq!(trace.steps[0].action, Action::Key { key: Key::Home });
    assert_eq!(trace.steps[0].to, Some(trace.steps[0].from));

    let read = ingest(TraceFormat::Droidbot, &[shared("realdata/droidbot_utg/qqmusic_small")]);
    assert!(read.problems.is_empty(), "{:#?}", read.problems);
    let trace = &read.traces[0];
    assert_eq!(trace.kind, TraceKind::Graph);
    assert_eq!(trace.screens.len(), 4, "4 UTG nodes");
    assert!(trace.steps.len() >= 4, "at least one step per edge: {}", trace.steps.len());
    assert!(trace.screens.iter().all(|s| s.detail == Detail::Outline));
}

#[test]
fn droidtask_reads_a_clock_task_with_its_choices() {
    let file = shared("realdata/droidtask/user_tasks/clock/task1.yaml");
    let read = ingest(TraceFormat::Droidtask, &[&file]);
    assert!(read.problems.is_empty(), "{:#?}", read.problems);
    let trace = &read.traces[0];
    assert_eq!(trace.kind, TraceKind::Episode);
    assert!(trace.instruction.as_deref().is_some_and(|i| i.contains(' ')), "{:?}", trace.instruction);
    // Record 1 chooses id 1, the `Settings` icon button (its text= is the description).
    let first = trace.steps[0].target.clone().unwrap();
    assert_eq!(first.content_desc, "Settings");
    assert!(matches!(trace.steps[0].action, Action::Tap { .. }));
    // Record 3 chooses the `1 minute` checkbox; the last record (Choice -1) ends the task.
    assert!(matches!(trace.steps[2].action, Action::Tap { .. }));
    assert_eq!(trace.steps[2].target.as_ref().unwrap().text, "1 minute");
    assert_eq!(trace.steps[2].target.as_ref().unwrap().class, "android.widget.CheckBox");
    assert_eq!(
        trace.steps.last().unwrap().action,
        Action::Finish { status: FinishStatus::Complete, reason: None }
    );

    // The whole folder: every task file is a trace.
    let all = ingest(TraceFormat::Droidtask, &[shared("realdata/droidtask/user_tasks/clock")]);
    let files =
        phonebench_testkit::files_with_extension(&shared("realdata/droidtask/user_tasks/clock"), "yaml");
    assert_eq!(all.traces.len() + all.problems.len(), files.len(), "{:#?}", all.problems);
    assert!(all.traces.len() >= files.len() - 1);
}

#[test]
fn llamatouch_reads_screens_actions_and_lands_scaled_clicks_on_elements() {
    let read = ingest(TraceFormat::Llamatouch, &[llamatouch_trace()]);
    assert!(read.problems.is_empty(), "{:#?}", read.problems);
    let [trace] = read.traces.as_slice() else { panic!("one trace") };
    assert_eq!(trace.kind, TraceKind::Episode);
    assert_eq!(trace.name, "generated_trace_18_duolingo_pronunciation");
    // instruction.txt: the episode id (18), then the task.
    assert_eq!(trace.instruction.as_deref(), Some("Practice pronunciation in French in Duolingo."));
    assert_eq!(trace.screens.len(), 5);
    assert!(trace.screens.iter().all(|s| s.detail == Detail::Full));
    let shot = trace.screens[0].screenshot.as_ref().unwrap();
    assert_eq!(shot.mime, "image/png");
    assert_eq!(trace.screens[2].package.as_deref(), Some("com.duolingo"));
    assert_eq!(trace.screens[2].activity.as_deref(), Some("com.duolingo.app.LoginActivity"));
    // 4 lines of eventStructs.txt, then LlamaTouch's implicit task-complete on the last screen.
    assert_eq!(trace.steps.len(), 5);
    assert_eq!(trace.steps[0].action, Action::Key { key: Key::Home });
    assert_eq!((trace.steps[0].from, trace.steps[0].to), (0, Some(1)));
    // `Click Position (204, 170)` in 320×720 is (689, 567) on the 1080×2400 screen: the
    // launcher's Duolingo icon.
    assert_eq!(trace.steps[1].action, Action::Tap { target: Target::Point(Point { x: 689, y: 567 }) });
    assert_eq!(trace.steps[1].target.as_ref().unwrap().text, "Duolingo");
    // (191, 385) → (645, 1283): the START +10 XP button.
    let start = trace.steps[3].target.as_ref().unwrap();
    assert_eq!(start.text, "START +10 XP");
    assert_eq!(start.resource_id, "com.duolingo:id/learnButton");
    assert_eq!(trace.steps[4].action, Action::Finish { status: FinishStatus::Complete, reason: None });
    assert_eq!((trace.steps[4].from, trace.steps[4].to), (4, None));
}

#[test]
fn aitw_reads_the_aitz_episode_with_boxes_in_screenshot_pixels() {
    let read = ingest(TraceFormat::Aitw, &[aitw_dir()]);
    assert!(read.problems.is_empty(), "{:#?}", read.problems);
    let [trace] = read.traces.as_slice() else { panic!("one trace") };
    assert_eq!(trace.name, "523638528775825151");
    assert_eq!(trace.instruction.as_deref(), Some("open app \"Clock\" (install if not already installed)"));
    assert_eq!(trace.screens.len(), 4);
    for screen in &trace.screens {
        assert_eq!(screen.detail, Detail::Outline);
        assert_eq!(screen.screenshot.as_ref().unwrap().mime, "image/png");
        assert_eq!(
            screen.tree.screen_bounds(),
            phonebench_uitree::Bounds::new(0, 0, 270, 600),
            "the PNG's size"
        );
    }
    // Step 0's boxes: [54, 17, 8, 12] is the "M" at x 17..29, y 54..62; icons keep their type.
    let tree = &trace.screens[0].tree;
    let m = phonebench_testkit::find_node(tree, "M").unwrap();
    assert_eq!(m.bounds, phonebench_uitree::Bounds::new(17, 54, 29, 62));
    assert!(tree.iter().any(|(_, n)| n.content_desc == "ICON_GOOGLE" && n.class.ends_with("ImageView")));
    let actions: Vec<&Action> = trace.steps.iter().map(|s| &s.action).collect();
    assert_eq!(actions[0], &Action::Key { key: Key::Home });
    // Touch (0.541, 0.507) → lift (0.001, 0.579): far apart, a swipe up the screen.
    assert_eq!(
        actions[1],
        &Action::Swipe(Swipe::Between { from: Point { x: 137, y: 325 }, to: Point { x: 156, y: 1 } })
    );
    // Touch ≈ lift: a tap, at (0.607 × 270, 0.498 × 600); no OCR box is there (the Clock icon
    // was not detected; its label "Cleck" is below), so no element is claimed.
    assert_eq!(actions[2], &Action::Tap { target: Target::Point(Point { x: 164, y: 299 }) });
    assert_eq!(trace.steps[2].target, None);
    assert_eq!(actions[3], &Action::Finish { status: FinishStatus::Complete, reason: None });
    assert_eq!(trace.steps[3].to, None);
    assert_eq!(trace.steps[1].to, Some(2));
}

#[test]
fn aitw_lands_a_tap_inside_a_box_on_that_box() {
    let dir = tmp("aitw-tap");
    copy_files(&aitw_dir(), &dir);
    let file = dir.join("GOOGLE_APPS-523638528775825151.json");
    let mut steps: serde_json::Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    // The middle of the "Cleck" box [321, 156, 5, 18] in fractions of 270×600.
    steps[2]["result_touch_yx"] = format!("[{}, {}]", 323.5 / 600.0, 165.0 / 270.0).into();
    steps[2]["result_lift_yx"] = steps[2]["result_touch_yx"].clone();
    fs::write(&file, serde_json::to_string(&steps).unwrap()).unwrap();
    let read = ingest(TraceFormat::Aitw, &[&file]);
    assert!(read.problems.is_empty(), "{:#?}", read.problems);
    let step = &read.traces[0].steps[2];
    assert_eq!(step.action, Action::Tap { target: Target::Point(Point { x: 165, y: 324 }) });
    assert_eq!(step.target.as_ref().unwrap().text, "Cleck");
}

#[test]
fn sphinx_reads_every_groundtruth_trajectory() {
    let read = ingest(TraceFormat::Sphinx, &[sphinx_root()]);
    assert!(read.problems.is_empty(), "{:#?}", read.problems);
    assert_eq!(read.traces.len(), 11);
    let names: Vec<&str> = read.traces.iter().map(|t| t.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "sorted by folder");
    for t in &read.traces {
        assert_eq!(t.kind, TraceKind::Episode);
        assert_eq!(t.steps.len(), t.screens.len(), "{}: one action per screen, the last a stop", t.name);
        assert!(
            matches!(t.steps.last().unwrap().action, Action::Finish { status: FinishStatus::Complete, .. }),
            "{}",
            t.name
        );
        assert!(t.instruction.is_some(), "{}", t.name);
    }
    let money = read.traces.iter().find(|t| t.name == "101/money").unwrap();
    assert_eq!(money.screens.len(), 6);
    assert_eq!(money.package.as_deref(), Some("com.kb404.money"));
    assert!(
        money.instruction.as_deref().unwrap().to_lowercase().contains("expense"),
        "{:?}",
        money.instruction
    );
    // Action 2: input "10" into the sum field (its element found in the screen's tree).
    let step = &money.steps[2];
    let Action::Type { text, target: Some(Target::Point(p)), clear: true, .. } = &step.action else {
        panic!("{:?}", step.action)
    };
    assert_eq!(text, "10");
    let target = step.target.as_ref().unwrap();
    assert_eq!(target.resource_id, "com.kb404.money:id/new_op_sum");
    assert_eq!(target.bounds.unwrap().center(), (p.x, p.y));
    let tree = &money.screens[2].tree;
    assert_eq!(tree.node(tree.hit_test(p.x, p.y).unwrap()).resource_id, "com.kb404.money:id/new_op_sum");
    assert_eq!((step.from, step.to), (2, Some(3)));
    assert!(money.screens[0].activity.is_some());

    // 901/a53 is the one trajectory with screenshots.
    let a53 = read.traces.iter().find(|t| t.name == "901/a53").unwrap();
    assert!(a53.screens.iter().all(|s| s.screenshot.as_ref().is_some_and(|s| s.mime == "image/png")));
    // todoist: back and a swipe without direction (from and to the element's centre).
    let todoist = read.traces.iter().find(|t| t.name == "2/todoist").unwrap();
    assert_eq!(todoist.steps[3].action, Action::Key { key: Key::Back });
    assert!(matches!(todoist.steps[10].action, Action::Swipe(Swipe::Between { from, to }) if from == to));
    let loseit = read.traces.iter().find(|t| t.name == "7/loseit").unwrap();
    assert!(matches!(loseit.steps[0].action, Action::LongPress { .. }));
    assert_eq!(loseit.steps[0].target.as_ref().unwrap().text, "Calories");

    // One trajectory folder given alone reads the same.
    let one = ingest(TraceFormat::Sphinx, &[sphinx_root().join("101/money")]);
    assert_eq!(one.traces.len(), 1);
    assert_eq!(one.traces[0].steps.len(), money.steps.len());
}

/// A phonebench run folder made with the runner library: the Clock app's `city_time` task by the
/// reference agent, observations in uiautomator XML, screenshots saved.
fn phonebench_run(name: &str, format: phonebench_observe::ObservationFormat) -> PathBuf {
    use phonebench_runner::{AgentChoice, AgentKind, RunOptions, run_suite};
    let out = tmp(name);
    let catalog = phonebench_phone::Catalog::load_dir(&workspace_root().join("apps")).unwrap();
    let suite = phonebench_tasks::Suite::load(&workspace_root().join("suites/starter")).unwrap();
    let mut options = RunOptions {
        tasks: Some("clock.city_time".into()),
        save_screenshots: true,
        ..RunOptions::new("starter", AgentChoice::Builtin(AgentKind::Reference), &out)
    };
    options.progress = false;
    options.episode.format = format;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let outcome = rt.block_on(run_suite(&catalog, &suite, &options)).unwrap();
    assert_eq!(outcome.ran, 1);
    drop(outcome);
    out
}

#[test]
fn phonebench_reads_a_run_folder_made_by_the_runner() {
    let run = phonebench_run("pb-xml", phonebench_observe::ObservationFormat::Uiautomator);
    let read = ingest(TraceFormat::Phonebench, &[&run]);
    assert!(read.problems.is_empty(), "{:#?}", read.problems);
    let [trace] = read.traces.as_slice() else { panic!("one trace") };
    assert_eq!(trace.name, "clock.city_time#0");
    assert_eq!(trace.kind, TraceKind::Episode);
    assert_eq!(
        trace.instruction.as_deref(),
        Some("I need to call a colleague in Auckland. What time is it there right now?")
    );
    assert!(trace.screens.iter().all(|s| s.detail == Detail::Full));
    assert!(trace.screens.iter().all(|s| s.screenshot.as_ref().is_some_and(|s| s.mime == "image/png")));
    // Every row is a screen; the reference solution's 5 actions are 5 steps, the last an answer.
    assert_eq!(trace.steps.len(), 5);
    assert!(trace.screens.len() >= 5);
    assert!(matches!(trace.steps[4].action, Action::Answer { .. }));
    // A tap's target is the node under its point in the step's own tree.
    let tap =
        trace.steps.iter().find(|s| matches!(s.action, Action::Tap { target: Target::Point(_) })).unwrap();
    let Action::Tap { target: Target::Point(p) } = &tap.action else { unreachable!() };
    let tree = &trace.screens[tap.from].tree;
    let hit = tree.node(tree.hit_test(p.x, p.y).unwrap());
    assert_eq!(tap.target.as_ref().unwrap().bounds, Some(hit.bounds));
    assert_eq!(tap.to, Some(tap.from + 1));

    // The same run in SPHINX's text format: outlines, targets from the runner's hit descriptions.
    let run = phonebench_run("pb-text", phonebench_observe::ObservationFormat::SphinxTree);
    let read = ingest(TraceFormat::Phonebench, &[&run]);
    assert!(read.problems.is_empty(), "{:#?}", read.problems);
    let trace = &read.traces[0];
    assert!(trace.screens.iter().all(|s| s.detail == Detail::Outline));
    let tap = trace.steps.iter().find(|s| matches!(s.action, Action::Tap { .. })).unwrap();
    let target = tap.target.as_ref().unwrap();
    assert!(target.class.starts_with("android."), "{target:?}");
    assert!(
        trace.screens[1].tree.iter().any(|(_, n)| n.text == "Alarm"),
        "the outline holds the screen's texts"
    );
}

// ---------------------------------------------------------------------------------------------
// Malformed copies

#[test]
fn droidtask_reports_a_yaml_syntax_error_and_a_choice_naming_no_element() {
    let dir = tmp("droidtask-bad");
    let good = dir.join("good.yaml");
    fs::copy(shared("realdata/droidtask/user_tasks/clock/task1.yaml"), &good).unwrap();
    let syntax = dir.join("syntax.yaml");
    fs::write(
        &syntax,
        "task_name: a task\nrecords:\n- Choice: 1\n  State: '<p id=1>x</p>\n  Input: [unclosed\n",
    )
    .unwrap();
    let choice = dir.join("choice.yaml");
    fs::write(&choice, "task_name: open the settings\nrecords:\n- Choice: 7\n  Input: 'null'\n  State: '<button id=0>A</button>'\n").unwrap();
    let types = dir.join("types.yaml");
    fs::write(&types, "task_name: open it\nrecords: 3\n").unwrap();
    let read = ingest(TraceFormat::Droidtask, &[&dir]);
    assert_problem(&read, &syntax, "line ");
    assert_problem(&read, &choice, "`Choice` 7 names no element");
    assert_problem(&read, &types, "no `records` list");
    assert_eq!(read.traces.len(), 1, "the good file is still read");
    assert_eq!(read.traces[0].origin, good.display().to_string());
}

#[test]
fn droidbot_reports_a_truncated_event_and_a_missing_folder_and_reads_the_rest() {
    let dir = tmp("droidbot-bad");
    copy_files(&shared("realdata/droidtask/clock_run/states"), &dir.join("states"));
    copy_files(&shared("realdata/droidtask/clock_run/events"), &dir.join("events"));
    let mut events: Vec<PathBuf> =
        fs::read_dir(dir.join("events")).unwrap().map(|e| e.unwrap().path()).collect();
    events.sort();
    truncate(&events[5], 60);
    let missing = dir.join("no-such-run");
    let read = ingest(TraceFormat::Droidbot, &[&missing, &dir]);
    assert_problem(&read, &events[5], "line ");
    assert_problem(&read, &missing, "not a file or folder");
    assert_eq!(read.traces.len(), 1);
    assert_eq!(read.traces[0].steps.len(), 168, "the other 168 events are read");
}

#[test]
fn llamatouch_reports_bad_files_and_keeps_the_rest_of_the_batch() {
    let dir = tmp("llamatouch-bad");
    let bad = dir.join("bad_trace");
    copy_files(&llamatouch_trace(), &bad);
    // A truncated dump: the view list of the same screen is read instead.
    truncate(&bad.join("2.xml"), 500);
    // A view list of the wrong type (no tree left for screen 3 but the screenshot).
    truncate(&bad.join("3.xml"), 0);
    fs::write(bad.join("3.vh"), "{\"views\": 3}").unwrap();
    // A screenshot that is a link.
    fs::remove_file(bad.join("4.png")).unwrap();
    std::os::unix::fs::symlink(llamatouch_trace().join("4.png"), bad.join("4.png")).unwrap();
    // An action LlamaTouch does not write, and a click without its position.
    let events = fs::read_to_string(bad.join("eventStructs.txt")).unwrap();
    let mut lines: Vec<&str> = events.lines().collect();
    lines[1] = "[Dance] twice";
    lines[2] = "[Click] Screen Resolution (320, 720)";
    fs::write(bad.join("eventStructs.txt"), lines.join("\n")).unwrap();
    // No instruction.
    fs::remove_file(bad.join("instruction.txt")).unwrap();
    let empty = dir.join("empty");
    fs::create_dir_all(&empty).unwrap();
    let good = dir.join("good_trace");
    copy_files(&llamatouch_trace(), &good);

    let read = ingest(TraceFormat::Llamatouch, &[&empty, &dir]);
    assert_problem(&read, &empty, "no LlamaTouch trace here");
    assert_problem(&read, &bad.join("2.xml"), "line ");
    assert_problem(&read, &bad.join("3.vh"), "not a JSON list of views");
    assert_problem(&read, &bad.join("4.png"), "symbolic link");
    assert_problem(&read, &bad.join("eventStructs.txt"), "line 2: unknown action `[Dance]`");
    assert_problem(&read, &bad.join("eventStructs.txt"), "line 3: no `Click Position");
    assert_problem(&read, &bad.join("instruction.txt"), "missing");
    assert_eq!(read.traces.len(), 2);
    let bad_trace = read.traces.iter().find(|t| t.name == "bad_trace").unwrap();
    assert_eq!(bad_trace.instruction, None);
    assert_eq!(bad_trace.screens[2].detail, Detail::Full, "2.vh stands in for the broken 2.xml");
    assert_eq!(bad_trace.screens[3].detail, Detail::Partial, "screen 3 is only a screenshot");
    assert_eq!(
        bad_trace.screens[3].tree.screen_bounds(),
        phonebench_uitree::Bounds::new(0, 0, 1080, 2400),
        "its size"
    );
    assert!(bad_trace.screens[4].screenshot.is_none());
    assert_eq!(bad_trace.steps.len(), 3, "Home, the last click, and the end");
    // What is left of the bad trace survives traces.db.
    let mut db = TraceDb::create(&dir.join("traces.db")).unwrap();
    db.insert(bad_trace).unwrap();
    assert_same(bad_trace, &db.traces().unwrap()[0]);
    let good_trace = read.traces.iter().find(|t| t.name == "good_trace").unwrap();
    assert_eq!(good_trace.steps.len(), 5);
    assert_eq!(good_trace.steps[1].target.as_ref().unwrap().text, "Duolingo");
}

#[test]
fn aitw_reports_truncated_json_wrong_types_and_links_and_reads_the_good_episode() {
    let dir = tmp("aitw-bad");
    let good = dir.join("good");
    copy_files(&aitw_dir(), &good);
    let truncated = dir.join("truncated.json");
    let text = fs::read_to_string(good.join("GOOGLE_APPS-523638528775825151.json")).unwrap();
    fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    let mut steps: serde_json::Value = serde_json::from_str(&text).unwrap();
    for s in steps.as_array_mut().unwrap() {
        s["episode_id"] = "wrong-types".into();
    }
    steps[1]["ui_positions"] = 7.into();
    steps[2]["result_action_type"] = 42.into();
    let wrong = dir.join("wrong_types.json");
    fs::write(&wrong, serde_json::to_string_pretty(&steps).unwrap()).unwrap();
    let not_list = dir.join("object.json");
    fs::write(&not_list, "{\"episode_id\": 1}").unwrap();
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(good.join("GOOGLE_APPS-523638528775825151.json"), &link).unwrap();
    // The good episode loses one screenshot.
    fs::remove_file(good.join("GOOGLE_APPS-523638528775825151_3.png")).unwrap();

    let read = ingest(TraceFormat::Aitw, &[&dir]);
    assert_problem(&read, &truncated, "line ");
    assert_problem(&read, &wrong, "`ui_positions` is a number, not a list");
    assert_problem(&read, &wrong, "unknown `result_action_type` 42");
    assert_problem(&read, &not_list, "not a JSON list of steps");
    assert_problem(&read, &link, "symbolic link");
    assert_problem(&read, &good.join("GOOGLE_APPS-523638528775825151_3.png"), "No such file");
    let good_trace = read.traces.iter().find(|t| t.name == "523638528775825151").unwrap();
    assert_eq!(good_trace.screens.len(), 4);
    assert!(good_trace.screens[3].screenshot.is_none());
    assert_eq!(good_trace.steps.len(), 4);
    let wrong_trace = read.traces.iter().find(|t| t.name == "wrong-types").unwrap();
    assert_eq!(wrong_trace.screens.len(), 3, "the step with bad boxes is left out");
    assert_eq!(wrong_trace.steps.len(), 2, "and so is the step with an unknown action");
}

#[test]
fn sphinx_reports_broken_trajectories_and_reads_the_others() {
    let dir = tmp("sphinx-bad");
    for name in ["money", "loseit", "abc", "weather"] {
        fs::create_dir_all(dir.join(name)).unwrap();
    }
    copy_files(&sphinx_root().join("101/money"), &dir.join("money"));
    copy_files(&sphinx_root().join("5/loseit"), &dir.join("loseit"));
    copy_files(&sphinx_root().join("919/abc"), &dir.join("abc"));
    copy_files(&sphinx_root().join("203/weather"), &dir.join("weather"));
    // meta.json of the wrong type: the trajectory is skipped.
    fs::write(dir.join("loseit/meta.json"), "{\"type\": \"click\"}").unwrap();
    // A truncated dump: that screen and the action on it are left out.
    truncate(&dir.join("abc/2.xml"), 300);
    // Truncated activities and an unknown action type.
    truncate(&dir.join("weather/activities.json"), 20);
    let meta = dir.join("weather/meta.json");
    let mut actions: serde_json::Value = serde_json::from_str(&fs::read_to_string(&meta).unwrap()).unwrap();
    actions[1]["type"] = "teleport".into();
    fs::write(&meta, serde_json::to_string_pretty(&actions).unwrap()).unwrap();
    // A link to a trajectory.
    std::os::unix::fs::symlink(sphinx_root().join("7/loseit"), dir.join("linked")).unwrap();

    let read = ingest(TraceFormat::Sphinx, &[&dir]);
    assert_problem(&read, &dir.join("loseit/meta.json"), "not a JSON list of actions");
    assert_problem(&read, &dir.join("abc/2.xml"), "line ");
    assert_problem(&read, &dir.join("abc/meta.json"), "action 2: screen 2.xml");
    assert_problem(&read, &dir.join("weather/activities.json"), "line ");
    assert_problem(&read, &meta, "action 1: unknown action type `teleport`");
    assert_problem(&read, &dir.join("linked"), "symbolic link");
    let names: Vec<&str> = read.traces.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    let money = read.traces.iter().find(|t| t.name.ends_with("money")).unwrap();
    assert_eq!(money.steps.len(), 6);
    let abc = read.traces.iter().find(|t| t.name.ends_with("abc")).unwrap();
    assert_eq!((abc.screens.len(), abc.steps.len()), (3, 3));
    assert_eq!(abc.steps[1].to, None, "the screen after action 1 is gone");
    let weather = read.traces.iter().find(|t| t.name.ends_with("weather")).unwrap();
    assert_eq!(weather.steps.len(), 4);
    assert!(weather.screens.iter().all(|s| s.activity.is_none()));
}

#[test]
fn phonebench_reports_a_missing_database_a_foreign_file_and_bad_rows() {
    let dir = tmp("phonebench-bad");
    let empty = dir.join("empty");
    fs::create_dir_all(&empty).unwrap();
    let foreign = dir.join("foreign");
    fs::create_dir_all(&foreign).unwrap();
    fs::write(foreign.join("results.sqlite"), "this is not SQLite at all, just text").unwrap();
    let other = dir.join("other");
    fs::create_dir_all(&other).unwrap();
    rusqlite::Connection::open(other.join("results.sqlite"))
        .unwrap()
        .execute_batch("CREATE TABLE episodes (key TEXT);")
        .unwrap();
    let run = phonebench_run("pb-bad", phonebench_observe::ObservationFormat::Uiautomator);
    {
        let conn = rusqlite::Connection::open(run.join("results.sqlite")).unwrap();
        conn.execute("UPDATE steps SET data = '{\"truncated' WHERE step = 1", []).unwrap();
        conn.execute(
            "UPDATE steps SET data = json_set(data, '$.observation', '<?xml version=\"1.0\"?><hierarchy><node') WHERE step = 2",
            [],
        )
        .unwrap();
        conn.execute(
            "UPDATE steps SET data = json_set(data, '$.screenshot', '../../etc/passwd') WHERE step = 3",
            [],
        )
        .unwrap();
    }
    let read = ingest(TraceFormat::Phonebench, &[&empty, &foreign, &other, &run]);
    assert_problem(&read, &empty.join("results.sqlite"), "missing");
    assert_problem(&read, &foreign.join("results.sqlite"), "not a readable SQLite database");
    assert_problem(&read, &other.join("results.sqlite"), "no `steps` table");
    let db = run.join("results.sqlite");
    assert_problem(&read, &db, "step 1: not JSON");
    assert_problem(&read, &db, "step 2: the XML observation does not parse");
    assert_problem(&read, &db, "step 3: screenshot path \"../../etc/passwd\" leads outside");
    let [trace] = read.traces.as_slice() else { panic!("one trace: {:#?}", read.problems) };
    assert_eq!(trace.steps.len(), 4, "the step whose row is not JSON is left out");
    assert_eq!(trace.screens[1].detail, Detail::Outline, "the broken dump is kept as an outline");
    assert!(trace.screens[2].screenshot.is_none());
}

// ---------------------------------------------------------------------------------------------
// traces.db round trip

fn assert_same(a: &Trace, b: &Trace) {
    assert_eq!((a.format, &a.name, &a.origin, a.kind), (b.format, &b.name, &b.origin, b.kind));
    assert_eq!((&a.package, &a.instruction), (&b.package, &b.instruction), "{}", a.name);
    assert_eq!(a.screens.len(), b.screens.len(), "{}", a.name);
    for (x, y) in a.screens.iter().zip(&b.screens) {
        assert_eq!(
            (&x.key, &x.package, &x.activity, x.detail),
            (&y.key, &y.package, &y.activity, y.detail),
            "{}",
            a.name
        );
        assert_eq!(x.tree, y.tree, "{} screen {}", a.name, x.key);
        assert_eq!(x.screenshot, y.screenshot, "{} screen {}", a.name, x.key);
    }
    assert_eq!(a.steps.len(), b.steps.len(), "{}", a.name);
    for (x, y) in a.steps.iter().zip(&b.steps) {
        assert_eq!(
            (x.from, x.to, &x.action, &x.target, &x.raw),
            (y.from, y.to, &y.action, &y.target, &y.raw),
            "{}",
            a.name
        );
    }
}

#[test]
fn every_format_survives_traces_db() {
    let dir = tmp("store");
    let mut read = ingest(TraceFormat::Llamatouch, &[llamatouch_trace()]);
    read.extend(ingest(TraceFormat::Aitw, &[aitw_dir()]));
    read.extend(ingest(TraceFormat::Sphinx, &[sphinx_root()]));
    read.extend(ingest(TraceFormat::Droidtask, &[shared("realdata/droidtask/user_tasks/clock/task1.yaml")]));
    read.extend(ingest(TraceFormat::Droidbot, &[shared("realdata/droidbot_utg/qqmusic_small")]));
    read.extend(ingest(
        TraceFormat::Phonebench,
        &[phonebench_run("pb-store", phonebench_observe::ObservationFormat::SphinxTree)],
    ));
    assert!(read.problems.is_empty(), "{:#?}", read.problems);
    let formats: std::collections::BTreeSet<TraceFormat> = read.traces.iter().map(|t| t.format).collect();
    assert_eq!(formats.len(), 6);
    let path = dir.join("traces.db");
    let mut db = TraceDb::create(&path).unwrap();
    for trace in &read.traces {
        db.insert(trace).unwrap();
    }
    drop(db);
    let back = TraceDb::open(&path).unwrap().traces().unwrap();
    assert_eq!(back.len(), read.traces.len());
    for trace in &read.traces {
        let stored = back
            .iter()
            .find(|t| t.format == trace.format && t.name == trace.name && t.origin == trace.origin)
            .unwrap();
        assert_same(trace, stored);
    }
}
