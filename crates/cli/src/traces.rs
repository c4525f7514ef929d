//! `phonebench ingest` and `phonebench analyze`: recorded GUI traces into traces.db, and what
//! they say about an app (pages, types, priorities, the transition graph).

use std::path::PathBuf;

use anyhow::{Context, Result};
use phonebench_traces::{TraceDb, TraceFormat, ingest};

/// Mirrors [`TraceFormat`] so `--help` lists the formats.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
    /// DroidBot output: utg.js, states/, events/ (also AutoDroid's and DroidTask's raw runs).
    Droidbot,
    /// DroidTask / AutoDroid YAML (task records, exploration UTGs): files or folders of them.
    Droidtask,
    /// LlamaTouch trace folders (i.xml, i.vh, i.png, i.activity, eventStructs.txt).
    Llamatouch,
    /// Android-in-the-Wild episodes as Android-in-the-Zoo JSON.
    Aitw,
    /// SPHINX ground-truth trajectory folders.
    Sphinx,
    /// phonebench run folders (results.sqlite).
    Phonebench,
}

impl From<FormatArg> for TraceFormat {
    fn from(f: FormatArg) -> TraceFormat {
        match f {
            FormatArg::Droidbot => TraceFormat::Droidbot,
            FormatArg::Droidtask => TraceFormat::Droidtask,
            FormatArg::Llamatouch => TraceFormat::Llamatouch,
            FormatArg::Aitw => TraceFormat::Aitw,
            FormatArg::Sphinx => TraceFormat::Sphinx,
            FormatArg::Phonebench => TraceFormat::Phonebench,
        }
    }
}

/// `phonebench ingest`.
#[derive(clap::Args, Debug)]
pub struct IngestArgs {
    /// The format of the inputs.
    #[arg(value_enum)]
    pub format: FormatArg,
    /// Files or folders to read.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The traces database to add them to (created when missing; a trace read again from the
    /// same path replaces its earlier copy).
    #[arg(long)]
    pub out: PathBuf,
}

/// Reads the inputs into traces.db; prints one line per trace and per problem. Returns the
/// number of problems (files skipped or read in part).
pub fn run_ingest(args: &IngestArgs) -> Result<usize> {
    let format: TraceFormat = args.format.into();
    let ingested = ingest(format, &args.paths);
    let mut db = TraceDb::create(&args.out).with_context(|| format!("opening {}", args.out.display()))?;
    for trace in &ingested.traces {
        db.insert(trace)?;
    }
    db.add_problems(&ingested.problems)?;
    for trace in &ingested.traces {
        out!(
            "{:<11} {:<40} {:>4} screens {:>4} steps  {}",
            trace.kind.name(),
            trace.name,
            trace.screens.len(),
            trace.steps.len(),
            trace.instruction.as_deref().unwrap_or("")
        )?;
    }
    for problem in &ingested.problems {
        eprintln!("skipped: {problem}");
    }
    let problems = ingested.problem_count();
    out!("{} trace(s) into {} ({} problem(s))", ingested.traces.len(), args.out.display(), problems)?;
    Ok(problems)
}

