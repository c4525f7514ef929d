//! Coordinate models on the real phone: for every published convention, the answer a model
//! would give to tap an element's centre, written in that model's own format and coordinate
//! space, parses (`phonebench_actions::coords`) to a point that hits the element in the
//! Contacts app — at AndroidWorld's 1080×2400 and SPHINX's 768×1280. Reading the same answer
//! under a convention with another space misses.
//!
//! The model-side coordinates are computed here independently of the parser: the resized
//! sizes are the values upstream's Python `smart_resize` gives (`qwen_vl_utils`, factor 28), and
//! the grids are plain proportions.

use std::path::{Path, PathBuf};

use phonebench_actions::{Action, CoordConvention, Key, Target, parse_coord_action, parse_grounding_point};
use phonebench_phone::{CLOCK_START_MS, Catalog, Display, Phone, PhoneConfig};
use phonebench_uitree::{Bounds, NodeId, UiTree};

fn apps_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps")
}

fn phone_with(display: Display) -> Phone {
    let catalog = Catalog::load_dir(&apps_dir()).expect("the real apps load");
    Phone::new(
        catalog,
        PhoneConfig { seed: 0, clock_start_ms: CLOCK_START_MS, display, ..PhoneConfig::default() },
    )
    .expect("the phone starts")
}

/// The phone showing the Contacts list.
fn contacts_at(size: &str) -> (Phone, Display) {
    let display: Display = size.parse().expect("a screen size");
    let mut phone = phone_with(display);
    phone.apply(&Action::OpenApp { app: "contacts".into() }).expect("contacts opens");
    assert_eq!(phone.current_screen(), Some(("contacts", "list")));
    (phone, display)
}

/// An element the models are asked to tap.
#[derive(Debug)]
struct Element {
    /// Its resource id (without the package).
    name: &'static str,
    id: NodeId,
    bounds: Bounds,
}

/// The first node (document order) whose resource id ends in `:id/<name>`.
fn element(tree: &UiTree, name: &'static str) -> Element {
    let suffix = format!(":id/{name}");
    for window in tree.windows_top_down() {
        let root = tree.window(window).root;
        if let Some(id) = tree.dfs(root).find(|&id| tree.node(id).resource_id.ends_with(&suffix)) {
            return Element { name, id, bounds: tree.node(id).bounds };
        }
    }
    panic!("no `{name}` on the Contacts list");
}

/// The search button in the toolbar, the first contact row, the floating "Create contact" button.
fn elements(tree: &UiTree) -> Vec<Element> {
    let all: Vec<Element> = ["menu_search", "contact_row", "floating_action_button"]
        .into_iter()
        .map(|name| element(tree, name))
        .collect();
    for e in &all {
        assert!(e.bounds.width() > 0 && e.bounds.height() > 0, "{e:?} is empty");
    }
    all
}

/// The smart_resize'd `(width, height)` a Qwen2.5-VL-style model sees, from upstream's Python:
/// `smart_resize(2400, 1080) == (2408, 1092)`, `smart_resize(1280, 768) == (1288, 756)` with
/// factor 28 — for every preset's min/max pixels (3136 or 78400 .. 8847360, 10035200 or
/// 12845056), as both screens lie inside every range.
fn resized(display: Display) -> (f64, f64) {
    match (display.width, display.height) {
        (1080, 2400) => (1092.0, 2408.0),
        (768, 1280) => (756.0, 1288.0),
        other => panic!("no upstream smart_resize value recorded for {other:?}"),
    }
}

