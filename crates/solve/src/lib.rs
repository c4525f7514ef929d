//! An oracle that solves tasks by searching the simulated phone (`docs/solve.md`).
//!
//! [`solve`] searches from a task instance's initial state — the phone as `phonebench run` sets
//! it up — over the actions the screen offers ([`actions`]; MCP calls to the task's built-in
//! servers, [`mcp`]), reaching each state by restoring its parent's [`EpisodeSnapshot`] and
//! taking one step (or, without one, by replaying its path after a reset: the simulator is
//! deterministic, so a path names a state), until the task's criteria pass when the episode
//! ends there. Endings are judged exactly as a run judges them:
//! [`Episode::stopped_with`] and [`phonebench_eval::evaluate`] under
//! [`EvalContext::for_task`]; a candidate that passes is then played for real (the ending step
//! taken on the episode, [`Episode::finish`]) and judged again before it counts.
//!
//! The search is a portfolio of two best-first searches: first by a weighted cost
//! ([`actions::Candidate::cost`]) plus an estimate of the state, then, when that found nothing
//! within [`COST_STATES`], a best-first width search ([`novelty`]: states that show something new
//! at their progress first). It is not guaranteed to find the shortest solution, but every
//! solution it reports is the shortest it found, and is never longer than the bound (the
//! reference's length, or the task's step budget). When the search space under the bound is
//! exhausted ([`SolveOutcome::exhaustive`]), no shorter solution exists among the states the
//! action space reaches (states deduplicated as [`state_key`] says).
//!
//! The budget is deterministic (replayed states, depth); nothing depends on the wall clock, so
//! the outcome is byte-identical across runs and machines.

pub mod actions;
pub mod explain;
pub mod mcp;
pub mod novelty;
pub mod reference;
pub mod text;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use phonebench_actions::{Action, FinishStatus};
use phonebench_env::{EnvError, Episode, EpisodeOptions, EpisodeSnapshot, TurnInput};
use phonebench_eval::{EvalContext, Verdict, evaluate};
use phonebench_mcp::McpConfig;
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
    /// States reached and judged at most (each from its parent's snapshot, or a path replayed).
    pub max_expansions: usize,
    /// After the first solution: at most this many more states, looking for a shorter one.
    pub improve_expansions: usize,
    /// The longest solution searched (actions including the final `finish` / `answer`);
    /// `None`: the reference's length, or the task's step budget when there is no reference.
    pub max_depth: Option<u32>,
    /// Reach a state by restoring its parent's snapshot and taking one step (the default), not
    /// by resetting the phone and replaying the path: the same states either way, cheaper.
    /// Not part of the budget's meaning, so not in its JSON form.
    #[serde(skip)]
    pub snapshots: bool,
}

impl Default for Budget {
    fn default() -> Self {
        Budget { max_expansions: 4000, improve_expansions: 800, max_depth: None, snapshots: true }
    }
}

/// The most memory one search keeps in snapshots (databases it does not share, and a fixed
/// allowance each); beyond it, the least recently used go.
pub const SNAPSHOT_BYTES: usize = 192 * 1024 * 1024;

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
    solve_with(catalog, instance, reference_length, budget, &McpConfig::default())
}

