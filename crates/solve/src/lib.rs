//! An oracle that solves tasks by searching the simulated phone (`docs/solve.md`).
//!
//! [`solve`] searches from a task instance's initial state — the phone as `phonebench run` sets
//! it up — over the actions the screen offers ([`actions`]), replaying each path on a fresh
//! [`Episode`] (the simulator is deterministic, so a path names a state), until the task's
//! criteria pass when the episode ends there. Endings are judged exactly as a run judges them:
//! [`Episode::stopped_with`] and [`phonebench_eval::evaluate`] under
//! [`EvalContext::for_task`]; a candidate that passes is then played for real (the ending step
//! taken on the episode, [`Episode::finish`]) and judged again before it counts.
//!
//! The search is best-first (a weighted cost, [`actions::Candidate::cost`], plus a progress
//! estimate of the state): it is not guaranteed to find the shortest solution, but every
//! solution it reports is the shortest it found, and is never longer than the bound (the
//! reference's length, or the task's step budget). When the search space under the bound is
//! exhausted ([`SolveOutcome::exhaustive`]), no shorter solution exists among the states the
//! action space reaches (states deduplicated as [`state_key`] says).
//!
//! The budget is deterministic (replayed states, depth); nothing depends on the wall clock, so
//! the outcome is byte-identical across runs and machines.

pub mod actions;
pub mod text;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use phonebench_actions::{Action, FinishStatus};
use phonebench_env::{EnvError, Episode, EpisodeOptions, TurnInput};
use phonebench_eval::{EvalContext, Verdict, evaluate};
use phonebench_phone::Catalog;
use phonebench_tasks::{Criterion, CriterionKind, TaskInstance};
use serde::Serialize;

pub use actions::Candidate;

/// Why a search could not run at all (an unsolved task is not an error).
#[derive(Debug, thiserror::Error)]
pub enum SolveError {
    /// The episode could not start or go on (task setup, the phone).
    #[error("episode: {0}")]
    Env(#[from] EnvError),
}

/// How much a search may do. Every figure is a count, never a duration, so the outcome is the
/// same on every machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Budget {
    /// States replayed and judged at most (each is one path replayed on the phone).
    pub max_expansions: usize,
    /// After the first solution: at most this many more states, looking for a shorter one.
    pub improve_expansions: usize,
    /// The longest solution searched (actions including the final `finish` / `answer`);
    /// `None`: the reference's length, or the task's step budget when there is no reference.
    pub max_depth: Option<u32>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget { max_expansions: 1500, improve_expansions: 300, max_depth: None }
    }
}

/// The outcome of searching one task instance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SolveOutcome {
    /// The task's id.
    pub task: String,
    /// Whether a solution was found (and passed when played for real).
    pub solved: bool,
    /// The shortest solution found: every action, the final `finish` or `answer` included.
    pub solution: Vec<Action>,
    /// `solution.len()` (0 when unsolved).
    pub length: u32,
    /// The bound the search kept to (the longest solution it would accept).
    pub bound: u32,
    /// States replayed and judged.
    pub expansions: usize,
    /// States replayed and judged when the first solution was found.
    pub first_solution_at: Option<usize>,
    /// Phone steps taken replaying paths (the search's cost).
    pub steps_replayed: u64,
    /// Every state under the bound was visited: no shorter solution exists in the action space.
    pub exhaustive: bool,
    /// Why no solution was found (`None` when solved).
    pub reason: Option<String>,
}

impl SolveOutcome {
    /// The outcome of a search that could not run (or did not end) on `task`, saying why.
    pub fn failed(task: &str, reason: String) -> SolveOutcome {
        SolveOutcome {
            task: task.to_string(),
            solved: false,
            solution: Vec::new(),
            length: 0,
            bound: 0,
            expansions: 0,
            first_solution_at: None,
            steps_replayed: 0,
            exhaustive: false,
            reason: Some(reason),
        }
    }
}

/// Searches `instance` for the shortest sequence of actions after which its criteria pass.
/// `reference_length` bounds the solution (the reference's turns on this instance, its closing
/// `finish` included); without it, the task's step budget does.
pub fn solve(
    catalog: &Catalog,
    instance: &TaskInstance,
    reference_length: Option<u32>,
    budget: &Budget,
) -> Result<SolveOutcome, SolveError> {
    Search::new(catalog, instance, reference_length, budget).run()
}

/// One task for [`solve_all`].
#[derive(Debug, Clone)]
pub struct Job {
    /// The instance to solve.
    pub instance: TaskInstance,
    /// The reference's length on it (the bound), when known.
    pub reference_length: Option<u32>,
}

