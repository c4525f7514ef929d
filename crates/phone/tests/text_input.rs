//! Keyboards follow the focused field's input type: a phone number typed key by key on
//! Contacts' dial pad, letters kept out of number fields, Shift and the `?123` layer on the
//! letters keyboard, Enter that starts a new line in a multi-line field.

use std::path::Path;

use phonebench_actions::{Action, Key, Point, Target};
use phonebench_apps::AppPackage;
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use phonebench_uitree::Node;

fn contacts() -> Phone {
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    let catalog = Catalog::load_dir(&apps).expect("the real apps load");
    let mut phone = Phone::new(catalog, PhoneConfig::default()).expect("the phone starts");
    phone.apply(&Action::OpenApp { app: "contacts".into() }).expect("open Contacts");
    phone
}

fn find(phone: &mut Phone, key: &str) -> Option<Node> {
    phonebench_testkit::find_node(phone.tree().expect("the screen renders"), key).cloned()
}

fn tap(phone: &mut Phone, key: &str) -> phonebench_phone::Outcome {
    let node = find(phone, key).unwrap_or_else(|| panic!("no `{key}` on screen"));
    let (x, y) = node.bounds.center();
    phone.apply(&Action::Tap { target: Target::Point(Point { x, y }) }).expect("tap")
}

/// Content-descs of the keyboard's keys.
fn keys(phone: &mut Phone) -> Vec<String> {
    let tree = phone.tree().expect("renders");
    tree.iter()
        .filter(|(_, n)| n.resource_id.ends_with(":id/key_pos"))
        .map(|(_, n)| n.content_desc.clone())
        .collect()
}

fn text_of(phone: &mut Phone, id: &str) -> String {
    find(phone, id).unwrap_or_else(|| panic!("no {id}")).text
}

#[test]
fn a_phone_number_typed_key_by_key_on_the_dial_pad() {
    let mut phone = contacts();
    tap(&mut phone, "Create contact");
    assert!(keys(&mut phone).contains(&"q".to_string()), "the name field has the letters keyboard");
    // Shift capitalises one letter.
    tap(&mut phone, "Shift");
    tap(&mut phone, "A");
    tap(&mut phone, "d");
    tap(&mut phone, "a");
    assert_eq!(text_of(&mut phone, "first_name"), "Ada");
    tap(&mut phone, "phone");
    let pad = keys(&mut phone);
    assert!(pad.contains(&"+".to_string()) && pad.contains(&"#".to_string()), "the dial pad: {pad:?}");
    assert!(!pad.contains(&"q".to_string()));
    for key in ["+", "1", "5", "5", "5", "0", "1", "9", "9", "8", "8"] {
        tap(&mut phone, key);
    }
    tap(&mut phone, "Delete");
    tap(&mut phone, "7");
    assert_eq!(text_of(&mut phone, "phone"), "+1555019987");
    // Letters typed into it are dropped, with a note.
    let outcome = phone
        .apply(&Action::Type { text: "x2".into(), target: None, clear: false, enter: false })
        .expect("type");
    assert!(outcome.notes.iter().any(|n| n.contains("dropped \"x\"")), "{:?}", outcome.notes);
    assert_eq!(text_of(&mut phone, "phone"), "+15550199872");
    tap(&mut phone, "email");
    assert!(keys(&mut phone).contains(&"@".to_string()), "the e-mail keyboard has @");
    tap(&mut phone, "menu_save");
    let saved =
        phone.query("contacts", "SELECT phone FROM contacts WHERE first_name = 'Ada'").expect("query");
    assert_eq!(saved[0]["phone"], "+15550199872");
}

#[test]
fn the_symbols_layer_and_back() {
    let mut phone = contacts();
    tap(&mut phone, "Create contact");
    tap(&mut phone, "?123");
    let layer = keys(&mut phone);
    assert!(layer.contains(&"7".to_string()) && layer.contains(&"ABC".to_string()), "{layer:?}");
    tap(&mut phone, "7");
    tap(&mut phone, "ABC");
    tap(&mut phone, "x");
    assert_eq!(text_of(&mut phone, "first_name"), "7x");
    // Focus moves: the next field starts on the letters.
    tap(&mut phone, "?123");
    tap(&mut phone, "last_name");
    assert!(keys(&mut phone).contains(&"q".to_string()));
}

