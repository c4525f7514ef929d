//! What a package brings besides screens: pictures in `assets/` (PNG, JPEG, SVG) as images and
//! as icons, palette backgrounds (`bg`), partials shared by every app (`apps/_shared/`), menus
//! whose items come from the database, and layout errors told at the partial's own line.

use std::path::{Path, PathBuf};

use phonebench_actions::{Action, Point, Target};
use phonebench_apps::AppPackage;
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use tiny_skia::Pixmap;

/// A solid PNG of `w`×`h` in `rgb`.
fn png(w: u32, h: u32, rgb: [u8; 3]) -> Vec<u8> {
    let mut pixmap = Pixmap::new(w, h).expect("pixmap");
    pixmap.fill(tiny_skia::Color::from_rgba8(rgb[0], rgb[1], rgb[2], 255));
    phonebench_pixels::encode_png(&pixmap).expect("encode")
}

fn package(case: &str, files: &[(&str, &str)], binary: &[(&str, Vec<u8>)]) -> (PathBuf, PathBuf) {
    let (root, dir) = phonebench_testkit::probe_package(case, files);
    for (name, bytes) in binary {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, bytes).expect("write");
    }
    (root, dir)
}

fn phone_of(dir: &Path) -> Phone {
    let package = AppPackage::load(dir).expect("the package loads");
    let mut phone =
        Phone::new(Catalog::new(vec![package]).expect("catalog"), PhoneConfig::default()).expect("phone");
    phone.apply(&Action::OpenApp { app: "probe".into() }).expect("open");
    phone
}

fn bounds_of(phone: &mut Phone, id: &str) -> phonebench_uitree::Bounds {
    let tree = phone.tree().expect("renders");
    let suffix = format!(":id/{id}");
    tree.iter()
        .find(|(_, n)| n.resource_id.ends_with(&suffix))
        .map(|(_, n)| n.bounds)
        .unwrap_or_else(|| panic!("no {id}"))
}

fn pixel(shot: &Pixmap, x: i32, y: i32) -> [u8; 4] {
    let p = shot.pixel(x as u32, y as u32).expect("on screen").demultiply();
    [p.red(), p.green(), p.blue(), p.alpha()]
}

fn screen_text(phone: &mut Phone) -> String {
    let tree = phone.tree().expect("renders");
    tree.iter().map(|(_, n)| n.text.clone()).collect::<Vec<_>>().join("\n")
}

const GLYPH: &str = r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10" width="10" height="10"><rect width="10" height="10"/></svg>"#;

