//! `phonebench`: the command-line front end. Thin: parsing arguments, reading files, printing;
//! the work is in the library crates.
//!
//! Output to stdout goes through [`out!`] (or `write!` on a locked stdout), never `println!`:
//! when the reader goes away (`phonebench … | head`) the write fails with a broken pipe, which
//! ends the command quietly with status 0 instead of a panic.

/// `println!` that returns the write's `io::Result` instead of panicking when stdout is closed.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// mimalloc instead of glibc's malloc: allocation is a fifth of a phone step, and mimalloc
/// made random play 18-28% faster (measured with the phone's `profile_random_mimalloc`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod bench;
mod detect;
mod device;
mod export;
mod mcp;
mod models;
mod play;
mod probe;
mod quality;
mod report;
mod screenshot;
mod serve;
mod solve;
mod sphinx_eval;
mod sphinx_import;
mod suite;
mod traces;
mod vnc;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use phonebench_actions::{ParseOptions, SphinxMode, Syntax, parse_action_with, print_action};
use phonebench_observe::{Observation, ObservationFormat, render};
use phonebench_uitree::{UiTree, read_xml_bytes};

#[derive(Parser)]
#[command(name = "phonebench", version, about = "Build, run and score phone-use agents")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a real uiautomator dump (classic, uiautomator2 or Appium XML) as an agent sees it.
    ObserveXml {
        /// The XML file.
        file: PathBuf,
        /// The observation format.
        #[arg(long, value_enum, default_value_t = FormatArg::SphinxTree)]
        format: FormatArg,
        /// Also print the index table (element index → node) to stderr.
        #[arg(long)]
        targets: bool,
    },
    /// Parse an action and print it as canonical JSON (or in another syntax with --to).
    ///
    /// Exits with status 2 and a message naming the problem when the action is malformed or the
    /// output syntax cannot express it.
    ParseAction {
        /// The action text, e.g. 'click [3]' or '{"action_type":"click","index":3}'.
        text: String,
        /// The syntax the text is in; `auto` tells JSON from SPHINX, `json` tells the JSON kinds
        /// apart.
        #[arg(long, value_enum, default_value_t = SyntaxArg::Auto)]
        syntax: SyntaxArg,
        /// Print in this syntax instead of canonical JSON.
        #[arg(long, value_enum, default_value_t = SyntaxArg::Canonical)]
        to: SyntaxArg,
        /// SPHINX: accept only element indexes (`index`) or only coordinates (`coordinates`), as
        /// upstream's two action modes do.
        #[arg(long, value_enum, default_value_t = SphinxModeArg::Any)]
        sphinx_mode: SphinxModeArg,
        /// SPHINX: read `press [home]` as the Home key instead of upstream's app restart.
        #[arg(long)]
        home_is_home: bool,
        /// SPHINX: accept near misses upstream rejects (case, blanks, spaces in coordinates).
        #[arg(long)]
        lenient: bool,
    },
    /// Check every task of a suite: the file is valid, its reference passes, doing nothing
    /// fails, random play (100 steps, 3 seeds) fails. Exits 1 if any task is invalid.
    Validate(suite::ValidateArgs),
    /// Solve tasks by searching the simulated phone (the oracle, docs/solve.md): the shortest
    /// solution found within a deterministic budget, never longer than the reference, each
    /// re-verified by a normal run. Exits 1 if any task is unsolved.
    Solve(Box<solve::SolveArgs>),
    /// Run a suite with an agent: episodes in parallel, results in SQLite and episodes.jsonl,
    /// a summary table and an HTML report.
    Run(Box<suite::RunArgs>),
    /// Run a suite to make training data: `run` with every one of its flags, --out required and
    /// screenshots always saved; prints how many episodes the verifier confirmed and the
    /// `export` command to run next. Exits as `run` does.
    Rollouts(Box<export::RolloutsArgs>),
    /// Export a run folder as training data (JSON Lines + a Hugging Face dataset card): `sft`
    /// chats or `trajectory` steps of the verifier-confirmed episodes (--all: every scored one).
    Export(export::ExportArgs),
    /// Write the static HTML report of a results folder.
    Report(report::ReportArgs),
    /// Probe a model's capabilities beyond pass/fail (SPHINX's probes and more): knowledge
    /// questions, completion judgment, grounding, instruction following; items from SPHINX's data
    /// or generated from our apps. Results go to a results folder like a run's; exits 3 when a
    /// model server failed on some items (retry them with --resume).
    Probe(Box<probe::ProbeArgs>),
    /// Read recorded GUI traces (DroidBot, DroidTask, LlamaTouch, AITW/AITZ, SPHINX, phonebench
    /// runs) into a traces database; bad files are reported and skipped.
    Ingest(traces::IngestArgs),
    /// Pages, page types, priorities and the transition graph of a traces database (and an
    /// HTML view of the graph).
    Analyze(traces::AnalyzeArgs),
    /// Rebuild an app package from a traces database: one screen per page, recorded content in
    /// tables, transitions as actions; loads it and reports its fidelity.
    SynthesizeApp(traces::SynthesizeAppArgs),
    /// Generate a suite of grounded tasks for an app package by exploring it on the simulated
    /// phone (navigation, retrieval, state changes); only tasks that validate are kept.
    SynthesizeTasks(traces::SynthesizeTasksArgs),
    /// Capability profiles of results folders (probes and runs), several models side by side: a
    /// table, and the radar chart as SVG or PNG.
    Profile(probe::ProfileArgs),
    /// The task-quality report of a suite: per task, reference length, criteria, tags, what
    /// random play reaches (paths, screens, successes); goal pairs that read nearly alike.
    TaskReport(quality::TaskReportArgs),
    /// Merge the results folders of a sharded run (`run --shard I/N`) into one, the same as the
    /// unsharded run's (episodes.jsonl byte for byte), with its summary and report.
    Merge(suite::MergeArgs),
    /// List the agents (scripted and model-driven), or export a built-in one's configuration
    /// and prompt templates to edit.
    Agents(models::AgentsArgs),
    /// Serve a scripted mock OpenAI-compatible model server (for dry runs and tests); prints its
    /// base URL, then serves until stopped.
    MockModel(models::MockArgs),
    /// Score SPHINX trajectory folders (`{i}.xml`, `meta.json` or `actions.json`,
    /// `activities.json`, `evaluator.json`) with upstream's evaluator semantics: one JSON line per
    /// folder. Exits 1 if a folder could not be read (the others still print).
    SphinxEval(sphinx_eval::SphinxEvalArgs),
    /// Write SPHINX's tasks as a suite of device tasks: one task file per (task, app) pair with a
    /// ground-truth evaluator, whose criteria are that evaluator. Prints `skipped <id>/<app>:
    /// <reason>` for pairs that do not import and exits 2 if any was skipped.
    ImportSphinx(sphinx_import::ImportSphinxArgs),
    /// List the suites (folders and views found by name), and their per-app sub-suites
    /// (`--suite full:maps`).
    Suites {
        /// One JSON object per suite.
        #[arg(long)]
        json: bool,
    },
    /// List the installed app packages.
    Apps {
        /// App packages folder (default: $PHONEBENCH_APPS, ./apps, or the repository's apps/).
        #[arg(long)]
        apps: Option<PathBuf>,
        /// One JSON object per app.
        #[arg(long)]
        json: bool,
    },
    /// Drive the simulated phone: prints the screen, then reads one action per stdin line (any
    /// syntax) and prints the next screen or the error. Exits 2 if any line was rejected.
    Play {
        /// App to open first.
        #[arg(long)]
        app: Option<String>,
        /// Observation format.
        #[arg(long, value_enum, default_value_t = FormatArg::SphinxTree)]
        format: FormatArg,
        /// Phone seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// App packages folder.
        #[arg(long)]
        apps: Option<PathBuf>,
        /// At the end, print the rows of `APP:SQL` as JSON lines (repeatable).
        #[arg(long)]
        query: Vec<String>,
        /// At the end, print the app events as JSON lines.
        #[arg(long)]
        events: bool,
        /// Save a PNG of every screen in this folder (`step-000.png`, `step-001.png`, …).
        #[arg(long)]
        screenshots: Option<PathBuf>,
        /// Screen size, `WxH` or `WxH@DPI`.
        #[arg(long, default_value = "1080x2400")]
        size: String,
        #[command(flatten)]
        device: device::DeviceArgs,
    },
    /// Serve the simulated phone as an adb server (host protocol: devices, shell and shell v2,
    /// exec-out, pull), so the real `adb` client and device tools can drive it: `uiautomator
    /// dump`, `screencap`, `input`, `am start`, `dumpsys window` behave as on a device.
    FakeAdb(device::FakeAdbArgs),
    /// Save the screen as a PNG: the simulated phone after optional actions, or a real
    /// uiautomator dump; optionally with set-of-marks.
    Screenshot(screenshot::ScreenshotArgs),
    /// Serve the simulated phone over RFB (VNC), so any VNC client can watch and drive it: a
    /// task's episode (its verdict printed when the client leaves) or a free phone. Clicks,
    /// drags and the wheel become taps, long presses, swipes and scrolls; keys become typing.
    VncServer(vnc::VncServerArgs),
    /// Serve the simulated phone over MCP (stdio, or streamable HTTP with --http): tools to list
    /// and start tasks, observe (text or screenshot), act, finish and read the verdict.
    McpServer(mcp::McpServerArgs),
    /// Serve phones as environments over HTTP and WebSocket (OpenEnv-shaped: /reset, /step,
    /// /state, /health, /schema, /ws), for Python clients, Gymnasium and RL trainers.
    Serve(serve::ServeArgs),
    /// The offline MCP tool servers (geo, weather, finance, tracker): list their tools, call one,
    /// or serve one over stdio or streamable HTTP.
    #[command(subcommand)]
    McpTools(mcp::McpToolsCommand),
    /// Measure step latency (action + new observation) per step kind (scroll, navigating tap,
    /// writing tap, typing) on each app's busiest screen, reset and screenshot latency; or, with
    /// --throughput, random-agent steps and resets per second on every core and memory per live
    /// environment (docs/performance.md).
    Bench(bench::BenchArgs),
    /// Measure the pixel-only element detector (OCR + classical detector) on every screen of the
    /// apps against the UI tree: precision, recall, IoU, clickable recall and text accuracy per app
    /// and per element kind (docs/detect.md).
    DetectEval(detect::DetectEvalArgs),
}

