//! Canonical JSON: the serde form of [`Action`], e.g. `{"action":"tap","target":{"index":3}}`.
//!
//! Printing is compact, with `"action"` first and fields in declaration order, so the same
//! action always prints to the same bytes (trajectories are compared byte for byte).

use serde_json::Value;

use crate::action::Action;
use crate::error::ParseError;
use crate::syntax::{json_type, parse_json_object};

/// The syntax's name in messages.
pub const SYNTAX: &str = "canonical JSON";

/// Prints an action as compact canonical JSON.
pub fn to_canonical_json(action: &Action) -> String {
    // Serializing these types cannot fail: every map key is a string and no custom Serialize
    // impl returns an error.
    serde_json::to_string(action).unwrap_or_default()
}

/// Parses canonical JSON.
pub fn from_canonical_json(text: &str) -> Result<Action, ParseError> {
    let object = parse_json_object(SYNTAX, text)?;
    from_canonical_value(Value::Object(object))
}

/// Reads an action from an already-parsed JSON value.
pub fn from_canonical_value(value: Value) -> Result<Action, ParseError> {
    // Check the tag first: serde's own message for a missing or misspelt tag does not say what
    // the tag is or which values it takes.
    let kinds = || Action::KINDS.join(", ");
    match value.get("action") {
        None => {
            return Err(ParseError::invalid(SYNTAX, format!("missing `action` (one of {})", kinds())));
        }
        Some(Value::String(kind)) if !Action::KINDS.contains(&kind.as_str()) => {
            return Err(ParseError::invalid(
                SYNTAX,
                format!("unknown action `{kind}`; expected one of {}", kinds()),
            ));
        }
        Some(Value::String(_)) => {}
        Some(other) => {
            return Err(ParseError::invalid(
                SYNTAX,
                format!("`action` must be a string, got {}", json_type(other)),
            ));
        }
    }
    serde_json::from_value(value).map_err(|e| ParseError::invalid(SYNTAX, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::{Direction, FinishStatus, Key, Point, Swipe, Target};

    fn round_trip(action: Action, json: &str) {
        assert_eq!(to_canonical_json(&action), json);
        assert_eq!(from_canonical_json(json).unwrap(), action);
    }

    #[test]
    fn every_kind_has_a_stable_form() {
        round_trip(Action::Tap { target: Target::Index(3) }, r#"{"action":"tap","target":{"index":3}}"#);
        round_trip(
            Action::DoubleTap { target: Target::Point(Point::new(1, 2)) },
            r#"{"action":"double_tap","target":{"x":1,"y":2}}"#,
        );
        round_trip(
            Action::LongPress { target: Target::Description("the first mail".into()) },
            r#"{"action":"long_press","target":{"description":"the first mail"}}"#,
        );
        round_trip(
            Action::Type { text: "hi".into(), target: None, clear: false, enter: true },
            r#"{"action":"type","text":"hi","enter":true}"#,
        );
        round_trip(
            Action::Swipe(Swipe::Direction { direction: Direction::Up, target: Some(Target::Index(2)) }),
            r#"{"action":"swipe","direction":"up","target":{"index":2}}"#,
        );
        round_trip(
            Action::Swipe(Swipe::Between { from: Point::new(1, 2), to: Point::new(3, 4) }),
            r#"{"action":"swipe","from":{"x":1,"y":2},"to":{"x":3,"y":4}}"#,
        );
        round_trip(
            Action::Scroll { direction: Direction::Down, target: None },
            r#"{"action":"scroll","direction":"down"}"#,
        );
        round_trip(Action::Key { key: Key::AppSwitch }, r#"{"action":"key","key":"app_switch"}"#);
        round_trip(
            Action::Key { key: Key::Other("CAMERA".into()) },
            r#"{"action":"key","key":"KEYCODE_CAMERA"}"#,
        );
        round_trip(Action::RestartApp { app: None }, r#"{"action":"restart_app"}"#);
        round_trip(Action::Wait { ms: Some(500) }, r#"{"action":"wait","ms":500}"#);
        round_trip(
            Action::Finish { status: FinishStatus::Infeasible, reason: None },
            r#"{"action":"finish","status":"infeasible"}"#,
        );
        round_trip(
            Action::Finish { status: FinishStatus::Infeasible, reason: Some("no such channel".into()) },
            r#"{"action":"finish","status":"infeasible","reason":"no such channel"}"#,
        );
        let mut arguments = serde_json::Map::new();
        arguments.insert("zeta".into(), 1.into());
        arguments.insert("alpha".into(), "x".into());
        round_trip(
            Action::McpCall { tool: "search".into(), arguments },
            r#"{"action":"mcp_call","tool":"search","arguments":{"zeta":1,"alpha":"x"}}"#,
        );
    }

    #[test]
    fn keys_accept_keycode_names() {
        let a = from_canonical_json(r#"{"action":"key","key":"KEYCODE_DEL"}"#).unwrap();
        assert_eq!(a, Action::Key { key: Key::Backspace });
    }

    #[test]
    fn malformed_input_names_the_problem() {
        let e = |t: &str| from_canonical_json(t).unwrap_err().to_string();
        assert!(e(r#"{"target":{"index":1}}"#).contains("missing `action`"));
        assert!(e(r#"{"action":"tapp"}"#).contains("unknown action `tapp`"));
        assert!(e(r#"{"action":3}"#).contains("`action` must be a string, got a number"));
        assert!(e(r#"{"action":"tap"}"#).contains("missing field `target`"));
        assert!(e(r#"{"action":"tap","target":{"index":1},"extra":1}"#).contains("unknown field `extra`"));
        assert!(e(r#"{"action":"tap","target":{"index":-1}}"#).contains("-1"));
        assert!(e(r#"{"action":"tap","target":{"x":1}}"#).contains("`x` but no `y`"));
        assert!(e(r#"{"action":"tap","target":{"index":1,"x":1,"y":2}}"#).contains("mixes forms"));
        assert!(e(r#"{"action":"tap","target":{"description":"  "}}"#).contains("empty"));
        assert!(e(r#"{"action":"swipe"}"#).contains("swipe needs `direction`"));
        assert!(e(r#"{"action":"swipe","from":{"x":1,"y":2}}"#).contains("`to` is missing"));
        assert!(e(r#"{"action":"swipe","direction":"up","from":{"x":1,"y":2}}"#).contains("mixes forms"));
        assert!(e(r#"{"action":"swipe","direction":"sideways"}"#).contains("sideways"));
        assert!(e(r#"{"action":"key","key":"hyperspace"}"#).contains("unknown key `hyperspace`"));
        assert!(e(r#"{"action":"type","text":"a","clear":"yes"}"#).contains("expected a boolean"));
        assert!(e("[]").contains("expected a JSON object"));
    }
}
