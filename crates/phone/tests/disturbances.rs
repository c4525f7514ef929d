//! Disturbances on the real apps: seeded and deterministic, shown only on app screens, modal ones
//! taking every touch and key until dismissed, the standard dismiss step getting rid of each, and
//! none of them touching an app's data.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use phonebench_actions::{Action, Key, Point, Swipe, Target};
use phonebench_phone::disturb::{
    BANNER_CLOSE_ID, HEADS_UP_ID, INTERSTITIAL_CLOSE_ID, PERMISSION_DENY_ID, REVIEW_NOT_NOW_ID,
};
use phonebench_phone::{Catalog, Dismissal, Disturbances, Phone, PhoneConfig, dismissal};
use phonebench_uitree::UiTree;

fn apps_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps")
}

fn phone(level: Disturbances, seed: u64) -> Phone {
    let catalog = Catalog::load_dir(&apps_dir()).unwrap();
    let mut phone =
        Phone::new(catalog, PhoneConfig { seed, disturbances: level, ..PhoneConfig::default() }).unwrap();
    phone.start_app("contacts", None, &BTreeMap::new()).unwrap();
    phone
}

fn wait() -> Action {
    Action::Wait { ms: None }
}

fn has_id(tree: &UiTree, id: &str) -> bool {
    tree.iter().any(|(_, n)| n.resource_id == id || n.resource_id.ends_with(id))
}

/// The action the standard dismiss step takes on this screen.
fn dismiss(tree: &UiTree, d: Dismissal) -> Action {
    let center = |n| {
        let (x, y) = tree.node(n).bounds.center();
        Point::new(x, y)
    };
    match d {
        Dismissal::Tap(n) => Action::Tap { target: Target::Point(center(n)) },
        Dismissal::SwipeUp(n) => {
            let from = center(n);
            Action::Swipe(Swipe::Between { from, to: Point::new(from.x, (from.y - 300).max(0)) })
        }
        Dismissal::Wait => wait(),
    }
}

/// What shows over `turns` waits, by resource-id marker, with the standard dismiss step taken
/// whenever something shows; and the screens seen.
fn play(level: Disturbances, seed: u64, turns: usize) -> (Vec<&'static str>, Vec<String>, Phone) {
    let mut phone = phone(level, seed);
    let mut seen = Vec::new();
    let mut screens = Vec::new();
    for _ in 0..turns {
        let tree = phone.tree().unwrap().clone();
        screens.push(phonebench_uitree::write_xml(&tree));
        for (marker, id) in [
            ("review", REVIEW_NOT_NOW_ID),
            ("permission", PERMISSION_DENY_ID),
            ("promo", ":id/upsell_dismiss_button"),
            ("interstitial", INTERSTITIAL_CLOSE_ID),
            ("banner", BANNER_CLOSE_ID),
            ("heads-up", HEADS_UP_ID),
            ("loading", ":id/content_loading_progress"),
        ] {
            if has_id(&tree, id) && !seen.contains(&marker) {
                seen.push(marker);
            }
        }
        let action = match dismissal(&tree) {
            Some(d) => dismiss(&tree, d),
            None => wait(),
        };
        phone.apply(&action).unwrap();
    }
    (seen, screens, phone)
}

#[test]
fn nothing_shows_without_disturbances() {
    let (seen, _, _) = play(Disturbances::None, 7, 40);
    assert!(seen.is_empty(), "{seen:?}");
}

#[test]
fn heavy_shows_pop_ups_ads_and_notifications_and_the_dismiss_step_clears_each() {
    for seed in [0, 1, 2, 3] {
        let (seen, _, mut phone) = play(Disturbances::Heavy, seed, 40);
        // Two of the three dialogs, the interstitial, the banner, the notifications.
        let dialogs = seen.iter().filter(|s| ["review", "permission", "promo"].contains(s)).count();
        assert_eq!(dialogs, 2, "seed {seed}: {seen:?}");
        for kind in ["interstitial", "banner", "heads-up"] {
            assert!(seen.contains(&kind), "seed {seed}: {kind} never showed: {seen:?}");
        }
        // Everything planned came and went: the screen is the app's own again.
        let tree = phone.tree().unwrap().clone();
        assert_eq!(dismissal(&tree), None, "seed {seed}");
        assert!(has_id(&tree, "com.android.contacts:id/floating_action_button"), "seed {seed}");
    }
}

