//! Running a suite: instances in parallel, results stored as they finish, resume after a crash.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use phonebench_agents::llm::ModelAgentSpec;
use phonebench_agents::llm::judge::{Judge, JudgeInput};
use phonebench_agents::llm::user::ModelUser;
use phonebench_agents::{Agent, HumanAgent, NoopAgent, RandomAgent, ReferenceAgent};
use phonebench_env::EpisodeOptions;
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Catalog, Disturbances};
use phonebench_tasks::{Suite, TaskInstance, TaskSpec};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::episode::{AgentRun, Extras, Limits, ScreenshotSink, reference_run_with, run_agent};
use crate::fingerprint::{binary_identity, dir_hash, file_hash};
use crate::record::{Outcome, blank_result, disturbed_key, episode_key, safe_name, to_results};
use crate::results::{
    Accounting, EpisodeResult, JudgeResult, ResultsDb, ResultsError, ResultsLock, RunConfig, StepResult,
};
use crate::validate::{ValidationCache, instantiate, validate_task_with};

/// The folder (inside a results folder) that holds saved screenshots, one subfolder per episode.
pub const SCREENSHOTS_DIR: &str = "screenshots";

/// The built-in agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentKind {
    /// Replays each task's reference solution.
    Reference,
    /// Finishes at once.
    Noop,
    /// Seeded random play (seed derived from the instance seed).
    Random,
    /// A person at the terminal (runs one episode at a time).
    Human,
}

impl AgentKind {
    /// Every kind, by name.
    pub const ALL: [(&'static str, AgentKind); 4] = [
        ("reference", AgentKind::Reference),
        ("noop", AgentKind::Noop),
        ("random", AgentKind::Random),
        ("human", AgentKind::Human),
    ];

    /// Looks an agent up by name.
    pub fn parse(name: &str) -> Result<AgentKind, String> {
        AgentKind::ALL.iter().find(|(n, _)| *n == name).map(|(_, k)| *k).ok_or_else(|| {
            let names: Vec<&str> = AgentKind::ALL.iter().map(|(n, _)| *n).collect();
            format!("unknown agent `{name}` (built-in agents: {})", names.join(", "))
        })
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        AgentKind::ALL.iter().find(|(_, k)| *k == self).map(|(n, _)| *n).unwrap_or("?")
    }

    fn build(self, task: &TaskInstance) -> Box<dyn Agent> {
        match self {
            AgentKind::Reference => Box::new(ReferenceAgent::new(task.reference.clone())),
            AgentKind::Noop => Box::new(NoopAgent),
            // Its own stream, derived from (not equal to) the phone's seed.
            AgentKind::Random => Box::new(RandomAgent::new(task.seed ^ 0x5eed_a9e7_0000_0001)),
            AgentKind::Human => Box::new(HumanAgent),
        }
    }
}

/// The agent of a run: a built-in scripted one or a model-driven configuration.
#[derive(Debug, Clone)]
pub enum AgentChoice {
    /// reference, noop, random or human.
    Builtin(AgentKind),
    /// A configuration with its models.
    Model(Arc<ModelAgentSpec>),
}

impl AgentChoice {
    /// The agent's name in results.
    pub fn name(&self) -> String {
        match self {
            AgentChoice::Builtin(k) => k.name().to_string(),
            AgentChoice::Model(spec) => spec.config.name.clone(),
        }
    }

    /// A fresh agent for one episode.
    pub fn build(&self, task: &TaskInstance) -> Box<dyn Agent> {
        match self {
            AgentChoice::Builtin(k) => k.build(task),
            AgentChoice::Model(spec) => spec.build(&episode_key(&task.task_id, task.instance)),
        }
    }

    /// The observation format the agent needs (its element indexes refer to it).
    pub fn observation(&self) -> Option<ObservationFormat> {
        match self {
            AgentChoice::Builtin(_) => None,
            AgentChoice::Model(spec) => Some(spec.observation()),
        }
    }

