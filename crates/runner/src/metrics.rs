//! Metrics over episode results (BRIEF §7): pure functions, no I/O.
//!
//! Every figure is computed over the *scored* episodes of a group: those without an
//! `infrastructure_error`. Episodes that broke for infrastructure reasons (model server down,
//! harness crash) are only counted, in [`Metrics::infrastructure`], never as failures, because
//! they say nothing about the agent.
//!
//! Definitions (per group of scored episodes):
//! - **SR**: share of episodes with `success`.
//! - **ACP** (SPHINX): mean of each episode's `acp` (share of the top-level criteria that are
//!   not guards that were met; guards gate success only).
//! - **SPL**: mean of `success × reference_steps / max(steps, reference_steps)`; an agent that
//!   needs more turns than the reference is credited the fraction, one that needs fewer gets 1.
//!   When both are 0 (no reference recorded and no turn taken) a success counts 1: nothing was
//!   wasted, and 0/0 must not leak a NaN.
//! - **avg steps / queries / MCP calls**: means of `steps`, `queries` (`ask_user`), `mcp_calls`
//!   over every scored episode of the group (the per-category rows give MobileWorld's "queries
//!   in UI tasks" and "MCP calls in MCP tasks").
//! - **UIQ** (MobileWorld): `Σ_{i ∈ interaction} q_i / (|interaction| + |triggered|)` with
//!   `q_i = success_i / queries_i` if `queries_i > 0`, else 0. Interaction episodes are those of
//!   category [`INTERACTION_CATEGORY`]; *triggered* are the other episodes that asked at least
//!   once, so unnecessary questions lower the score.
//! - **format-error rate** (SPHINX §11): `Σ format_errors / Σ steps`. Our `steps` count the turns
//!   that did not parse, so this is SPHINX's "errors / (length + erroring traces)" per turn.
//! - **repetition rate** (SPHINX §11): `Σ repetitions / Σ max(steps − 1, 0)`: the first action of
//!   an episode cannot repeat an earlier one.
//! - **tokens**: sums of prompt and completion tokens of the scored episodes.
//! - **SR (original)** (SPHINX): for agents that repair unparseable outputs, the SR of the
//!   episodes as they would have ended at the first output that needed repair; `SR` is then
//!   SPHINX's "repaired" figure. `None` when no episode of the group carries it.
//! - **judge SR** (UINavBench's model judge): share of the judged episodes (those whose judges
//!   all gave a verdict) that every judge passed. Never part of SR.
//! - **model calls / cost**: calls made and the price of their tokens (episodes without a price
//!   leave the cost undefined).
//!
//! Edge cases: a figure whose denominator is zero (no scored episodes, no turns, no interaction
//! episode and no question) is `None`, never NaN, so tables print "-" instead of a number that
//! poisons later arithmetic.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;

use crate::results::EpisodeResult;

/// One metric's name and definition, for tables' legends and the report's glossary page
/// (`docs/metrics.md` says the same, tested).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Term {
    /// The column header (`SR`, `ACP`, ...).
    pub name: &'static str,
    /// What it is called in full.
    pub title: &'static str,
    /// How it is computed and where it comes from.
    pub definition: &'static str,
}

