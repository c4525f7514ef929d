//! AndroidWorld and MobileWorld action JSON: `{"action_type": "click", "index": 3}`.
//!
//! Both benchmarks validate a `JSONAction` with the same core fields (`action_type`, `index`,
//! `x`, `y`, `text`, `direction`, `goal_status`, `app_name`, `keycode`, `clear_text`);
//! MobileWorld adds `start_x`, `start_y`, `end_x`, `end_y`, `action_name`, `action_json` and the
//! action types `drag`, `ask_user`, `mcp` and `finished`. Reading follows their validators:
//! - `null` fields are absent; `index` may be an integer or a string of digits and excludes
//!   `x`/`y`; coordinates may be floats and are rounded half to even (Python's `round`);
//!   `text` may be a number (stringified, as both do); `direction` is `up|down|left|right`;
//!   `keycode` must start with `KEYCODE_`;
//! - unknown fields are an error in AndroidWorld (its dataclass rejects unexpected keyword
//!   arguments) and ignored in MobileWorld (pydantic's default);
//! - fields an action type does not use are ignored, as both executors ignore them;
//! - `unknown` (what agents emit when their own parsing failed) is [`ParseError::NoAction`].
//!
//! Where the two executors differ, the canonical action records what the dialect does:
//! AndroidWorld's `input_text` taps the target first and **always presses Enter**; MobileWorld's
//! types into the focused field and never presses Enter. `scroll` reveals content in
//! `direction` (the finger moves the other way) in both; `swipe` is the finger's motion.
//! Stricter than upstream: `status` must say `complete` or `infeasible`, and a negative `index`
//! is an error (Python would count it from the end of the element list).

use serde_json::{Map, Number, Value};

use crate::action::{Action, Direction, FinishStatus, Key, Point, Swipe, Target};
use crate::error::{ParseError, PrintError};
use crate::syntax::{json_type, parse_json_object};

/// Which benchmark's `JSONAction` a text follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonDialect {
    /// google-research/android_world `env/json_action.py`.
    AndroidWorld,
    /// Tongyi-MAI/MobileWorld `runtime/utils/models.py`.
    MobileWorld,
}

impl JsonDialect {
    /// The dialect's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            JsonDialect::AndroidWorld => "AndroidWorld JSON",
            JsonDialect::MobileWorld => "MobileWorld JSON",
        }
    }

    /// Whether `action_type` exists in this dialect.
    fn has_action_type(self, action_type: &str) -> bool {
        ANDROIDWORLD_TYPES.contains(&action_type)
            || (self == JsonDialect::MobileWorld && MOBILEWORLD_ONLY_TYPES.contains(&action_type))
    }

    /// The dialect's action types, for messages.
    fn action_types(self) -> String {
        let only = if self == JsonDialect::MobileWorld { &MOBILEWORLD_ONLY_TYPES[..] } else { &[] };
        ANDROIDWORLD_TYPES.iter().chain(only).copied().collect::<Vec<_>>().join(", ")
    }

    /// The dialect's fields in declaration order (MobileWorld declares its own after
    /// AndroidWorld's), which is also the print order.
    fn fields(self) -> impl Iterator<Item = &'static str> {
        let only = if self == JsonDialect::MobileWorld { &MOBILEWORLD_ONLY_FIELDS[..] } else { &[] };
        ANDROIDWORLD_FIELDS.iter().chain(only).copied()
    }
}

const ANDROIDWORLD_TYPES: [&str; 14] = [
    "click",
    "double_tap",
    "scroll",
    "swipe",
    "input_text",
    "navigate_home",
    "navigate_back",
    "keyboard_enter",
    "open_app",
    "status",
    "wait",
    "long_press",
    "answer",
    "unknown",
];

const MOBILEWORLD_ONLY_TYPES: [&str; 4] = ["finished", "drag", "ask_user", "mcp"];

const ANDROIDWORLD_FIELDS: [&str; 10] = [
    "action_type",
    "index",
    "x",
    "y",
    "text",
    "direction",
    "goal_status",
    "app_name",
    "keycode",
    "clear_text",
];