    fn is(&self, kind: AgentKind) -> bool {
        matches!(self, AgentChoice::Builtin(k) if *k == kind)
    }
}

/// What to run and where results go.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Suite name for the results (the folder's name when not given).
    pub suite_name: String,
    /// Task id glob.
    pub tasks: Option<String>,
    /// The agent.
    pub agent: AgentChoice,
    /// Instances per task.
    pub instances: u32,
    /// Suite seed.
    pub seed: u64,
    /// Episodes at once.
    pub concurrency: usize,
    /// Results folder.
    pub out: PathBuf,
    /// Continue a run in `out`.
    pub resume: bool,
    /// Start over: delete the results already in `out` first (under its lock).
    pub fresh: bool,
    /// Per-episode limits.
    pub limits: Limits,
    /// Episode options.
    pub episode: EpisodeOptions,
    /// Show a progress bar.
    pub progress: bool,
    /// Skip re-validating tasks that validated before unchanged.
    pub validation_cache: Option<ValidationCache>,
    /// The model judge for tasks with `judge` checks (reported apart from the score).
    pub judge: Option<Arc<Judge>>,
    /// A model-based simulated user (the keyword user otherwise).
    pub user: Option<Arc<ModelUser>>,
    /// Save a PNG of every screen under `out/screenshots/`.
    pub save_screenshots: bool,
    /// Stop starting episodes after this many infrastructure failures in a row (a model server
    /// that is down fails every episode; `--resume` finishes the run later). 0 never stops.
    pub stop_after_infrastructure: usize,
    /// MCP servers beyond (or instead of) the built-in ones, and the limits of calls.
    pub mcp: Arc<phonebench_mcp::McpConfig>,
    /// Run only this slice of the episodes ([`crate::shard`]); `None` runs them all.
    pub shard: Option<crate::shard::Shard>,
    /// Play every episode at each of these disturbance levels (`[None]` by default); with
    /// several, the report sets the success rates side by side (the robustness delta).
    /// `episode.disturbances` is set per episode from this list.
    pub disturbances: Vec<phonebench_phone::Disturbances>,
    /// Play on this device instead of the simulated phone: one episode at a time, tasks not
    /// validated on the simulated phone (their apps may not be there) but checked for what a
    /// device can judge.
    pub device: Option<DeviceRun>,
}

/// A device a run plays on.
#[derive(Clone)]
pub struct DeviceRun {
    /// Its address (`adb:emulator-5554`), stored in the run's configuration.
    pub name: String,
    /// Opens it for each episode.
    pub open: phonebench_env::episode::DeviceOpener,
    /// It shows only pixels (VNC): tasks that need the real tree are refused too.
    pub pixels_only: bool,
}

impl std::fmt::Debug for DeviceRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceRun").field("name", &self.name).finish_non_exhaustive()
    }
}

impl RunOptions {
    /// One instance of every task of `suite_name` by `agent` into `out`, seed 0, one episode at
    /// a time, default limits and episode options, nothing optional (no judge, model user,
    /// screenshots, progress bar or validation cache): set the fields that differ.
    pub fn new(suite_name: &str, agent: AgentChoice, out: &Path) -> RunOptions {
        RunOptions {
            suite_name: suite_name.to_string(),
            tasks: None,
            agent,
            instances: 1,
            seed: 0,
            concurrency: 1,
            out: out.to_path_buf(),
            resume: false,
            fresh: false,
            limits: Limits::default(),
            episode: EpisodeOptions::default(),
            progress: false,
            validation_cache: None,
            judge: None,
            user: None,
            save_screenshots: false,
            stop_after_infrastructure: 0,
            mcp: Arc::default(),
            shard: None,
            disturbances: vec![phonebench_phone::Disturbances::None],
            device: None,
        }
    }

    /// The disturbance levels, in the order given, each once (`none` when the list is empty).
    fn levels(&self) -> Vec<phonebench_phone::Disturbances> {
        let mut levels = Vec::new();
        for level in &self.disturbances {
            if !levels.contains(level) {
                levels.push(*level);
            }
        }
        if levels.is_empty() {
            levels.push(phonebench_phone::Disturbances::None);
        }
        levels
    }
}

