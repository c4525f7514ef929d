//! The evaluator: criteria over a trajectory, in SPHINX's trace model (see `trace.rs`).

use phonebench_actions::{Action, FinishStatus};
use phonebench_tasks::criteria::{
    ActionCheck, ActionElementCheck, CountRange, ElementCheck, EventCheck, FinishCheck, FinishWanted,
    McpCheck, NearCheck, ScreenCheck, SqlParams, TextCheck, TimeCheck,
};
use phonebench_tasks::{Criterion, CriterionKind, Op, Rules, Scope};
use phonebench_uitree::{Bounds, Node};
use serde::{Deserialize, Serialize};

use crate::rules::{Matcher, clip, describe_node, explain_failures, select, show_rule};
use crate::trace::{Entry, EntryKind, Trace, Window, is_action_attribute};
use crate::{answer, moment, state};

/// How element and action searches choose what their check rules are tested on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Semantics {
    /// SPHINX exactly: find the *first* screen, node or action matching the find rules, then test
    /// the check rules on that one only (a failed check does not search further).
    #[default]
    Upstream,
    /// "Fixed": look for *any* screen, node or action satisfying the find and the check rules
    /// together (the first such one in trace order is reported).
    AnyMatch,
}

impl Semantics {
    /// Reads `upstream`, or `fixed` / `any-match` / `any_match`.
    pub fn from_name(name: &str) -> Option<Semantics> {
        match name {
            "upstream" => Some(Semantics::Upstream),
            "fixed" | "any-match" | "any_match" => Some(Semantics::AnyMatch),
            _ => None,
        }
    }
}

/// What an evaluation needs besides the criteria and the trajectory.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EvalContext {
    /// First-match (SPHINX) or any-match searches.
    pub semantics: Semantics,
    /// Values bound to `:name` parameters of `state` SQL (the task's parameters).
    pub sql_params: SqlParams,
}

impl EvalContext {
    /// The context a run judges an instance of a task's episodes in: any-match searches, the
    /// instance's parameters bound to criterion SQL.
    pub fn for_task(task: &phonebench_tasks::TaskInstance) -> EvalContext {
        EvalContext { semantics: Semantics::AnyMatch, sql_params: task.sql_params.clone() }
    }
}

/// The outcome of evaluating a task's criteria over a trajectory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// Every top-level criterion holds, guards included (vacuously true without criteria, as
    /// upstream).
    pub success: bool,
    /// Average completion progress: the share of the top-level criteria that are not guards that
    /// hold (a top-level combinator counts as one). Guards count neither way, so keeping things
    /// as they were earns nothing, and breaking something costs success but not the progress
    /// made. 1.0 without criteria; with guards only, 1.0 when they all hold and 0.0 otherwise.
    pub acp: f64,
    /// One verdict per top-level criterion, in order.
    pub criteria: Vec<CriterionVerdict>,
}

/// The verdict on one criterion, with its children's for combinators.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriterionVerdict {
    /// The criterion's label ([`Criterion::label`]).
    pub label: String,
    /// Whether it holds.
    pub passed: bool,
    /// Whether it is a guard ([`Criterion::guard`]): it gates success but is not in the ACP.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub guard: bool,
    /// Where it held: step `i` is `screens[i]` and the action `steps[i]` taken from it (STOP is
    /// the step after the last action). `None` when it failed, or for checks of the whole episode
    /// (state, answer).
    pub step: Option<usize>,
    /// What was found, or why it failed (including errors: bad SQL, bad regex, missing database).
    pub detail: String,
    /// The children's verdicts (combinators), as evaluated; children a combinator never reached
    /// say so in their detail.
    pub children: Vec<CriterionVerdict>,
}

/// Evaluates `criteria` over `trajectory`. Deterministic; never panics: a criterion that cannot
/// be evaluated (bad SQL, bad regular expression, missing database) fails with the reason in its
/// detail.
pub fn evaluate(
    criteria: &[Criterion],
    trajectory: &phonebench_env::Trajectory,
    ctx: &EvalContext,
) -> Verdict {
    let evaluator = Evaluator { trace: Trace::build(trajectory), matcher: Matcher::default(), ctx };
    let window = evaluator.trace.all();
    let verdicts: Vec<CriterionVerdict> = criteria
        .iter()
        .map(|c| CriterionVerdict { guard: c.guard, ..evaluator.eval(c, window).verdict })
        .collect();
    score(verdicts)
}

/// Success and ACP from the top-level verdicts (see [`Verdict`]).
fn score(verdicts: Vec<CriterionVerdict>) -> Verdict {
    let success = verdicts.iter().all(|v| v.passed);
    let counted = verdicts.iter().filter(|v| !v.guard).count();
    let passed = verdicts.iter().filter(|v| !v.guard && v.passed).count();
    let acp = match (verdicts.is_empty(), counted) {
        (true, _) => 1.0,
        // Only guards: nothing to make progress on, so progress is all or nothing.
        (false, 0) => f64::from(u8::from(success)),
        (false, n) => passed as f64 / n as f64,
    };
    Verdict { success, acp, criteria: verdicts }
}