const MOBILEWORLD_ONLY_FIELDS: [&str; 6] =
    ["start_x", "start_y", "end_x", "end_y", "action_name", "action_json"];

/// MobileWorld when the object uses an action type or field only MobileWorld has, AndroidWorld
/// otherwise (it is the original format).
pub fn detect_dialect(object: &Map<String, Value>) -> JsonDialect {
    let mobileworld_type = object
        .get("action_type")
        .and_then(Value::as_str)
        .is_some_and(|t| MOBILEWORLD_ONLY_TYPES.contains(&t));
    let mobileworld_field = MOBILEWORLD_ONLY_FIELDS.iter().any(|f| object.contains_key(*f));
    if mobileworld_type || mobileworld_field { JsonDialect::MobileWorld } else { JsonDialect::AndroidWorld }
}

/// Parses `{"action_type": …}` JSON in `dialect`.
pub fn parse_action_type_json(text: &str, dialect: JsonDialect) -> Result<Action, ParseError> {
    let object = parse_json_object(dialect.name(), text)?;
    action_from_object(&object, dialect)
}

/// Names for action types agents often write instead of the real ones.
fn alias_hint(action_type: &str) -> &'static str {
    match action_type.to_ascii_lowercase().as_str() {
        "tap" | "press" | "touch" => " (did you mean `click`?)",
        "type" | "input" | "write" | "text" => " (did you mean `input_text`?)",
        "back" | "go_back" | "press_back" => " (did you mean `navigate_back`?)",
        "home" | "go_home" | "press_home" => " (did you mean `navigate_home`?)",
        "enter" | "press_enter" => " (did you mean `keyboard_enter`?)",
        "longpress" | "long_click" | "longclick" => " (did you mean `long_press`?)",
        "fling" => " (did you mean `scroll`?)",
        "launch" | "launch_app" | "open" => " (did you mean `open_app`?)",
        "done" | "finish" | "stop" | "terminate" => " (did you mean `status`?)",
        _ => "",
    }
}

