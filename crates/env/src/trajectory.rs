//! The recorded trajectory: what evaluation judges. Built by an [`crate::Episode`] on the
//! simulated phone, or imported (SPHINX ground-truth directories, real-device traces).

use std::collections::BTreeMap;
use std::sync::Arc;

use phonebench_actions::{Action, Direction, FinishStatus, Key, Swipe};
use phonebench_uitree::{Node, UiTree};
use serde::{Deserialize, Serialize};

/// One screen as the agent saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScreenRecord {
    /// The UI tree (every window).
    pub tree: Arc<UiTree>,
    /// The app id in front (simulated phone), if any.
    pub app: Option<String>,
    /// The package in front.
    pub package: String,
    /// The activity: the screen name on the simulated phone, the activity class on a device.
    pub activity: String,
}

/// One agent turn.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepRecord {
    /// What the agent said (raw model text, or the scripted action's text).
    pub raw: String,
    /// The parsed action; `None` when the output was a format error.
    pub action: Option<Action>,
    /// Why the output could not be parsed (a format error).
    pub format_error: Option<String>,
    /// Why the phone refused the action (bad index, unknown app): the step still counts.
    pub rejected: Option<String>,
    /// The point the action touched (element centre or coordinates), if it touched one.
    pub point: Option<(i32, i32)>,
    /// The node the action was aimed at, as it was on screen.
    pub hit: Option<Node>,
    /// Feedback shown to the agent (the user's reply, a tool result, a notice).
    pub feedback: Option<String>,
    /// The agent's first output did not parse and a repair call rewrote it: why the original
    /// failed. `action` is the repaired action; SPHINX's "original" score ends the episode here.
    pub repaired_from: Option<String>,
}

impl StepRecord {
    /// The SPHINX name of this step's action type (`click`, `longclick`, `input`, `swipe`,
    /// `back`, `enter`, `restart`, `none`, `stop`), as SPHINX evaluators spell it. Format errors
    /// and harness actions other than finishing (ask_user, MCP) are `none`.
    pub fn sphinx_type(&self) -> &'static str {
        match &self.action {
            None => "none",
            Some(a) => sphinx_type(a),
        }
    }

    /// The typed text for `type` actions (SPHINX `message`).
    pub fn message(&self) -> Option<&str> {
        match &self.action {
            Some(Action::Type { text, .. }) => Some(text),
            _ => None,
        }
    }
}

/// SPHINX's action type name for a canonical action.
pub fn sphinx_type(action: &Action) -> &'static str {
    match action {
        Action::Tap { .. } | Action::DoubleTap { .. } => "click",
        Action::LongPress { .. } => "longclick",
        Action::Type { .. } => "input",
        Action::Swipe(_) | Action::Scroll { .. } | Action::Drag { .. } => "swipe",
        Action::Key { key: Key::Back } => "back",
        Action::Key { key: Key::Enter } => "enter",
        Action::Key { .. } => "none",
        Action::RestartApp { .. } | Action::OpenApp { .. } => "restart",
        Action::Wait { .. } | Action::AskUser { .. } | Action::McpCall { .. } => "none",
        Action::Answer { .. } | Action::Finish { .. } => "stop",
    }
}

/// The direction of a swipe or scroll, as the content moves (for rules on `direction`).
pub fn action_direction(action: &Action) -> Option<Direction> {
    match action {
        Action::Scroll { direction, .. } => Some(*direction),
        Action::Swipe(Swipe::Direction { direction, .. }) => Some(direction.opposite()),
        _ => None,
    }
}

/// How an episode ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum EpisodeEnd {
    /// The agent said it was done.
    Finished {
        /// Complete or infeasible.
        status: FinishStatus,
    },
    /// The agent gave its answer.
    Answered,
    /// The step budget ran out.
    Budget,
    /// The same action three times in a row (SPHINX's rule, when enabled).
    Repetition,
    /// A format error ended it (when the policy says so).
    FormatError,
    /// The wall-clock limit ran out.
    Timeout,
    /// The harness or model server failed: not the agent's fault, reported apart.
    Infrastructure {
        /// What failed.
        message: String,
    },
}

/// One `ask_user` exchange.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Exchange {
    /// The step it happened at.
    pub step: usize,
    /// The agent's question.
    pub question: String,
    /// The user's reply.
    pub answer: String,
    /// Index of the hidden fact the reply came from; `None` for a refusal.
    pub fact: Option<usize>,
}

