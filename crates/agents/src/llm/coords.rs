//! End-to-end coordinate models: the screenshot in, an action with screen points out, parsed by
//! the published convention of the model family (`phonebench_actions::coords`).
//!
//! Two conversation shapes, chosen by the convention's syntax:
//! - `mobile_use` tool calls (Qwen3-VL, Qwen2.5-VL, GUI-Owl): MobileWorld's Qwen3-VL agent — a
//!   stateless call per step with the system prompt (the `mobile_use` schema) and one user
//!   message: the goal, "Task progress" (the earlier steps' action sentences, with tool results
//!   and user answers appended) and the current screenshot.
//! - UI-TARS / Doubao: UI-TARS's MOBILE_USE prompt as the first user message, then every earlier
//!   reply as an assistant turn, the last `history_images` screenshots before their replies, and
//!   the current screenshot (OSWorld's UI-TARS loop).

use std::sync::Arc;

use phonebench_actions::Action;
use phonebench_actions::coords::{CoordConvention, CoordSpace, CoordSyntax, parse_coord_action};
use phonebench_model::{ChatRequest, Message, Part, Role};
use serde_json::json;

use super::{ConfigError, ModelAgentSpec, ModelHandle, Templates, screen_size, screenshot_url};
use crate::{Agent, AgentError, AgentInput, AgentOutput, BoxFuture, Usage};

/// The prompt family of a convention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    /// `mobile_use` tool calls on the 0–999 grid (the prompt says 999x999, verbatim upstream).
    MobileUse999,
    /// `mobile_use` tool calls in another space (the prompt states its resolution).
    MobileUseSized,
    /// UI-TARS `start_box` actions.
    UiTars,
    /// Doubao `<point>` actions.
    Doubao,
}

/// A coordinate-model agent.
#[derive(Debug)]
pub struct CoordsAgent {
    name: String,
    templates: Arc<Templates>,
    model: ModelHandle,
    convention: CoordConvention,
    family: Family,
    history_images: usize,
    language: String,
    /// Also send the task's MCP tools as OpenAI function tools (`tools` in the request), for
    /// servers whose tool-call parser needs them; the prompt lists them either way.
    mcp_as_openai_tools: bool,
    /// Per earlier step: the action sentence (mobile_use) with results appended.
    conclusions: Vec<String>,
    /// Per earlier step: the raw reply and the screenshot it answered (UI-TARS).
    replies: Vec<(String, (String, String))>,
}

impl CoordsAgent {
    /// An agent for one episode.
    pub fn new(spec: &ModelAgentSpec) -> Result<CoordsAgent, ConfigError> {
        let config = &spec.config;
        let name = config.option_str("convention")?.unwrap_or("qwen3-vl");
        let convention = CoordConvention::preset(name)
            .map_err(|message| ConfigError { origin: config.origin.clone(), message })?;
        let family = match (convention.syntax, convention.space) {
            (CoordSyntax::UiTars, _) if name.eq_ignore_ascii_case("doubao") => Family::Doubao,
            (CoordSyntax::UiTars, _) => Family::UiTars,
            (_, CoordSpace::Normalized { max: 999 }) => Family::MobileUse999,
            _ => Family::MobileUseSized,
        };
        let roles: &[&str] = match family {
            Family::MobileUse999 => &["mobile_use_system", "mobile_use_user"],
            Family::MobileUseSized => &["mobile_use_resized_system", "mobile_use_user"],
            Family::UiTars => &["uitars_system", "uitars_user"],
            Family::Doubao => &["uitars_system", "doubao_user"],
        };
        for role in roles {
            config.prompt(role)?;
        }
        Ok(CoordsAgent {
            name: config.name.clone(),
            templates: spec.templates.clone(),
            model: spec.models.main.clone(),
            convention,
            family,
            history_images: config.option_usize("history_images")?.unwrap_or(5).max(1),
            language: config.option_str("language")?.unwrap_or("English").to_string(),
            mcp_as_openai_tools: config.option_bool("mcp_as_openai_tools")?.unwrap_or(false),
            conclusions: Vec::new(),
            replies: Vec::new(),
        })
    }

