//! Which states the search expands first: those that made progress toward the goal, and among
//! them those that show something no state of the same progress showed before.
//!
//! This is best-first width search (BFWS; Lipovetzky and Geffner, "Best-First Width Search:
//! Exploration and Exploitation in Classical Planning", AAAI 2017) adapted to a simulator whose
//! states are screens and databases. A state's *atoms* are the facts it shows: each element's
//! id and text, the app in front, each tracked database's content, the exchanges and tool
//! calls, the criteria that pass. A state is *novel* when one of its atoms was never seen in a
//! state of equal [`Progress`]. Novel states are expanded first (a form filled in one more way
//! than before is not novel; a screen never seen is), which keeps the search from drowning in
//! the combinations of fields and values a phone offers; the others wait, they are not dropped.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use phonebench_env::Trajectory;
use phonebench_eval::Verdict;
use phonebench_tasks::{Criterion, CriterionKind};
use phonebench_uitree::{UiTree, WindowKind};

use crate::text::TextCandidate;

/// The atoms seen so far, per progress level, each with the fewest actions it was seen after.
#[derive(Debug, Default)]
pub struct Novelty {
    seen: HashMap<i64, HashMap<u64, u32>>,
}

impl Novelty {
    /// Whether a state of `progress`, `depth` actions from the start, shows an atom no earlier
    /// state of the same progress showed in as few actions (the search is not breadth-first:
    /// the same screen reached in fewer actions is worth expanding again); records its atoms
    /// either way.
    pub fn check(&mut self, progress: i64, depth: u32, atoms: &[u64]) -> bool {
        let seen = self.seen.entry(progress).or_default();
        let mut novel = false;
        for atom in atoms {
            let d = seen.entry(*atom).or_insert(u32::MAX);
            if depth < *d {
                *d = depth;
                novel = true;
            }
        }
        novel
    }
}

fn digest(part: impl Hash) -> u64 {
    // `DefaultHasher::new()` has fixed keys: the same atoms on every run.
    let mut h = std::hash::DefaultHasher::new();
    part.hash(&mut h);
    h.finish()
}

/// A digest of each tracked database's content as `stopped` ends with it, in its order.
pub fn database_digests(stopped: &Trajectory) -> Vec<u64> {
    stopped.databases.values().map(|pair| digest(&pair.last)).collect()
}

/// The facts a state shows: each element with a text (its id, text and description; typed text
/// included), the app in front, each tracked database's content (`digests`,
/// [`database_digests`]), each exchange and tool call, and each criterion that passes.
pub fn atoms(
    tree: &UiTree,
    foreground: Option<&str>,
    stopped: &Trajectory,
    digests: &[u64],
    verdict: &Verdict,
) -> Vec<u64> {
    let mut out = Vec::new();
    for (id, node) in tree.iter() {
        if tree.window(tree.window_of(id)).kind == WindowKind::InputMethod {
            continue;
        }
        if !node.text.is_empty() || !node.content_desc.is_empty() {
            out.push(digest((0u8, &node.resource_id, &node.text, &node.content_desc)));
        }
    }
    out.push(digest((1u8, foreground)));
    for (app, d) in stopped.databases.keys().zip(digests) {
        out.push(digest((2u8, app, d)));
    }
    for x in &stopped.exchanges {
        out.push(digest((3u8, &x.question, &x.answer)));
    }
    for c in &stopped.mcp_calls {
        out.push(digest((4u8, &c.tool, serde_json::to_string(&c.arguments).unwrap_or_default(), &c.result)));
    }
    for (i, c) in verdict.criteria.iter().enumerate() {
        if c.passed {
            out.push(digest((5u8, i)));
        }
    }
    out
}

