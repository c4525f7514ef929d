//! Every criterion kind on small hand-built trajectories: where it passes, where it fails, and the
//! trace arithmetic (first match, BFS order, system UI, windows of three, ACP).

// Test helpers outside `#[test]` functions unwrap too (clippy only exempts the functions).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use phonebench_actions::{Action, Direction, FinishStatus, Key, Point, Target};
use phonebench_env::{
    DatabasePair, EpisodeEnd, EventRecord, Exchange, McpCallRecord, ScreenRecord, StepRecord, Trajectory,
};
use phonebench_eval::{EvalContext, Semantics, Verdict, evaluate};
use phonebench_tasks::Criterion;
use serde::Deserialize;

// ---------------------------------------------------------------- building blocks

/// Criteria in their TOML form (`[[criteria]]` tables, as in a task file).
fn criteria(toml_text: &str) -> Vec<Criterion> {
    #[derive(Deserialize)]
    struct File {
        criteria: Vec<Criterion>,
    }
    toml::from_str::<File>(toml_text).unwrap_or_else(|e| panic!("{e}\n{toml_text}")).criteria
}

/// A screen from `<node>` markup (wrapped in a hierarchy), in app `notes`.
fn screen(nodes: &str, activity: &str) -> ScreenRecord {
    let xml = format!("<?xml version='1.0' encoding='UTF-8'?><hierarchy rotation=\"0\">{nodes}</hierarchy>");
    ScreenRecord {
        tree: Arc::new(phonebench_uitree::read_xml(&xml).unwrap()),
        app: Some("notes".into()),
        package: "com.example.notes".into(),
        activity: activity.into(),
    }
}

/// A leaf node.
fn n(attrs: &str, bounds: &str) -> String {
    format!(
        "<node {attrs} class=\"android.widget.TextView\" package=\"com.example.notes\" bounds=\"{bounds}\"/>"
    )
}

/// A window root holding `children`.
fn root(children: &[String]) -> String {
    format!(
        "<node class=\"android.widget.FrameLayout\" package=\"com.example.notes\" bounds=\"[0,0][1080,2400]\">{}</node>",
        children.concat()
    )
}

fn tap(x: i32, y: i32) -> StepRecord {
    StepRecord {
        raw: format!("tap {x} {y}"),
        action: Some(Action::Tap { target: Target::Point(Point::new(x, y)) }),
        point: Some((x, y)),
        ..StepRecord::default()
    }
}

fn type_text(text: &str, x: i32, y: i32) -> StepRecord {
    StepRecord {
        raw: format!("type {text}"),
        action: Some(Action::Type {
            text: text.into(),
            target: Some(Target::Point(Point::new(x, y))),
            clear: false,
            enter: false,
        }),
        point: Some((x, y)),
        ..StepRecord::default()
    }
}

fn act(action: Action) -> StepRecord {
    StepRecord { raw: format!("{action:?}"), action: Some(action), ..StepRecord::default() }
}

fn trajectory(screens: Vec<ScreenRecord>, steps: Vec<StepRecord>) -> Trajectory {
    Trajectory { screens, steps, end: Some(EpisodeEnd::Budget), ..Trajectory::default() }
}

fn run(criteria_toml: &str, t: &Trajectory) -> Verdict {
    evaluate(&criteria(criteria_toml), t, &EvalContext::default())
}

fn run_with(criteria_toml: &str, t: &Trajectory, semantics: Semantics) -> Verdict {
    evaluate(&criteria(criteria_toml), t, &EvalContext { semantics, ..EvalContext::default() })
}

fn passes(criteria_toml: &str, t: &Trajectory) -> bool {
    let v = run(criteria_toml, t);
    assert_eq!(v.criteria.len(), 1);
    v.success
}

