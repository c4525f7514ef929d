//! One phone playing one episode at a time: the part every front end shares.
//!
//! The MCP server ([`crate::PhoneServer`]) and the environment server ([`crate::env_server`])
//! differ only in how they speak to clients; starting an episode (a task instance or a free
//! phone), taking a turn, calling a task's MCP servers, ending the episode and judging it are
//! done here, once, with the outcome as data each front end words its own way.

use std::sync::Arc;

use phonebench_actions::{Action, FinishStatus};
use phonebench_env::{Episode, EpisodeEnd, EpisodeOptions, TurnInput};
use phonebench_eval::{EvalContext, Semantics, Verdict, evaluate};
use phonebench_mcp::{FailurePolicy, McpConfig, McpSession};
use phonebench_observe::{Observation, ObservationFormat};
use phonebench_phone::Catalog;
use phonebench_pixels::{ScreenImage, SomStyle};
use phonebench_tasks::{Suite, TaskInstance};
use phonebench_uitree::UiTree;
use serde_json::{Value, json};

/// What the servers play: the apps and the suite whose tasks can be started.
#[derive(Clone)]
pub struct PhoneServerConfig {
    /// The installed apps.
    pub catalog: Catalog,
    /// The suite.
    pub suite: Arc<Suite>,
    /// MCP servers of MCP tasks (the built-in ones unless redefined).
    pub mcp: Arc<McpConfig>,
}

/// The task id of a free phone (no task).
pub const FREE_PHONE: &str = "free";

/// The step budget of a free phone.
const FREE_PHONE_STEPS: u32 = 100_000;

/// An episode ready to be installed: everything that can fail has been done.
pub struct Prepared {
    episode: Episode,
    task: TaskInstance,
    tools: Option<McpSession>,
}

impl Prepared {
    /// The task instance it plays.
    pub fn task(&self) -> &TaskInstance {
        &self.task
    }

    /// The current observation.
    pub fn observation(&self) -> &Observation {
        self.episode.observation()
    }

    /// The task's MCP tools (none for tasks without servers).
    pub fn tools(&self) -> &[phonebench_actions::McpTool] {
        self.tools.as_ref().map_or(&[], |s| s.tools())
    }
}

/// Prepares an episode of suite task `id` (instance `instance` of suite seed `seed`): the
/// instance, its MCP servers and the phone. `Err` says why it cannot start, in words a client
/// can act on; nothing current is touched.
pub async fn prepare_task(
    config: &PhoneServerConfig,
    id: &str,
    seed: u64,
    instance: u32,
    options: EpisodeOptions,
    max_steps: Option<u32>,
) -> Result<Prepared, String> {
    let Some(spec) = config.suite.tasks.iter().find(|t| t.id == id) else {
        return Err(format!("no task `{id}` in suite `{}`", config.suite.manifest.name));
    };
    let mut task = phonebench_runner::instantiate(&config.catalog, spec, seed, instance)
        .map_err(|e| format!("task `{id}`: {e}"))?;
    if let Some(max) = max_steps {
        task.max_steps = max;
    }
    let tools = if task.mcp_servers.is_empty() {
        None
    } else {
        Some(
            McpSession::connect(&task.mcp_servers, &task.mcp_tools, &config.mcp)
                .await
                .map_err(|e| format!("the task's MCP servers: {e}"))?,
        )
    };
    match Episode::start(&config.catalog, &task, options) {
        // The episode's own copy carries the budget with the disturbances' turns added: what a
        // client is told and what ends the episode are one number.
        Ok(episode) => Ok(Prepared { task: episode.task().clone(), episode, tools }),
        Err(e) => {
            if let Some(t) = tools {
                t.close().await;
            }
            Err(format!("starting `{id}`: {e}"))
        }
    }
}

