//! AndroidWorld's T3A (text) and M3A (multimodal) agents (`android_world/agents/t3a.py`,
//! `m3a.py`): per step an action-selection call (`Reason: …` / `Action: {json}`) and a summary
//! call that describes what the step did; the summaries are the history of later prompts.
//!
//! The summary of a step needs the screen after it, so it is made at the start of the next turn
//! (upstream makes it at the end of the same step; the calls and prompts are the same, and the
//! last step's summary, which nobody reads, is not made). M3A sends the raw screenshot and the
//! set-of-marks screenshot with the action prompt, and the before and after set-of-marks
//! screenshots with the summary prompt (without upstream's "after" label drawn on the image).
//! `answer` ends our episodes (MobileWorld's rule); upstream records it and waits for `status`.

use std::fmt::Write as _;
use std::sync::Arc;

use phonebench_actions::{Action, Syntax, Target, parse_action};
use phonebench_model::Message;
use phonebench_observe::androidworld::is_valid_element;
use phonebench_pixels::SomStyle;
use phonebench_uitree::Node;
use serde_json::{Value, json};

use super::parse::python_literal_to_json;
use super::{
    ConfigError, Design, ModelAgentSpec, ModelHandle, Templates, marked_screenshot_url, screenshot_url,
};
use crate::{Agent, AgentError, AgentInput, AgentOutput, BoxFuture, CallRecord, Usage};

/// History entry when the answer has no `Reason:` or `Action:`.
pub const NOT_IN_FORMAT: &str =
    "Output for action selection is not in the correct format, so no action is performed.";
/// T3A's history entry when the action JSON is not a valid action.
pub const T3A_CANNOT_PARSE: &str = "Can not parse the output to a valid action. Please make sure to pick the action from the list with the correct json format!";
/// M3A's history entry when the action JSON is not a valid action.
pub const M3A_CANNOT_PARSE: &str = "Can not parse the output to a valid action. Please make sure to pick the action from the list with required parameters (if any) in the correct JSON format!";
/// History entry when an index is not in the element list.
pub const INDEX_OUT_OF_RANGE: &str =
    "The parameter index is out of range. Remember the index must be in the UI element list!";
/// History entry when the agent says it is done.
pub const COMPLETED: &str = "Agent thinks the request has been completed.";

/// A step waiting for its summary.
#[derive(Debug, Clone)]
struct Pending {
    before_elements: String,
    before_marked: Option<(String, String)>,
    action: String,
    reason: String,
}

/// T3A or M3A.
#[derive(Debug)]
pub struct AndroidWorldAgent {
    name: String,
    templates: Arc<Templates>,
    model: ModelHandle,
    multimodal: bool,
    guidelines: Vec<String>,
    history: Vec<String>,
    pending: Option<Pending>,
    /// Lessons from earlier trials (set by the Reflexion wrapper).
    pub lessons: Vec<String>,
}

impl AndroidWorldAgent {
    /// An agent for one episode (`design` t3a or m3a).
    pub fn new(spec: &ModelAgentSpec) -> Result<AndroidWorldAgent, ConfigError> {
        let config = &spec.config;
        config.prompt("action")?;
        config.prompt("summary")?;
        Ok(AndroidWorldAgent {
            name: config.name.clone(),
            templates: spec.templates.clone(),
            model: spec.models.main.clone(),
            multimodal: config.design == Design::M3a
                || (config.design == Design::Reflexion && config.option_str("inner")? == Some("m3a")),
            guidelines: config.option_strings("guidelines")?,
            history: Vec::new(),
            pending: None,
            lessons: Vec::new(),
        })
    }

    /// Forgets the episode (a new trial starts), keeping lessons.
    pub fn reset(&mut self) {
        self.history.clear();
        self.pending = None;
    }

    fn elements(&self, input: &AgentInput) -> String {
        if self.multimodal { m3a_elements(input) } else { input.observation.text.clone() }
    }

