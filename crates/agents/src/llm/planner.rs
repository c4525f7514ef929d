//! MobileWorld's planner–executor (`agents/implementations/planner_executor.py`): a planner model
//! sees the screenshots and answers `Thought: … Action: {json}`, naming the elements it acts on
//! in words (`"target": "the search bar"`); a grounding model (UI-Ins, `agents/grounding/uiins.py`)
//! turns each described target into a point on the screenshot.
//!
//! The conversation: the system prompt, the first screenshot, then per earlier step the
//! planner's whole reply and the next observation (the screenshot, or the tool result / the
//! user's answer when the step produced one). Only the last `history_images` screenshots are
//! sent; older ones become "(Previous turn, screen not shown)".
//!
//! Differences from upstream: `status` finishes the episode as complete or infeasible (upstream
//! answers "task finished"/"task failed"); the grounding point is mapped back from the resized
//! image to the screen (`rescale = false` reproduces upstream); a planner answer that does not
//! parse after `parse_attempts` calls is a format error (upstream crashes); a grounding reply
//! without a point is a format error (upstream taps at (-1, -1)).

use std::sync::Arc;

use phonebench_actions::coords::{CoordSpace, parse_grounding_point};
use phonebench_actions::{Action, FinishStatus, Syntax, parse_action};
use phonebench_model::{Message, Part, Role};
use serde_json::{Map, Value, json};

use super::parse::{balanced_object, python_literal_to_json};
use super::{ConfigError, ModelAgentSpec, ModelHandle, Templates, screen_size, screenshot_url};
use crate::{Agent, AgentError, AgentInput, AgentOutput, BoxFuture, CallRecord, Usage};

/// What an older screenshot turn becomes.
pub const SCREEN_NOT_SHOWN: &str = "(Previous turn, screen not shown)";

/// UI-Ins' image space: `smart_resize` factor 28, min 3136, max 4096×2160 pixels.
pub const UI_INS_SPACE: CoordSpace =
    CoordSpace::Resized { factor: 28, min_pixels: 3136, max_pixels: 4096 * 2160 };

/// One observation turn of the planner's conversation.
#[derive(Debug, Clone)]
enum Turn {
    Screen { url: String, label: String },
    Text(String),
}

/// The planner–executor agent.
#[derive(Debug)]
pub struct PlannerExecutor {
    name: String,
    templates: Arc<Templates>,
    planner: ModelHandle,
    grounder: ModelHandle,
    history_images: usize,
    parse_attempts: usize,
    space: CoordSpace,
    turns: Vec<Turn>,
    replies: Vec<String>,
    /// Lessons from earlier trials.
    pub lessons: Vec<String>,
}

impl PlannerExecutor {
    /// An agent for one episode.
    pub fn new(spec: &ModelAgentSpec) -> Result<PlannerExecutor, ConfigError> {
        let config = &spec.config;
        for role in ["planner", "grounding_system", "grounding_user"] {
            config.prompt(role)?;
        }
        let rescale = config.option_bool("rescale")?.unwrap_or(true);
        Ok(PlannerExecutor {
            name: config.name.clone(),
            templates: spec.templates.clone(),
            planner: spec.models.main.clone(),
            grounder: spec.models.grounding.clone().unwrap_or_else(|| spec.models.main.clone()),
            history_images: config.option_usize("history_images")?.unwrap_or(3),
            parse_attempts: config.option_usize("parse_attempts")?.unwrap_or(3).max(1),
            space: if rescale { UI_INS_SPACE } else { CoordSpace::Screen },
            turns: Vec::new(),
            replies: Vec::new(),
            lessons: Vec::new(),
        })
    }

    fn messages(&self, system: String) -> Vec<Message> {
        let mut messages = vec![Message::system(system)];
        for (i, turn) in self.turns.iter().enumerate() {
            if i > 0 {
                messages.push(Message::assistant(self.replies[i - 1].clone()));
            }
            messages.push(match turn {
                Turn::Screen { url, label } => Message {
                    role: Role::User,
                    content: vec![Part::Image { url: url.clone(), label: label.clone() }],
                    tool_calls: Vec::new(),
                    tool_call_id: None,
                },
                Turn::Text(t) => Message::user(t.clone()),
            });
        }
        // Keep the newest `history_images` screenshots; older ones are replaced by a note.
        let mut kept = 0;
        for m in messages.iter_mut().rev() {
            if m.role == Role::User && matches!(m.content.first(), Some(Part::Image { .. })) {
                if kept < self.history_images {
                    kept += 1;
                } else {
                    *m = Message::user(SCREEN_NOT_SHOWN);
                }
            }
        }
        messages
    }

