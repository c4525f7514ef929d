//! Choosing the syntax an action is written in, detecting it, and dispatching to its parser.

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use crate::action::Action;
use crate::error::{ParseError, PrintError};
use crate::json_action::JsonDialect;
use crate::{canonical, json_action, sphinx};

/// The syntaxes an action can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Syntax {
    /// Detect: text starting with `{` is JSON (see [`Syntax::Json`]), anything else SPHINX.
    Auto,
    /// SPHINX: `click [3]`, `text [3] [hello]`, `press [back]`, `click [120,340]`.
    Sphinx,
    /// Detect the JSON kind: an `"action"` key is canonical; an `"action_type"` key is
    /// MobileWorld when the action type or a field exists only there (`drag`, `ask_user`, `mcp`,
    /// `finished`, `start_x`…, `action_name`, `action_json`), AndroidWorld otherwise.
    Json,
    /// Our canonical JSON: `{"action":"tap","target":{"index":3}}`.
    Canonical,
    /// AndroidWorld's `JSONAction`: `{"action_type":"click","index":3}`.
    AndroidWorld,
    /// MobileWorld's `JSONAction` (AndroidWorld's plus drag, ask_user, mcp, finished).
    MobileWorld,
}

impl Syntax {
    /// Every syntax, in the order the CLI lists them.
    pub const ALL: [Syntax; 6] = [
        Syntax::Auto,
        Syntax::Sphinx,
        Syntax::Json,
        Syntax::Canonical,
        Syntax::AndroidWorld,
        Syntax::MobileWorld,
    ];

    /// The syntax's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Syntax::Auto => "auto",
            Syntax::Sphinx => "sphinx",
            Syntax::Json => "json",
            Syntax::Canonical => "canonical",
            Syntax::AndroidWorld => "androidworld",
            Syntax::MobileWorld => "mobileworld",
        }
    }
}