/// Mirrors [`ObservationFormat`] so `--help` lists the values.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    Uiautomator,
    SphinxTree,
    SphinxList,
    Androidworld,
    Elements,
}

impl From<FormatArg> for ObservationFormat {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Uiautomator => ObservationFormat::Uiautomator,
            FormatArg::SphinxTree => ObservationFormat::SphinxTree,
            FormatArg::SphinxList => ObservationFormat::SphinxList,
            FormatArg::Androidworld => ObservationFormat::AndroidWorld,
            FormatArg::Elements => ObservationFormat::Elements,
        }
    }
}

/// Mirrors [`Syntax`] so `--help` lists the values.
#[derive(Clone, Copy, ValueEnum)]
enum SyntaxArg {
    Auto,
    Sphinx,
    Json,
    Canonical,
    Androidworld,
    Mobileworld,
}

impl From<SyntaxArg> for Syntax {
    fn from(s: SyntaxArg) -> Self {
        match s {
            SyntaxArg::Auto => Syntax::Auto,
            SyntaxArg::Sphinx => Syntax::Sphinx,
            SyntaxArg::Json => Syntax::Json,
            SyntaxArg::Canonical => Syntax::Canonical,
            SyntaxArg::Androidworld => Syntax::AndroidWorld,
            SyntaxArg::Mobileworld => Syntax::MobileWorld,
        }
    }
}

