//! Turning a finished episode (all its trials, judges and model calls) into the rows that are
//! stored: one [`EpisodeResult`], its [`StepResult`]s and its [`Accounting`].

use std::collections::BTreeMap;

use phonebench_agents::CallRecord;
use phonebench_env::EpisodeEnd;
use phonebench_eval::CriterionVerdict;
use phonebench_tasks::{Fnv, TaskInstance};

use crate::episode::{AgentRun, Finished, repetitions};
use crate::results::{
    Accounting, CriterionResult, EpisodeResult, JudgeResult, Score, StepResult, TrialResult, Usage,
};

/// `task#instance`.
pub fn episode_key(task_id: &str, instance: u32) -> String {
    format!("{task_id}#{instance}")
}

/// The key of an episode played with disturbances: `task_id#instance@level` (without them,
/// [`episode_key`]'s, so results without disturbances read as they always did).
pub fn disturbed_key(task_id: &str, instance: u32, level: phonebench_phone::Disturbances) -> String {
    match level {
        phonebench_phone::Disturbances::None => episode_key(task_id, instance),
        level => format!("{task_id}#{instance}@{level}"),
    }
}

/// A file or folder name for an episode key: the key with every character outside
/// `[A-Za-z0-9._-]` replaced by `_` (so it cannot leave its folder and needs no escaping), cut
/// short, and a hash of the whole key so that keys which read alike stay apart.
pub fn safe_name(key: &str) -> String {
    let mut base: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .take(100)
        .collect();
    if base.is_empty() || base.starts_with('.') {
        base.insert(0, '_');
    }
    let mut h = Fnv::default();
    h.eat(key.as_bytes());
    format!("{base}-{:08x}", h.0 as u32)
}

/// Tags as `axis=value` strings.
pub fn tag_labels(tags: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    tags.iter().flat_map(|(axis, values)| values.iter().map(move |v| format!("{axis}={v}"))).collect()
}

fn criterion_result(v: &CriterionVerdict) -> CriterionResult {
    CriterionResult {
        label: v.label.clone(),
        passed: v.passed,
        guard: v.guard,
        step: v.step,
        detail: v.detail.clone(),
        children: v.children.iter().map(criterion_result).collect(),
    }
}

/// The stored name of how an episode ended.
pub fn end_name(end: Option<&EpisodeEnd>) -> String {
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
        ..EpisodeResult::default()
    }
}

/// What else an episode produced besides its trials.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Turns the reference solution takes on this instance.
    pub reference_steps: u32,
    /// The agent rewrites unparseable outputs: store the "original" score too.
    pub repairs: bool,
    /// The agent takes several trials: store each.
    pub multi_trial: bool,
    /// Model-judge verdicts.
    pub judge: Vec<JudgeResult>,
    /// The judges' model calls.
    pub judge_calls: Vec<CallRecord>,
}