/// Solves every job on `threads` threads (at least one); outcomes in the jobs' order, each
/// reported to `on_done` (in completion order) as it ends. A job whose episode fails is an
/// unsolved outcome saying why.
pub fn solve_all<F>(
    catalog: &Catalog,
    jobs: &[Job],
    budget: &Budget,
    threads: usize,
    on_done: F,
) -> Vec<SolveOutcome>
where
    F: Fn(usize, &SolveOutcome) + Sync,
{
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<SolveOutcome>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1).min(jobs.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = jobs.get(i) else { break };
                    let outcome = match solve(catalog, &job.instance, job.reference_length, budget) {
                        Ok(o) => o,
                        Err(e) => SolveOutcome::failed(&job.instance.task_id, e.to_string()),
                    };
                    on_done(i, &outcome);
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(outcome);
                    }
                }
            });
        }
    });
    results
        .into_iter()
        .zip(jobs)
        .map(|(slot, job)| {
            slot.into_inner().ok().flatten().unwrap_or_else(|| {
                SolveOutcome::failed(&job.instance.task_id, "the search thread panicked".into())
            })
        })
        .collect()
}

/// What the criteria ask for, found by walking them (endings worth trying, actions worth
/// offering).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wants {
    /// Some check reads the agent's answer.
    pub answer: bool,
    /// Some answer check wants a number.
    pub number: bool,
    /// Some check wants `finish` with status infeasible.
    pub infeasible: bool,
    /// Some check reads MCP calls.
    pub mcp: bool,
}

impl Wants {
    /// Walks `criteria` (combinators included).
    pub fn of(criteria: &[Criterion]) -> Wants {
        let mut wants = Wants::default();
        let mut stack: Vec<&Criterion> = criteria.iter().collect();
        while let Some(c) = stack.pop() {
            match &c.kind {
                CriterionKind::All(v)
                | CriterionKind::Any(v)
                | CriterionKind::Sequence(v)
                | CriterionKind::Consecutive(v) => stack.extend(v.iter()),
                CriterionKind::Not(inner) => stack.push(inner),
                CriterionKind::Answer(check) => {
                    wants.answer = true;
                    if matches!(check, phonebench_tasks::criteria::AnswerCheck::Number { .. }) {
                        wants.number = true;
                    }
                }
                CriterionKind::Finish(f)
                    if f.status == phonebench_tasks::criteria::FinishWanted::Infeasible =>
                {
                    wants.infeasible = true;
                }
                CriterionKind::Mcp(_) => wants.mcp = true,
                _ => {}
            }
        }
        wants
    }
}

/// An episode advanced along a path, reused when the next path extends it.
struct Walker<'a> {
    catalog: &'a Catalog,
    instance: &'a TaskInstance,
    current: Option<(Vec<Action>, Episode)>,
    steps: u64,
}

impl<'a> Walker<'a> {
    /// The episode after `path` (`None` when it ended on the way: the step budget).
    fn goto(&mut self, path: &[Action]) -> Result<Option<&Episode>, SolveError> {
        let reusable = match &self.current {
            Some((done, episode)) => !episode.is_done() && path.starts_with(done),
            None => false,
        };
        if !reusable {
            // Resetting the phone keeps its connections and prepared statements: several times
            // cheaper than a new phone, and the same state (a normal run re-verifies solutions).
            let episode = match self.current.take() {
                Some((_, old)) => old.restart()?,
                None => Episode::start(self.catalog, self.instance, EpisodeOptions::default())?,
            };
            self.current = Some((Vec::new(), episode));
        }
        let Some((done, episode)) = self.current.as_mut() else { return Ok(None) };
        for action in &path[done.len()..] {
            if episode.is_done() {
                return Ok(None);
            }
            step(episode, action)?;
            self.steps += 1;
            done.push(action.clone());
        }
        if episode.is_done() {
            return Ok(None);
        }
        Ok(self.current.as_ref().map(|(_, e)| e))
    }

    /// Plays `path` then `ending` for real and judges the finished episode.
    fn confirm(&mut self, path: &[Action], ending: &Action) -> Result<Option<Verdict>, SolveError> {
        if self.goto(path)?.is_none() {
            return Ok(None);
        }
        let Some((_, mut episode)) = self.current.take() else { return Ok(None) };
        step(&mut episode, ending)?;
        self.steps += 1;
        let trajectory = episode.finish()?;
        Ok(Some(evaluate(&self.instance.criteria, &trajectory, &EvalContext::for_task(self.instance))))
    }
}