/// Mirrors [`SphinxMode`].
#[derive(Clone, Copy, ValueEnum)]
enum SphinxModeArg {
    Any,
    Index,
    Coordinates,
}

impl From<SphinxModeArg> for SphinxMode {
    fn from(m: SphinxModeArg) -> Self {
        match m {
            SphinxModeArg::Any => SphinxMode::Any,
            SphinxModeArg::Index => SphinxMode::Index,
            SphinxModeArg::Coordinates => SphinxMode::Coordinates,
        }
    }
}

/// Exit status for input the tool rejects (a malformed action), as opposed to failures (1).
const EXIT_REJECTED: u8 = 2;
/// Exit status of a run that is incomplete: episodes failed for infrastructure reasons (a model
/// server down) or the run stopped early; `--resume` completes it.
const EXIT_INCOMPLETE: u8 = 3;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        // The reader of our output stopped reading (`| head`): it has all it wanted.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_text(&e));
            ExitCode::FAILURE
        }
    }
}

/// Whether `e` is, or was caused by, a write into a pipe whose reader has gone.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// An error and its causes on one line, `a: b: c`, each said once: a cause whose text the
/// message already contains is skipped (library errors often embed their source in their own
/// message and also report it as their source, which anyhow's `{:#}` would print twice).
pub(crate) fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::ObserveXml { file, format, targets } => {
            let bytes = std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
            let tree = read_xml_bytes(&bytes)
                .map_err(|e| anyhow::anyhow!("{}:{}:{}: {}", file.display(), e.line, e.column, e.message))?;
            let observation = render(&tree, format.into());
            // Observation text is printed byte for byte; a final newline is added only when the
            // format does not end with one (so `sphinx-tree` output equals upstream's dump).
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(observation.text.as_bytes())?;
            if !observation.text.ends_with('\n') {
                stdout.write_all(b"\n")?;
            }
            stdout.flush()?;
            if targets {
                eprint!("{}", targets_table(&tree, &observation));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Solve(args) => Ok(if solve::solve(&args)? { ExitCode::SUCCESS } else { ExitCode::FAILURE }),
        Command::Validate(args) => {
            Ok(if suite::validate(&args)? { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        Command::Run(args) => {
            Ok(if suite::run(&args)? { ExitCode::SUCCESS } else { ExitCode::from(EXIT_INCOMPLETE) })
        }
        Command::Rollouts(args) => {
            Ok(if export::rollouts(&args)? { ExitCode::SUCCESS } else { ExitCode::from(EXIT_INCOMPLETE) })
        }
        Command::Export(args) => {
            export::export(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Agents(args) => {
            models::agents(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::MockModel(args) => {
            models::mock(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::SphinxEval(args) => Ok(ExitCode::from(sphinx_eval::run(&args)?.clamp(0, 255) as u8)),
        Command::ImportSphinx(args) => {
            let skipped = sphinx_import::run(&args)?;
            Ok(if skipped == 0 { ExitCode::SUCCESS } else { ExitCode::from(EXIT_REJECTED) })
        }
        Command::Probe(args) => {
            Ok(if probe::run(&args)? { ExitCode::SUCCESS } else { ExitCode::from(EXIT_INCOMPLETE) })
        }
        Command::Profile(args) => {
            probe::run_profile(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Report(args) => {
            report::run(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::TaskReport(args) => {
            quality::run(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Ingest(args) => {
            let problems = traces::run_ingest(&args)?;
            Ok(if problems == 0 { ExitCode::SUCCESS } else { ExitCode::from(EXIT_REJECTED) })
        }
        Command::Analyze(args) => {
            traces::run_analyze(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::SynthesizeApp(args) => {
            let all_open = traces::run_synthesize_app(&args)?;
            Ok(if all_open { ExitCode::SUCCESS } else { ExitCode::from(EXIT_REJECTED) })
        }
        Command::SynthesizeTasks(args) => {
            traces::run_synthesize_tasks(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Merge(args) => {
            suite::merge(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Screenshot(args) => {
            screenshot::run(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::VncServer(args) => {
            vnc::run(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Suites { json } => {
            suite::list_suites(json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Apps { apps, json } => {
            play::list_apps(&play::apps_dir(apps), json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Play { app, format, seed, apps, query, events, screenshots, size, device } => {
            if let Some(connected) = device.connect()? {
                if !query.is_empty() || events || screenshots.is_some() {
                    anyhow::bail!(
                        "--query, --events and --screenshots read the simulated phone; a device has none of them"
                    );
                }
                let catalog = play::load_catalog(&play::apps_dir(apps))?;
                let rejected = device::play_device(connected, &catalog, app.as_deref(), format.into())?;
                return Ok(if rejected > 0 { ExitCode::from(EXIT_REJECTED) } else { ExitCode::SUCCESS });
            }
            let display = size.parse().map_err(|e: String| anyhow::anyhow!("--size: {e}"))?;
            let options = play::PlayOptions {
                app,
                format: format.into(),
                seed,
                queries: query,
                events,
                screenshots,
                display,
            };
            let rejected = play::play(&play::apps_dir(apps), &options)?;
            Ok(if rejected == 0 { ExitCode::SUCCESS } else { ExitCode::from(EXIT_REJECTED) })
        }
        Command::FakeAdb(args) => {
            device::fake_adb(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::McpServer(args) => {
            mcp::serve_phone(args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve(args) => {
            serve::serve(args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::McpTools(command) => {
            Ok(if mcp::run(command)? { ExitCode::SUCCESS } else { ExitCode::from(EXIT_REJECTED) })
        }
        Command::DetectEval(args) => {
            detect::run(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench(args) => {
            bench::run(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::ParseAction { text, syntax, to, sphinx_mode, home_is_home, lenient } => {
            let options = ParseOptions {
                sphinx_mode: sphinx_mode.into(),
                sphinx_home_restarts: !home_is_home,
                lenient,
            };
            let printed = parse_action_with(&text, syntax.into(), &options)
                .map_err(|e| e.to_string())
                .and_then(|action| print_action(&action, to.into()).map_err(|e| e.to_string()));
            match printed {
                Ok(text) => {
                    out!("{text}")?;
                    Ok(ExitCode::SUCCESS)
                }
                Err(message) => {
                    eprintln!("error: {message}");
                    Ok(ExitCode::from(EXIT_REJECTED))
                }
            }
        }
    }
}

/// The index table as aligned columns: index, bounds, short class, resource id or text.
fn targets_table(tree: &UiTree, observation: &Observation) -> String {
    let rows: Vec<[String; 4]> = observation
        .targets
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let node = tree.node(*id);
            let label = if node.resource_id.is_empty() { &node.text } else { &node.resource_id };
            let label: String = label.replace('\n', " ").chars().take(60).collect();
            [i.to_string(), node.bounds.to_string(), node.short_class().to_string(), label]
        })
        .collect();
    let header = ["index", "bounds", "class", "resource-id / text"].map(str::to_string);
    let width = |col: usize| {
        rows.iter().chain(std::iter::once(&header)).map(|r| r[col].chars().count()).max().unwrap_or(0)
    };
    let (w0, w1, w2) = (width(0), width(1), width(2));
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        out.push_str(&format!("{:>w0$}  {:<w1$}  {:<w2$}  {}\n", row[0], row[1], row[2], row[3]));
    }
    out
}