/// Three screens: a list, an editor with a title field, a saved note showing "Total: 12".
fn notes_trajectory() -> Trajectory {
    let list = screen(
        &root(&[
            n(r#"text="Notes" resource-id="app:id/title""#, "[0,0][1080,100]"),
            n(r#"text="New" resource-id="app:id/new" clickable="true""#, "[900,2200][1080,2400]"),
        ]),
        "list",
    );
    let editor = screen(
        &root(&[
            n(r#"text="" resource-id="app:id/field""#, "[0,200][1080,300]"),
            n(r#"text="Save" resource-id="app:id/save" clickable="true""#, "[0,400][200,500]"),
        ]),
        "editor",
    );
    let saved = screen(
        &root(&[
            n(r#"text="Groceries" resource-id="app:id/title""#, "[0,0][1080,100]"),
            n(r#"text="Total: 12" resource-id="app:id/total""#, "[0,120][300,180]"),
            n(r#"text="EUR" resource-id="app:id/unit""#, "[310,120][400,180]"),
            n(r#"text="Due 2025-03-01 09:30" resource-id="app:id/due""#, "[0,900][600,960]"),
        ]),
        "note",
    );
    trajectory(vec![list, editor, saved], vec![tap(990, 2300), type_text("Groceries", 540, 250)])
}

// ---------------------------------------------------------------- element

#[test]
fn element_on_the_last_screen_and_on_any_screen() {
    let t = notes_trajectory();
    let last = r#"[[criteria]]
element = { "resource-id" = "app:id/total" }
check = { text = "Total: 12" }"#;
    assert!(passes(last, &t));
    assert_eq!(run(last, &t).criteria[0].step, Some(2));
    // The Save button was on screen 1, not the last one.
    assert!(!passes(
        r#"[[criteria]]
element = { text = "Save" }"#,
        &t
    ));
    let any = r#"[[criteria]]
on = "any"
element = { text = "Save" }"#;
    assert!(passes(any, &t));
    assert_eq!(run(any, &t).criteria[0].step, Some(1));
    assert!(!passes(
        r#"[[criteria]]
on = "any"
element = { text = "Delete" }"#,
        &t
    ));
    // Operators: contains and regex.
    assert!(passes(
        r#"[[criteria]]
element = { text = { contains = "Total" } }
check = { text = { regex = "^Total: \\d+$" } }"#,
        &t
    ));
    assert!(!passes(
        r#"[[criteria]]
element = { text = { contains = "Total" } }
check = { text = { regex = "^Total: \\d{3}$" } }"#,
        &t
    ));
}

#[test]
fn element_activity_rules_gate_and_check_the_screen() {
    let t = notes_trajectory();
    assert!(passes(
        r#"[[criteria]]
element = { "resource-id" = "app:id/total" }
check = { activity = "note" }"#,
        &t
    ));
    let v = run(
        r#"[[criteria]]
element = { "resource-id" = "app:id/total" }
check = { activity = "editor" }"#,
        &t,
    );
    assert!(!v.success);
    assert!(v.criteria[0].detail.contains("activity"), "{}", v.criteria[0].detail);
    // In find rules, `activity` picks which screens are searched.
    assert!(passes(
        r#"[[criteria]]
on = "any"
element = { "resource-id" = "app:id/title", activity = "note" }
check = { text = "Groceries" }"#,
        &t
    ));
}

#[test]
fn upstream_checks_only_the_first_match_any_match_looks_further() {
    let t = notes_trajectory();
    // Two screens show app:id/title; the first says "Notes".
    let c = r#"[[criteria]]
on = "any"
element = { "resource-id" = "app:id/title" }
check = { text = "Groceries" }"#;
    let upstream = run_with(c, &t, Semantics::Upstream);
    assert!(!upstream.success);
    assert!(
        upstream.criteria[0].detail.contains("first match on screen 0"),
        "{}",
        upstream.criteria[0].detail
    );
    let fixed = run_with(c, &t, Semantics::AnyMatch);
    assert!(fixed.success);
    assert_eq!(fixed.criteria[0].step, Some(2));

    // Within one screen too: the first node matching the find rules is the one checked.
    let s = screen(
        &root(&[
            n(r#"text="Item" resource-id="a""#, "[0,0][10,10]"),
            n(r#"text="Item" resource-id="b""#, "[0,20][10,30]"),
        ]),
        "x",
    );
    let t = trajectory(vec![s], vec![]);
    let c = r#"[[criteria]]
element = { text = "Item" }
check = { "resource-id" = "b" }"#;
    assert!(!run_with(c, &t, Semantics::Upstream).success);
    assert!(run_with(c, &t, Semantics::AnyMatch).success);
}

#[test]
fn nodes_are_searched_breadth_first() {
    // Depth-first would meet the nested "deep" node first; breadth-first meets "shallow" first.
    let nested = format!(
        "<node class=\"android.widget.LinearLayout\" package=\"p\" bounds=\"[0,0][100,100]\">{}</node>",
        n(r#"text="same" resource-id="deep""#, "[0,0][50,50]")
    );
    let s = screen(&root(&[nested, n(r#"text="same" resource-id="shallow""#, "[0,100][50,150]")]), "x");
    let t = trajectory(vec![s], vec![]);
    assert!(passes(
        r#"[[criteria]]
element = { text = "same" }
check = { "resource-id" = "shallow" }"#,
        &t
    ));
}

#[test]
fn system_ui_windows_are_not_searched() {
    let status_bar = "<node class=\"android.widget.FrameLayout\" package=\"com.android.systemui\" bounds=\"[0,0][1080,60]\">\
        <node text=\"12:30\" resource-id=\"com.android.systemui:id/clock\" class=\"android.widget.TextView\" \
        package=\"com.android.systemui\" bounds=\"[0,0][100,60]\"/></node>";
    let s = screen(&format!("{status_bar}{}", root(&[n(r#"text="Body""#, "[0,100][500,200]")])), "x");
    let t = trajectory(vec![s], vec![]);
    assert!(!passes(
        r#"[[criteria]]
element = { "resource-id" = "com.android.systemui:id/clock" }"#,
        &t
    ));
    assert!(!passes(
        r#"[[criteria]]
text = "12:30""#,
        &t
    ));
    assert!(passes(
        r#"[[criteria]]
text = "Body""#,
        &t
    ));
}

// ---------------------------------------------------------------- actions

#[test]
fn actions_by_attribute_and_by_the_element_at_their_point() {
    let t = notes_trajectory();
    assert!(passes(
        r#"[[criteria]]
on = "any"
action = { action_type = "input" }
check = { message = "Groceries" }"#,
        &t
    ));
    assert!(!passes(
        r#"[[criteria]]
on = "any"
action = { action_type = "input" }
check = { message = "Milk" }"#,
        &t
    ));
    // Element rules resolve through the point: the tap at (990, 2300) hit app:id/new.
    let c = r#"[[criteria]]
on = "any"
action = { action_type = "click", "resource-id" = "app:id/new" }"#;
    assert!(passes(c, &t));
    assert_eq!(run(c, &t).criteria[0].step, Some(0));
    assert!(!passes(
        r#"[[criteria]]
on = "any"
action = { action_type = "click", "resource-id" = "app:id/save" }"#,
        &t
    ));
    // Canonical kind and typed text.
    assert!(passes(
        r#"[[criteria]]
on = "any"
action = { type = "type", message = { contains = "Groc" } }"#,
        &t
    ));
}

#[test]
fn a_point_on_the_edge_of_an_element_is_inside_it() {
    // Upstream tests `x1 <= x <= x2`: the right and bottom edges count.
    let s = screen(&root(&[n(r#"resource-id="btn""#, "[100,100][200,200]")]), "x");
    let t = trajectory(vec![s.clone(), s], vec![tap(200, 200)]);
    assert!(passes(
        r#"[[criteria]]
on = "any"
action = { "resource-id" = "btn" }"#,
        &t
    ));
}

#[test]
fn last_action_is_the_one_before_stop_and_a_trailing_finish_is_the_stop() {
    let t = notes_trajectory();
    assert!(passes(
        r#"[[criteria]]
action = {}
check = { action_type = "input", "resource-id" = "app:id/field" }"#,
        &t
    ));
    assert!(!passes(
        r#"[[criteria]]
action = {}
check = { action_type = "click" }"#,
        &t
    ));
    // An episode records the agent's finish as a step; it is the STOP, not the last action.
    let mut finished = notes_trajectory();
    finished.screens.push(finished.screens[2].clone());
    finished.steps.push(act(Action::Finish { status: FinishStatus::Complete, reason: None }));
    assert!(passes(
        r#"[[criteria]]
action = {}
check = { action_type = "input" }"#,
        &finished
    ));
    assert!(passes(
        r#"[[criteria]]
element = { "resource-id" = "app:id/total" }"#,
        &finished
    ));
    assert!(passes(
        r#"[[criteria]]
on = "any"
action = { action_type = "stop", type = "finish" }"#,
        &finished
    ));
    // No action at all: nothing before STOP.
    let only = trajectory(vec![notes_trajectory().screens[0].clone()], vec![]);
    assert!(!passes(
        r#"[[criteria]]
action = {}"#,
        &only
    ));
}

#[test]
fn key_direction_and_app_are_action_attributes() {
    let s = screen(&root(&[]), "x");
    let t = trajectory(
        vec![s.clone(), s.clone(), s.clone(), s],
        vec![
            act(Action::Key { key: Key::Back }),
            act(Action::Scroll { direction: Direction::Down, target: None }),
            act(Action::OpenApp { app: "Messages".into() }),
        ],
    );
    for (rule, expected) in [
        (r#"{ action_type = "back", key = "back" }"#, true),
        (r#"{ type = "scroll", direction = "down" }"#, true),
        (r#"{ direction = "up" }"#, false),
        (r#"{ app = "Messages", action_type = "restart" }"#, true),
        (r#"{ key = "home" }"#, false),
    ] {
        let c = format!("[[criteria]]\non = \"any\"\naction = {rule}");
        assert_eq!(passes(&c, &t), expected, "{rule}");
    }
}

#[test]
fn action_element_checks_the_screen_where_the_action_was_taken() {
    // The editor shows the typed title on the screen where Save was tapped.
    let editor = screen(
        &root(&[
            n(r#"text="Groceries" resource-id="app:id/field""#, "[0,200][1080,300]"),
            n(r#"text="Save" resource-id="app:id/save""#, "[0,400][200,500]"),
        ]),
        "editor",
    );
    let after = screen(&root(&[n(r#"text="Saved""#, "[0,0][100,100]")]), "list");
    let t = trajectory(vec![editor, after], vec![tap(100, 450)]);
    let c = |check: &str| {
        format!(
            "[[criteria]]\naction_element = {{ action = {{ action_type = \"click\", text = \"Save\" }}, \
             element = {{ \"resource-id\" = \"app:id/field\" }}, check = {check} }}"
        )
    };
    assert!(passes(&c(r#"{ text = "Groceries" }"#), &t));
    assert!(!passes(&c(r#"{ text = "Milk" }"#), &t));
}

// ---------------------------------------------------------------- combinators and the trace

/// Screens 0..4, each with one node `s{i}`, and taps on nodes a, b, c, d (one per screen).
fn abcd() -> Trajectory {
    let names = ["a", "b", "c", "d"];
    let mut screens: Vec<ScreenRecord> = names
        .iter()
        .map(|id| screen(&root(&[n(&format!(r#"resource-id="{id}""#), "[0,0][100,100]")]), id))
        .collect();
    screens.push(screen(&root(&[]), "end"));
    trajectory(screens, names.iter().map(|_| tap(50, 50)).collect())
}

fn click(id: &str) -> String {
    format!("{{ action = {{ action_type = \"click\", \"resource-id\" = \"{id}\" }}, on = \"any\" }}")
}

#[test]
fn sequence_keeps_order_and_may_reuse_a_step() {
    let t = abcd();
    assert!(passes(&format!("[[criteria]]\nsequence = [{}, {}]", click("a"), click("c")), &t));
    assert!(!passes(&format!("[[criteria]]\nsequence = [{}, {}]", click("c"), click("a")), &t));
    // The position a child matched is included in the next child's search.
    let v = run(&format!("[[criteria]]\nsequence = [{}, {}]", click("b"), click("b")), &t);
    assert!(v.success);
    assert_eq!(v.criteria[0].children[0].step, Some(1));
    assert_eq!(v.criteria[0].children[1].step, Some(1));
    // Children after a failure are reported as not reached.
    let v = run(&format!("[[criteria]]\nsequence = [{}, {}, {}]", click("c"), click("a"), click("d")), &t);
    assert!(v.criteria[0].children[2].detail.starts_with("not evaluated"));
}

#[test]
fn consecutive_needs_each_child_within_the_next_step() {
    let t = abcd();
    assert!(passes(&format!("[[criteria]]\nconsecutive = [{}, {}]", click("a"), click("b")), &t));
    assert!(passes(
        &format!("[[criteria]]\nconsecutive = [{}, {}, {}]", click("b"), click("c"), click("d")),
        &t
    ));
    // One step in between is too far: windows are three entries (action, screen, action).
    assert!(!passes(&format!("[[criteria]]\nconsecutive = [{}, {}]", click("a"), click("c")), &t));
    assert!(!passes(&format!("[[criteria]]\nconsecutive = [{}, {}]", click("b"), click("a")), &t));
}

#[test]
fn any_not_and_all() {
    let t = abcd();
    assert!(passes(&format!("[[criteria]]\nany = [{}, {}]", click("x"), click("c")), &t));
    assert!(!passes(&format!("[[criteria]]\nany = [{}, {}]", click("x"), click("y")), &t));
    assert!(passes(&format!("[[criteria]]\nnot = {}", click("x")), &t));
    assert!(!passes(&format!("[[criteria]]\nnot = {}", click("a")), &t));
    assert!(passes(&format!("[[criteria]]\nall = [{}, {}]", click("d"), click("a")), &t));
    let v = run(&format!("[[criteria]]\nall = [{}, {}]", click("d"), click("x")), &t);
    assert!(!v.success);
    assert_eq!(v.criteria[0].detail, "1 of 2 hold");
}

#[test]
fn acp_counts_top_level_criteria_with_combinators_as_one() {
    let t = abcd();
    // [all[pass, fail], pass, sequence[pass, pass]] → 2 of 3.
    let c = format!(
        "[[criteria]]\nall = [{}, {}]\n\n[[criteria]]\non = \"any\"\naction = {{ \"resource-id\" = \"b\" }}\n\n\
         [[criteria]]\nsequence = [{}, {}]",
        click("a"),
        click("x"),
        click("a"),
        click("d")
    );
    let v = run(&c, &t);
    assert_eq!(v.criteria.iter().map(|c| c.passed).collect::<Vec<_>>(), [false, true, true]);
    assert!(!v.success);
    assert!((v.acp - 2.0 / 3.0).abs() < 1e-12, "{}", v.acp);
    assert_eq!(v.criteria[0].children.iter().map(|c| c.passed).collect::<Vec<_>>(), [true, false]);

    // Nothing to check: vacuously successful, as upstream.
    let v = evaluate(&[], &t, &EvalContext::default());
    assert!(v.success && v.acp == 1.0);
}

// ---------------------------------------------------------------- text, near, time, screen

#[test]
fn text_near_time_and_screen() {
    let t = notes_trajectory();
    assert!(passes("[[criteria]]\ntext = \"Total: 12\"", &t));
    assert!(!passes("[[criteria]]\ntext = \"Notes\"", &t));
    assert!(passes("[[criteria]]\non = \"any\"\ntext = \"Notes\"", &t));

    // "Total: 12" ends at x=300, "EUR" starts at x=310: 10 px apart.
    assert!(passes(
        r#"[[criteria]]
near = { text = "Total", to = "EUR", within = 10 }"#,
        &t
    ));
    assert!(!passes(
        r#"[[criteria]]
near = { text = "Total", to = "EUR", within = 9 }"#,
        &t
    ));
    assert!(!passes(
        r#"[[criteria]]
near = { text = "Total", to = "Due", within = 100 }"#,
        &t
    ));
    assert!(!passes(
        r#"[[criteria]]
near = { text = "Total", to = "Missing" }"#,
        &t
    ));

    let time = |from: &str, to: &str| {
        format!(
            "[[criteria]]\ntime = {{ element = {{ \"resource-id\" = \"app:id/due\" }}, from = \"{from}\", to = \"{to}\" }}"
        )
    };
    assert!(passes(&time("09:00", "10:00"), &t));
    assert!(passes(&time("9:30 AM", "9:30 AM"), &t));
    assert!(!passes(&time("10:00", "11:00"), &t));
    assert!(passes(&time("2025-03-01", "2025-03-01"), &t));
    assert!(!passes(&time("2025-03-02 00:00", "2025-03-09 00:00"), &t));
    let v = run(&time("soon", "later"), &t);
    assert!(v.criteria[0].detail.contains("cannot read `soon`"), "{}", v.criteria[0].detail);

    assert!(passes("[[criteria]]\nscreen = { app = \"notes\", screen = \"note\" }", &t));
    assert!(passes("[[criteria]]\nscreen = { app = \"com.example.notes\" }", &t));
    assert!(!passes("[[criteria]]\nscreen = { screen = \"editor\" }", &t));
    assert!(passes("[[criteria]]\nscreen = { screen = \"editor\", on = \"any\" }", &t));
}

#[test]
fn screen_names_match_activity_classes_by_their_simple_name() {
    let mut s = screen(&root(&[]), "com.example.notes.ui.EditorActivity");
    s.app = None;
    let t = trajectory(vec![s], vec![]);
    assert!(passes("[[criteria]]\nscreen = { screen = \"EditorActivity\" }", &t));
    assert!(passes("[[criteria]]\nscreen = { screen = \"com.example.notes.ui.EditorActivity\" }", &t));
    assert!(!passes("[[criteria]]\nscreen = { screen = \"Editor\" }", &t));
}

#[test]
fn time_upstream_reads_the_first_match_any_match_reads_any() {
    let s = screen(
        &root(&[
            n(r#"resource-id="slot" text="08:00""#, "[0,0][10,10]"),
            n(r#"resource-id="slot" text="14:00""#, "[0,20][10,30]"),
        ]),
        "x",
    );
    let t = trajectory(vec![s], vec![]);
    let c = r#"[[criteria]]
time = { element = { "resource-id" = "slot" }, from = "13:00" }"#;
    assert!(!run_with(c, &t, Semantics::Upstream).success);
    assert!(run_with(c, &t, Semantics::AnyMatch).success);
}

// ---------------------------------------------------------------- state and changes

fn database(sql: &str) -> Vec<u8> {
    let mut conn = rusqlite::Connection::open_in_memory().unwrap();
    conn.execute_batch(sql).unwrap();
    conn.serialize(rusqlite::MAIN_DB).unwrap().to_vec()
}

const SCHEMA: &str = "CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, amount REAL);
    CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT);
    INSERT INTO notes VALUES (1, 'Milk', 2.5), (2, 'Bread', 3.0);
    INSERT INTO tags VALUES (1, 'food');";

fn with_databases(initial: &str, last: &str) -> Trajectory {
    let mut t = notes_trajectory();
    t.databases.insert("notes".into(), DatabasePair { initial: database(initial), last: database(last) });
    t
}

#[test]
fn state_queries_the_final_database() {
    let t = with_databases(SCHEMA, &format!("{SCHEMA} INSERT INTO notes VALUES (3, 'Groceries', 12);"));
    let params: BTreeMap<String, serde_json::Value> = [
        ("title".to_string(), serde_json::json!("Groceries")),
        ("amount".to_string(), serde_json::json!(12)),
    ]
    .into();
    let ctx = EvalContext { sql_params: params, ..EvalContext::default() };
    let check = |c: &str| evaluate(&criteria(c), &t, &ctx);

    // Default: at least one row.
    assert!(
        check(
            r#"[[criteria]]
state = { app = "notes", sql = "SELECT 1 FROM notes WHERE title = :title" }"#
        )
        .success
    );
    assert!(
        !check(
            r#"[[criteria]]
state = { app = "notes", sql = "SELECT 1 FROM notes WHERE title = 'Cheese'" }"#
        )
        .success
    );
    // Numbers compare as numbers (REAL 12.0 = 12 = "12"), text as text.
    assert!(
        check(
            r#"[[criteria]]
state = { app = "notes", sql = "SELECT amount FROM notes WHERE title = :title", equals = 12 }"#
        )
        .success
    );
    assert!(
        check(
            r#"[[criteria]]
state = { app = "notes", sql = "SELECT amount FROM notes WHERE title = :title", equals = "12" }"#
        )
        .success
    );
    assert!(
        check(
            r#"[[criteria]]
state = { app = "notes", sql = "SELECT amount = :amount FROM notes WHERE id = 3", equals = 1 }"#
        )
        .success
    );
    assert!(
        !check(
            r#"[[criteria]]
state = { app = "notes", sql = "SELECT title FROM notes WHERE id = 1", equals = "milk" }"#
        )
        .success
    );
    assert!(check(r#"[[criteria]]
state = { app = "notes", sql = "SELECT id, title FROM notes ORDER BY id", rows = [[1, "Milk"], [2, "Bread"], [3, "Groceries"]] }"#).success);
    assert!(!check(r#"[[criteria]]
state = { app = "notes", sql = "SELECT id, title FROM notes ORDER BY id", rows = [[1, "Milk"], [2, "Bread"]] }"#).success);
    assert!(
        check(
            r#"[[criteria]]
state = { app = "notes", sql = "SELECT * FROM notes", count = 3 }"#
        )
        .success
    );
    assert!(
        check(
            r#"[[criteria]]
state = { app = "notes", sql = "SELECT * FROM notes WHERE 0", count = { max = 0 } }"#
        )
        .success
    );
    assert!(
        !check(
            r#"[[criteria]]
state = { app = "notes", sql = "SELECT * FROM notes", count = { min = 4 } }"#
        )
        .success
    );
}

#[test]
fn state_errors_fail_the_criterion_with_the_reason() {
    let t = with_databases(SCHEMA, SCHEMA);
    let detail = |c: &str| {
        let v = run(c, &t);
        assert!(!v.success, "{c}");
        v.criteria[0].detail.clone()
    };
    assert!(
        detail(
            r#"[[criteria]]
state = { app = "notes", sql = "SELEC nonsense" }"#
        )
        .contains("bad SQL")
    );
    assert!(
        detail(
            r#"[[criteria]]
state = { app = "notes", sql = "DELETE FROM notes" }"#
        )
        .contains("read-only")
    );
    assert!(
        detail(
            r#"[[criteria]]
state = { app = "notes", sql = "SELECT 1 WHERE :missing" }"#
        )
        .contains("`:missing` is not a task parameter")
    );
    assert!(
        detail(
            r#"[[criteria]]
state = { app = "notes", sql = "SELECT 1 WHERE ?" }"#
        )
        .contains("positional")
    );
    assert!(
        detail(
            r#"[[criteria]]
state = { app = "contacts", sql = "SELECT 1" }"#
        )
        .contains("no database was recorded for app `contacts`")
    );
    // The database was not changed by the refused write.
    assert!(
        run(
            r#"[[criteria]]
state = { app = "notes", sql = "SELECT * FROM notes", count = 2 }"#,
            &t
        )
        .success
    );
    // An empty recording fails cleanly.
    let mut empty = notes_trajectory();
    empty.databases.insert("notes".into(), DatabasePair::default());
    let v = run(
        r#"[[criteria]]
state = { app = "notes", sql = "SELECT 1" }"#,
        &empty,
    );
    assert!(v.criteria[0].detail.contains("not recorded"), "{}", v.criteria[0].detail);
}

#[test]
fn changes_count_added_removed_and_updated_rows() {
    let last = "CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, amount REAL);
        CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT);
        INSERT INTO notes VALUES (1, 'Milk', 4.0), (3, 'Groceries', 12), (4, 'Eggs', 1);
        INSERT INTO tags VALUES (1, 'food');";
    let t = with_databases(SCHEMA, last);
    assert!(passes(
        r#"[[criteria]]
changes = { app = "notes", table = "notes", added = 2, removed = 1, updated = 1, only = true }"#,
        &t
    ));
    assert!(!passes(
        r#"[[criteria]]
changes = { app = "notes", table = "notes", added = 1 }"#,
        &t
    ));
    assert!(passes(
        r#"[[criteria]]
changes = { app = "notes", table = "tags", added = 0, removed = 0, updated = 0 }"#,
        &t
    ));
    // `only`: tags unchanged is fine for notes, but notes changed, so not for tags.
    assert!(!passes(
        r#"[[criteria]]
changes = { app = "notes", table = "tags", only = true }"#,
        &t
    ));
    let v = run(
        r#"[[criteria]]
changes = { app = "notes", table = "nope", added = 1 }"#,
        &t,
    );
    assert!(v.criteria[0].detail.contains("no table `nope`"), "{}", v.criteria[0].detail);
}

// ---------------------------------------------------------------- answer, events, asking, MCP

#[test]
fn answer_forms() {
    let mut t = notes_trajectory();
    let check = |t: &Trajectory, form: &str| passes(&format!("[[criteria]]\nanswer = {form}"), t);
    assert!(!check(&t, r#"{ exact = "42" }"#), "no answer given");
    t.answer = Some("  The total is 1,234.50 EUR.  ".into());
    assert!(check(&t, r#"{ exact = "The total is 1,234.50 EUR." }"#));
    assert!(!check(&t, r#"{ exact = "the total is 1,234.50 eur." }"#));
    assert!(check(&t, r#"{ normalized = "the total is 123450 eur" }"#));
    assert!(check(&t, r#"{ contains = "TOTAL IS" }"#));
    assert!(!check(&t, r#"{ contains = "sum" }"#));
    assert!(check(&t, r#"{ regex = "\\d+\\.\\d{2}" }"#));
    assert!(check(&t, r#"{ number = { value = 1234.5 } }"#));
    assert!(check(&t, r#"{ number = { value = 1230, tolerance = 5 } }"#));
    assert!(!check(&t, r#"{ number = { value = 1230, tolerance = 4 } }"#));
    t.answer = Some("Milk, eggs and bread".into());
    assert!(check(&t, r#"{ items = ["bread", "Eggs", "milk"] }"#));
    assert!(!check(&t, r#"{ items = ["bread", "milk"] }"#));
    let v = run("[[criteria]]\nanswer = { regex = \"(\" }", &t);
    assert!(v.criteria[0].detail.contains("bad regular expression"), "{}", v.criteria[0].detail);
}

#[test]
fn events_questions_and_mcp_calls() {
    let mut t = abcd();
    t.events = vec![
        EventRecord {
            step: 1,
            app: "messages".into(),
            name: "sent".into(),
            data: serde_json::json!({"to": "Bob", "n": 2}),
        },
        EventRecord {
            step: 3,
            app: "messages".into(),
            name: "sent".into(),
            data: serde_json::json!({"to": "Ann", "n": 1}),
        },
    ];
    t.exchanges =
        vec![Exchange { step: 2, question: "Which Bob?".into(), answer: "Bob Smith".into(), fact: Some(0) }];
    t.mcp_calls = vec![McpCallRecord {
        step: 0,
        tool: "search".into(),
        arguments: serde_json::Map::new(),
        result: "ok".into(),
        ..McpCallRecord::default()
    }];
    assert!(passes(
        r#"[[criteria]]
event = { app = "messages", name = "sent", data = { to = "Bob", n = "2" } }"#,
        &t
    ));
    assert!(!passes(
        r#"[[criteria]]
event = { name = "sent", data = { to = "Eve" } }"#,
        &t
    ));
    assert!(passes(
        r#"[[criteria]]
event = { name = "sent", count = 2 }"#,
        &t
    ));
    assert!(!passes(
        r#"[[criteria]]
event = { name = "sent", count = { max = 1 } }"#,
        &t
    ));
    assert!(passes("[[criteria]]\nasked = 1", &t));
    assert!(!passes("[[criteria]]\nasked = { max = 0 }", &t));
    assert!(passes(
        r#"[[criteria]]
mcp = { tool = "search" }"#,
        &t
    ));
    assert!(!passes(
        r#"[[criteria]]
mcp = { tool = "calendar" }"#,
        &t
    ));
    // In a sequence, step-stamped records count only from where the previous child matched.
    assert!(passes(
        &format!(
            "[[criteria]]\nsequence = [{}, {{ event = {{ name = \"sent\", data = {{ to = \"Ann\" }} }} }}]",
            click("c")
        ),
        &t
    ));
    assert!(!passes(
        &format!(
            "[[criteria]]\nsequence = [{}, {{ event = {{ name = \"sent\", data = {{ to = \"Bob\" }} }} }}]",
            click("c")
        ),
        &t
    ));
}

// ---------------------------------------------------------------- robustness

#[test]
fn degenerate_trajectories_fail_every_leaf_without_panicking() {
    let all_kinds = r#"
[[criteria]]
element = { text = "x" }
[[criteria]]
on = "any"
element = { text = "x" }
[[criteria]]
text = "x"
[[criteria]]
near = { text = "x", to = "y" }
[[criteria]]
time = { element = { text = "x" }, from = "09:00" }
[[criteria]]
screen = { app = "contacts" }
[[criteria]]
action = {}
[[criteria]]
on = "any"
action = { "resource-id" = "x" }
[[criteria]]
action_element = { action = {}, element = { text = "x" } }
[[criteria]]
state = { app = "notes", sql = "SELECT 1" }
[[criteria]]
changes = { app = "notes", table = "t", added = 1 }
[[criteria]]
answer = { exact = "x" }
[[criteria]]
event = { name = "x" }
[[criteria]]
asked = 1
[[criteria]]
mcp = {}
[[criteria]]
sequence = [{ text = "x" }, { text = "y" }]
[[criteria]]
consecutive = [{ text = "x" }, { text = "y" }]
[[criteria]]
finish = { status = "infeasible" }
"#;
    let c = criteria(all_kinds);
    let empty = Trajectory::default();
    // More steps than screens, a format error, a rejected action.
    let mut ragged = notes_trajectory();
    ragged.screens.truncate(1);
    ragged.steps.push(StepRecord { format_error: Some("no action".into()), ..StepRecord::default() });
    let only_finish =
        trajectory(vec![], vec![act(Action::Finish { status: FinishStatus::Complete, reason: None })]);
    for t in [&empty, &ragged, &only_finish] {
        for semantics in [Semantics::Upstream, Semantics::AnyMatch] {
            let v = evaluate(&c, t, &EvalContext { semantics, ..EvalContext::default() });
            assert_eq!(v.criteria.len(), c.len());
            assert!(v.criteria.iter().all(|c| !c.passed), "{:#?}", v.criteria);
            assert!(v.criteria.iter().all(|c| !c.detail.is_empty()));
            assert_eq!(v.acp, 0.0);
            // Deterministic.
            assert_eq!(v, evaluate(&c, t, &EvalContext { semantics, ..EvalContext::default() }));
        }
    }
}

#[test]
fn finish_checks_the_status_and_the_reason_of_the_last_step() {
    let finished = |status, reason: Option<&str>| {
        trajectory(vec![], vec![act(Action::Finish { status, reason: reason.map(str::to_string) })])
    };
    let infeasible = r#"[[criteria]]
finish = { status = "infeasible" }"#;
    let with_reason = r#"[[criteria]]
finish = { status = "infeasible", reason = { contains = "no such" } }"#;
    assert!(passes(infeasible, &finished(FinishStatus::Infeasible, None)));
    assert!(passes(infeasible, &finished(FinishStatus::Infeasible, Some("whatever"))));
    assert!(!passes(infeasible, &finished(FinishStatus::Complete, None)));
    assert!(passes(with_reason, &finished(FinishStatus::Infeasible, Some("There is no such channel."))));
    assert!(!passes(with_reason, &finished(FinishStatus::Infeasible, Some("done"))));
    assert!(!passes(with_reason, &finished(FinishStatus::Infeasible, None)));
    // An answer, or a finish followed by nothing else but not last, is not a finish.
    let answered = trajectory(vec![], vec![act(Action::Answer { text: "infeasible".into() })]);
    assert!(!passes(infeasible, &answered));
    let v = run(infeasible, &finished(FinishStatus::Complete, None));
    assert!(v.criteria[0].detail.contains("finished `complete`"), "{}", v.criteria[0].detail);
    // A reason regex is checked when the file loads.
    let bad = phonebench_tasks::TaskSpec::parse(
        std::path::Path::new("t.toml"),
        "id = \"t\"\ngoal = \"g\"\ncategory = \"completion\"\napps = [\"x\"]\nreference = [\"finish infeasible\"]\n\
         [[criteria]]\nfinish = { status = \"infeasible\", reason = { regex = \"(\" } }\n",
    );
    assert!(bad.is_err());
}

#[test]
fn extreme_bounds_do_not_overflow() {
    let s = screen(
        &root(&[
            n(r#"text="far left""#, "[-2147483648,-2147483648][-2147483647,-2147483647]"),
            n(r#"text="far right""#, "[2147483646,2147483646][2147483647,2147483647]"),
        ]),
        "x",
    );
    let t = trajectory(vec![s.clone(), s], vec![tap(2147483647, 2147483647)]);
    assert!(!passes(
        r#"[[criteria]]
near = { text = "far left", to = "far right", within = 4294967295 }"#,
        &t
    ));
    assert!(passes(
        r#"[[criteria]]
on = "any"
action = { text = "far right" }"#,
        &t
    ));
}

// ---------------------------------------------------------------- guards

#[test]
fn guards_gate_success_but_are_not_progress() {
    let t = notes_trajectory();
    // The guard holds ("Error" never shown), the goal's check does not: no progress at all.
    let v = run(
        r#"[[criteria]]
text = "Total: 99"

[[criteria]]
guard = true
not = { on = "any", text = "Error" }"#,
        &t,
    );
    assert!(!v.success);
    assert_eq!(v.acp, 0.0, "a guard that holds is not progress");
    assert_eq!(
        v.criteria.iter().map(|c| (c.passed, c.guard)).collect::<Vec<_>>(),
        [(false, false), (true, true)]
    );

    // Everything holds: success, and ACP counts only the non-guards.
    let v = run(
        r#"[[criteria]]
text = "Total: 12"

[[criteria]]
text = "Total: 99"

[[criteria]]
guard = true
not = { on = "any", text = "Error" }"#,
        &t,
    );
    assert_eq!((v.success, v.acp), (false, 0.5));
    let v = run(
        r#"[[criteria]]
text = "Total: 12"

[[criteria]]
guard = true
not = { on = "any", text = "Error" }"#,
        &t,
    );
    assert_eq!((v.success, v.acp), (true, 1.0));

    // A broken guard fails the episode but keeps the progress made.
    let v = run(
        r#"[[criteria]]
text = "Total: 12"

[[criteria]]
guard = true
not = { on = "any", text = "Save" }"#,
        &t,
    );
    assert!(!v.success, "a failed guard is a failed episode");
    assert_eq!(v.acp, 1.0);

    // Guards only (no task may be written so; SPHINX-style callers might): all or nothing.
    let guards = |text: &str| format!("[[criteria]]\nguard = true\ntext = \"{text}\"");
    assert_eq!(run(&guards("Total: 12"), &t).acp, 1.0);
    assert_eq!(run(&guards("Total: 99"), &t).acp, 0.0);
}

#[test]
fn a_guard_is_marked_in_the_verdict_and_its_json() {
    let v = run(
        "[[criteria]]\nguard = true\ntext = \"Total: 12\"\n\n[[criteria]]\ntext = \"Groceries\"",
        &notes_trajectory(),
    );
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["criteria"][0]["guard"], serde_json::Value::Bool(true));
    // Non-guards leave the field out, so results without guards read as before.
    assert!(json["criteria"][1].get("guard").is_none(), "{json}");
    // The criterion itself round-trips with its flag.
    let c = &criteria("[[criteria]]\nguard = true\ntext = \"x\"")[0];
    let back: Criterion = serde_json::from_value(serde_json::to_value(c).unwrap()).unwrap();
    assert!(back.guard);
    assert_eq!(&back, c);
}

#[test]
fn sql_problems_name_the_checks_that_cannot_run() {
    let t = with_databases(SCHEMA, SCHEMA);
    let cs = criteria(
        r#"[[criteria]]
text = "Total: 12"

[[criteria]]
all = [
  { state = { app = "notes", sql = "SELECT count(*) FROM notes", equals = 99 } },
  { name = "typo", state = { app = "notes", sql = "SELECT count(*) FROM nots" } },
  { changes = { app = "notes", table = "missing", added = 1 } },
]

[[criteria]]
state = { app = "notes", sql = "SELECT :nope" }"#,
    );
    let problems = phonebench_eval::sql_problems(&cs, &t, &BTreeMap::new());
    let found: Vec<(usize, usize, &str)> =
        problems.iter().map(|p| (p.criterion, p.leaf, p.label.as_str())).collect();
    // A check that runs and fails (count 2, not 99) is no problem: only those that cannot run.
    assert_eq!(found, [(1, 1, "typo"), (1, 2, "notes.missing changes"), (2, 0, "notes: SELECT :nope")]);
    assert!(problems[0].message.contains("no such table: nots"), "{}", problems[0].message);
    assert!(problems[1].message.contains("no table `missing`"), "{}", problems[1].message);
    assert!(problems[2].message.contains("`:nope` is not a task parameter"), "{}", problems[2].message);
}