/// Reads one action object in `dialect`.
pub fn action_from_object(object: &Map<String, Value>, dialect: JsonDialect) -> Result<Action, ParseError> {
    let fields = Fields { object, dialect };
    if dialect == JsonDialect::AndroidWorld
        && let Some(unknown) = object.keys().find(|k| !ANDROIDWORLD_FIELDS.contains(&k.as_str()))
    {
        let where_from = if MOBILEWORLD_ONLY_FIELDS.contains(&unknown.as_str()) {
            " (it is a MobileWorld field)"
        } else {
            ""
        };
        return Err(fields.error(format!(
            "unknown field `{unknown}`{where_from}; AndroidWorld's JSONAction has {}",
            ANDROIDWORLD_FIELDS.join(", ")
        )));
    }
    let action_type = match object.get("action_type") {
        None | Some(Value::Null) => return Err(fields.error("missing `action_type`")),
        Some(Value::String(s)) => s.as_str(),
        Some(other) => {
            return Err(fields.error(format!("`action_type` must be a string, got {}", json_type(other))));
        }
    };
    if !dialect.has_action_type(action_type) {
        let where_from = if MOBILEWORLD_ONLY_TYPES.contains(&action_type) {
            " (it is a MobileWorld action type)"
        } else {
            alias_hint(action_type)
        };
        return Err(fields.error(format!(
            "unknown action_type `{action_type}`{where_from}; expected one of {}",
            dialect.action_types()
        )));
    }
    // Validated for every action type, as the upstream constructors do.
    let index = fields.index()?;
    let x = fields.coordinate("x")?;
    let y = fields.coordinate("y")?;
    if index.is_some() && (x.is_some() || y.is_some()) {
        return Err(fields.error("give either `index` or `x`/`y`, not both"));
    }
    let direction = fields.direction()?;
    if let Some(keycode) = fields.string("keycode")?
        && !keycode.starts_with("KEYCODE_")
    {
        return Err(fields.error(format!("`keycode` must start with KEYCODE_, got `{keycode}`")));
    }
    let target = match (index, x, y) {
        (Some(i), _, _) => Some(Target::Index(i)),
        (None, Some(x), Some(y)) => Some(Target::Point(Point::new(x, y))),
        (None, Some(_), None) => return Err(fields.error("`x` is given without `y`")),
        (None, None, Some(_)) => return Err(fields.error("`y` is given without `x`")),
        (None, None, None) => None,
    };
    let needs_target = |target: Option<Target>| {
        target.ok_or_else(|| fields.error(format!("`{action_type}` needs `index`, or both `x` and `y`")))
    };
    let needs_direction =
        || direction.ok_or_else(|| fields.error(format!("`{action_type}` needs `direction`")));
    let action = match action_type {
        "click" => Action::Tap { target: needs_target(target)? },
        "double_tap" => Action::DoubleTap { target: needs_target(target)? },
        "long_press" => Action::LongPress { target: needs_target(target)? },
        "input_text" => Action::Type {
            text: fields.required_text()?,
            target,
            clear: fields.boolean("clear_text")?.unwrap_or(false),
            enter: dialect == JsonDialect::AndroidWorld,
        },
        "scroll" => Action::Scroll { direction: needs_direction()?, target },
        "swipe" => Action::Swipe(Swipe::Direction { direction: needs_direction()?, target }),
        "navigate_home" => Action::Key { key: Key::Home },
        "navigate_back" => Action::Key { key: Key::Back },
        "keyboard_enter" => Action::Key { key: Key::Enter },
        "open_app" => match fields.string("app_name")? {
            Some(app) if !app.trim().is_empty() => Action::OpenApp { app },
            _ => return Err(fields.error("`open_app` needs a non-empty `app_name`")),
        },
        "status" => Action::Finish {
            status: fields
                .goal_status()?
                .ok_or_else(|| fields.error("`status` needs `goal_status` (complete or infeasible)"))?,
            reason: None,
        },
        "finished" => {
            Action::Finish { status: fields.goal_status()?.unwrap_or(FinishStatus::Complete), reason: None }
        }
        "wait" => Action::Wait { ms: None },
        "answer" => Action::Answer { text: fields.required_text()? },
        "ask_user" => Action::AskUser { text: fields.required_text()? },
        "drag" => {
            let point = |xk: &str, yk: &str| -> Result<Point, ParseError> {
                match (fields.coordinate(xk)?, fields.coordinate(yk)?) {
                    (Some(x), Some(y)) => Ok(Point::new(x, y)),
                    _ => Err(fields.error("`drag` needs `start_x`, `start_y`, `end_x` and `end_y`")),
                }
            };
            Action::Drag {
                from: Target::Point(point("start_x", "start_y")?),
                to: Target::Point(point("end_x", "end_y")?),
            }
        }
        "mcp" => {
            let tool = match fields.string("action_name")? {
                Some(tool) if !tool.trim().is_empty() => tool,
                _ => return Err(fields.error("`mcp` needs the tool's name in `action_name`")),
            };
            let arguments = match object.get("action_json") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(map)) => map.clone(),
                Some(other) => {
                    return Err(fields.error(format!(
                        "`action_json` must be an object of tool arguments, got {}",
                        json_type(other)
                    )));
                }
            };
            Action::McpCall { tool, arguments }
        }
        _ => return Err(ParseError::NoAction { syntax: dialect.name() }),
    };
    Ok(action)
}

/// Typed access to the fields of one action object, with messages naming the field.
struct Fields<'a> {
    object: &'a Map<String, Value>,
    dialect: JsonDialect,
}