/// The stored form of a finished episode: the result (the last trial scored), its steps (every
/// trial's, then the judges' calls on the last screen row) and what it spent.
pub fn to_results(
    task: &TaskInstance,
    agent: &str,
    run: &AgentRun,
    outcome: &Outcome,
) -> (EpisodeResult, Vec<StepResult>, Accounting) {
    let Some(last) = run.last() else {
        let episode = EpisodeResult {
            end: "infrastructure".into(),
            infrastructure_error: Some("the agent took no trial".into()),
            ..blank_result(task, agent)
        };
        return (episode, Vec::new(), Accounting::default());
    };
    let t = &last.trajectory;
    let infrastructure_error = match &t.end {
        Some(EpisodeEnd::Infrastructure { message }) => Some(message.clone()),
        _ => None,
    };
    let mut steps = Vec::new();
    for (trial, finished) in run.trials.iter().enumerate() {
        let reflection = run.reflections.get(trial);
        let judge = (trial + 1 == run.trials.len()).then_some(&outcome.judge_calls);
        steps.extend(step_results(trial as u32, finished, reflection.into_iter().chain(judge).flatten()));
    }
    let all_calls: Vec<&CallRecord> = steps.iter().flat_map(|s: &StepResult| &s.calls).collect();
    // Model agents' tokens are their calls'; an agent without calls may still report some.
    let usage = if all_calls.is_empty() {
        run.trials.iter().fold(Usage::default(), |u, f| Usage {
            prompt_tokens: u.prompt_tokens.saturating_add(f.usage.prompt_tokens),
            completion_tokens: u.completion_tokens.saturating_add(f.usage.completion_tokens),
        })
    } else {
        Usage::of_calls(all_calls.iter().copied())
    };
    // A cost only when every call has a price: a partial sum would read as the whole.
    let cost_usd = if all_calls.is_empty() || all_calls.iter().any(|c| c.cost_usd.is_none()) {
        None
    } else {
        Some(all_calls.iter().map(|c| c.cost_usd.unwrap_or(0.0)).sum())
    };
    let accounting = Accounting::of_calls(all_calls.iter().copied());
    let trials = if outcome.multi_trial {
        run.trials
            .iter()
            .map(|f| TrialResult {
                success: f.verdict.success,
                acp: f.verdict.acp,
                steps: f.trajectory.steps.len() as u32,
                end: end_name(f.trajectory.end.as_ref()),
            })
            .collect()
    } else {
        Vec::new()
    };
    let episode = EpisodeResult {
        success: last.verdict.success && infrastructure_error.is_none(),
        acp: last.verdict.acp,
        steps: t.steps.len() as u32,
        reference_steps: outcome.reference_steps,
        queries: t.exchanges.len() as u32,
        mcp_calls: t.mcp_calls.len() as u32,
        mcp_errors: t.mcp_calls.iter().filter(|c| c.is_error).count() as u32,
        // The model's own format errors: repaired outputs count too (`repairs` says how many).
        format_errors: (t.format_errors() + t.repairs()) as u32,
        repetitions: repetitions(t),
        end: end_name(t.end.as_ref()),
        infrastructure_error,
        answer: t.answer.clone(),
        criteria: last.verdict.criteria.iter().map(criterion_result).collect(),
        usage,
        model_calls: accounting.calls,
        cost_usd,
        repairs: t.repairs() as u32,
        original: outcome.repairs.then(|| {
            let v = last.original.as_ref().unwrap_or(&last.verdict);
            Score { success: v.success, acp: v.acp }
        }),
        judge: outcome.judge.clone(),
        trials,
        ..blank_result(task, agent)
    };
    (episode, steps, accounting)
}

/// One row per screen of a trial; `extra` calls (reflection, judges) go on its last row.
fn step_results<'a>(
    trial: u32,
    finished: &Finished,
    extra: impl Iterator<Item = &'a CallRecord>,
) -> Vec<StepResult> {
    let t = &finished.trajectory;
    let mut rows: Vec<StepResult> = t
        .screens
        .iter()
        .enumerate()
        .map(|(i, screen)| {
            let step = t.steps.get(i);
            StepResult {
                step: i as u32,
                trial,
                app: screen.app.clone(),
                activity: screen.activity.clone(),
                observation: finished.observations.get(i).cloned().unwrap_or_default(),
                observation_truncated: finished.observations_truncated.get(i).copied().unwrap_or(false),
                raw: step.map(|s| s.raw.clone()).unwrap_or_default(),
                action: step.and_then(|s| s.action.as_ref()).and_then(|a| serde_json::to_value(a).ok()),
                point: step.and_then(|s| s.point),
                hit: step.and_then(|s| s.hit.as_ref()).map(describe_node),
                feedback: step.and_then(|s| s.feedback.clone()),
                format_error: step.and_then(|s| s.format_error.clone()),
                rejected: step.and_then(|s| s.rejected.clone()),
                repaired_from: step.and_then(|s| s.repaired_from.clone()),
                calls: finished.calls.get(i).cloned().unwrap_or_default(),
                screenshot: finished.screenshots.get(i).cloned(),
                screen_size: Some(finished.screen_size),
                mcp: t.mcp_calls.iter().find(|c| c.step == i).cloned(),
            }
        })
        .collect();
    if let Some(last) = rows.last_mut() {
        last.calls.extend(extra.cloned());
    }
    rows
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_names_stay_in_their_folder_and_apart() {
        let a = safe_name("contacts/add#0");
        let b = safe_name("contacts?add#0");
        assert!(a.starts_with("contacts_add_0-"), "{a}");
        assert_ne!(a, b, "keys that sanitize alike get different names");
        assert!(safe_name("../../etc/passwd").starts_with("_.._.._etc_passwd-"));
        assert!(safe_name("").starts_with('_'));
        for n in [a, b, safe_name("héllo wörld")] {
            assert!(n.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)), "{n}");
        }
    }
}
