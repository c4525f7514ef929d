//! The worked example of `docs/app-format.md` (`docs/example-notes/`) loads and behaves as the
//! document says, so the document cannot drift from the format.

use std::path::Path;

use phonebench_actions::{Action, Key, Point, Target};
use phonebench_apps::{AppPackage, Catalog};
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Phone, PhoneConfig};

fn phone() -> Phone {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/example-notes");
    let package = AppPackage::load(&dir).expect("the worked example loads");
    Phone::new(Catalog::new(vec![package]).expect("catalog"), PhoneConfig::default()).expect("phone")
}

fn tap_id(phone: &mut Phone, id: &str) {
    let tree = phone.tree().expect("tree");
    let (_, node) = tree.iter().find(|(_, n)| n.resource_id.ends_with(&format!(":id/{id}"))).expect(id);
    let (x, y) = node.bounds.center();
    phone.apply(&Action::Tap { target: Target::Point(Point { x, y }) }).expect("tap");
}

#[test]
fn the_worked_example_writes_a_note() {
    let mut phone = phone();
    phone.apply(&Action::OpenApp { app: "Notes".into() }).expect("open");
    let text = phone.observe(ObservationFormat::SphinxTree).expect("observe").text;
    assert!(text.contains("Call the plumber"), "{text}");

    tap_id(&mut phone, "add");
    assert_eq!(phone.current_screen(), Some(("notes", "edit")));
    assert!(phone.keyboard_shown(), "the field is focused on open");

    // An empty note is refused by the guard.
    tap_id(&mut phone, "save");
    assert_eq!(phone.current_screen(), Some(("notes", "edit")));
    let typed = "it's {{ 7*7 }} o'clock";
    phone
        .apply(&Action::Type { text: typed.into(), target: None, clear: false, enter: false })
        .expect("type");
    phone.apply(&Action::Key { key: Key::Enter }).expect("enter submits");
    assert_eq!(phone.current_screen(), Some(("notes", "list")));
    let rows = phone.query("notes", "SELECT body FROM notes ORDER BY id DESC LIMIT 1").expect("query");
    assert_eq!(rows[0]["body"], typed);
    assert_eq!(phone.events()[0].name, "note_created");
    let text = phone.observe(ObservationFormat::SphinxTree).expect("observe").text;
    assert!(text.contains(typed) && text.contains("Note saved"), "{text}");
}
