//! `validate` and `run`: suites on the simulated phone.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use phonebench_env::{EpisodeOptions, FormatErrorPolicy};
use phonebench_phone::Catalog;
use phonebench_runner::{Limits, RunOptions, ValidationCache, metrics, run_suite, validate_task_with};
use phonebench_tasks::{Fnv, Suite};
use std::io::Write as _;

use crate::FormatArg;

/// Arguments shared by commands that read a suite.
#[derive(clap::Args, Debug, Clone)]
pub struct SuiteArgs {
    /// Suite folder, or the name of a suite under $PHONEBENCH_SUITES, ./suites or the
    /// repository's suites/ (`phonebench suites` lists them); `NAME:APP` is the tasks of NAME
    /// that involve app APP.
    #[arg(long, default_value = "starter")]
    pub suite: String,
    /// App packages folder (default: $PHONEBENCH_APPS, ./apps, or the repository's apps/).
    #[arg(long)]
    pub apps: Option<PathBuf>,
}

/// `phonebench validate`.
#[derive(clap::Args, Debug, Clone)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub(crate) suite: SuiteArgs,
    /// Only tasks whose id matches this glob (`*`, `?`).
    #[arg(long)]
    pub(crate) tasks: Option<String>,
    /// Suite seed (default: the suite's).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Play with disturbances (`none`, `light`, `heavy`): the reference takes the standard
    /// dismiss step, the random agent meets them as they come.
    #[arg(long, default_value = "none")]
    pub(crate) disturbances: phonebench_phone::Disturbances,
    #[command(flatten)]
    pub(crate) mcp: McpArgs,
    /// Also solve instance 0 of each task with the oracle (`phonebench solve`, docs/solve.md)
    /// and report a task whose reference is longer than the oracle's solution as a problem.
    #[arg(long)]
    pub(crate) oracle: bool,
    #[command(flatten)]
    pub(crate) budget: crate::solve::BudgetArgs,
}

/// `phonebench run`.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    suite: SuiteArgs,
    /// Only tasks whose id matches this glob (`*`, `?`).
    #[arg(long)]
    tasks: Option<String>,
    /// The agent: a scripted one (reference, noop, random, human) or a model-driven one
    /// (sphinx-react, t3a, m3a, reflexion, planner-executor, coords; needs --model and
    /// --base-url). `phonebench agents` lists them.
    #[arg(long, default_value = "reference")]
    agent: String,
    #[command(flatten)]
    models: crate::models::ModelArgs,
    #[command(flatten)]
    device: crate::device::DeviceArgs,
    /// Save a PNG of every screen of every episode under OUT/screenshots/ (the report shows them).
    #[arg(long)]
    save_screenshots: bool,
    /// Stop starting episodes after this many infrastructure failures in a row (a model server
    /// that is down); 0 never stops. The rest runs with --resume.
    #[arg(long, default_value_t = 5)]
    stop_after_infra: usize,
    /// Instances per task (parameters drawn per instance).
    #[arg(long, default_value_t = 1)]
    instances: u32,
    /// Suite seed (default: the suite's).
    #[arg(long)]
    seed: Option<u64>,
    /// Episodes at once (default: the number of CPUs).
    #[arg(long)]
    concurrency: Option<usize>,
    /// Results folder (default: results/<suite>-<agent>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Continue an interrupted run in --out: episodes already stored are skipped.
    #[arg(long, conflicts_with = "fresh")]
    resume: bool,
    /// Start over: delete the results already in --out (database, episodes.jsonl, report).
    #[arg(long)]
    fresh: bool,
    /// Override every task's step budget.
    #[arg(long)]
    max_steps: Option<u32>,
    /// Time limit per episode in seconds (all trials), not counting time spent waiting for model
    /// servers (those are bounded by --model-timeout and --max-retries, and are infrastructure
    /// failures when they do not answer).
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// The observation format agents get.
    #[arg(long, value_enum, default_value_t = FormatArg::SphinxTree)]
    format: FormatArg,
    /// End an episode at the first output that does not parse (SPHINX's rule) instead of
    /// counting it and going on.
    #[arg(long)]
    end_on_format_error: bool,
    /// End an episode when the same action comes three times in a row (SPHINX's rule).
    #[arg(long)]
    stop_on_repetition: bool,
    /// Screen size of every episode's phone, `WxH` or `WxH@DPI` (768x1280 is SPHINX's).
    #[arg(long, default_value = "1080x2400")]
    size: String,
    /// Do not write the HTML report.
    #[arg(long)]
    no_report: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Run only slice I (0-based) of N of the episodes, e.g. `--shard 0/4`; `phonebench merge`
    /// combines the N folders. Under a Kubernetes Indexed Job: `--shard $(JOB_COMPLETION_INDEX)/N`;
    /// a Slurm array `--array=0-3`: `--shard $SLURM_ARRAY_TASK_ID/4`.
    #[arg(long)]
    shard: Option<phonebench_runner::Shard>,
    /// Disturbances (pop-ups, ads, notifications, slow screens), seeded per episode: `none`
    /// (default), `light`, `heavy`, or several separated by commas (`none,heavy`) to play every
    /// episode at each and set the success rates side by side (the robustness delta). Each
    /// level adds turns to the step budget (light 6, heavy 16).
    #[arg(long, default_value = "none", value_delimiter = ',')]
    disturbances: Vec<phonebench_phone::Disturbances>,
    /// Validate every task again even if it validated before unchanged.
    #[arg(long)]
    revalidate: bool,
    #[command(flatten)]
    mcp: McpArgs,
}

