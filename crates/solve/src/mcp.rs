//! MCP tool calls in the search: the task's built-in (offline, in-process, deterministic)
//! servers, called as a run's MCP session calls them, and the calls worth trying on a state.
//!
//! A server's state may change with calls (the tracker's new issues), and a search jumps between
//! paths, so a call's reply is computed on fresh servers with the path's earlier calls replayed
//! first: the same reply a run gives at that point. A task that names a server which is not
//! built in (an external one) gets no tool calls; [`Tools::missing`] says which.

use phonebench_actions::Action;
use phonebench_env::{McpCallRecord, McpReply};
use phonebench_mcp::client::{result_text, truncate};
use phonebench_mcp::{McpConfig, OfflineHandler, Transport, exposed_name};
use phonebench_tasks::TaskInstance;
use serde_json::{Map, Value};

use crate::text::{GoalWords, TextCandidate};

/// Tool calls tried per tool on one state at most (argument combinations).
pub const MAX_CALLS_PER_TOOL: usize = 6;

/// Values tried per argument at most.
const MAX_VALUES_PER_ARGUMENT: usize = 4;

/// One tool of a built-in server.
#[derive(Debug, Clone)]
struct Tool {
    /// The name agents call it by (`finance_convert`).
    exposed: String,
    /// Its name on its server (`convert`).
    remote: String,
    /// Which server (index into [`Tools::servers`]).
    server: usize,
    /// Words of its name, to favour tools the goal names.
    words: Vec<String>,
    schema: Value,
    /// What an agent is told of it: its description and its argument schema, as text.
    told: String,
}

/// The task's built-in MCP servers and their tools.
#[derive(Debug, Clone, Default)]
pub struct Tools {
    /// (built-in name, seed) per server, in the task's order.
    servers: Vec<(String, u64)>,
    tools: Vec<Tool>,
    max_result_chars: usize,
    /// Servers the task names that are not built in (no calls are made to them).
    pub missing: Vec<String>,
}

impl Tools {
    /// The tools of `instance`'s servers as `config` resolves them (as a run connects them),
    /// only those the task exposes when it lists some.
    pub fn for_task(instance: &TaskInstance, config: &McpConfig) -> Tools {
        let mut out = Tools { max_result_chars: config.max_result_chars, ..Tools::default() };
        for name in &instance.mcp_servers {
            let Ok(Transport::Builtin { builtin, seed }) = config.transport(name) else {
                out.missing.push(name.clone());
                continue;
            };
            let Some(server) = phonebench_mcp::builtin(&builtin, seed) else {
                out.missing.push(name.clone());
                continue;
            };
            let index = out.servers.len();
            out.servers.push((builtin.clone(), seed));
            for def in server.tools() {
                let exposed = exposed_name(name, def.name);
                if !instance.mcp_tools.is_empty() && !instance.mcp_tools.contains(&exposed) {
                    continue;
                }
                out.tools.push(Tool {
                    exposed,
                    remote: def.name.to_string(),
                    server: index,
                    words: crate::text::words(&def.name.replace('_', " ")),
                    schema: def.input_schema.clone(),
                    told: format!("{} {}", def.description, def.input_schema),
                });
            }
        }
        out
    }

    /// Whether there is any tool to call.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// What an agent is told of the tools before it calls any: each one's description and
    /// argument schema (a route's `mode` choices), as text.
    pub fn told(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.told.as_str())
    }

    /// Whether `exposed` is one of the tools (a built-in server's, exposed to the task).
    pub fn has(&self, exposed: &str) -> bool {
        self.tools.iter().any(|t| t.exposed == exposed)
    }

    /// What calling `tool` with `arguments` answers after the path's `earlier` calls, as a run's
    /// MCP session reports it.
    pub fn reply(&self, earlier: &[McpCallRecord], tool: &str, arguments: &Map<String, Value>) -> McpReply {
        let handlers: Vec<Option<OfflineHandler>> = self
            .servers
            .iter()
            .map(|(name, seed)| phonebench_mcp::builtin(name, *seed).map(OfflineHandler::new))
            .collect();
        let call = |tool: &str, arguments: &Map<String, Value>| -> Option<McpReply> {
            let t = self.tools.iter().find(|t| t.exposed == tool)?;
            let handler = handlers.get(t.server)?.as_ref()?;
            let result = handler.call(&t.remote, Some(arguments));
            let (text, truncated) = truncate(result_text(&result), self.max_result_chars);
            let is_error = result.is_error == Some(true);
            Some(McpReply {
                text: if is_error { format!("error: {text}") } else { text },
                is_error,
                truncated,
                failure: None,
                latency_ms: 0,
            })
        };
        for c in earlier {
            let _ = call(&c.tool, &c.arguments);
        }
        call(tool, arguments).unwrap_or_else(|| McpReply {
            text: format!("error: no MCP tool `{tool}`"),
            is_error: true,
            ..McpReply::default()
        })
    }

    /// The calls worth trying with `texts` (the goal's and what the path learnt): each tool
    /// with its required arguments filled from the texts named like the argument (`amount` from
    /// the parameter `x.amount`), else from the argument's choices, else from the unnamed texts
    /// (the goal's quoted strings and numbers, replies); at most [`MAX_CALLS_PER_TOOL`] each, none
    /// the path already made. The cost is lower for tools the goal names.
    pub fn calls(
        &self,
        texts: &[&TextCandidate],
        goal: &GoalWords,
        made: &[McpCallRecord],
    ) -> Vec<(Action, bool)> {
        let mut out = Vec::new();
        for tool in &self.tools {
            let Some(sets) = arguments(&tool.schema, texts) else { continue };
            let named = goal.matches(&tool.words);
            for arguments in sets.into_iter().take(MAX_CALLS_PER_TOOL) {
                if made.iter().any(|c| c.tool == tool.exposed && c.arguments == arguments) {
                    continue;
                }
                out.push((Action::McpCall { tool: tool.exposed.clone(), arguments }, named));
            }
        }
        out
    }
}

