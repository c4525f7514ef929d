//! Screenshots agree with the UI tree on every screen of the bundled apps.
//!
//! The crawl opens every screen of every app directly, then taps every element of each once,
//! which adds the screens that need arguments (a contact, a conversation), dialogs, menus and the
//! keyboard. On each distinct state:
//! - the screenshot is byte-identical when taken twice (and its PNG too);
//! - for a sample of nodes, drawing the screen without that node's paint changes pixels only
//!   inside the node's bounds (everything drawn for a node lies inside them), and a touch at
//!   any changed pixel hits that node or one of its descendants (a coordinate action at a pixel
//!   hits the node drawn there).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use phonebench_actions::{Action, Target};
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Catalog, Foreground, Phone, PhoneConfig};
use phonebench_pixels::{Paint, Role, Theme, encode_png, render};
use phonebench_uitree::NodeId;

/// Toast windows do not take touches (their layer in the composed tree).
const TOAST_LAYER: i32 = 10;

/// Nodes checked by blanking per state: each check is a full render.
const NODES_PER_STATE: usize = 3;

fn apps_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps")
}

#[derive(Clone, Debug)]
enum Step {
    Start(String, String),
    Tap(u32),
}

fn replay(phone: &mut Phone, path: &[Step]) -> bool {
    if phone.reset().is_err() {
        return false;
    }
    for step in path {
        let ok = match step {
            Step::Start(app, screen) => {
                phone.start_app(app, Some(screen), &BTreeMap::new()).is_ok() && phone.tree().is_ok()
            }
            Step::Tap(i) => {
                phone.observe(ObservationFormat::SphinxTree).is_ok()
                    && phone.apply(&Action::Tap { target: Target::Index(*i) }).is_ok()
                    && phone.tree().is_ok()
            }
        };
        if !ok {
            return false;
        }
    }
    true
}

fn state_key(phone: &mut Phone) -> String {
    let screen = phone.current_screen().map(|(a, s)| format!("{a}/{s}"));
    let foreground = phone.foreground();
    let keyboard = phone.keyboard_shown();
    let tree = phone.tree().expect("the screen renders");
    let overlays: Vec<i32> = tree.windows().iter().map(|w| w.layer).filter(|l| (1..30).contains(l)).collect();
    let dark = phone.dark_theme();
    format!("{foreground:?} {screen:?} overlays={overlays:?} keyboard={keyboard} dark={dark}")
}

/// Whether a paint draws anything at all (a blank one cannot be checked).
fn draws(paint: &Paint, text: bool) -> bool {
    paint.role != Role::Plain
        || paint.icon.is_some()
        || paint.image.is_some()
        || (paint.text.is_some() && text)
}

fn check_state(phone: &mut Phone, key: &str, checked_nodes: &mut usize) {
    let first = phone.screenshot().expect("screenshot");
    let second = phone.screenshot().expect("screenshot");
    assert!(first.data() == second.data(), "{key}: two screenshots of one state differ");
    assert_eq!(
        encode_png(&first).expect("png"),
        encode_png(&second).expect("png"),
        "{key}: PNG bytes differ"
    );

    let display = phone.display();
    let theme = Theme::for_dark(phone.dark_theme());
    let paints: Vec<Paint> = phone.paints().expect("paints").to_vec();
    let tree = phone.tree().expect("tree").clone();
    let full = render(&tree, &paints, display.width, display.height, theme).expect("render");
    assert!(full.data() == first.data(), "{key}: render from the paints differs from the screenshot");

    // A deterministic spread of nodes that draw something; the dialog's scrim belongs to its
    // window, so dialog roots are left out.
    let candidates: Vec<NodeId> = tree
        .iter()
        .filter(|(id, node)| {
            let p = &paints[id.get()];
            draws(p, !node.text.is_empty() || node.hint.is_some())
                && p.role != Role::Dialog
                && !node.bounds.is_empty()
        })
        .map(|(id, _)| id)
        .collect();
    let stride = (candidates.len() / NODES_PER_STATE).max(1);
    let width = display.width as usize;
    for &id in candidates.iter().step_by(stride).take(NODES_PER_STATE) {
        let node = tree.node(id);
        let mut blanked = paints.clone();
        blanked[id.get()] =
            Paint { role: Role::Plain, icon: None, text: None, image: None, ..paints[id.get()].clone() };
        let without = render(&tree, &blanked, display.width, display.height, theme).expect("render");
        let b = node.bounds;
        let window = tree.window(tree.window_of(id));
        let mut changed = 0usize;
        for (i, (a, c)) in full.data().chunks_exact(4).zip(without.data().chunks_exact(4)).enumerate() {
            if a == c {
                continue;
            }
            changed += 1;
            let (x, y) = ((i % width) as i32, (i / width) as i32);
            assert!(
                b.contains(x, y),
                "{key}: node {} ({} `{}`{}) drew at ({x},{y}) outside its bounds {b:?}",
                id.get(),
                node.class,
                node.text,
                node.content_desc
            );
            if window.layer != TOAST_LAYER && changed % 7 == 1 {
                let hit = tree.hit_test_where(x, y, |w| w.layer != TOAST_LAYER).expect("a node is hit");
                // A higher window (a dialog's rounded corner) takes touches over its whole
                // rectangle, as on Android, even where the node shows through it.
                let under_higher_window = tree.window(tree.window_of(hit)).layer > window.layer;
                assert!(
                    under_higher_window || tree.is_in_subtree(id, hit),
                    "{key}: a touch at ({x},{y}), where node {} ({} `{}`) is drawn, hits node {} ({} `{}`)",
                    id.get(),
                    node.class,
                    node.text,
                    hit.get(),
                    tree.node(hit).class,
                    tree.node(hit).text
                );
            }
        }
        // Surfaces and system bars are the colour of the screen under them.
        let same_as_screen = matches!(paints[id.get()].role, Role::Surface | Role::StatusBar | Role::NavBar);
        // A node under a dialog or menu may be wholly hidden by it.
        let (cx, cy) = b.center();
        let covered = tree
            .hit_test_where(cx, cy, |w| w.layer != TOAST_LAYER)
            .is_some_and(|hit| tree.window_of(hit) != tree.window_of(id));
        let same_as_screen = same_as_screen || covered;
        // A row cut by a scroll container's edge may show only a sliver of its padding.
        let frame = paints[id.get()].frame;
        let clipped = (b.height() as f32) < frame.h - 1.0 || (b.width() as f32) < frame.w - 1.0;
        let same_as_screen = same_as_screen || clipped;
        assert!(
            changed > 0 || same_as_screen,
            "{key}: node {} ({} `{}`) draws nothing visible",
            id.get(),
            node.class,
            node.text
        );
        *checked_nodes += 1;
    }
}

