//! Dialogs from data: a date picker (browse months, pick a day, OK), a time picker (type hour
//! and minute, OK; an invalid time keeps it open), an input dialog whose typed text reaches the
//! action verbatim, and a single-choice dialog whose options come from SQL.

use phonebench_actions::{Action, Point, Target};
use phonebench_apps::AppPackage;
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use phonebench_testkit::probe_package;
use phonebench_uitree::Node;

const SCHEMA: &str = "CREATE TABLE folders (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL);";
const SEED: &str = "INSERT INTO folders (name) VALUES ('Work'), ('Personal'), ('Travel'); INSERT INTO notes (title) VALUES ('old');";

const ACTIONS: &str = r#"
[pick_date]
steps = [ { date_picker = { value = "'2026-03-02'", action = "got", title = "Event date" } } ]

[pick_time]
steps = [ { time_picker = { value = "'09:30'", action = "got" } } ]

[pick_time_12]
steps = [ { time_picker = { value = "'21:05'", action = "got", is24 = false } } ]

[rename]
steps = [ { dialog = { title = "Rename", input = { hint = "Title", value = "title" }, buttons = [
  { label = "Cancel" }, { label = "OK", action = "renamed" } ] } } ]

[renamed]
steps = [
  { sql = "UPDATE notes SET title = :input WHERE id = 1" },
  { emit = "renamed", data = { input = "input", from = "title" } },
]

[choose_folder]
steps = [ { dialog = { title = "Move to", choices_sql = "SELECT name AS label, id AS value FROM folders ORDER BY name", selected = "'2'", action = "got" } } ]

[got]
steps = [ { emit = "got", data = { value = "value" } } ]
"#;

const MAIN: &str = r#"<LinearLayout>
  <Button id="date" text="Date" on-click="pick_date"/>
  <Button id="time" text="Time" on-click="pick_time"/>
  <Button id="time12" text="Time 12" on-click="pick_time_12"/>
  <Button id="rename" text="Rename" on-click="rename" arg-title="old"/>
  <Button id="folder" text="Folder" on-click="choose_folder"/>
</LinearLayout>"#;

fn phone(case: &str) -> (Phone, std::path::PathBuf) {
    let (root, dir) = probe_package(
        case,
        &[("schema.sql", SCHEMA), ("seed.sql", SEED), ("actions.toml", ACTIONS), ("screens/main.xml", MAIN)],
    );
    let package = AppPackage::load(&dir).unwrap_or_else(|e| panic!("loads: {e}"));
    let mut phone =
        Phone::new(Catalog::new(vec![package]).expect("catalog"), PhoneConfig::default()).expect("phone");
    phone.apply(&Action::OpenApp { app: "probe".into() }).expect("open");
    (phone, root)
}

fn find(phone: &mut Phone, key: &str) -> Option<Node> {
    phonebench_testkit::find_node(phone.tree().expect("the screen renders"), key).cloned()
}

fn tap(phone: &mut Phone, key: &str) -> phonebench_phone::Outcome {
    let (x, y) = find(phone, key).unwrap_or_else(|| panic!("no `{key}` on screen")).bounds.center();
    phone.apply(&Action::Tap { target: Target::Point(Point { x, y }) }).expect("tap")
}

fn type_text(phone: &mut Phone, text: &str) {
    phone.apply(&Action::Type { text: text.into(), target: None, clear: false, enter: false }).expect("type");
}

fn last_value(phone: &Phone) -> serde_json::Value {
    phone.events().last().map(|e| e.data["value"].clone()).unwrap_or_default()
}

#[test]
fn the_date_picker_browses_months_and_returns_the_day() {
    let (mut phone, root) = phone("picker-date");
    tap(&mut phone, "date");
    assert!(find(&mut phone, "March 2026").is_some());
    assert!(find(&mut phone, "02 March 2026").expect("today's cell").selected);
    tap(&mut phone, "Next month");
    assert!(find(&mut phone, "April 2026").is_some());
    tap(&mut phone, "15 April 2026");
    assert_eq!(find(&mut phone, "date_picker_header_date").expect("header").text, "Wed, Apr 15");
    tap(&mut phone, "OK");
    assert_eq!(last_value(&phone), "2026-04-15");
    // Cancel runs nothing.
    tap(&mut phone, "date");
    tap(&mut phone, "Previous month");
    tap(&mut phone, "Cancel");
    assert_eq!(phone.events().len(), 1);
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn the_time_picker_takes_typed_hours_and_minutes_and_refuses_invalid_ones() {
    let (mut phone, root) = phone("picker-time");
    tap(&mut phone, "time");
    assert!(phone.keyboard_shown(), "the hour field takes typing");
    type_text(&mut phone, "7");
    tap(&mut phone, "input_minute");
    type_text(&mut phone, "45");
    tap(&mut phone, "OK");
    assert_eq!(last_value(&phone), "07:45");
    tap(&mut phone, "time");
    type_text(&mut phone, "25");
    let outcome = tap(&mut phone, "OK");
    assert!(outcome.notes.iter().any(|n| n.contains("did not take")), "{:?}", outcome.notes);
    assert!(find(&mut phone, "Enter a valid time").is_some(), "still open, with the error");
    assert_eq!(phone.events().len(), 1);
    // 12-hour: 21:05 shows as 09 PM; AM turns it into the morning.
    phone.apply(&Action::Key { key: phonebench_actions::Key::Back }).expect("back");
    phone.apply(&Action::Key { key: phonebench_actions::Key::Back }).expect("back");
    tap(&mut phone, "time12");
    assert_eq!(find(&mut phone, "input_hour").expect("hour").text, "09");
    tap(&mut phone, "OK");
    assert_eq!(last_value(&phone), "21:05");
    tap(&mut phone, "time12");
    tap(&mut phone, "AM");
    tap(&mut phone, "OK");
    assert_eq!(last_value(&phone), "09:05");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn an_input_dialog_hands_its_text_to_the_action_verbatim() {
    let (mut phone, root) = phone("picker-input");
    tap(&mut phone, "rename");
    assert_eq!(find(&mut phone, "input").expect("the field").text, "old");
    assert!(phone.keyboard_shown());
    type_text(&mut phone, " {{ 7*7 }}'); DROP TABLE notes; --");
    tap(&mut phone, "OK");
    let title = phone.query("probe", "SELECT title FROM notes WHERE id = 1").expect("query");
    assert_eq!(title[0]["title"], "old {{ 7*7 }}'); DROP TABLE notes; --");
    let event = phone.events().last().expect("event").clone();
    assert_eq!(event.data["from"], "old", "the opening action's arguments reach the button's action");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn choices_come_from_sql() {
    let (mut phone, root) = phone("picker-choices");
    tap(&mut phone, "folder");
    let tree = phone.tree().expect("renders");
    let labels: Vec<(String, bool)> = tree
        .iter()
        .filter(|(_, n)| n.class == "android.widget.CheckedTextView")
        .map(|(_, n)| (n.text.clone(), n.checked))
        .collect();
    assert_eq!(labels, [("Personal".into(), true), ("Travel".into(), false), ("Work".into(), false)]);
    tap(&mut phone, "Travel");
    assert_eq!(last_value(&phone), "3");
    let _ = std::fs::remove_dir_all(root);
}
