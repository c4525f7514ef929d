//! `phonebench task-report`: the task-quality report of a suite.

use std::sync::Arc;

use anyhow::{Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use phonebench_runner::quality::{QualityOptions, similar_goals, task_quality};

use crate::suite::{ValidateArgs, load, runtime};

/// `phonebench task-report`.
#[derive(clap::Args, Debug)]
pub struct TaskReportArgs {
    /// The suite, the tasks, the seed of the instance measured, MCP servers: as `validate`.
    #[command(flatten)]
    select: ValidateArgs,
    /// Random runs per task.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
    random_runs: u64,
    /// Flag goal pairs at least this alike (Jaccard similarity of their words, numbers as one
    /// word; 1 = the same goal up to numbers, case and punctuation).
    #[arg(long, default_value_t = 0.8)]
    similar: f64,
    /// One JSON line per task, then one per similar pair, then a summary line.
    #[arg(long)]
    json: bool,
}

/// Measures every selected task and prints the report.
pub fn run(args: &TaskReportArgs) -> Result<()> {
    if !(0.0..=1.0).contains(&args.similar) {
        bail!("--similar must be between 0 and 1");
    }
    let select = &args.select;
    let (suite, catalog) = load(&select.suite)?;
    let specs = suite.select(select.tasks.as_deref());
    if specs.is_empty() {
        bail!("no task matches `{}`", select.tasks.as_deref().unwrap_or("*"));
    }
    let options = Arc::new(QualityOptions {
        seed: select.seed.unwrap_or(suite.manifest.seed),
        random_seeds: (0..args.random_runs).collect(),
        mcp: Arc::new(select.mcp.config()?),
        disturbances: select.disturbances,
        ..QualityOptions::default()
    });
    let bar = if args.json { ProgressBar::hidden() } else { ProgressBar::new(specs.len() as u64) };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} tasks")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let report = runtime()?.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        let permits = phonebench_runner::cpu_permits();
        for (i, spec) in specs.iter().enumerate() {
            let (catalog, spec, options, permits) =
                (catalog.clone(), (*spec).clone(), options.clone(), permits.clone());
            set.spawn(async move {
                let _permit = permits.acquire_owned().await;
                (i, task_quality(&catalog, &spec, &options).await)
            });
        }
        let mut out = Vec::new();
        while let Some(joined) = set.join_next().await {
            out.push(joined?);
            bar.inc(1);
        }
        out.sort_by_key(|(i, _)| *i);
        anyhow::Ok(out.into_iter().map(|(_, q)| q).collect::<Vec<_>>())
    })?;
    bar.finish_and_clear();
    let goals: Vec<(String, String)> = report.iter().map(|q| (q.task.clone(), q.goal.clone())).collect();
    let similar = similar_goals(&goals, args.similar);
    let with_problems = report.iter().filter(|q| q.problem.is_some()).count();
    let solved_by_random = report.iter().filter(|q| q.random_successes > 0).count();
    let lengths: Vec<u32> = report.iter().filter_map(|q| q.reference_steps).collect();
    let mean = lengths.iter().map(|&n| f64::from(n)).sum::<f64>() / lengths.len().max(1) as f64;
    if args.json {
        for q in &report {
            out!("{}", serde_json::to_string(q)?)?;
        }
        for s in &similar {
            let mut line = serde_json::to_value(s)?;
            line["kind"] = "similar".into();
            out!("{line}")?;
        }
        out!(
            "{}",
            serde_json::json!({
                "kind": "total", "tasks": report.len(), "problems": with_problems,
                "solved_by_random": solved_by_random, "similar_pairs": similar.len(),
                "mean_reference_steps": mean, "long_tasks": lengths.iter().filter(|&&n| n >= 20).count(),
            })
        )?;
        return Ok(());
    }
    out!(
        "{:<34} {:<11} {:>4} {:>4} {:>5} {:>9} {:>5} {:>7}  tags",
        "task",
        "category",
        "apps",
        "crit",
        "ref",
        "random ok",
        "paths",
        "screens"
    )?;
    for q in &report {
        let tags: Vec<String> =
            q.tags.iter().map(|(axis, values)| format!("{axis}={}", values.join("+"))).collect();
        out!(
            "{:<34} {:<11} {:>4} {:>4} {:>5} {:>9} {:>5} {:>7}  {}",
            q.task,
            q.category,
            q.apps.len(),
            q.criteria,
            q.reference_steps.map_or("-".to_string(), |n| n.to_string()),
            format!("{}/{}", q.random_successes, q.random_runs),
            q.random_paths,
            q.random_screens,
            tags.join(" ")
        )?;
        if let Some(problem) = &q.problem {
            out!("    problem: {problem}")?;
        }
    }
    out!("")?;
    if similar.is_empty() {
        out!("no goals at least {:.2} alike", args.similar)?;
    } else {
        out!("goals at least {:.2} alike (same up to numbers at 1.00):", args.similar)?;
        for s in &similar {
            out!("  {:.2}  {}  ~  {}", s.similarity, s.a, s.b)?;
        }
    }
    out!(
        "{} tasks: mean reference {mean:.1} steps, {} of 20+ steps; {solved_by_random} solved by random play; {with_problems} with problems; {} similar pairs",
        report.len(),
        lengths.iter().filter(|&&n| n >= 20).count(),
        similar.len()
    )?;
    Ok(())
}
