//! Task validation: a task is runnable only when its file is valid against the installed apps,
//! its setup and criterion SQL run, its reference solution passes, doing nothing fails and earns
//! no progress (ACP 0: what holds when nothing happens must be a guard), and random play fails.

use std::collections::BTreeMap;
use std::sync::Arc;

use phonebench_agents::{NoopAgent, RandomAgent};
use phonebench_env::{DatabasePair, EpisodeOptions, Trajectory};
use phonebench_phone::{Catalog, Disturbances, Phone, PhoneConfig};
use phonebench_tasks::{Fnv, LoadError, TaskInstance, TaskSpec, check_against_catalog};

use phonebench_mcp::McpConfig;

use crate::episode::{Finished, Limits, reference_run_with, run_episode_with};

/// Steps the random agent gets when validating.
pub const RANDOM_STEPS: u32 = 100;
/// Seeds the random agent is tried with.
pub const RANDOM_SEEDS: [u64; 3] = [0, 1, 2];
/// Instances whose reference is checked (parameters differ between them).
pub const REFERENCE_INSTANCES: u32 = 3;

/// What validation found for one task.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskValidation {
    /// Task id.
    pub task_id: String,
    /// Problems, each naming file (and line where there is one) and what is wrong. Empty = valid.
    pub problems: Vec<String>,
    /// Reference length on instance 0, when it ran.
    pub reference_steps: Option<u32>,
}

impl TaskValidation {
    /// Whether the task is valid.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Draws an instance, reading query parameters from the apps' initial content.
pub fn instantiate(
    catalog: &Catalog,
    task: &TaskSpec,
    seed: u64,
    instance: u32,
) -> Result<TaskInstance, LoadError> {
    Instantiator::new(catalog.clone()).instantiate(task, seed, instance)
}

/// Draws instances of many tasks ([`instantiate`] each time builds a phone for the parameter
/// queries; this keeps one). Parameter queries only read (the phone refuses anything else), so
/// the phone stays as it was made, except for the generator a query calling `random()` moves:
/// after such a query it is reset before the next.
#[derive(Debug)]
pub struct Instantiator {
    catalog: Catalog,
    phone: Option<Phone>,
    moved: bool,
}

impl Instantiator {
    /// An instantiator for tasks on `catalog`'s apps (the phone is made at the first query).
    pub fn new(catalog: Catalog) -> Instantiator {
        Instantiator { catalog, phone: None, moved: false }
    }