/// One MCP tool call. Stored with its step in the results (for the report); a trajectory is
/// never written out whole, so the wall-clock `latency_ms` stays out of everything compared
/// between runs (`episodes.jsonl` counts calls only).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct McpCallRecord {
    /// The step it happened at.
    #[serde(default)]
    pub step: usize,
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub arguments: serde_json::Map<String, serde_json::Value>,
    /// What came back (possibly an error text), as the agent got it.
    pub result: String,
    /// The call did not succeed (tool error, refused call, failed server).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// The result was cut to the configured length.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// The server itself failed (crashed, hung, answered with something other than MCP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Wall time of the call, ms.
    #[serde(default)]
    pub latency_ms: u64,
}

/// An app event with the step that emitted it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventRecord {
    /// The step whose action emitted it.
    pub step: usize,
    /// The app id.
    pub app: String,
    /// Event name.
    pub name: String,
    /// Event data.
    pub data: serde_json::Value,
}

/// An app's database at the start of the episode (after setup) and at the end, serialized.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DatabasePair {
    /// After setup, before the first action.
    pub initial: Vec<u8>,
    /// After the last action.
    pub last: Vec<u8>,
}

/// Everything that happened in an episode.
///
/// `screens[i]` is the screen before `steps[i]`; the last screen is the one the episode ended on,
/// so `screens.len() == steps.len() + 1`. A `finish` or `answer` is recorded as the last step (it
/// counts as a turn); evaluation treats it as SPHINX's STOP issued on the screen it was given
/// on. When the budget ends the episode, the STOP is implicit after the last step, as in SPHINX's
/// offline evaluation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trajectory {
    /// The screens.
    pub screens: Vec<ScreenRecord>,
    /// The agent's turns.
    pub steps: Vec<StepRecord>,
    /// How it ended (`None` while running).
    pub end: Option<EpisodeEnd>,
    /// The agent's answer, if it gave one.
    pub answer: Option<String>,
    /// App events.
    pub events: Vec<EventRecord>,
    /// `ask_user` exchanges.
    pub exchanges: Vec<Exchange>,
    /// MCP calls.
    pub mcp_calls: Vec<McpCallRecord>,
    /// Databases of the apps involved, by app id.
    pub databases: BTreeMap<String, DatabasePair>,
    /// Each tracked app's database just before the first repaired step was applied (the state
    /// the "original" episode, which ends at that step, finished in); empty when nothing was
    /// repaired.
    pub databases_at_first_repair: BTreeMap<String, Vec<u8>>,
}

impl Trajectory {
    /// The screen the episode ended on.
    pub fn last_screen(&self) -> Option<&ScreenRecord> {
        self.screens.last()
    }

    /// Number of format errors.
    pub fn format_errors(&self) -> usize {
        self.steps.iter().filter(|s| s.format_error.is_some()).count()
    }

    /// Number of steps whose action came from a repair call.
    pub fn repairs(&self) -> usize {
        self.steps.iter().filter(|s| s.repaired_from.is_some()).count()
    }

    /// The episode as it would have been without output repair (SPHINX's "original" score): it
    /// ends at the first repaired step with a format error, as SPHINX ends an episode whose
    /// answer does not parse. Screens, events, exchanges and MCP calls from that step on are
    /// dropped, and each database's last state is the one before that step. `None` when no step
    /// was repaired (the original episode is this one).
    pub fn original(&self) -> Option<Trajectory> {
        let k = self.steps.iter().position(|s| s.repaired_from.is_some())?;
        let mut failed = self.steps[k].clone();
        failed.format_error = failed.repaired_from.take();
        failed.action = None;
        failed.point = None;
        failed.hit = None;
        failed.rejected = None;
        failed.feedback = None;
        let mut steps = self.steps[..k].to_vec();
        steps.push(failed);
        let databases = self
            .databases
            .iter()
            .map(|(app, pair)| {
                let last =
                    self.databases_at_first_repair.get(app).cloned().unwrap_or_else(|| pair.last.clone());
                (app.clone(), DatabasePair { initial: pair.initial.clone(), last })
            })
            .collect();
        Some(Trajectory {
            // The format error was issued on screen k and changed nothing.
            screens: self.screens[..=k].iter().chain(std::iter::once(&self.screens[k])).cloned().collect(),
            steps,
            end: Some(EpisodeEnd::FormatError),
            answer: None,
            events: self.events.iter().filter(|e| e.step < k).cloned().collect(),
            exchanges: self.exchanges.iter().filter(|e| e.step < k).cloned().collect(),
            mcp_calls: self.mcp_calls.iter().filter(|e| e.step < k).cloned().collect(),
            databases,
            databases_at_first_repair: BTreeMap::new(),
        })
    }
}
