//! One episode from start to verdict: set up, loop agent turns under the step budget and the
//! wall-clock limit, evaluate; for agents that learn across trials, several trials with a
//! reflection between them.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use phonebench_actions::Action;
use phonebench_agents::llm::user::ModelUser;
use phonebench_agents::{Agent, AgentInput, CallRecord, ReferenceAgent, TrialReport, Turn};
use phonebench_env::{EnvError, Episode, EpisodeEnd, EpisodeOptions, McpReply, Trajectory, TurnInput};
use phonebench_eval::{EvalContext, Verdict, evaluate};
use phonebench_mcp::{FailurePolicy, McpConfig, McpSession};
use phonebench_phone::Catalog;
use phonebench_pixels::ScreenImage;
use phonebench_tasks::TaskInstance;

use crate::results::Usage;

/// Limits of one episode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Overrides the task's step budget.
    pub max_steps: Option<u32>,
    /// Time limit for all trials together, not counting time spent waiting for model servers:
    /// how fast a server answers must not change a trajectory (a cached re-run waits for none),
    /// and a server that does not answer is the server's failure, not the agent's.
    pub timeout: Duration,
    /// The longest one agent turn may take, model calls included. Beyond it the agent is taken
    /// to be stuck on a server that never answers: an infrastructure failure.
    pub turn_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_steps: None, timeout: Duration::from_secs(600), turn_timeout: Duration::from_secs(3600) }
    }
}

/// An episode's time budget: wall time minus the time its agent waited for models.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    started: Instant,
    waited: Duration,
    limit: Duration,
}

impl Budget {
    /// A budget of `limit` starting now.
    pub fn new(limit: Duration) -> Budget {
        Budget { started: Instant::now(), waited: Duration::ZERO, limit }
    }

    /// Whether it is spent.
    pub fn exceeded(&self) -> bool {
        self.started.elapsed().saturating_sub(self.waited) >= self.limit
    }

    /// The instant the budget runs out if no more time is spent waiting for models (`None` when
    /// the limit is too far off to be an instant). Environment steps are held to it.
    pub fn deadline(&self) -> Option<Instant> {
        self.started.checked_add(self.waited)?.checked_add(self.limit)
    }

    /// Takes the model calls' waiting time out of the budget's account.
    pub fn waited_for<'a>(&mut self, calls: impl IntoIterator<Item = &'a CallRecord>) {
        for c in calls {
            self.waited += Duration::from_millis(c.latency_ms);
        }
    }

    /// Takes time spent waiting for an outside server (MCP) out of the budget's account.
    pub fn waited_for_duration(&mut self, waited: Duration) {
        self.waited += waited;
    }
}

/// The most observation text kept per step in results (1 MiB): what the agent saw is stored for
/// the report, and one screen of megabytes of text must not make every stored step that big. The
/// agent itself still gets the whole observation (up to the observation crate's own limit).
pub const MAX_STORED_OBSERVATION_BYTES: usize = 1 << 20;

/// An observation's text as stored: cut at `MAX_STORED_OBSERVATION_BYTES` (on a character
/// boundary) with a last line saying so; and whether it was cut.
pub fn stored_observation(text: &str) -> (String, bool) {
    if text.len() <= MAX_STORED_OBSERVATION_BYTES {
        return (text.to_string(), false);
    }
    let mut end = MAX_STORED_OBSERVATION_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut kept = text[..end].to_string();
    kept.push_str(&format!("\n[observation truncated: {end} of {} bytes kept]", text.len()));
    (kept, true)
}

/// Where an episode's screenshots go: `results_dir/folder/step-NNN.png`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreenshotSink {
    /// The results folder.
    pub results_dir: PathBuf,
    /// The episode's folder, relative to `results_dir` (with `/` separators).
    pub folder: String,
}

impl ScreenshotSink {
    /// Writes `image` as `name` in the episode's folder; returns its path relative to the
    /// results folder.
    fn save(&self, image: &ScreenImage, name: &str) -> Result<String, String> {
        let png = image.png().map_err(|e| format!("screenshot: {e}"))?;
        let relative = format!("{}/{name}", self.folder);
        let path = self.results_dir.join(&relative);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(&path, &png[..]).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(relative)
    }
}