/// MCP options of `run`.
#[derive(clap::Args, Debug, Clone)]
pub struct McpArgs {
    /// MCP configuration (TOML): servers tasks may name beyond the built-in ones (`[servers.NAME]`
    /// with `command`/`args`/`env` for stdio, `url` for streamable HTTP, or `builtin`/`seed`),
    /// `call_timeout_s`, `max_result_chars`, `on_server_failure` (`feedback` or
    /// `infrastructure`). See docs/mcp.md.
    #[arg(long)]
    mcp_config: Option<PathBuf>,
    /// Cut MCP results longer than this many characters (overrides the configuration).
    #[arg(long)]
    mcp_result_chars: Option<usize>,
}

impl McpArgs {
    /// The configuration the flags describe.
    pub fn config(&self) -> Result<phonebench_mcp::McpConfig> {
        let mut config = match &self.mcp_config {
            Some(path) => {
                let text =
                    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
                phonebench_mcp::McpConfig::from_toml(&text, &path.display().to_string())?
            }
            None => phonebench_mcp::McpConfig::default(),
        };
        if let Some(n) = self.mcp_result_chars {
            config.max_result_chars = n;
        }
        config.check().map_err(|e| anyhow::anyhow!("MCP configuration: {e}"))?;
        Ok(config)
    }
}

/// The folders suites are looked up in by name, in order: `$PHONEBENCH_SUITES`, `./suites`,
/// the repository's `suites/`.
pub fn suite_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(dir) = std::env::var_os("PHONEBENCH_SUITES") {
        roots.push(PathBuf::from(dir));
    }
    roots.push(PathBuf::from("suites"));
    roots.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites"));
    roots
}

/// Loads a suite by path or name. `NAME:APP` is the per-app sub-suite: the tasks of `NAME`
/// that involve app `APP` (a path that exists as written is never split at its colon).
pub fn load_suite(name: &str) -> Result<Suite> {
    let (dir, app) = match suite_dir(name) {
        Ok(dir) => (dir, None),
        Err(not_found) => match name.rsplit_once(':') {
            Some((base, app)) if !base.is_empty() && !app.is_empty() && !app.contains('/') => {
                (suite_dir(base)?, Some(app))
            }
            _ => return Err(not_found),
        },
    };
    let suite = Suite::load(&dir).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
        anyhow::anyhow!("the suite does not load:\n{}", lines.join("\n"))
    })?;
    match app {
        None => Ok(suite),
        Some(app) => suite.for_app(app).ok_or_else(|| {
            let mut apps: Vec<&str> =
                suite.tasks.iter().flat_map(|t| t.apps.iter().map(String::as_str)).collect();
            apps.sort_unstable();
            apps.dedup();
            anyhow::anyhow!(
                "no task of suite `{}` involves app `{app}` (its apps: {})",
                suite.manifest.name,
                apps.join(", ")
            )
        }),
    }
}

