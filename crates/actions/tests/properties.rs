//! Properties of every action syntax: parsers never panic on any input, and whatever a printer
//! produces parses back to the same action.

use phonebench_actions::canonical::{from_canonical_json, to_canonical_json};
use phonebench_actions::json_action::{JsonDialect, parse_action_type_json, to_action_type_json};
use phonebench_actions::sphinx::{parse_sphinx, to_sphinx};
use phonebench_actions::{
    Action, Direction, FinishStatus, Key, ParseOptions, Point, SphinxMode, Swipe, Syntax, Target,
    parse_action, parse_action_with,
};
use proptest::prelude::*;
use serde_json::{Map, Value};

fn point() -> impl Strategy<Value = Point> {
    prop_oneof![(0..4000i32, 0..4000i32), (any::<i32>(), any::<i32>())].prop_map(|(x, y)| Point::new(x, y))
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        (0..200u32).prop_map(Target::Index),
        any::<u32>().prop_map(Target::Index),
        point().prop_map(Target::Point),
        "[a-z ]{0,5}[a-z][a-z ]{0,10}".prop_map(Target::Description),
    ]
}

fn direction() -> impl Strategy<Value = Direction> {
    prop::sample::select(vec![Direction::Up, Direction::Down, Direction::Left, Direction::Right])
}

/// Text agents type: brackets, quotes, newlines, non-ASCII, and text that looks like markup or
/// SQL (it is data, carried verbatim).
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 \\[\\]\"'{}:,\\\\]{0,16}",
        "\\PC{0,12}",
        Just("a] [b".to_string()),
        Just("line one\nline two".to_string()),
        Just("'); DROP TABLE mail; --".to_string()),
        Just("{{ secret }}".to_string()),
    ]
}

fn key() -> impl Strategy<Value = Key> {
    prop_oneof![
        prop::sample::select(vec![
            Key::Back,
            Key::Home,
            Key::Enter,
            Key::Backspace,
            Key::Delete,
            Key::Tab,
            Key::Escape,
            Key::Space,
            Key::Menu,
            Key::AppSwitch,
            Key::Search,
            Key::VolumeUp,
            Key::VolumeDown,
            Key::Power,
        ]),
        // Codes that are not the named keys' own (those parse back as the named key).
        "CAMERA|MEDIA_PLAY|F[1-9]|NUMPAD_[0-9]|BUTTON_[A-C]".prop_map(Key::Other),
    ]
}

fn arguments() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec(
        ("[a-z_]{1,8}", prop_oneof![any::<i64>().prop_map(Value::from), text().prop_map(Value::from)]),
        0..4,
    )
    .prop_map(|pairs| pairs.into_iter().collect())
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        target().prop_map(|target| Action::Tap { target }),
        target().prop_map(|target| Action::DoubleTap { target }),
        target().prop_map(|target| Action::LongPress { target }),
        (text(), prop::option::of(target()), any::<bool>(), any::<bool>())
            .prop_map(|(text, target, clear, enter)| Action::Type { text, target, clear, enter }),
        (direction(), prop::option::of(target()))
            .prop_map(|(direction, target)| Action::Swipe(Swipe::Direction { direction, target })),
        (point(), point()).prop_map(|(from, to)| Action::Swipe(Swipe::Between { from, to })),
        (direction(), prop::option::of(target()))
            .prop_map(|(direction, target)| Action::Scroll { direction, target }),
        (target(), target()).prop_map(|(from, to)| Action::Drag { from, to }),
        key().prop_map(|key| Action::Key { key }),
        "[A-Za-z][A-Za-z .]{0,12}".prop_map(|app| Action::OpenApp { app }),
        prop::option::of("[a-z.]{1,12}").prop_map(|app| Action::RestartApp { app }),
        prop::option::of(any::<u64>()).prop_map(|ms| Action::Wait { ms }),
        text().prop_map(|text| Action::Answer { text }),
        prop::sample::select(vec![FinishStatus::Complete, FinishStatus::Infeasible])
            .prop_map(|status| Action::Finish { status, reason: None }),
        text().prop_map(|text| Action::AskUser { text }),
        ("[a-z_]{1,12}", arguments()).prop_map(|(tool, arguments)| Action::McpCall { tool, arguments }),
    ]
}

/// Pieces of every syntax, to steer random input towards the parsers' interesting paths.
const FRAGMENTS: &[&str] = &[
    "click",
    "longclick",
    "text",
    "swipe",
    "press",
    " ",
    "[",
    "]",
    ",",
    "[3]",
    "[12,34]",
    "[back]",
    "[home]",
    "[direction=up]",
    "\n",
    "-",
    "99999999999999999999",
    "{",
    "}",
    "\"action\":",
    "\"action_type\":",
    "\"click\"",
    "\"tap\"",
    "\"index\":",
    "\"x\":",
    "\"target\":",
    "1.5",
    "null",
    "\"mcp\"",
    "\"action_json\":",
    "[]",
    "😀",
];