impl Fields<'_> {
    fn error(&self, message: impl Into<String>) -> ParseError {
        ParseError::invalid(self.dialect.name(), message)
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.object.get(key).filter(|v| !v.is_null())
    }

    fn string(&self, key: &str) -> Result<Option<String>, ParseError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.error(format!("`{key}` must be a string, got {}", json_type(other)))),
        }
    }

    /// `text`: both benchmarks stringify non-string values; numbers print as Python would.
    fn required_text(&self) -> Result<String, ParseError> {
        let action_type = self.object.get("action_type").and_then(Value::as_str).unwrap_or("");
        match self.get("text") {
            None => Err(self.error(format!("`{action_type}` needs `text`"))),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Number(n)) => Ok(n.to_string()),
            Some(Value::Bool(b)) => Ok(if *b { "True" } else { "False" }.to_string()),
            Some(other) => Err(self.error(format!("`text` must be a string, got {}", json_type(other)))),
        }
    }

    fn boolean(&self, key: &str) -> Result<Option<bool>, ParseError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => {
                Err(self.error(format!("`{key}` must be true or false, got {}", json_type(other))))
            }
        }
    }

    fn index(&self) -> Result<Option<u32>, ParseError> {
        let bad = |shown: String| {
            self.error(format!("`index` must be a non-negative integer element index, got {shown}"))
        };
        match self.get("index") {
            None => Ok(None),
            Some(Value::Number(n)) => {
                if let Some(i) = n.as_u64() {
                    u32::try_from(i).map(Some).map_err(|_| bad(n.to_string()))
                } else if let Some(f) =
                    n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= f64::from(u32::MAX))
                {
                    // `int(3.0)` is 3 upstream.
                    Ok(Some(f as u32))
                } else {
                    Err(bad(n.to_string()))
                }
            }
            Some(Value::String(s)) => s.trim().parse::<u32>().map(Some).map_err(|_| bad(format!("`{s}`"))),
            Some(other) => Err(bad(json_type(other).to_string())),
        }
    }

    fn coordinate(&self, key: &str) -> Result<Option<i32>, ParseError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => round_coordinate(n)
                .map(Some)
                .ok_or_else(|| self.error(format!("`{key}` = {n} is not a screen coordinate"))),
            Some(other) => Err(self.error(format!("`{key}` must be a number, got {}", json_type(other)))),
        }
    }

    fn direction(&self) -> Result<Option<Direction>, ParseError> {
        let Some(value) = self.string("direction")? else { return Ok(None) };
        let direction = match value.as_str() {
            "up" => Direction::Up,
            "down" => Direction::Down,
            "left" => Direction::Left,
            "right" => Direction::Right,
            _ => {
                return Err(
                    self.error(format!("invalid `direction` `{value}`; expected up, down, left or right"))
                );
            }
        };
        Ok(Some(direction))
    }

    fn goal_status(&self) -> Result<Option<FinishStatus>, ParseError> {
        match self.string("goal_status")?.as_deref() {
            None => Ok(None),
            Some("complete") => Ok(Some(FinishStatus::Complete)),
            Some("infeasible") => Ok(Some(FinishStatus::Infeasible)),
            Some(other) => {
                Err(self.error(format!("invalid `goal_status` `{other}`; expected complete or infeasible")))
            }
        }
    }
}

/// Python's `round`: to the nearest integer, ties to even.
fn round_coordinate(n: &Number) -> Option<i32> {
    if let Some(i) = n.as_i64() {
        return i32::try_from(i).ok();
    }
    let f = n.as_f64()?.round_ties_even();
    (f.is_finite() && f >= f64::from(i32::MIN) && f <= f64::from(i32::MAX)).then_some(f as i32)
}

fn not_expressible(action: &Action, dialect: JsonDialect, reason: impl Into<String>) -> PrintError {
    PrintError { syntax: dialect.name(), action: action.kind(), reason: reason.into() }
}

