//! Why the search did or did not find a known solution: a path (a task's reference, played by a
//! scripted agent) walked state by state, each of its steps looked up in the action space the
//! search offers there ([`actions::candidates`]), with what the search would think of it.
//!
//! For a task author (is my task reachable by the oracle, where does it fall out?) and for
//! whoever tunes the search (which costs and estimates send it elsewhere). A step is *offered*
//! when some candidate reaches the same state as the step ([`state_key`]); two actions that
//! touch different points of one button are one. Nothing here changes what the search does.

use phonebench_actions::Action;
use phonebench_env::{Episode, EpisodeOptions};
use phonebench_eval::{EvalContext, evaluate};
use phonebench_phone::Catalog;
use phonebench_tasks::TaskInstance;
use phonebench_uitree::UiTree;
use serde::Serialize;

use crate::{COMPLETE, SolveError, Wants, actions, failing_checks, mcp, state_key, step, text};

/// One step of the walked path, as the search sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepExplanation {
    /// The step's number (1 = the first action).
    pub number: usize,
    /// The step's action.
    pub action: Action,
    /// What the action touches, when it touches a point: the element's text or description
    /// and its resource id (`Open navigation drawer #drawer_button`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<String>,
    /// Actions the search offers on the screen before the step.
    pub candidates: usize,
    /// The cost of the cheapest candidate reaching the same state as the step (`None`: the
    /// step is not in the action space, so the search cannot take this path).
    pub cost: Option<i64>,
    /// Candidates strictly cheaper than that one (siblings the search tries first); 0 when the
    /// step is not offered.
    pub cheaper: usize,
    /// Other candidates as cheap as that one (siblings tried alongside it); 0 when the step is
    /// not offered.
    pub as_cheap: usize,
    /// Checks failing before the step ([`failing_checks`]): the cost search's estimate is 4 ×
    /// this − min(6, goal words shown).
    pub failing: i64,
    /// Goal words the screen shows before the step (at most 6 count).
    pub goal_words_shown: usize,
    /// When the step is not offered: what the search offers instead on the same element (the
    /// texts it would type there, say; for an action without a point, such as an MCP call or a
    /// wait, every candidate of its kind), with their costs, in the candidates' order; at most
    /// [`MAX_INSTEAD`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub instead: Vec<(Action, i64)>,
}

/// At most this many alternatives are listed for a step that is not offered.
pub const MAX_INSTEAD: usize = 40;

/// The point an action touches, if it names one.
fn point_of(action: &Action) -> Option<(i32, i32)> {
    let target = match action {
        Action::Tap { target } | Action::LongPress { target } | Action::DoubleTap { target } => Some(target),
        Action::Type { target, .. } | Action::Scroll { target, .. } => target.as_ref(),
        _ => None,
    }?;
    match target {
        phonebench_actions::Target::Point(p) => Some((p.x, p.y)),
        _ => None,
    }
}

/// The label of the element `action` touches on `tree` (the node a touch there reaches, or the
/// nearest ancestor of it that says what it is).
fn element_label(tree: &UiTree, action: &Action) -> Option<String> {
    let (x, y) = point_of(action)?;
    let hit = tree.hit_test(x, y)?;
    let mut ids = vec![hit];
    ids.extend(tree.ancestors(hit));
    let node = ids
        .iter()
        .map(|&i| tree.node(i))
        .find(|n| !n.text.is_empty() || !n.content_desc.is_empty() || !n.resource_id.is_empty())?;
    let name = if node.text.is_empty() { &node.content_desc } else { &node.text };
    let id = node.resource_id.rsplit('/').next().unwrap_or("");
    let label = match (name.is_empty(), id.is_empty()) {
        (false, false) => format!("{} #{id}", name.chars().take(60).collect::<String>()),
        (false, true) => name.chars().take(60).collect(),
        (true, _) => format!("#{id}"),
    };
    Some(label)
}

/// The walk of a whole path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// The task.
    pub task: String,
    /// Each action step (the closing `finish` or `answer` is not among them: see `ending`).
    pub steps: Vec<StepExplanation>,
    /// The path's ending (`finish` / `answer`) and whether the search's endings on the last
    /// screen include one that passes (`None` when the path stopped before it ended).
    pub ending: Option<(Action, bool)>,
    /// Whether the path, played to its end, passes the criteria.
    pub passes: bool,
    /// Why the walk stopped early, if it did (the decider gave up, the episode ended).
    pub stopped: Option<String>,
    /// Each fact the reference's texts need ([`crate::reference`]) and the number of the step
    /// before which the path had seen it (0: on the first screen; `None`: never, so the texts
    /// needing it were never offered).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<(String, Option<usize>)>,
}