    async fn summarize(&mut self, input: &AgentInput, calls: &mut Vec<CallRecord>) -> Result<(), AgentError> {
        let Some(pending) = self.pending.take() else { return Ok(()) };
        let prompt = self.templates.render(
            "summary",
            &json!({
                "goal": input.goal,
                "before_elements": pending.before_elements,
                "after_elements": self.elements(input),
                "action": pending.action,
                "reason": pending.reason,
            }),
        )?;
        let mut message = Message::user(prompt);
        if self.multimodal {
            if let Some((url, label)) = pending.before_marked {
                message = message.with_image(url, format!("before: {label}"));
            }
            let (url, label) = marked_screenshot_url(input, SomStyle::AndroidWorld)?;
            message = message.with_image(url, format!("after: {label}"));
        }
        let (response, record) = self.model.call("summary", vec![message]).await?;
        calls.push(record);
        self.history.push(format!("Action selected: {}. {}", pending.action, super::clip(&response.text())));
        Ok(())
    }

    async fn turn(&mut self, input: &AgentInput) -> Result<AgentOutput, AgentError> {
        let mut calls = Vec::new();
        self.summarize(input, &mut calls).await?;
        let elements = self.elements(input);
        let prompt = self.templates.render(
            "action",
            &json!({
                "goal": input.goal,
                "history": self.history,
                "ui_elements": elements,
                "additional_guidelines": self.guidelines,
                "lessons": self.lessons,
            }),
        )?;
        let mut message = Message::user(prompt);
        let mut before_marked = None;
        if self.multimodal {
            let (url, label) = screenshot_url(input)?;
            message = message.with_image(url, label);
            let marked = marked_screenshot_url(input, SomStyle::AndroidWorld)?;
            message = message.with_image(marked.0.clone(), marked.1.clone());
            before_marked = Some(marked);
        }
        let (response, record) = self.model.call("action", vec![message]).await?;
        calls.push(record);
        let text = response.text();
        let action = match reason_and_action(&text) {
            None => {
                self.history.push(NOT_IN_FORMAT.to_string());
                Err(NOT_IN_FORMAT.to_string())
            }
            Some((reason, action_json)) => match parse_action(&action_json, Syntax::AndroidWorld) {
                Err(e) => {
                    let entry = if self.multimodal { M3A_CANNOT_PARSE } else { T3A_CANNOT_PARSE };
                    self.history.push(entry.to_string());
                    Err(format!("{e}"))
                }
                Ok(action) => {
                    match &action {
                        Action::Finish { .. } => self.history.push(COMPLETED.to_string()),
                        a if index_out_of_range(a, input.observation.targets.len()) => {
                            // The environment rejects it; upstream records this instead of a summary.
                            self.history.push(INDEX_OUT_OF_RANGE.to_string());
                        }
                        _ => {
                            self.pending = Some(Pending {
                                before_elements: elements,
                                before_marked,
                                action: python_dumps(&action_json),
                                reason: super::clip(&reason),
                            })
                        }
                    }
                    Ok(action)
                }
            },
        };
        Ok(AgentOutput { text, action, usage: Usage::of_calls(&calls), calls, repaired_from: None })
    }
}

fn index_out_of_range(action: &Action, elements: usize) -> bool {
    action.primary_target().is_some_and(|t| matches!(t, Target::Index(i) if *i as usize >= elements))
}

/// AndroidWorld's `parse_reason_action_output` + `extract_json`: the reason runs from `Reason:`
/// to the last `Action:` (greedy), the action from the first `Action:`; its first `{…}`
/// (non-greedy) is read as a Python literal. `None` when the reason or the action is missing
/// (upstream's "not in the correct format").
pub fn reason_and_action(answer: &str) -> Option<(String, String)> {
    let reason_at = answer.find("Reason:")?;
    let last_action = answer.rfind("Action:")?;
    if last_action < reason_at {
        return None;
    }
    let reason = answer[reason_at + "Reason:".len()..last_action].trim().to_string();
    let first_action = answer.find("Action:")?;
    let action = answer[first_action + "Action:".len()..].trim();
    if reason.is_empty() || action.is_empty() {
        return None;
    }
    // No braced object: the text goes to the action parser as it is and fails there.
    let object = action.find('{').and_then(|start| Some(&action[start..=start + action[start..].find('}')?]));
    let json = object.map_or_else(|| action.to_string(), python_literal_to_json);
    Some((reason, json))
}