/// Every figure of the summary tables.
pub const GLOSSARY: &[Term] = &[
    Term {
        name: "scored",
        title: "scored episodes",
        definition: "Episodes whose result counts: every episode of the group except infrastructure failures.",
    },
    Term {
        name: "SR",
        title: "success rate",
        definition: "Share of scored episodes in which every top-level criterion of the task held, guards included. Episodes that failed for infrastructure reasons are not scored.",
    },
    Term {
        name: "ACP",
        title: "average completion proportion (SPHINX)",
        definition: "Mean over scored episodes of the share of top-level criteria that held, guards left out: partial progress counts. Guards (do-no-harm checks, guard = true) gate success but count neither way here, so doing nothing earns 0.",
    },
    Term {
        name: "SPL",
        title: "success weighted by path length (UINavBench)",
        definition: "Mean over scored episodes of success x reference steps / max(steps taken, reference steps).",
    },
    Term {
        name: "steps",
        title: "average steps",
        definition: "Mean number of agent turns per scored episode (a final answer or finish counts as a turn).",
    },
    Term {
        name: "queries",
        title: "average ask_user queries (MobileWorld)",
        definition: "Mean number of ask_user questions per scored episode.",
    },
    Term {
        name: "UIQ",
        title: "user-interaction quality (MobileWorld)",
        definition: "Sum over interaction-task episodes of success / queries (0 without queries), divided by the number of interaction episodes plus other episodes that asked at least once: needless questions lower it.",
    },
    Term {
        name: "MCP",
        title: "average MCP calls (MobileWorld)",
        definition: "Mean number of MCP tool calls per scored episode.",
    },
    Term {
        name: "MCP-err",
        title: "MCP call error rate",
        definition: "MCP calls that did not succeed (the tool reported an error, the call was refused for an unknown tool or bad arguments, or the server failed), divided by all MCP calls.",
    },
    Term {
        name: "fmt-err",
        title: "format-error rate (SPHINX)",
        definition: "Turns whose output did not parse as the agent wrote it, divided by all turns; outputs a repair call fixed count as errors.",
    },
    Term {
        name: "repeat",
        title: "repetition rate (SPHINX)",
        definition: "Actions identical to an earlier action of the same episode (same action, same point), divided by all actions after the first.",
    },
    Term {
        name: "SR-orig",
        title: "original success rate (SPHINX, agents with output repair)",
        definition: "SR of the episodes as they would have ended without repair: at the first output that did not parse, as SPHINX ends an episode. SR is then SPHINX's repaired figure.",
    },
    Term {
        name: "judge",
        title: "model-judge success rate (UINavBench)",
        definition: "Share of judged episodes that the model judge passed. Reported apart; never part of SR.",
    },
    Term {
        name: "infra",
        title: "infrastructure failures",
        definition: "Episodes that could not be scored because the harness or a model server failed; they are retried by --resume and never count as the agent's failures.",
    },
    Term {
        name: "calls",
        title: "model calls",
        definition: "Model calls made: agent actions, repairs, summaries, grounding, reflections, judges and simulated users, cached ones included.",
    },
    Term {
        name: "cost",
        title: "price of the tokens",
        definition: "USD for the tokens of all model calls at the price table's list prices (cached calls included); undefined when a model has no price.",
    },
    Term {
        name: "tokens",
        title: "tokens",
        definition: "Prompt and completion tokens as the servers reported them, including calls answered from the response cache (which cost nothing new).",
    },
];

/// The category whose episodes are interaction tasks for UIQ (`Category::AskUser`'s name).
pub const INTERACTION_CATEGORY: &str = "ask_user";

/// The figures of one group of episodes. Ratios are fractions in `0..=1` (not percentages).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Metrics {
    /// Episodes in the group, including infrastructure failures.
    pub episodes: usize,
    /// Episodes with an infrastructure error: excluded from every other figure.
    pub infrastructure: usize,
    /// Episodes the figures are computed over (`episodes − infrastructure`).
    pub scored: usize,
    /// Scored episodes that succeeded.
    pub successes: usize,
    /// Success rate.
    pub sr: Option<f64>,
    /// Average completion progress (mean share of top-level criteria met).
    pub acp: Option<f64>,
    /// Success weighted by reference length over `max(taken, reference)`.
    pub spl: Option<f64>,
    /// Mean agent turns.
    pub avg_steps: Option<f64>,
    /// Mean `ask_user` questions.
    pub avg_queries: Option<f64>,
    /// MobileWorld's user-interaction quality.
    pub uiq: Option<f64>,
    /// Mean MCP calls.
    pub avg_mcp_calls: Option<f64>,
    /// MCP calls that did not succeed, per MCP call.
    pub mcp_error_rate: Option<f64>,
    /// Turns whose output did not parse, per turn.
    pub format_error_rate: Option<f64>,
    /// Actions repeating an earlier action, per action after the first.
    pub repetition_rate: Option<f64>,
    /// Prompt tokens, summed.
    pub prompt_tokens: u64,
    /// Completion tokens, summed.
    pub completion_tokens: u64,
    /// SR without output repair, over the episodes that carry it.
    pub sr_original: Option<f64>,
    /// ACP without output repair, over the episodes that carry it.
    pub acp_original: Option<f64>,
    /// Episodes with a model-judge verdict.
    pub judged: usize,
    /// Share of judged episodes the judges passed.
    pub judge_sr: Option<f64>,
    /// Model calls, summed.
    pub model_calls: u64,
    /// Price of the tokens in USD, when every scored episode with calls has one.
    pub cost_usd: Option<f64>,
}

/// A named group's figures: a category, or a tag value written `axis=value`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// The category name or `axis=value`.
    pub name: String,
    /// Its figures.
    pub metrics: Metrics,
}

/// The figures of a run: overall, per category and per tag value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Every episode.
    pub overall: Metrics,
    /// One row per category, sorted by name.
    pub categories: Vec<Group>,
    /// One row per tag value, sorted by axis then value; an episode counts once in every value
    /// it carries.
    pub tags: Vec<Group>,
}

/// `num / den`, or `None` when there is nothing to divide by.
fn ratio(num: f64, den: f64) -> Option<f64> {
    if den > 0.0 { Some(num / den) } else { None }
}

