//! Virtualised lists (the template function `window` and `<Gap>`): a list renders only the rows
//! that can show, and nothing an agent sees differs from rendering every row — the UI tree and
//! the screenshot, at every scroll position, through random play of every app.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use phonebench_actions::{Action, Direction, Key, Target};
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

fn phones() -> (Phone, Phone, Vec<String>) {
    phones_on(PhoneConfig::default())
}

fn phones_on(config: PhoneConfig) -> (Phone, Phone, Vec<String>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    let catalog = Catalog::load_dir(&dir).unwrap();
    let apps = catalog.apps().iter().map(|a| a.manifest.id.clone()).collect();
    let windowed = Phone::new(catalog.clone(), config.clone()).unwrap();
    let mut whole = Phone::new(catalog, config).unwrap();
    whole.set_virtual_lists(false);
    (windowed, whole, apps)
}

fn tree(phone: &mut Phone) -> String {
    phonebench_uitree::write_xml(phone.tree().unwrap())
}

#[test]
fn a_long_list_renders_a_window_and_looks_the_same_at_every_scroll_position() {
    let (mut windowed, mut whole, _) = phones();
    for phone in [&mut windowed, &mut whole] {
        phone.apply(&Action::OpenApp { app: "music".into() }).unwrap();
    }
    assert_eq!(tree(&mut windowed), tree(&mut whole));
    let (few, all) = (windowed.rendered_views().unwrap(), whole.rendered_views().unwrap());
    assert!(few * 2 < all, "the songs list renders a window: {few} views against {all}");
    // Down to the end and back: every position shows the same nodes, and the same pixels.
    let mut seen = std::collections::BTreeSet::new();
    for step in 0..60 {
        let direction = if step < 30 { Direction::Down } else { Direction::Up };
        let scroll = Action::Scroll { direction, target: None };
        let a = windowed.apply(&scroll).map(|_| ());
        let b = whole.apply(&scroll).map(|_| ());
        assert_eq!(a.is_ok(), b.is_ok(), "step {step}");
        let shown = tree(&mut windowed);
        assert_eq!(shown, tree(&mut whole), "step {step}");
        seen.insert(shown);
        if step % 10 == 9 {
            let (x, y) = (windowed.screenshot().unwrap(), whole.screenshot().unwrap());
            assert!(x.data() == y.data(), "step {step}: the screenshots differ");
        }
    }
    assert!(seen.len() > 5, "the scrolls moved through the list ({} distinct screens)", seen.len());
}

#[test]
fn windowed_and_whole_lists_agree_through_random_play_of_every_app() {
    let (mut windowed, mut whole, apps) = phones();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for app in &apps {
        for phone in [&mut windowed, &mut whole] {
            phone.reset().unwrap();
            phone.apply(&Action::OpenApp { app: app.clone() }).unwrap();
        }
        let mut targets = windowed.observe(ObservationFormat::SphinxTree).unwrap().targets.len();
        for step in 0..40 {
            let action = match rng.next_u32() % 100 {
                0..=34 if targets > 0 => {
                    Action::Tap { target: Target::Index((rng.next_u32() as usize % targets) as u32) }
                }
                35..=84 => Action::Scroll {
                    direction: if rng.next_u32().is_multiple_of(3) { Direction::Up } else { Direction::Down },
                    target: None,
                },
                _ => Action::Key { key: Key::Back },
            };
            let a = windowed.apply(&action).map(|_| ());
            let b = whole.apply(&action).map(|_| ());
            assert_eq!(a.is_ok(), b.is_ok(), "{app}, step {step}, {action:?}");
            assert_eq!(tree(&mut windowed), tree(&mut whole), "{app}, step {step}, after {action:?}");
            targets = windowed.observe(ObservationFormat::SphinxTree).unwrap().targets.len();
        }
    }
}