/// One evaluation: upstream's `(ok, idx)` (idx relative to the window) plus the report.
struct Outcome {
    ok: bool,
    idx: usize,
    verdict: CriterionVerdict,
}

/// A leaf's result before it gets its label.
struct Leaf {
    ok: bool,
    /// Relative index returned upstream-style.
    idx: usize,
    /// Absolute trace position of what was matched, for the report's step.
    at: Option<usize>,
    detail: String,
}

impl Leaf {
    fn pass(idx: usize, at: usize, detail: String) -> Leaf {
        Leaf { ok: true, idx, at: Some(at), detail }
    }

    fn fail(idx: usize, detail: impl Into<String>) -> Leaf {
        Leaf { ok: false, idx, at: None, detail: detail.into() }
    }

    fn result(ok: bool, idx: usize, at: usize, detail: String) -> Leaf {
        Leaf { ok, idx, at: ok.then_some(at), detail }
    }

    /// A check of the whole episode: it does not move the trace position.
    fn global(result: Result<(bool, String), String>) -> Leaf {
        match result {
            Ok((ok, detail)) => Leaf { ok, idx: 0, at: None, detail },
            Err(e) => Leaf::fail(0, format!("cannot evaluate: {e}")),
        }
    }
}

struct Evaluator<'a> {
    trace: Trace<'a>,
    matcher: Matcher,
    ctx: &'a EvalContext,
}

/// Rules split into `(key, op)` pairs.
type RuleList<'r> = Vec<(&'r str, &'r Op)>;

impl<'a> Evaluator<'a> {
    fn eval(&self, criterion: &Criterion, w: Window) -> Outcome {
        let label = criterion.label();
        match &criterion.kind {
            CriterionKind::All(children) => self.all(label, children, w),
            CriterionKind::Any(children) => self.any(label, children, w),
            CriterionKind::Not(child) => {
                let inner = self.eval(child, w);
                let ok = !inner.ok;
                let detail = if ok { "the child does not hold".into() } else { "the child holds".into() };
                // Upstream has no negation; position 0 keeps a sequence where it was.
                Outcome { ok, idx: 0, verdict: verdict(label, ok, None, detail, vec![inner.verdict]) }
            }
            CriterionKind::Sequence(children) => self.sequence(label, children, w),
            CriterionKind::Consecutive(children) => self.consecutive(label, children, w),
            kind => {
                let leaf = self.leaf(kind, w);
                let step = leaf.at.and_then(|p| self.trace.entry(p)).map(|e| e.step);
                Outcome {
                    ok: leaf.ok,
                    idx: leaf.idx,
                    verdict: verdict(label, leaf.ok, step, leaf.detail, Vec::new()),
                }
            }
        }
    }

    fn step_of(&self, w: Window, idx: usize) -> Option<usize> {
        self.trace.entry(w.abs(idx)).map(|e| e.step)
    }

    /// `present`: every child on the whole window; the position is the furthest child's. All
    /// children are evaluated for the report; the position is upstream's (up to the first failure).
    fn all(&self, label: String, children: &[Criterion], w: Window) -> Outcome {
        let mut max_idx = 0;
        let mut failed = false;
        let mut verdicts = Vec::with_capacity(children.len());
        for child in children {
            let r = self.eval(child, w);
            if !failed {
                max_idx = max_idx.max(r.idx);
                failed = !r.ok;
            }
            verdicts.push(r.verdict);
        }
        let held = verdicts.iter().filter(|v| v.passed).count();
        let ok = !failed;
        let step = if ok { verdicts.iter().filter_map(|v| v.step).max() } else { None };
        let detail = format!("{held} of {} hold", children.len());
        Outcome { ok, idx: max_idx, verdict: verdict(label, ok, step, detail, verdicts) }
    }

    fn any(&self, label: String, children: &[Criterion], w: Window) -> Outcome {
        let mut first: Option<(usize, Option<usize>)> = None;
        let mut verdicts = Vec::with_capacity(children.len());
        for child in children {
            let r = self.eval(child, w);
            if r.ok && first.is_none() {
                first = Some((r.idx, r.verdict.step));
            }
            verdicts.push(r.verdict);
        }
        let held = verdicts.iter().filter(|v| v.passed).count();
        let detail = format!("{held} of {} hold", children.len());
        match first {
            Some((idx, step)) => {
                Outcome { ok: true, idx, verdict: verdict(label, true, step, detail, verdicts) }
            }
            None => Outcome { ok: false, idx: 0, verdict: verdict(label, false, None, detail, verdicts) },
        }
    }

