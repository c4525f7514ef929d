//! One episode from start to verdict: set up, loop agent turns under the step budget and the
//! wall-clock limit, evaluate, and turn it into stored rows.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use phonebench_agents::{Agent, AgentInput, ReferenceAgent, Turn};
use phonebench_env::{EnvError, Episode, EpisodeEnd, EpisodeOptions, Trajectory};
use phonebench_eval::{CriterionVerdict, EvalContext, Semantics, Verdict, evaluate};
use phonebench_phone::Catalog;
use phonebench_tasks::TaskInstance;

use crate::results::{CriterionResult, EpisodeResult, StepResult, Usage};

/// Limits of one episode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Overrides the task's step budget.
    pub max_steps: Option<u32>,
    /// Wall-clock limit.
    pub timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_steps: None, timeout: Duration::from_secs(600) }
    }
}

/// A finished episode.
#[derive(Debug)]
pub struct Finished {
    /// The trajectory.
    pub trajectory: Trajectory,
    /// The verdict.
    pub verdict: Verdict,
    /// Tokens used.
    pub usage: Usage,
    /// The observations shown before each step (and the final one).
    pub observations: Vec<String>,
}

/// Runs `agent` on `task` to the end and evaluates the trajectory.
pub async fn run_episode(
    catalog: &Catalog,
    task: &TaskInstance,
    agent: &mut dyn Agent,
    options: EpisodeOptions,
    limits: Limits,
) -> Result<Finished, EnvError> {
    let mut task = task.clone();
    if let Some(m) = limits.max_steps {
        task.max_steps = m;
    }
    let started = Instant::now();
    let mut episode = Episode::start(catalog, &task, options)?;
    let mut usage = Usage::default();
    let mut observations = vec![episode.observation().text.clone()];
    let mut input = AgentInput {
        goal: episode.goal().to_string(),
        observation: episode.observation().clone(),
        tree: episode.tree().clone(),
        history: Vec::new(),
        step: 0,
        max_steps: task.max_steps as usize,
        mcp_tools: task.mcp_tools.clone(),
    };
    while !episode.is_done() {
        let Some(remaining) = limits.timeout.checked_sub(started.elapsed()) else {
            episode.end_with(EpisodeEnd::Timeout);
            break;
        };
        let output = match tokio::time::timeout(remaining, agent.act(&input)).await {
            Err(_) => {
                episode.end_with(EpisodeEnd::Timeout);
                break;
            }
            Ok(Err(e)) => {
                episode.end_with(EpisodeEnd::Infrastructure { message: e.0 });
                break;
            }
            Ok(Ok(output)) => output,
        };
        usage.prompt_tokens += output.usage.prompt_tokens;
        usage.completion_tokens += output.usage.completion_tokens;
        let feedback = episode.step(output.text.clone(), output.action.clone())?;
        observations.push(episode.observation().text.clone());
        input.history.push(Turn { raw: output.text, action: output.action.ok(), feedback: feedback.message });
        input.observation = episode.observation().clone();
        input.tree = episode.tree().clone();
        input.step = episode.steps_taken();
    }
    let trajectory = episode.finish()?;
    let ctx = EvalContext { semantics: Semantics::AnyMatch, sql_params: task.sql_params.clone() };
    let verdict = evaluate(&task.criteria, &trajectory, &ctx);
    Ok(Finished { trajectory, verdict, usage, observations })
}