/// One episode's SPL term.
fn spl_term(e: &EpisodeResult) -> f64 {
    if !e.success {
        return 0.0;
    }
    let longest = e.steps.max(e.reference_steps);
    if longest == 0 { 1.0 } else { f64::from(e.reference_steps) / f64::from(longest) }
}

/// SPL against the oracle (`phonebench solve`): SPL with the oracle's solution length in place of
/// the reference's, over the scored episodes of tasks the oracle solved (and a normal run
/// re-verified). The ordinary SPL is unchanged; this is a separate figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OracleSpl {
    /// Mean of `success × oracle length / max(steps, oracle length)`; `None` without episodes.
    pub spl: Option<f64>,
    /// Scored episodes of tasks with an oracle length (the figure's denominator).
    pub episodes: usize,
    /// Scored episodes of tasks without one (left out).
    pub without_oracle: usize,
}

/// Oracle lengths by task id from `phonebench solve --json` output: every line with `task`,
/// `solved: true`, `verified: true` and `length`; other lines (the total, unsolved tasks) are
/// skipped. `Err` names the first line that is not JSON.
pub fn read_oracle_lengths(text: &str) -> Result<BTreeMap<String, u32>, String> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("line {}: not JSON: {e}", i + 1))?;
        let solved = v.get("solved").and_then(serde_json::Value::as_bool) == Some(true);
        let verified = v.get("verified").and_then(serde_json::Value::as_bool) == Some(true);
        if let (true, true, Some(task), Some(length)) = (
            solved,
            verified,
            v.get("task").and_then(serde_json::Value::as_str),
            v.get("length").and_then(serde_json::Value::as_u64),
        ) {
            out.insert(task.to_string(), u32::try_from(length).unwrap_or(u32::MAX));
        }
    }
    Ok(out)
}

/// [`OracleSpl`] of `episodes` with the oracle's lengths by task id.
pub fn oracle_spl<'a>(
    episodes: impl IntoIterator<Item = &'a EpisodeResult>,
    lengths: &BTreeMap<String, u32>,
) -> OracleSpl {
    let (mut sum, mut n, mut without) = (0.0, 0usize, 0usize);
    for e in episodes.into_iter().filter(|e| e.infrastructure_error.is_none()) {
        let Some(&oracle) = lengths.get(&e.task_id) else {
            without += 1;
            continue;
        };
        n += 1;
        if e.success {
            let longest = e.steps.max(oracle);
            sum += if longest == 0 { 1.0 } else { f64::from(oracle) / f64::from(longest) };
        }
    }
    OracleSpl { spl: ratio(sum, n as f64), episodes: n, without_oracle: without }
}

/// The figures of a group of episodes (infrastructure failures are counted, not scored).
pub fn metrics<'a>(episodes: impl IntoIterator<Item = &'a EpisodeResult>) -> Metrics {
    let mut m = Metrics::default();
    let (mut acp, mut spl, mut steps, mut queries, mut mcp, mut mcp_errors) =
        (0.0, 0.0, 0u64, 0u64, 0u64, 0u64);
    let (mut format_errors, mut repetitions, mut repeatable) = (0u64, 0u64, 0u64);
    let (mut uiq_sum, mut uiq_den) = (0.0, 0u64);
    let (mut original, mut original_success, mut original_acp) = (0u64, 0u64, 0.0);
    let mut judge_passed = 0u64;
    let (mut cost, mut cost_known) = (0.0, true);
    for e in episodes {
        m.episodes += 1;
        if e.infrastructure_error.is_some() {
            m.infrastructure += 1;
            continue;
        }
        m.scored += 1;
        m.successes += usize::from(e.success);
        acp += e.acp;
        spl += spl_term(e);
        steps += u64::from(e.steps);
        queries += u64::from(e.queries);
        mcp += u64::from(e.mcp_calls);
        mcp_errors += u64::from(e.mcp_errors);
        format_errors += u64::from(e.format_errors);
        repetitions += u64::from(e.repetitions);
        repeatable += u64::from(e.steps.saturating_sub(1));
        if e.category == INTERACTION_CATEGORY {
            uiq_den += 1;
            if e.success && e.queries > 0 {
                uiq_sum += 1.0 / f64::from(e.queries);
            }
        } else if e.queries > 0 {
            uiq_den += 1;
        }
        m.prompt_tokens += e.usage.prompt_tokens;
        m.completion_tokens += e.usage.completion_tokens;
        if let Some(o) = &e.original {
            original += 1;
            original_success += u64::from(o.success);
            original_acp += o.acp;
        }
        if let Some(passed) = e.judge_passed() {
            m.judged += 1;
            judge_passed += u64::from(passed);
        }
        m.model_calls += u64::from(e.model_calls);
        match e.cost_usd {
            Some(c) => cost += c,
            None if e.model_calls > 0 => cost_known = false,
            None => {}
        }
    }
    m.sr_original = ratio(original_success as f64, original as f64);
    m.acp_original = ratio(original_acp, original as f64);
    m.judge_sr = ratio(judge_passed as f64, m.judged as f64);
    m.cost_usd = (cost_known && m.model_calls > 0).then_some(cost);
    let n = m.scored as f64;
    m.sr = ratio(m.successes as f64, n);
    m.acp = ratio(acp, n);
    m.spl = ratio(spl, n);
    m.avg_steps = ratio(steps as f64, n);
    m.avg_queries = ratio(queries as f64, n);
    m.avg_mcp_calls = ratio(mcp as f64, n);
    m.mcp_error_rate = ratio(mcp_errors as f64, mcp as f64);
    m.uiq = ratio(uiq_sum, uiq_den as f64);
    m.format_error_rate = ratio(format_errors as f64, steps as f64);
    m.repetition_rate = ratio(repetitions as f64, repeatable as f64);
    m
}