    fn image_message(url: String, label: String) -> Message {
        Message {
            role: Role::User,
            content: vec![Part::Image { url, label }],
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    fn mobile_use_messages(
        &mut self,
        input: &AgentInput,
        shot: (String, String),
    ) -> Result<Vec<Message>, AgentError> {
        // MobileWorld appends what the last step produced to its sentence.
        if let (Some(last), Some(turn)) = (self.conclusions.last_mut(), input.history.last()) {
            match (&turn.action, &turn.feedback) {
                (Some(Action::McpCall { .. }), Some(result)) => {
                    last.push_str(&format!("; Tool call result: <tool_response>{result}</tool_response>"));
                }
                (Some(Action::AskUser { .. }), Some(answer)) => {
                    last.push_str(&format!("; Ask user response: {answer}"));
                }
                _ => {}
            }
        }
        let extent = self
            .convention
            .space
            .extent(screen_size(input).0, screen_size(input).1)
            .map_err(|e| AgentError(format!("coordinate space: {e}")))?;
        let tools: Vec<serde_json::Value> = input
            .mcp_tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "schema": t.input_schema.to_string()}))
            .collect();
        let role = if self.family == Family::MobileUse999 {
            "mobile_use_system"
        } else {
            "mobile_use_resized_system"
        };
        let system = self.templates.render(
            role,
            &json!({"screen_width": extent.0.round() as u64, "screen_height": extent.1.round() as u64, "mcp_tools": tools}),
        )?;
        let user = self
            .templates
            .render("mobile_use_user", &json!({"goal": input.goal, "history": self.conclusions}))?;
        Ok(vec![Message::system(system), Message::user(user).with_image(shot.0, shot.1)])
    }

    fn ui_tars_messages(
        &self,
        input: &AgentInput,
        shot: (String, String),
    ) -> Result<Vec<Message>, AgentError> {
        let system = self.templates.render("uitars_system", &json!({}))?;
        let role = if self.family == Family::Doubao { "doubao_user" } else { "uitars_user" };
        let prompt = self
            .templates
            .render(role, &json!({"goal": input.goal, "language": self.language, "history": []}))?;
        let mut messages = vec![Message::system(system), Message::user(prompt)];
        let n = self.replies.len();
        for (i, (reply, (url, label))) in self.replies.iter().enumerate() {
            // Screenshots only for the last `history_images - 1` earlier steps (the current
            // screenshot is the last of `history_images`).
            if i + self.history_images > n {
                messages.push(CoordsAgent::image_message(url.clone(), label.clone()));
            }
            messages.push(Message::assistant(reply.clone()));
        }
        messages.push(CoordsAgent::image_message(shot.0, shot.1));
        Ok(messages)
    }

    async fn turn(&mut self, input: &AgentInput) -> Result<AgentOutput, AgentError> {
        let shot = screenshot_url(input)?;
        let messages = match self.family {
            Family::MobileUse999 | Family::MobileUseSized => self.mobile_use_messages(input, shot.clone())?,
            Family::UiTars | Family::Doubao => self.ui_tars_messages(input, shot.clone())?,
        };
        let (response, record) = if self.mcp_as_openai_tools && !input.mcp_tools.is_empty() {
            let mut request = ChatRequest::new(messages, self.model.sampling.clone());
            request.extra = self.model.extra.clone();
            request.tools = input.mcp_tools.iter().map(openai_function).collect();
            self.model.send("action", request).await?
        } else {
            self.model.call("action", messages).await?
        };
        let calls = vec![record];
        let text = response.text();
        let (width, height) = screen_size(input);
        let action = parse_coord_action(&text, &self.convention, width, height).map_err(|e| e.to_string());
        match self.family {
            Family::MobileUse999 | Family::MobileUseSized => {
                self.conclusions.push(super::clip(&action_sentence(&text)))
            }
            Family::UiTars | Family::Doubao => {
                self.replies.push((super::clip(&text), shot));
                // Only the screenshots that can still be sent are kept.
                let keep_from = self.replies.len().saturating_sub(self.history_images);
                for (_, (url, _)) in &mut self.replies[..keep_from] {
                    url.clear();
                }
            }
        }
        Ok(AgentOutput { text, action, usage: Usage::of_calls(&calls), calls, repaired_from: None })
    }
}

/// MobileWorld's conclusion of a Qwen3-VL answer: the text after `Action:` up to `<tool_call>`,
/// stripped of surrounding quotes (the whole answer when there is no `Action:`).
pub fn action_sentence(answer: &str) -> String {
    let after = answer.split_once("Action:").map_or(answer, |(_, a)| a);
    let sentence = after.split("<tool_call>").next().unwrap_or(after);
    sentence.trim().trim_matches('"').trim().to_string()
}

impl Agent for CoordsAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn act<'a>(&'a mut self, input: &'a AgentInput) -> BoxFuture<'a, Result<AgentOutput, AgentError>> {
        Box::pin(self.turn(input))
    }
}

/// An MCP tool as an OpenAI function tool.
pub fn openai_function(tool: &phonebench_actions::McpTool) -> serde_json::Value {
    json!({
        "type": "function",
        "function": { "name": tool.name, "description": tool.description, "parameters": tool.input_schema },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_cut_like_mobileworld() {
        assert_eq!(
            action_sentence("Thought: x\nAction: \"Tap the search bar.\"\n<tool_call>{}</tool_call>"),
            "Tap the search bar."
        );
        assert_eq!(action_sentence("no structure"), "no structure");
    }
}