/// What an episode may use besides its agent.
#[derive(Clone, Default)]
pub struct Extras {
    /// A model-based simulated user answering `ask_user` (the keyword user otherwise).
    pub user: Option<Arc<ModelUser>>,
    /// Save a screenshot of every screen.
    pub screenshots: Option<ScreenshotSink>,
    /// The MCP servers tasks may name (the built-in ones unless the configuration redefines
    /// them) and the limits of calls.
    pub mcp: Arc<McpConfig>,
    /// Play on a device opened by this, instead of a fresh simulated phone.
    pub device: Option<phonebench_env::episode::DeviceOpener>,
}

impl std::fmt::Debug for Extras {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extras")
            .field("user", &self.user)
            .field("screenshots", &self.screenshots)
            .field("mcp", &self.mcp)
            .field("device", &self.device.is_some())
            .finish()
    }
}

/// A finished episode (one trial).
#[derive(Debug)]
pub struct Finished {
    /// The trajectory.
    pub trajectory: Trajectory,
    /// The verdict.
    pub verdict: Verdict,
    /// The verdict of the episode as it would have ended without output repair (SPHINX's
    /// "original"), when a step was repaired.
    pub original: Option<Verdict>,
    /// Tokens used.
    pub usage: Usage,
    /// The observations shown before each step (and the final one), as stored: each at most
    /// [`MAX_STORED_OBSERVATION_BYTES`] (see [`stored_observation`]).
    pub observations: Vec<String>,
    /// Whether each of `observations` was cut, here or already when it was rendered.
    pub observations_truncated: Vec<bool>,
    /// The model calls of each step.
    pub calls: Vec<Vec<CallRecord>>,
    /// Each screen's saved screenshot, relative to the results folder.
    pub screenshots: Vec<String>,
    /// The screen size.
    pub screen_size: (u32, u32),
    /// The turns as the agent's history saw them.
    pub turns: Vec<Turn>,
    /// The last screen's picture (for judges that look at it).
    pub last_screen: Option<ScreenImage>,
}

/// An MCP call's outcome as the episode records it.
pub fn mcp_reply_of(outcome: phonebench_mcp::CallOutcome) -> McpReply {
    McpReply {
        text: outcome.text,
        is_error: outcome.is_error,
        truncated: outcome.truncated,
        failure: outcome.failure,
        latency_ms: u64::try_from(outcome.latency.as_millis()).unwrap_or(u64::MAX),
    }
}

/// Runs `agent` on `task` to the end and evaluates the trajectory (the built-in MCP servers).
pub async fn run_episode(
    catalog: &Catalog,
    task: &TaskInstance,
    agent: &mut dyn Agent,
    options: EpisodeOptions,
    limits: Limits,
) -> Result<Finished, EnvError> {
    run_episode_with(catalog, task, agent, options, limits, &Arc::default()).await
}

/// [`run_episode`] with the run's MCP configuration.
pub async fn run_episode_with(
    catalog: &Catalog,
    task: &TaskInstance,
    agent: &mut dyn Agent,
    options: EpisodeOptions,
    limits: Limits,
    mcp: &Arc<McpConfig>,
) -> Result<Finished, EnvError> {
    let mut budget = Budget::new(limits.timeout);
    let extras = Extras { mcp: mcp.clone(), ..Extras::default() };
    run_trial(catalog, task, agent, options, limits, &extras, 0, &mut budget).await
}

