//! The canonical action: one vocabulary for every agent, syntax and backend.
//!
//! Every accepted syntax (SPHINX, AndroidWorld/MobileWorld JSON, canonical JSON) parses into
//! [`Action`]; every backend (simulated phone, real device) executes [`Action`]. The serde
//! representation of these types *is* the canonical JSON syntax, see `docs/actions.md`.

use serde::{Deserialize, Serialize};

/// A point on the screen in device pixels (the coordinate space of the UI tree's bounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point {
    /// Pixels from the left edge.
    pub x: i32,
    /// Pixels from the top edge.
    pub y: i32,
}

impl Point {
    /// A point at `(x, y)`.
    pub const fn new(x: i32, y: i32) -> Self {
        Self { x, y }
    }
}

/// What an action is aimed at.
///
/// Canonical JSON: `{"index": 3}`, `{"x": 120, "y": 340}` or `{"description": "the send button"}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "TargetRepr", into = "TargetRepr")]
pub enum Target {
    /// An element index from the current observation's index table.
    Index(u32),
    /// A screen point; resolved by hit-testing the UI tree.
    Point(Point),
    /// A natural-language description; resolved by a grounding model.
    Description(String),
}

/// The flat wire form of [`Target`], so that a malformed target gets a message naming the problem
/// instead of serde's "data did not match any variant".
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetRepr {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    index: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    x: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    y: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
}

impl TryFrom<TargetRepr> for Target {
    type Error = String;

    fn try_from(repr: TargetRepr) -> Result<Self, Self::Error> {
        match repr {
            TargetRepr { index: Some(index), x: None, y: None, description: None } => {
                Ok(Target::Index(index))
            }
            TargetRepr { index: None, x: Some(x), y: Some(y), description: None } => {
                Ok(Target::Point(Point { x, y }))
            }
            TargetRepr { index: None, x: None, y: None, description: Some(d) } => {
                if d.trim().is_empty() {
                    Err("target `description` is empty".to_string())
                } else {
                    Ok(Target::Description(d))
                }
            }
            TargetRepr { index: None, x: Some(_), y: None, description: None } => {
                Err("target has `x` but no `y`".to_string())
            }
            TargetRepr { index: None, x: None, y: Some(_), description: None } => {
                Err("target has `y` but no `x`".to_string())
            }
            TargetRepr { index: None, x: None, y: None, description: None } => {
                Err("target is empty: give `index`, `x` and `y`, or `description`".to_string())
            }
            _ => {
                Err("target mixes forms: give exactly one of `index`, `x`+`y`, or `description`".to_string())
            }
        }
    }
}

impl From<Target> for TargetRepr {
    fn from(target: Target) -> Self {
        let mut repr = TargetRepr { index: None, x: None, y: None, description: None };
        match target {
            Target::Index(i) => repr.index = Some(i),
            Target::Point(p) => {
                repr.x = Some(p.x);
                repr.y = Some(p.y);
            }
            Target::Description(d) => repr.description = Some(d),
        }
        repr
    }
}

/// A direction on the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Towards the top edge.
    Up,
    /// Towards the bottom edge.
    Down,
    /// Towards the left edge.
    Left,
    /// Towards the right edge.
    Right,
}

impl Direction {
    /// The lower-case name used by every syntax (`up`, `down`, `left`, `right`).
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Up => "up",
            Direction::Down => "down",
            Direction::Left => "left",
            Direction::Right => "right",
        }
    }

    /// The opposite direction (a scroll that reveals lower content is a finger swipe upwards).
    pub fn opposite(self) -> Self {
        match self {
            Direction::Up => Direction::Down,
            Direction::Down => Direction::Up,
            Direction::Left => Direction::Right,
            Direction::Right => Direction::Left,
        }
    }
}

