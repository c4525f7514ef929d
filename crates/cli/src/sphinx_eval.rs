//! `phonebench sphinx-eval`: score SPHINX trajectory directories with SPHINX evaluator files.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use phonebench_eval::{
    EvalContext, Semantics, criteria_from_sphinx_json, evaluate, load_groundtruth, stop_after,
};

/// Arguments of `sphinx-eval`.
#[derive(clap::Args, Debug, Clone)]
pub struct SphinxEvalArgs {
    /// Trajectory directories (`groundtruth/<task>/<app>/`, or an agent trace directory): `{i}.xml`,
    /// `activities.json`, and `meta.json` (reference) or `actions.json` (agent).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The evaluator file (default: `evaluator.json` in each directory).
    #[arg(long)]
    pub evaluator: Option<PathBuf>,
    /// `upstream`: SPHINX's first-match searches exactly; `fixed`: any match counts.
    #[arg(long, value_enum, default_value_t = SemanticsArg::Upstream)]
    pub semantics: SemanticsArg,
    /// Keep only the first N actions, then STOP on screen N (an agent that stopped early).
    #[arg(long, value_name = "N")]
    pub stop_after: Option<usize>,
}

/// `--semantics`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SemanticsArg {
    /// Upstream's first-match-then-check.
    Upstream,
    /// Any screen, node or action satisfying find and check rules together.
    Fixed,
}

impl From<SemanticsArg> for Semantics {
    fn from(arg: SemanticsArg) -> Semantics {
        match arg {
            SemanticsArg::Upstream => Semantics::Upstream,
            SemanticsArg::Fixed => Semantics::AnyMatch,
        }
    }
}

/// Prints one JSON line per directory, `{"task","app","success","acp","per_evaluator"}`. A
/// directory that cannot be scored gets a message on stderr and makes the exit status 1; the
/// others are still scored. Returns the exit status.
pub fn run(args: &SphinxEvalArgs) -> Result<i32> {
    let ctx = EvalContext { semantics: args.semantics.into(), ..EvalContext::default() };
    let mut status = 0;
    for dir in &args.dirs {
        match score(dir, args, &ctx) {
            Ok(line) => out!("{line}")?,
            Err(e) => {
                eprintln!("{}: {}", dir.display(), crate::error_text(&e));
                status = 1;
            }
        }
    }
    Ok(status)
}

fn score(dir: &Path, args: &SphinxEvalArgs, ctx: &EvalContext) -> Result<serde_json::Value> {
    if !dir.is_dir() {
        bail!("not a directory");
    }
    let evaluator = args.evaluator.clone().unwrap_or_else(|| dir.join("evaluator.json"));
    let text = std::fs::read_to_string(&evaluator)
        .with_context(|| format!("cannot read {}", evaluator.display()))?;
    let criteria = criteria_from_sphinx_json(&text).with_context(|| format!("in {}", evaluator.display()))?;
    let mut trajectory = load_groundtruth(dir)?;
    if let Some(k) = args.stop_after {
        trajectory = stop_after(&trajectory, k);
    }
    let verdict = evaluate(&criteria, &trajectory, ctx);
    // Directories are `<task>/<app>`: the last two path components name the pair.
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut names = absolute.components().rev().map(|c| c.as_os_str().to_string_lossy().into_owned());
    let app = names.next().unwrap_or_default();
    let task = names.next().unwrap_or_default();
    let per_evaluator: Vec<bool> = verdict.criteria.iter().map(|c| c.passed).collect();
    Ok(serde_json::json!({
        "task": task,
        "app": app,
        "success": verdict.success,
        "acp": verdict.acp,
        "per_evaluator": per_evaluator,
    }))
}