/// Python's `json.dumps` of a JSON text (`", "` and `": "` separators, non-ASCII escaped), which
/// is how AndroidWorld stores the action in its summaries; the text itself if it is not JSON.
pub fn python_dumps(json_text: &str) -> String {
    fn write(v: &Value, out: &mut String) {
        match v {
            Value::Object(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_str(k, out);
                    out.push_str(": ");
                    write(v, out);
                }
                out.push('}');
            }
            Value::Array(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write(v, out);
                }
                out.push(']');
            }
            Value::String(s) => write_str(s, out),
            other => out.push_str(&other.to_string()),
        }
    }
    fn write_str(s: &str, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                    let mut buf = [0u16; 2];
                    for unit in c.encode_utf16(&mut buf) {
                        let _ = write!(out, "\\u{unit:04x}");
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
    match serde_json::from_str::<Value>(json_text) {
        Ok(v) => {
            let mut out = String::new();
            write(&v, &mut out);
            out
        }
        Err(_) => json_text.to_string(),
    }
}

/// M3A's `_generate_ui_element_description` for every valid element of the input's AndroidWorld
/// index table (global indexes kept), one line each.
pub fn m3a_elements(input: &AgentInput) -> String {
    let screen = input.tree.screen_bounds();
    let mut out = String::new();
    for (index, &id) in input.observation.targets.iter().enumerate() {
        let node = input.tree.node(id);
        if is_valid_element(node, &screen) {
            out.push_str(&m3a_element(node, index));
            out.push('\n');
        }
    }
    out
}

/// One M3A element line. Values are inserted raw, as upstream does (a `"` in a text is not
/// escaped).
pub fn m3a_element(node: &Node, index: usize) -> String {
    let b = |v: bool| if v { "True" } else { "False" };
    let mut d = format!("UI element {index}: {{\"index\": {index}, ");
    if !node.text.is_empty() {
        let _ = write!(d, "\"text\": \"{}\", ", node.text);
    }
    if !node.content_desc.is_empty() {
        let _ = write!(d, "\"content_description\": \"{}\", ", node.content_desc);
    }
    if let Some(hint) = node.hint.as_deref().filter(|h| !h.is_empty()) {
        let _ = write!(d, "\"hint_text\": \"{hint}\", ");
    }
    let _ = write!(d, "\"is_clickable\": {}, ", b(node.clickable));
    let _ = write!(d, "\"is_long_clickable\": {}, ", b(node.long_clickable));
    let _ = write!(d, "\"is_editable\": {}, ", b(node.is_editable()));
    if node.scrollable {
        d.push_str("\"is_scrollable\": True, ");
    }
    if node.focusable {
        d.push_str("\"is_focusable\": True, ");
    }
    let _ = write!(d, "\"is_selected\": {}, ", b(node.selected));
    let _ = write!(d, "\"is_checked\": {}, ", b(node.checked));
    d.truncate(d.len() - 2);
    d.push('}');
    d
}

impl Agent for AndroidWorldAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn act<'a>(&'a mut self, input: &'a AgentInput) -> BoxFuture<'a, Result<AgentOutput, AgentError>> {
        Box::pin(self.turn(input))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phonebench_uitree::Bounds;

    #[test]
    fn reason_runs_to_the_last_action_and_the_action_from_the_first() {
        let (r, a) = reason_and_action("Reason: tap\nAction: {'action_type': 'click', 'index': 3}").unwrap();
        assert_eq!((r.as_str(), a.as_str()), ("tap", r#"{"action_type": "click", "index": 3}"#));
        assert!(reason_and_action("Action: {\"action_type\": \"wait\"}").is_none(), "no reason");
        assert!(reason_and_action("Reason: x").is_none(), "no action");
        let (_, a) = reason_and_action("Reason: x\nAction: click 3").unwrap();
        assert_eq!(a, "click 3", "no braces: the parser reports it");
    }

    #[test]
    fn json_dumps_like_python() {
        assert_eq!(
            python_dumps(r#"{"action_type":"input_text","text":"café","index":2}"#),
            r#"{"action_type": "input_text", "text": "caf\u00e9", "index": 2}"#
        );
        assert_eq!(python_dumps("not json"), "not json");
    }

    #[test]
    fn m3a_lines_match_upstream() {
        let mut n = Node::new("android.widget.TextView", "p", Bounds::new(0, 0, 10, 10));
        n.text = "Wi-Fi".into();
        n.focusable = true;
        assert_eq!(
            m3a_element(&n, 5),
            r#"UI element 5: {"index": 5, "text": "Wi-Fi", "is_clickable": False, "is_long_clickable": False, "is_editable": False, "is_focusable": True, "is_selected": False, "is_checked": False}"#
        );
    }
}
