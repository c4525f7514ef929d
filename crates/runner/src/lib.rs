//! Running suites: validation, episodes in parallel with budgets and timeouts, results in SQLite
//! and JSON Lines, resume after a crash, metrics and summaries.
//!
//! Flow: [`validate::validate_task`] for each selected task (the runner refuses invalid tasks) →
//! [`run::run_suite`] instantiates every (task, instance), skips those already stored, runs the
//! rest in parallel ([`episode::run_episode`]: agent turns under the step budget and the
//! wall-clock limit, then the criteria) → each result is stored atomically in
//! [`results::ResultsDb`] → `episodes.jsonl` is exported sorted → [`metrics`] summarize.
//!
//! A run can be split into shards ([`shard::Shard`], `--shard I/N`) run anywhere and merged
//! ([`shard::merge`]) into the folder the unsharded run would have written.
//!
//! One run at a time writes a results folder ([`results::ResultsLock`]), and a run resumes
//! only what the same settings, task files, apps and build would have produced
//! ([`results::RunConfig`], [`fingerprint`]).

pub mod episode;
pub mod export;
pub mod fingerprint;
pub mod metrics;
pub mod oracle;
pub mod quality;
pub mod record;
pub mod results;
pub mod run;
pub mod shard;
pub mod validate;

pub use episode::{Extras, Limits, run_agent, run_episode};
pub use export::{ExportError, ExportFormat, ExportOptions, ExportSummary, ImageMode, RolloutCounts, export};
pub use results::{EpisodeResult, ResultsDb, ResultsLock, RunConfig, StepResult};
pub use run::{AgentChoice, AgentKind, DeviceRun, RunError, RunOptions, RunOutcome, run_suite};
pub use shard::{MergeError, MergeOutcome, Shard, merge};
pub use validate::{
    Instantiator, TaskValidation, ValidationCache, cpu_permits, instantiate, validate_task,
    validate_task_with,
};