/// The figures overall, per category and per tag value.
pub fn summarize(episodes: &[EpisodeResult]) -> Summary {
    let mut categories: BTreeMap<&str, Vec<&EpisodeResult>> = BTreeMap::new();
    let mut tags: BTreeMap<(&str, &str), Vec<&EpisodeResult>> = BTreeMap::new();
    for e in episodes {
        categories.entry(e.category.as_str()).or_default().push(e);
        // A set, so a value listed twice on one axis still counts the episode once.
        let values: BTreeSet<(&str, &str)> = e
            .tags
            .iter()
            .flat_map(|(axis, values)| values.iter().map(move |v| (axis.as_str(), v.as_str())))
            .collect();
        for key in values {
            tags.entry(key).or_default().push(e);
        }
    }
    Summary {
        overall: metrics(episodes),
        categories: categories
            .into_iter()
            .map(|(name, group)| Group { name: name.to_string(), metrics: metrics(group) })
            .collect(),
        tags: tags
            .into_iter()
            .map(|((axis, value), group)| Group { name: format!("{axis}={value}"), metrics: metrics(group) })
            .collect(),
    }
}

/// Success rates with and without disturbances, side by side: what a run with several
/// `--disturbances` levels measures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Robustness {
    /// The levels played, mildest first (`none` first when played).
    pub levels: Vec<String>,
    /// Overall, then one row per category.
    pub rows: Vec<RobustnessRow>,
}

/// One group's success rate at each level, and each level's difference from the first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RobustnessRow {
    /// `overall` or the category.
    pub name: String,
    /// Scored episodes at each level (as `levels`).
    pub scored: Vec<usize>,
    /// Success rate at each level.
    pub sr: Vec<Option<f64>>,
    /// SR at each level minus SR at the first (the robustness delta), for every level after it.
    pub delta: Vec<Option<f64>>,
}

/// The robustness table of a run's episodes, or `None` when they were all played at one level.
pub fn robustness(episodes: &[EpisodeResult]) -> Option<Robustness> {
    let levels: Vec<phonebench_phone::Disturbances> = phonebench_phone::Disturbances::ALL
        .into_iter()
        .filter(|l| episodes.iter().any(|e| e.disturbances == *l))
        .collect();
    if levels.len() < 2 {
        return None;
    }
    let mut categories: Vec<&str> = episodes.iter().map(|e| e.category.as_str()).collect();
    categories.sort_unstable();
    categories.dedup();
    let row = |name: &str, keep: &dyn Fn(&EpisodeResult) -> bool| {
        let at: Vec<Metrics> = levels
            .iter()
            .map(|l| metrics(episodes.iter().filter(|e| e.disturbances == *l && keep(e))))
            .collect();
        let sr: Vec<Option<f64>> = at.iter().map(|m| m.sr).collect();
        let delta = sr[1..].iter().map(|s| Some(s.zip(sr[0])?).map(|(a, b)| a - b)).collect();
        RobustnessRow { name: name.to_string(), scored: at.iter().map(|m| m.scored).collect(), sr, delta }
    };
    let mut rows = vec![row("overall", &|_| true)];
    for c in categories {
        rows.push(row(c, &|e| e.category == c));
    }
    Some(Robustness { levels: levels.iter().map(|l| l.to_string()).collect(), rows })
}

/// The robustness table as text: SR per level, then the deltas (`heavy − none`).
pub fn format_robustness(r: &Robustness) -> String {
    let mut headers = vec!["group".to_string()];
    headers.extend(r.levels.iter().map(|l| format!("SR {l}")));
    headers.extend(r.levels[1..].iter().map(|l| format!("Δ {l}−{}", r.levels[0])));
    let mut lines = vec![headers.iter().map(|h| format!("{h:>14}")).collect::<String>()];
    for row in &r.rows {
        let mut cells = vec![row.name.clone()];
        cells.extend(row.sr.iter().map(|s| percent(*s)));
        cells.extend(
            row.delta.iter().map(|d| d.map_or_else(|| "-".to_string(), |d| format!("{:+.1}", d * 100.0))),
        );
        lines.push(cells.iter().map(|c| format!("{c:>14}")).collect());
    }
    lines.join("\n")
}