/// One trial: a fresh phone, agent turns until the episode ends, the verdicts.
#[allow(clippy::too_many_arguments)]
pub async fn run_trial(
    catalog: &Catalog,
    task: &TaskInstance,
    agent: &mut dyn Agent,
    options: EpisodeOptions,
    limits: Limits,
    extras: &Extras,
    trial: usize,
    budget: &mut Budget,
) -> Result<Finished, EnvError> {
    let mut task = task.clone();
    if let Some(m) = limits.max_steps {
        task.max_steps = m;
    }
    let mut episode = match &extras.device {
        Some(open) => Episode::start_on_device(open()?, catalog, &task, options)?,
        None => Episode::start(catalog, &task, options)?,
    };
    let mut usage = Usage::default();
    let mut observations = Vec::new();
    let mut observations_truncated = Vec::new();
    let mut keep = |observation: &phonebench_observe::Observation| {
        let (text, cut) = stored_observation(&observation.text);
        observations.push(text);
        // Cut here, or already by the observation's own size limit when it was rendered.
        observations_truncated.push(cut || observation.truncated);
    };
    keep(episode.observation());
    let mut calls = Vec::new();
    let mut screenshots = Vec::new();
    let screen = episode.screen_image()?;
    let screen_size = screen.size();
    let shot_name = |step: usize| {
        if trial == 0 {
            format!("step-{step:03}.png")
        } else {
            format!("trial-{}/step-{step:03}.png", trial + 1)
        }
    };
    let mut infrastructure: Option<String> = None;
    if let Some(sink) = &extras.screenshots {
        match sink.save(&screen, &shot_name(0)) {
            Ok(p) => screenshots.push(p),
            Err(e) => infrastructure = Some(e),
        }
    }
    // The task's MCP servers, fresh for this trial (a server's state, like the tracker's new
    // issues, never leaks between episodes). Not reaching one is an infrastructure failure:
    // the agent has done nothing yet.
    let mut mcp = None;
    if !task.mcp_servers.is_empty() && infrastructure.is_none() {
        let started = Instant::now();
        match McpSession::connect(&task.mcp_servers, &task.mcp_tools, &extras.mcp).await {
            Ok(session) => mcp = Some(session),
            Err(e) => infrastructure = Some(e.to_string()),
        }
        budget.waited_for_duration(started.elapsed());
    }
    let mut input = AgentInput {
        goal: episode.goal().to_string(),
        observation: episode.observation().clone(),
        tree: episode.tree().clone(),
        history: Vec::new(),
        step: 0,
        max_steps: episode.task().max_steps as usize,
        mcp_tools: mcp.as_ref().map(|m| m.tools().to_vec()).unwrap_or_default(),
        screen: Some(screen),
    };
    while !episode.is_done() {
        if let Some(message) = infrastructure.take() {
            episode.end_with(EpisodeEnd::Infrastructure { message });
            break;
        }
        if budget.exceeded() {
            episode.end_with(EpisodeEnd::Timeout);
            break;
        }
        let output = match tokio::time::timeout(limits.turn_timeout, agent.act(&input)).await {
            Err(_) => {
                let message = format!(
                    "the agent's turn took over {} s (model calls included): a model server that does not answer?",
                    limits.turn_timeout.as_secs()
                );
                episode.end_with(EpisodeEnd::Infrastructure { message });
                break;
            }
            Ok(Err(e)) => {
                episode.end_with(EpisodeEnd::Infrastructure { message: e.0 });
                break;
            }
            Ok(Ok(output)) => output,
        };
        budget.waited_for(&output.calls);
        let mut step_calls = output.calls;
        let mut user_reply = None;
        if let (Some(user), Ok(Action::AskUser { text })) = (&extras.user, &output.action) {
            let history: Vec<(String, String)> = episode
                .trajectory()
                .exchanges
                .iter()
                .map(|x| (x.question.clone(), x.answer.clone()))
                .collect();
            match user.reply(&task.goal, &task.facts, text, &history).await {
                Ok((reply, record)) => {
                    budget.waited_for([&record]);
                    step_calls.push(record);
                    user_reply = Some(reply);
                }
                Err(e) => {
                    episode
                        .end_with(EpisodeEnd::Infrastructure { message: format!("simulated user: {}", e.0) });
                    break;
                }
            }
        }
        let mut mcp_reply = None;
        if let (Some(session), Ok(Action::McpCall { tool, arguments })) = (mcp.as_mut(), &output.action) {
            let outcome = session.call(tool, arguments).await;
            // Like a model server's, an MCP server's speed must not change the trajectory.
            budget.waited_for_duration(outcome.latency);
            if let (Some(failure), FailurePolicy::Infrastructure) =
                (&outcome.failure, session.failure_policy())
            {
                episode.end_with(EpisodeEnd::Infrastructure { message: format!("MCP: {failure}") });
                break;
            }
            mcp_reply = Some(mcp_reply_of(outcome));
        }
        // Model agents report their calls; an agent without calls may still report tokens.
        let step_usage = if step_calls.is_empty() {
            output.usage
        } else {
            phonebench_agents::Usage::of_calls(&step_calls)
        };
        usage.prompt_tokens = usage.prompt_tokens.saturating_add(step_usage.prompt_tokens);
        usage.completion_tokens = usage.completion_tokens.saturating_add(step_usage.completion_tokens);
        // The environment step is held to what is left of the budget: a render or statement
        // still running when it runs out is stopped, and the episode ends as a timeout.
        episode.set_deadline(budget.deadline());
        let steps_before = episode.steps_taken();
        let feedback = episode.step_turn(TurnInput {
            raw: output.text.clone(),
            parsed: Some(output.action.clone()),
            repaired_from: output.repaired_from,
            user_reply,
            mcp_reply,
        })?;
        if episode.steps_taken() == steps_before {
            // The time ran out before the step: nothing was taken or recorded.
            break;
        }
        calls.push(step_calls);
        keep(episode.observation());
        if episode.trajectory().end == Some(EpisodeEnd::Timeout) {
            // The screen may be the one that could not be rendered in time: do not draw it.
            break;
        }
        input.history.push(Turn { raw: output.text, action: output.action.ok(), feedback: feedback.message });
        input.observation = episode.observation().clone();
        input.tree = episode.tree().clone();
        input.step = episode.steps_taken();
        let screen = episode.screen_image()?;
        if let Some(sink) = &extras.screenshots {
            match sink.save(&screen, &shot_name(input.step)) {
                Ok(p) => screenshots.push(p),
                Err(e) => infrastructure = Some(e),
            }
        }
        input.screen = Some(screen);
    }
    if let Some(message) = infrastructure {
        episode.end_with(EpisodeEnd::Infrastructure { message });
    }
    if let Some(session) = mcp {
        session.close().await;
    }
    let last_screen = input.screen.take();
    let trajectory = episode.finish()?;
    let ctx = EvalContext::for_task(&task);
    let verdict = evaluate(&task.criteria, &trajectory, &ctx);
    let original = trajectory.original().map(|t| evaluate(&task.criteria, &t, &ctx));
    Ok(Finished {
        trajectory,
        verdict,
        original,
        usage,
        observations,
        observations_truncated,
        calls,
        screenshots,
        screen_size,
        turns: input.history,
        last_screen,
    })
}