#[test]
fn enter_starts_a_new_line_in_a_multiline_field_and_submits_elsewhere() {
    let screen = r#"<LinearLayout>
  <EditText id="body" input="multiline" focus="true" on-submit="send"/>
  <EditText id="subject" on-submit="send"/>
</LinearLayout>"#;
    let actions = "[send]\nsteps = [ { emit = \"sent\", data = { body = \"body\" } } ]\n";
    let (root, dir) = phonebench_testkit::probe_package(
        "multiline",
        &[("schema.sql", ""), ("screens/main.xml", screen), ("actions.toml", actions)],
    );
    let package = AppPackage::load(&dir).expect("loads");
    let mut phone =
        Phone::new(Catalog::new(vec![package]).expect("catalog"), PhoneConfig::default()).expect("phone");
    phone.apply(&Action::OpenApp { app: "probe".into() }).expect("open");
    phone
        .apply(&Action::Type { text: "Dear Ana,".into(), target: None, clear: false, enter: true })
        .expect("type");
    phone
        .apply(&Action::Type { text: "see you".into(), target: None, clear: false, enter: false })
        .expect("type");
    phone.apply(&Action::Key { key: Key::Enter }).expect("enter");
    assert_eq!(text_of(&mut phone, "body"), "Dear Ana,\nsee you\n");
    assert!(phone.events().is_empty(), "Enter submitted nothing");
    tap(&mut phone, "subject");
    phone.apply(&Action::Key { key: Key::Enter }).expect("enter");
    assert_eq!(phone.events().len(), 1, "a single-line field submits");
    let _ = std::fs::remove_dir_all(root);
}

const NOTE_SCREEN: &str = r#"<LinearLayout>
  <EditText id="body" input="multiline" value="Buy milk and eggs" width="match" padding="12 16"/>
</LinearLayout>"#;

fn note_phone(case: &str) -> (Phone, std::path::PathBuf) {
    let (root, dir) =
        phonebench_testkit::probe_package(case, &[("schema.sql", ""), ("screens/main.xml", NOTE_SCREEN)]);
    let package = AppPackage::load(&dir).expect("loads");
    let mut phone =
        Phone::new(Catalog::new(vec![package]).expect("catalog"), PhoneConfig::default()).expect("phone");
    phone.apply(&Action::OpenApp { app: "probe".into() }).expect("open");
    (phone, root)
}

fn type_here(phone: &mut Phone, text: &str) {
    phone.apply(&Action::Type { text: text.into(), target: None, clear: false, enter: false }).expect("type");
}