/// One turn of a scripted agent: the action's canonical JSON as its text.
fn step(episode: &mut Episode, action: &Action) -> Result<(), SolveError> {
    let raw = serde_json::to_string(action).unwrap_or_default();
    episode.step_turn(TurnInput::new(raw, Ok(action.clone())))?;
    Ok(())
}

/// A search node: the action that led to it from its parent.
struct Node {
    parent: Option<usize>,
    action: Option<Action>,
    depth: u32,
    cost: i64,
}

struct Search<'a> {
    instance: &'a TaskInstance,
    budget: Budget,
    bound: u32,
    walker: Walker<'a>,
    wants: Wants,
    words: text::GoalWords,
    ctx: EvalContext,
}

impl<'a> Search<'a> {
    fn new(
        catalog: &'a Catalog,
        instance: &'a TaskInstance,
        reference_length: Option<u32>,
        budget: &Budget,
    ) -> Search<'a> {
        let bound =
            budget.max_depth.or(reference_length).unwrap_or(instance.max_steps).min(instance.max_steps);
        Search {
            instance,
            budget: *budget,
            bound,
            walker: Walker { catalog, instance, current: None, steps: 0 },
            wants: Wants::of(&instance.criteria),
            words: text::GoalWords::of(instance),
            ctx: EvalContext::for_task(instance),
        }
    }

    fn path(nodes: &[Node], mut i: usize) -> Vec<Action> {
        let mut path = Vec::new();
        while let Some(node) = nodes.get(i) {
            if let Some(a) = &node.action {
                path.push(a.clone());
            }
            match node.parent {
                Some(p) => i = p,
                None => break,
            }
        }
        path.reverse();
        path
    }

    fn run(mut self) -> Result<SolveOutcome, SolveError> {
        let mut nodes = vec![Node { parent: None, action: None, depth: 0, cost: 0 }];
        let mut heap: BinaryHeap<Reverse<(i64, usize)>> = BinaryHeap::new();
        heap.push(Reverse((0, 0)));
        let mut seen: HashMap<u128, u32> = HashMap::new();
        let mut best: Option<Vec<Action>> = None;
        // The longest solution still worth finding.
        let mut max_len = self.bound;
        let mut expansions = 0usize;
        let mut limit = self.budget.max_expansions;
        let mut ran_out = false;
        let mut first_solution_at = None;
        while let Some(Reverse((_, index))) = heap.pop() {
            let depth = nodes[index].depth;
            // A state at `depth` ends in a solution of `depth + 1` actions at the least.
            if depth + 1 > max_len {
                continue;
            }
            if expansions >= limit {
                ran_out = true;
                break;
            }
            let path = Self::path(&nodes, index);
            let Some(episode) = self.walker.goto(&path)? else { continue };
            expansions += 1;
            // One evaluation judges both the state (progress, the key) and the `finish` ending.
            let finished = episode.stopped_with(&COMPLETE)?;
            let verdict = evaluate(&self.instance.criteria, &finished, &self.ctx);
            let key = state_key(episode, &finished, &verdict);
            if let Some(&d) = seen.get(&key)
                && d <= depth
            {
                continue;
            }
            seen.insert(key, depth);
            let tree = episode.tree().clone();
            let dynamic = text::dynamic_candidates(episode.trajectory());
            let display = episode.options().display;
            // Endings: judged as the episode would end here, then played for real.
            let mut found = verdict.success.then_some(COMPLETE);
            if found.is_none() {
                let endings = actions::endings(&self.wants, &tree, &self.words, &dynamic);
                let mut answered: Option<phonebench_env::Trajectory> = None;
                for ending in endings.into_iter().filter(|e| *e != COMPLETE) {
                    let t = match (&ending, &answered) {
                        // Answers differ only in their text: one trajectory, the text replaced
                        // (what `stopped_with` gives for each).
                        (Action::Answer { text }, Some(base)) => {
                            let mut t = base.clone();
                            t.answer = Some(text.clone());
                            if let Some(last) = t.steps.last_mut() {
                                last.raw = serde_json::to_string(&ending).unwrap_or_default();
                                last.action = Some(ending.clone());
                            }
                            t
                        }
                        _ => {
                            let t = episode.stopped_with(&ending)?;
                            if matches!(ending, Action::Answer { .. }) {
                                answered = Some(t.clone());
                            }
                            t
                        }
                    };
                    if evaluate(&self.instance.criteria, &t, &self.ctx).success {
                        found = Some(ending);
                        break;
                    }
                }
            }
            if let Some(ending) = found
                && let Some(v) = self.walker.confirm(&path, &ending)?
                && v.success
            {
                let mut solution = path.clone();
                solution.push(ending);
                max_len = solution.len() as u32 - 1;
                if best.is_none() {
                    first_solution_at = Some(expansions);
                    limit = limit.min(expansions.saturating_add(self.budget.improve_expansions));
                }
                best = Some(solution);
                continue;
            }
            if depth + 2 > max_len {
                // A child at depth + 1 would need depth + 2 actions: over the bound.
                continue;
            }
            let Some(episode) = self.walker.goto(&path)? else { continue };
            let failing = verdict.criteria.iter().filter(|c| !c.passed && !c.guard).count() as i64;
            let seen_words = self.words.on_screen(&tree);
            let estimate = 4 * failing - seen_words.min(6) as i64;
            let asked = !episode.trajectory().exchanges.is_empty();
            let candidates = actions::candidates(
                &tree,
                display,
                self.instance,
                &self.words,
                &dynamic,
                asked,
                self.wants.mcp,
            );
            let parent_cost = nodes[index].cost;
            for c in candidates {
                let cost = parent_cost + c.cost;
                nodes.push(Node { parent: Some(index), action: Some(c.action), depth: depth + 1, cost });
                heap.push(Reverse((cost + estimate, nodes.len() - 1)));
            }
        }
        let exhaustive = !ran_out;
        let steps_replayed = self.walker.steps;
        Ok(match best {
            Some(solution) => SolveOutcome {
                task: self.instance.task_id.clone(),
                solved: true,
                length: solution.len() as u32,
                solution,
                bound: self.bound,
                expansions,
                first_solution_at,
                steps_replayed,
                exhaustive,
                reason: None,
            },
            None => SolveOutcome {
                task: self.instance.task_id.clone(),
                solved: false,
                solution: Vec::new(),
                length: 0,
                bound: self.bound,
                expansions,
                first_solution_at: None,
                steps_replayed,
                exhaustive,
                reason: Some(self.unsolved_reason(ran_out)),
            },
        })
    }

    fn unsolved_reason(&self, ran_out: bool) -> String {
        let mut why = if ran_out {
            format!(
                "unsolved within budget ({} states, {} actions at most)",
                self.budget.max_expansions, self.bound
            )
        } else {
            format!("unsolved: no solution of at most {} actions in the action space", self.bound)
        };
        if self.wants.mcp || !self.instance.mcp_servers.is_empty() {
            why.push_str("; the task needs MCP tool calls, which the oracle does not make");
        }
        if !self.instance.judges.is_empty() {
            why.push_str("; the task has model-judged checks, which the oracle cannot run");
        }
        why
    }
}