/// Prints an action as `{"action_type": …}` JSON in `dialect`, or says why it cannot. Parsing the
/// output in the same dialect gives the action back.
pub fn to_action_type_json(action: &Action, dialect: JsonDialect) -> Result<String, PrintError> {
    let err = |reason: &str| Err(not_expressible(action, dialect, reason));
    let mobileworld = dialect == JsonDialect::MobileWorld;
    let mut out = Map::new();
    let mut put = |key: &str, value: Value| {
        out.insert(key.to_string(), value);
    };
    let target_fields = |target: &Target| -> Result<Vec<(&'static str, Value)>, PrintError> {
        match target {
            Target::Index(i) => Ok(vec![("index", Value::from(*i))]),
            Target::Point(p) => Ok(vec![("x", Value::from(p.x)), ("y", Value::from(p.y))]),
            Target::Description(_) => Err(not_expressible(
                action,
                dialect,
                "targets are element indexes or points; a description needs grounding first",
            )),
        }
    };
    match action {
        Action::Tap { target } | Action::DoubleTap { target } | Action::LongPress { target } => {
            let kind = match action {
                Action::Tap { .. } => "click",
                Action::DoubleTap { .. } => "double_tap",
                _ => "long_press",
            };
            put("action_type", kind.into());
            for (k, v) in target_fields(target)? {
                put(k, v);
            }
        }
        Action::Type { text, target, clear, enter } => {
            // The dialect decides Enter; an action that disagrees is not expressible.
            let dialect_presses_enter = !mobileworld;
            if *enter != dialect_presses_enter {
                return err(if mobileworld {
                    "MobileWorld's input_text never presses Enter; follow it with keyboard_enter"
                } else {
                    "AndroidWorld's input_text always presses Enter"
                });
            }
            put("action_type", "input_text".into());
            if let Some(target) = target {
                for (k, v) in target_fields(target)? {
                    put(k, v);
                }
            }
            put("text", text.as_str().into());
            if *clear {
                put("clear_text", true.into());
            }
        }
        Action::Scroll { direction, target } | Action::Swipe(Swipe::Direction { direction, target }) => {
            put(
                "action_type",
                if matches!(action, Action::Scroll { .. }) { "scroll" } else { "swipe" }.into(),
            );
            if let Some(target) = target {
                for (k, v) in target_fields(target)? {
                    put(k, v);
                }
            }
            put("direction", direction.as_str().into());
        }
        Action::Swipe(Swipe::Between { .. }) => {
            return err("swipes go in a direction; a point-to-point motion is a MobileWorld `drag`");
        }
        Action::Drag { from: Target::Point(from), to: Target::Point(to) } if mobileworld => {
            put("action_type", "drag".into());
            put("start_x", from.x.into());
            put("start_y", from.y.into());
            put("end_x", to.x.into());
            put("end_y", to.y.into());
        }
        Action::Drag { .. } if mobileworld => return err("MobileWorld drags only between points"),
        Action::Key { key } => {
            let kind = match key {
                Key::Back => "navigate_back",
                Key::Home => "navigate_home",
                Key::Enter => "keyboard_enter",
                _ => return err("only back, home and enter have action types"),
            };
            put("action_type", kind.into());
        }
        Action::OpenApp { app } => {
            put("action_type", "open_app".into());
            put("app_name", app.as_str().into());
        }
        Action::Wait { ms: None } => put("action_type", "wait".into()),
        Action::Wait { ms: Some(_) } => return err("`wait` has no duration"),
        Action::Answer { text } => {
            put("action_type", "answer".into());
            put("text", text.as_str().into());
        }
        Action::Finish { reason: Some(_), .. } => {
            return err("`status` has no field for a reason (finish without one, or use canonical JSON)");
        }
        Action::Finish { status, reason: None } => {
            put("action_type", "status".into());
            let status = match status {
                FinishStatus::Complete => "complete",
                FinishStatus::Infeasible => "infeasible",
            };
            put("goal_status", status.into());
        }
        Action::AskUser { text } if mobileworld => {
            put("action_type", "ask_user".into());
            put("text", text.as_str().into());
        }
        Action::McpCall { tool, arguments } if mobileworld => {
            put("action_type", "mcp".into());
            put("action_name", tool.as_str().into());
            put("action_json", Value::Object(arguments.clone()));
        }
        Action::RestartApp { .. } => return err("there is no restart action type"),
        Action::Drag { .. } | Action::AskUser { .. } | Action::McpCall { .. } => {
            return err("AndroidWorld has no such action type (MobileWorld does)");
        }
    }
    // Print in declaration order, as the Python dataclass would serialize.
    let mut ordered = Map::new();
    for field in dialect.fields() {
        if let Some(value) = out.remove(field) {
            ordered.insert(field.to_string(), value);
        }
    }
    Ok(Value::Object(ordered).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const AW: JsonDialect = JsonDialect::AndroidWorld;
    const MW: JsonDialect = JsonDialect::MobileWorld;

    fn parse(text: &str, dialect: JsonDialect) -> Result<Action, ParseError> {
        parse_action_type_json(text, dialect)
    }

    fn message(text: &str, dialect: JsonDialect) -> String {
        parse(text, dialect).unwrap_err().to_string()
    }

    #[test]
    fn androidworld_actions() {
        assert_eq!(
            parse(r#"{"action_type":"click","index":5}"#, AW).unwrap(),
            Action::Tap { target: Target::Index(5) }
        );
        assert_eq!(
            parse(r#"{"action_type":"click","index":"5"}"#, AW).unwrap(),
            Action::Tap { target: Target::Index(5) }
        );
        assert_eq!(
            parse(r#"{"action_type":"click","index":5.0}"#, AW).unwrap(),
            Action::Tap { target: Target::Index(5) }
        );
        assert_eq!(
            parse(r#"{"action_type":"long_press","x":10.5,"y":11.5,"text":null}"#, AW).unwrap(),
            Action::LongPress { target: Target::Point(Point::new(10, 12)) }
        );
        assert_eq!(
            parse(r#"{"action_type":"input_text","text":"hello","index":2,"clear_text":true}"#, AW).unwrap(),
            Action::Type { text: "hello".into(), target: Some(Target::Index(2)), clear: true, enter: true }
        );
        assert_eq!(
            parse(r#"{"action_type":"input_text","text":42}"#, AW).unwrap(),
            Action::Type { text: "42".into(), target: None, clear: false, enter: true }
        );
        assert_eq!(
            parse(r#"{"action_type":"scroll","direction":"down"}"#, AW).unwrap(),
            Action::Scroll { direction: Direction::Down, target: None }
        );
        assert_eq!(parse(r#"{"action_type":"navigate_back"}"#, AW).unwrap(), Action::Key { key: Key::Back });
        assert_eq!(
            parse(r#"{"action_type":"status","goal_status":"infeasible"}"#, AW).unwrap(),
            Action::Finish { status: FinishStatus::Infeasible, reason: None }
        );
        assert_eq!(
            parse(r#"{"action_type":"open_app","app_name":"Contacts"}"#, AW).unwrap(),
            Action::OpenApp { app: "Contacts".into() }
        );
        assert_eq!(
            parse(r#"{"action_type":"unknown"}"#, AW).unwrap_err(),
            ParseError::NoAction { syntax: AW.name() }
        );
    }

    #[test]
    fn mobileworld_actions() {
        assert_eq!(
            parse(r#"{"action_type":"input_text","text":"hi"}"#, MW).unwrap(),
            Action::Type { text: "hi".into(), target: None, clear: false, enter: false }
        );
        assert_eq!(
            parse(r#"{"action_type":"drag","start_x":1,"start_y":2,"end_x":3.5,"end_y":4}"#, MW).unwrap(),
            Action::Drag { from: Target::Point(Point::new(1, 2)), to: Target::Point(Point::new(4, 4)) }
        );
        assert_eq!(
            parse(r#"{"action_type":"ask_user","text":"Which day?"}"#, MW).unwrap(),
            Action::AskUser { text: "Which day?".into() }
        );
        let Action::McpCall { tool, arguments } =
            parse(r#"{"action_type":"mcp","action_name":"amap_search","action_json":{"q":"cafe"}}"#, MW)
                .unwrap()
        else {
            panic!()
        };
        assert_eq!(tool, "amap_search");
        assert_eq!(arguments.get("q"), Some(&Value::from("cafe")));
        assert_eq!(
            parse(r#"{"action_type":"finished"}"#, MW).unwrap(),
            Action::Finish { status: FinishStatus::Complete, reason: None }
        );
        // MobileWorld ignores unknown fields; AndroidWorld rejects them.
        assert!(parse(r#"{"action_type":"wait","reason":"loading"}"#, MW).is_ok());
        assert!(
            message(r#"{"action_type":"wait","reason":"loading"}"#, AW).contains("unknown field `reason`")
        );
    }

    #[test]
    fn malformed_actions_name_the_problem() {
        assert!(message(r#"{"index":1}"#, AW).contains("missing `action_type`"));
        assert!(message(r#"{"action_type":5}"#, AW).contains("must be a string, got a number"));
        assert!(message(r#"{"action_type":"tap","index":1}"#, AW).contains("did you mean `click`"));
        assert!(message(r#"{"action_type":"drag"}"#, AW).contains("it is a MobileWorld action type"));
        assert!(message(r#"{"action_type":"click","start_x":1}"#, AW).contains("it is a MobileWorld field"));
        assert!(
            message(r#"{"action_type":"click"}"#, AW).contains("`click` needs `index`, or both `x` and `y`")
        );
        assert!(message(r#"{"action_type":"click","index":1,"x":2}"#, AW).contains("not both"));
        assert!(message(r#"{"action_type":"click","x":2}"#, AW).contains("`x` is given without `y`"));
        assert!(message(r#"{"action_type":"click","index":-1}"#, AW).contains("non-negative"));
        assert!(message(r#"{"action_type":"click","index":"two"}"#, AW).contains("`two`"));
        assert!(message(r#"{"action_type":"click","index":1.5}"#, AW).contains("1.5"));
        assert!(message(r#"{"action_type":"click","x":"1","y":2}"#, AW).contains("`x` must be a number"));
        assert!(message(r#"{"action_type":"click","x":1e12,"y":2}"#, AW).contains("not a screen coordinate"));
        assert!(message(r#"{"action_type":"scroll"}"#, AW).contains("`scroll` needs `direction`"));
        assert!(
            message(r#"{"action_type":"scroll","direction":"Down"}"#, AW)
                .contains("invalid `direction` `Down`")
        );
        assert!(message(r#"{"action_type":"input_text"}"#, AW).contains("`input_text` needs `text`"));
        assert!(
            message(r#"{"action_type":"input_text","text":[1]}"#, AW).contains("`text` must be a string")
        );
        assert!(
            message(r#"{"action_type":"input_text","text":"a","clear_text":"yes"}"#, AW)
                .contains("true or false")
        );
        assert!(message(r#"{"action_type":"open_app"}"#, AW).contains("non-empty `app_name`"));
        assert!(message(r#"{"action_type":"status"}"#, AW).contains("needs `goal_status`"));
        assert!(message(r#"{"action_type":"status","goal_status":"done"}"#, AW).contains("`done`"));
        assert!(message(r#"{"action_type":"wait","keycode":"BACK"}"#, AW).contains("KEYCODE_"));
        assert!(message(r#"{"action_type":"drag","start_x":1}"#, MW).contains("end_y"));
        assert!(message(r#"{"action_type":"mcp"}"#, MW).contains("`action_name`"));
        assert!(
            message(r#"{"action_type":"mcp","action_name":"t","action_json":"{}"}"#, MW).contains("object")
        );
    }

    #[test]
    fn printing_in_declaration_order() {
        let t = |a: Action, d| to_action_type_json(&a, d);
        assert_eq!(
            t(
                Action::Type { text: "x".into(), target: Some(Target::Index(2)), clear: true, enter: true },
                AW
            )
            .unwrap(),
            r#"{"action_type":"input_text","index":2,"text":"x","clear_text":true}"#
        );
        assert!(t(Action::Type { text: "x".into(), target: None, clear: false, enter: true }, MW).is_err());
        // A reason has no place in `status`: refused, not dropped.
        let reasoned =
            Action::Finish { status: FinishStatus::Infeasible, reason: Some("no such channel".into()) };
        assert!(t(reasoned, AW).unwrap_err().to_string().contains("reason"));
        assert_eq!(
            t(Action::Scroll { direction: Direction::Up, target: Some(Target::Point(Point::new(1, 2))) }, AW)
                .unwrap(),
            r#"{"action_type":"scroll","x":1,"y":2,"direction":"up"}"#
        );
        assert!(
            t(Action::AskUser { text: "?".into() }, AW).unwrap_err().to_string().contains("MobileWorld does")
        );
        assert_eq!(
            t(Action::AskUser { text: "?".into() }, MW).unwrap(),
            r#"{"action_type":"ask_user","text":"?"}"#
        );
        assert!(t(Action::Key { key: Key::Menu }, AW).is_err());
        assert!(t(Action::Tap { target: Target::Description("x".into()) }, AW).is_err());
    }
}