/// A ratio as a percentage with one decimal, or `-` when undefined.
pub fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{:.1}%", v * 100.0))
}

/// A number with `decimals` decimals, or `-` when undefined.
pub fn number(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.decimals$}"))
}

const HEADERS: [&str; 13] = [
    "group", "scored", "infra", "SR", "ACP", "SPL", "steps", "queries", "UIQ", "MCP", "MCP-err", "fmt-err",
    "repeat",
];

/// Columns shown only when some episode has them.
#[derive(Debug, Clone, Copy)]
struct Optional {
    original: bool,
    judge: bool,
}

fn table_cells(name: String, m: &Metrics, optional: Optional) -> Vec<String> {
    let mut cells = vec![
        name,
        m.scored.to_string(),
        m.infrastructure.to_string(),
        percent(m.sr),
        percent(m.acp),
        percent(m.spl),
        number(m.avg_steps, 1),
        number(m.avg_queries, 2),
        number(m.uiq, 3),
        number(m.avg_mcp_calls, 2),
        percent(m.mcp_error_rate),
        percent(m.format_error_rate),
        percent(m.repetition_rate),
    ];
    if optional.original {
        cells.push(percent(m.sr_original));
    }
    if optional.judge {
        cells.push(percent(m.judge_sr));
    }
    cells
}