/// [`solve`] with the run's MCP configuration, which says which of the task's servers are
/// built in (those get tool calls) and how results are cut, as a run's session does.
pub fn solve_with(
    catalog: &Catalog,
    instance: &TaskInstance,
    reference_length: Option<u32>,
    budget: &Budget,
    mcp: &McpConfig,
) -> Result<SolveOutcome, SolveError> {
    Search::new(catalog, instance, reference_length, budget, mcp::Tools::for_task(instance, mcp)).run()
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
    mcp: &McpConfig,
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
                    let outcome = match solve_with(catalog, &job.instance, job.reference_length, budget, mcp)
                    {
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

/// The checks still failing: each failing criterion (guards left out) counts its failing
/// checks, through `all`, `sequence` and `consecutive` (a sequence's prefix that held counts as
/// passed; a child it never reached counts all its checks); any other failing criterion counts
/// one. A step that makes one check of a criterion pass lowers it, where a count of whole
/// criteria moves only when the last check passes.
pub fn failing_checks(criteria: &[Criterion], verdict: &Verdict) -> i64 {
    /// The checks of `c`, as many as it would count failing with none passed.
    fn checks(c: &Criterion) -> i64 {
        match &c.kind {
            CriterionKind::All(children)
            | CriterionKind::Sequence(children)
            | CriterionKind::Consecutive(children) => children.iter().map(checks).sum::<i64>().max(1),
            _ => 1,
        }
    }
    fn failing(c: &Criterion, v: &phonebench_eval::CriterionVerdict) -> i64 {
        if v.passed {
            return 0;
        }
        match &c.kind {
            CriterionKind::All(children)
            | CriterionKind::Sequence(children)
            | CriterionKind::Consecutive(children)
                if children.len() == v.children.len() =>
            {
                children.iter().zip(&v.children).map(|(c, v)| failing(c, v)).sum::<i64>().max(1)
            }
            // Not evaluated child by child (a sequence's child it never reached): all of it.
            _ => checks(c),
        }
    }
    criteria.iter().zip(&verdict.criteria).filter(|(c, _)| !c.guard).map(|(c, v)| failing(c, v)).sum()
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

/// An episode advanced along a path, reused when the next path extends it; otherwise moved to
/// the deepest ancestor of the wanted node that has a snapshot ([`Episode::snapshot`]) and
/// stepped from there, or restarted and the path replayed.
struct Walker<'a> {
    catalog: &'a Catalog,
    instance: &'a TaskInstance,
    current: Option<(Vec<Action>, Episode)>,
    steps: u64,
    snapshots: Snapshots,
    tools: Arc<mcp::Tools>,
}

/// Snapshots of expanded nodes, by node index, within a memory bound: the least recently used
/// go first (a node without one is reached from an older ancestor's, or by replay).
struct Snapshots {
    enabled: bool,
    by_node: HashMap<usize, (u64, Arc<EpisodeSnapshot>, usize)>,
    by_use: std::collections::BTreeMap<u64, usize>,
    tick: u64,
    bytes: usize,
    max_bytes: usize,
    restores: u64,
}

impl Snapshots {
    fn new(enabled: bool, max_bytes: usize) -> Snapshots {
        Snapshots {
            enabled,
            by_node: HashMap::new(),
            by_use: std::collections::BTreeMap::new(),
            tick: 0,
            bytes: 0,
            max_bytes,
            restores: 0,
        }
    }

    /// Forgets every snapshot (a new search numbers its nodes afresh).
    fn clear(&mut self) {
        self.by_node.clear();
        self.by_use.clear();
        self.bytes = 0;
    }

    /// The snapshot of `node`, marked as used.
    fn get(&mut self, node: usize) -> Option<Arc<EpisodeSnapshot>> {
        let (tick, snapshot, _) = self.by_node.get_mut(&node)?;
        self.by_use.remove(tick);
        self.tick += 1;
        *tick = self.tick;
        self.by_use.insert(self.tick, node);
        Some(snapshot.clone())
    }

    /// Keeps `snapshot` for `node`; `parent`'s (if kept) tells which databases it shares.
    fn put(&mut self, node: usize, parent: Option<usize>, snapshot: EpisodeSnapshot) {
        let parent = parent.and_then(|p| self.by_node.get(&p)).map(|(_, s, _)| s.clone());
        // What this snapshot adds: the databases it does not share with its parent's.
        let own = match &parent {
            Some(p) => snapshot.phone().database_bytes_beside(p.phone()),
            None => snapshot.phone().database_bytes(),
        };
        // Screens, steps and the rest: a rough, fixed allowance.
        let size = own + 64 * 1024;
        while self.bytes + size > self.max_bytes {
            let Some((&tick, &victim)) = self.by_use.iter().next() else { break };
            self.by_use.remove(&tick);
            if let Some((_, _, freed)) = self.by_node.remove(&victim) {
                self.bytes -= freed;
            }
        }
        self.tick += 1;
        self.by_use.insert(self.tick, node);
        self.by_node.insert(node, (self.tick, Arc::new(snapshot), size));
        self.bytes += size;
    }
}

impl<'a> Walker<'a> {
    /// The episode at `nodes[index]` (`None` when it ended on the way: the step budget).
    fn goto(&mut self, nodes: &[Node], index: usize) -> Result<Option<&mut Episode>, SolveError> {
        let path = Search::path(nodes, index);
        let extend = match &self.current {
            Some((done, episode)) if !episode.is_done() && path.starts_with(done) => {
                Some(path.len() - done.len())
            }
            _ => None,
        };
        // The deepest ancestor (or the node) with a snapshot, and how far it is.
        let mut anchor = None;
        if self.snapshots.enabled {
            let mut i = Some(index);
            while let Some(n) = i {
                if self.snapshots.by_node.contains_key(&n) {
                    anchor = Some((n, (nodes[index].depth - nodes[n].depth) as usize));
                    break;
                }
                i = nodes[n].parent;
            }
        }
        let from_anchor = match (extend, anchor) {
            (Some(e), Some((_, a))) => a < e,
            (None, Some(_)) => true,
            _ => false,
        };
        if from_anchor
            && let Some((n, _)) = anchor
            && let Some(snapshot) = self.snapshots.get(n)
        {
            let mut episode = match self.current.take() {
                Some((_, e)) => e,
                None => Episode::start(self.catalog, self.instance, EpisodeOptions::default())?,
            };
            episode.restore(&snapshot)?;
            self.snapshots.restores += 1;
            let depth = nodes[n].depth as usize;
            self.current = Some((path[..depth].to_vec(), episode));
        } else if extend.is_none() {
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
            step(episode, action, &self.tools)?;
            self.steps += 1;
            done.push(action.clone());
        }
        if episode.is_done() {
            return Ok(None);
        }
        Ok(self.current.as_mut().map(|(_, e)| e))
    }

    /// Keeps a snapshot of the episode at `nodes[index]` (where it is now) to step its children
    /// from.
    fn keep(&mut self, nodes: &[Node], index: usize) -> Result<(), SolveError> {
        if !self.snapshots.enabled || self.snapshots.by_node.contains_key(&index) {
            return Ok(());
        }
        let Some((_, episode)) = self.current.as_mut() else { return Ok(()) };
        let snapshot = episode.snapshot()?;
        self.snapshots.put(index, nodes[index].parent, snapshot);
        Ok(())
    }

    /// Plays the path to `nodes[index]` then `ending` for real and judges the finished episode.
    fn confirm(
        &mut self,
        nodes: &[Node],
        index: usize,
        ending: &Action,
    ) -> Result<Option<Verdict>, SolveError> {
        if self.goto(nodes, index)?.is_none() {
            return Ok(None);
        }
        let Some((_, mut episode)) = self.current.take() else { return Ok(None) };
        step(&mut episode, ending, &self.tools)?;
        self.steps += 1;
        let trajectory = episode.finish()?;
        Ok(Some(evaluate(&self.instance.criteria, &trajectory, &EvalContext::for_task(self.instance))))
    }
}

/// One turn of a scripted agent: the action's canonical JSON as its text; an MCP call answered
/// by the task's built-in servers.
fn step(episode: &mut Episode, action: &Action, tools: &mcp::Tools) -> Result<(), SolveError> {
    let raw = serde_json::to_string(action).unwrap_or_default();
    let mut turn = TurnInput::new(raw, Ok(action.clone()));
    if let Action::McpCall { tool, arguments } = action
        && !tools.is_empty()
    {
        turn.mcp_reply = Some(tools.reply(&episode.trajectory().mcp_calls, tool, arguments));
    }
    episode.step_turn(turn)?;
    Ok(())
}

/// A search node: the action that led to it from its parent.
struct Node {
    parent: Option<usize>,
    action: Option<Action>,
    depth: u32,
    cost: i64,
    /// Reached, judged and found not novel: waiting in the heap to be expanded, its children
    /// with this priority.
    deferred: Option<i64>,
    /// The reference's landmarks the path had achieved when the state was judged, and the
    /// screens its trajectory held then: a child reads only the screens after them
    /// ([`text::learnt_after`]).
    landmarks: reference::Landmarks,
    screens: usize,
}

/// How a search orders the states it reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    /// Best-first by the path's cost less [`DEPTH_CREDIT`] per action, plus 4 × failing checks
    /// ([`failing_checks`]) − goal words shown.
    Cost,
    /// Best-first width search ([`novelty`]): novel states first, then by cost − goal words
    /// shown − [`PROGRESS_WEIGHT`] × progress.
    Width,
}

/// What a state's progress ([`novelty::Progress`]) is worth in action cost in the width search.
const PROGRESS_WEIGHT: i64 = 3;

/// The states the cost search may judge before the width search takes the rest of the budget.
/// It finds 52 of its 55 starter solutions (at 4,000 states alone) within 1,500: a smaller budget
/// is all its own, as before the width search existed. At 2,500 the portfolio solved one task
/// fewer (the width search's `clock.move_alarm`).
pub const COST_STATES: usize = 1500;

/// What the cost search takes off each action's cost: an action on a goal word (cost 2) is
/// free, so the search follows paths of such actions deeper before it tries every path of equal
/// total cost that mixes in other actions (a 6-step path of cheap taps was behind thousands of
/// 3-step paths with one generic tap). Starter suite, default budget, the checks-based estimate:
/// 0 → 63 solved, 2 → 65, 3 → 65 but a different set (−`email.reply`, −`clock.start_timer`);
/// the width search with a credit of 2 as well: 63.
pub const DEPTH_CREDIT: i64 = 2;

/// What the cost search takes off a state's estimate for each of the reference's pending texts
/// whose field is on its screen (`ReferenceTexts::fields_ready`): the screen to type it on is
/// reached. Starter suite, default budget: 0 → 85 solved, 2 → 87 (+4, −2), 4 on a 45-task
/// sample one fewer than 2.
pub const READY_CREDIT: i64 = 2;

/// What the cost search adds to the priority of a state that shows nothing new at its estimate
/// ([`novelty::Novelty`] keyed by failing checks + landmarks not achieved) before it is
/// expanded. The depth credit makes every chain of taps on goal words free, so without it the
/// cost search went breadth-first through them at one priority (`notes.rename`,
/// `email.send_draft`). Starter suite, default budget: 0 → 91 solved, 2 → 91, 4 → 93 (+2, none
/// lost), 6 → 92, 8 → 93 (+3, −1); deferring such states behind every novel one (as the width
/// search does) → 90.
pub const COST_NOVELTY_PENALTY: i64 = 4;

/// The result of one search.
struct Phase {
    best: Option<Vec<Action>>,
    expansions: usize,
    first_solution_at: Option<usize>,
    ran_out: bool,
}

struct Search<'a> {
    instance: &'a TaskInstance,
    budget: Budget,
    bound: u32,
    walker: Walker<'a>,
    wants: Wants,
    words: text::GoalWords,
    /// How many landmarks the reference's texts have ([`reference::Landmarks`]): every fact
    /// they need and every typed text.
    landmarks: i64,
    ctx: EvalContext,
}