/// The argument objects to try for `schema` (required properties only), or `None` when some
/// required property has no value to try.
fn arguments(schema: &Value, texts: &[&TextCandidate]) -> Option<Vec<Map<String, Value>>> {
    let empty = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut sets = vec![Map::new()];
    for name in required {
        let property = properties.get(name).cloned().unwrap_or(Value::Null);
        let kind = property.get("type").and_then(Value::as_str).unwrap_or("string");
        let choices: Vec<&str> = property
            .get("enum")
            .and_then(Value::as_array)
            .map(|c| c.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let typed = |t: &TextCandidate| -> Option<Value> {
            let text = t.text.trim();
            match kind {
                "number" => text.parse::<f64>().ok().and_then(|n| {
                    if n.fract() == 0.0 && n.abs() < 1e15 {
                        Some(Value::from(n as i64))
                    } else {
                        serde_json::Number::from_f64(n).map(Value::Number)
                    }
                }),
                "integer" => text.parse::<i64>().ok().map(Value::from),
                "string" => {
                    if choices.is_empty() {
                        Some(Value::from(text))
                    } else {
                        choices.iter().find(|c| c.eq_ignore_ascii_case(text)).map(|c| Value::from(*c))
                    }
                }
                _ => None,
            }
        };
        let lower = name.to_lowercase();
        let mut values: Vec<Value> = Vec::new();
        let add = |v: Value, values: &mut Vec<Value>| {
            if !values.contains(&v) && values.len() < MAX_VALUES_PER_ARGUMENT {
                values.push(v);
            }
        };
        for t in texts.iter().filter(|t| t.key.contains(&lower)) {
            if let Some(v) = typed(t) {
                add(v, &mut values);
            }
        }
        if values.is_empty() && !choices.is_empty() {
            for t in texts {
                if let Some(v) = typed(t) {
                    add(v, &mut values);
                }
            }
            if values.is_empty() {
                for c in &choices {
                    add(Value::from(*c), &mut values);
                }
            }
        }
        if values.is_empty() {
            for t in texts.iter().filter(|t| t.key.is_empty() || kind != "string") {
                if let Some(v) = typed(t) {
                    add(v, &mut values);
                }
            }
        }
        if values.is_empty() {
            return None;
        }
        let mut next = Vec::new();
        for set in &sets {
            for v in &values {
                let mut s = set.clone();
                s.insert(name.to_string(), v.clone());
                next.push(s);
                if next.len() >= MAX_CALLS_PER_TOOL {
                    break;
                }
            }
            if next.len() >= MAX_CALLS_PER_TOOL {
                break;
            }
        }
        sets = next;
    }
    Some(sets)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn named(text: &str, key: &[&str]) -> TextCandidate {
        TextCandidate { text: text.into(), key: key.iter().map(|k| k.to_string()).collect() }
    }

    #[test]
    fn arguments_come_from_texts_named_like_them_typed_by_the_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "amount": {"type": "number"},
                "from": {"type": "string"},
                "to": {"type": "string"},
                "note": {"type": "string"}
            },
            "required": ["amount", "from", "to"]
        });
        let texts =
            [named("120", &["x", "amount"]), named("EUR", &["x", "from"]), named("USD", &["x", "to"])];
        let refs: Vec<&TextCandidate> = texts.iter().collect();
        let sets = arguments(&schema, &refs).unwrap();
        assert_eq!(sets.len(), 1);
        assert_eq!(Value::Object(sets[0].clone()), json!({"amount": 120, "from": "EUR", "to": "USD"}));
        // A required argument nothing can fill: no call.
        let texts = [named("120", &["x", "amount"])];
        let refs: Vec<&TextCandidate> = texts.iter().collect();
        assert!(arguments(&schema, &refs).is_none());
    }

    #[test]
    fn a_reply_is_what_the_builtin_server_answers_as_a_session_reports_it() {
        let tools = Tools {
            servers: vec![("finance".into(), 0)],
            tools: phonebench_mcp::builtin("finance", 0)
                .unwrap()
                .tools()
                .into_iter()
                .map(|d| Tool {
                    exposed: exposed_name("finance", d.name),
                    remote: d.name.into(),
                    server: 0,
                    words: Vec::new(),
                    told: String::new(),
                    schema: d.input_schema,
                })
                .collect(),
            max_result_chars: 4000,
            missing: Vec::new(),
        };
        let args = json!({"amount": 120, "from": "EUR", "to": "USD"}).as_object().unwrap().clone();
        let reply = tools.reply(&[], "finance_convert", &args);
        assert!(!reply.is_error, "{}", reply.text);
        assert!(reply.text.contains("\"result\": 130.43"), "{}", reply.text);
        let bad = tools.reply(&[], "finance_nothing", &args);
        assert!(bad.is_error);
    }
}