#[test]
fn pixels_agree_with_the_tree_on_every_screen() {
    let catalog = Catalog::load_dir(&apps_dir()).expect("the real apps load");
    let all_screens: BTreeSet<String> = catalog
        .apps()
        .iter()
        .flat_map(|a| a.screens.keys().map(move |s| format!("{}/{s}", a.manifest.id)))
        .collect();
    let app_ids: Vec<String> = catalog.apps().iter().map(|a| a.manifest.id.clone()).collect();
    let mut phone = Phone::new(catalog.clone(), PhoneConfig::default()).expect("the phone starts");

    let mut seen: BTreeMap<String, Vec<Step>> = BTreeMap::new();
    let mut screens_seen: BTreeSet<String> = BTreeSet::new();
    let mut checked_nodes = 0;
    let mut record = |phone: &mut Phone, path: &[Step], seen: &mut BTreeMap<String, Vec<Step>>| {
        let key = state_key(phone);
        if let Some((app, screen)) = phone.current_screen() {
            screens_seen.insert(format!("{app}/{screen}"));
        }
        if seen.contains_key(&key) {
            return false;
        }
        check_state(phone, &key, &mut checked_nodes);
        seen.insert(key, path.to_vec());
        true
    };

    // The launcher and the overview.
    assert!(replay(&mut phone, &[]));
    record(&mut phone, &[], &mut seen);
    let _ = phone.apply(&Action::Key { key: phonebench_actions::Key::AppSwitch });
    if phone.foreground() == Foreground::Overview {
        record(&mut phone, &[], &mut seen);
    }

    let mut seeds: Vec<Vec<Step>> = Vec::new();
    for app in &app_ids {
        let package = catalog.get(app).expect("installed");
        for screen in package.screens.keys() {
            let path = vec![Step::Start(app.clone(), screen.clone())];
            if replay(&mut phone, &path) {
                record(&mut phone, &path, &mut seen);
                seeds.push(path);
            }
        }
    }
    // One tap from every seed; then one more from the screens that cannot be opened without
    // arguments (a contact, an app's info), which lead to deeper ones (an app's storage).
    let seed_screens: BTreeSet<String> = seeds
        .iter()
        .filter_map(|p| match p.first() {
            Some(Step::Start(app, screen)) => Some(format!("{app}/{screen}")),
            _ => None,
        })
        .collect();
    let mut frontier = seeds.clone();
    for level in 0..2 {
        let mut next = Vec::new();
        for start in &frontier {
            assert!(replay(&mut phone, start));
            let targets = phone.observe(ObservationFormat::SphinxTree).expect("observe").targets.len();
            for i in 0..targets as u32 {
                let mut path = start.clone();
                path.push(Step::Tap(i));
                if replay(&mut phone, &path) && record(&mut phone, &path, &mut seen) && level == 0 {
                    let screen = phone.current_screen().map(|(a, s)| format!("{a}/{s}"));
                    if screen.is_some_and(|s| !seed_screens.contains(&s)) {
                        next.push(path);
                    }
                }
            }
        }
        frontier = next;
    }
    let missing: Vec<&String> = all_screens.iter().filter(|s| !screens_seen.contains(*s)).collect();
    assert!(missing.is_empty(), "screens never reached: {missing:?}");
    assert!(seen.len() > 100, "only {} states", seen.len());
    assert!(checked_nodes > 300, "only {checked_nodes} nodes checked");
    println!("{} states, {} screens, {checked_nodes} nodes checked", seen.len(), screens_seen.len());
}
