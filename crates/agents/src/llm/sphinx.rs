//! SPHINX's ReAct agent (`agent/react_agent.py` of PKU-ASE-RISE/Sphinx): one user message of
//! instructions, the observation, the task and the previous action; the answer reasons and ends
//! with "In summary, the next action I will perform is ```action```".
//!
//! Repair (SPHINX's `parsed_lowlevel.py`): an answer whose action does not parse goes to a second
//! call that rewrites it; the last fenced block of that reply is the action (`press [none]` if
//! there is none). Results keep both scores: "repaired" (the episode as run) and "original"
//! (the episode ended at the first unparseable answer, as SPHINX ends it).

use std::sync::Arc;

use phonebench_actions::{Action, Key, ParseOptions, SphinxMode, Swipe, Syntax, Target, parse_action_with};
use phonebench_model::Message;
use phonebench_observe::sphinx::sphinx_element;
use phonebench_pixels::SomStyle;
use serde_json::json;

use super::parse::{last_fenced_block, sphinx_action_text};
use super::{
    AgentConfig, ConfigError, ModelAgentSpec, ModelHandle, Templates, marked_screenshot_url, screen_size,
    screenshot_url,
};
use crate::{Agent, AgentError, AgentInput, AgentOutput, BoxFuture, Usage};

/// What the model sees (SPHINX's observation modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The indented accessibility tree (`sphinx-tree`), index actions.
    Tree,
    /// The simplified list of interactable widgets (`sphinx-list`), index actions.
    Text,
    /// The screenshot only, coordinate actions.
    Image,
    /// The screenshot with SPHINX's set-of-marks, index actions.
    AnnotatedImage,
}

impl Mode {
    /// Parses a mode name.
    pub fn parse(name: &str) -> Option<Mode> {
        match name {
            "tree" => Some(Mode::Tree),
            "text" => Some(Mode::Text),
            "image" => Some(Mode::Image),
            "annotated_image" => Some(Mode::AnnotatedImage),
            _ => None,
        }
    }

    /// The mode's name, as SPHINX spells it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Tree => "tree",
            Mode::Text => "text",
            Mode::Image => "image",
            Mode::AnnotatedImage => "annotated_image",
        }
    }

    /// The observation format episodes must use for this mode's indexes.
    pub fn observation(self) -> phonebench_observe::ObservationFormat {
        match self {
            Mode::Text => phonebench_observe::ObservationFormat::SphinxList,
            _ => phonebench_observe::ObservationFormat::SphinxTree,
        }
    }
}

/// The mode a configuration asks for (`options.mode`, default `tree`).
pub fn mode_of(config: &AgentConfig) -> Result<Mode, ConfigError> {
    let name = config.option_str("mode")?.unwrap_or("tree");
    Mode::parse(name).ok_or_else(|| ConfigError {
        origin: config.origin.clone(),
        message: format!("unknown SPHINX mode `{name}` (tree, text, image, annotated_image)"),
    })
}

/// What SPHINX prints as the previous action before the first step.
pub const NO_PREVIOUS_ACTION: &str = "None";

/// SPHINX's ReAct agent.
#[derive(Debug)]
pub struct SphinxReact {
    name: String,
    templates: Arc<Templates>,
    model: ModelHandle,
    mode: Mode,
    repair: bool,
    skills: Vec<String>,
    previous_action: String,
    /// Lessons from earlier trials (set by the Reflexion wrapper).
    pub lessons: Vec<String>,
}

impl SphinxReact {
    /// An agent for one episode.
    pub fn new(spec: &ModelAgentSpec) -> Result<SphinxReact, ConfigError> {
        let config = &spec.config;
        config.prompt("action")?;
        let repair = config.option_bool("repair")?.unwrap_or(true);
        if repair {
            config.prompt("repair")?;
        }
        Ok(SphinxReact {
            name: config.name.clone(),
            templates: spec.templates.clone(),
            model: spec.models.main.clone(),
            mode: mode_of(config)?,
            repair,
            skills: config.option_strings("skills")?,
            previous_action: NO_PREVIOUS_ACTION.to_string(),
            lessons: Vec::new(),
        })
    }

    /// Forgets the episode (a new trial starts), keeping lessons.
    pub fn reset(&mut self) {
        self.previous_action = NO_PREVIOUS_ACTION.to_string();
    }

    fn parse_options(&self) -> ParseOptions {
        let sphinx_mode = if self.mode == Mode::Image { SphinxMode::Coordinates } else { SphinxMode::Index };
        ParseOptions { sphinx_mode, ..ParseOptions::default() }
    }

    fn parse(&self, answer: &str) -> Result<Action, String> {
        let text = sphinx_action_text(answer)?;
        parse_action_with(&text, Syntax::Sphinx, &self.parse_options()).map_err(|e| e.to_string())
    }

