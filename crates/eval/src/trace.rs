//! SPHINX's interleaved trace model over a [`Trajectory`].
//!
//! The trace is `[(screen0, activity0), (screen0, action0), (screen1, activity1), …,
//! (screenN, activityN), (screenN, STOP)]`. Every check returns `(ok, idx)` with `idx` relative to
//! the window it was given, and the combinators slice windows exactly as upstream's Python slices
//! lists (`trace[idx:]`, `trace[idx:idx+3]`), so imported evaluators score as they do upstream.

use std::borrow::Cow;

use phonebench_actions::{Action, Key};
use phonebench_env::{ScreenRecord, StepRecord, Trajectory, action_direction};
use phonebench_uitree::{Node, NodeId};

/// The package whose top-level windows SPHINX drops before searching (status and navigation bars).
const SYSTEM_UI_PACKAGE: &str = "com.android.systemui";

/// Attributes of an action, as opposed to attributes of the element at its point. SPHINX has the
/// first two; the rest are ours and never appear in SPHINX files.
pub(crate) const ACTION_ATTRIBUTES: [&str; 6] = ["action_type", "message", "type", "key", "direction", "app"];

/// Whether a rule key names an action attribute (not an element attribute).
pub(crate) fn is_action_attribute(key: &str) -> bool {
    ACTION_ATTRIBUTES.contains(&key)
}

/// What a trace entry holds besides its screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    /// `(screen, activity)`.
    Screen,
    /// `(screen, action)`: the trajectory step with this index.
    Action(usize),
    /// `(screen, STOP)`: the agent's stop, implicit after the last step.
    Stop,
}

/// One trace entry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    /// Index into `Trajectory::screens`.
    pub screen: usize,
    /// Activity, action or stop.
    pub kind: EntryKind,
    /// The trajectory step this entry belongs to (for reports): the screen index for screen entries
    /// (the step taken from that screen), the step index for actions, the stop's step for STOP.
    pub step: usize,
}

/// The whole trace with per-screen node lists computed once.
pub(crate) struct Trace<'a> {
    /// The trajectory.
    pub trajectory: &'a Trajectory,
    /// The entries, in order.
    pub entries: Vec<Entry>,
    /// The trailing finish/answer step folded into STOP, if the trajectory recorded one.
    stop_step: Option<usize>,
    /// Per screen: the nodes SPHINX searches, breadth-first per kept window.
    nodes: Vec<Vec<NodeId>>,
}

impl<'a> Trace<'a> {
    /// Builds the trace. A trailing `finish`/`answer` step (recorded by episodes) is the agent's
    /// STOP: it is not an action of its own, and STOP sits on the screen it was issued from, as
    /// in SPHINX where no screen is recorded after STOP. Never panics, whatever the lengths.
    pub fn build(trajectory: &'a Trajectory) -> Trace<'a> {
        let steps = &trajectory.steps;
        let screens = trajectory.screens.len();
        let trailing_stop = steps.last().is_some_and(is_stop_step);
        let mut actions = if trailing_stop { steps.len() - 1 } else { steps.len() };
        // A malformed trajectory with too few screens: keep the actions that have a screen
        // before them and one after.
        actions = actions.min(screens.saturating_sub(1));
        let stop_step = if trailing_stop && actions == steps.len() - 1 { Some(actions) } else { None };
        let mut entries = Vec::with_capacity(2 * actions + 2);
        if screens > 0 {
            for i in 0..actions {
                entries.push(Entry { screen: i, kind: EntryKind::Screen, step: i });
                entries.push(Entry { screen: i, kind: EntryKind::Action(i), step: i });
            }
            entries.push(Entry { screen: actions, kind: EntryKind::Screen, step: actions });
            entries.push(Entry { screen: actions, kind: EntryKind::Stop, step: actions });
        }
        let nodes = trajectory.screens.iter().map(searchable_nodes).collect();
        Trace { trajectory, entries, stop_step, nodes }
    }

    /// The whole trace as a window.
    pub fn all(&self) -> Window {
        Window { start: 0, end: self.entries.len() }
    }

    /// The screen record of an entry.
    pub fn screen(&self, entry: &Entry) -> Option<&'a ScreenRecord> {
        self.trajectory.screens.get(entry.screen)
    }