/// How many turns the reference solution takes on this instance (for SPL), and whether it
/// passes; `Err` says why the reference failed.
pub async fn reference_run(
    catalog: &Catalog,
    task: &TaskInstance,
    options: EpisodeOptions,
) -> Result<(u32, Finished), String> {
    let mut agent = ReferenceAgent::new(task.reference.clone());
    let finished = run_episode(catalog, task, &mut agent, options, Limits::default())
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
    let mut seen: Vec<(&phonebench_actions::Action, Option<(i32, i32)>)> = Vec::new();
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

fn criterion_result(v: &CriterionVerdict) -> CriterionResult {
    CriterionResult {
        label: v.label.clone(),
        passed: v.passed,
        step: v.step,
        detail: v.detail.clone(),
        children: v.children.iter().map(criterion_result).collect(),
    }
}

fn end_name(end: Option<&EpisodeEnd>) -> String {
    match end {
        Some(EpisodeEnd::Finished { status }) => format!("finished ({status:?})").to_lowercase(),
        Some(EpisodeEnd::Answered) => "answered".into(),
        Some(EpisodeEnd::Budget) | None => "budget".into(),
        Some(EpisodeEnd::Repetition) => "repetition".into(),
        Some(EpisodeEnd::FormatError) => "format_error".into(),
        Some(EpisodeEnd::Timeout) => "timeout".into(),
        Some(EpisodeEnd::Infrastructure { .. }) => "infrastructure".into(),
    }
}

/// An episode's result with its identity filled in and nothing measured yet.
pub fn blank_result(task: &TaskInstance, agent: &str) -> EpisodeResult {
    EpisodeResult {
        key: episode_key(&task.task_id, task.instance),
        task_id: task.task_id.clone(),
        instance: task.instance,
        seed: task.seed,
        category: task.category.name().to_string(),
        tags: task.tags.clone(),
        goal: task.goal.clone(),
        agent: agent.to_string(),
        success: false,
        acp: 0.0,
        steps: 0,
        reference_steps: 0,
        queries: 0,
        mcp_calls: 0,
        format_errors: 0,
        repetitions: 0,
        end: String::new(),
        infrastructure_error: None,
        answer: None,
        criteria: Vec::new(),
        usage: Usage::default(),
    }
}

/// The stored form of a finished episode.
pub fn to_results(
    task: &TaskInstance,
    agent: &str,
    reference_steps: u32,
    finished: &Finished,
) -> (EpisodeResult, Vec<StepResult>) {
    let t = &finished.trajectory;
    let infrastructure_error = match &t.end {
        Some(EpisodeEnd::Infrastructure { message }) => Some(message.clone()),
        _ => None,
    };
    let episode = EpisodeResult {
        success: finished.verdict.success && infrastructure_error.is_none(),
        acp: finished.verdict.acp,
        steps: t.steps.len() as u32,
        reference_steps,
        queries: t.exchanges.len() as u32,
        mcp_calls: t.mcp_calls.len() as u32,
        format_errors: t.format_errors() as u32,
        repetitions: repetitions(t),
        end: end_name(t.end.as_ref()),
        infrastructure_error,
        answer: t.answer.clone(),
        criteria: finished.verdict.criteria.iter().map(criterion_result).collect(),
        usage: finished.usage,
        ..blank_result(task, agent)
    };
    let mut steps = Vec::new();
    for (i, screen) in t.screens.iter().enumerate() {
        let step = t.steps.get(i);
        steps.push(StepResult {
            step: i as u32,
            app: screen.app.clone(),
            activity: screen.activity.clone(),
            observation: finished.observations.get(i).cloned().unwrap_or_default(),
            raw: step.map(|s| s.raw.clone()).unwrap_or_default(),
            action: step.and_then(|s| s.action.as_ref()).and_then(|a| serde_json::to_value(a).ok()),
            point: step.and_then(|s| s.point),
            hit: step.and_then(|s| s.hit.as_ref()).map(describe_node),
            feedback: step.and_then(|s| s.feedback.clone()),
            format_error: step.and_then(|s| s.format_error.clone()),
            rejected: step.and_then(|s| s.rejected.clone()),
        });
    }
    (episode, steps)
}

fn describe_node(node: &phonebench_uitree::Node) -> String {
    let mut parts = vec![node.class.clone()];
    if !node.resource_id.is_empty() {
        parts.push(format!("id={}", node.short_resource_id()));
    }
    if !node.text.is_empty() {
        parts.push(format!("text={:?}", node.text));
    }
    if !node.content_desc.is_empty() {
        parts.push(format!("desc={:?}", node.content_desc));
    }
    parts.join(" ")
}

/// `task#instance`.
pub fn episode_key(task_id: &str, instance: u32) -> String {
    format!("{task_id}#{instance}")
}

/// Tags as `axis=value` strings.
pub fn tag_labels(tags: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    tags.iter().flat_map(|(axis, values)| values.iter().map(move |v| format!("{axis}={v}"))).collect()
}
