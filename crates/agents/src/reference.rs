//! The reference agent: replays a task's reference solution, finding each step's element on the
//! current screen by its selector (never by index or position).

use phonebench_actions::{Action, Direction, FinishStatus, Key, Point, Target};
use phonebench_tasks::{RefStep, Selector, SelectorTerm};
use phonebench_uitree::{NodeId, UiTree};

use crate::{Agent, AgentError, AgentInput, AgentOutput, BoxFuture};

/// How many scrolls `scroll_to` tries before giving up.
pub const SCROLL_TO_LIMIT: usize = 25;

/// Replays a reference solution. When a selector finds nothing, it gives up with
/// `finish infeasible`, so a broken reference fails validation instead of acting at random.
#[derive(Debug, Clone)]
pub struct ReferenceAgent {
    steps: Vec<RefStep>,
    next: usize,
    scrolls: usize,
    /// Why the replay stopped early, if it did.
    pub failure: Option<String>,
}

impl ReferenceAgent {
    /// An agent replaying `steps`.
    pub fn new(steps: Vec<RefStep>) -> ReferenceAgent {
        ReferenceAgent { steps, next: 0, scrolls: 0, failure: None }
    }

    /// The action for the current screen. A disturbance on it (a pop-up, an ad, a heads-up
    /// notification, a screen still loading) is dealt with first by the standard dismiss step
    /// ([`phonebench_phone::dismissal`]); the reference's own step waits for the next turn.
    pub fn decide(&mut self, tree: &UiTree) -> Action {
        // Also before the closing `finish`: a careful user does not leave a pop-up up.
        if self.failure.is_none()
            && let Some(dismissal) = phonebench_phone::dismissal(tree)
        {
            return dismiss_action(tree, dismissal);
        }
        loop {
            let Some(step) = self.steps.get(self.next).cloned() else {
                return Action::Finish { status: FinishStatus::Complete, reason: None };
            };
            let point = |sel: &Selector| resolve_selector(tree, sel).map(|n| center(tree, n));
            let action = match &step {
                RefStep::Tap { target } | RefStep::LongPress { target } | RefStep::DoubleTap { target } => {
                    let Some(p) = point(target) else { return self.give_up(&step, target) };
                    let target = Target::Point(p);
                    match step {
                        RefStep::Tap { .. } => Action::Tap { target },
                        RefStep::LongPress { .. } => Action::LongPress { target },
                        _ => Action::DoubleTap { target },
                    }
                }
                RefStep::Type { target, text, clear, enter } => {
                    let Some(p) = point(target) else { return self.give_up(&step, target) };
                    Action::Type {
                        text: text.clone(),
                        target: Some(Target::Point(p)),
                        clear: *clear,
                        enter: *enter,
                    }
                }
                RefStep::Scroll { direction, target } => {
                    let target = match target {
                        Some(sel) => match point(sel) {
                            Some(p) => Some(Target::Point(p)),
                            None => return self.give_up(&step, sel),
                        },
                        None => None,
                    };
                    Action::Scroll { direction: direction_of(direction), target }
                }
                RefStep::ScrollTo { target, direction } => {
                    if resolve_selector(tree, target).is_some() {
                        // Found: this step is done without an action of its own.
                        self.next += 1;
                        self.scrolls = 0;
                        continue;
                    }
                    if self.scrolls >= SCROLL_TO_LIMIT {
                        return self.give_up(&step, target);
                    }
                    self.scrolls += 1;
                    return Action::Scroll { direction: direction_of(direction), target: None };
                }
                RefStep::Key { key } => match Key::parse(key) {
                    Ok(key) => Action::Key { key },
                    Err(e) => {
                        self.failure = Some(format!("reference step {}: {e}", self.next + 1));
                        return Action::Finish { status: FinishStatus::Infeasible, reason: None };
                    }
                },
                RefStep::Open { app } => Action::OpenApp { app: app.clone() },
                RefStep::Wait { ms } => Action::Wait { ms: *ms },
                RefStep::If { target, negate, then } => {
                    if resolve_selector(tree, target).is_some() != *negate {
                        // The branch is taken: its step stands in this one's place.
                        self.steps[self.next] = (**then).clone();
                    } else {
                        self.next += 1;
                    }
                    continue;
                }
                RefStep::Answer { text } => Action::Answer { text: text.clone() },
                RefStep::Ask { text } => Action::AskUser { text: text.clone() },
                RefStep::Mcp { tool, arguments } => match serde_json::from_str(arguments) {
                    Ok(serde_json::Value::Object(arguments)) => {
                        Action::McpCall { tool: tool.clone(), arguments }
                    }
                    _ => {
                        self.failure = Some(format!(
                            "reference step {} (mcp {tool}): the rendered arguments are not a JSON object: {arguments}",
                            self.next + 1
                        ));
                        self.next = self.steps.len();
                        return Action::Finish { status: FinishStatus::Infeasible, reason: None };
                    }
                },
                RefStep::Finish { infeasible, reason } => Action::Finish {
                    status: if *infeasible { FinishStatus::Infeasible } else { FinishStatus::Complete },
                    reason: reason.clone(),
                },
            };
            self.next += 1;
            return action;
        }
    }