/// Why a run could not happen.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Results storage failed.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// Tasks did not validate.
    #[error("these tasks do not validate, so they cannot be run:\n{0}")]
    Invalid(String),
    /// No task matched.
    #[error("no task matches `{0}`")]
    NoTasks(String),
    /// A task could not be instantiated.
    #[error("{0}")]
    Instance(String),
    /// Tasks cannot run on the device.
    #[error("these tasks cannot run on a device:\n{0}")]
    NotForDevice(String),
}

/// What a run produced.
#[derive(Debug)]
pub struct RunOutcome {
    /// Every episode in the results folder (this run's and resumed ones), sorted.
    pub episodes: Vec<EpisodeResult>,
    /// Episodes run now.
    pub ran: usize,
    /// Episodes found done and skipped (resume).
    pub skipped: usize,
    /// The `episodes.jsonl` written.
    pub jsonl: PathBuf,
    /// Set when the run stopped early: episodes kept failing for infrastructure reasons, or the
    /// person at the terminal (the human agent) closed stdin before the last episode.
    pub stopped: Option<String>,
    /// What the episodes run now spent.
    pub accounting: Accounting,
    /// The results folder's lock, still held: whatever the caller writes into the folder next
    /// (the report) is written under it. Dropping it lets other runs in.
    pub lock: ResultsLock,
}

