//! Camera, Gallery and the shared store: a photo taken in Camera is a new file in DCIM/Camera
//! (the Files app's database), Gallery shows it first in the Camera album and in its viewer,
//! and an app that asks for an image gets it through Gallery's picker (the chooser offers Files
//! and Gallery).

use std::path::Path;

use phonebench_actions::{Action, Direction, Point, Target};
use phonebench_apps::AppPackage;
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use phonebench_uitree::Node;

const ASKER_ACTIONS: &str = r#"
[attach]
steps = [ { pick = { mime = "image/*", action = "attached" } } ]

[attached]
steps = [ { emit = "attached", data = { id = "file_id", name = "file_name", image = "file_image" } } ]
"#;

fn phone(case: &str) -> (Phone, std::path::PathBuf) {
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    let mut packages: Vec<AppPackage> = ["camera", "files", "gallery"]
        .iter()
        .map(|id| AppPackage::load(&apps.join(id)).expect("the app loads"))
        .collect();
    let (root, dir) = phonebench_testkit::probe_package(
        case,
        &[
            ("schema.sql", ""),
            ("actions.toml", ASKER_ACTIONS),
            (
                "screens/main.xml",
                r#"<LinearLayout><Button id="attach" text="Attach photo" on-click="attach"/></LinearLayout>"#,
            ),
        ],
    );
    packages.push(AppPackage::load(&dir).expect("the asking app loads"));
    let catalog = Catalog::new(packages).expect("catalog");
    (Phone::new(catalog, PhoneConfig::default()).expect("phone"), root)
}

fn find(phone: &mut Phone, key: &str) -> Option<Node> {
    phonebench_testkit::find_node(phone.tree().expect("the screen renders"), key).cloned()
}

fn tap(phone: &mut Phone, key: &str) {
    let node = find(phone, key).unwrap_or_else(|| panic!("no `{key}` on screen"));
    let (x, y) = node.bounds.center();
    phone.apply(&Action::Tap { target: Target::Point(Point { x, y }) }).expect("tap");
}

fn newest_photo(phone: &Phone) -> (i64, String, String) {
    let rows = phone
        .query("files", "SELECT id, name, image FROM files WHERE mime = 'image/jpeg' ORDER BY modified_at DESC, id DESC LIMIT 1")
        .expect("query");
    let r = &rows[0];
    (
        r["id"].as_i64().expect("id"),
        r["name"].as_str().expect("name").into(),
        r["image"].as_str().expect("image").into(),
    )
}

#[test]
fn a_photo_taken_in_camera_is_in_gallery_and_can_be_attached_through_the_picker() {
    let (mut phone, root) = phone("photos");
    phone.apply(&Action::OpenApp { app: "camera".into() }).expect("open Camera");
    let before = newest_photo(&phone);
    tap(&mut phone, "Shutter");
    let (id, name, image) = newest_photo(&phone);
    assert_ne!(id, before.0, "a new photo");
    assert_eq!(name, "IMG_20260302_090001.jpg", "named by the time it was taken");
    assert!(image.starts_with("placeholder:scene-"), "{image}");
    let path = phone.query("files", &format!("SELECT path FROM file_paths WHERE id = {id}")).expect("query");
    assert_eq!(path[0]["path"], "DCIM/Camera/IMG_20260302_090001.jpg");
    // Its thumbnail opens it in Gallery's viewer.
    tap(&mut phone, "Latest photo");
    assert_eq!(phone.current_screen(), Some(("gallery", "viewer")));
    assert_eq!(find(&mut phone, "title").expect("title").text, name);
    // Swiping shows the photo before it.
    phone.apply(&Action::Scroll { direction: Direction::Right, target: None }).expect("scroll");
    assert_ne!(find(&mut phone, "title").expect("title").text, name);

    // Another app asks for an image: Files and Gallery both pick images, so a chooser asks.
    phone.apply(&Action::OpenApp { app: "probe".into() }).expect("open the asking app");
    tap(&mut phone, "attach");
    assert!(find(&mut phone, "Complete action using").is_some());
    assert!(find(&mut phone, "Files").is_some());
    tap(&mut phone, "Gallery");
    assert_eq!(phone.current_screen(), Some(("gallery", "pick")));
    tap(&mut phone, "Camera");
    let first = {
        let tree = phone.tree().expect("renders");
        let (_, n) =
            tree.iter().find(|(_, n)| n.resource_id.ends_with(":id/medium_thumbnail")).expect("a photo");
        n.clone()
    };
    assert_eq!(first.content_desc, name, "the new photo comes first");
    let (x, y) = first.bounds.center();
    phone.apply(&Action::Tap { target: Target::Point(Point { x, y }) }).expect("pick it");
    assert_eq!(phone.current_screen(), Some(("probe", "main")));
    let event = phone.events().last().expect("an event").clone();
    assert_eq!(event.name, "attached");
    assert_eq!(event.data["id"], id.to_string());
    assert_eq!(event.data["image"], image);
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn deleting_in_gallery_moves_the_file_to_the_trash_of_files() {
    let (mut phone, root) = phone("photos-delete");
    phone.apply(&Action::OpenApp { app: "gallery".into() }).expect("open Gallery");
    tap(&mut phone, "Screenshots");
    let thumb = {
        let tree = phone.tree().expect("renders");
        let (_, n) =
            tree.iter().find(|(_, n)| n.resource_id.ends_with(":id/medium_thumbnail")).expect("a photo");
        n.clone()
    };
    let (x, y) = thumb.bounds.center();
    phone.apply(&Action::Tap { target: Target::Point(Point { x, y }) }).expect("open it");
    tap(&mut phone, "Delete");
    tap(&mut phone, "button1");
    let trashed = phone
        .query(
            "files",
            &format!("SELECT trashed_at IS NOT NULL AS t FROM files WHERE name = '{}'", thumb.content_desc),
        )
        .expect("query");
    assert_eq!(trashed[0]["t"], 1);
    let _ = std::fs::remove_dir_all(root);
}