impl<'a> Search<'a> {
    fn new(
        catalog: &'a Catalog,
        instance: &'a TaskInstance,
        reference_length: Option<u32>,
        budget: &Budget,
        tools: mcp::Tools,
    ) -> Search<'a> {
        let bound =
            budget.max_depth.or(reference_length).unwrap_or(instance.max_steps).min(instance.max_steps);
        let mut words = text::GoalWords::of(instance);
        // The tools' descriptions and schemas are told to an agent before its first step.
        words.reference = std::mem::take(&mut words.reference).with_given(tools.told());
        Search {
            instance,
            budget: *budget,
            bound,
            walker: Walker {
                catalog,
                instance,
                current: None,
                steps: 0,
                snapshots: Snapshots::new(budget.snapshots, SNAPSHOT_BYTES),
                tools: Arc::new(tools),
            },
            wants: Wants::of(&instance.criteria),
            landmarks: words.reference.landmark_count(),
            words,
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

    /// The portfolio: the cost-ordered search for the first [`COST_STATES`] states (it finds
    /// short solutions of short tasks fast), then, when it found none and the space under the
    /// bound is not exhausted, the width search with the rest of the budget (it reaches further
    /// on long tasks).
    fn run(mut self) -> Result<SolveOutcome, SolveError> {
        let total = self.budget.max_expansions;
        let mut result = self.phase(Strategy::Cost, total.min(COST_STATES), total)?;
        if result.best.is_none() && result.ran_out {
            self.walker.snapshots.clear();
            let width = self.phase(Strategy::Width, total - result.expansions, total - result.expansions)?;
            result = Phase {
                first_solution_at: width.first_solution_at.map(|n| n + result.expansions),
                expansions: width.expansions + result.expansions,
                ..width
            };
        }
        let Phase { best, expansions, first_solution_at, ran_out } = result;
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

    /// One search from the task's start, `strategy` ordering the states, judging at most
    /// `limit` states before a solution is found and `total` in all (the search for a shorter
    /// one included).
    fn phase(&mut self, strategy: Strategy, limit: usize, total: usize) -> Result<Phase, SolveError> {
        let mut nodes = vec![Node {
            parent: None,
            action: None,
            depth: 0,
            cost: 0,
            deferred: None,
            landmarks: reference::Landmarks::default(),
            screens: 0,
        }];
        // (tier, priority, node); the smallest first, ties to the node pushed first. The cost
        // search keeps every node in tier 1 with priority cost + estimate. The width search:
        // tier 0 is the start, 1 a child of a novel state, 2 a child of a state that was not
        // novel, or such a state itself, waiting to be expanded (`novelty`); the priority is
        // cost − goal words shown − 3 × progress.
        let mut heap: BinaryHeap<Reverse<(u8, i64, usize)>> = BinaryHeap::new();
        heap.push(Reverse((0, 0, 0)));
        let mut seen: HashMap<u128, u32> = HashMap::new();
        // The fields each expanded state offered typing into (`typing_is_redundant`).
        let mut typing_fields: HashMap<usize, Vec<(i32, i32)>> = HashMap::new();
        // Each judged state's `world_key`, for the reduction of screen-blind actions below.
        let mut worlds: HashMap<usize, u64> = HashMap::new();
        let mut novelty = novelty::Novelty::default();
        let mut progress_of = novelty::Progress::default();
        let mut best: Option<Vec<Action>> = None;
        // The longest solution still worth finding.
        let mut max_len = self.bound;
        let mut expansions = 0usize;
        let mut limit = limit;
        let mut ran_out = false;
        let mut first_solution_at = None;
        while let Some(Reverse((tier, _, index))) = heap.pop() {
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
            let Some(episode) = self.walker.goto(&nodes, index)? else { continue };
            expansions += 1;
            let (earlier, screens_from) = nodes[index]
                .parent
                .map_or((Default::default(), 0), |p| (nodes[p].landmarks, nodes[p].screens));
            let dynamic = text::learnt_after(episode.trajectory(), &self.words, earlier, screens_from);
            nodes[index].landmarks = dynamic.landmarks;
            nodes[index].screens = episode.trajectory().screens.len();
            let tree = episode.tree().clone();
            let display = episode.options().display;
            let (priority, child_tier) = if let Some(priority) = nodes[index].deferred {
                // Judged (no ending passed) and recorded when first reached, then deferred as not
                // novel: now only expanded, its children after every novel state's.
                if depth + 2 > max_len {
                    continue;
                }
                (priority, if strategy == Strategy::Width { 2 } else { 1 })
            } else {
                // One evaluation judges both the state (progress, the key) and the `finish`
                // ending.
                let finished = episode.stopped_with(&COMPLETE)?;
                let verdict = evaluate(&self.instance.criteria, &finished, &self.ctx);
                let key = state_key(episode, &finished, &verdict, &dynamic);
                if let Some(&d) = seen.get(&key)
                    && d <= depth
                {
                    continue;
                }
                seen.insert(key, depth);
                worlds.insert(index, world_key(episode, &finished, &verdict, &dynamic));
                // What the width search measures needs the episode, which confirming an ending
                // takes.
                let foreground_app = episode.phone().and_then(|p| p.foreground_app().map(str::to_string));
                let width = (strategy == Strategy::Width).then(|| {
                    (
                        text::told_candidates(episode.trajectory()),
                        episode.phone().and_then(|p| p.foreground_app().map(str::to_string)),
                    )
                });
                // Endings: judged as the episode would end here, then played for real.
                let mut found = verdict.success.then_some(COMPLETE);
                if found.is_none() {
                    let endings = actions::endings(&self.wants, &tree, &self.words, &dynamic);
                    let mut answered: Option<phonebench_env::Trajectory> = None;
                    for ending in endings.into_iter().filter(|e| *e != COMPLETE) {
                        let t = match (&ending, &answered) {
                            // Answers differ only in their text: one trajectory, the text
                            // replaced (what `stopped_with` gives for each).
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
                    && let Some(v) = self.walker.confirm(&nodes, index, &ending)?
                    && v.success
                {
                    let mut solution = path.clone();
                    solution.push(ending);
                    max_len = solution.len() as u32 - 1;
                    if best.is_none() {
                        first_solution_at = Some(expansions);
                        limit = total.min(expansions.saturating_add(self.budget.improve_expansions));
                    }
                    best = Some(solution);
                    continue;
                }
                if depth + 2 > max_len {
                    // A child at depth + 1 would need depth + 2 actions: over the bound.
                    continue;
                }
                let seen_words = self.words.on_screen(&tree).min(6) as i64;
                match width {
                    None => {
                        let failing = failing_checks(&self.instance.criteria, &verdict);
                        // The reference's landmarks not achieved yet (facts not seen, texts not
                        // placed) count as failing checks.
                        let unseen = self.landmarks - dynamic.landmarks.count();
                        // The children's depth is credited: see `DEPTH_CREDIT`.
                        let credit = DEPTH_CREDIT * (i64::from(depth) + 1);
                        // A pending text whose field is on the screen: the screen to type it on is
                        // reached (a gradient before the text is placed).
                        let ready = self.words.reference.fields_ready(&tree, dynamic.landmarks);
                        let priority = nodes[index].cost - credit + 4 * (failing + unseen)
                            - seen_words
                            - READY_CREDIT * ready;
                        // Nothing new at this estimate (novelty, as the width search judges it,
                        // by failing checks and landmarks): expanded after the novel states of
                        // its priority and the next (see `COST_NOVELTY_PENALTY`).
                        if tier < 2 {
                            let digests = novelty::database_digests(&finished);
                            let atoms = novelty::atoms(
                                &tree,
                                foreground_app.as_deref(),
                                &finished,
                                &digests,
                                &verdict,
                            );
                            if !novelty.check(failing + unseen, depth, &atoms) {
                                nodes[index].deferred = Some(priority);
                                heap.push(Reverse((1, priority + COST_NOVELTY_PENALTY, index)));
                                continue;
                            }
                        }
                        (priority, 1)
                    }
                    Some((told, foreground)) => {
                        // Each database hashed once, for progress and atoms both.
                        let digests = novelty::database_digests(&finished);
                        // Values read on screens are many and mostly beside the point: only
                        // what the goal gives and what the user or a tool told count.
                        let progress = progress_of.of(
                            &tree,
                            &finished,
                            &digests,
                            &self.instance.criteria,
                            &verdict,
                            self.words.candidates.iter().chain(told.iter()),
                        ) + dynamic.landmarks.count();
                        let priority = nodes[index].cost - seen_words - PROGRESS_WEIGHT * progress;
                        if tier < 2 {
                            let atoms =
                                novelty::atoms(&tree, foreground.as_deref(), &finished, &digests, &verdict);
                            if !novelty.check(progress, depth, &atoms) {
                                // Nothing new at this progress: expanded after every novel state.
                                nodes[index].deferred = Some(priority);
                                heap.push(Reverse((2, priority, index)));
                                continue;
                            }
                        }
                        (priority, tier.max(1))
                    }
                }
            };
            let tools = self.walker.tools.clone();
            let Some(episode) = self.walker.goto(&nodes, index)? else { continue };
            let candidates = actions::candidates(
                &tree,
                display,
                self.instance,
                &self.words,
                &dynamic,
                episode.trajectory(),
                &tools,
            );
            if !candidates.is_empty() {
                // Its children are stepped from here: one restore and one step each.
                self.walker.keep(&nodes, index)?;
            }
            // The fields the parent offered typing into, for the reduction below.
            let offered_fields: Vec<(i32, i32)> =
                candidates.iter().filter_map(|c| typed_field(&c.action).map(|(p, _)| p)).collect();
            let before = nodes[index].parent.and_then(|p| typing_fields.get(&p));
            let last = path.last().and_then(typed_field);
            // The last action changed only the screen: an action that does not look at it
            // (`open_app`, `ask_user`, an MCP call), which the state before offered as well,
            // is taken there, before the screen changed (it reaches the same state in fewer
            // actions, or in as many the other way round).
            let screen_only = nodes[index]
                .parent
                .is_some_and(|p| worlds.get(&p).is_some_and(|w| worlds.get(&index) == Some(w)));
            let parent_cost = nodes[index].cost;
            for c in candidates {
                if screen_only && is_screen_blind(&c.action) {
                    continue;
                }
                if let (Some((last_field, false)), Some((field, enter))) = (last, typed_field(&c.action))
                    && typing_is_redundant(last_field, field, enter, before.map(Vec::as_slice))
                {
                    continue;
                }
                let cost = parent_cost + c.cost;
                nodes.push(Node {
                    parent: Some(index),
                    action: Some(c.action),
                    depth: depth + 1,
                    cost,
                    deferred: None,
                    landmarks: reference::Landmarks::default(),
                    screens: 0,
                });
                heap.push(Reverse((child_tier, priority + c.cost, nodes.len() - 1)));
            }
            if !offered_fields.is_empty() {
                typing_fields.insert(index, offered_fields);
            }
        }
        Ok(Phase { best, expansions, first_solution_at, ran_out })
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
        if !self.walker.tools.missing.is_empty() {
            why.push_str(&format!(
                "; the task needs MCP servers that are not built in ({}), which the oracle does not call",
                self.walker.tools.missing.join(", ")
            ));
        }
        if !self.instance.judges.is_empty() {
            why.push_str("; the task has model-judged checks, which the oracle cannot run");
        }
        why
    }
}

/// Whether `action`'s outcome does not depend on the screen it is taken on: opening an app, asking
/// the user, calling an MCP tool.
fn is_screen_blind(action: &Action) -> bool {
    matches!(action, Action::OpenApp { .. } | Action::AskUser { .. } | Action::McpCall { .. })
}

/// The field a `type` action types into (its target point) and whether it presses Enter.
fn typed_field(action: &Action) -> Option<((i32, i32), bool)> {
    match action {
        Action::Type { target: Some(phonebench_actions::Target::Point(p)), enter, .. } => {
            Some(((p.x, p.y), *enter))
        }
        _ => None,
    }
}

/// Whether typing into `field` right after typing into `last_field` without Enter is a path
/// the search need not take, because a path no longer than it reaches the same state (a partial-order
/// reduction: on a form, typing is cleared first and touches only its field).
///
/// - Into the same field again: the second text replaces the first, which typing it straight
///   away does in one action fewer.
/// - Into another field that the state before the last typing offered as well (`before`), and
///   that comes earlier on the screen (top to bottom, then left to right): the same two fields
///   typed in the other order, which the search offers, reach the same form; only that order
///   is taken. A field the last typing brought (it was not offered before) is never skipped.
///
/// Typing with Enter submits (a search, a message), so it is never reordered: the last typing
/// is one without Enter (the caller's), and `enter` (this one's) keeps it in either order.
fn typing_is_redundant(
    last_field: (i32, i32),
    field: (i32, i32),
    enter: bool,
    before: Option<&[(i32, i32)]>,
) -> bool {
    if field == last_field {
        return true;
    }
    let earlier = !enter && (field.1, field.0) < (last_field.1, last_field.0);
    earlier && before.is_some_and(|offered| offered.contains(&field) && offered.contains(&last_field))
}

/// The key states are deduplicated by: the observation text, every tracked app's database (as
/// `stopped` ends with them),
/// the `ask_user` exchanges and MCP calls, which criteria pass as if stopped here (which
/// captures trajectory checks such as `sequence` and `event` as far as they got), and the text
/// candidates the path learnt (`learnt`: replies, MCP results, earlier screens' texts). 128 bits of
/// two differently seeded SipHash digests.
pub fn state_key(
    episode: &Episode,
    stopped: &phonebench_env::Trajectory,
    verdict: &Verdict,
    learnt: &text::Learnt,
) -> u128 {
    let mut a = std::hash::DefaultHasher::new();
    let mut b = std::hash::DefaultHasher::new();
    1u8.hash(&mut a);
    2u8.hash(&mut b);
    let screen = &episode.observation().text;
    screen.hash(&mut a);
    screen.hash(&mut b);
    feed_world(episode, stopped, verdict, learnt, &mut [&mut a, &mut b]);
    (u128::from(a.finish()) << 64) | u128::from(b.finish())
}

/// A digest of all [`state_key`] holds but the screen: two states with one world differ at most
/// in what the app in front shows (a list scrolled, another tab), which is what an action that
/// does not look at the screen (`open_app`, `ask_user`, an MCP call) does not see.
pub fn world_key(
    episode: &Episode,
    stopped: &phonebench_env::Trajectory,
    verdict: &Verdict,
    learnt: &text::Learnt,
) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    feed_world(episode, stopped, verdict, learnt, &mut [&mut h]);
    h.finish()
}

/// Feeds the parts of a state other than its screen, in a fixed order, to each of `hashers`: every
/// tracked app's database, the app in front, the `ask_user` exchanges and MCP calls, which
/// criteria pass, and the texts the path learnt (paths that read different things on earlier
/// screens are different states: what they read is typed later).
fn feed_world(
    episode: &Episode,
    stopped: &phonebench_env::Trajectory,
    verdict: &Verdict,
    learnt: &text::Learnt,
    hashers: &mut [&mut std::hash::DefaultHasher],
) {
    let mut feed = |part: &dyn Fn(&mut std::hash::DefaultHasher)| {
        for h in hashers.iter_mut() {
            part(h);
        }
    };
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
    for c in &learnt.texts {
        feed(&|h| c.text.hash(h));
    }
    // The reference's facts seen decide which texts are offered: a state of its own. The texts
    // placed only steer the search (a screen and databases reached again after typing a text
    // and clearing it are the same state). Only when some fact was seen, so that other states'
    // keys are as before.
    if learnt.landmarks.facts != 0 {
        feed(&|h| learnt.landmarks.facts.hash(h));
    }
}

/// The final action's status for a completion task.
pub const COMPLETE: Action = Action::Finish { status: FinishStatus::Complete, reason: None };

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use phonebench_eval::CriterionVerdict;

    use super::*;

    fn verdict(passed: bool, children: Vec<CriterionVerdict>) -> CriterionVerdict {
        CriterionVerdict {
            label: String::new(),
            passed,
            guard: false,
            step: None,
            detail: String::new(),
            children,
        }
    }

    #[test]
    fn failing_checks_count_a_child_never_reached_whole() {
        // sequence[A, all[B, C, D]]: 4 checks failing at first, 3 once A held (the `all` not
        // reached, reported without children), 2 once B held too.
        let leaf = || serde_json::json!({"answer": {"contains": "x"}});
        let criterion: Criterion = serde_json::from_value(
            serde_json::json!({"sequence": [leaf(), {"all": [leaf(), leaf(), leaf()]}]}),
        )
        .unwrap();
        let criteria = vec![criterion];
        let at = |children: Vec<CriterionVerdict>| Verdict {
            success: false,
            acp: 0.0,
            criteria: vec![verdict(false, children)],
        };
        let none = at(vec![verdict(false, vec![]), verdict(false, vec![])]);
        let a = at(vec![verdict(true, vec![]), verdict(false, vec![])]);
        let ab = at(vec![
            verdict(true, vec![]),
            verdict(false, vec![verdict(true, vec![]), verdict(false, vec![]), verdict(false, vec![])]),
        ]);
        let counts: Vec<i64> = [none, a, ab].iter().map(|v| failing_checks(&criteria, v)).collect();
        assert_eq!(counts, vec![4, 3, 2]);
    }

    #[test]
    fn typing_is_reordered_only_among_fields_offered_before_and_never_repeated() {
        let (top, bottom) = ((540, 300), (540, 900));
        let both = [top, bottom];
        // Again into the field just typed into: the second text alone does it.
        assert!(typing_is_redundant(top, top, false, None));
        assert!(typing_is_redundant(top, top, true, None));
        // Bottom then top, both offered before: top then bottom is the order taken.
        assert!(typing_is_redundant(bottom, top, false, Some(&both)));
        assert!(!typing_is_redundant(top, bottom, false, Some(&both)));
        // With Enter the top field submits: typed first, the bottom one would come too late.
        assert!(!typing_is_redundant(bottom, top, true, Some(&both)));
        // The top field appeared only after the bottom one was typed into: no other order.
        assert!(!typing_is_redundant(bottom, top, false, Some(&[bottom])));
        assert!(!typing_is_redundant(bottom, top, false, None));
        // Same row: left before right.
        assert!(typing_is_redundant((900, 300), (100, 300), false, Some(&[(100, 300), (900, 300)])));
    }

    #[test]
    fn typed_field_reads_a_points_target_and_enter() {
        let at = |enter| Action::Type {
            text: "x".into(),
            target: Some(phonebench_actions::Target::Point(phonebench_actions::Point::new(3, 4))),
            clear: true,
            enter,
        };
        assert_eq!(typed_field(&at(true)), Some(((3, 4), true)));
        assert_eq!(typed_field(&at(false)), Some(((3, 4), false)));
        assert_eq!(
            typed_field(&Action::Type { text: "x".into(), target: None, clear: true, enter: false }),
            None
        );
    }
}