/// Validates the selected tasks, then runs every instance not already done, storing each as it
/// finishes.
pub async fn run_suite(
    catalog: &Catalog,
    suite: &Suite,
    options: &RunOptions,
) -> Result<RunOutcome, RunError> {
    let selected = suite.select(options.tasks.as_deref());
    if selected.is_empty() {
        return Err(RunError::NoTasks(options.tasks.clone().unwrap_or_else(|| "*".into())));
    }
    // Taken first, so a second run into the folder is refused at once, and held to the end: two
    // runs writing one folder would destroy each other's results.
    let lock = ResultsLock::acquire(&options.out)?;
    if options.fresh {
        crate::results::clear(&lock)?;
    }
    // Opened before validating, so that a file that is not ours is refused at once.
    let mut db = ResultsDb::open_locked(&lock)?;
    let mut options = options.clone();
    if let Some(format) = options.agent.observation() {
        options.episode.format = format;
    }
    let options = &options;
    let levels = options.levels();
    let (model, agent_fingerprint) = match &options.agent {
        AgentChoice::Model(spec) => {
            (Some(spec.models.main.model.model().to_string()), Some(spec.fingerprint()))
        }
        AgentChoice::Builtin(_) => (None, None),
    };
    let config = RunConfig {
        suite: options.suite_name.clone(),
        agent: options.agent.name(),
        seed: options.seed,
        instances: options.instances,
        tasks: options.tasks.clone(),
        format: options.episode.format.name().to_string(),
        model,
        agent_fingerprint,
        max_steps: options.limits.max_steps,
        end_on_format_error: options.episode.format_errors == phonebench_env::FormatErrorPolicy::End,
        stop_on_repetition: options.episode.stop_on_repetition,
        display: (options.episode.display != phonebench_phone::Display::default())
            .then(|| options.episode.display.to_string()),
        user: options.user.as_ref().map(|u| u.fingerprint()),
        judge: options.judge.as_ref().map(|j| j.fingerprint()),
        timeout_ms: Some(options.limits.timeout.as_millis() as u64),
        turn_timeout_ms: Some(options.limits.turn_timeout.as_millis() as u64),
        save_screenshots: options.save_screenshots,
        suite_file: Some(hash_of(&suite.dir.join("suite.toml"), file_hash)?),
        task_files: selected
            .iter()
            .map(|t| Ok((t.id.clone(), hash_of(&t.file, file_hash)?)))
            .collect::<Result<_, RunError>>()?,
        apps: catalog
            .apps()
            .iter()
            .map(|a| Ok((a.manifest.id.clone(), hash_of(&a.dir, dir_hash)?)))
            .collect::<Result<_, RunError>>()?,
        binary: Some(binary_identity()),
        mcp: (*options.mcp != phonebench_mcp::McpConfig::default()).then(|| options.mcp.fingerprint()),
        shard: options.shard.map(|s| s.to_string()),
        disturbances: if levels == [Disturbances::None] {
            Vec::new()
        } else {
            levels.iter().map(|l| l.to_string()).collect()
        },
        device: options.device.as_ref().map(|d| d.name.clone()),
    };
    // The run's episodes in suite order, each task with its instances, each at every level; a
    // shard keeps its slice.
    let episodes: Vec<(&TaskSpec, u32, Disturbances)> = selected
        .iter()
        .flat_map(|t| (0..options.instances).map(move |i| (*t, i)))
        .flat_map(|(t, i)| levels.iter().map(move |l| (t, i, *l)))
        .enumerate()
        .filter(|(k, _)| options.shard.is_none_or(|s| s.holds(*k)))
        .map(|(_, e)| e)
        .collect();
    if options.device.is_some() {
        // A device judges what is on its screen: tasks that need the simulated phone's
        // databases or events are refused up front, all of them listed.
        let pixels_only = options.device.as_ref().is_some_and(|d| d.pixels_only);
        let mut refused = Vec::new();
        for task in &selected {
            let reasons = if pixels_only { task.pixels_problems() } else { task.device_problems() };
            if !reasons.is_empty() {
                refused.push(format!("{} ({}): {}", task.id, task.file.display(), reasons.join("; ")));
            }
        }
        if levels != [Disturbances::None] {
            refused.push("disturbances are the simulated phone's; a device shows its own".into());
        }
        if !refused.is_empty() {
            return Err(RunError::NotForDevice(refused.join("\n")));
        }
    }
    // Claimed before validating: a folder holding another run's results is refused at once.
    db.claim(&config, options.resume)?;
    // Tasks validate independently: in parallel, problems reported in suite order.
    let mut checks = JoinSet::new();
    // Only the tasks this run (or shard) plays are validated.
    let played: std::collections::BTreeSet<&str> = episodes.iter().map(|(t, _, _)| t.id.as_str()).collect();
    let permits = crate::validate::cpu_permits();
    // On a device the simulated phone's validation does not apply (a device task's apps may not
    // exist there); the checks above are what holds.
    let validate = options.device.is_none();
    for (i, task) in selected.iter().enumerate().filter(|(_, t)| validate && played.contains(t.id.as_str())) {
        if options.validation_cache.as_ref().is_some_and(|c| c.is_valid(task, options.seed)) {
            continue;
        }
        let (catalog, task, seed) = (catalog.clone(), (*task).clone(), options.seed);
        let (cache, mcp) = (options.validation_cache.clone(), options.mcp.clone());
        let permits = permits.clone();
        checks.spawn(async move {
            let _permit = permits.acquire_owned().await;
            let v = validate_task_with(&catalog, &task, seed, &mcp, Disturbances::None).await;
            if let Some(cache) = cache.filter(|_| v.ok()) {
                cache.remember(&task, seed);
            }
            (i, v)
        });
    }
    let mut validations = Vec::new();
    while let Some(joined) = checks.join_next().await {
        validations.push(joined.map_err(|e| RunError::Instance(format!("a validation task panicked: {e}")))?);
    }
    validations.sort_by_key(|(i, _)| *i);
    let invalid: Vec<String> = validations.into_iter().flat_map(|(_, v)| v.problems).collect();
    if !invalid.is_empty() {
        return Err(RunError::Invalid(invalid.join("\n")));
    }
    let done = db.done_keys()?;

    let mut pending = Vec::new();
    let mut skipped = 0;
    for (task, instance, level) in episodes {
        if done.contains(&disturbed_key(&task.id, instance, level)) {
            skipped += 1;
            continue;
        }
        let inst = instantiate(catalog, task, options.seed, instance)
            .map_err(|e| RunError::Instance(e.to_string()))?;
        pending.push((inst, level));
    }

    let human = options.agent.is(AgentKind::Human);
    // A person reads prompts on stderr, where the bar would draw over them.
    let bar = if options.progress && !human {
        ProgressBar::new(pending.len() as u64)
    } else {
        ProgressBar::hidden()
    };
    // Cleared however this function returns, so nothing printed next runs into it.
    let bar = ClearOnDrop(bar);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} episodes {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    // One person, or one device: one episode at a time.
    let concurrency = if human || options.device.is_some() { 1 } else { options.concurrency.max(1) };
    let permits = Arc::new(Semaphore::new(concurrency));
    let total = pending.len();
    let mut set: JoinSet<Option<Stored>> = JoinSet::new();
    let mut ran = 0usize;
    let mut successes = 0usize;
    let mut finished_count = 0usize;
    let mut infrastructure_in_a_row = 0usize;
    let mut stopped = None;
    let mut accounting = Accounting::default();
    for (inst, level) in pending {
        let permits = permits.clone();
        let catalog = catalog.clone();
        let mut opts = options.clone();
        opts.episode.disturbances = level;
        set.spawn(async move {
            let _permit = permits.acquire_owned().await;
            // The person stopped (end of stdin) during an earlier episode: start no other. One
            // episode at a time, so the flag is set before this one gets its permit.
            if human && HumanAgent::stdin_closed() {
                return None;
            }
            let started = Instant::now();
            let (episode, steps, accounting) = run_instance(&catalog, &inst, &opts).await;
            Some((episode, steps, accounting, started.elapsed().as_millis() as u64))
        });
    }
    while let Some(joined) = set.join_next().await {
        let (episode, steps, spent, wall_ms) = match joined {
            Ok(Some(r)) => r,
            // Not started (the person stopped), or aborted after the run stopped early: that
            // episode is simply not stored.
            Ok(None) => continue,
            Err(e) if e.is_cancelled() => continue,
            Err(e) => return Err(RunError::Instance(format!("an episode task panicked: {e}"))),
        };
        db.insert(&episode, &steps, &spent, wall_ms)?;
        ran += 1;
        accounting.add(&spent);
        finished_count += 1;
        successes += usize::from(episode.success);
        bar.set_message(format!("SR {:.0}%", 100.0 * successes as f64 / finished_count as f64));
        bar.inc(1);
        match &episode.infrastructure_error {
            Some(error) => {
                infrastructure_in_a_row += 1;
                if options.stop_after_infrastructure > 0
                    && infrastructure_in_a_row >= options.stop_after_infrastructure
                    && stopped.is_none()
                {
                    stopped = Some(format!(
                        "stopped after {infrastructure_in_a_row} infrastructure failures in a row (last: {error}); \
                         fix the cause and continue with --resume"
                    ));
                    set.abort_all();
                }
            }
            None => infrastructure_in_a_row = 0,
        }
    }
    drop(bar);
    // The person stopped before the end: the run is incomplete (when it was the last episode,
    // that episode was scored and nothing is left to do).
    let left = total.saturating_sub(ran);
    if human && HumanAgent::stdin_closed() && left > 0 && stopped.is_none() {
        stopped = Some(format!(
            "stdin closed: the person at the terminal stopped; the episode in progress was scored as it stood \
             and {left} episode{} not started; continue the run with the same command and --resume",
            if left == 1 { " was" } else { "s were" }
        ));
    }
    let jsonl = db.export_jsonl()?;
    Ok(RunOutcome { episodes: db.episodes()?, ran, skipped, jsonl, stopped, accounting, lock })
}

