//! The offline tool servers shipped with phonebench: maps, weather, finance and an issue tracker.
//!
//! Each is plain data plus pure functions (no clock, no network, no randomness beyond a seeded
//! hash), so an MCP task scores the same on every machine. [`OfflineServer`] is the logic;
//! [`crate::serve::OfflineHandler`] puts any of them on MCP (in-process, stdio or streamable HTTP).
//! Their content ties to the apps' seeds: the places are the Calendar events' locations and the
//! Contacts' towns, the weather covers those towns, the tracker's people are the Contacts.

mod finance;
mod geo;
mod tracker;
mod weather;

use serde_json::{Map, Value, json};

/// Names of the built-in servers, as tasks and `--mcp-server` name them.
pub const BUILTIN_SERVERS: [&str; 4] = ["geo", "weather", "finance", "tracker"];

/// One tool as a server declares it.
#[derive(Debug, Clone)]
pub struct ToolDef {
    /// Name (unique within its server).
    pub name: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// JSON Schema of its arguments (an object schema).
    pub input_schema: Value,
}

/// A tool call the server refuses (bad arguments, unknown item): the text goes back to the caller
/// as an MCP tool error (`isError: true`), which is the agent's to read, not a server failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(pub String);

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The logic of an offline server. `call` may change the server's own state (the tracker's new
/// issues); a fresh server (one per episode) starts from the seeded data again.
pub trait OfflineServer: Send {
    /// The server's name (`geo`, …).
    fn name(&self) -> &'static str;
    /// What the server is for (the MCP `instructions`).
    fn instructions(&self) -> &'static str;
    /// Its tools.
    fn tools(&self) -> Vec<ToolDef>;
    /// Calls `tool` with `arguments` (already checked against the tool's schema).
    fn call(&mut self, tool: &str, arguments: &Map<String, Value>) -> Result<Value, ToolError>;
}

/// A fresh built-in server by name, its data drawn from `seed` where it varies (weather);
/// `None` for a name that is not built in.
pub fn builtin(name: &str, seed: u64) -> Option<Box<dyn OfflineServer>> {
    Some(match name {
        "geo" => Box::new(geo::Geo::new()),
        "weather" => Box::new(weather::Weather::new(seed)),
        "finance" => Box::new(finance::Finance::new()),
        "tracker" => Box::new(tracker::Tracker::new()),
        _ => return None,
    })
}

/// Checks `arguments` against a tool's object schema: required properties present, no unknown
/// ones, each of the declared JSON type (`string`, `integer`, `number`, `boolean`, `array`), and
/// strings from an `enum` when one is given. What a schema validator would say, for the subset of
/// JSON Schema our tools use.
pub fn check_arguments(schema: &Value, arguments: &Map<String, Value>) -> Result<(), ToolError> {
    let empty = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !arguments.contains_key(name) {
                return Err(ToolError(format!("missing required argument `{name}`")));
            }
        }
    }
    for (name, value) in arguments {
        let Some(property) = properties.get(name) else {
            let known: Vec<&str> = properties.keys().map(String::as_str).collect();
            return Err(ToolError(format!("unknown argument `{name}` (arguments: {})", known.join(", "))));
        };
        let expected = property.get("type").and_then(Value::as_str).unwrap_or("string");
        let fits = match expected {
            "string" => value.is_string(),
            "integer" => value.as_i64().is_some() || value.as_u64().is_some(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            _ => true,
        };
        if !fits {
            return Err(ToolError(format!("argument `{name}` must be of type {expected}, not {value}")));
        }
        if let (Some(choices), Some(text)) = (property.get("enum").and_then(Value::as_array), value.as_str())
            && !choices.iter().any(|c| c.as_str() == Some(text))
        {
            let names: Vec<String> = choices.iter().map(|c| c.to_string()).collect();
            return Err(ToolError(format!("argument `{name}` must be one of {}", names.join(", "))));
        }
    }
    Ok(())
}

/// An object schema from `(name, type, description)` triples and the required names.
fn object_schema(properties: &[(&str, &str, &str)], required: &[&str]) -> Value {
    let mut map = Map::new();
    for (name, kind, description) in properties {
        map.insert((*name).to_string(), json!({ "type": kind, "description": description }));
    }
    json!({ "type": "object", "properties": map, "required": required, "additionalProperties": false })
}