/// The key states are deduplicated by: the observation text, every tracked app's database (as
/// `stopped` ends with them),
/// the `ask_user` exchanges and MCP calls, and which criteria pass as if stopped here (which
/// captures trajectory checks such as `sequence` and `event` as far as they got). 128 bits of
/// two differently seeded SipHash digests.
pub fn state_key(episode: &Episode, stopped: &phonebench_env::Trajectory, verdict: &Verdict) -> u128 {
    let mut a = std::hash::DefaultHasher::new();
    let mut b = std::hash::DefaultHasher::new();
    1u8.hash(&mut a);
    2u8.hash(&mut b);
    let mut feed = |part: &dyn Fn(&mut std::hash::DefaultHasher)| {
        part(&mut a);
        part(&mut b);
    };
    feed(&|h| episode.observation().text.hash(h));
    let t = episode.trajectory();
    for (app, pair) in &stopped.databases {
        feed(&|h| {
            app.hash(h);
            pair.last.hash(h);
        });
    }
    if let Some(phone) = episode.phone() {
        feed(&|h| phone.foreground_app().hash(h));
    }
    for x in &t.exchanges {
        feed(&|h| (&x.question, &x.answer).hash(h));
    }
    for c in &t.mcp_calls {
        feed(&|h| (&c.tool, &c.result).hash(h));
    }
    for c in &verdict.criteria {
        feed(&|h| c.passed.hash(h));
    }
    (u128::from(a.finish()) << 64) | u128::from(b.finish())
}

/// The final action's status for a completion task.
pub const COMPLETE: Action = Action::Finish { status: FinishStatus::Complete, reason: None };