/// Every trial an agent took at a task, and the calls of the reflections between them.
#[derive(Debug)]
pub struct AgentRun {
    /// The trials, in order; the last one is scored.
    pub trials: Vec<Finished>,
    /// After trial `i` failed (for each but the last): the reflection's model calls.
    pub reflections: Vec<Vec<CallRecord>>,
}

impl AgentRun {
    /// The scored trial.
    pub fn last(&self) -> Option<&Finished> {
        self.trials.last()
    }
}

/// Runs `agent` for as many trials as it takes (one for most agents): after a failed trial that
/// is not the last, the agent reflects, and a fresh phone starts the next. Stops at the first
/// success, an infrastructure failure or a timeout.
pub async fn run_agent(
    catalog: &Catalog,
    task: &TaskInstance,
    agent: &mut dyn Agent,
    options: EpisodeOptions,
    limits: Limits,
    extras: &Extras,
) -> Result<AgentRun, EnvError> {
    let mut budget = Budget::new(limits.timeout);
    let trials = agent.trials().max(1);
    let mut run = AgentRun { trials: Vec::new(), reflections: Vec::new() };
    for trial in 0..trials {
        let finished = run_trial(catalog, task, agent, options, limits, extras, trial, &mut budget).await?;
        let stop = finished.verdict.success
            || trial + 1 == trials
            || matches!(
                finished.trajectory.end,
                Some(EpisodeEnd::Infrastructure { .. } | EpisodeEnd::Timeout)
            );
        let report = TrialReport {
            goal: task.goal.clone(),
            trial: trial + 1,
            turns: finished.turns.clone(),
            success: finished.verdict.success,
        };
        run.trials.push(finished);
        if stop {
            break;
        }
        if budget.exceeded() {
            mark_last(&mut run, EpisodeEnd::Timeout);
            break;
        }
        match tokio::time::timeout(limits.turn_timeout, agent.reflect(&report)).await {
            Ok(Ok(calls)) => {
                budget.waited_for(&calls);
                run.reflections.push(calls);
            }
            Ok(Err(e)) => {
                mark_last(&mut run, EpisodeEnd::Infrastructure { message: format!("reflection: {}", e.0) });
                break;
            }
            Err(_) => {
                let message = format!("reflection: no answer within {} s", limits.turn_timeout.as_secs());
                mark_last(&mut run, EpisodeEnd::Infrastructure { message });
                break;
            }
        }
    }
    Ok(run)
}