/// Prepares a free phone: an episode of no task (no goal, no criteria, every app tracked),
/// with `app` opened first when given.
pub fn prepare_free(
    config: &PhoneServerConfig,
    app: Option<String>,
    seed: u64,
    options: EpisodeOptions,
    max_steps: Option<u32>,
) -> Result<Prepared, String> {
    let task = TaskInstance {
        task_id: FREE_PHONE.into(),
        instance: 0,
        seed,
        goal: "No task: the phone is yours to explore.".into(),
        category: phonebench_tasks::Category::Completion,
        apps: config.catalog.apps().iter().map(|a| a.manifest.id.clone()).collect(),
        max_steps: max_steps.unwrap_or(FREE_PHONE_STEPS),
        clock_start_ms: phonebench_phone::CLOCK_START_MS,
        start: phonebench_tasks::spec::Start { app, ..Default::default() },
        tags: Default::default(),
        params: Default::default(),
        sql_params: Default::default(),
        setup: Vec::new(),
        facts: Vec::new(),
        mcp_tools: Vec::new(),
        mcp_servers: Vec::new(),
        reference: Vec::new(),
        criteria: Vec::new(),
        judges: Vec::new(),
        device: false,
        adb_setup: Vec::new(),
    };
    let episode =
        Episode::start(&config.catalog, &task, options).map_err(|e| format!("starting the phone: {e}"))?;
    Ok(Prepared { episode, task, tools: None })
}

/// Whether `task` is a free phone's (suite tasks always have criteria).
pub fn is_free_phone(task: &TaskInstance) -> bool {
    task.task_id == FREE_PHONE && task.criteria.is_empty()
}

/// The last screen of an episode that has ended: what the client saw last stays observable.
struct FinalScreen {
    observation: Observation,
    tree: Arc<UiTree>,
    image: Option<ScreenImage>,
}

/// One phone's state: the current episode, or how the last one ended.
#[derive(Default)]
pub struct PhoneSession {
    episode: Option<Episode>,
    task: Option<TaskInstance>,
    tools: Option<McpSession>,
    verdict: Option<Verdict>,
    /// How the last episode ended, once it has.
    end: Option<EpisodeEnd>,
    /// The episode ended as an infrastructure failure (a task server failed under the
    /// `infrastructure` policy): why. It has no verdict.
    unscored: Option<String>,
    final_screen: Option<FinalScreen>,
    /// Steps the last episode took (kept after it ends).
    steps: usize,
}

/// What a turn came to.
#[derive(Debug)]
pub enum Acted {
    /// There is no episode to act on: why, and what to do.
    NoEpisode(String),
    /// The episode goes on. `message` is the feedback (a user's reply, a tool result, a
    /// rejection, a format error's explanation).
    Going {
        /// Feedback besides the next screen.
        message: Option<String>,
        /// The turn was an MCP call that failed (a tool error, a refused call, a failed server).
        tool_failed: bool,
        /// The turn's output did not parse: why.
        format_error: Option<String>,
    },
    /// The episode is over; `verdict` is `None` for a free phone.
    Over {
        /// Feedback of the last turn.
        message: Option<String>,
        /// The last turn's output did not parse: why.
        format_error: Option<String>,
        /// How it ended.
        end: Option<EpisodeEnd>,
        /// The verdict (tasks only).
        verdict: Option<Verdict>,
    },
    /// The episode ended unscored: an infrastructure failure (ours or a server's), why.
    Unscored(String),
}

impl PhoneSession {
    /// Makes a prepared episode the current one; the old one's task servers are closed.
    pub async fn install(&mut self, prepared: Prepared) {
        let Prepared { episode, task, tools } = prepared;
        let old = std::mem::replace(
            self,
            PhoneSession { episode: Some(episode), task: Some(task), tools, ..PhoneSession::default() },
        );
        if let Some(old) = old.tools {
            old.close().await;
        }
    }

    /// Ends the session: the task's servers are closed.
    pub async fn close(&mut self) {
        if let Some(tools) = self.tools.take() {
            tools.close().await;
        }
        *self = PhoneSession::default();
    }

    /// The running episode, if any.
    pub fn episode(&self) -> Option<&Episode> {
        self.episode.as_ref()
    }

    /// The running episode, mutably (for screenshots).
    pub fn episode_mut(&mut self) -> Option<&mut Episode> {
        self.episode.as_mut()
    }

    /// The task instance of the current or last episode.
    pub fn task(&self) -> Option<&TaskInstance> {
        self.task.as_ref()
    }