    async fn turn(&mut self, input: &AgentInput) -> Result<AgentOutput, AgentError> {
        let (width, height) = screen_size(input);
        let observation = match self.mode {
            Mode::Tree | Mode::Text => input.observation.text.as_str(),
            Mode::Image | Mode::AnnotatedImage => "",
        };
        let prompt = self.templates.render(
            "action",
            &json!({
                "mode": self.mode.name(),
                "observation": observation,
                "goal": input.goal,
                "previous_action": self.previous_action,
                "screen_width": width,
                "screen_height": height,
                "lessons": self.lessons,
                "skills": self.skills,
            }),
        )?;
        let mut message = Message::user(prompt);
        match self.mode {
            Mode::Image => {
                let (url, label) = screenshot_url(input)?;
                message = message.with_image(url, label);
            }
            Mode::AnnotatedImage => {
                let (url, label) = marked_screenshot_url(input, SomStyle::Sphinx)?;
                message = message.with_image(url, label);
            }
            Mode::Tree | Mode::Text => {}
        }
        let (response, record) = self.model.call("action", vec![message]).await?;
        let mut calls = vec![record];
        let text = response.text();
        let mut repaired_from = None;
        let action = match self.parse(&text) {
            Ok(action) => Ok(action),
            Err(error) if self.repair => {
                let prompt = self.templates.render(
                    "repair",
                    &json!({"output": super::clip(&text), "mode": self.mode.name(), "error": error}),
                )?;
                let mut messages = Vec::new();
                if self.templates.has("repair_system") {
                    messages.push(Message::system(self.templates.render("repair_system", &json!({}))?));
                }
                messages.push(Message::user(prompt));
                let (fixed, record) = self.model.call("repair", messages).await?;
                calls.push(record);
                // Upstream: the last fenced block of the reply; `press [none]` when there is none
                // or it does not parse either.
                let repaired = last_fenced_block(&fixed.text())
                    .and_then(|block| parse_action_with(block, Syntax::Sphinx, &self.parse_options()).ok())
                    .unwrap_or(Action::Wait { ms: None });
                repaired_from = Some(error);
                Ok(repaired)
            }
            Err(error) => Err(error),
        };
        self.previous_action = match &action {
            Ok(a) if self.mode == Mode::Image => {
                sphinx_action_text(&text).unwrap_or_else(|_| describe(a, input))
            }
            Ok(a) => describe(a, input),
            // Not upstream (a format error ends a SPHINX episode): tell the model its answer was
            // not an action rather than repeating the action before it.
            Err(_) => "None (the previous output could not be parsed as an action)".to_string(),
        };
        Ok(AgentOutput { text, action, usage: Usage::of_calls(&calls), calls, repaired_from })
    }
}

/// SPHINX's `get_description(action)`: `Click on a View (...).`, `Type hi on a View (...).`,
/// `Swipe on a View (...) in up direction.`, `Go back.`, ...
pub fn describe(action: &Action, input: &AgentInput) -> String {
    let element = |target: &Target| -> String {
        let node = match target {
            Target::Index(i) => input.observation.node_at(*i),
            Target::Point(p) => input.tree.hit_test(p.x, p.y),
            Target::Description(_) => None,
        };
        node.map(|n| sphinx_element(input.tree.node(n))).unwrap_or_else(|| "a View".to_string())
    };
    match action {
        Action::Tap { target } | Action::DoubleTap { target } => format!("Click on {}.", element(target)),
        Action::LongPress { target } => format!("Long click on {}.", element(target)),
        Action::Type { text, target, .. } => match target {
            Some(t) => format!("Type {text} on {}.", element(t)),
            None => format!("Type {text}."),
        },
        Action::Swipe(Swipe::Direction { direction, target }) => {
            let on = target.as_ref().map(element).unwrap_or_else(|| "the screen".to_string());
            format!("Swipe on {on} in {} direction.", direction.as_str())
        }
        Action::Scroll { direction, target } => {
            // SPHINX only swipes; a scroll is the finger moving the other way.
            let on = target.as_ref().map(element).unwrap_or_else(|| "the screen".to_string());
            format!("Swipe on {on} in {} direction.", direction.opposite().as_str())
        }
        Action::Swipe(Swipe::Between { .. }) | Action::Drag { .. } => "Swipe on the screen.".to_string(),
        Action::Key { key: Key::Back } => "Go back.".to_string(),
        Action::Key { key: Key::Enter } => "Press enter.".to_string(),
        Action::Key { .. } | Action::OpenApp { .. } | Action::RestartApp { .. } => {
            "Restart the app.".to_string()
        }
        Action::Finish { .. } | Action::Answer { .. } => "Stop the app.".to_string(),
        Action::Wait { .. } | Action::AskUser { .. } | Action::McpCall { .. } => "Do nothing.".to_string(),
    }
}

impl Agent for SphinxReact {
    fn name(&self) -> &str {
        &self.name
    }

    fn act<'a>(&'a mut self, input: &'a AgentInput) -> BoxFuture<'a, Result<AgentOutput, AgentError>> {
        Box::pin(self.turn(input))
    }

    fn repairs(&self) -> bool {
        self.repair
    }
}