/// `phonebench suites`: every suite found by name (the first root that has a name wins, as
/// `--suite NAME` resolves it), its views, and its per-app sub-suites.
pub fn list_suites(json: bool) -> Result<()> {
    let mut seen = std::collections::BTreeSet::new();
    let mut suites = Vec::new();
    for root in suite_roots() {
        let Ok(entries) = std::fs::read_dir(&root) else { continue };
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("suite.toml").is_file())
            .collect();
        dirs.sort();
        for dir in dirs {
            let Some(name) = dir.file_name().map(|n| n.to_string_lossy().into_owned()) else { continue };
            if seen.insert(name.clone()) {
                suites.push((name, dir));
            }
        }
    }
    let mut out = std::io::stdout().lock();
    if !json {
        writeln!(out, "{:<22} {:>5}  {:<12} description", "suite", "tasks", "kind")?;
    }
    for (name, dir) in suites {
        let suite = match Suite::load(&dir) {
            Ok(s) => s,
            Err(errors) => {
                let first = errors.first().map(ToString::to_string).unwrap_or_default();
                if json {
                    writeln!(out, "{}", serde_json::json!({"suite": name, "dir": dir, "error": first}))?;
                } else {
                    writeln!(out, "{name:<22} {:>5}  {:<12} does not load: {first}", "-", "-")?;
                }
                continue;
            }
        };
        let kind = match &suite.manifest.base {
            Some(base) => format!("view of {base}"),
            None => "folder".to_string(),
        };
        let mut rows = vec![(name.clone(), suite.tasks.len(), kind, first_line(&suite.manifest.description))];
        if suite.manifest.base.is_none() {
            let mut apps: Vec<&str> =
                suite.tasks.iter().flat_map(|t| t.apps.iter().map(String::as_str)).collect();
            apps.sort_unstable();
            apps.dedup();
            for app in apps {
                let n = suite.tasks.iter().filter(|t| t.apps.iter().any(|a| a == app)).count();
                rows.push((
                    format!("{name}:{app}"),
                    n,
                    "per app".into(),
                    format!("the tasks of {name} that involve {app}"),
                ));
            }
        }
        for (suite_name, tasks, kind, description) in rows {
            if json {
                let line = serde_json::json!({
                    "suite": suite_name, "tasks": tasks, "kind": kind, "description": description, "dir": dir,
                });
                writeln!(out, "{line}")?;
            } else {
                writeln!(out, "{suite_name:<22} {tasks:>5}  {kind:<12} {description}")?;
            }
        }
    }
    Ok(())
}

/// A description's first sentence or line, for a table.
fn first_line(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let sentence = flat.find(". ").map_or(flat.as_str(), |i| &flat[..=i]);
    let mut line: String = sentence.chars().take(72).collect();
    if line.len() < sentence.len() {
        line.push('…');
    }
    line
}

/// Finds a suite folder by path or name.
pub fn suite_dir(name: &str) -> Result<PathBuf> {
    let direct = PathBuf::from(name);
    if direct.join("suite.toml").is_file() {
        return Ok(direct);
    }
    let candidates: Vec<PathBuf> = suite_roots().iter().map(|root| root.join(name)).collect();
    for c in &candidates {
        if c.join("suite.toml").is_file() {
            return Ok(c.clone());
        }
    }
    let looked: Vec<String> =
        std::iter::once(direct).chain(candidates).map(|p| p.display().to_string()).collect();
    bail!("no suite `{name}` (looked for suite.toml in: {})", looked.join(", "))
}

pub(crate) fn load(args: &SuiteArgs) -> Result<(Suite, Catalog)> {
    let suite = load_suite(&args.suite)?;
    let apps = crate::play::apps_dir(args.apps.clone());
    let catalog = Catalog::load_dir(&apps).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((suite, catalog))
}

/// The validation cache: `$PHONEBENCH_CACHE`, else `$XDG_CACHE_HOME/phonebench`, else
/// `~/.cache/phonebench`; salted with every app package file and this executable, so a change to
/// either validates again. `None` when no cache folder can be named.
fn validation_cache(args: &SuiteArgs, mcp: &phonebench_mcp::McpConfig) -> Option<ValidationCache> {
    let base = crate::models::cache_base()?;
    let mut h = Fnv::default();
    // MCP tasks validate against the servers the configuration names (another weather seed,
    // another server behind a name): a task valid under one is not known valid under another.
    if *mcp != phonebench_mcp::McpConfig::default() {
        h.eat(mcp.fingerprint().as_bytes());
    }
    let exe = std::env::current_exe().ok()?;
    let meta = std::fs::metadata(&exe).ok()?;
    h.eat(&meta.len().to_le_bytes());
    let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    h.eat(&modified.as_nanos().to_le_bytes());
    let apps = crate::play::apps_dir(args.apps.clone());
    let mut files = Vec::new();
    collect_files(&apps, &mut files);
    files.sort();
    for f in files {
        h.eat(f.to_string_lossy().as_bytes());
        h.eat(&std::fs::read(&f).ok()?);
    }
    Some(ValidationCache::new(base.join("validated"), h.0))
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The async runtime commands run their work on.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the async runtime")
}