/// Refuses to write the HTML view over the database it was made from, or over any existing
/// file that is not an HTML page (a mistyped `--html results.sqlite` must not destroy data).
fn refuse_overwrite(html: &std::path::Path, db: &std::path::Path) -> Result<()> {
    let same = match (std::fs::canonicalize(html), std::fs::canonicalize(db)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    // Its journal files are the database too (a live ingest writes them).
    let journal = html.file_name().zip(db.file_name()).is_some_and(|(h, d)| {
        ["-wal", "-shm", "-journal"].iter().any(|suffix| {
            let mut name = d.to_os_string();
            name.push(suffix);
            h == name
        })
    }) && html.parent().map(std::fs::canonicalize).and_then(Result::ok)
        == db.parent().map(std::fs::canonicalize).and_then(Result::ok);
    if same || journal {
        anyhow::bail!("--html {} is the traces database itself: choose another file", html.display());
    }
    if let Ok(meta) = std::fs::symlink_metadata(html) {
        let mut head = [0u8; 15];
        let is_html = meta.is_file()
            && std::fs::File::open(html).and_then(|mut f| std::io::Read::read(&mut f, &mut head)).is_ok()
            && head.eq_ignore_ascii_case(b"<!DOCTYPE html>");
        if !is_html && meta.len() > 0 {
            anyhow::bail!(
                "--html {} exists and is not an HTML page: refused (choose another file)",
                html.display()
            );
        }
    }
    Ok(())
}

/// `phonebench analyze`.
#[derive(clap::Args, Debug)]
pub struct AnalyzeArgs {
    /// The traces database (`phonebench ingest --out`).
    pub db: PathBuf,
    /// Write the HTML view of the graph (a thumbnail per page) here.
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Print the analysis as JSON (pages, then edges) instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Analyses traces.db and prints pages and edges (or JSON); writes the HTML view if asked.
pub fn run_analyze(args: &AnalyzeArgs) -> Result<()> {
    let db = TraceDb::open(&args.db)?;
    let traces = db.traces()?;
    let analysis = phonebench_traces::analyze(&traces);
    if let Some(path) = &args.html {
        refuse_overwrite(path, &args.db)?;
        let html = phonebench_traces::html::render(&traces, &analysis);
        std::fs::write(path, html).with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        out!("{}", serde_json::to_string(&analysis)?)?;
        return Ok(());
    }
    out!(
        "{:<5} {:<9} {:<3} {:>6} {:>7}  {:<28} {}",
        "page",
        "type",
        "pri",
        "visits",
        "screens",
        "title",
        "activity"
    )?;
    for p in &analysis.pages {
        out!(
            "{:<5} {:<9} {:<3} {:>6} {:>7}  {:<28} {}",
            p.id,
            p.kind.name(),
            format!("{:?}", p.priority),
            p.visits,
            p.screens.len(),
            p.title.chars().take(28).collect::<String>(),
            p.activity.as_deref().unwrap_or("")
        )?;
    }
    out!("")?;
    out!("{:<5} {:<5} {:>6}  {}", "from", "to", "weight", "triggers")?;
    for e in &analysis.edges {
        let triggers: Vec<String> = e
            .triggers
            .iter()
            .take(3)
            .map(|t| format!("{} ×{}", t.label.chars().take(30).collect::<String>(), t.count))
            .collect();
        out!(
            "{:<5} {:<5} {:>6}  {}",
            analysis.pages[e.from].id,
            analysis.pages[e.to].id,
            e.weight,
            triggers.join(", ")
        )?;
    }
    out!(
        "{} pages ({} P0, {} P1, {} P2), {} edges, from {} traces",
        analysis.pages.len(),
        analysis.pages.iter().filter(|p| p.priority == phonebench_traces::Priority::P0).count(),
        analysis.pages.iter().filter(|p| p.priority == phonebench_traces::Priority::P1).count(),
        analysis.pages.iter().filter(|p| p.priority == phonebench_traces::Priority::P2).count(),
        analysis.edges.len(),
        traces.len()
    )?;
    Ok(())
}

/// `phonebench synthesize-app`.
#[derive(clap::Args, Debug)]
pub struct SynthesizeAppArgs {
    /// The traces database (`phonebench ingest --out`).
    pub db: PathBuf,
    /// The package folder to write (`apps/NAME`; its name is the app id unless --id is given).
    #[arg(long)]
    pub out: PathBuf,
    /// App id (lowercase letters, digits, `_`); default: the folder's name.
    #[arg(long)]
    pub id: Option<String>,
    /// Launcher label; default: the id, capitalised.
    #[arg(long)]
    pub name: Option<String>,
    /// The recorded package to rebuild; default: the most visited one (not a launcher).
    #[arg(long)]
    pub package: Option<String>,
    /// The lowest page priority built (`p0`: the must-build pages only; `p2`: every page). The
    /// entry page is always built.
    #[arg(long, value_enum, default_value_t = PriorityArg::P2)]
    pub min_priority: PriorityArg,
    /// Print the result and fidelity as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Mirrors [`phonebench_traces::Priority`] so `--help` lists the values.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriorityArg {
    /// Must build: the pages covering half of all visits.
    P0,
    /// Recommended: up to 80% of visits.
    P1,
    /// Every page.
    P2,
}

/// Writes the package, loads it, measures fidelity and prints it. Returns whether every
/// screen opens (a screen that does not is reported, and the command exits 2).
pub fn run_synthesize_app(args: &SynthesizeAppArgs) -> Result<bool> {
    let db = TraceDb::open(&args.db)?;
    let traces = db.traces()?;
    let analysis = phonebench_traces::analyze(&traces);
    let id = match &args.id {
        Some(id) => id.clone(),
        None => args
            .out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .context("--out has no folder name: give --id")?,
    };
    let options = phonebench_synth::AppOptions {
        name: args.name.clone(),
        package: args.package.clone(),
        min_priority: match args.min_priority {
            PriorityArg::P0 => phonebench_traces::Priority::P0,
            PriorityArg::P1 => phonebench_traces::Priority::P1,
            PriorityArg::P2 => phonebench_traces::Priority::P2,
        },
        ..phonebench_synth::AppOptions::new(id)
    };
    let app = phonebench_synth::synthesize_app(&traces, &analysis, &options, &args.out)?;
    let fidelity = phonebench_synth::fidelity::measure(&app, &traces)?;
    let all_open = fidelity.screens_open == fidelity.screens.len();
    if args.json {
        out!("{}", serde_json::json!({ "app": app, "fidelity": fidelity }))?;
        return Ok(all_open);
    }
    out!("{:<32} {:<9} {:>6} {:>6} {:>6}  {}", "screen", "type", "texts", "lists", "links", "similarity")?;
    for (s, f) in app.screens.iter().zip(&fidelity.screens) {
        out!(
            "{:<32} {:<9} {:>6} {:>6} {:>6}  {}",
            s.name,
            s.kind.name(),
            s.texts,
            s.lists.len(),
            s.transitions,
            match &f.error {
                Some(e) => format!("does not open: {e}"),
                None if s.dropped > 0 => format!(
                    "{:.2} ({} recorded elements left out: deeper or more than a screen holds)",
                    f.similarity, s.dropped
                ),
                None => format!("{:.2}", f.similarity),
            }
        )?;
    }
    for t in fidelity.transitions.iter().filter(|t| !t.reproduced) {
        out!("not reproduced: {} → {}: {}", t.from, t.to, t.note.as_deref().unwrap_or(""))?;
    }
    let transitions = if fidelity.transitions.is_empty() {
        "no recorded tap transition to replay".to_string()
    } else {
        format!(
            "{}/{} recorded tap transitions reproduced ({:.0}%)",
            fidelity.reproduced,
            fidelity.transitions.len(),
            100.0 * fidelity.transition_share()
        )
    };
    out!(
        "wrote {} ({} screens, entry {}, package {}): {}/{} screens open, mean structural similarity {:.2}; {transitions}, {} key/launch transitions not replayed",
        app.dir.display(),
        app.screens.len(),
        app.entry,
        app.package,
        fidelity.screens_open,
        fidelity.screens.len(),
        fidelity.mean_similarity,
        fidelity.not_replayable
    )?;
    if !all_open {
        eprintln!(
            "error: {} of {} screens do not open (above); the package is written but will show them as crashed",
            fidelity.screens.len() - fidelity.screens_open,
            fidelity.screens.len()
        );
    }
    Ok(all_open)
}

/// `phonebench synthesize-tasks`.
#[derive(clap::Args, Debug)]
pub struct SynthesizeTasksArgs {
    /// The app package folder (`apps/NAME`, e.g. from `phonebench synthesize-app`).
    pub app: PathBuf,
    /// The suite folder to write (suite.toml and tasks/).
    #[arg(long)]
    pub out: PathBuf,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Explores the app, writes the proposed tasks, keeps the valid ones; prints what was kept.
pub fn run_synthesize_tasks(args: &SynthesizeTasksArgs) -> Result<()> {
    let outcome = phonebench_synth::tasks::synthesize_tasks(&args.app, &args.out)?;
    if args.json {
        out!("{}", serde_json::to_string(&outcome)?)?;
        return Ok(());
    }
    for id in &outcome.kept {
        out!("kept     {id}")?;
    }
    for (id, why) in &outcome.dropped {
        out!("dropped  {id}: {why}")?;
    }
    out!(
        "explored {}/{} screens in {} taps; {} task(s) kept in {}, {} dropped by validation",
        outcome.screens_reached,
        outcome.screens_total,
        outcome.taps,
        outcome.kept.len(),
        outcome.dir.display(),
        outcome.dropped.len()
    )?;
    Ok(())
}