/// One line of the terminal table.
enum Line {
    /// A row of cells, aligned with the others.
    Cells(Vec<String>),
    /// A section title on its own.
    Heading(&'static str),
    /// A blank line between sections.
    Blank,
}

/// An aligned plain-text table for the terminal: the overall row, then one per category, then
/// one per tag value, then the token totals. Names are left-aligned, figures right-aligned.
pub fn format_table(summary: &Summary) -> String {
    let o = &summary.overall;
    let optional = Optional { original: o.sr_original.is_some(), judge: o.judged > 0 };
    let mut headers: Vec<String> = HEADERS.iter().map(|h| h.to_string()).collect();
    if optional.original {
        headers.push("SR-orig".into());
    }
    if optional.judge {
        headers.push("judge".into());
    }
    let columns = headers.len();
    let mut lines = vec![Line::Cells(headers)];
    lines.push(Line::Cells(table_cells("overall".to_string(), o, optional)));
    for (title, groups) in [("category", &summary.categories), ("tag", &summary.tags)] {
        if groups.is_empty() {
            continue;
        }
        lines.push(Line::Blank);
        lines.push(Line::Heading(title));
        for g in groups {
            lines.push(Line::Cells(table_cells(format!("  {}", g.name), &g.metrics, optional)));
        }
    }
    let mut widths = vec![0usize; columns];
    for line in &lines {
        if let Line::Cells(cells) = line {
            for (w, cell) in widths.iter_mut().zip(cells) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let mut out = String::new();
    for line in &lines {
        match line {
            Line::Blank => out.push('\n'),
            Line::Heading(title) => {
                out.push_str(title);
                out.push('\n');
            }
            Line::Cells(cells) => {
                let mut text = String::new();
                for (i, (cell, &w)) in cells.iter().zip(&widths).enumerate() {
                    // Padding by character count, not bytes: names may hold any Unicode.
                    let pad = " ".repeat(w - cell.chars().count());
                    if i == 0 {
                        text.push_str(cell);
                        text.push_str(&pad);
                    } else {
                        text.push_str("  ");
                        text.push_str(&pad);
                        text.push_str(cell);
                    }
                }
                out.push_str(text.trim_end());
                out.push('\n');
            }
        }
    }
    let _ = write!(out, "\ntokens: {} prompt, {} completion", o.prompt_tokens, o.completion_tokens);
    if o.model_calls > 0 {
        let _ = write!(out, " in {} model calls", o.model_calls);
        if let Some(cost) = o.cost_usd {
            let _ = write!(out, ", ${cost:.4}");
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oracle_spl_uses_the_oracle_length_and_skips_tasks_without_one() {
        let lengths = read_oracle_lengths(concat!(
            r#"{"kind":"task","task":"a","solved":true,"verified":true,"length":3}"#,
            "\n",
            r#"{"kind":"task","task":"b","solved":false,"verified":false,"length":0}"#,
            "\n",
            r#"{"kind":"total","tasks":2}"#,
        ))
        .expect("JSON lines");
        assert_eq!(lengths.len(), 1);
        let mut a = EpisodeResult::default();
        (a.task_id, a.success, a.steps, a.reference_steps) = ("a".into(), true, 6, 6);
        let mut b = EpisodeResult::default();
        (b.task_id, b.success, b.steps) = ("b".into(), true, 2);
        let o = oracle_spl([&a, &b], &lengths);
        assert_eq!((o.episodes, o.without_oracle), (1, 1));
        close(o.spl, 0.5);
        close(metrics([&a]).spl, 1.0);
        assert!(read_oracle_lengths("not json").is_err());
    }
    use crate::results::Usage;

    fn ep(key: &str, category: &str) -> EpisodeResult {
        EpisodeResult {
            key: key.to_string(),
            task_id: key.to_string(),
            category: category.to_string(),
            agent: "test".to_string(),
            end: "finished".to_string(),
            ..EpisodeResult::default()
        }
    }

    fn close(actual: Option<f64>, expected: f64) {
        let a = actual.unwrap_or_else(|| panic!("expected {expected}, got None"));
        assert!((a - expected).abs() < 1e-12, "expected {expected}, got {a}");
    }

    #[test]
    fn empty_set_is_none_not_nan() {
        let m = metrics(&[]);
        assert_eq!(m, Metrics::default());
        assert_eq!(
            (m.sr, m.acp, m.spl, m.avg_steps, m.uiq, m.format_error_rate, m.repetition_rate),
            (None, None, None, None, None, None, None)
        );
        let s = summarize(&[]);
        assert!(s.categories.is_empty() && s.tags.is_empty());
    }

    #[test]
    fn success_rate_counts_successes() {
        let mut a = ep("a", "completion");
        a.success = true;
        let b = ep("b", "completion");
        let c = ep("c", "completion");
        let m = metrics(&[a, b, c]);
        assert_eq!((m.scored, m.successes), (3, 1));
        close(m.sr, 1.0 / 3.0);
    }

    #[test]
    fn spl_credits_detours_by_reference_over_taken() {
        // Reference 4, taken 6: 4/6. Reference 5, taken 3 (shorter than reference): 1.
        // Failed with reference 4 taken 4: 0. Mean: (4/6 + 1 + 0) / 3.
        let mut detour = ep("detour", "completion");
        (detour.success, detour.reference_steps, detour.steps) = (true, 4, 6);
        let mut shortcut = ep("shortcut", "completion");
        (shortcut.success, shortcut.reference_steps, shortcut.steps) = (true, 5, 3);
        let mut failed = ep("failed", "completion");
        (failed.success, failed.reference_steps, failed.steps) = (false, 4, 4);
        close(metrics([&detour]).spl, 4.0 / 6.0);
        close(metrics([&shortcut]).spl, 1.0);
        close(metrics([&failed]).spl, 0.0);
        close(metrics([&detour, &shortcut, &failed]).spl, (4.0 / 6.0 + 1.0) / 3.0);
    }

    #[test]
    fn spl_with_no_reference_and_no_steps_is_not_nan() {
        let mut e = ep("e", "completion");
        e.success = true;
        close(metrics([&e]).spl, 1.0);
        e.steps = 2;
        close(metrics([&e]).spl, 0.0);
    }

    #[test]
    fn acp_is_the_mean_of_episode_acps() {
        let mut a = ep("a", "completion");
        a.acp = 0.5;
        let mut b = ep("b", "completion");
        b.acp = 1.0;
        let mut c = ep("c", "completion");
        c.acp = 0.0;
        let mut d = ep("d", "completion");
        d.acp = 2.0 / 3.0;
        close(metrics([&a, &b, &c, &d]).acp, (0.5 + 1.0 + 0.0 + 2.0 / 3.0) / 4.0);
    }

    #[test]
    fn uiq_divides_by_interaction_tasks_plus_unnecessary_askers() {
        // Interaction: success with 2 questions (q = 1/2), success with 1 (q = 1), failure with 3
        // (q = 0), success without asking (q = 0: c_i = 0).
        let mut i1 = ep("i1", INTERACTION_CATEGORY);
        (i1.success, i1.queries) = (true, 2);
        let mut i2 = ep("i2", INTERACTION_CATEGORY);
        (i2.success, i2.queries) = (true, 1);
        let mut i3 = ep("i3", INTERACTION_CATEGORY);
        (i3.success, i3.queries) = (false, 3);
        let mut i4 = ep("i4", INTERACTION_CATEGORY);
        i4.success = true;
        // Non-interaction: one asked needlessly (in the denominator even though it succeeded),
        // one did not ask (not in the denominator).
        let mut asked = ep("asked", "completion");
        (asked.success, asked.queries) = (true, 4);
        let mut quiet = ep("quiet", "completion");
        quiet.success = true;
        let all = [i1, i2, i3, i4, asked, quiet];
        let m = metrics(&all);
        close(m.uiq, (0.5 + 1.0 + 0.0 + 0.0) / (4.0 + 1.0));
        // Queries are averaged over every scored episode: (2+1+3+0+4+0)/6.
        close(m.avg_queries, 10.0 / 6.0);
        // A group with no interaction episode and no question has no UIQ; one with only a
        // needless question scores 0.
        assert_eq!(metrics([&all[5]]).uiq, None);
        close(metrics([&all[4], &all[5]]).uiq, 0.0);
    }

    #[test]
    fn format_error_rate_is_per_turn() {
        // 2 + 0 + 1 unparsable turns over 5 + 3 + 2 turns.
        let mut a = ep("a", "completion");
        (a.steps, a.format_errors) = (5, 2);
        let mut b = ep("b", "completion");
        b.steps = 3;
        let mut c = ep("c", "completion");
        (c.steps, c.format_errors) = (2, 1);
        close(metrics([&a, &b, &c]).format_error_rate, 3.0 / 10.0);
    }

    #[test]
    fn repetition_rate_excludes_each_first_action() {
        // Repeatable actions: (5−1) + (3−1) + (1−1) + 0 (no turns, not −1) = 6; repetitions 2 + 1.
        let mut a = ep("a", "completion");
        (a.steps, a.repetitions) = (5, 2);
        let mut b = ep("b", "completion");
        (b.steps, b.repetitions) = (3, 1);
        let mut c = ep("c", "completion");
        c.steps = 1;
        let d = ep("d", "completion");
        close(metrics([&a, &b, &c, &d]).repetition_rate, 3.0 / 6.0);
        // Only single-turn episodes: nothing could repeat.
        assert_eq!(metrics([&c, &d]).repetition_rate, None);
        assert_eq!(metrics([&d]).format_error_rate, None);
    }

    #[test]
    fn averages_of_steps_and_mcp_calls_and_token_sums() {
        let mut a = ep("a", "mcp");
        (a.steps, a.mcp_calls, a.usage) = (4, 3, Usage { prompt_tokens: 100, completion_tokens: 10 });
        let mut b = ep("b", "mcp");
        (b.steps, b.mcp_calls, b.usage) = (7, 0, Usage { prompt_tokens: 50, completion_tokens: 5 });
        let m = metrics([&a, &b]);
        close(m.avg_steps, 5.5);
        close(m.avg_mcp_calls, 1.5);
        assert_eq!((m.prompt_tokens, m.completion_tokens), (150, 15));
    }

    #[test]
    fn infrastructure_episodes_are_counted_apart_and_excluded() {
        let mut ok = ep("ok", INTERACTION_CATEGORY);
        (ok.success, ok.acp, ok.steps, ok.reference_steps, ok.queries) = (true, 1.0, 4, 4, 1);
        ok.usage = Usage { prompt_tokens: 10, completion_tokens: 1 };
        // Broken: every field would change a figure if it were scored.
        let mut broken = ep("broken", INTERACTION_CATEGORY);
        broken.infrastructure_error = Some("model server refused the connection".to_string());
        (broken.steps, broken.queries, broken.format_errors, broken.repetitions, broken.mcp_calls) =
            (9, 5, 3, 2, 7);
        broken.usage = Usage { prompt_tokens: 1000, completion_tokens: 100 };
        let m = metrics([&ok, &broken]);
        assert_eq!((m.episodes, m.infrastructure, m.scored, m.successes), (2, 1, 1, 1));
        close(m.sr, 1.0);
        close(m.acp, 1.0);
        close(m.spl, 1.0);
        close(m.avg_steps, 4.0);
        close(m.avg_queries, 1.0);
        close(m.uiq, 1.0);
        close(m.avg_mcp_calls, 0.0);
        close(m.format_error_rate, 0.0);
        close(m.repetition_rate, 0.0);
        assert_eq!((m.prompt_tokens, m.completion_tokens), (10, 1));
        // A group of only broken episodes has no figures at all.
        let only = metrics([&broken]);
        assert_eq!((only.episodes, only.infrastructure, only.scored), (1, 1, 0));
        assert_eq!((only.sr, only.spl, only.uiq, only.format_error_rate), (None, None, None, None));
    }

    #[test]
    fn summary_groups_by_category_and_tag_value() {
        let tag = |e: &mut EpisodeResult, axis: &str, values: &[&str]| {
            e.tags.insert(axis.to_string(), values.iter().map(|v| v.to_string()).collect());
        };
        let mut a = ep("a", "retrieval");
        a.success = true;
        tag(&mut a, "apps", &["single"]);
        tag(&mut a, "perception", &["text", "icon", "text"]);
        let mut b = ep("b", "completion");
        tag(&mut b, "apps", &["multi"]);
        tag(&mut b, "perception", &["text"]);
        let mut c = ep("c", "completion");
        c.success = true;
        tag(&mut c, "apps", &["single"]);
        let s = summarize(&[a, b, c]);
        assert_eq!(s.overall.scored, 3);
        close(s.overall.sr, 2.0 / 3.0);
        let cats: Vec<(&str, usize, Option<f64>)> =
            s.categories.iter().map(|g| (g.name.as_str(), g.metrics.scored, g.metrics.sr)).collect();
        assert_eq!(cats, vec![("completion", 2, Some(0.5)), ("retrieval", 1, Some(1.0))]);
        let tags: Vec<(&str, usize, Option<f64>)> =
            s.tags.iter().map(|g| (g.name.as_str(), g.metrics.scored, g.metrics.sr)).collect();
        // Sorted by axis, then value; "text" listed twice on `a` counts it once.
        assert_eq!(
            tags,
            vec![
                ("apps=multi", 1, Some(0.0)),
                ("apps=single", 2, Some(1.0)),
                ("perception=icon", 1, Some(1.0)),
                ("perception=text", 2, Some(0.5)),
            ]
        );
    }

    #[test]
    fn table_is_aligned_with_percentages_and_sections() {
        let mut a = ep("a", "ask_user");
        (a.success, a.acp, a.steps, a.reference_steps, a.queries) = (true, 1.0, 6, 4, 2);
        a.tags.insert("apps".to_string(), vec!["single".to_string()]);
        let mut b = ep("b", "completion");
        b.infrastructure_error = Some("down".to_string());
        let table = format_table(&summarize(&[a, b]));
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[0],
            "group          scored  infra      SR     ACP    SPL  steps  queries    UIQ   MCP  MCP-err  fmt-err  repeat"
        );
        assert_eq!(
            lines[1],
            "overall             1      1  100.0%  100.0%  66.7%    6.0     2.00  0.500  0.00        -     0.0%    0.0%"
        );
        assert_eq!(lines[2], "");
        assert_eq!(lines[3], "category");
        assert!(lines[4].starts_with("  ask_user          1      0  100.0%"), "{}", lines[4]);
        // The all-infrastructure category prints "-" for every figure.
        assert_eq!(
            lines[5],
            "  completion        0      1       -       -      -      -        -      -     -        -        -       -"
        );
        assert_eq!(lines[7], "tag");
        assert!(lines[8].starts_with("  apps=single       1      0  100.0%"), "{}", lines[8]);
        assert!(table.ends_with("tokens: 0 prompt, 0 completion\n"));
        // Every figure row has the same width as the header.
        let width = lines[0].len();
        assert!([1, 4, 5, 8].iter().all(|&i| lines[i].len() == width), "{table}");
    }

    #[test]
    fn original_judge_calls_and_cost_are_summed_where_present() {
        use crate::results::{JudgeResult, Score};
        let judged = |passed| JudgeResult { name: "j".into(), passed, reason: String::new() };
        let mut a = ep("a", "completion");
        (a.success, a.acp) = (true, 1.0);
        a.original = Some(Score { success: false, acp: 0.5 });
        a.judge = vec![judged(Some(true))];
        (a.model_calls, a.cost_usd) = (3, Some(0.25));
        let mut b = ep("b", "completion");
        b.original = Some(Score { success: false, acp: 0.0 });
        b.judge = vec![judged(Some(true)), judged(Some(false))];
        (b.model_calls, b.cost_usd) = (2, Some(0.5));
        let mut c = ep("c", "completion");
        c.judge = vec![judged(None)];
        c.model_calls = 4; // no price
        let m = metrics(&[a.clone(), b.clone()]);
        close(m.sr_original, 0.0);
        close(m.acp_original, 0.25);
        assert_eq!(m.judged, 2);
        close(m.judge_sr, 0.5);
        assert_eq!(m.model_calls, 5);
        close(m.cost_usd, 0.75);
        // An unpriced episode with calls leaves the cost undefined; a verdict-less judge is not judged.
        let m = metrics(&[a, b, c]);
        assert_eq!((m.cost_usd, m.judged, m.model_calls), (None, 2, 9));
        let table = format_table(&summarize(&[ep("d", "x")]));
        assert!(
            !table.contains("SR-orig") && !table.contains("judge"),
            "optional columns appear only with data"
        );
    }

    #[test]
    fn the_docs_page_states_every_glossary_term() {
        let doc = include_str!("../../../docs/metrics.md");
        for t in GLOSSARY {
            let row = format!("| {} | {} | {} |", t.name, t.title, t.definition);
            assert!(doc.contains(&row), "docs/metrics.md lacks the row:\n{row}");
        }
        for h in HEADERS.iter().skip(1) {
            assert!(GLOSSARY.iter().any(|t| t.name == *h), "no glossary term for the column `{h}`");
        }
    }
}
