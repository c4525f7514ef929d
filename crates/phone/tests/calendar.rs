//! The Calendar app: an event created through the month grid, the date picker, the time picker,
//! a choice dialog and text fields lands in the database as typed; its reminder fires while the
//! agent waits and the notification opens the event; editing moves it, deleting removes it and
//! its reminder.

use std::path::Path;

use phonebench_actions::{Action, Key, Point, Target};
use phonebench_apps::AppPackage;
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use phonebench_uitree::Node;

fn phone() -> Phone {
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    let packages: Vec<AppPackage> = ["calendar", "contacts", "messages"]
        .iter()
        .map(|id| AppPackage::load(&apps.join(id)).expect("the app loads"))
        .collect();
    Phone::new(Catalog::new(packages).expect("catalog"), PhoneConfig::default()).expect("phone")
}

fn find(phone: &mut Phone, key: &str) -> Option<Node> {
    phonebench_testkit::find_node(phone.tree().expect("the screen renders"), key).cloned()
}

fn tap(phone: &mut Phone, key: &str) {
    let node = find(phone, key).unwrap_or_else(|| panic!("no `{key}` on screen"));
    let (x, y) = node.bounds.center();
    phone.apply(&Action::Tap { target: Target::Point(Point { x, y }) }).expect("tap");
}

fn type_into(phone: &mut Phone, key: &str, text: &str) {
    let node = find(phone, key).unwrap_or_else(|| panic!("no field `{key}`"));
    let (x, y) = node.bounds.center();
    let target = Some(Target::Point(Point { x, y }));
    phone.apply(&Action::Type { text: text.into(), target, clear: true, enter: false }).expect("type");
}

fn type_text(phone: &mut Phone, text: &str) {
    phone.apply(&Action::Type { text: text.into(), target: None, clear: false, enter: false }).expect("type");
}

fn event(phone: &Phone, title: &str) -> Vec<serde_json::Value> {
    phone
        .query(
            "calendar",
            &format!(
                "SELECT id, strftime('%Y-%m-%d %H:%M', start_at / 1000, 'unixepoch') AS start, strftime('%Y-%m-%d %H:%M', end_at / 1000, 'unixepoch') AS end, all_day, location, calendar_id, reminder_min, guests FROM events WHERE title = '{title}'"
            ),
        )
        .expect("query")
}

#[test]
fn an_event_made_with_the_pickers_is_saved_and_its_reminder_opens_it() {
    let mut phone = phone();
    phone.apply(&Action::OpenApp { app: "calendar".into() }).expect("open Calendar");
    assert_eq!(find(&mut phone, "month_title").expect("title").text, "March 2026");
    tap(&mut phone, "Next month");
    assert_eq!(find(&mut phone, "month_title").expect("title").text, "April 2026");
    tap(&mut phone, "Previous month");
    // Thursday 5 March, from the grid.
    tap(&mut phone, "5 March 2026");
    assert_eq!(phone.current_screen(), Some(("calendar", "day")));
    assert!(find(&mut phone, "Nothing planned").is_some());
    tap(&mut phone, "Create event");
    assert_eq!(find(&mut phone, "start_date").expect("start").text, "Thu, Mar 5, 2026");
    type_into(&mut phone, "title", "Project kickoff");
    phone.apply(&Action::Key { key: Key::Back }).expect("hide the keyboard");
    tap(&mut phone, "Start time");
    type_text(&mut phone, "14");
    tap(&mut phone, "input_minute");
    type_text(&mut phone, "00");
    tap(&mut phone, "OK");
    assert_eq!(find(&mut phone, "end_time").expect("end").text, "15:00", "the end follows the start");
    type_into(&mut phone, "location", "Room 2A");
    phone.apply(&Action::Key { key: Key::Back }).expect("hide the keyboard");
    tap(&mut phone, "Calendar");
    tap(&mut phone, "Work");
    tap(&mut phone, "Notification");
    tap(&mut phone, "10 minutes before");
    tap(&mut phone, "Save");
    assert_eq!(phone.current_screen(), Some(("calendar", "event")));
    let saved = event(&phone, "Project kickoff");
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0]["start"], "2026-03-05 14:00");
    assert_eq!(saved[0]["end"], "2026-03-05 15:00");
    assert_eq!(saved[0]["location"], "Room 2A");
    assert_eq!(saved[0]["calendar_id"], 2);
    assert_eq!(saved[0]["reminder_min"], 10);

    // Its reminder is due at 13:50 on the 5th: wait until then (three days and a bit).
    for _ in 0..3 {
        phone.apply(&Action::Wait { ms: Some(86_400_000) }).expect("wait a day");
    }
    phone.apply(&Action::Key { key: Key::Home }).expect("home");
    phone.apply(&Action::Wait { ms: Some(5 * 3_600_000) }).expect("wait");
    phone.apply(&Action::Key { key: Key::Other("NOTIFICATION".into()) }).expect("shade");
    tap(&mut phone, "Project kickoff");
    assert_eq!(phone.current_screen(), Some(("calendar", "event")));
    assert_eq!(find(&mut phone, "location").expect("location").text, "Room 2A");

    // Edit: move it to the 6th; then delete it.
    tap(&mut phone, "Edit event");
    assert_eq!(find(&mut phone, "title").expect("title").text, "Project kickoff", "init fills the form");
    tap(&mut phone, "Start date");
    tap(&mut phone, "06 March 2026");
    tap(&mut phone, "OK");
    tap(&mut phone, "Save");
    let moved = event(&phone, "Project kickoff");
    assert_eq!(moved[0]["start"], "2026-03-06 14:00");
    assert_eq!(moved[0]["end"], "2026-03-06 15:00", "the end day follows the start day");
    tap(&mut phone, "Delete");
    tap(&mut phone, "Delete");
    assert!(event(&phone, "Project kickoff").is_empty());
}

#[test]
fn an_end_before_the_start_is_refused() {
    let mut phone = phone();
    phone.apply(&Action::OpenApp { app: "calendar".into() }).expect("open Calendar");
    tap(&mut phone, "Create event");
    type_into(&mut phone, "title", "Backwards");
    phone.apply(&Action::Key { key: Key::Back }).expect("hide the keyboard");
    tap(&mut phone, "End time");
    type_text(&mut phone, "08");
    tap(&mut phone, "input_minute");
    type_text(&mut phone, "00");
    tap(&mut phone, "OK");
    tap(&mut phone, "Save");
    assert!(find(&mut phone, "The event's end is before its start").is_some());
    assert!(event(&phone, "Backwards").is_empty());
    assert_eq!(phone.current_screen(), Some(("calendar", "edit")));
}