    /// The task's MCP session, if the episode has one.
    pub fn tools(&self) -> Option<&McpSession> {
        self.tools.as_ref()
    }

    /// The verdict of the last episode, once it ended scored.
    pub fn verdict(&self) -> Option<&Verdict> {
        self.verdict.as_ref()
    }

    /// Why the last episode ended unscored, if it did.
    pub fn unscored(&self) -> Option<&str> {
        self.unscored.as_deref()
    }

    /// How the last episode ended, once it has.
    pub fn end(&self) -> Option<&EpisodeEnd> {
        self.end.as_ref()
    }

    /// Turns taken in the current (or last) episode.
    pub fn steps_taken(&self) -> usize {
        self.episode.as_ref().map_or(self.steps, Episode::steps_taken)
    }

    /// The screen as the client sees it: the running episode's, or the last one of an episode
    /// that ended.
    pub fn observation(&self) -> Option<&Observation> {
        match &self.episode {
            Some(e) => Some(e.observation()),
            None => self.final_screen.as_ref().map(|s| &s.observation),
        }
    }

    /// The tree the observation was rendered from.
    pub fn tree(&self) -> Option<&Arc<UiTree>> {
        match &self.episode {
            Some(e) => Some(e.tree()),
            None => self.final_screen.as_ref().map(|s| &s.tree),
        }
    }

    /// The screen as PNG; with `som`, numbered like the observation (its targets, in SPHINX's
    /// style for the SPHINX formats, AndroidWorld's otherwise), so a mark's number is the index
    /// an action takes.
    pub fn screenshot_png(&mut self, som: bool) -> Result<Vec<u8>, String> {
        let pixmap = self.screen_pixmap(som)?;
        phonebench_pixels::encode_png(&pixmap).map_err(|e| e.to_string())
    }

    /// The screen's pixels (with set-of-marks when `som`).
    pub fn screen_pixmap(&mut self, som: bool) -> Result<phonebench_pixels::Pixmap, String> {
        let image = match (&mut self.episode, &self.final_screen) {
            (Some(e), _) => e.screen_image().map_err(|e| e.to_string())?,
            (None, Some(FinalScreen { image: Some(image), .. })) => image.clone(),
            _ => return Err("no screen: start an episode first".into()),
        };
        let mut pixmap = image.pixmap().map_err(|e| e.to_string())?.clone();
        if som {
            let (Some(observation), Some(tree)) = (self.observation(), self.tree()) else {
                return Err("no screen".into());
            };
            let style = match observation.format {
                ObservationFormat::SphinxTree | ObservationFormat::SphinxList => SomStyle::Sphinx,
                _ => SomStyle::AndroidWorld,
            };
            phonebench_pixels::draw_marks(&mut pixmap, tree, &observation.targets, style);
        }
        Ok(pixmap)
    }

    /// Why there is no episode to act on, and what to do.
    pub fn no_episode(&self) -> String {
        match (&self.verdict, &self.unscored, &self.end) {
            (Some(_), _, _) => "the episode is over: its verdict is read, a reset starts another".into(),
            (None, Some(why), _) => format!("the episode ended unscored ({why}): a reset starts another"),
            (None, None, Some(_)) => "the episode is over: a reset starts another".into(),
            _ => "no episode: start one first".into(),
        }
    }

