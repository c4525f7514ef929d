//! `phonebench solve`: the oracle (`phonebench-solve`) over a suite, every solution re-verified
//! by a normal run (`docs/solve.md`).

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use phonebench_runner::oracle::{OracleResult, solve_instances};
use phonebench_solve::Budget;

use crate::suite::{McpArgs, SuiteArgs, load, runtime};

/// `phonebench solve`.
#[derive(clap::Args, Debug, Clone)]
pub struct SolveArgs {
    #[command(flatten)]
    pub(crate) suite: SuiteArgs,
    /// Only tasks whose id matches this glob (`*`, `?`).
    #[arg(long)]
    pub(crate) tasks: Option<String>,
    /// Suite seed (default: the suite's); instance 0 is searched, as `run` plays it.
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// One JSON object per task, then a `{"kind":"total",…}` line.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) budget: BudgetArgs,
    /// Threads searching (default: every core).
    #[arg(long)]
    pub(crate) threads: Option<usize>,
    #[command(flatten)]
    pub(crate) mcp: McpArgs,
    /// Do not search: walk each task's reference and show, step by step, whether the search's
    /// action space offers the step, at what cost, and how many cheaper siblings it has (where
    /// the oracle falls off a known solution)
    #[arg(long)]
    pub(crate) explain: bool,
}

/// The search budget: counts, never time, so results are the same on every machine.
#[derive(clap::Args, Debug, Clone)]
pub struct BudgetArgs {
    /// States reached and judged per task at most.
    #[arg(long, default_value_t = Budget::default().max_expansions)]
    pub(crate) max_expansions: usize,
    /// After the first solution, at most this many more states looking for a shorter one.
    #[arg(long, default_value_t = Budget::default().improve_expansions)]
    pub(crate) improve_expansions: usize,
    /// The longest solution searched, in actions (default: the reference's length, or the
    /// task's step budget; never more than the step budget).
    #[arg(long)]
    pub(crate) max_depth: Option<u32>,
    /// Reach every state by resetting the phone and replaying its path, never from a snapshot
    /// of its parent (slower; the same states: for checking the snapshots).
    #[arg(long)]
    pub(crate) no_snapshots: bool,
}

impl BudgetArgs {
    /// The budget the flags describe.
    pub fn budget(&self) -> Budget {
        Budget {
            max_expansions: self.max_expansions,
            improve_expansions: self.improve_expansions,
            max_depth: self.max_depth,
            snapshots: !self.no_snapshots,
        }
    }
}

/// Solves the selected tasks (instance 0 each) and re-verifies every solution.
pub(crate) fn oracle_results(
    suite: &SuiteArgs,
    tasks: Option<&str>,
    seed: Option<u64>,
    budget: Budget,
    threads: Option<usize>,
    mcp: &McpArgs,
    progress: bool,
) -> Result<Vec<OracleResult>> {
    let (suite, catalog) = load(suite)?;
    let seed = seed.unwrap_or(suite.manifest.seed);
    let specs = suite.select(tasks);
    if specs.is_empty() {
        bail!("no task matches `{}`", tasks.unwrap_or("*"));
    }
    let mut instances = Vec::with_capacity(specs.len());
    for spec in &specs {
        instances.push(
            phonebench_runner::instantiate(&catalog, spec, seed, 0).map_err(|e| anyhow::anyhow!("{e}"))?,
        );
    }
    let threads =
        threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    let mcp = Arc::new(mcp.config()?);
    let bar = if progress { ProgressBar::new(specs.len() as u64) } else { ProgressBar::hidden() };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} tasks {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let tick = bar.clone();
    let results = runtime()?.block_on(solve_instances(
        &catalog,
        instances,
        budget,
        &mcp,
        threads,
        Arc::new(move |_, outcome| {
            tick.set_message(outcome.task.clone());
            tick.inc(1);
        }),
    ));
    bar.finish_and_clear();
    Ok(results)
}

/// Counts over a set of results.
#[derive(Debug, Default)]
struct Totals {
    tasks: usize,
    solved: usize,
    verified: usize,
    shorter_than_reference: usize,
    equal_to_reference: usize,
    longer_than_reference: usize,
    expansions: usize,
    steps_replayed: u64,
    budget: Budget,
}

fn totals(results: &[OracleResult], budget: Budget) -> Totals {
    let mut t = Totals { tasks: results.len(), budget, ..Totals::default() };
    for r in results {
        t.expansions += r.outcome.expansions;
        t.steps_replayed += r.outcome.steps_replayed;
        if !r.outcome.solved {
            continue;
        }
        t.solved += 1;
        t.verified += usize::from(r.verified);
        match r.reference_length {
            Some(n) if r.outcome.length < n => t.shorter_than_reference += 1,
            Some(n) if r.outcome.length == n => t.equal_to_reference += 1,
            Some(_) => t.longer_than_reference += 1,
            None => {}
        }
    }
    t
}