    /// `sequential`: each child on `trace[idx:]`, positions accumulating; the matched position
    /// itself is included, so one step may satisfy several children.
    fn sequence(&self, label: String, children: &[Criterion], w: Window) -> Outcome {
        let mut idx = 0;
        let mut verdicts = Vec::with_capacity(children.len());
        let mut failed_at = None;
        for (i, child) in children.iter().enumerate() {
            if failed_at.is_some() {
                verdicts.push(not_reached(child, "an earlier child of the sequence failed"));
                continue;
            }
            let r = self.eval(child, w.from(idx));
            idx += r.idx;
            if !r.ok {
                failed_at = Some(i);
            }
            verdicts.push(r.verdict);
        }
        match failed_at {
            None => {
                let step = verdicts.last().and_then(|v| v.step).or_else(|| self.step_of(w, idx));
                let detail = format!("all {} hold in order", children.len());
                Outcome { ok: true, idx, verdict: verdict(label, true, step, detail, verdicts) }
            }
            Some(i) => {
                let detail =
                    format!("child {} of {} fails after the earlier ones held", i + 1, children.len());
                Outcome { ok: false, idx, verdict: verdict(label, false, None, detail, verdicts) }
            }
        }
    }

    /// `consecutive`: for each start, each child on the three entries `trace[idx:idx+3]`, so
    /// each must hold within the next step of the previous one's match.
    fn consecutive(&self, label: String, children: &[Criterion], w: Window) -> Outcome {
        // The attempt that got furthest (earliest among equals), for the report.
        let mut best: Option<(usize, usize, Vec<CriterionVerdict>)> = None;
        for start in w.positions() {
            let mut idx = start;
            let mut verdicts = Vec::with_capacity(children.len());
            let mut held = 0;
            for child in children {
                if verdicts.len() > held {
                    verdicts.push(not_reached(child, "an earlier child failed in this attempt"));
                    continue;
                }
                let r = self.eval(child, w.three_from(idx));
                idx += r.idx;
                if r.ok {
                    held += 1;
                }
                verdicts.push(r.verdict);
            }
            if held == children.len() {
                let step = verdicts.last().and_then(|v| v.step);
                let detail = format!(
                    "all {} hold on consecutive steps, starting at step {}",
                    children.len(),
                    self.step_of(w, start).map_or_else(|| "?".into(), |s| s.to_string())
                );
                return Outcome { ok: true, idx, verdict: verdict(label, true, step, detail, verdicts) };
            }
            if best.as_ref().is_none_or(|(h, _, _)| held > *h) {
                best = Some((held, start, verdicts));
            }
        }
        let (detail, verdicts) = match best {
            Some((held, start, verdicts)) => (
                format!(
                    "no start position satisfies all {}; the best, from step {}, satisfied {held}",
                    children.len(),
                    self.step_of(w, start).map_or_else(|| "?".into(), |s| s.to_string())
                ),
                verdicts,
            ),
            None => (
                "the trace is empty".to_string(),
                children.iter().map(|c| not_reached(c, "the trace is empty")).collect(),
            ),
        };
        Outcome { ok: false, idx: 0, verdict: verdict(label, false, None, detail, verdicts) }
    }

    fn leaf(&self, kind: &CriterionKind, w: Window) -> Leaf {
        match kind {
            CriterionKind::Element(e) => self.element(e, w),
            CriterionKind::Text(t) => self.text(t, w),
            CriterionKind::Near(n) => self.near(n, w),
            CriterionKind::Time(t) => self.time(t, w),
            CriterionKind::Screen(s) => self.screen(s, w),
            CriterionKind::Action(a) => self.action(a, w),
            CriterionKind::ActionElement(a) => self.action_element(a, w),
            CriterionKind::State(s) => {
                Leaf::global(state::state(s, self.trace.trajectory, &self.ctx.sql_params))
            }
            CriterionKind::Changes(c) => Leaf::global(state::changes(c, self.trace.trajectory)),
            CriterionKind::Answer(a) => {
                Leaf::global(answer::check(&self.matcher, a, self.trace.trajectory.answer.as_deref()))
            }
            CriterionKind::Event(e) => self.event(e, w),
            CriterionKind::Asked(range) => self.asked(range, w),
            CriterionKind::Mcp(m) => self.mcp(m, w),
            CriterionKind::Finish(f) => self.finish(f),
            // Combinators are handled by `eval`; reaching here would be a bug, reported not panicked.
            CriterionKind::All(_)
            | CriterionKind::Any(_)
            | CriterionKind::Not(_)
            | CriterionKind::Sequence(_)
            | CriterionKind::Consecutive(_) => Leaf::fail(0, "internal: a combinator evaluated as a leaf"),
        }
    }

    fn prepare(&self, rule_sets: &[&Rules]) -> Result<(), Leaf> {
        for rules in rule_sets {
            self.matcher.prepare(rules).map_err(|e| Leaf::fail(0, format!("cannot evaluate: {e}")))?;
        }
        Ok(())
    }

    fn entry(&self, w: Window, i: usize) -> Option<&Entry> {
        self.trace.entry(w.abs(i))
    }

