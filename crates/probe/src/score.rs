//! Scores of stored probe results, as SPHINX reports them.
//!
//! - knowledge (`extractor.py`, `calc_final`): per question type, accuracy over five binary
//!   units per question (the MCQ and the four BQs, T expected only at the answer), original and
//!   repaired; the MCQ and BQ accuracies apart too;
//! - completion (`show_complete.py`): per mode, **Last** (accuracy on each trajectory's last
//!   screen), **Pre** (on the others) and **Overall** (trajectories with every screen right);
//! - grounding (`run_lowlevel.py` / `parsed_lowlevel.py`): success rate overall and per
//!   expected action type, original and repaired;
//! - instructions: per context (full, focused), the format-error rate and the success rate.
//!
//! Infrastructure failures and unaskable items are left out of every figure; a completion
//! trajectory counts in Overall only when every screen of it was scored, its last included.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::ask::ProbeResult;
use crate::item::{DataSource, Mode, ProbeKind};

/// One figure of a probe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    /// The probe.
    pub probe: ProbeKind,
    /// The item source.
    pub source: DataSource,
    /// The mode.
    pub mode: Mode,
    /// What is measured: `accuracy`, `mcq`, `bq`, `last`, `pre`, `overall`, `format_errors`, …,
    /// with the group it covers (`accuracy:app_level`, `accuracy:click`).
    pub measure: String,
    /// How many it is over (units, items or trajectories).
    pub n: u32,
    /// As answered (`None` when `n` is 0).
    pub original: Option<f64>,
    /// After repair, where repair applies.
    pub repaired: Option<f64>,
}

fn share(k: u32, n: u32) -> Option<f64> {
    (n > 0).then(|| f64::from(k) / f64::from(n))
}

/// Counters of right answers.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    n: u32,
    right: u32,
    right_repaired: u32,
}

impl Tally {
    fn add(&mut self, n: u32, right: u32, right_repaired: u32) {
        self.n += n;
        self.right += right;
        self.right_repaired += right_repaired;
    }
}

/// The figures of `results`, grouped by probe, source and mode in that order.
pub fn figures(results: &[ProbeResult]) -> Vec<Figure> {
    let mut groups: BTreeMap<(ProbeKind, DataSource, Mode), Vec<&ProbeResult>> = BTreeMap::new();
    // Trajectories with an unscored screen, or without their last one (a limit cut them), are
    // in no Overall: all-correct cannot be known for them.
    let mut whole: BTreeMap<(Mode, &str), bool> = BTreeMap::new();
    for r in results.iter().filter(|r| r.probe == ProbeKind::Completion) {
        let key = (r.mode, r.trajectory.as_deref().unwrap_or(&r.item));
        let ok = whole.entry(key).or_insert(false);
        if r.group == "last" && r.scored() {
            *ok = true;
        }
    }
    for r in results.iter().filter(|r| r.probe == ProbeKind::Completion && !r.scored()) {
        whole.insert((r.mode, r.trajectory.as_deref().unwrap_or(&r.item)), false);
    }
    for r in results.iter().filter(|r| r.scored()) {
        groups.entry((r.probe, r.source, r.mode)).or_default().push(r);
    }
    let mut out = Vec::new();
    for ((probe, source, mode), rs) in groups {
        let mut push = |measure: String, t: Tally, repaired: bool| {
            out.push(Figure {
                probe,
                source,
                mode,
                measure,
                n: t.n,
                original: share(t.right, t.n),
                repaired: if repaired { share(t.right_repaired, t.n) } else { None },
            });
        };
        match probe {
            ProbeKind::Knowledge => {
                let mut by_type: BTreeMap<&str, [Tally; 3]> = BTreeMap::new();
                for r in &rs {
                    let t = by_type.entry(r.group.as_str()).or_default();
                    t[0].add(r.units, r.correct, r.correct_repaired);
                    for a in &r.answers {
                        let i = if a.ask == "mcq" { 1 } else { 2 };
                        t[i].add(1, u32::from(a.correct), u32::from(a.correct_repaired));
                    }
                }
                for (group, [all, mcq, bq]) in by_type {
                    push(format!("accuracy:{group}"), all, true);
                    push(format!("mcq:{group}"), mcq, true);
                    push(format!("bq:{group}"), bq, true);
                }
            }
            ProbeKind::Completion => {
                let (mut last, mut pre) = (Tally::default(), Tally::default());
                let mut trajectories: BTreeMap<&str, bool> = BTreeMap::new();
                for r in &rs {
                    let right = r.correct == r.units && r.units > 0;
                    if r.group == "last" { &mut last } else { &mut pre }.add(
                        1,
                        u32::from(right),
                        u32::from(right),
                    );
                    let name = r.trajectory.as_deref().unwrap_or(&r.item);
                    if whole.get(&(mode, name)).copied().unwrap_or(false) {
                        *trajectories.entry(name).or_insert(true) &= right;
                    }
                }
                push("last".into(), last, false);
                push("pre".into(), pre, false);
                let overall = trajectories.values().filter(|ok| **ok).count() as u32;
                push(
                    "overall".into(),
                    Tally { n: trajectories.len() as u32, right: overall, right_repaired: overall },
                    false,
                );
                let fe: u32 = rs.iter().map(|r| r.format_errors).sum();
                push(
                    "format_errors".into(),
                    Tally { n: rs.len() as u32, right: fe, right_repaired: fe },
                    false,
                );
            }
            ProbeKind::Grounding | ProbeKind::Instructions => {
                let mut all = Tally::default();
                let mut by_kind: BTreeMap<&str, Tally> = BTreeMap::new();
                for r in &rs {
                    all.add(r.units, r.correct, r.correct_repaired);
                    by_kind.entry(r.group.as_str()).or_default().add(r.units, r.correct, r.correct_repaired);
                }
                push("accuracy".into(), all, true);
                let fe: u32 = rs.iter().map(|r| r.format_errors).sum();
                push(
                    "format_errors".into(),
                    Tally { n: rs.len() as u32, right: fe, right_repaired: fe },
                    false,
                );
                for (kind, t) in by_kind {
                    push(format!("accuracy:{kind}"), t, true);
                }
            }
        }
    }
    out
}

/// The figures as a text table (one line each).
pub fn table(figures: &[Figure]) -> String {
    let pct = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{:.1}%", v * 100.0));
    let mut lines = vec![format!(
        "{:<13} {:<10} {:<8} {:<26} {:>6} {:>9} {:>9}",
        "probe", "data", "mode", "measure", "n", "original", "repaired"
    )];
    for f in figures {
        lines.push(format!(
            "{:<13} {:<10} {:<8} {:<26} {:>6} {:>9} {:>9}",
            f.probe.name(),
            f.source.name(),
            f.mode.name(),
            f.measure,
            f.n,
            pct(f.original),
            pct(f.repaired)
        ));
    }
    lines.join("\n")
}