#[test]
fn asset_pictures_draw_as_images_and_icons() {
    let (root, dir) = package(
        "media-assets",
        &[
            ("schema.sql", ""),
            ("assets/glyph.svg", GLYPH),
            (
                "screens/main.xml",
                r#"<LinearLayout><ImageView id="photo" src="asset:red.png" width="100" height="60"/><ImageButton id="tool" icon="asset:glyph.svg" desc="Tool"/></LinearLayout>"#,
            ),
        ],
        &[("assets/red.png", png(8, 4, [220, 30, 30]))],
    );
    let mut phone = phone_of(&dir);
    let photo = bounds_of(&mut phone, "photo");
    let tool = bounds_of(&mut phone, "tool");
    let shot = phone.screenshot().expect("screenshot");
    let (x, y) = photo.center();
    assert_eq!(pixel(&shot, x, y), [220, 30, 30, 255], "the PNG fills its view");
    let (x, y) = tool.center();
    let ink = pixel(&shot, x, y);
    assert!(ink[0] < 120 && ink[1] < 120 && ink[2] < 120, "the SVG drawn as a dark icon: {ink:?}");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn bad_assets_and_missing_names_are_errors_naming_the_file() {
    let (root, dir) = package(
        "media-bad",
        &[("schema.sql", ""), ("screens/main.xml", "<LinearLayout/>"), ("assets/notes.txt", "hello")],
        &[],
    );
    let err = AppPackage::load(&dir).expect_err("a text file is not an asset").to_string();
    assert!(err.contains("notes.txt") && err.contains("not a picture"), "{err}");
    let _ = std::fs::remove_dir_all(root);

    let (root, dir) = package(
        "media-broken",
        &[("schema.sql", ""), ("screens/main.xml", "<LinearLayout/>")],
        &[("assets/photo.jpg", b"\xFF\xD8 not really".to_vec())],
    );
    let err = AppPackage::load(&dir).expect_err("a broken JPEG").to_string();
    assert!(err.contains("photo.jpg") && err.contains("not a JPEG"), "{err}");
    let _ = std::fs::remove_dir_all(root);

    let (root, dir) = package(
        "media-missing",
        &[
            ("schema.sql", ""),
            ("assets/glyph.svg", GLYPH),
            ("screens/main.xml", r#"<LinearLayout><ImageView src="asset:nope.png"/></LinearLayout>"#),
        ],
        &[],
    );
    let mut phone = phone_of(&dir);
    let shown = screen_text(&mut phone);
    assert!(shown.contains("keeps stopping") && shown.contains("no `assets/nope.png`"), "{shown}");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn a_palette_background_fills_its_box_and_unknown_colours_are_refused() {
    let (root, dir) = package(
        "media-bg",
        &[
            ("schema.sql", ""),
            (
                "screens/main.xml",
                r#"<LinearLayout><LinearLayout id="box" bg="green" width="200" height="80" padding="8"><TextView text="On green"/></LinearLayout></LinearLayout>"#,
            ),
        ],
        &[],
    );
    let mut phone = phone_of(&dir);
    let b = bounds_of(&mut phone, "box");
    let shot = phone.screenshot().expect("screenshot");
    let (fill, _) = phonebench_pixels::Theme::LIGHT.swatch(phonebench_pixels::Swatch::Green);
    assert_eq!(pixel(&shot, b.right - 20, b.bottom - 20), fill, "the swatch under the box");
    let _ = std::fs::remove_dir_all(root);

    let (root, dir) = package(
        "media-bg-bad",
        &[("schema.sql", ""), ("screens/main.xml", r#"<LinearLayout bg="magenta"/>"#)],
        &[],
    );
    let mut phone = phone_of(&dir);
    let shown = screen_text(&mut phone);
    assert!(shown.contains("`magenta` is not a background colour"), "{shown}");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn shared_partials_are_imported_and_their_errors_name_their_own_line() {
    let (root, dir) = package(
        "media-shared",
        &[
            ("schema.sql", ""),
            (
                "../_shared/chips.xml",
                "{# shared #}\n{% macro chip(label) %}<TextView id=\"chip\" text=\"{{ label }}\"/>{% endmacro %}\n{% macro broken() %}<TextView id=\"oops\" icon=\"no_such_icon_name\"/>{% endmacro %}\n",
            ),
            (
                "screens/main.xml",
                "{% import \"_shared/chips.xml\" as chips %}\n<LinearLayout>{{ chips.chip('Shared') }}</LinearLayout>\n",
            ),
            (
                "screens/bad.xml",
                "{% import \"_shared/chips.xml\" as chips %}\n<LinearLayout>\n{{ chips.broken() }}\n</LinearLayout>\n",
            ),
            ("actions.toml", "[open_bad]\nsteps = [{ navigate = \"bad\" }]\n"),
        ],
        &[],
    );
    let mut phone = phone_of(&dir);
    assert!(screen_text(&mut phone).contains("Shared"), "the shared macro rendered");
    let args = std::collections::BTreeMap::new();
    phone.start_app("probe", Some("bad"), &args).expect("open the bad screen");
    let shown = screen_text(&mut phone);
    assert!(shown.contains("_shared/chips.xml:3"), "the error names the partial's line: {shown}");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn menu_items_come_from_the_database_and_hand_their_value_to_the_action() {
    let (root, dir) = package(
        "media-menu",
        &[
            ("schema.sql", "CREATE TABLE folders (id INTEGER PRIMARY KEY, name TEXT);"),
            ("seed.sql", "INSERT INTO folders VALUES (1, 'Inbox'), (2, 'Travel'), (3, 'Receipts');"),
            (
                "actions.toml",
                r#"
[move_menu]
steps = [{ menu = { items = [{ label = "New folder…", action = "noop" }], items_sql = "SELECT name AS label, id AS value FROM folders WHERE id <> 1 ORDER BY name", action = "moved" } }]

[noop]
steps = [{ toast = "Not here" }]

[moved]
steps = [{ emit = "moved", data = { folder = "value", note = "note" } }]
"#,
            ),
            (
                "screens/main.xml",
                r#"<LinearLayout><Button id="move" text="Move" on-click="move_menu" arg-note="n7"/></LinearLayout>"#,
            ),
        ],
        &[],
    );
    let mut phone = phone_of(&dir);
    let b = bounds_of(&mut phone, "move");
    let (x, y) = b.center();
    phone.apply(&Action::Tap { target: Target::Point(Point { x, y }) }).expect("tap");
    let labels: Vec<String> = {
        let tree = phone.tree().expect("renders");
        tree.iter()
            .filter(|(_, n)| n.resource_id == "android:id/title")
            .map(|(_, n)| n.text.clone())
            .collect()
    };
    assert_eq!(labels, ["New folder…", "Receipts", "Travel"], "fixed items, then the query's in order");
    let receipts = {
        let tree = phone.tree().expect("renders");
        tree.iter().find(|(_, n)| n.text == "Receipts").map(|(_, n)| n.bounds).expect("the item")
    };
    let (x, y) = receipts.center();
    phone.apply(&Action::Tap { target: Target::Point(Point { x, y }) }).expect("choose");
    let event = phone.events().last().expect("an event").clone();
    assert_eq!(event.name, "moved");
    assert_eq!(event.data["folder"], "3");
    assert_eq!(event.data["note"], "n7", "the opening action's arguments come along");
    let _ = std::fs::remove_dir_all(root);
}
