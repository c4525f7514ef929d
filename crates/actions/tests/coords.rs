//! Properties of the coordinate-model parsers: they never panic on any input, every point they
//! produce is on the screen, and `smart_resize` keeps its invariants.

use phonebench_actions::coords::{
    CoordConvention, CoordSpace, CoordSyntax, parse_coord_action, parse_grounding_point, smart_resize,
    to_screen,
};
use phonebench_actions::{Action, Swipe, Target};
use proptest::prelude::*;

/// Every preset, and auto-detection over each space kind.
fn conventions() -> Vec<CoordConvention> {
    let mut all: Vec<CoordConvention> = CoordConvention::PRESETS.iter().map(|(_, c)| *c).collect();
    for space in [CoordSpace::Screen, CoordSpace::Normalized { max: 1000 }] {
        all.push(CoordConvention { syntax: CoordSyntax::Auto, space });
    }
    all
}

/// The points an action carries.
fn points(action: &Action) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    let mut push = |t: &Target| {
        if let Target::Point(p) = t {
            out.push((p.x, p.y));
        }
    };
    match action {
        Action::Tap { target } | Action::DoubleTap { target } | Action::LongPress { target } => push(target),
        Action::Scroll { target: Some(target), .. } => push(target),
        Action::Drag { from, to } => {
            push(from);
            push(to);
        }
        Action::Swipe(Swipe::Between { from, to }) => {
            out.push((from.x, from.y));
            out.push((to.x, to.y));
        }
        _ => {}
    }
    out
}

/// Answers shaped like the real ones, with arbitrary numbers and text in the slots.
fn answer_like() -> impl Strategy<Value = String> {
    let number = prop_oneof![
        (0u32..5000).prop_map(|n| n.to_string()),
        (0.0f64..5000.0).prop_map(|f| format!("{f}")),
        "-?[0-9]{0,12}(\\.[0-9]{0,3})?",
        Just("nan".to_string()),
        Just("1e999".to_string()),
    ];
    let text = "\\PC{0,20}";
    prop_oneof![
        (number.clone(), number.clone()).prop_map(|(x, y)| format!(
            "Thought: go\nAction: click(point='<point>{x} {y}</point>')"
        )),
        (number.clone(), number.clone(), number.clone(), number.clone())
            .prop_map(|(a, b, c, d)| format!("Action: drag(start_box='({a},{b})', end_box='[{c}, {d}]')")),
        (number.clone(), number.clone(), "[a-z]{0,6}")
            .prop_map(|(x, y, d)| format!("Action: scroll(point='<point>{x} {y}</point>', direction='{d}')")),
        text.prop_map(|t| format!("Action: type(content='{t}')")),
        (number.clone(), number.clone(), "[a-z_]{0,12}").prop_map(|(x, y, a)| format!(
            "<tool_call>\n{{\"name\": \"mobile_use\", \"arguments\": {{\"action\": \"{a}\", \"coordinate\": [{x}, {y}]}}}}\n</tool_call>"
        )),
        (number.clone(), number, "\\PC{0,8}").prop_map(|(x, y, junk)| format!(
            "<tool_call>{{\"name\": \"mobile_use\", \"arguments\": {{\"action\": \"swipe\", \"coordinate\": [{x}, 1], \"coordinate2\": [1, {y}]}}}}{junk}"
        )),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Arbitrary text never panics, under every convention and screen size.
    #[test]
    fn parsers_never_panic(text in "\\PC{0,80}", w in 0u32..3000, h in 0u32..3000) {
        for convention in conventions() {
            let _ = parse_coord_action(&text, &convention, w, h);
            let _ = parse_grounding_point(&text, &convention.space, w, h);
        }
    }

    /// Text made of the syntaxes' own pieces never panics either.
    #[test]
    fn fragments_never_panic(
        parts in prop::collection::vec(
            prop::sample::select(vec![
                "Action:", "Action：", "Thought:", "<tool_call>", "</tool_call>", "</think>", "<point>",
                "</point>", "(", ")", "[", "]", "'", "\"", "\\", ",", "=", "{", "}", ":", "\n", "```",
                "click", "type", "content", "start_box", "mobile_use", "coordinate", "1", "é", " ",
            ]),
            0..30,
        ),
    ) {
        let text: String = parts.concat();
        for convention in conventions() {
            let _ = parse_coord_action(&text, &convention, 1080, 2400);
        }
    }

    /// Whatever parses from an answer-shaped text has its points on the screen.
    #[test]
    fn points_land_on_the_screen(text in answer_like(), w in 1u32..3000, h in 1u32..3000) {
        for convention in conventions() {
            if let Ok(action) = parse_coord_action(&text, &convention, w, h) {
                for (x, y) in points(&action) {
                    prop_assert!(x >= 0 && y >= 0 && (x as u32) < w && (y as u32) < h,
                        "{text:?} -> {action:?} off a {w}x{h} screen");
                }
            }
        }
    }

    /// `smart_resize` never panics; a result is a pair of positive multiples of `factor`.
    #[test]
    fn smart_resize_invariants(
        h in prop_oneof![1u32..5000, any::<u32>()],
        w in prop_oneof![1u32..5000, any::<u32>()],
        factor in prop_oneof![Just(28u32), Just(32), Just(14), 0u32..100],
        min in prop_oneof![Just(3136u64), 0u64..100_000, any::<u64>()],
        max in prop_oneof![Just(12_845_056u64), 0u64..20_000_000, any::<u64>()],
    ) {
        if let Ok((rh, rw)) = smart_resize(h, w, factor, min, max) {
            prop_assert!(rh > 0 && rw > 0);
            prop_assert_eq!(rh % factor, 0);
            prop_assert_eq!(rw % factor, 0);
        }
    }

    /// `to_screen` clamps every finite non-negative coordinate into the screen.
    #[test]
    fn to_screen_stays_on_screen(x in 0.0f64..1e12, y in 0.0f64..1e12, w in 1u32..5000, h in 1u32..5000) {
        for convention in conventions() {
            if let Ok(p) = to_screen(&convention.space, x, y, w, h) {
                prop_assert!(p.x >= 0 && p.y >= 0 && (p.x as u32) < w && (p.y as u32) < h);
            }
        }
    }
}