    fn give_up(&mut self, step: &RefStep, selector: &Selector) -> Action {
        self.failure = Some(format!(
            "reference step {} ({}): no element matches {selector} on this screen",
            self.next + 1,
            step_verb(step)
        ));
        self.next = self.steps.len();
        Action::Finish { status: FinishStatus::Infeasible, reason: None }
    }
}

impl Agent for ReferenceAgent {
    fn name(&self) -> &str {
        "reference"
    }

    fn act<'a>(&'a mut self, input: &'a AgentInput) -> BoxFuture<'a, Result<AgentOutput, AgentError>> {
        let action = self.decide(&input.tree);
        Box::pin(async move { Ok(AgentOutput::scripted(action)) })
    }
}

fn step_verb(step: &RefStep) -> &'static str {
    match step {
        RefStep::Tap { .. } => "tap",
        RefStep::LongPress { .. } => "long_press",
        RefStep::DoubleTap { .. } => "double_tap",
        RefStep::Type { clear: true, .. } => "type",
        RefStep::Type { .. } => "append",
        RefStep::Scroll { .. } => "scroll",
        RefStep::ScrollTo { .. } => "scroll_to",
        RefStep::Key { .. } => "key",
        RefStep::Open { .. } => "open",
        RefStep::Wait { .. } => "wait",
        RefStep::If { .. } => "if",
        RefStep::Answer { .. } => "answer",
        RefStep::Ask { .. } => "ask",
        RefStep::Mcp { .. } => "mcp",
        RefStep::Finish { .. } => "finish",
    }
}

fn direction_of(name: &str) -> Direction {
    match name {
        "up" => Direction::Up,
        "left" => Direction::Left,
        "right" => Direction::Right,
        _ => Direction::Down,
    }
}

fn center(tree: &UiTree, node: NodeId) -> Point {
    let (x, y) = tree.node(node).bounds.center();
    Point::new(x, y)
}

/// The element a selector names on this screen: windows topmost first, breadth-first within a
/// window, the first visible node (non-empty bounds on screen) satisfying every term.
pub fn resolve_selector(tree: &UiTree, selector: &Selector) -> Option<NodeId> {
    let screen = tree.screen_bounds();
    for window in tree.windows_top_down() {
        let root = tree.window(window).root;
        for id in tree.bfs(root) {
            let node = tree.node(id);
            let b = node.bounds;
            if !node.is_visible() || b.is_empty() {
                continue;
            }
            let (cx, cy) = b.center();
            if !screen.contains(cx, cy) {
                continue;
            }
            let text_is = |s: &str| node.text == s || node.content_desc == s;
            let all = selector.0.iter().all(|term| match term {
                SelectorTerm::Id(name) => {
                    node.resource_id == *name || node.resource_id.ends_with(&format!("/{name}"))
                }
                SelectorTerm::Text(s) => text_is(s),
                SelectorTerm::Contains(s) => {
                    node.text.contains(s.as_str()) || node.content_desc.contains(s.as_str())
                }
                SelectorTerm::Desc(s) => node.content_desc == *s,
            });
            if all {
                return Some(id);
            }
        }
    }
    None
}

/// The action that carries out the standard dismiss step.
pub fn dismiss_action(tree: &UiTree, dismissal: phonebench_phone::Dismissal) -> Action {
    match dismissal {
        phonebench_phone::Dismissal::Tap(node) => Action::Tap { target: Target::Point(center(tree, node)) },
        phonebench_phone::Dismissal::SwipeUp(node) => {
            let from = center(tree, node);
            let to = Point::new(from.x, (from.y - 300).max(0));
            Action::Swipe(phonebench_actions::Swipe::Between { from, to })
        }
        phonebench_phone::Dismissal::Wait => Action::Wait { ms: None },
    }
}