impl fmt::Display for Syntax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A syntax name that is not one of [`Syntax::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown action syntax `{0}`; expected one of auto, sphinx, json, canonical, androidworld, mobileworld"
)]
pub struct UnknownSyntax(pub String);

impl FromStr for Syntax {
    type Err = UnknownSyntax;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Syntax::ALL.into_iter().find(|x| x.name() == s).ok_or_else(|| UnknownSyntax(s.to_string()))
    }
}

/// Which SPHINX target forms an agent may use (upstream runs in one mode per episode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SphinxMode {
    /// Both `[i]` and `[x,y]` (the default: the form tells them apart).
    #[default]
    Any,
    /// Only element indexes, as upstream's `id` action mode.
    Index,
    /// Only coordinates, as upstream's `coordination` action mode.
    Coordinates,
}

/// How strictly to parse. The default reproduces each upstream parser exactly, so format-error
/// rates agree with the original benchmarks.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ParseOptions {
    /// SPHINX: which target forms are accepted.
    pub sphinx_mode: SphinxMode,
    /// SPHINX: `press [home]` restarts the app, as upstream executes it (default), instead of
    /// pressing Home.
    pub sphinx_home_restarts: bool,
    /// SPHINX: accept near misses upstream rejects (any case, any blanks between the parts,
    /// spaces inside coordinates). Off by default.
    pub lenient: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions { sphinx_mode: SphinxMode::Any, sphinx_home_restarts: true, lenient: false }
    }
}

/// Parses an action with the default (upstream-exact) options.
pub fn parse_action(text: &str, syntax: Syntax) -> Result<Action, ParseError> {
    parse_action_with(text, syntax, &ParseOptions::default())
}

/// Parses an action written in `syntax` (or detected, for [`Syntax::Auto`] and [`Syntax::Json`]).
pub fn parse_action_with(text: &str, syntax: Syntax, options: &ParseOptions) -> Result<Action, ParseError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(ParseError::Empty);
    }
    match syntax {
        Syntax::Auto if text.starts_with('{') => parse_any_json(text),
        Syntax::Auto | Syntax::Sphinx => sphinx::parse_sphinx(text, options),
        Syntax::Json => parse_any_json(text),
        Syntax::Canonical => canonical::from_canonical_json(text),
        Syntax::AndroidWorld => json_action::parse_action_type_json(text, JsonDialect::AndroidWorld),
        Syntax::MobileWorld => json_action::parse_action_type_json(text, JsonDialect::MobileWorld),
    }
}

/// The concrete syntax [`Syntax::Auto`] / [`Syntax::Json`] would read `text` as, or `None` when
/// the text is JSON of no known kind (or not valid JSON although it starts with `{`).
pub fn detect_syntax(text: &str) -> Option<Syntax> {
    let text = text.trim();
    if !text.starts_with('{') {
        return Some(Syntax::Sphinx);
    }
    let value: Value = serde_json::from_str(text).ok()?;
    json_kind(value.as_object()?).ok()
}

fn json_kind(object: &Map<String, Value>) -> Result<Syntax, ParseError> {
    match (object.contains_key("action"), object.contains_key("action_type")) {
        (true, false) => Ok(Syntax::Canonical),
        (false, true) => Ok(match json_action::detect_dialect(object) {
            JsonDialect::AndroidWorld => Syntax::AndroidWorld,
            JsonDialect::MobileWorld => Syntax::MobileWorld,
        }),
        (true, true) => Err(ParseError::invalid(
            "JSON",
            "the object has both `action` (canonical) and `action_type` (AndroidWorld/MobileWorld); give one",
        )),
        (false, false) => Err(ParseError::invalid(
            "JSON",
            "the object has no `action` (canonical) or `action_type` (AndroidWorld/MobileWorld) key",
        )),
    }
}

fn parse_any_json(text: &str) -> Result<Action, ParseError> {
    let value = parse_json_object("JSON", text)?;
    match json_kind(&value)? {
        Syntax::Canonical => canonical::from_canonical_value(Value::Object(value)),
        Syntax::MobileWorld => json_action::action_from_object(&value, JsonDialect::MobileWorld),
        _ => json_action::action_from_object(&value, JsonDialect::AndroidWorld),
    }
}

/// Parses `text` as one JSON object, with serde_json's line and column on failure.
pub(crate) fn parse_json_object(syntax: &'static str, text: &str) -> Result<Map<String, Value>, ParseError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| ParseError::invalid(syntax, format!("not valid JSON: {e}")))?;
    match value {
        Value::Object(map) => Ok(map),
        other => {
            Err(ParseError::invalid(syntax, format!("expected a JSON object, got {}", json_type(&other))))
        }
    }
}

/// `a string`, `an array`… for messages.
pub fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Prints `action` in a concrete syntax. [`Syntax::Auto`] and [`Syntax::Json`] print canonical
/// JSON.
pub fn print_action(action: &Action, syntax: Syntax) -> Result<String, PrintError> {
    match syntax {
        Syntax::Auto | Syntax::Json | Syntax::Canonical => Ok(canonical::to_canonical_json(action)),
        Syntax::Sphinx => sphinx::to_sphinx(action),
        Syntax::AndroidWorld => json_action::to_action_type_json(action, JsonDialect::AndroidWorld),
        Syntax::MobileWorld => json_action::to_action_type_json(action, JsonDialect::MobileWorld),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::{Key, Target};

    #[test]
    fn detection() {
        assert_eq!(detect_syntax("click [1]"), Some(Syntax::Sphinx));
        assert_eq!(detect_syntax(r#"{"action":"tap","target":{"index":1}}"#), Some(Syntax::Canonical));
        assert_eq!(detect_syntax(r#"{"action_type":"click","index":1}"#), Some(Syntax::AndroidWorld));
        assert_eq!(detect_syntax(r#"{"action_type":"ask_user","text":"?"}"#), Some(Syntax::MobileWorld));
        assert_eq!(detect_syntax(r#"{"action_type":"drag","start_x":1}"#), Some(Syntax::MobileWorld));
        assert_eq!(detect_syntax(r#"{"x":1}"#), None);
        assert_eq!(detect_syntax("{oops"), None);
    }

    #[test]
    fn auto_dispatches_to_each_syntax() {
        let tap = Action::Tap { target: Target::Index(1) };
        for text in [
            "click [1]",
            r#"{"action":"tap","target":{"index":1}}"#,
            r#" {"action_type":"click","index":"1"} "#,
        ] {
            assert_eq!(parse_action(text, Syntax::Auto).unwrap(), tap, "{text}");
        }
        assert_eq!(parse_action("press [back]", Syntax::Sphinx).unwrap(), Action::Key { key: Key::Back });
    }

    #[test]
    fn json_errors_name_the_problem() {
        let e = parse_action(r#"{"action":"tap","action_type":"click"}"#, Syntax::Json).unwrap_err();
        assert!(e.to_string().contains("both `action`"), "{e}");
        let e = parse_action(r#"{"index":3}"#, Syntax::Auto).unwrap_err();
        assert!(e.to_string().contains("no `action`"), "{e}");
        let e = parse_action("{\"action_type\": \"click\",", Syntax::Auto).unwrap_err();
        assert!(e.to_string().contains("not valid JSON") && e.to_string().contains("line 1"), "{e}");
        let e = parse_action("[1, 2]", Syntax::Json).unwrap_err();
        assert!(e.to_string().contains("expected a JSON object, got an array"), "{e}");
        assert_eq!(parse_action(" \n ", Syntax::Auto).unwrap_err(), ParseError::Empty);
    }

    #[test]
    fn syntax_names_round_trip() {
        for s in Syntax::ALL {
            assert_eq!(s.name().parse::<Syntax>().unwrap(), s);
        }
        assert!("xml".parse::<Syntax>().unwrap_err().to_string().contains("unknown action syntax `xml`"));
    }
}
