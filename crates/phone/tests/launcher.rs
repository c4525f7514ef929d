//! The launcher: every app on the home screen (grid and dock), and the app search that typing
//! filters and Enter (or a tap) opens.

use std::path::Path;

use phonebench_actions::{Action, Key, Point, Target};
use phonebench_phone::{Catalog, Foreground, Phone, PhoneConfig};

fn phone() -> Phone {
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    let catalog = Catalog::load_dir(&apps).expect("the real apps load");
    Phone::new(catalog, PhoneConfig::default()).expect("the phone starts")
}

/// Content-descs of the launcher icons on screen, in tree order.
fn icons(phone: &mut Phone) -> Vec<String> {
    let tree = phone.tree().expect("renders");
    tree.iter()
        .filter(|(_, n)| n.resource_id == "com.google.android.apps.nexuslauncher:id/icon")
        .map(|(_, n)| n.content_desc.clone())
        .collect()
}

fn tap_id(phone: &mut Phone, id: &str) {
    let center = {
        let tree = phone.tree().expect("renders");
        let (_, n) =
            tree.iter().find(|(_, n)| n.resource_id.ends_with(id)).unwrap_or_else(|| panic!("no {id}"));
        n.bounds.center()
    };
    phone.apply(&Action::Tap { target: Target::Point(Point { x: center.0, y: center.1 }) }).expect("tap");
}

#[test]
fn home_shows_every_app_once_and_search_filters_and_opens() {
    let mut phone = phone();
    let mut shown = icons(&mut phone);
    shown.sort();
    let mut installed: Vec<String> = phone.catalog().apps().iter().map(|a| a.manifest.name.clone()).collect();
    installed.sort();
    assert_eq!(shown, installed, "grid and dock together show each app once");
    tap_id(&mut phone, ":id/search_container_hotseat");
    assert!(phone.keyboard_shown(), "the search takes typing");
    let first = phone.catalog().apps()[0].manifest.name.clone();
    let query: String = first.chars().skip(1).take(3).collect::<String>().to_uppercase();
    phone
        .apply(&Action::Type { text: query.clone(), target: None, clear: false, enter: false })
        .expect("type");
    let found = icons(&mut phone);
    assert!(found.contains(&first), "`{query}` finds {first}: {found:?}");
    assert!(found.iter().all(|n| n.to_lowercase().contains(&query.to_lowercase())), "{found:?}");
    phone
        .apply(&Action::Type { text: "zzzz".into(), target: None, clear: true, enter: false })
        .expect("type");
    assert!(icons(&mut phone).is_empty());
    phone.apply(&Action::Key { key: Key::Backspace }).expect("backspace");
    phone.apply(&Action::Type { text: query, target: None, clear: true, enter: true }).expect("type + enter");
    assert_eq!(phone.foreground_app(), Some(phone.catalog().apps()[0].manifest.id.as_str()));
    // Home again: the search is closed.
    phone.apply(&Action::Key { key: Key::Home }).expect("home");
    assert_eq!(phone.foreground(), Foreground::Home);
    assert!(!phone.keyboard_shown());
    assert_eq!(icons(&mut phone).len(), phone.catalog().apps().len());
}