/// How far a state got: 8 for each criterion that passes and 4 for each check passing inside
/// an `all` that does not (guards, `changes` checks and negations left out), plus 1 for each
/// text candidate given to it (a value of the goal, or one the user or a tool told) that is new
/// to the phone and that a field on the screen holds exactly, or that a tracked database holds
/// and did not at the start. Saved values count as much as typed ones, so saving is not a step
/// back; a criterion passing outweighs a few values.
#[derive(Debug, Default)]
pub struct Progress {
    /// Whether a database content (by digest) holds a text its initial content did not.
    stored: HashMap<(u64, String), bool>,
    /// Whether a text is in some tracked database's initial content.
    known: HashMap<String, bool>,
}

impl Progress {
    /// The progress of the state with `tree`, ended as `stopped` (its databases' `digests`,
    /// [`database_digests`]) and judged `verdict`.
    pub fn of<'c>(
        &mut self,
        tree: &UiTree,
        stopped: &Trajectory,
        digests: &[u64],
        criteria: &[Criterion],
        verdict: &Verdict,
        candidates: impl Iterator<Item = &'c TextCandidate>,
    ) -> i64 {
        let passing = criteria_progress(criteria, verdict);
        let fields: Vec<String> = tree
            .iter()
            .filter(|(id, n)| {
                tree.window(tree.window_of(*id)).kind != WindowKind::InputMethod
                    && (n.editable.unwrap_or(false) || n.class.ends_with("EditText"))
                    && !n.text.is_empty()
            })
            .map(|(_, n)| n.text.to_lowercase())
            .collect();
        let changed: Vec<(u64, &phonebench_env::DatabasePair)> = digests
            .iter()
            .zip(stopped.databases.values())
            .filter(|(_, pair)| pair.last != pair.initial)
            .map(|(d, pair)| (*d, pair))
            .collect();
        let mut present: Vec<String> = Vec::new();
        for c in candidates {
            let text = c.text.trim();
            let lower = text.to_lowercase();
            if text.chars().count() < 2 || present.contains(&lower) {
                continue;
            }
            // A field holding exactly the value (not a part of it: `camila` in `Camila Park`),
            // when the value is new to the phone: one its databases already hold names what to
            // find (a contact to edit), not what to put, and typing it is no progress.
            let typed = fields.iter().any(|f| f.trim() == lower)
                && !*self.known.entry(text.to_string()).or_insert_with(|| {
                    stopped
                        .databases
                        .values()
                        .any(|pair| memchr::memmem::find(&pair.initial, text.as_bytes()).is_some())
                });
            // Short texts (a number, a day) occur by chance in any database change.
            let stored = text.len() >= 4
                && changed.iter().any(|(d, pair)| {
                    *self.stored.entry((*d, text.to_string())).or_insert_with(|| {
                        memchr::memmem::find(&pair.last, text.as_bytes()).is_some()
                            && memchr::memmem::find(&pair.initial, text.as_bytes()).is_none()
                    })
                });
            if typed || stored {
                present.push(lower);
            }
        }
        // A value inside another present one (`mail.example.org` in the address) is not more
        // progress.
        let counted = present
            .iter()
            .filter(|v| !present.iter().any(|w| w.len() > v.len() && w.contains(v.as_str())))
            .count();
        passing + counted as i64
    }
}

/// 8 for each criterion that passes, 4 for each check that passes inside an `all` that does
/// not. Left out: guards (they pass from the start), `changes` checks (a count of changed rows
/// passes after any change of the right size, the wrong row's too) and negations (they pass
/// until something goes wrong).
fn criteria_progress(criteria: &[Criterion], verdict: &Verdict) -> i64 {
    let telling = |c: &Criterion| !matches!(c.kind, CriterionKind::Changes(_) | CriterionKind::Not(_));
    let mut sum = 0;
    for (c, v) in criteria.iter().zip(&verdict.criteria) {
        if c.guard || !telling(c) {
            continue;
        }
        if v.passed {
            sum += 8;
        } else if let CriterionKind::All(children) = &c.kind {
            sum +=
                4 * children.iter().zip(&v.children).filter(|(c, v)| v.passed && telling(c)).count() as i64;
        }
    }
    sum
}