    /// [`instantiate`].
    pub fn instantiate(
        &mut self,
        task: &TaskSpec,
        seed: u64,
        instance: u32,
    ) -> Result<TaskInstance, LoadError> {
        let Instantiator { catalog, phone, moved } = self;
        let mut rows = |app: &str, sql: &str| -> Result<Vec<serde_json::Value>, String> {
            let phone = match phone {
                Some(p) => {
                    if *moved {
                        p.reset().map_err(|e| e.to_string())?;
                        *moved = false;
                    }
                    p
                }
                None => phone
                    .insert(Phone::new(catalog.clone(), PhoneConfig::default()).map_err(|e| e.to_string())?),
            };
            *moved = sql.to_ascii_lowercase().contains("random");
            phone.query_with(app, sql, &BTreeMap::new()).map_err(|e| e.to_string())
        };
        task.instantiate(seed, instance, &mut rows)
    }
}

/// Runs instance `inst`'s setup SQL statement by statement on a fresh phone, then every `state`
/// and `changes` check of its criteria on the resulting databases, the way evaluation runs them
/// ([`phonebench_eval::sql_problems`]). Each problem is `file:line: what: error`, the line being
/// where that SQL is written in the task file. Setup stops at its first error: later statements
/// may depend on it, and the criteria read what setup leaves.
pub fn sql_problems(catalog: &Catalog, task: &TaskSpec, inst: &TaskInstance) -> Vec<String> {
    let at = |line: usize, message: String| LoadError::at(&task.file, line, message).to_string();
    let config =
        PhoneConfig { seed: inst.seed, clock_start_ms: inst.clock_start_ms, ..PhoneConfig::default() };
    let mut phone = match Phone::new(catalog.clone(), config) {
        Ok(p) => p,
        Err(e) => return vec![at(task.lines.id, format!("cannot start a phone to check the SQL: {e}"))],
    };
    for (i, setup) in inst.setup.iter().enumerate() {
        // One statement at a time (the episode runs them all in one transaction), so that an
        // error points at its own statement's line.
        for (line, statement) in phonebench_apps::sql::split_statements(&setup.sql) {
            if let Err(e) = phone.execute(&setup.app, statement, &inst.sql_params) {
                return vec![at(task.lines.setup_sql_line(i, line), format!("setup: {e}"))];
            }
        }
    }
    let mut apps = Vec::new();
    for c in &inst.criteria {
        c.state_apps(&mut apps);
    }
    let mut trajectory = Trajectory::default();
    for app in apps {
        // An app that is not installed is `check_against_catalog`'s to report.
        if let Ok(bytes) = phone.database_bytes(&app) {
            trajectory.databases.insert(app, DatabasePair { initial: bytes.clone(), last: bytes });
        }
    }
    phonebench_eval::sql_problems(&inst.criteria, &trajectory, &inst.sql_params)
        .into_iter()
        .map(|p| {
            at(
                task.lines.criterion_sql(p.criterion, p.leaf),
                format!("criterion `{}`: {}", p.label, p.message),
            )
        })
        .collect()
}

fn failed_criteria(f: &Finished) -> String {
    let failed: Vec<String> = f
        .verdict
        .criteria
        .iter()
        .filter(|c| !c.passed)
        .map(|c| if c.detail.is_empty() { c.label.clone() } else { format!("{} ({})", c.label, c.detail) })
        .collect();
    failed.join("; ")
}

/// Validates one task against the installed apps (MCP tasks with the built-in servers).
pub async fn validate_task(catalog: &Catalog, task: &TaskSpec, suite_seed: u64) -> TaskValidation {
    validate_task_with(catalog, task, suite_seed, &Arc::default(), Disturbances::None).await
}

/// [`validate_task`] with a run's MCP configuration (servers beyond the built-in ones), every
/// agent playing at a disturbance level (the reference taking the standard dismiss step).
pub async fn validate_task_with(
    catalog: &Catalog,
    task: &TaskSpec,
    suite_seed: u64,
    mcp: &Arc<McpConfig>,
    disturbances: Disturbances,
) -> TaskValidation {
    let mut v = TaskValidation { task_id: task.id.clone(), problems: Vec::new(), reference_steps: None };
    let file = task.file.display().to_string();
    if let Err(e) = check_against_catalog(task, catalog) {
        v.problems.push(e.to_string());
        return v;
    }
    let options = EpisodeOptions { disturbances, ..EpisodeOptions::default() };
    let mut instances = Vec::new();
    for instance in 0..REFERENCE_INSTANCES {
        let inst = match instantiate(catalog, task, suite_seed, instance) {
            Ok(i) => i,
            Err(e) => {
                v.problems.push(e.to_string());
                return v;
            }
        };
        if instance == 0 {
            let problems = sql_problems(catalog, task, &inst);
            if !problems.is_empty() {
                v.problems.extend(problems);
                return v;
            }
        }
        match reference_run_with(catalog, &inst, options, mcp).await {
            Err(why) => {
                v.problems.push(format!("{file}: instance {instance}: the reference does not run: {why}"));
                return v;
            }
            Ok((_, finished))
                if matches!(
                    finished.trajectory.end,
                    Some(phonebench_env::EpisodeEnd::Infrastructure { .. })
                ) =>
            {
                let why = match &finished.trajectory.end {
                    Some(phonebench_env::EpisodeEnd::Infrastructure { message }) => message.as_str(),
                    _ => "",
                };
                v.problems
                    .push(format!("{file}: instance {instance}: the reference episode could not run: {why}"));
                return v;
            }
            Ok((steps, finished)) => {
                if !finished.verdict.success {
                    v.problems.push(format!(
                        "{file}: instance {instance}: the reference solution fails: {}",
                        failed_criteria(&finished)
                    ));
                    return v;
                }
                if instance == 0 {
                    v.reference_steps = Some(steps);
                }
                // Disturbances come with their own turns (`extra_steps`).
                let budget = inst.max_steps.saturating_add(disturbances.extra_steps());
                if steps > budget {
                    v.problems.push(format!(
                        "{file}: instance {instance}: the reference takes {steps} steps, over the budget of {budget}"
                    ));
                }
            }
        }
        instances.push((instance, inst));
    }
    // Doing nothing is checked on every instance the reference was: parameters drawn differently
    // can make a criterion hold untouched on one instance and not another.
    for (instance, inst) in &instances {
        match run_episode_with(catalog, inst, &mut NoopAgent, options, Limits::default(), mcp).await {
            Ok(f) if f.verdict.success => {
                v.problems.push(format!(
                    "{file}: instance {instance}: doing nothing passes: the criteria hold in the initial state"
                ));
                break;
            }
            Ok(f) if f.verdict.acp > 0.0 => {
                // Progress for doing nothing: each criterion that holds untouched is named at its line.
                let acp = f.verdict.acp * 100.0;
                for (i, c) in f.verdict.criteria.iter().enumerate().filter(|(_, c)| c.passed && !c.guard) {
                    let line = task.lines.criteria.get(i).copied().unwrap_or(task.lines.id);
                    v.problems.push(LoadError::at(&task.file, line, format!(
                        "criterion `{}` holds when the agent does nothing (instance {instance}: doing nothing \
                         earns ACP {acp:.1}%): if it says something must stay as it was, mark it `guard = true` \
                         (guards gate success but are not progress); otherwise make it require the change the \
                         goal asks for",
                        c.label
                    )).to_string());
                }
                break;
            }
            Ok(_) => {}
            Err(e) => {
                v.problems.push(format!("{file}: instance {instance}: the noop episode failed to run: {e}"));
                break;
            }
        }
    }
    // Each random seed plays a different instance, for the same cost as playing one.
    for (k, seed) in RANDOM_SEEDS.into_iter().enumerate() {
        let Some((instance, inst)) = instances.get(k % instances.len().max(1)) else { break };
        let mut agent = RandomAgent::new(seed);
        let limits = Limits { max_steps: Some(RANDOM_STEPS), ..Limits::default() };
        match run_episode_with(catalog, inst, &mut agent, options, limits, mcp).await {
            Ok(f) if f.verdict.success => v.problems.push(format!(
                "{file}: instance {instance}: random play (seed {seed}, {RANDOM_STEPS} steps) passes: the criteria \
                 are too easy to hit"
            )),
            Ok(_) => {}
            Err(e) => v.problems.push(format!(
                "{file}: instance {instance}: the random episode (seed {seed}) failed to run: {e}"
            )),
        }
    }
    v
}

/// Remembers which tasks validated, so a run does not replay every reference, noop and random
/// episode again when nothing changed. A task's key hashes its file, the suite seed and a `salt`
/// the caller derives from everything else validation depends on (the app packages and the
/// program itself); any change gives a new key. Only successes are remembered.
#[derive(Debug, Clone)]
pub struct ValidationCache {
    dir: std::path::PathBuf,
    salt: u64,
}

impl ValidationCache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: std::path::PathBuf, salt: u64) -> ValidationCache {
        ValidationCache { dir, salt }
    }

    fn marker(&self, task: &TaskSpec, suite_seed: u64) -> Option<std::path::PathBuf> {
        let text = std::fs::read(&task.file).ok()?;
        let mut h = Fnv::default();
        h.eat(&self.salt.to_le_bytes());
        h.eat(&suite_seed.to_le_bytes());
        h.eat(task.id.as_bytes());
        h.eat(&text);
        let mut h2 = Fnv(0x84222325cbf29ce4);
        h2.eat(&text);
        h2.eat(&self.salt.to_be_bytes());
        Some(self.dir.join(format!("{:016x}{:016x}", h.0, h2.0)))
    }

    /// Whether this exact task was validated before.
    pub fn is_valid(&self, task: &TaskSpec, suite_seed: u64) -> bool {
        self.marker(task, suite_seed).is_some_and(|m| m.is_file())
    }

    /// Records a successful validation (best effort: a cache that cannot be written only costs time).
    pub fn remember(&self, task: &TaskSpec, suite_seed: u64) {
        if let Some(m) = self.marker(task, suite_seed) {
            let _ = std::fs::create_dir_all(&self.dir);
            let _ = std::fs::write(m, task.id.as_bytes());
        }
    }
}

/// Permits for CPU-bound work spawned on a runtime, one per core. Episodes run without yielding
/// between their steps; hundreds of them queued at once on the runtime would starve the tasks
/// that must answer quickly (a built-in MCP server listing its tools has 30 s), so spawned
/// validations and quality checks each hold a permit while they work and wait without one.
pub fn cpu_permits() -> Arc<tokio::sync::Semaphore> {
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
    Arc::new(tokio::sync::Semaphore::new(cores))
}

/// The problem `validate --oracle` reports for a task whose reference is longer than the
/// oracle's (re-verified) solution on instance 0: `None` when the reference is as short, or the
/// oracle found nothing.
pub fn oracle_problem(file: &str, result: &crate::oracle::OracleResult) -> Option<String> {
    let reference = result.reference_length?;
    let o = &result.outcome;
    if !(o.solved && result.verified && o.length < reference) {
        return None;
    }
    let actions: Vec<String> =
        o.solution.iter().map(|a| serde_json::to_string(a).unwrap_or_default()).collect();
    Some(format!(
        "{file}: the reference takes {reference} turns on instance 0, the oracle solved it in {}: {}",
        o.length,
        actions.join(" ")
    ))
}