fn fragment_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![prop::sample::select(FRAGMENTS).prop_map(str::to_string), "\\PC{0,4}"],
        0..16,
    )
    .prop_map(|parts| parts.concat())
}

fn options() -> impl Strategy<Value = ParseOptions> {
    (
        prop::sample::select(vec![SphinxMode::Any, SphinxMode::Index, SphinxMode::Coordinates]),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(sphinx_mode, sphinx_home_restarts, lenient)| ParseOptions {
            sphinx_mode,
            sphinx_home_restarts,
            lenient,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn parsers_never_panic(text in prop_oneof!["\\PC*".boxed(), fragment_soup().boxed()], options in options()) {
        for syntax in Syntax::ALL {
            let _ = parse_action_with(&text, syntax, &options);
        }
    }

    #[test]
    fn canonical_json_round_trips(action in action()) {
        let json = to_canonical_json(&action);
        prop_assert_eq!(from_canonical_json(&json).map_err(|e| TestCaseError::fail(format!("{e}: {json}")))?, action.clone());
        // Detection finds canonical JSON too.
        prop_assert_eq!(parse_action(&json, Syntax::Auto).map_err(|e| TestCaseError::fail(e.to_string()))?, action);
    }

    #[test]
    fn sphinx_printing_round_trips(action in action()) {
        if let Ok(text) = to_sphinx(&action) {
            let parsed = parse_sphinx(&text, &ParseOptions::default())
                .map_err(|e| TestCaseError::fail(format!("{e}: {text:?}")))?;
            prop_assert_eq!(parsed, action);
        }
    }

    #[test]
    fn action_type_json_printing_round_trips(action in action()) {
        for dialect in [JsonDialect::AndroidWorld, JsonDialect::MobileWorld] {
            if let Ok(json) = to_action_type_json(&action, dialect) {
                let parsed = parse_action_type_json(&json, dialect)
                    .map_err(|e| TestCaseError::fail(format!("{e}: {json}")))?;
                prop_assert_eq!(&parsed, &action);
            }
        }
    }

    #[test]
    fn printing_is_deterministic(action in action()) {
        prop_assert_eq!(to_canonical_json(&action), to_canonical_json(&action.clone()));
    }
}

#[test]
fn every_canonical_kind_prints_in_every_syntax_that_has_it() {
    // The reference set: one action per upstream vocabulary entry, checked to be expressible
    // where the upstream syntax has it, so the printers cannot silently refuse everything.
    let sphinx = [
        "click [3]",
        "longclick [3]",
        "text [3] [hi]",
        "swipe [3] [up]",
        "swipe [1,2] [3,4]",
        "press [back]",
        "press [enter]",
        "press [restart]",
        "press [none]",
        "press [stop]",
        "click [5,6]",
    ];
    for text in sphinx {
        let action = parse_action(text, Syntax::Sphinx).unwrap();
        assert_eq!(to_sphinx(&action).unwrap(), text);
    }
    let androidworld = [
        r#"{"action_type":"click","index":3}"#,
        r#"{"action_type":"double_tap","x":1,"y":2}"#,
        r#"{"action_type":"long_press","index":3}"#,
        r#"{"action_type":"input_text","index":3,"text":"hi","clear_text":true}"#,
        r#"{"action_type":"scroll","index":3,"direction":"down"}"#,
        r#"{"action_type":"swipe","direction":"left"}"#,
        r#"{"action_type":"navigate_home"}"#,
        r#"{"action_type":"navigate_back"}"#,
        r#"{"action_type":"keyboard_enter"}"#,
        r#"{"action_type":"open_app","app_name":"Clock"}"#,
        r#"{"action_type":"status","goal_status":"complete"}"#,
        r#"{"action_type":"wait"}"#,
        r#"{"action_type":"answer","text":"42"}"#,
    ];
    for text in androidworld {
        let action = parse_action_type_json(text, JsonDialect::AndroidWorld).unwrap();
        assert_eq!(to_action_type_json(&action, JsonDialect::AndroidWorld).unwrap(), text);
    }
    let mobileworld = [
        r#"{"action_type":"input_text","text":"hi"}"#,
        r#"{"action_type":"drag","start_x":1,"start_y":2,"end_x":3,"end_y":4}"#,
        r#"{"action_type":"ask_user","text":"Which one?"}"#,
        r#"{"action_type":"mcp","action_name":"search","action_json":{"q":"x"}}"#,
    ];
    for text in mobileworld {
        let action = parse_action_type_json(text, JsonDialect::MobileWorld).unwrap();
        assert_eq!(to_action_type_json(&action, JsonDialect::MobileWorld).unwrap(), text);
    }
    // Without a MobileWorld-only feature, JSON detection reads AndroidWorld: Enter is pressed.
    let Action::Type { enter, .. } = parse_action(mobileworld[0], Syntax::Json).unwrap() else { panic!() };
    assert!(enter);
}