/// At most this many steps are walked (a decider that never ends).
const MAX_WALK: usize = 200;

/// Walks the path `decide` plays from `instance`'s start (it is asked for each next action on
/// the current screen, as an agent is; `Err` ends the walk early, with the reason) and explains
/// each step. MCP calls are answered by the task's built-in servers, as in the search.
pub fn explain(
    catalog: &Catalog,
    instance: &TaskInstance,
    tools: &mcp::Tools,
    mut decide: impl FnMut(&UiTree) -> Result<Action, String>,
) -> Result<Explanation, SolveError> {
    let mut words = text::GoalWords::of(instance);
    words.reference = std::mem::take(&mut words.reference).with_given(tools.told());
    let wants = Wants::of(&instance.criteria);
    let ctx = EvalContext::for_task(instance);
    let mut episode = Episode::start(catalog, instance, EpisodeOptions::default())?;
    let mut out = Explanation {
        task: instance.task_id.clone(),
        steps: Vec::new(),
        ending: None,
        passes: false,
        stopped: None,
        facts: words.reference.facts.iter().map(|f| (f.clone(), None)).collect(),
    };
    for number in 1..=MAX_WALK {
        if episode.is_done() {
            out.stopped = Some("the episode ended before the path did (its step budget)".into());
            return Ok(out);
        }
        let tree = episode.tree().clone();
        let action = match decide(&tree) {
            Ok(a) => a,
            Err(why) => {
                out.stopped = Some(why);
                return Ok(out);
            }
        };
        let dynamic = text::learnt(episode.trajectory(), &words);
        for (i, (_, at)) in out.facts.iter_mut().enumerate() {
            if at.is_none() && dynamic.landmarks.facts & (1 << i) != 0 {
                *at = Some(number - 1);
            }
        }
        if matches!(action, Action::Finish { .. } | Action::Answer { .. }) {
            let endings = actions::endings(&wants, &tree, &words, &dynamic);
            let mut offered = false;
            for ending in endings {
                let t = episode.stopped_with(&ending)?;
                if evaluate(&instance.criteria, &t, &ctx).success {
                    offered = true;
                    break;
                }
            }
            step(&mut episode, &action, tools)?;
            let trajectory = episode.finish()?;
            out.passes = evaluate(&instance.criteria, &trajectory, &ctx).success;
            out.ending = Some((action, offered));
            return Ok(out);
        }
        let finished = episode.stopped_with(&COMPLETE)?;
        let verdict = evaluate(&instance.criteria, &finished, &ctx);
        let failing = failing_checks(&instance.criteria, &verdict);
        let goal_words_shown = words.on_screen(&tree);
        let candidates = actions::candidates(
            &tree,
            episode.options().display,
            instance,
            &words,
            &dynamic,
            episode.trajectory(),
            tools,
        );
        let before = episode.snapshot()?;
        let key_of = |episode: &mut Episode, a: &Action| -> Result<Option<u128>, SolveError> {
            episode.restore(&before)?;
            step(episode, a, tools)?;
            if episode.is_done() {
                return Ok(None);
            }
            let dynamic = text::learnt(episode.trajectory(), &words);
            let finished = episode.stopped_with(&COMPLETE)?;
            let verdict = evaluate(&instance.criteria, &finished, &ctx);
            Ok(Some(state_key(episode, &finished, &verdict, &dynamic)))
        };
        let wanted = key_of(&mut episode, &action)?;
        let mut cost: Option<i64> = None;
        for c in &candidates {
            if cost.is_some_and(|best| c.cost >= best) {
                continue;
            }
            if wanted.is_some() && key_of(&mut episode, &c.action)? == wanted {
                cost = Some(c.cost);
            }
        }
        let cheaper = cost.map_or(0, |best| candidates.iter().filter(|c| c.cost < best).count());
        let as_cheap = cost.map_or(0, |best| candidates.iter().filter(|c| c.cost == best).count() - 1);
        let instead = if cost.is_some() {
            Vec::new()
        } else {
            let kind = std::mem::discriminant(&action);
            let here = point_of(&action);
            candidates
                .iter()
                .filter(|c| std::mem::discriminant(&c.action) == kind && point_of(&c.action) == here)
                .take(MAX_INSTEAD)
                .map(|c| (c.action.clone(), c.cost))
                .collect()
        };
        out.steps.push(StepExplanation {
            number,
            element: element_label(&tree, &action),
            action: action.clone(),
            candidates: candidates.len(),
            cost,
            cheaper,
            as_cheap,
            failing,
            goal_words_shown,
            instead,
        });
        // On along the path itself.
        episode.restore(&before)?;
        step(&mut episode, &action, tools)?;
    }
    out.stopped = Some(format!("no ending within {MAX_WALK} steps"));
    Ok(out)
}