/// How a test reaches a screen: open it in its app with arguments, or tap the first element
/// with this resource id (the part after `:id/`) or this text.
enum Step {
    Open(&'static str, &'static [(&'static str, i64)]),
    /// Open a screen with one text argument.
    OpenText(&'static str, &'static str, &'static str),
    Tap(&'static str),
    /// Type into the focused field.
    Type(&'static str),
}

/// The screens whose long lists are windowed: (app, the way there, what the list is).
const WINDOWED_SCREENS: &[(&str, &[Step], &str)] = &[
    ("messages", &[], "conversations"),
    ("email", &[], "inbox"),
    ("dialer", &[Step::Tap("tab_recents")], "recents (day labels)"),
    ("dialer", &[Step::Tap("tab_contacts")], "contacts (letter headers)"),
    ("messages", &[Step::Open("search", &[]), Step::Type("e")], "search: messages"),
    ("contacts", &[Step::Open("search", &[]), Step::Type("a")], "search results"),
    ("music", &[Step::Open("search", &[]), Step::Type("e")], "search: songs"),
    ("recipes", &[Step::OpenText("pick_recipe", "day", "2026-03-04")], "pick a recipe"),
    ("files", &[Step::Tap("DCIM"), Step::Tap("Camera")], "a folder (Camera)"),
    ("files", &[Step::OpenText("category", "category", "images")], "images"),
    ("files", &[Step::Open("search", &[]), Step::Type("e")], "search results"),
    (
        "files",
        &[Step::OpenText("pick", "mime", "image/*"), Step::Tap("DCIM"), Step::Tap("Camera")],
        "pick an image in a folder",
    ),
];

/// Fails with where two trees first differ (whole trees are too long to read in a message).
fn same(windowed: &str, whole: &str, at: &str) {
    if windowed != whole {
        let i = windowed.bytes().zip(whole.bytes()).take_while(|(a, b)| a == b).count();
        let around = |s: &str| s.get(i.saturating_sub(300)..(i + 200).min(s.len())).unwrap_or("").to_string();
        panic!("{at}: the trees differ\n windowed: …{}…\n whole:    …{}…", around(windowed), around(whole));
    }
}

fn go(phone: &mut Phone, app: &str, step: &Step) {
    match step {
        Step::Open(screen, args) => {
            let args = args.iter().map(|(k, v)| (k.to_string(), serde_json::json!(v))).collect();
            phone.start_app(app, Some(screen), &args).unwrap();
        }
        Step::OpenText(screen, name, value) => {
            let args = [(name.to_string(), serde_json::json!(value))].into_iter().collect();
            phone.start_app(app, Some(screen), &args).unwrap();
        }
        Step::Type(text) => {
            phone
                .apply(&Action::Type { text: text.to_string(), target: None, clear: false, enter: false })
                .unwrap();
        }
        Step::Tap(key) => {
            let suffix = format!(":id/{key}");
            let tree = phone.tree().unwrap();
            let (_, node) = tree
                .iter()
                .find(|(_, n)| n.resource_id.ends_with(&suffix) || n.text == *key)
                .unwrap_or_else(|| panic!("{app}: nothing to tap named {key}"));
            let (x, y) = node.bounds.center();
            let tap = Action::Tap { target: Target::Point(phonebench_actions::Point { x, y }) };
            phone.apply(&tap).unwrap();
        }
    }
}

#[test]
fn every_windowed_list_looks_the_same_from_top_to_bottom_and_renders_fewer_views() {
    // Row heights are in dp, so a window must fit at every density: the default display
    // (2.625 px per dp) and SPHINX's 768x1280 (2 px per dp).
    for display in ["1080x2400@420", "768x1280@320"] {
        let config = PhoneConfig { display: display.parse().unwrap(), ..PhoneConfig::default() };
        let (mut windowed, mut whole, _) = phones_on(config);
        scroll_every_windowed_list(&mut windowed, &mut whole, display);
    }
}

fn scroll_every_windowed_list(windowed: &mut Phone, whole: &mut Phone, display: &str) {
    for (app, steps, list) in WINDOWED_SCREENS {
        for phone in [&mut *windowed, &mut *whole] {
            phone.reset().unwrap();
            phone.apply(&Action::OpenApp { app: app.to_string() }).unwrap();
            for step in *steps {
                go(phone, app, step);
            }
        }
        let at = format!("{app} {list} ({display})");
        same(&tree(windowed), &tree(whole), &format!("{at}: first render"));
        let (few, all) = (windowed.rendered_views().unwrap(), whole.rendered_views().unwrap());
        if std::env::var_os("VL_REPORT").is_some() {
            eprintln!("{at}: {few} views against {all}");
        }
        assert!(few < all, "{at}: the windowed list renders fewer views ({few} against {all})");
        // Down until the list stops moving, then back up as far: the same nodes and pixels.
        let mut shown = tree(windowed);
        let mut down = 0;
        let mut steps = 0;
        for direction in [Direction::Down, Direction::Up] {
            loop {
                let scroll = Action::Scroll { direction, target: None };
                let a = windowed.apply(&scroll).map(|_| ());
                let b = whole.apply(&scroll).map(|_| ());
                assert_eq!(a.is_ok(), b.is_ok(), "{at}, step {steps}");
                let now = tree(windowed);
                same(&now, &tree(whole), &format!("{at}, step {steps} ({direction:?})"));
                steps += 1;
                let moved = now != shown;
                // The pixels every 10 steps and at the end of the list.
                if steps % 10 == 0 || (direction == Direction::Down && !moved) {
                    let (x, y) = (windowed.screenshot().unwrap(), whole.screenshot().unwrap());
                    assert!(x.data() == y.data(), "{at}, step {steps}: the screenshots differ");
                }
                shown = now;
                if direction == Direction::Down {
                    if !moved || down >= 60 {
                        break;
                    }
                    down += 1;
                } else {
                    down -= 1;
                    if down <= 0 {
                        break;
                    }
                }
            }
        }
        assert!(steps > 2, "{at}: the list scrolls");
    }
}