/// Adds an `enum` to a property of an object schema built by [`object_schema`].
fn with_enum(mut schema: Value, property: &str, choices: &[&str]) -> Value {
    if let Some(p) = schema.pointer_mut(&format!("/properties/{property}")).and_then(Value::as_object_mut) {
        p.insert("enum".into(), json!(choices));
    }
    schema
}

/// A string argument (the schema check has made sure it is one when present).
fn text<'a>(arguments: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    arguments.get(name).and_then(Value::as_str)
}

/// A required string argument.
fn required<'a>(arguments: &'a Map<String, Value>, name: &str) -> Result<&'a str, ToolError> {
    text(arguments, name).ok_or_else(|| ToolError(format!("missing required argument `{name}`")))
}

/// Case- and space-insensitive form for name matching.
fn fold(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// Finds the one item whose name matches `wanted`: an exact (folded) match first, then the only
/// item containing it; otherwise an error listing what might have been meant.
fn find_one<'a, T>(
    items: &'a [T],
    name: impl Fn(&T) -> &str,
    wanted: &str,
    what: &str,
) -> Result<&'a T, ToolError> {
    let w = fold(wanted);
    if w.is_empty() {
        return Err(ToolError(format!("the {what} name is empty")));
    }
    if let Some(hit) = items.iter().find(|i| fold(name(i)) == w) {
        return Ok(hit);
    }
    let partial: Vec<&T> = items.iter().filter(|i| fold(name(i)).contains(&w)).collect();
    match partial.as_slice() {
        [one] => Ok(one),
        [] => Err(ToolError(format!("no {what} named \"{wanted}\""))),
        many => {
            let names: Vec<String> = many.iter().take(8).map(|i| format!("\"{}\"", name(i))).collect();
            Err(ToolError(format!("\"{wanted}\" matches several: {}; say which {what}", names.join(", "))))
        }
    }
}

/// SplitMix64: the seeded hash behind generated values.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// FNV-1a of a string, to key generated values by name.
fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Rounds to `places` decimals (for figures shown to agents).
fn round(x: f64, places: i32) -> f64 {
    let p = 10f64.powi(places);
    (x * p).round() / p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_check_names_the_problem() {
        let schema = with_enum(
            object_schema(
                &[("city", "string", "c"), ("days", "integer", "d"), ("mode", "string", "m")],
                &["city"],
            ),
            "mode",
            &["drive", "walk"],
        );
        let args = |v: Value| v.as_object().cloned().unwrap_or_default();
        assert!(check_arguments(&schema, &args(json!({"city": "Riverton", "days": 3}))).is_ok());
        let e = check_arguments(&schema, &args(json!({"days": 3}))).unwrap_err();
        assert!(e.0.contains("`city`"), "{e}");
        let e = check_arguments(&schema, &args(json!({"city": 4}))).unwrap_err();
        assert!(e.0.contains("type string"), "{e}");
        let e = check_arguments(&schema, &args(json!({"city": "x", "zip": 1}))).unwrap_err();
        assert!(e.0.contains("unknown argument `zip`"), "{e}");
        let e = check_arguments(&schema, &args(json!({"city": "x", "mode": "fly"}))).unwrap_err();
        assert!(e.0.contains("one of"), "{e}");
        let e = check_arguments(&schema, &args(json!({"city": "x", "days": 1.5}))).unwrap_err();
        assert!(e.0.contains("integer"), "{e}");
    }

    #[test]
    fn names_match_exactly_then_uniquely() {
        let items = ["Cafe Lumen", "City Pool", "Concert Hall"];
        assert_eq!(*find_one(&items, |s| s, "cafe  lumen", "place").unwrap(), "Cafe Lumen");
        assert_eq!(*find_one(&items, |s| s, "pool", "place").unwrap(), "City Pool");
        assert!(find_one(&items, |s| s, "c", "place").unwrap_err().0.contains("several"));
        assert!(find_one(&items, |s| s, "zoo", "place").unwrap_err().0.contains("no place"));
    }

    #[test]
    fn every_builtin_server_declares_valid_tools() {
        for name in BUILTIN_SERVERS {
            let server = builtin(name, 0).unwrap();
            assert_eq!(server.name(), name);
            let tools = server.tools();
            assert!(tools.len() >= 3, "{name}");
            for t in tools {
                assert_eq!(t.input_schema["type"], "object", "{name}.{}", t.name);
                assert!(!t.description.is_empty());
                assert!(t.name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{}", t.name);
            }
        }
        assert!(builtin("nope", 0).is_none());
    }
}
