//! Markor (the Notes app): an edit in the middle of a note — a tap between two words of a line
//! of the multi-line editor, typing there, Save — and ticking a check box in the viewer.

use std::path::Path;

use phonebench_actions::{Action, Point, Target};
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use phonebench_text::TextStyle;
use phonebench_uitree::Node;

fn phone() -> Phone {
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    let catalog = Catalog::load_dir(&apps).expect("the real apps load");
    let mut phone = Phone::new(catalog, PhoneConfig::default()).expect("the phone starts");
    phone.apply(&Action::OpenApp { app: "notes".into() }).expect("open Markor");
    phone
}

fn find(phone: &mut Phone, key: &str) -> Option<Node> {
    phonebench_testkit::find_node(phone.tree().expect("the screen renders"), key).cloned()
}

fn tap_at(phone: &mut Phone, x: i32, y: i32) {
    phone.apply(&Action::Tap { target: Target::Point(Point { x, y }) }).expect("tap");
}

fn tap(phone: &mut Phone, key: &str) {
    let (x, y) = find(phone, key).unwrap_or_else(|| panic!("no `{key}`")).bounds.center();
    tap_at(phone, x, y);
}

fn body(phone: &Phone, name: &str) -> String {
    let rows = phone.query("notes", &format!("SELECT body FROM notes WHERE name = '{name}'")).expect("query");
    rows[0]["body"].as_str().expect("text").to_string()
}

#[test]
fn an_edit_in_the_middle_of_a_note() {
    let mut phone = phone();
    tap(&mut phone, "Personal");
    tap(&mut phone, "Gift ideas.md");
    tap(&mut phone, "Edit");
    let field = find(&mut phone, "body").expect("the editor");
    assert!(field.text.starts_with("# Gift ideas"), "init loaded the note: {:?}", field.text);
    // Line 3 (from 0) is "- Leo: LEGO set (42151)"; tap right after "LEGO set".
    let density = phone.display().density();
    let style =
        TextStyle { size_px: 16.0 * density, bold: false, line_height: phonebench_pixels::LINE_HEIGHT };
    let line_h = style.size_px * style.line_height;
    let left = field.bounds.left as f32 + 16.0 * density;
    let top = field.bounds.top as f32 + 8.0 * density;
    let x = left + phonebench_text::measure("- Leo: LEGO set", &style, None, None).width;
    let y = top + 3.5 * line_h;
    tap_at(&mut phone, x.round() as i32, y.round() as i32);
    phone
        .apply(&Action::Type { text: " Technic".into(), target: None, clear: false, enter: false })
        .expect("type");
    tap(&mut phone, "Save");
    assert_eq!(
        body(&phone, "Gift ideas.md"),
        "# Gift ideas\n\n- Mum: gardening gloves\n- Leo: LEGO set Technic (42151)\n- Sofia: Ottolenghi cookbook\n"
    );
    assert_eq!(phone.current_screen(), Some(("notes", "view")));
    assert!(find(&mut phone, "•  Leo: LEGO set Technic (42151)").is_some(), "the viewer shows the edit");
}

#[test]
fn ticking_a_check_box_rewrites_that_line() {
    let mut phone = phone();
    tap(&mut phone, "todo.md");
    tap(&mut phone, "Back up the laptop");
    assert!(body(&phone, "todo.md").contains("- [x] Back up the laptop\n"));
    assert!(find(&mut phone, "Back up the laptop").expect("the line").checked);
}

#[test]
fn ticking_a_line_leaves_lines_that_start_the_same_alone() {
    let mut phone = phone();
    let text = "# Packing\n- [ ] Charger cable\n- [ ] Charger\n- [ ] Charger\nlast line\n";
    let params = std::collections::BTreeMap::from([("b".to_string(), serde_json::json!(text))]);
    phone.execute("notes", "UPDATE notes SET body = :b WHERE name = 'todo.md'", &params).expect("setup");
    tap(&mut phone, "todo.md");
    // The second "Charger" box (the third check line): only it is ticked.
    let boxes: Vec<Node> = {
        let tree = phone.tree().expect("renders");
        tree.iter().filter(|(_, n)| n.resource_id.ends_with(":id/md_check")).map(|(_, n)| n.clone()).collect()
    };
    assert_eq!(boxes.len(), 3);
    let (x, y) = boxes[2].bounds.center();
    tap_at(&mut phone, x, y);
    assert_eq!(
        body(&phone, "todo.md"),
        "# Packing\n- [ ] Charger cable\n- [ ] Charger\n- [x] Charger\nlast line\n"
    );
}