    /// One agent turn: `raw` is what the agent said, `parsed` the action or why it did not
    /// parse (a format error, handled by the episode's policy). An MCP call goes to the task's
    /// servers first; a server failure under the `infrastructure` policy ends the episode
    /// unscored. When the turn ends the episode, it is judged.
    pub async fn act(&mut self, raw: String, parsed: Result<Action, String>) -> Acted {
        if self.episode.is_none() {
            return Acted::NoEpisode(self.no_episode());
        }
        let format_error = parsed.as_ref().err().cloned();
        let mut mcp_reply = None;
        if let (Ok(Action::McpCall { tool, arguments }), Some(session)) = (&parsed, self.tools.as_mut()) {
            let o = session.call(tool, arguments).await;
            if let (Some(failure), FailurePolicy::Infrastructure) = (&o.failure, session.failure_policy()) {
                // The run's policy: a failed server ends the episode unscored.
                let why = format!("MCP: {failure}");
                self.end_unscored(why.clone()).await;
                return Acted::Unscored(why);
            }
            mcp_reply = Some(phonebench_runner::episode::mcp_reply_of(o));
        }
        let tool_failed =
            matches!(parsed, Ok(Action::McpCall { .. })) && mcp_reply.as_ref().is_none_or(|r| r.is_error);
        let Some(episode) = self.episode.as_mut() else { return Acted::NoEpisode(self.no_episode()) };
        let feedback = match episode.step_turn(TurnInput { mcp_reply, ..TurnInput::new(raw, parsed) }) {
            Ok(f) => f,
            Err(e) => {
                let why = format!("the phone failed: {e}");
                self.unscored = Some(why.clone());
                self.episode = None;
                return Acted::Unscored(why);
            }
        };
        if !feedback.done {
            return Acted::Going { message: feedback.message, tool_failed, format_error };
        }
        let Some(mut episode) = self.episode.take() else { return Acted::NoEpisode(self.no_episode()) };
        if let Some(tools) = self.tools.take() {
            tools.close().await;
        }
        self.keep_final_screen(&mut episode);
        self.steps = episode.steps_taken();
        match episode.finish() {
            Ok(trajectory) => {
                self.end = trajectory.end.clone();
                let verdict = match &self.task {
                    Some(task) if !is_free_phone(task) => {
                        let ctx = EvalContext {
                            semantics: Semantics::AnyMatch,
                            sql_params: task.sql_params.clone(),
                        };
                        Some(evaluate(&task.criteria, &trajectory, &ctx))
                    }
                    _ => None,
                };
                self.verdict = verdict.clone();
                Acted::Over { message: feedback.message, format_error, end: trajectory.end, verdict }
            }
            Err(e) => {
                let why = format!("the phone failed: {e}");
                self.unscored = Some(why.clone());
                Acted::Unscored(why)
            }
        }
    }

    /// Ends the running episode unscored: an infrastructure failure (ours or a server's),
    /// `why`. The task's servers are closed; nothing happens when no episode runs.
    pub async fn end_unscored(&mut self, why: String) {
        let Some(mut episode) = self.episode.take() else { return };
        episode.end_with(EpisodeEnd::Infrastructure { message: why.clone() });
        self.keep_final_screen(&mut episode);
        self.steps = episode.steps_taken();
        self.end = episode.trajectory().end.clone();
        if let Some(tools) = self.tools.take() {
            tools.close().await;
        }
        self.unscored = Some(why);
    }

    fn keep_final_screen(&mut self, episode: &mut Episode) {
        self.final_screen = Some(FinalScreen {
            observation: episode.observation().clone(),
            tree: episode.tree().clone(),
            image: episode.screen_image().ok(),
        });
    }
}

/// Why an episode ended, in words.
pub fn end_text(end: Option<&EpisodeEnd>) -> String {
    match end {
        Some(EpisodeEnd::Finished { status: FinishStatus::Complete }) => "finished".into(),
        Some(EpisodeEnd::Finished { status: FinishStatus::Infeasible }) => "finished as infeasible".into(),
        Some(EpisodeEnd::Answered) => "answered".into(),
        Some(EpisodeEnd::Budget) => "the step budget is used up".into(),
        Some(EpisodeEnd::Timeout) => "the time ran out".into(),
        Some(EpisodeEnd::Repetition) => "the same action came three times in a row".into(),
        Some(EpisodeEnd::FormatError) => "an action did not parse (format errors end the episode)".into(),
        Some(EpisodeEnd::Infrastructure { message }) => format!("an infrastructure failure: {message}"),
        None => "ended".into(),
    }
}

/// A verdict as JSON: task, instance, success, completion share (ACP) and each criterion.
pub fn verdict_json(task: &TaskInstance, verdict: &Verdict) -> Value {
    json!({
        "task_id": task.task_id,
        "instance": task.instance,
        "success": verdict.success,
        "acp": verdict.acp,
        "criteria": verdict.criteria.iter().map(|c| json!({ "label": c.label, "passed": c.passed, "detail": c.detail })).collect::<Vec<_>>(),
    })
}