/// Ends the run with `end` after its last trial was scored (the next trial never started).
fn mark_last(run: &mut AgentRun, end: EpisodeEnd) {
    if let Some(last) = run.trials.last_mut() {
        last.trajectory.end = Some(end);
    }
}

/// How many turns the reference solution takes on this instance (for SPL), and whether it
/// passes; `Err` says why the reference failed.
pub async fn reference_run(
    catalog: &Catalog,
    task: &TaskInstance,
    options: EpisodeOptions,
) -> Result<(u32, Finished), String> {
    reference_run_with(catalog, task, options, &Arc::default()).await
}

/// [`reference_run`] with the run's MCP configuration.
pub async fn reference_run_with(
    catalog: &Catalog,
    task: &TaskInstance,
    options: EpisodeOptions,
    mcp: &Arc<McpConfig>,
) -> Result<(u32, Finished), String> {
    let mut agent = ReferenceAgent::new(task.reference.clone());
    let finished = run_episode_with(catalog, task, &mut agent, options, Limits::default(), mcp)
        .await
        .map_err(|e| e.to_string())?;
    if let Some(why) = &agent.failure {
        return Err(why.clone());
    }
    let steps = finished.trajectory.steps.len() as u32;
    Ok((steps, finished))
}

/// Actions equal to an earlier action of the episode (SPHINX's repetition count: same action,
/// same point), counted over actions after the first.
pub fn repetitions(trajectory: &Trajectory) -> u32 {
    let mut seen: Vec<(&Action, Option<(i32, i32)>)> = Vec::new();
    let mut count = 0;
    for step in &trajectory.steps {
        let Some(action) = &step.action else { continue };
        if seen.iter().any(|(a, p)| *a == action && *p == step.point) {
            count += 1;
        }
        seen.push((action, step.point));
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_observations_are_cut_at_the_limit_on_a_character_boundary_and_flagged() {
        let small = "a".repeat(100);
        assert_eq!(stored_observation(&small), (small.clone(), false));
        let exact = "a".repeat(MAX_STORED_OBSERVATION_BYTES);
        assert_eq!(stored_observation(&exact), (exact.clone(), false));
        // A two-byte character straddles the limit: the cut falls before it.
        let text = format!("{}é{}", "a".repeat(MAX_STORED_OBSERVATION_BYTES - 1), "b".repeat(1 << 20));
        let (kept, cut) = stored_observation(&text);
        assert!(cut);
        let (body, marker) = kept.rsplit_once('\n').expect("a marker line");
        assert_eq!(body.len(), MAX_STORED_OBSERVATION_BYTES - 1);
        assert!(text.starts_with(body));
        assert_eq!(marker, format!("[observation truncated: {} of {} bytes kept]", body.len(), text.len()));
    }

    #[test]
    fn the_deadline_moves_with_time_spent_waiting_for_models() {
        let mut budget = Budget::new(Duration::from_secs(10));
        let before = budget.deadline().expect("a deadline");
        budget.waited += Duration::from_secs(5);
        assert_eq!(budget.deadline(), before.checked_add(Duration::from_secs(5)));
        assert_eq!(Budget::new(Duration::MAX).deadline(), None, "no instant that far off");
    }
}
