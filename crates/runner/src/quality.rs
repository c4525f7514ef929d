//! The task-quality report: for each task, what a benchmark builder needs to judge it — how long
//! its reference is, how many criteria and which tags it has, and how much room random play
//! finds (how many distinct paths and screens it reaches, whether it ever succeeds) — plus the
//! pairs of tasks whose goals read nearly alike.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use phonebench_agents::RandomAgent;
use phonebench_env::EpisodeOptions;
use phonebench_mcp::McpConfig;
use phonebench_phone::Catalog;
use phonebench_tasks::TaskSpec;
use serde::Serialize;

use crate::episode::{Limits, reference_run_with, run_episode_with};
use crate::validate::instantiate;

/// How the report plays each task.
#[derive(Debug, Clone)]
pub struct QualityOptions {
    /// Suite seed of the instance played (instance 0).
    pub seed: u64,
    /// Seeds of the random runs.
    pub random_seeds: Vec<u64>,
    /// Steps each random run gets.
    pub random_steps: u32,
    /// The MCP servers of MCP tasks.
    pub mcp: Arc<McpConfig>,
    /// The disturbances the reference and the random runs play with.
    pub disturbances: phonebench_phone::Disturbances,
}

impl Default for QualityOptions {
    fn default() -> Self {
        QualityOptions {
            seed: 0,
            random_seeds: (0..5).collect(),
            random_steps: crate::validate::RANDOM_STEPS,
            mcp: Arc::default(),
            disturbances: phonebench_phone::Disturbances::None,
        }
    }
}

/// One task's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskQuality {
    /// Task id.
    pub task: String,
    /// Category name.
    pub category: String,
    /// Apps the task involves.
    pub apps: Vec<String>,
    /// Tags, by taxonomy axis.
    pub tags: BTreeMap<String, Vec<String>>,
    /// Top-level criteria.
    pub criteria: usize,
    /// The goal of instance 0.
    pub goal: String,
    /// Steps of the reference solution on instance 0, when it ran.
    pub reference_steps: Option<u32>,
    /// Why the instance or its reference did not run, if it did not.
    pub problem: Option<String>,
    /// Random runs played.
    pub random_runs: usize,
    /// Random runs that succeeded (a task random play solves is too easy, or its checks too loose).
    pub random_successes: usize,
    /// Distinct paths among the random runs: sequences of screens (app and screen name).
    pub random_paths: usize,
    /// Distinct screens the random runs reached.
    pub random_screens: usize,
}

/// Measures one task (instance 0 at `options.seed`).
pub async fn task_quality(catalog: &Catalog, spec: &TaskSpec, options: &QualityOptions) -> TaskQuality {
    let mut quality = TaskQuality {
        task: spec.id.clone(),
        category: spec.category.name().to_string(),
        apps: spec.apps.clone(),
        tags: spec.tags.clone(),
        criteria: spec.criteria.len(),
        goal: String::new(),
        reference_steps: None,
        problem: None,
        random_runs: 0,
        random_successes: 0,
        random_paths: 0,
        random_screens: 0,
    };
    let inst = match instantiate(catalog, spec, options.seed, 0) {
        Ok(i) => i,
        Err(e) => {
            quality.problem = Some(e.to_string());
            return quality;
        }
    };
    quality.goal = inst.goal.clone();
    let episode_options = EpisodeOptions { disturbances: options.disturbances, ..EpisodeOptions::default() };
    match reference_run_with(catalog, &inst, episode_options, &options.mcp).await {
        Ok((steps, _)) => quality.reference_steps = Some(steps),
        Err(e) => quality.problem = Some(format!("the reference did not run: {e}")),
    }
    let limits = Limits { max_steps: Some(options.random_steps), ..Limits::default() };
    let mut paths = BTreeSet::new();
    let mut screens = BTreeSet::new();
    for seed in &options.random_seeds {
        // Seeded per task instance too: tasks that start on the same screen would otherwise
        // all be explored along the same paths.
        let mut agent = RandomAgent::new(inst.seed ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let Ok(finished) =
            run_episode_with(catalog, &inst, &mut agent, episode_options, limits, &options.mcp).await
        else {
            continue;
        };
        quality.random_runs += 1;
        quality.random_successes += usize::from(finished.verdict.success);
        let path: Vec<(String, String)> = finished
            .trajectory
            .screens
            .iter()
            .map(|s| (s.app.clone().unwrap_or_default(), s.activity.clone()))
            .collect();
        screens.extend(path.iter().cloned());
        paths.insert(path);
    }
    quality.random_paths = paths.len();
    quality.random_screens = screens.len();
    quality
}

/// Two tasks whose goals read nearly alike.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimilarGoals {
    /// One task.
    pub a: String,
    /// The other.
    pub b: String,
    /// Jaccard similarity of their goals' word sets (numbers count as one word), 0 to 1; 1 is
    /// the same goal up to numbers, case and punctuation.
    pub similarity: f64,
}

/// The words of a goal: lower case, split at anything not a letter or digit, every number read
/// as `#` (instances differ in their numbers, not in what they ask).
fn goal_words(goal: &str) -> BTreeSet<String> {
    goal.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| if w.chars().all(|c| c.is_ascii_digit()) { "#".to_string() } else { w.to_lowercase() })
        .collect()
}

/// The pairs of `(task, goal)` whose goals are at least `threshold` alike, most alike first
/// (ties in task order).
pub fn similar_goals(goals: &[(String, String)], threshold: f64) -> Vec<SimilarGoals> {
    let words: Vec<BTreeSet<String>> = goals.iter().map(|(_, g)| goal_words(g)).collect();
    let mut out = Vec::new();
    for i in 0..goals.len() {
        for j in i + 1..goals.len() {
            let (a, b) = (&words[i], &words[j]);
            let union = a.union(b).count();
            if union == 0 {
                continue;
            }
            let similarity = a.intersection(b).count() as f64 / union as f64;
            if similarity >= threshold {
                out.push(SimilarGoals { a: goals[i].0.clone(), b: goals[j].0.clone(), similarity });
            }
        }
    }
    out.sort_by(|x, y| y.similarity.total_cmp(&x.similarity));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(goals: &[(&str, &str)], threshold: f64) -> Vec<(String, String)> {
        let goals: Vec<(String, String)> =
            goals.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        similar_goals(&goals, threshold).into_iter().map(|s| (s.a, s.b)).collect()
    }

    #[test]
    fn goals_alike_up_to_numbers_case_and_punctuation_are_flagged() {
        let goals = [
            ("a", "Set an alarm for 7:30."),
            ("b", "set an alarm for 6:45"),
            ("c", "Delete the contact named Ana."),
            ("d", "Tell me the phone number of Ana"),
        ];
        assert_eq!(pairs(&goals, 1.0), vec![("a".to_string(), "b".to_string())]);
        assert!(pairs(&goals, 0.8).iter().all(|(a, _)| a == "a"));
        // Unrelated goals stay apart even at a low threshold.
        assert!(!pairs(&goals, 0.3).contains(&("a".to_string(), "c".to_string())));
    }

    #[test]
    fn most_alike_come_first() {
        let goals: Vec<(String, String)> = [
            ("x", "send a message to Bob saying hi"),
            ("y", "send a message to Bob saying hello"),
            ("z", "send a message to Bob saying hi"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let found = similar_goals(&goals, 0.5);
        assert_eq!((found[0].a.as_str(), found[0].b.as_str(), found[0].similarity), ("x", "z", 1.0));
        assert!(found[1].similarity < 1.0);
    }
}