#[test]
fn a_tap_in_the_middle_of_a_text_puts_the_cursor_there() {
    let (mut phone, root) = note_phone("cursor-tap");
    let field = find(&mut phone, "body").expect("the field").bounds;
    let y = field.top + (field.bottom - field.top) / 2;
    // Just inside the left edge: before the first character.
    phone.apply(&Action::Tap { target: Target::Point(Point { x: field.left + 2, y }) }).expect("tap");
    type_here(&mut phone, "> ");
    assert_eq!(text_of(&mut phone, "body"), "> Buy milk and eggs");
    // Far right of the line: after the last character.
    phone.apply(&Action::Tap { target: Target::Point(Point { x: field.right - 2, y }) }).expect("tap");
    type_here(&mut phone, "!");
    assert_eq!(text_of(&mut phone, "body"), "> Buy milk and eggs!");
    // Between "milk" and " and": measured with the field's own font size.
    let look = phonebench_text::TextStyle {
        size_px: 16.0 * 2.625,
        bold: false,
        line_height: phonebench_pixels::LINE_HEIGHT,
    };
    let prefix = phonebench_text::measure("> Buy milk", &look, None, None).width;
    let x = field.left + (16.0 * 2.625) as i32 + prefix.round() as i32;
    phone.apply(&Action::Tap { target: Target::Point(Point { x, y }) }).expect("tap");
    type_here(&mut phone, " (oat)");
    assert_eq!(text_of(&mut phone, "body"), "> Buy milk (oat) and eggs!");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn cursor_keys_backspace_delete_and_a_selection() {
    let (mut phone, root) = note_phone("cursor-keys");
    let key = |phone: &mut Phone, code: &str| {
        phone.apply(&Action::Key { key: Key::Other(code.into()) }).expect("key");
    };
    tap(&mut phone, "body");
    key(&mut phone, "MOVE_HOME");
    for _ in 0..4 {
        key(&mut phone, "DPAD_RIGHT");
    }
    phone.apply(&Action::Key { key: Key::Delete }).expect("delete");
    phone.apply(&Action::Key { key: Key::Delete }).expect("delete");
    phone.apply(&Action::Key { key: Key::Delete }).expect("delete");
    phone.apply(&Action::Key { key: Key::Delete }).expect("delete");
    phone.apply(&Action::Key { key: Key::Delete }).expect("delete");
    type_here(&mut phone, "oat milk ");
    assert_eq!(text_of(&mut phone, "body"), "Buy oat milk and eggs");
    key(&mut phone, "DPAD_LEFT");
    phone.apply(&Action::Key { key: Key::Backspace }).expect("backspace");
    assert_eq!(text_of(&mut phone, "body"), "Buy oat mil and eggs");
    // Select all, then typing replaces everything; cut and paste move text.
    let field = find(&mut phone, "body").expect("field");
    let (x, y) = field.bounds.center();
    phone.apply(&Action::LongPress { target: Target::Point(Point { x, y }) }).expect("long press");
    tap(&mut phone, "Select all");
    type_here(&mut phone, "Bread");
    assert_eq!(text_of(&mut phone, "body"), "Bread");
    phone.apply(&Action::LongPress { target: Target::Point(Point { x, y }) }).expect("long press");
    tap(&mut phone, "Select all");
    phone.apply(&Action::LongPress { target: Target::Point(Point { x, y }) }).expect("long press");
    tap(&mut phone, "Cut");
    assert_eq!(text_of(&mut phone, "body"), "");
    assert_eq!(phone.clipboard(), Some("Bread"));
    type_here(&mut phone, "Fresh ");
    phone.apply(&Action::LongPress { target: Target::Point(Point { x, y }) }).expect("long press");
    tap(&mut phone, "Paste");
    assert_eq!(text_of(&mut phone, "body"), "Fresh Bread");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn the_text_menu_of_a_field_above_the_keyboard_opens_above_the_keys() {
    // Messages' message field sits right above the keyboard; its Cut / Copy / Paste menu opens
    // where the finger is, moved up so that no item lands on a key.
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    let catalog = Catalog::load_dir(&apps).expect("the real apps load");
    let mut phone = Phone::new(catalog, PhoneConfig::default()).expect("the phone starts");
    phone.apply(&Action::OpenApp { app: "messages".into() }).expect("open Messages");
    tap(&mut phone, "conversation_name");
    let field = find(&mut phone, "compose_message_text").expect("the message field").bounds;
    let (x, y) = field.center();
    phone.apply(&Action::Tap { target: Target::Point(Point { x, y }) }).expect("focus");
    type_here(&mut phone, "hello");
    assert!(phone.keyboard_shown());
    let field = find(&mut phone, "compose_message_text").expect("the message field").bounds;
    let (x, y) = field.center();
    phone.apply(&Action::LongPress { target: Target::Point(Point { x, y }) }).expect("long press");
    let keyboard_top = {
        let tree = phone.tree().expect("renders");
        tree.iter()
            .filter(|(_, n)| n.resource_id.ends_with(":id/key_pos"))
            .map(|(_, n)| n.bounds.top)
            .min()
            .expect("keys")
    };
    let copy = find(&mut phone, "Copy").expect("the menu's Copy").bounds;
    let close = find(&mut phone, "Close").expect("the menu's Close").bounds;
    assert!(
        copy.top < keyboard_top && close.bottom <= keyboard_top,
        "menu {copy:?}..{close:?}, keys from {keyboard_top}"
    );
    tap(&mut phone, "Copy");
    assert_eq!(phone.clipboard(), Some("hello"));
}