    async fn turn(&mut self, input: &AgentInput) -> Result<AgentOutput, AgentError> {
        let observation = match input.history.last() {
            Some(last) if matches!(last.action, Some(Action::McpCall { .. })) => {
                Turn::Text(format!("Tool call result: {}", last.feedback.as_deref().unwrap_or("")))
            }
            Some(last) if matches!(last.action, Some(Action::AskUser { .. })) => {
                Turn::Text(last.feedback.clone().unwrap_or_default())
            }
            _ => {
                let (url, label) = screenshot_url(input)?;
                Turn::Screen { url, label }
            }
        };
        self.turns.push(observation);
        let (width, height) = screen_size(input);
        let tools: Vec<Value> = input
            .mcp_tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "schema": t.input_schema.to_string()}))
            .collect();
        let system = self.templates.render(
            "planner",
            &json!({"goal": input.goal, "mcp_tools": tools, "screen_width": width, "screen_height": height, "lessons": self.lessons}),
        )?;
        let messages = self.messages(system);
        let mut calls = Vec::new();
        let mut text = String::new();
        let mut plan = Err(String::new());
        for _ in 0..self.parse_attempts {
            let (response, record) = self.planner.call("action", messages.clone()).await?;
            calls.push(record);
            text = response.text();
            plan = parse_plan(&text);
            if plan.is_ok() {
                break;
            }
        }
        self.replies.push(super::clip(&text));
        let action = match plan {
            Err(e) => Err(e),
            Ok(plan) => self.ground(plan, input, &mut calls).await?,
        };
        Ok(AgentOutput { text, action, usage: Usage::of_calls(&calls), calls, repaired_from: None })
    }

    /// Turns a normalized planner action into an action, asking the grounding model for the
    /// points of described targets. `Ok(Err(..))` is the agent's format error.
    async fn ground(
        &self,
        mut plan: Map<String, Value>,
        input: &AgentInput,
        calls: &mut Vec<CallRecord>,
    ) -> Result<Result<Action, String>, AgentError> {
        let kind = plan.get("action_type").and_then(Value::as_str).unwrap_or_default().to_string();
        match kind.as_str() {
            "status" => {
                let complete = plan.get("goal_status").and_then(Value::as_str) == Some("complete");
                let status = if complete { FinishStatus::Complete } else { FinishStatus::Infeasible };
                return Ok(Ok(Action::Finish { status, reason: None }));
            }
            "click" | "long_press" | "double_tap" => {
                if let Some(target) = plan.remove("target") {
                    let target = text_of(&target);
                    let verb = if kind == "double_tap" { "click" } else { kind.as_str() };
                    match self.point(&format!("{verb} {target}"), input, calls).await? {
                        Ok((x, y)) => {
                            plan.insert("x".into(), json!(x));
                            plan.insert("y".into(), json!(y));
                        }
                        Err(e) => return Ok(Err(e)),
                    }
                }
            }
            "drag" => {
                if let (Some(start), Some(end)) = (plan.remove("target_start"), plan.remove("target_end")) {
                    for (target, keys) in [(start, ("start_x", "start_y")), (end, ("end_x", "end_y"))] {
                        match self.point(&format!("Click {}", text_of(&target)), input, calls).await? {
                            Ok((x, y)) => {
                                plan.insert(keys.0.into(), json!(x));
                                plan.insert(keys.1.into(), json!(y));
                            }
                            Err(e) => return Ok(Err(e)),
                        }
                    }
                }
            }
            "input_text" => {
                // Upstream keeps only the text: the planner focuses the field with a click first.
                let text = plan.get("text").cloned().unwrap_or(Value::String(String::new()));
                plan = Map::from_iter([
                    ("action_type".to_string(), json!("input_text")),
                    ("text".to_string(), text),
                ]);
            }
            _ => {}
        }
        let json = Value::Object(plan).to_string();
        Ok(parse_action(&json, Syntax::MobileWorld).map_err(|e| e.to_string()))
    }

    /// The grounding model's point for `instruction`. `Ok(Err(..))` when its reply has none.
    async fn point(
        &self,
        instruction: &str,
        input: &AgentInput,
        calls: &mut Vec<CallRecord>,
    ) -> Result<Result<(i32, i32), String>, AgentError> {
        let (width, height) = screen_size(input);
        let system = self
            .templates
            .render("grounding_system", &json!({"screen_width": width, "screen_height": height}))?;
        let user = self.templates.render("grounding_user", &json!({"instruction": instruction}))?;
        let (url, label) = screenshot_url(input)?;
        let message = Message {
            role: Role::User,
            // Upstream sends the image first, then the instruction.
            content: vec![Part::Image { url, label }, Part::Text(user)],
            tool_calls: Vec::new(),
            tool_call_id: None,
        };
        let (response, record) =
            self.grounder.call("grounding", vec![Message::system(system), message]).await?;
        calls.push(record);
        Ok(parse_grounding_point(&response.text(), &self.space, width, height)
            .map(|p| (p.x, p.y))
            .map_err(|e| format!("grounding `{instruction}`: {e}")))
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// MobileWorld's alias map (`normalize_action_type`): lower-case, spaces to `_`, then aliases.
pub fn normalize_action_type(name: &str) -> String {
    let name = name.trim().to_lowercase().replace(' ', "_");
    match name.as_str() {
        "tap" | "press" | "touch" => "click",
        "long_tap" | "long_press" | "hold" => "long_press",
        "type" | "enter_text" | "write" => "input_text",
        "swipe" | "fling" => "scroll",
        "enter" => "keyboard_enter",
        other => return other.to_string(),
    }
    .to_string()
}

/// The planner's action: the text after the one `Action:`, its JSON object (fences and Python
/// literals tolerated), the action type normalized.
pub fn parse_plan(answer: &str) -> Result<Map<String, Value>, String> {
    let parts: Vec<&str> = answer.split("Action:").collect();
    if parts.len() != 2 {
        return Err(format!("expected exactly one `Action:` in the output, found {}", parts.len() - 1));
    }
    let text = parts[1].trim_matches(|c: char| " \n\r\t`\"".contains(c));
    let object = balanced_object(text).ok_or("the action after `Action:` is not a JSON object")?;
    let value: Value = serde_json::from_str(object)
        .or_else(|_| serde_json::from_str(&python_literal_to_json(object)))
        .map_err(|e| format!("the action is not valid JSON: {e}"))?;
    let Value::Object(mut map) = value else { return Err("the action is not a JSON object".into()) };
    let kind = map
        .get("action_type")
        .or_else(|| map.get("action"))
        .and_then(Value::as_str)
        .ok_or("the action has no `action_type`")?;
    let kind = normalize_action_type(kind);
    map.remove("action");
    map.insert("action_type".into(), Value::String(kind));
    Ok(map)
}

impl Agent for PlannerExecutor {
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

    #[test]
    fn plans_parse_with_aliases_and_fences() {
        let p = parse_plan(
            "Thought: go\nAction: ```json\n{\"action_type\": \"Tap\", \"target\": \"the search bar\"}\n```",
        )
        .unwrap();
        assert_eq!(p["action_type"], "click");
        assert_eq!(p["target"], "the search bar");
        let p = parse_plan("Action: {'action_type': 'type', 'text': 'hi'}").unwrap();
        assert_eq!(p["action_type"], "input_text");
        assert!(parse_plan("Thought: no action").unwrap_err().contains("exactly one"));
        assert!(parse_plan("Action: a Action: b").unwrap_err().contains("exactly one"));
        assert!(parse_plan("Action: click it").unwrap_err().contains("JSON object"));
        assert_eq!(normalize_action_type("Long Press"), "long_press");
        assert_eq!(normalize_action_type("fling"), "scroll");
    }
}