    /// Screen entries of the window, with their relative positions.
    fn screen_entries(&self, w: Window) -> impl Iterator<Item = (usize, &Entry)> + '_ {
        w.positions()
            .filter_map(move |i| self.entry(w, i).map(|e| (i, e)))
            .filter(|(_, e)| e.kind == EntryKind::Screen)
    }

    /// The last screen of the window: `trace[-2]`, upstream's stoppage position.
    fn last_screen(&self, w: Window) -> Result<(usize, &Entry), Leaf> {
        if w.len() < 2 {
            return Err(Leaf::fail(0, "no screen before STOP in this part of the trace"));
        }
        let i = w.len() - 2;
        self.entry(w, i).map(|e| (i, e)).ok_or_else(|| Leaf::fail(0, "no screen before STOP"))
    }

    /// `element`: stoppage (`on = last`) or findelement (`on = any`).
    fn element(&self, e: &ElementCheck, w: Window) -> Leaf {
        if let Err(leaf) = self.prepare(&[&e.find, &e.check]) {
            return leaf;
        }
        let find_activity = e.find.get("activity");
        let check_activity = e.check.get("activity");
        let find = select(&e.find, |k| k != "activity");
        let check = select(&e.check, |k| k != "activity");
        let any_match = self.ctx.semantics == Semantics::AnyMatch;
        let activity_ok = |entry: &Entry, op: Option<&Op>| {
            op.is_none_or(|op| self.matcher.op_matches(op, self.trace.activity(entry)))
        };
        match e.on {
            Scope::Last => {
                let (i, entry) = match self.last_screen(w) {
                    Ok(x) => x,
                    Err(leaf) => return leaf,
                };
                let at = w.abs(i);
                let screen = format!("the last screen (step {})", entry.step);
                if !activity_ok(entry, find_activity) {
                    return Leaf::fail(i, format!("{screen} is activity {:?}", self.trace.activity(entry)));
                }
                let activity_checked = activity_ok(entry, check_activity);
                if any_match {
                    let found = self.trace.nodes(entry).find(|n| {
                        self.matcher.node_matches(&find, n) && self.matcher.node_matches(&check, n)
                    });
                    return match found {
                        Some(n) if activity_checked => {
                            Leaf::pass(i, at, format!("{screen}: {}", describe_node(n)))
                        }
                        Some(_) => Leaf::fail(i, self.activity_failure(entry, check_activity)),
                        None => {
                            Leaf::fail(i, format!("no node on {screen} satisfies both find and check rules"))
                        }
                    };
                }
                match self.trace.nodes(entry).find(|n| self.matcher.node_matches(&find, n)) {
                    None => Leaf::fail(i, format!("no node on {screen} matches the find rules")),
                    Some(n) => {
                        self.check_node(n, &check, activity_checked, entry, check_activity, i, at, &screen)
                    }
                }
            }
            Scope::Any => {
                for (i, entry) in self.screen_entries(w) {
                    if !activity_ok(entry, find_activity) {
                        continue;
                    }
                    let at = w.abs(i);
                    let screen = format!("screen {}", entry.step);
                    let activity_checked = activity_ok(entry, check_activity);
                    if any_match {
                        if !activity_checked {
                            continue;
                        }
                        let found = self.trace.nodes(entry).find(|n| {
                            self.matcher.node_matches(&find, n) && self.matcher.node_matches(&check, n)
                        });
                        if let Some(n) = found {
                            return Leaf::pass(i, at, format!("{screen}: {}", describe_node(n)));
                        }
                        continue;
                    }
                    if let Some(n) = self.trace.nodes(entry).find(|n| self.matcher.node_matches(&find, n)) {
                        // Upstream checks the first match only and searches no further.
                        return self.check_node(
                            n,
                            &check,
                            activity_checked,
                            entry,
                            check_activity,
                            i,
                            at,
                            &screen,
                        );
                    }
                }
                let what =
                    if any_match { "satisfies both find and check rules" } else { "matches the find rules" };
                Leaf::fail(0, format!("no node on any screen {what}"))
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn check_node(
        &self,
        node: &Node,
        check: &RuleList<'_>,
        activity_checked: bool,
        entry: &Entry,
        check_activity: Option<&Op>,
        i: usize,
        at: usize,
        screen: &str,
    ) -> Leaf {
        let nodes_ok = self.matcher.node_matches(check, node);
        if nodes_ok && activity_checked {
            return Leaf::pass(i, at, format!("{screen}: {}", describe_node(node)));
        }
        let mut why = Vec::new();
        if !nodes_ok {
            why.push(explain_failures(&self.matcher, check, |k| node.attribute(k)));
        }
        if !activity_checked {
            why.push(self.activity_failure(entry, check_activity));
        }
        Leaf::fail(i, format!("first match on {screen} is {}: {}", describe_node(node), why.join("; ")))
    }

    fn activity_failure(&self, entry: &Entry, op: Option<&Op>) -> String {
        let expected = op.map(|op| show_rule("activity", op)).unwrap_or_default();
        format!("{expected} but the activity is {:?}", self.trace.activity(entry))
    }

    /// Upstream's `_match_action` / `_check_action` on one entry: action-attribute rules compare
    /// with the action; any other rule needs the action's point, and the first node (BFS) that
    /// satisfies the element rules and contains the point (edges included) supplies the element
    /// attributes. Returns the node used, if any.
    fn action_holds<'n>(&'n self, entry: &Entry, rules: &RuleList<'_>) -> (bool, Option<&'n Node>) {
        if entry.kind == EntryKind::Screen {
            return (false, None);
        }
        if rules.iter().all(|(k, _)| is_action_attribute(k)) {
            return (self.matcher.all_hold(rules, |k| self.trace.action_attribute(entry, k)), None);
        }
        let Some((x, y)) = self.trace.point(entry) else {
            return (false, None);
        };
        let element_rules: RuleList<'_> =
            rules.iter().filter(|(k, _)| !is_action_attribute(k)).copied().collect();
        let found = self
            .trace
            .nodes(entry)
            .find(|n| self.matcher.node_matches(&element_rules, n) && n.bounds.contains_inclusive(x, y));
        let Some(node) = found else {
            return (false, None);
        };
        // Upstream merges `{**action, **node.attrib}`: the node's attributes win.
        let ok = self
            .matcher
            .all_hold(rules, |k| node.attribute(k).or_else(|| self.trace.action_attribute(entry, k)));
        (ok, Some(node))
    }

    fn describe_action(&self, entry: &Entry, node: Option<&Node>) -> String {
        let kind = match entry.kind {
            EntryKind::Stop => "STOP".to_string(),
            _ => {
                self.trace.action_attribute(entry, "action_type").map_or_else(String::new, |s| s.into_owned())
            }
        };
        let message = self
            .trace
            .action_attribute(entry, "message")
            .map(|m| format!(" {:?}", clip(&m)))
            .unwrap_or_default();
        let on = node.map(|n| format!(" on {}", describe_node(n))).unwrap_or_default();
        format!("{kind}{message} at step {}{on}", entry.step)
    }

    fn action_explain(&self, entry: &Entry, rules: &RuleList<'_>, node: Option<&Node>) -> String {
        if rules.iter().any(|(k, _)| !is_action_attribute(k)) && self.trace.point(entry).is_none() {
            return "it touched no point, so element rules cannot hold".into();
        }
        if rules.iter().any(|(k, _)| !is_action_attribute(k)) && node.is_none() {
            return "no node containing its point satisfies the element rules".into();
        }
        explain_failures(&self.matcher, rules, |k| {
            node.and_then(|n| n.attribute(k)).or_else(|| self.trace.action_attribute(entry, k))
        })
    }

    /// `action`: lastaction (`on = last`, `trace[-3]`) or findaction (`on = any`).
    fn action(&self, a: &ActionCheck, w: Window) -> Leaf {
        if let Err(leaf) = self.prepare(&[&a.find, &a.check]) {
            return leaf;
        }
        let find = select(&a.find, |_| true);
        let check = select(&a.check, |_| true);
        match a.on {
            Scope::Last => {
                if w.len() < 3 {
                    return Leaf::fail(0, "no action before STOP in this part of the trace");
                }
                let i = w.len() - 3;
                let Some(entry) = self.entry(w, i) else {
                    return Leaf::fail(0, "no action before STOP");
                };
                if entry.kind == EntryKind::Screen {
                    // Upstream would crash here (a screen entry has no action); it fails instead.
                    return Leaf::fail(i, "the entry before the last screen is not an action");
                }
                let (found, node) =
                    if find.is_empty() { (true, None) } else { self.action_holds(entry, &find) };
                if !found {
                    let why = self.action_explain(entry, &find, node);
                    return Leaf::fail(
                        i,
                        format!("last action, {}: {why}", self.describe_action(entry, node)),
                    );
                }
                let (ok, node) = self.action_holds(entry, &check);
                let described = self.describe_action(entry, node);
                if ok {
                    Leaf::pass(i, w.abs(i), format!("last action: {described}"))
                } else {
                    let why = self.action_explain(entry, &check, node);
                    Leaf::fail(i, format!("last action, {described}: {why}"))
                }
            }
            Scope::Any => {
                let any_match = self.ctx.semantics == Semantics::AnyMatch;
                for i in w.positions() {
                    let Some(entry) = self.entry(w, i) else { continue };
                    let (found, found_node) = self.action_holds(entry, &find);
                    if !found {
                        continue;
                    }
                    let (ok, node) = self.action_holds(entry, &check);
                    let node = node.or(found_node);
                    if ok {
                        return Leaf::pass(i, w.abs(i), self.describe_action(entry, node));
                    }
                    if !any_match {
                        let why = self.action_explain(entry, &check, node);
                        return Leaf::fail(
                            i,
                            format!(
                                "first matching action, {}, fails the check: {why}",
                                self.describe_action(entry, node)
                            ),
                        );
                    }
                }
                let what =
                    if any_match { "satisfies both find and check rules" } else { "matches the find rules" };
                Leaf::fail(0, format!("no action {what}"))
            }
        }
    }

    /// `action_element`: findelementbyaction.
    fn action_element(&self, a: &ActionElementCheck, w: Window) -> Leaf {
        if let Err(leaf) = self.prepare(&[&a.action, &a.element, &a.check]) {
            return leaf;
        }
        let action = select(&a.action, |_| true);
        let element = select(&a.element, |_| true);
        let check = select(&a.check, |_| true);
        let any_match = self.ctx.semantics == Semantics::AnyMatch;
        for i in w.positions() {
            let Some(entry) = self.entry(w, i) else { continue };
            let (found, action_node) = self.action_holds(entry, &action);
            if !found {
                continue;
            }
            let described = self.describe_action(entry, action_node);
            if any_match {
                let hit = self
                    .trace
                    .nodes(entry)
                    .find(|n| self.matcher.node_matches(&element, n) && self.matcher.node_matches(&check, n));
                if let Some(n) = hit {
                    return Leaf::pass(
                        i,
                        w.abs(i),
                        format!("{described}; on its screen {}", describe_node(n)),
                    );
                }
                continue;
            }
            return match self.trace.nodes(entry).find(|n| self.matcher.node_matches(&element, n)) {
                None => Leaf::fail(
                    i,
                    format!(
                        "first matching action, {described}: no node on its screen matches the element rules"
                    ),
                ),
                Some(n) if self.matcher.node_matches(&check, n) => {
                    Leaf::pass(i, w.abs(i), format!("{described}; on its screen {}", describe_node(n)))
                }
                Some(n) => Leaf::fail(
                    i,
                    format!(
                        "first matching action, {described}: on its screen {}: {}",
                        describe_node(n),
                        explain_failures(&self.matcher, &check, |k| n.attribute(k))
                    ),
                ),
            };
        }
        if any_match {
            Leaf::fail(
                0,
                "no matching action has a node satisfying the element and check rules on its screen",
            )
        } else {
            Leaf::fail(0, "no action matches the action rules")
        }
    }

    /// Runs `test` on the screens a scoped check looks at: the window's last screen (`trace[-2]`)
    /// or every screen in order until one passes. `test` gives `Ok(detail)` on a pass and
    /// `Err(detail)` on a miss.
    fn on_screens(&self, on: Scope, w: Window, test: impl Fn(&Entry) -> Result<String, String>) -> Leaf {
        match on {
            Scope::Last => match self.last_screen(w) {
                Err(leaf) => leaf,
                Ok((i, entry)) => match test(entry) {
                    Ok(d) => Leaf::pass(i, w.abs(i), format!("the last screen (step {}): {d}", entry.step)),
                    Err(d) => Leaf::fail(i, format!("the last screen (step {}): {d}", entry.step)),
                },
            },
            Scope::Any => {
                let mut last_miss = None;
                for (i, entry) in self.screen_entries(w) {
                    match test(entry) {
                        Ok(d) => return Leaf::pass(i, w.abs(i), format!("screen {}: {d}", entry.step)),
                        Err(d) => last_miss = Some(d),
                    }
                }
                Leaf::fail(
                    0,
                    format!(
                        "no screen passes (last one: {})",
                        last_miss.unwrap_or_else(|| "no screens".into())
                    ),
                )
            }
        }
    }

    /// Visible nodes whose text or content description contains `needle`.
    fn showing<'n>(&'n self, entry: &Entry, needle: &'n str) -> impl Iterator<Item = &'a Node> + 'n {
        self.trace
            .nodes(entry)
            .filter(move |n| n.is_visible() && (n.text.contains(needle) || n.content_desc.contains(needle)))
    }

    fn text(&self, t: &TextCheck, w: Window) -> Leaf {
        self.on_screens(t.on, w, |entry| match self.showing(entry, &t.text).next() {
            Some(n) => Ok(describe_node(n)),
            None => Err(format!("no visible node shows {:?}", t.text)),
        })
    }

    fn near(&self, n: &NearCheck, w: Window) -> Leaf {
        self.on_screens(n.on, w, |entry| {
            let firsts: Vec<&Node> = self.showing(entry, &n.text).collect();
            let seconds: Vec<&Node> = self.showing(entry, &n.to).collect();
            if firsts.is_empty() || seconds.is_empty() {
                let missing = if firsts.is_empty() { &n.text } else { &n.to };
                return Err(format!("no visible node shows {missing:?}"));
            }
            let mut closest: Option<(f64, &Node, &Node)> = None;
            for a in &firsts {
                for b in &seconds {
                    let d = box_distance(&a.bounds, &b.bounds);
                    if closest.is_none_or(|(c, _, _)| d < c) {
                        closest = Some((d, a, b));
                    }
                }
            }
            match closest {
                Some((d, a, b)) if d <= f64::from(n.within) => {
                    Ok(format!("{} and {} are {d:.0} px apart", describe_node(a), describe_node(b)))
                }
                Some((d, _, _)) => Err(format!("the closest pair is {d:.0} px apart (within {})", n.within)),
                None => Err("no pair".into()),
            }
        })
    }

    fn time(&self, t: &TimeCheck, w: Window) -> Leaf {
        if let Err(leaf) = self.prepare(&[&t.element]) {
            return leaf;
        }
        let bound = |s: &Option<String>| s.as_deref().map(moment::bound).transpose();
        let (from, to) = match (bound(&t.from), bound(&t.to)) {
            (Ok(f), Ok(to)) => (f, to),
            (Err(e), _) | (_, Err(e)) => return Leaf::fail(0, format!("cannot evaluate: {e}")),
        };
        let rules = select(&t.element, |_| true);
        let any_match = self.ctx.semantics == Semantics::AnyMatch;
        let judge = |n: &Node| -> Result<String, String> {
            let shown = if n.text.trim().is_empty() { &n.content_desc } else { &n.text };
            let value = moment::read(shown);
            match moment::within(&value, from.as_ref(), to.as_ref()) {
                Ok(true) => Ok(format!("{} is in range", describe_node(n))),
                Ok(false) => Err(format!("{} is out of range", describe_node(n))),
                Err(e) => Err(format!("{}: {e}", describe_node(n))),
            }
        };
        self.on_screens(t.on, w, |entry| {
            let mut matching = self.trace.nodes(entry).filter(|n| self.matcher.node_matches(&rules, n));
            if any_match {
                let mut last = None;
                for n in matching {
                    match judge(n) {
                        Ok(d) => return Ok(d),
                        Err(d) => last = Some(d),
                    }
                }
                Err(last.unwrap_or_else(|| "no node matches the element rules".into()))
            } else {
                match matching.next() {
                    Some(n) => judge(n),
                    None => Err("no node matches the element rules".into()),
                }
            }
        })
    }

    fn screen(&self, s: &ScreenCheck, w: Window) -> Leaf {
        self.on_screens(s.on, w, |entry| {
            let Some(record) = self.trace.screen(entry) else {
                return Err("no screen recorded".into());
            };
            let app_ok = s
                .app
                .as_deref()
                .is_none_or(|app| record.app.as_deref() == Some(app) || record.package == app);
            let screen_ok = s.screen.as_deref().is_none_or(|name| {
                record.activity == name || record.activity.rsplit('.').next() == Some(name)
            });
            let shown = format!(
                "app {} ({}), screen {:?}",
                record.app.as_deref().unwrap_or("-"),
                record.package,
                record.activity
            );
            if app_ok && screen_ok { Ok(shown) } else { Err(shown) }
        })
    }

    /// The absolute trace position of a step's action (its STOP for the trailing finish step and
    /// anything after), for scoping step-stamped records to a window.
    fn position_of_step(&self, step: usize) -> Option<usize> {
        self.trace
            .entries
            .iter()
            .position(|e| e.kind == EntryKind::Action(step))
            .or_else(|| self.trace.entries.iter().position(|e| e.kind == EntryKind::Stop && step >= e.step))
    }

    /// Step-stamped records within the window: `(relative position, record)` in order.
    fn in_window<'r, T>(
        &self,
        w: Window,
        records: impl Iterator<Item = (usize, &'r T)>,
    ) -> Vec<(usize, &'r T)> {
        records
            .filter_map(|(step, r)| {
                let pos = self.position_of_step(step)?;
                (w.start <= pos && pos < w.end).then(|| (pos - w.start, r))
            })
            .collect()
    }

    fn counted(&self, w: Window, what: &str, hits: &[(usize, String)], range: &CountRange) -> Leaf {
        let n = hits.len() as u64;
        let shown: Vec<&str> = hits.iter().take(3).map(|(_, s)| s.as_str()).collect();
        let detail = if hits.is_empty() {
            format!("no {what} (expected {})", state::count_text(range))
        } else {
            format!("{n} {what} (expected {}): {}", state::count_text(range), shown.join(", "))
        };
        let ok = range.contains(n);
        let idx = hits.first().map_or(0, |(i, _)| *i);
        Leaf::result(ok, idx, w.abs(idx), detail)
    }

    fn event(&self, e: &EventCheck, w: Window) -> Leaf {
        if let Err(leaf) = self.prepare(&[&e.data]) {
            return leaf;
        }
        let rules = select(&e.data, |_| true);
        let events = self.trace.trajectory.events.iter().map(|ev| (ev.step, ev));
        let hits: Vec<(usize, String)> = self
            .in_window(w, events)
            .into_iter()
            .filter(|(_, ev)| {
                e.app.as_deref().is_none_or(|a| a == ev.app)
                    && ev.name == e.name
                    && self.matcher.all_hold(&rules, |k| ev.data.get(k).map(json_text))
            })
            .map(|(i, ev)| (i, format!("{}.{} at step {}", ev.app, ev.name, ev.step)))
            .collect();
        self.counted(
            w,
            &format!("`{}` events", e.name),
            &hits,
            &e.count.unwrap_or_else(CountRange::at_least_one),
        )
    }

    fn asked(&self, range: &CountRange, w: Window) -> Leaf {
        let exchanges = self.trace.trajectory.exchanges.iter().map(|x| (x.step, x));
        let hits: Vec<(usize, String)> = self
            .in_window(w, exchanges)
            .into_iter()
            .map(|(i, x)| (i, format!("{:?} at step {}", clip(&x.question), x.step)))
            .collect();
        self.counted(w, "questions to the user", &hits, range)
    }

    /// The episode's own end, wherever the window is: an agent finishes once.
    fn finish(&self, check: &FinishCheck) -> Leaf {
        if let Some(phonebench_tasks::Op::Regex(pattern)) = &check.reason
            && let Err(e) = self.matcher.prepare_pattern(pattern)
        {
            return Leaf::fail(0, format!("rule on the reason: {e}"));
        }
        let last = self.trace.trajectory.steps.last().and_then(|s| s.action.as_ref());
        let Some(Action::Finish { status, reason }) = last else {
            return Leaf::fail(0, "the agent did not end with `finish`");
        };
        let status_ok = matches!(
            (status, check.status),
            (FinishStatus::Complete, FinishWanted::Complete)
                | (FinishStatus::Infeasible, FinishWanted::Infeasible)
        );
        let said = match status {
            FinishStatus::Complete => "complete",
            FinishStatus::Infeasible => "infeasible",
        };
        if !status_ok {
            return Leaf::fail(0, format!("the agent finished `{said}`"));
        }
        let reason_text = reason.as_deref().unwrap_or("");
        match &check.reason {
            Some(op) if !self.matcher.op_matches(op, reason_text) => Leaf::fail(
                0,
                format!("the agent finished `{said}`; its reason {reason_text:?} does not match"),
            ),
            _ => Leaf::global(Ok((true, format!("the agent finished `{said}`: {reason_text:?}")))),
        }
    }

    fn mcp(&self, m: &McpCheck, w: Window) -> Leaf {
        if let Err(leaf) = self.prepare(&[&m.arguments]) {
            return leaf;
        }
        if let Some(phonebench_tasks::Op::Regex(pattern)) = &m.result
            && let Err(e) = self.matcher.prepare_pattern(pattern)
        {
            return Leaf::fail(0, format!("rule on the result: {e}"));
        }
        let rules = select(&m.arguments, |_| true);
        let calls = self.trace.trajectory.mcp_calls.iter().map(|c| (c.step, c));
        let hits: Vec<(usize, String)> = self
            .in_window(w, calls)
            .into_iter()
            .filter(|(_, c)| {
                m.tool.as_deref().is_none_or(|t| t == c.tool)
                    && m.ok.is_none_or(|ok| ok != c.is_error)
                    && self.matcher.all_hold(&rules, |k| c.arguments.get(k).map(json_text))
                    && m.result.as_ref().is_none_or(|op| self.matcher.op_matches(op, &c.result))
            })
            .map(|(i, c)| (i, format!("{} at step {}", c.tool, c.step)))
            .collect();
        let what = match &m.tool {
            Some(t) => format!("`{t}` calls"),
            None => "MCP calls".to_string(),
        };
        self.counted(w, &what, &hits, &m.count.unwrap_or_else(CountRange::at_least_one))
    }
}