/// A hardware or soft key.
///
/// Canonical JSON: the lower-case name (`"back"`, `"app_switch"`), or `"KEYCODE_<NAME>"` for any
/// other Android key code.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Key {
    /// KEYCODE_BACK.
    Back,
    /// KEYCODE_HOME: go to the launcher.
    Home,
    /// KEYCODE_ENTER.
    Enter,
    /// KEYCODE_DEL: delete the character before the cursor.
    Backspace,
    /// KEYCODE_FORWARD_DEL: delete the character after the cursor.
    Delete,
    /// KEYCODE_TAB.
    Tab,
    /// KEYCODE_ESCAPE.
    Escape,
    /// KEYCODE_SPACE.
    Space,
    /// KEYCODE_MENU.
    Menu,
    /// KEYCODE_APP_SWITCH: the recents overview.
    AppSwitch,
    /// KEYCODE_SEARCH.
    Search,
    /// KEYCODE_VOLUME_UP.
    VolumeUp,
    /// KEYCODE_VOLUME_DOWN.
    VolumeDown,
    /// KEYCODE_POWER.
    Power,
    /// Any other Android key code, stored without the `KEYCODE_` prefix (upper case, `[A-Z0-9_]+`).
    Other(String),
}

/// Named keys and their Android key-code suffixes, in one table so parsing and printing agree.
const NAMED_KEYS: &[(Key, &str, &str)] = &[
    (Key::Back, "back", "BACK"),
    (Key::Home, "home", "HOME"),
    (Key::Enter, "enter", "ENTER"),
    (Key::Backspace, "backspace", "DEL"),
    (Key::Delete, "delete", "FORWARD_DEL"),
    (Key::Tab, "tab", "TAB"),
    (Key::Escape, "escape", "ESCAPE"),
    (Key::Space, "space", "SPACE"),
    (Key::Menu, "menu", "MENU"),
    (Key::AppSwitch, "app_switch", "APP_SWITCH"),
    (Key::Search, "search", "SEARCH"),
    (Key::VolumeUp, "volume_up", "VOLUME_UP"),
    (Key::VolumeDown, "volume_down", "VOLUME_DOWN"),
    (Key::Power, "power", "POWER"),
];

impl Key {
    /// The canonical name: `back`, `app_switch`, … or `KEYCODE_<NAME>` for [`Key::Other`].
    pub fn name(&self) -> String {
        match self {
            Key::Other(code) => format!("KEYCODE_{code}"),
            named => NAMED_KEYS
                .iter()
                .find(|(k, _, _)| k == named)
                .map(|(_, name, _)| (*name).to_string())
                .unwrap_or_default(),
        }
    }

    /// The Android key code name, e.g. `KEYCODE_BACK`.
    pub fn keycode(&self) -> String {
        match self {
            Key::Other(code) => format!("KEYCODE_{code}"),
            named => NAMED_KEYS
                .iter()
                .find(|(k, _, _)| k == named)
                .map(|(_, _, code)| format!("KEYCODE_{code}"))
                .unwrap_or_default(),
        }
    }

    /// Parses a canonical name (`back`), a key-code name (`KEYCODE_BACK`, `keycode_back`) or a
    /// bare key-code suffix (`DEL`). Case-insensitive.
    pub fn parse(text: &str) -> Result<Key, String> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err("key name is empty".to_string());
        }
        let lower = trimmed.to_ascii_lowercase();
        if let Some((key, _, _)) = NAMED_KEYS.iter().find(|(_, name, _)| *name == lower) {
            return Ok(key.clone());
        }
        let upper = trimmed.to_ascii_uppercase();
        let code = upper.strip_prefix("KEYCODE_").unwrap_or(&upper);
        if let Some((key, _, _)) = NAMED_KEYS.iter().find(|(_, _, c)| *c == code) {
            return Ok(key.clone());
        }
        let valid = !code.is_empty()
            && code.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        if valid && upper.starts_with("KEYCODE_") {
            Ok(Key::Other(code.to_string()))
        } else {
            Err(format!(
                "unknown key `{trimmed}`: use one of back, home, enter, backspace, delete, tab, \
                 escape, space, menu, app_switch, search, volume_up, volume_down, power, \
                 or an Android KEYCODE_<NAME>"
            ))
        }
    }
}

impl TryFrom<String> for Key {
    type Error = String;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Key::parse(&value)
    }
}

impl From<Key> for String {
    fn from(key: Key) -> Self {
        key.name()
    }
}

/// How an episode ends when the agent says it is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishStatus {
    /// The agent believes the goal is reached.
    Complete,
    /// The agent believes the goal cannot be reached.
    Infeasible,
}