/// What `preset`'s model answers to tap `(cx, cy)` on `display`: integers in its own space,
/// in its published answer format.
fn model_answer(preset: &str, (cx, cy): (i32, i32), display: Display) -> String {
    let (w, h) = (f64::from(display.width), f64::from(display.height));
    let (cx, cy) = (f64::from(cx), f64::from(cy));
    let in_grid = |max: f64| ((cx * max / w).round() as i64, (cy * max / h).round() as i64);
    let in_resized = || {
        let (rw, rh) = resized(display);
        ((cx * rw / w).round() as i64, (cy * rh / h).round() as i64)
    };
    match preset {
        // QwenLM/Qwen2.5-VL cookbooks/mobile_agent.ipynb output.
        "qwen2.5-vl" => {
            let (x, y) = in_resized();
            format!(
                "\n<tool_call>\n{{\"name\": \"mobile_use\", \"arguments\": {{\"action\": \"click\", \"coordinate\": [{x}, {y}]}}}}\n</tool_call>\n"
            )
        }
        // bytedance/UI-TARS README_coordinates.md.
        "ui-tars-1.5" => {
            let (x, y) = in_resized();
            format!("Thought: xxx\nAction: click(start_box='({x},{y})')")
        }
        // bytedance/UI-TARS data/training_example.json.
        "ui-tars" => {
            let (x, y) = in_grid(1000.0);
            format!("Action: click(start_box='<|box_start|>({x},{y})<|box_end|>')")
        }
        // QwenLM/Qwen3-VL cookbooks/mobile_agent.ipynb output.
        "qwen3-vl" => {
            let (x, y) = in_grid(999.0);
            format!(
                "Thought: I need to tap the element.\nAction: \"I tapped on the element.\"\n<tool_call>\n{{\"name\": \"mobile_use\", \"arguments\": {{\"action\": \"click\", \"coordinate\": [{x}, {y}]}}}}\n</tool_call>\n"
            )
        }
        // X-PLUG/MobileAgent Mobile-Agent-v3/cookbook/end2end_usage.ipynb envelope.
        "gui-owl" => {
            let (x, y) = in_resized();
            format!(
                "<thinking>\nObservation: the element is visible.\n</thinking>\n<tool_call>\n{{\"name\": \"mobile_use\", \"arguments\": {{\"action\": \"click\", \"coordinate\": [{x}, {y}]}}}}\n</tool_call>\n<conclusion>\nClicked the element\n</conclusion>"
            )
        }
        // X-PLUG/MobileAgent Mobile-Agent-v3.5/mobile_use/utils.py response format.
        "gui-owl-1.5" => {
            let (x, y) = in_grid(1000.0);
            format!(
                "Action: Tap the element.\n<tool_call>\n{{\"name\": \"mobile_use\", \"arguments\": {{\"action\": \"click\", \"coordinate\": [{x}, {y}]}}}}\n</tool_call>"
            )
        }
        // bytedance/UI-TARS codes/ui_tars/prompt.py MOBILE_USE_DOUBAO.
        "doubao" => {
            let (x, y) = in_grid(1000.0);
            format!("Thought: Tap the element.\nAction: click(point='<point>{x} {y}</point>')")
        }
        // Tongyi-MAI/MobileWorld agents/grounding/uiins.py system prompt.
        "ui-ins" => {
            let (x, y) = in_resized();
            format!(
                "<tool_call>\n{{\"name\": \"grounding\", \"arguments\": {{\"action\": \"click\", \"coordinate\": [{x}, {y}]}}}}\n</tool_call>"
            )
        }
        other => panic!("no answer format for preset `{other}`"),
    }
}

/// Where the tap in `answer`, read under `preset`, lands.
fn tap_point(answer: &str, preset: &str, display: Display) -> (i32, i32) {
    let convention = CoordConvention::preset(preset).expect("a preset");
    match parse_coord_action(answer, &convention, display.width, display.height) {
        Ok(Action::Tap { target: Target::Point(p) }) => (p.x, p.y),
        other => panic!("{answer:?} under {preset}: {other:?}"),
    }
}

/// Whether a tap at `(x, y)` reaches `element`: the deepest node hit is it or one of its
/// descendants (a row's name text, the button's icon). The elements are the clickable nodes
/// themselves, so an ancestor (the list, the root) does not count.
fn hits(tree: &UiTree, (x, y): (i32, i32), element: &Element) -> bool {
    tree.hit_test(x, y).is_some_and(|hit| tree.is_in_subtree(element.id, hit))
}

