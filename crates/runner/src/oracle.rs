//! The oracle ([`phonebench_solve`]) as the runner uses it: each task's reference length as the
//! search's bound, and every solution found re-verified by a normal run (a [`ReplayAgent`]
//! playing it through [`run_episode_with`], judged as `phonebench run` judges).

use std::sync::Arc;

use phonebench_actions::Action;
use phonebench_agents::ReplayAgent;
use phonebench_env::EpisodeOptions;
use phonebench_mcp::McpConfig;
use phonebench_phone::Catalog;
use phonebench_solve::{Budget, Job, SolveOutcome, solve_all};
use phonebench_tasks::TaskInstance;
use serde::Serialize;

use crate::episode::{Limits, reference_run_with, run_episode_with};

/// Told of each search as it ends: the task's position and the outcome (before re-verification).
pub type OnSolved = Arc<dyn Fn(usize, &SolveOutcome) + Send + Sync>;

/// One task's oracle result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OracleResult {
    /// The search's outcome (`solved` false, with the reason, when re-verification failed).
    #[serde(flatten)]
    pub outcome: SolveOutcome,
    /// The reference's turns on the instance (its closing `finish` included), when it passes.
    pub reference_length: Option<u32>,
    /// A normal run of the solution succeeded (false when unsolved).
    pub verified: bool,
}

/// The reference's turns on `instance` when it passes its criteria (`None` otherwise).
pub async fn reference_length(
    catalog: &Catalog,
    instance: &TaskInstance,
    mcp: &Arc<McpConfig>,
) -> Option<u32> {
    match reference_run_with(catalog, instance, EpisodeOptions::default(), mcp).await {
        Ok((steps, finished)) if finished.verdict.success => Some(steps),
        _ => None,
    }
}

/// Plays `solution` with a [`ReplayAgent`] through a normal episode; `Ok(())` when the verdict
/// is success in exactly `solution.len()` turns, `Err` saying what happened otherwise.
pub async fn verify(
    catalog: &Catalog,
    instance: &TaskInstance,
    solution: &[Action],
    mcp: &Arc<McpConfig>,
) -> Result<(), String> {
    let mut agent = ReplayAgent::new(solution.to_vec());
    let finished =
        run_episode_with(catalog, instance, &mut agent, EpisodeOptions::default(), Limits::default(), mcp)
            .await
            .map_err(|e| e.to_string())?;
    let turns = finished.trajectory.steps.len();
    if !finished.verdict.success {
        let failed: Vec<String> = finished
            .verdict
            .criteria
            .iter()
            .filter(|c| !c.passed)
            .map(|c| format!("{}: {}", c.label, c.detail))
            .collect();
        return Err(format!("the verdict is failure ({})", failed.join("; ")));
    }
    if turns != solution.len() {
        return Err(format!("the run took {turns} turns, not {}", solution.len()));
    }
    Ok(())
}

/// Solves every instance (on `threads` threads, bounded by its reference's length), then
/// re-verifies each solution by a normal run. Results in the instances' order; `on_done` hears
/// of each search as it ends (for progress).
pub async fn solve_instances(
    catalog: &Catalog,
    instances: Vec<TaskInstance>,
    budget: Budget,
    mcp: &Arc<McpConfig>,
    threads: usize,
    on_done: OnSolved,
) -> Vec<OracleResult> {
    let mut jobs = Vec::with_capacity(instances.len());
    for instance in instances {
        let reference_length = reference_length(catalog, &instance, mcp).await;
        jobs.push(Job { instance, reference_length });
    }
    let searched = {
        let (catalog, jobs, config) = (catalog.clone(), jobs.clone(), McpConfig::clone(mcp));
        let done = on_done.clone();
        tokio::task::spawn_blocking(move || {
            solve_all(&catalog, &jobs, &budget, &config, threads, |i, o| done(i, o))
        })
        .await
    };
    let outcomes = match searched {
        Ok(o) => o,
        Err(e) => {
            return jobs
                .iter()
                .map(|job| OracleResult {
                    outcome: SolveOutcome::failed(&job.instance.task_id, format!("the search failed: {e}")),
                    reference_length: job.reference_length,
                    verified: false,
                })
                .collect();
        }
    };
    let mut results = Vec::with_capacity(outcomes.len());
    for (mut outcome, job) in outcomes.into_iter().zip(&jobs) {
        let mut verified = false;
        if outcome.solved {
            match verify(catalog, &job.instance, &outcome.solution, mcp).await {
                Ok(()) => verified = true,
                Err(why) => {
                    outcome.solved = false;
                    outcome.reason = Some(format!(
                        "bug: the solution found failed re-verification by a normal run: {why}"
                    ));
                }
            }
        }
        results.push(OracleResult { outcome, reference_length: job.reference_length, verified });
    }
    results
}