/// A JSON value as text for rules: strings as they are, anything else as JSON.
fn json_text(value: &serde_json::Value) -> std::borrow::Cow<'static, str> {
    match value {
        serde_json::Value::String(s) => std::borrow::Cow::Owned(s.clone()),
        other => std::borrow::Cow::Owned(other.to_string()),
    }
}

/// The gap between two boxes (0 when they touch or overlap), Euclidean.
fn box_distance(a: &Bounds, b: &Bounds) -> f64 {
    // In i64: bounds from real dumps can be extreme, and a difference of two i32 may not fit.
    let gap = |lo1: i32, hi1: i32, lo2: i32, hi2: i32| {
        (i64::from(lo1) - i64::from(hi2)).max(i64::from(lo2) - i64::from(hi1)).max(0) as f64
    };
    let dx = gap(a.left, a.right, b.left, b.right);
    let dy = gap(a.top, a.bottom, b.top, b.bottom);
    (dx * dx + dy * dy).sqrt()
}

fn verdict(
    label: String,
    passed: bool,
    step: Option<usize>,
    detail: String,
    children: Vec<CriterionVerdict>,
) -> CriterionVerdict {
    CriterionVerdict { label, passed, guard: false, step, detail, children }
}

fn not_reached(criterion: &Criterion, why: &str) -> CriterionVerdict {
    verdict(criterion.label(), false, None, format!("not evaluated: {why}"), Vec::new())
}