/// `phonebench solve`; `Ok(false)` when some task is unsolved.
pub fn solve(args: &SolveArgs) -> Result<bool> {
    if args.explain {
        return explain(args);
    }
    let started = Instant::now();
    let budget = args.budget.budget();
    let results = oracle_results(
        &args.suite,
        args.tasks.as_deref(),
        args.seed,
        budget,
        args.threads,
        &args.mcp,
        !args.json,
    )?;
    let t = totals(&results, budget);
    if args.json {
        for r in &results {
            let mut line = serde_json::to_value(r)?;
            if let Some(o) = line.as_object_mut() {
                o.shift_insert(0, "kind".into(), "task".into());
            }
            out!("{}", serde_json::to_string(&line)?)?;
        }
        let total = serde_json::json!({
            "kind": "total",
            "tasks": t.tasks,
            "solved": t.solved,
            "verified": t.verified,
            "shorter_than_reference": t.shorter_than_reference,
            "equal_to_reference": t.equal_to_reference,
            "longer_than_reference": t.longer_than_reference,
            "expansions": t.expansions,
            "steps_replayed": t.steps_replayed,
            "budget": t.budget,
        });
        out!("{}", serde_json::to_string(&total)?)?;
    } else {
        out!("{:<40} {:>6} {:>6} {:>9} {:>10}", "task", "solved", "length", "reference", "expansions")?;
        for r in &results {
            let o = &r.outcome;
            let length = if o.solved { o.length.to_string() } else { "-".into() };
            let reference = r.reference_length.map_or_else(|| "-".into(), |n| n.to_string());
            let solved = if o.solved { "yes" } else { "no" };
            out!("{:<40} {:>6} {:>6} {:>9} {:>10}", o.task, solved, length, reference, o.expansions)?;
        }
        for r in results.iter().filter(|r| !r.outcome.solved) {
            out!("{}: {}", r.outcome.task, r.outcome.reason.as_deref().unwrap_or("unsolved"))?;
        }
        let percent = 100.0 * t.solved as f64 / t.tasks.max(1) as f64;
        out!(
            "{}/{} solved ({percent:.1}%), {} re-verified by a normal run; against the reference: {} shorter, {} equal, {} longer",
            t.solved,
            t.tasks,
            t.verified,
            t.shorter_than_reference,
            t.equal_to_reference,
            t.longer_than_reference
        )?;
        eprintln!(
            "{} states, {} phone steps replayed in {:.1} s",
            t.expansions,
            t.steps_replayed,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(t.solved == t.tasks)
}

/// `phonebench solve --explain`: each selected task's reference walked through the search's
/// action space (`phonebench_solve::explain`); `Ok(false)` when some reference step is not
/// offered or its ending is not.
fn explain(args: &SolveArgs) -> Result<bool> {
    let (suite, catalog) = load(&args.suite)?;
    let seed = args.seed.unwrap_or(suite.manifest.seed);
    let specs = suite.select(args.tasks.as_deref());
    if specs.is_empty() {
        bail!("no task matches `{}`", args.tasks.as_deref().unwrap_or("*"));
    }
    let config = args.mcp.config()?;
    let mut all_offered = true;
    for spec in &specs {
        let instance =
            phonebench_runner::instantiate(&catalog, spec, seed, 0).map_err(|e| anyhow::anyhow!("{e}"))?;
        let tools = phonebench_solve::mcp::Tools::for_task(&instance, &config);
        let mut agent = phonebench_agents::ReferenceAgent::new(instance.reference.clone());
        let walked = phonebench_solve::explain::explain(&catalog, &instance, &tools, |tree| {
            let action = agent.decide(tree);
            match agent.failure.take() {
                Some(why) => Err(why),
                None => Ok(action),
            }
        });
        // A task whose episode fails is reported and the others go on, as `solve` does.
        let walked = match walked {
            Ok(w) => w,
            Err(e) => {
                all_offered = false;
                if args.json {
                    let line = serde_json::json!({"kind": "explain", "task": instance.task_id, "error": e.to_string()});
                    out!("{}", serde_json::to_string(&line)?)?;
                } else {
                    out!("{}\n  error: {e}", instance.task_id)?;
                }
                continue;
            }
        };
        let offered = walked.steps.iter().all(|s| s.cost.is_some())
            && walked.ending.as_ref().is_some_and(|(_, offered)| *offered);
        all_offered &= offered;
        if args.json {
            let mut line = serde_json::to_value(&walked)?;
            if let Some(o) = line.as_object_mut() {
                o.shift_insert(0, "kind".into(), "explain".into());
            }
            out!("{}", serde_json::to_string(&line)?)?;
            continue;
        }
        out!("{}", walked.task)?;
        out!(
            "  {:>4} {:>5} {:>8} {:>8} {:>10} {:>8} {:>6}  action",
            "step",
            "cost",
            "cheaper",
            "as cheap",
            "candidates",
            "failing",
            "words"
        )?;
        for s in &walked.steps {
            let cost = s.cost.map_or_else(|| "NONE".into(), |c| c.to_string());
            out!(
                "  {:>4} {:>5} {:>8} {:>8} {:>10} {:>8} {:>6}  {}",
                s.number,
                cost,
                s.cheaper,
                s.as_cheap,
                s.candidates,
                s.failing,
                s.goal_words_shown,
                serde_json::to_string(&s.action)?
            )?;
            for (action, cost) in &s.instead {
                out!(
                    "  {:>4} {cost:>5} {:>44}  offered instead: {}",
                    "",
                    "",
                    serde_json::to_string(action)?
                )?;
            }
        }
        match &walked.ending {
            Some((action, offered)) => out!(
                "  ending {} ({}), the reference {}",
                serde_json::to_string(action)?,
                if *offered { "a passing ending is offered" } else { "NO passing ending offered" },
                if walked.passes { "passes" } else { "FAILS" }
            )?,
            None => out!("  stopped: {}", walked.stopped.as_deref().unwrap_or("?"))?,
        }
    }
    Ok(all_offered)
}