/// Validates every task; returns whether all are valid. Prints one line per task.
pub fn validate(args: &ValidateArgs) -> Result<bool> {
    let (suite, catalog) = load(&args.suite)?;
    let seed = args.seed.unwrap_or(suite.manifest.seed);
    let tasks = suite.select(args.tasks.as_deref());
    if tasks.is_empty() {
        bail!("no task matches `{}`", args.tasks.as_deref().unwrap_or("*"));
    }
    let mcp = std::sync::Arc::new(args.mcp.config()?);
    let disturbances = args.disturbances;
    let rt = runtime()?;
    let results = rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        let permits = phonebench_runner::cpu_permits();
        for (i, task) in tasks.iter().enumerate() {
            let (catalog, task, mcp, permits) =
                (catalog.clone(), (*task).clone(), mcp.clone(), permits.clone());
            set.spawn(async move {
                let _permit = permits.acquire_owned().await;
                (i, validate_task_with(&catalog, &task, seed, &mcp, disturbances).await)
            });
        }
        let mut out = Vec::new();
        while let Some(r) = set.join_next().await {
            out.push(r.context("a validation task panicked")?);
        }
        out.sort_by_key(|(i, _)| *i);
        anyhow::Ok(out)
    })?;
    drop(rt);
    let mut results = results;
    if args.oracle {
        let oracle = crate::solve::oracle_results(
            &args.suite,
            args.tasks.as_deref(),
            Some(seed),
            args.budget.budget(),
            None,
            &args.mcp,
            false,
        )?;
        for ((_, v), r) in results.iter_mut().zip(&oracle) {
            if r.outcome.task != v.task_id {
                continue;
            }
            let file = tasks.iter().find(|t| t.id == v.task_id).map(|t| t.file.display().to_string());
            if let Some(p) = phonebench_runner::validate::oracle_problem(&file.unwrap_or_default(), r) {
                v.problems.push(p);
            }
        }
    }
    let mut valid = 0;
    for (_, v) in &results {
        if v.ok() {
            valid += 1;
            out!("ok    {:<40} reference {} steps", v.task_id, v.reference_steps.unwrap_or(0))?;
        } else {
            out!("FAIL  {}", v.task_id)?;
            for p in &v.problems {
                out!("      {p}")?;
            }
        }
    }
    out!("{valid}/{} tasks valid", results.len())?;
    Ok(valid == results.len())
}