/// A swipe: the finger's motion (not the content's; see [`Action::Scroll`] for that).
///
/// Canonical JSON: `{"action":"swipe","direction":"up","target":{"index":3}}` or
/// `{"action":"swipe","from":{"x":1,"y":2},"to":{"x":3,"y":4}}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "SwipeRepr", into = "SwipeRepr")]
pub enum Swipe {
    /// A finger motion in `direction`.
    Direction {
        /// Which way the finger moves.
        direction: Direction,
        /// Where: an element (the finger travels from 2/3 to 1/3 of its extent along the axis,
        /// through its centre, as SPHINX executes it), a point (the finger starts there, as
        /// MobileWorld executes it), or `None` for the whole screen (AndroidWorld).
        target: Option<Target>,
    },
    /// A finger motion between two points.
    Between {
        /// Where the finger goes down.
        from: Point,
        /// Where the finger lifts.
        to: Point,
    },
}

/// The flat wire form of [`Swipe`], so that a malformed swipe gets a message naming the problem.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SwipeRepr {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    direction: Option<Direction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    target: Option<Target>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    from: Option<Point>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    to: Option<Point>,
}

impl TryFrom<SwipeRepr> for Swipe {
    type Error = String;

    fn try_from(repr: SwipeRepr) -> Result<Self, Self::Error> {
        match repr {
            SwipeRepr { direction: Some(direction), target, from: None, to: None } => {
                Ok(Swipe::Direction { direction, target })
            }
            SwipeRepr { direction: None, target: None, from: Some(from), to: Some(to) } => {
                Ok(Swipe::Between { from, to })
            }
            SwipeRepr { direction: None, target: None, from: None, to: None } => {
                Err("swipe needs `direction` (optionally with `target`) or `from` and `to`".to_string())
            }
            SwipeRepr { direction: None, from: None, to: None, .. } => {
                Err("swipe has a `target` but no `direction`".to_string())
            }
            SwipeRepr { direction: None, target: None, from, .. } => Err(format!(
                "swipe between points needs both `from` and `to`; `{}` is missing",
                if from.is_none() { "from" } else { "to" }
            )),
            _ => Err("swipe mixes forms: give `direction` (and `target`), or `from` and `to`".to_string()),
        }
    }
}

impl From<Swipe> for SwipeRepr {
    fn from(swipe: Swipe) -> Self {
        match swipe {
            Swipe::Direction { direction, target } => {
                SwipeRepr { direction: Some(direction), target, from: None, to: None }
            }
            Swipe::Between { from, to } => {
                SwipeRepr { direction: None, target: None, from: Some(from), to: Some(to) }
            }
        }
    }
}

/// One thing an agent does on the phone (or says to the harness).
///
/// Canonical JSON is internally tagged by `"action"`, e.g.
/// `{"action":"tap","target":{"index":3}}` or `{"action":"type","text":"hi","enter":true}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// A single tap.
    Tap {
        /// What is tapped.
        target: Target,
    },
    /// Two quick taps.
    DoubleTap {
        /// What is tapped.
        target: Target,
    },
    /// A press held long enough to trigger long-click.
    LongPress {
        /// What is pressed.
        target: Target,
    },
    /// Type text into the focused field, or first tap `target` to focus it.
    Type {
        /// The text, typed verbatim: it is data, never a template or query.
        text: String,
        /// The field to tap first; `None` types into whatever has focus.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<Target>,
        /// Clear the field's content before typing.
        #[serde(default, skip_serializing_if = "is_false")]
        clear: bool,
        /// Press Enter after typing.
        #[serde(default, skip_serializing_if = "is_false")]
        enter: bool,
    },
    /// A finger swipe.
    Swipe(Swipe),
    /// Scroll content: `down` reveals content further down (the finger moves up).
    Scroll {
        /// Which way the content moves into view.
        direction: Direction,
        /// The scrollable element; `None` means the main scrollable area / whole screen.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<Target>,
    },
    /// Press, move and release: drag-and-drop.
    Drag {
        /// Where the drag starts.
        from: Target,
        /// Where it ends.
        to: Target,
    },
    /// Press a key.
    Key {
        /// Which key.
        key: Key,
    },
    /// Open (or bring to front) an app by its name or package.
    OpenApp {
        /// The app's label (e.g. "Contacts") or package.
        app: String,
    },
    /// Force-stop and start an app again; `None` means the app in the foreground.
    RestartApp {
        /// The app's label or package.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        app: Option<String>,
    },
    /// Do nothing for a while (let the screen settle).
    Wait {
        /// How long, in milliseconds; `None` means the backend's default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ms: Option<u64>,
    },
    /// Give the answer to an information-retrieval goal.
    Answer {
        /// The answer text.
        text: String,
    },
    /// End the episode.
    Finish {
        /// Whether the agent thinks the goal was reached.
        status: FinishStatus,
        /// Why, in the agent's words (the reason a goal is infeasible); syntaxes without a place
        /// for it leave it out.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Ask the (simulated) user a question.
    AskUser {
        /// The question.
        text: String,
    },
    /// Call an MCP tool.
    McpCall {
        /// The tool's name.
        tool: String,
        /// The tool's arguments (a JSON object).
        #[serde(default)]
        arguments: serde_json::Map<String, serde_json::Value>,
    },
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// An MCP tool an agent may call with [`Action::McpCall`]: what the tool's server declared, under
/// the name the agent calls it by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpTool {
    /// The name to call it by (`geo_route`: the server's name, `_`, the tool's own name).
    pub name: String,
    /// What it does, as the server said.
    pub description: String,
    /// The JSON Schema of its arguments, as the server sent it.
    pub input_schema: serde_json::Value,
}