    /// The activity of an entry's screen (empty when unknown).
    pub fn activity(&self, entry: &Entry) -> &'a str {
        self.screen(entry).map_or("", |s| s.activity.as_str())
    }

    /// The nodes of an entry's screen in SPHINX search order: breadth-first within each top-level
    /// window, windows in dump order, `com.android.systemui` windows dropped.
    pub fn nodes(&self, entry: &Entry) -> impl Iterator<Item = &'a Node> + '_ {
        let tree = self.screen(entry).map(|s| &*s.tree);
        self.nodes.get(entry.screen).into_iter().flatten().filter_map(move |id| tree.and_then(|t| t.get(*id)))
    }

    /// The step record of an action entry.
    pub fn step_record(&self, entry: &Entry) -> Option<&'a StepRecord> {
        match entry.kind {
            EntryKind::Action(i) => self.trajectory.steps.get(i),
            EntryKind::Stop => self.stop_step.and_then(|i| self.trajectory.steps.get(i)),
            EntryKind::Screen => None,
        }
    }

    /// The point an action entry touched (element centre or coordinates).
    pub fn point(&self, entry: &Entry) -> Option<(i32, i32)> {
        match entry.kind {
            EntryKind::Action(_) => self.step_record(entry).and_then(|s| s.point),
            // STOP touches nothing.
            EntryKind::Stop | EntryKind::Screen => None,
        }
    }

    /// An action attribute of an action entry (`None` when the action has no such attribute,
    /// which fails any rule on it, as a missing key does upstream).
    pub fn action_attribute(&self, entry: &Entry, key: &str) -> Option<Cow<'a, str>> {
        let step = self.step_record(entry);
        let action = step.and_then(|s| s.action.as_ref());
        match (entry.kind, key) {
            (EntryKind::Screen, _) => None,
            (EntryKind::Stop, "action_type") => Some(Cow::Borrowed("stop")),
            (EntryKind::Action(_), "action_type") => {
                Some(Cow::Borrowed(step.map_or("none", |s| s.sphinx_type())))
            }
            (_, "type") => action.map(|a| Cow::Borrowed(a.kind())),
            (EntryKind::Action(_), "message") => step.and_then(|s| s.message()).map(Cow::Borrowed),
            (EntryKind::Action(_), "key") => match action {
                Some(Action::Key { key }) => Some(Cow::Owned(key_name(key))),
                _ => None,
            },
            (EntryKind::Action(_), "direction") => {
                action.and_then(action_direction).map(|d| Cow::Borrowed(d.as_str()))
            }
            (EntryKind::Action(_), "app") => match action {
                Some(Action::OpenApp { app }) => Some(Cow::Borrowed(app.as_str())),
                Some(Action::RestartApp { app: Some(app) }) => Some(Cow::Borrowed(app.as_str())),
                _ => None,
            },
            _ => None,
        }
    }

    /// The entry at an absolute position.
    pub fn entry(&self, at: usize) -> Option<&Entry> {
        self.entries.get(at)
    }
}

fn key_name(key: &Key) -> String {
    key.name()
}

/// Whether a step is the agent saying it is done (SPHINX's STOP).
fn is_stop_step(step: &StepRecord) -> bool {
    matches!(step.action, Some(Action::Finish { .. } | Action::Answer { .. }))
}

fn searchable_nodes(screen: &ScreenRecord) -> Vec<NodeId> {
    let tree = &*screen.tree;
    tree.windows()
        .iter()
        .filter(|w| tree.get(w.root).is_some_and(|root| root.package != SYSTEM_UI_PACKAGE))
        .flat_map(|w| tree.bfs(w.root))
        .collect()
}

/// A contiguous part of the trace: what one check is given (`trace[start:end]` in upstream's
/// Python). Positions inside are relative to `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    /// First absolute position.
    pub start: usize,
    /// One past the last absolute position.
    pub end: usize,
}

impl Window {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Absolute position of relative position `i`.
    pub fn abs(&self, i: usize) -> usize {
        self.start + i
    }

    /// `trace[idx:]`.
    pub fn from(&self, idx: usize) -> Window {
        let start = self.start.saturating_add(idx).min(self.end);
        Window { start, end: self.end }
    }

    /// `trace[idx:idx+3]`.
    pub fn three_from(&self, idx: usize) -> Window {
        let start = self.start.saturating_add(idx).min(self.end);
        Window { start, end: start.saturating_add(3).min(self.end) }
    }

    /// Relative positions, in order.
    pub fn positions(&self) -> std::ops::Range<usize> {
        0..self.len()
    }
}