/// Runs a suite, prints the summary table, writes the report. `Ok(false)` when the run is
/// incomplete (episodes failed for infrastructure reasons, or the run stopped early).
pub fn run(args: &RunArgs) -> Result<bool> {
    let setup = args.models.setup(&args.agent)?;
    let cache = setup.cache.clone();
    let (suite, catalog) = load(&args.suite)?;
    let suite_name = suite.manifest.name.clone();
    let out = args.out.clone().unwrap_or_else(|| {
        let shard = args.shard.map(|s| format!("-shard{}of{}", s.index, s.count)).unwrap_or_default();
        PathBuf::from("results").join(format!("{suite_name}-{}{shard}", setup.agent.name()))
    });
    let concurrency = args
        .concurrency
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let mcp = args.mcp.config()?;
    let options = RunOptions {
        suite_name,
        tasks: args.tasks.clone(),
        agent: setup.agent,
        instances: args.instances.max(1),
        seed: args.seed.unwrap_or(suite.manifest.seed),
        concurrency,
        out: out.clone(),
        resume: args.resume,
        fresh: args.fresh,
        limits: Limits {
            max_steps: args.max_steps,
            timeout: Duration::from_secs(args.timeout.max(1)),
            turn_timeout: args.models.turn_timeout(),
        },
        episode: EpisodeOptions {
            format: args.format.into(),
            format_errors: if args.end_on_format_error {
                FormatErrorPolicy::End
            } else {
                FormatErrorPolicy::Continue
            },
            stop_on_repetition: args.stop_on_repetition,
            display: args.size.parse().map_err(|e: String| anyhow::anyhow!("--size: {e}"))?,
            disturbances: phonebench_phone::Disturbances::None,
        },
        disturbances: args.disturbances.clone(),
        progress: !args.quiet,
        validation_cache: if args.revalidate { None } else { validation_cache(&args.suite, &mcp) },
        judge: setup.judge,
        user: setup.user,
        save_screenshots: args.save_screenshots,
        stop_after_infrastructure: args.stop_after_infra,
        shard: args.shard,
        mcp: std::sync::Arc::new(mcp.clone()),
        device: args.device.run_device()?,
    };
    let rt = runtime()?;
    // `outcome.lock` keeps the results folder ours until this function returns: the report is
    // written into it under the same lock as the episodes.
    let outcome = rt.block_on(run_suite(&catalog, &suite, &options))?;
    let summary = metrics::summarize(&outcome.episodes);
    out!("{}", metrics::format_table(&summary))?;
    if let Some(robustness) = metrics::robustness(&outcome.episodes) {
        out!(
            "\nrobustness to disturbances (SR per level; Δ in percentage points):\n{}",
            metrics::format_robustness(&robustness)
        )?;
    }
    out!("(what each column means: docs/metrics.md, or the report's glossary page)")?;
    out!(
        "{} episodes run, {} already done; results: {} and {}",
        outcome.ran,
        outcome.skipped,
        out.join(phonebench_runner::results::DB_FILE).display(),
        outcome.jsonl.display()
    )?;
    let a = &outcome.accounting;
    if a.calls > 0 {
        let spent = if a.new_cost_usd == 0.0 && a.calls > a.cached_calls {
            "spent: no price for these models (--price IN,OUT sets one)".to_string()
        } else {
            format!("spent ${:.4}", a.new_cost_usd)
        };
        out!(
            "model calls this run: {} ({} from the cache); new tokens: {} prompt, {} completion; {spent}; waited {:.1} s",
            a.calls,
            a.cached_calls,
            a.new_prompt_tokens,
            a.new_completion_tokens,
            a.model_latency_ms as f64 / 1000.0
        )?;
    }
    if !args.no_report {
        let files = phonebench_report::write_report(&out, &out.join("report"))
            .map_err(|e| anyhow::anyhow!("report: {e}"))?;
        out!("report: {}", files.index.display())?;
    }
    let (failed_stores, why) = cache.write_failures();
    if failed_stores > 0 {
        eprintln!(
            "warning: {failed_stores} model answers could not be stored in the response cache {} ({}); they were used, but a re-run will ask for them again",
            cache.dir().display(),
            why.unwrap_or_default()
        );
    }
    let infrastructure = summary.overall.infrastructure;
    if let Some(why) = &outcome.stopped {
        eprintln!("warning: {why}");
    }
    if infrastructure > 0 {
        eprintln!(
            "warning: {infrastructure} episodes failed for infrastructure reasons (not scored); run again with --resume to complete them"
        );
    }
    Ok(infrastructure == 0 && outcome.stopped.is_none())
}

/// `phonebench merge`.
#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// The shards' results folders (every shard of the run, once).
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// The merged results folder.
    #[arg(long)]
    out: PathBuf,
    /// Replace results already in --out.
    #[arg(long)]
    fresh: bool,
    /// Do not write the HTML report.
    #[arg(long)]
    no_report: bool,
}

/// Merges shards, prints the summary table, writes the report.
pub fn merge(args: &MergeArgs) -> Result<()> {
    let outcome = phonebench_runner::merge(&args.dirs, &args.out, args.fresh)?;
    let db = phonebench_runner::ResultsDb::open_existing(&args.out)?;
    let summary = metrics::summarize(&db.episodes()?);
    out!("{}", metrics::format_table(&summary))?;
    out!(
        "{} episodes of {} shards merged into {} and {}",
        outcome.episodes,
        args.dirs.len(),
        args.out.join(phonebench_runner::results::DB_FILE).display(),
        outcome.jsonl.display()
    )?;
    if !args.no_report {
        let files = phonebench_report::write_report(&args.out, &args.out.join("report"))
            .map_err(|e| anyhow::anyhow!("report: {e}"))?;
        out!("report: {}", files.index.display())?;
    }
    Ok(())
}