/// An episode as stored: result, steps, what it spent, wall time in ms.
type Stored = (EpisodeResult, Vec<StepResult>, Accounting, u64);

/// A progress bar that is cleared when dropped (on every way out of the run).
struct ClearOnDrop(ProgressBar);

impl std::ops::Deref for ClearOnDrop {
    type Target = ProgressBar;
    fn deref(&self) -> &ProgressBar {
        &self.0
    }
}

impl Drop for ClearOnDrop {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// The hash of a suite, task or app file (or folder) that shapes the episodes.
fn hash_of(
    path: &std::path::Path,
    hash: fn(&std::path::Path) -> std::io::Result<String>,
) -> Result<String, RunError> {
    hash(path).map_err(|source| RunError::Results(ResultsError::Io { path: path.to_path_buf(), source }))
}

/// Runs one instance at `options.episode.disturbances`; harness failures become infrastructure
/// results (kept apart, retried on resume), never agent failures.
async fn run_instance(
    catalog: &Catalog,
    inst: &TaskInstance,
    options: &RunOptions,
) -> (EpisodeResult, Vec<StepResult>, Accounting) {
    let level = options.episode.disturbances;
    let (mut episode, steps, accounting) = run_undisturbed_keyed(catalog, inst, options).await;
    episode.key = disturbed_key(&inst.task_id, inst.instance, level);
    episode.disturbances = level;
    (episode, steps, accounting)
}

/// [`run_instance`]'s work, with the result keyed as if undisturbed (the caller re-keys it).
async fn run_undisturbed_keyed(
    catalog: &Catalog,
    inst: &TaskInstance,
    options: &RunOptions,
) -> (EpisodeResult, Vec<StepResult>, Accounting) {
    let agent_name = options.agent.name();
    let infrastructure = |message: String| {
        let episode = EpisodeResult {
            end: "infrastructure".into(),
            infrastructure_error: Some(message),
            ..blank_result(inst, &agent_name)
        };
        (episode, Vec::new(), Accounting::default())
    };
    // The reference's length (SPL's yardstick) from the simulated phone. On a device run whose
    // task's apps are not simulated, the reference as written is the yardstick.
    let reference_run = reference_run_with(catalog, inst, options.episode, &options.mcp).await;
    let (reference_steps, reference) = match (reference_run, &options.device) {
        (Ok((steps, finished)), _) => (steps, Some(finished)),
        (Err(_), Some(_)) => (inst.reference.len() as u32, None),
        (Err(e), None) => return infrastructure(format!("the reference solution did not run: {e}")),
    };
    let mut agent = options.agent.build(inst);
    let reuse_reference = options.agent.is(AgentKind::Reference)
        && options.limits.max_steps.is_none()
        && !options.save_screenshots
        && options.device.is_none();
    let run = if let Some(reference) = reference.filter(|_| reuse_reference) {
        AgentRun { trials: vec![reference], reflections: Vec::new() }
    } else {
        let key = disturbed_key(&inst.task_id, inst.instance, options.episode.disturbances);
        let extras = Extras {
            user: options.user.as_ref().map(|u| Arc::new(u.scoped(&key))),
            screenshots: options.save_screenshots.then(|| ScreenshotSink {
                results_dir: options.out.clone(),
                folder: format!("{SCREENSHOTS_DIR}/{}", safe_name(&key)),
            }),
            mcp: options.mcp.clone(),
            device: options.device.as_ref().map(|d| d.open.clone()),
        };
        match run_agent(catalog, inst, agent.as_mut(), options.episode, options.limits, &extras).await {
            Ok(run) => run,
            Err(e) => return infrastructure(e.to_string()),
        }
    };
    let mut outcome = Outcome {
        reference_steps,
        repairs: agent.repairs(),
        multi_trial: agent.trials() > 1,
        ..Outcome::default()
    };
    let judge = options
        .judge
        .as_ref()
        .map(|j| j.scoped(&disturbed_key(&inst.task_id, inst.instance, options.episode.disturbances)));
    if let (Some(judge), Some(last)) = (&judge, run.last())
        && last
            .trajectory
            .end
            .as_ref()
            .is_none_or(|e| !matches!(e, phonebench_env::EpisodeEnd::Infrastructure { .. }))
    {
        for (i, check) in inst.judges.iter().enumerate() {
            let shown = (check.screens.max(1) as usize).min(last.observations.len());
            let input = JudgeInput {
                goal: inst.goal.clone(),
                answer: last.trajectory.answer.clone(),
                screens: last.observations[last.observations.len() - shown..].to_vec(),
                question: check.question.clone(),
                screenshot: if check.images { last.last_screen.clone() } else { None },
            };
            match judge.judge(&input).await {
                Ok((verdict, record)) => {
                    outcome.judge.push(JudgeResult {
                        name: check.name.clone().unwrap_or_else(|| format!("judge {}", i + 1)),
                        passed: verdict.passed,
                        reason: verdict.reason,
                    });
                    outcome.judge_calls.push(record);
                }
                Err(e) => return infrastructure(format!("model judge: {}", e.0)),
            }
        }
    }
    to_results(inst, &agent_name, &run, &outcome)
}