fn every_preset_hits_every_element(size: &str) {
    let (mut phone, display) = contacts_at(size);
    let tree = phone.tree().expect("the screen renders").clone();
    let elements = elements(&tree);
    for (preset, _) in CoordConvention::PRESETS {
        for element in &elements {
            let centre = element.bounds.center();
            let answer = model_answer(preset, centre, display);
            let point = tap_point(&answer, preset, display);
            assert!(
                hits(&tree, point, element),
                "{size} {preset}: {answer:?} -> {point:?} misses {} {:?} (centre {centre:?})",
                element.name,
                element.bounds
            );
            if *preset == "ui-ins" {
                let convention = CoordConvention::preset(preset).expect("a preset");
                let p = parse_grounding_point(&answer, &convention.space, display.width, display.height)
                    .expect("the grounding reply parses");
                assert_eq!((p.x, p.y), point, "{size}: grounding point and action agree");
            }
        }
    }
}

#[test]
fn every_preset_hits_every_element_at_1080x2400() {
    every_preset_hits_every_element("1080x2400");
}

#[test]
fn every_preset_hits_every_element_at_768x1280() {
    every_preset_hits_every_element("768x1280");
}

/// The parsed taps do what the model meant on the phone: each preset's tap on the first contact
/// opens it.
#[test]
fn parsed_taps_open_the_contact() {
    for size in ["1080x2400", "768x1280"] {
        let (mut phone, display) = contacts_at(size);
        let row = element(phone.tree().expect("the screen renders"), "contact_row");
        for (preset, convention) in CoordConvention::PRESETS {
            let answer = model_answer(preset, row.bounds.center(), display);
            let action =
                parse_coord_action(&answer, convention, display.width, display.height).expect("parses");
            phone.apply(&action).expect("the tap applies");
            assert_eq!(phone.current_screen(), Some(("contacts", "detail")), "{size} {preset}: {answer:?}");
            phone.apply(&Action::Key { key: Key::Back }).expect("back applies");
            assert_eq!(phone.current_screen(), Some(("contacts", "list")));
        }
    }
}

/// The same answer read under a convention with another coordinate space misses: the space is
/// part of the protocol, not a detail.
#[test]
fn the_wrong_convention_misses() {
    // (the model that wrote the answer, the convention it is wrongly read under)
    let pairs = [
        ("qwen3-vl", "qwen2.5-vl"),    // 0–999 grid read as resized pixels
        ("doubao", "ui-tars-1.5"),     // 0–1000 grid read as resized pixels
        ("ui-tars-1.5", "ui-tars"),    // resized pixels read as a 0–1000 grid
        ("gui-owl", "gui-owl-1.5"),    // resized pixels read as a 0–1000 grid
        ("gui-owl-1.5", "qwen2.5-vl"), // 0–1000 grid read as resized pixels
    ];
    for size in ["1080x2400", "768x1280"] {
        let (mut phone, display) = contacts_at(size);
        let tree = phone.tree().expect("the screen renders").clone();
        let elements = elements(&tree);
        for (writer, reader) in pairs {
            let mut misses = Vec::new();
            for element in &elements {
                let answer = model_answer(writer, element.bounds.center(), display);
                assert!(hits(&tree, tap_point(&answer, writer, display), element), "{size} {writer} hits");
                // Read under the wrong space, the point lands elsewhere, or so far off the grid
                // that it is no point on this screen (a format error): a miss either way.
                let convention = CoordConvention::preset(reader).expect("a preset");
                match parse_coord_action(&answer, &convention, display.width, display.height) {
                    Ok(Action::Tap { target: Target::Point(p) }) if hits(&tree, (p.x, p.y), element) => {}
                    Ok(other) => misses.push((element.name, format!("{other:?}"))),
                    Err(e) => misses.push((element.name, e.to_string())),
                }
            }
            assert!(
                !misses.is_empty(),
                "{size}: {writer}'s answers read as {reader} still hit every element"
            );
            // The floating button sits in the bottom-right corner, where the spaces differ most.
            assert!(
                misses.iter().any(|(name, _)| *name == "floating_action_button"),
                "{size}: {writer} read as {reader} misses {misses:?}, not the floating button"
            );
        }
    }
}