impl Action {
    /// Every kind's canonical name, in declaration order (what [`Action::kind`] returns).
    pub const KINDS: [&'static str; 15] = [
        "tap",
        "double_tap",
        "long_press",
        "type",
        "swipe",
        "scroll",
        "drag",
        "key",
        "open_app",
        "restart_app",
        "wait",
        "answer",
        "finish",
        "ask_user",
        "mcp_call",
    ];

    /// The canonical name of this action's kind (`tap`, `type`, `swipe`, …), as in canonical JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Action::Tap { .. } => "tap",
            Action::DoubleTap { .. } => "double_tap",
            Action::LongPress { .. } => "long_press",
            Action::Type { .. } => "type",
            Action::Swipe(_) => "swipe",
            Action::Scroll { .. } => "scroll",
            Action::Drag { .. } => "drag",
            Action::Key { .. } => "key",
            Action::OpenApp { .. } => "open_app",
            Action::RestartApp { .. } => "restart_app",
            Action::Wait { .. } => "wait",
            Action::Answer { .. } => "answer",
            Action::Finish { .. } => "finish",
            Action::AskUser { .. } => "ask_user",
            Action::McpCall { .. } => "mcp_call",
        }
    }

    /// The element or point the action is primarily aimed at, if any (for a drag: where it starts).
    pub fn primary_target(&self) -> Option<&Target> {
        match self {
            Action::Tap { target } | Action::DoubleTap { target } | Action::LongPress { target } => {
                Some(target)
            }
            Action::Type { target, .. } | Action::Scroll { target, .. } => target.as_ref(),
            Action::Swipe(Swipe::Direction { target, .. }) => target.as_ref(),
            Action::Swipe(Swipe::Between { .. }) => None,
            Action::Drag { from, .. } => Some(from),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_lists_every_variant_in_order() {
        let target = || Target::Index(0);
        let one_of_each = [
            Action::Tap { target: target() },
            Action::DoubleTap { target: target() },
            Action::LongPress { target: target() },
            Action::Type { text: String::new(), target: None, clear: false, enter: false },
            Action::Swipe(Swipe::Between { from: Point::new(0, 0), to: Point::new(1, 1) }),
            Action::Scroll { direction: Direction::Down, target: None },
            Action::Drag { from: target(), to: target() },
            Action::Key { key: Key::Back },
            Action::OpenApp { app: "Clock".into() },
            Action::RestartApp { app: None },
            Action::Wait { ms: None },
            Action::Answer { text: String::new() },
            Action::Finish { status: FinishStatus::Complete, reason: None },
            Action::AskUser { text: String::new() },
            Action::McpCall { tool: "t".into(), arguments: serde_json::Map::new() },
        ];
        let kinds: Vec<&str> = one_of_each.iter().map(Action::kind).collect();
        assert_eq!(kinds, Action::KINDS);
    }
}
