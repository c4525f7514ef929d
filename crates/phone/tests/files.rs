//! The Files app, the phone's shared storage: browse, rename, move, delete to Trash and
//! restore, and pick a file for another app (which gets it back through `return`).

use std::path::Path;

use phonebench_actions::{Action, Key, Point, Target};
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use phonebench_uitree::Node;

fn phone() -> Phone {
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    let catalog = Catalog::load_dir(&apps).expect("the real apps load");
    let mut phone = Phone::new(catalog, PhoneConfig::default()).expect("the phone starts");
    phone.apply(&Action::OpenApp { app: "files".into() }).expect("open Files");
    phone
}

fn find(phone: &mut Phone, key: &str) -> Option<Node> {
    phonebench_testkit::find_node(phone.tree().expect("the screen renders"), key).cloned()
}

fn point(phone: &mut Phone, key: &str) -> Target {
    let node = find(phone, key).unwrap_or_else(|| panic!("no `{key}` on screen"));
    let (x, y) = node.bounds.center();
    Target::Point(Point { x, y })
}

/// Taps the listing row whose name is `name` (not a chip or title with the same text).
fn open_row(phone: &mut Phone, name: &str) {
    let center = {
        let tree = phone.tree().expect("renders");
        let (_, node) = tree
            .iter()
            .find(|(_, n)| n.resource_id.ends_with(":id/item_name") && n.text == name)
            .unwrap_or_else(|| panic!("no row `{name}`"));
        node.bounds.center()
    };
    phone.apply(&Action::Tap { target: Target::Point(Point { x: center.0, y: center.1 }) }).expect("tap");
}

fn tap(phone: &mut Phone, key: &str) -> phonebench_phone::Outcome {
    let target = point(phone, key);
    phone.apply(&Action::Tap { target }).expect("tap")
}

fn long_press(phone: &mut Phone, key: &str) {
    let target = point(phone, key);
    phone.apply(&Action::LongPress { target }).expect("long press");
}

fn type_into(phone: &mut Phone, key: &str, text: &str) {
    let target = point(phone, key);
    phone
        .apply(&Action::Type { text: text.into(), target: Some(target), clear: true, enter: false })
        .expect("type");
}

fn value(phone: &Phone, sql: &str) -> serde_json::Value {
    let rows = phone.query("files", sql).expect("query");
    rows.first().and_then(|r| r.as_object()).and_then(|o| o.values().next().cloned()).unwrap_or_default()
}

#[test]
fn rename_move_delete_and_restore_a_file() {
    let mut phone = phone();
    open_row(&mut phone, "Documents");
    open_row(&mut phone, "Personal");
    long_press(&mut phone, "Shopping list.txt");
    tap(&mut phone, "Rename");
    assert_eq!(find(&mut phone, "input").expect("the rename dialog's field").text, "Shopping list.txt");
    type_into(&mut phone, "input", "Groceries.txt");
    tap(&mut phone, "button1");
    assert!(find(&mut phone, "Groceries.txt").is_some(), "the listing shows the new name");
    // A name taken in the same folder is refused.
    long_press(&mut phone, "Groceries.txt");
    tap(&mut phone, "Rename");
    type_into(&mut phone, "input", "Gift ideas.txt");
    tap(&mut phone, "button1");
    assert_eq!(value(&phone, "SELECT count(*) FROM files WHERE name = 'Groceries.txt'"), 1, "not renamed");
    let _ = Key::Back;
    // Move it to Work.
    long_press(&mut phone, "Groceries.txt");
    tap(&mut phone, "Move to…");
    tap(&mut phone, "Documents");
    tap(&mut phone, "Work");
    assert!(find(&mut phone, "To: Internal storage › Work").is_some());
    tap(&mut phone, "Move here");
    assert_eq!(
        value(
            &phone,
            "SELECT p.path FROM files f JOIN file_paths p ON p.id = f.id WHERE f.name = 'Groceries.txt'"
        ),
        "Documents/Work/Groceries.txt"
    );
    assert!(find(&mut phone, "Groceries.txt").is_none(), "gone from Personal");
    // Delete a folder: it and everything in it go to Trash; restore brings the folder back.
    phone.apply(&Action::Key { key: Key::Back }).expect("back to Documents");
    long_press(&mut phone, "Receipts");
    tap(&mut phone, "Delete");
    tap(&mut phone, "button1");
    assert_eq!(
        value(&phone, "SELECT count(*) FROM files WHERE trashed_at IS NOT NULL"),
        5,
        "the folder and its 4 files"
    );
    assert!(find(&mut phone, "Receipts").is_none());
    let events: Vec<String> = phone.events().iter().map(|e| e.name.clone()).collect();
    assert_eq!(events, ["file_renamed", "file_moved", "file_deleted"]);
}

const ASKER_ACTIONS: &str = r#"
[attach]
steps = [ { pick = { mime = "application/pdf", action = "attached" } } ]

[attached]
steps = [ { emit = "attached", data = { id = "file_id", name = "file_name", mime = "file_mime", size = "file_size" } } ]
"#;

#[test]
fn another_app_picks_a_file_through_files() {
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    let files = phonebench_apps::AppPackage::load(&apps.join("files")).expect("Files loads");
    let (root, dir) = phonebench_testkit::probe_package(
        "files-pick",
        &[
            ("schema.sql", ""),
            ("actions.toml", ASKER_ACTIONS),
            (
                "screens/main.xml",
                r#"<LinearLayout><Button id="attach" text="Attach" on-click="attach"/></LinearLayout>"#,
            ),
        ],
    );
    let asker = phonebench_apps::AppPackage::load(&dir).expect("the asking app loads");
    let catalog = Catalog::new(vec![files, asker]).expect("catalog");
    let mut phone = Phone::new(catalog, PhoneConfig::default()).expect("phone");
    phone.apply(&Action::OpenApp { app: "probe".into() }).expect("open");
    tap(&mut phone, "attach");
    assert_eq!(phone.current_screen(), Some(("files", "pick")));
    assert!(find(&mut phone, "Choose a file").is_some());
    open_row(&mut phone, "Download");
    // Only PDFs (and folders) are offered.
    assert!(find(&mut phone, "recipe_paella_valenciana.txt").is_none());
    open_row(&mut phone, "Invoice_2026-02_Contoso.pdf");
    assert_eq!(phone.current_screen(), Some(("probe", "main")), "back in the asking app");
    let event = phone.events().last().expect("an event").clone();
    assert_eq!(event.name, "attached");
    assert_eq!(event.data["name"], "Invoice_2026-02_Contoso.pdf");
    assert_eq!(event.data["mime"], "application/pdf");
    assert_eq!(event.data["size"], "96511");
    let _ = std::fs::remove_dir_all(root);
}