#[test]
fn the_same_seed_gives_the_same_disturbances_and_another_seed_others() {
    let (_, a, _) = play(Disturbances::Heavy, 5, 30);
    let (_, b, _) = play(Disturbances::Heavy, 5, 30);
    assert_eq!(a, b);
    let (_, c, _) = play(Disturbances::Heavy, 6, 30);
    assert_ne!(a, c);
}

#[test]
fn disturbances_never_touch_app_data() {
    let (_, _, mut disturbed) = play(Disturbances::Heavy, 3, 40);
    let (_, _, clean) = play(Disturbances::None, 3, 40);
    for app in ["contacts", "messages", "settings", "files", "email"] {
        assert_eq!(disturbed.database_bytes(app).unwrap(), clean.database_bytes(app).unwrap(), "{app}");
    }
    // The banner was closed during play; a reset starts the plan over, banner and all, with
    // nothing else showing before the first action.
    assert!(!has_id(disturbed.tree().unwrap(), BANNER_CLOSE_ID));
    disturbed.reset().unwrap();
    disturbed.start_app("contacts", None, &BTreeMap::new()).unwrap();
    let tree = disturbed.tree().unwrap().clone();
    assert!(
        matches!(dismissal(&tree), Some(Dismissal::Tap(n)) if tree.node(n).resource_id == BANNER_CLOSE_ID)
    );
}

/// Waits until a modal pop-up shows (heavy plans the first within four turns).
fn until_modal(phone: &mut Phone) -> UiTree {
    for _ in 0..10 {
        let tree = phone.tree().unwrap().clone();
        if matches!(dismissal(&tree), Some(Dismissal::Tap(n)) if tree.node(n).resource_id != BANNER_CLOSE_ID)
        {
            return tree;
        }
        phone.apply(&wait()).unwrap();
    }
    panic!("no pop-up within 10 turns");
}

#[test]
fn a_modal_pop_up_takes_touches_and_keys_until_back_dismisses_it() {
    let mut phone = phone(Disturbances::Heavy, 0);
    let before = phone.database_bytes("contacts").unwrap();
    let tree = until_modal(&mut phone);
    // The add-contact button of the app under the pop-up: a tap there lands on the pop-up's window.
    let fab = tree
        .iter()
        .find(|(_, n)| n.resource_id == "com.android.contacts:id/floating_action_button")
        .map(|(_, n)| n.bounds.center())
        .expect("the app's button is still in the tree, under the pop-up");
    let outcome = phone.apply(&Action::Tap { target: Target::Point(Point::new(fab.0, fab.1)) }).unwrap();
    assert_eq!(phone.current_screen(), Some(("contacts", "list")), "{:?}", outcome.notes);
    let typed =
        phone.apply(&Action::Type { text: "Ada".into(), target: None, clear: false, enter: false }).unwrap();
    assert!(typed.notes.iter().any(|n| n.contains("pop-up")), "{:?}", typed.notes);
    let still = phone.tree().unwrap().clone();
    assert!(matches!(dismissal(&still), Some(Dismissal::Tap(_))), "the pop-up is still up");
    phone.apply(&Action::Key { key: Key::Back }).unwrap();
    // Back closed the pop-up, not the app.
    assert_eq!(phone.current_screen(), Some(("contacts", "list")));
    assert_eq!(phone.database_bytes("contacts").unwrap(), before);
}

#[test]
fn levels_parse_and_add_turns_to_the_budget() {
    assert_eq!("heavy".parse::<Disturbances>().unwrap(), Disturbances::Heavy);
    assert!("stormy".parse::<Disturbances>().unwrap_err().contains("none, light, heavy"));
    assert_eq!(Disturbances::None.extra_steps(), 0);
    assert!(Disturbances::Light.extra_steps() >= 3);
    assert!(Disturbances::Heavy.extra_steps() >= 12);
}
