//! Agents: what decides the next action.
//!
//! [`Agent`] is the one interface for scripted and model-driven agents: the goal, the current
//! observation (text + tree) and the history go in; the raw output text, the parsed action (or
//! why it did not parse: a format error) and token usage come out. It is async because model
//! agents wait on a server; scripted agents answer at once.
//!
//! Scripted agents here: [`ReferenceAgent`] (replays a task's reference solution, resolving
//! selectors on each screen), [`NoopAgent`], [`RandomAgent`] (seeded) and [`HumanAgent`]
//! (terminal). Model-driven agents (the published designs over any OpenAI-compatible server,
//! configured by TOML files and prompt templates) are in [`llm`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use phonebench_actions::{Action, FinishStatus};
pub use phonebench_model::CallRecord;
use phonebench_observe::Observation;
pub use phonebench_pixels::ScreenImage;
use phonebench_uitree::UiTree;
use serde::{Deserialize, Serialize};

mod human;
pub mod llm;
mod random;
mod reference;
mod replay;

pub use human::HumanAgent;
pub use random::RandomAgent;
pub use reference::{ReferenceAgent, resolve_selector};
pub use replay::ReplayAgent;

/// A boxed future (agents are used as trait objects).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One earlier turn, as the agent may be reminded of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// What the agent said.
    pub raw: String,
    /// The action it parsed to.
    pub action: Option<Action>,
    /// What the environment answered (user reply, tool result, rejection, notice).
    pub feedback: Option<String>,
}

/// What an agent sees before acting.
#[derive(Debug, Clone)]
pub struct AgentInput {
    /// The goal.
    pub goal: String,
    /// The current observation.
    pub observation: Observation,
    /// The current UI tree (`observation.targets` index into it).
    pub tree: Arc<UiTree>,
    /// Earlier turns, oldest first.
    pub history: Vec<Turn>,
    /// 0-based number of this turn.
    pub step: usize,
    /// The step budget.
    pub max_steps: usize,
    /// MCP tools offered (as their servers declared them).
    pub mcp_tools: Vec<phonebench_actions::McpTool>,
    /// The current screen's picture (drawn only when an agent asks for its pixels).
    pub screen: Option<ScreenImage>,
}

/// Tokens a model-driven agent used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
}

impl Usage {
    /// The tokens of a turn's calls.
    pub fn of_calls<'a>(calls: impl IntoIterator<Item = &'a CallRecord>) -> Usage {
        calls.into_iter().fold(Usage::default(), |u, c| Usage {
            prompt_tokens: u.prompt_tokens.saturating_add(c.usage.prompt_tokens),
            completion_tokens: u.completion_tokens.saturating_add(c.usage.completion_tokens),
        })
    }
}

/// What an agent decided.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentOutput {
    /// The raw output text.
    pub text: String,
    /// The parsed action, or why the text is not one (a format error, not an infrastructure one).
    pub action: Result<Action, String>,
    /// Tokens used for this turn.
    pub usage: Usage,
    /// The model calls made for this turn, in order.
    pub calls: Vec<CallRecord>,
    /// The action came from a repair call: why the original output did not parse.
    pub repaired_from: Option<String>,
}

impl AgentOutput {
    /// Output of a scripted agent: the action's canonical JSON as text.
    pub fn scripted(action: Action) -> AgentOutput {
        let text = serde_json::to_string(&action).unwrap_or_else(|e| format!("<unprintable action: {e}>"));
        AgentOutput::new(text, Ok(action))
    }

    /// An output with no model calls.
    pub fn new(text: String, action: Result<Action, String>) -> AgentOutput {
        AgentOutput { text, action, usage: Usage::default(), calls: Vec::new(), repaired_from: None }
    }
}

/// What an agent that learns across trials is told about a finished trial.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialReport {
    /// The goal.
    pub goal: String,
    /// 1-based number of the trial that ended.
    pub trial: usize,
    /// Its turns.
    pub turns: Vec<Turn>,
    /// Whether the task's checks passed (the environment's binary reward).
    pub success: bool,
}

/// The agent could not produce an output for reasons outside its control (server down, stdin
/// closed): the episode is reported as an infrastructure failure, never as the agent's failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AgentError(pub String);

/// Decides actions.
pub trait Agent: Send {
    /// A name for results.
    fn name(&self) -> &str;

    /// The next action.
    fn act<'a>(&'a mut self, input: &'a AgentInput) -> BoxFuture<'a, Result<AgentOutput, AgentError>>;

    /// How many trials the agent may take at a task (each a fresh reset of the phone). Only
    /// agents that learn from failure (Reflexion) take more than one.
    fn trials(&self) -> usize {
        1
    }

    /// A trial failed and another follows: learn what can be learnt, and forget the finished
    /// trial's turns. Returns the model calls made.
    fn reflect<'a>(
        &'a mut self,
        _report: &'a TrialReport,
    ) -> BoxFuture<'a, Result<Vec<CallRecord>, AgentError>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    /// Whether the agent rewrites outputs that do not parse (then results carry SPHINX's
    /// "original" score beside the repaired one).
    fn repairs(&self) -> bool {
        false
    }
}

/// Finishes at once: the baseline every task must fail.
#[derive(Debug, Clone, Default)]
pub struct NoopAgent;

impl Agent for NoopAgent {
    fn name(&self) -> &str {
        "noop"
    }

    fn act<'a>(&'a mut self, _input: &'a AgentInput) -> BoxFuture<'a, Result<AgentOutput, AgentError>> {
        Box::pin(async {
            Ok(AgentOutput::scripted(Action::Finish { status: FinishStatus::Complete, reason: None }))
        })
    }
}
