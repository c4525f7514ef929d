//! `phonebench probe` and `phonebench profile`: capability probes and profiles.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use phonebench_agents::llm::ModelSection;
use phonebench_probe::generate::generate_on;
use phonebench_probe::item::{DataSource, Mode, ProbeItem, ProbeKind};
use phonebench_probe::run::{items_digest, stored_configs, stored_results};
use phonebench_probe::{
    AskSettings, Parsing, ProbeConfig, ProbeRunOptions, profile, radar_png, radar_svg, run_probe,
};
use phonebench_runner::ResultsDb;

/// The probe to run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeArg {
    /// Multiple-choice and binary questions: goal understanding and app knowledge.
    Knowledge,
    /// Is the goal complete after these actions, on this screen? (planning).
    Completion,
    /// One screen, one step-level instruction: the right element.
    Grounding,
    /// The same step asked with the whole trajectory and with the screen alone.
    Instructions,
}

impl From<ProbeArg> for ProbeKind {
    fn from(p: ProbeArg) -> ProbeKind {
        match p {
            ProbeArg::Knowledge => ProbeKind::Knowledge,
            ProbeArg::Completion => ProbeKind::Completion,
            ProbeArg::Grounding => ProbeKind::Grounding,
            ProbeArg::Instructions => ProbeKind::Instructions,
        }
    }
}

/// Where items come from.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataArg {
    /// SPHINX's files (--sphinx-data DIR).
    Sphinx,
    /// Generated from our apps by playing the suite's references.
    Generated,
    /// Both.
    All,
}

/// `phonebench probe`.
#[derive(clap::Args, Debug)]
pub struct ProbeArgs {
    /// The probe.
    #[arg(value_enum)]
    pub probe: ProbeArg,
    /// Where the items come from.
    #[arg(long, value_enum, default_value_t = DataArg::Generated)]
    pub data: DataArg,
    /// SPHINX's data folder (questions.json, lowlevel_tasks.json and lowlevel_tasks/,
    /// task_info_all.json and groundtruth/), for --data sphinx.
    #[arg(long)]
    pub sphinx_data: Option<PathBuf>,
    /// The suite whose references generate items (`NAME` or `NAME:APP`).
    #[arg(long, default_value = "full")]
    pub suite: String,
    /// App packages folder (default: $PHONEBENCH_APPS, ./apps, or the repository's apps/).
    #[arg(long)]
    pub apps: Option<PathBuf>,
    /// Suite seed for generated items (default: the suite's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Modes, comma-separated: knowledge `text`; completion `tree,action,image`; grounding
    /// `text,som,coords`; instructions `full,focused` (default: those a text-only model answers).
    #[arg(long, value_delimiter = ',')]
    pub modes: Vec<String>,
    /// Read answers strictly (whole words, no guessing) instead of with SPHINX's rules.
    #[arg(long)]
    pub strict: bool,
    /// Do not send malformed answers to a repair call (repaired scores then equal the
    /// original ones).
    #[arg(long)]
    pub no_repair: bool,
    /// Only the first N items of each source.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Write the items as JSON Lines to FILE (without --model, nothing else is done).
    #[arg(long)]
    pub export: Option<PathBuf>,
    /// Print the figures as JSON lines instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Results folder (default: results/probes-<model>); one folder holds one model's probes.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Continue a stored probe with the same settings: stored items are skipped.
    #[arg(long, conflicts_with = "fresh")]
    pub resume: bool,
    /// Delete this probe's stored results in --out first.
    #[arg(long)]
    pub fresh: bool,
    /// Items asked at once.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub endpoint: crate::models::EndpointArgs,
    /// With --data generated: play the suite's references on this device (its tasks a device
    /// can judge) and ask about its real screens.
    #[command(flatten)]
    pub device: crate::device::DeviceArgs,
}

/// Loads or generates the items of `probe`.
fn items(args: &ProbeArgs, probe: ProbeKind) -> Result<(Vec<ProbeItem>, Option<String>)> {
    let mut items = Vec::new();
    let mut suite_name = None;
    let sources: &[DataSource] = match args.data {
        DataArg::Sphinx => &[DataSource::Sphinx],
        DataArg::Generated => &[DataSource::Generated],
        DataArg::All => &[DataSource::Sphinx, DataSource::Generated],
    };
    for source in sources {
        let mut some = match source {
            DataSource::Sphinx => {
                let dir = args.sphinx_data.as_deref().context(
                    "--data sphinx needs --sphinx-data DIR (a copy of SPHINX's repository or its data files)",
                )?;
                let loaded = match probe {
                    ProbeKind::Knowledge => phonebench_probe::sphinx_data::knowledge(dir)?,
                    ProbeKind::Completion => phonebench_probe::sphinx_data::completion(dir)?,
                    ProbeKind::Grounding => phonebench_probe::sphinx_data::grounding(dir)?,
                    ProbeKind::Instructions => bail!(
                        "SPHINX's instruction-following figures come from its end-to-end runs: they are in `phonebench run`'s results (format-error and repetition rates), and `phonebench profile` reads them; the probe's focused-context comparison uses --data generated"
                    ),
                };
                for note in &loaded.skipped {
                    eprintln!("note: {note}");
                }
                loaded.items
            }
            DataSource::Generated => {
                let suite = crate::suite::load_suite(&args.suite)?;
                let catalog = crate::play::load_catalog(&crate::play::apps_dir(args.apps.clone()))?;
                let seed = args.seed.unwrap_or(suite.manifest.seed);
                let device = args.device.run_device()?;
                // On a device, the references play there: only tasks a device can judge.
                let tasks: Vec<&phonebench_tasks::TaskSpec> = suite
                    .tasks
                    .iter()
                    .filter(|t| device.is_none() || t.device_problems().is_empty())
                    .collect();
                let generated = generate_on(&catalog, &tasks, seed, device.as_ref().map(|d| &d.open));
                for note in &generated.skipped {
                    eprintln!("note: left out {note}");
                }
                suite_name = Some(match &device {
                    Some(d) => format!("{}@{seed} on {}", args.suite, d.name),
                    None => format!("{}@{seed}", args.suite),
                });
                match probe {
                    ProbeKind::Knowledge => generated.knowledge,
                    ProbeKind::Completion => generated.completion,
                    ProbeKind::Grounding => generated.grounding,
                    ProbeKind::Instructions => generated
                        .grounding
                        .into_iter()
                        .map(|item| ProbeItem { probe: ProbeKind::Instructions, ..item })
                        .collect(),
                }
            }
        };
        if let Some(n) = args.limit {
            let keep = match probe {
                ProbeKind::Completion => whole_trajectories(&some, n),
                _ => n,
            };
            some.truncate(keep);
        }
        items.extend(some);
    }
    Ok((items, suite_name))
}

/// How many of the first completion items form whole trajectories within `n` items (at least
/// one trajectory): Overall is per trajectory, so a limit never cuts one.
fn whole_trajectories(items: &[ProbeItem], n: usize) -> usize {
    let trajectory = |i: &ProbeItem| match &i.body {
        phonebench_probe::ItemBody::Completion(c) => Some(c.trajectory.clone()),
        _ => None,
    };
    let mut end = 0;
    let mut at = 0;
    while at < items.len() {
        let name = trajectory(&items[at]);
        let mut next = at;
        while next < items.len() && trajectory(&items[next]) == name {
            next += 1;
        }
        if next > n && end > 0 {
            break;
        }
        end = next;
        at = next;
    }
    end
}

fn modes(args: &ProbeArgs, probe: ProbeKind) -> Result<Vec<Mode>> {
    if args.modes.is_empty() {
        return Ok(probe.default_modes().to_vec());
    }
    let mut out = Vec::new();
    for name in &args.modes {
        let mode = Mode::parse(name.trim()).filter(|m| probe.modes().contains(m)).with_context(|| {
            let known: Vec<&str> = probe.modes().iter().map(|m| m.name()).collect();
            format!("the {} probe has no mode `{name}` (its modes: {})", probe.name(), known.join(", "))
        })?;
        if !out.contains(&mode) {
            out.push(mode);
        }
    }
    // In the probe's own order, so `som,text` and `text,som` are the same settings.
    out.sort_by_key(|m| probe.modes().iter().position(|x| x == m));
    Ok(out)
}

/// A folder name from a model name: letters, digits, `-`, `_` and `.` kept (others become
/// `_`), at most 80 characters; a name that had to change gets a hash of the original, so
/// `org/x` and `org:x` never share a folder.
fn folder_name(model: &str) -> String {
    let kept: String = model
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' })
        .take(80)
        .collect();
    if kept == model {
        return kept;
    }
    let mut hash = phonebench_tasks::Fnv::default();
    hash.eat(model.as_bytes());
    format!("{kept}-{:08x}", hash.0 as u32)
}

/// Runs `phonebench probe`; returns whether every item was scored (no infrastructure failure).
pub fn run(args: &ProbeArgs) -> Result<bool> {
    let probe = ProbeKind::from(args.probe);
    let modes = modes(args, probe)?;
    let (items, suite) = items(args, probe)?;
    if let Some(file) = &args.export {
        let mut text = String::new();
        for item in &items {
            text.push_str(&serde_json::to_string(&item.to_json())?);
            text.push('\n');
        }
        std::fs::write(file, text).with_context(|| format!("cannot write {}", file.display()))?;
        eprintln!("{} {} items written to {}", items.len(), probe.name(), file.display());
        if args.endpoint.model.is_none() {
            return Ok(true);
        }
    }
    if items.is_empty() {
        bail!("no {} items to ask", probe.name());
    }
    let cache = args.endpoint.cache()?;
    let model_name = args
        .endpoint
        .model
        .clone()
        .context("a probe asks a model: pass --model NAME and --base-url URL (or --export FILE to only write the items)")?;
    let mut section = ModelSection::default();
    if let Some(t) = args.endpoint.temperature {
        section.temperature = Some(t);
    }
    let handle = args.endpoint.handle(
        "the probed model",
        &section,
        args.endpoint.model.as_ref(),
        args.endpoint.base_url.as_ref(),
        args.endpoint.api_key_env.as_ref(),
        &cache,
    )?;
    let settings = AskSettings {
        parsing: if args.strict { Parsing::Strict } else { Parsing::Sphinx },
        repair: !args.no_repair,
    };
    let data = match args.data {
        DataArg::Sphinx => vec![DataSource::Sphinx],
        DataArg::Generated => vec![DataSource::Generated],
        DataArg::All => vec![DataSource::Sphinx, DataSource::Generated],
    };
    let config = ProbeConfig {
        probe,
        model: model_name.clone(),
        data,
        modes,
        settings,
        limit: args.limit,
        suite,
        items: items_digest(&items),
        sampling: format!("{:?}", handle.sampling),
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(format!("probes-{}", folder_name(&model_name))));
    let mut db = ResultsDb::open(&out).with_context(|| format!("results folder {}", out.display()))?;
    let options = ProbeRunOptions {
        concurrency: args.concurrency.max(1),
        progress: !args.quiet,
        resume: args.resume,
        fresh: args.fresh,
    };
    let rt = crate::suite::runtime()?;
    let outcome = rt.block_on(run_probe(&mut db, &items, &config, &handle, &options))?;
    let results: Vec<_> = stored_results(&db)?.into_iter().filter(|r| r.probe == probe).collect();
    let figures = phonebench_probe::score::figures(&results);
    if args.json {
        for f in &figures {
            out!("{}", serde_json::to_string(f)?)?;
        }
    } else {
        out!("{}", phonebench_probe::score::table(&figures))?;
        out!(
            "{} asked, {} already stored, {} not askable in their mode (no screenshot, or an unreadable one), {} infrastructure failures; results: {}",
            outcome.asked,
            outcome.skipped,
            outcome.unavailable,
            outcome.infrastructure_failures,
            out.display()
        )?;
    }
    let (failures, message) = cache.write_failures();
    if failures > 0 {
        eprintln!("warning: {failures} responses could not be cached ({})", message.unwrap_or_default());
    }
    if outcome.infrastructure_failures > 0 {
        eprintln!(
            "{} items were not scored because a model server failed; run again with --resume to retry them",
            outcome.infrastructure_failures
        );
    }
    Ok(outcome.infrastructure_failures == 0)
}

/// `phonebench profile`.
#[derive(clap::Args, Debug)]
pub struct ProfileArgs {
    /// Results folders of `probe` and `run`, one model each (a folder may hold both); folders
    /// naming the same model are combined.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Write the radar chart as SVG.
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Write the radar chart as PNG.
    #[arg(long)]
    pub png: Option<PathBuf>,
    /// One JSON object per model instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// The model a results folder is about: the probes' model, else the run's model or agent.
fn folder_model(db: &ResultsDb, dir: &Path) -> Result<String> {
    if let Some(config) = stored_configs(db)?.first() {
        return Ok(config.model.clone());
    }
    if let Some(run) = db.config()? {
        return Ok(run.model.unwrap_or(run.agent));
    }
    Ok(dir.display().to_string())
}

/// The profiles of results folders, one per model, in the order first named.
pub fn profiles(dirs: &[PathBuf]) -> Result<Vec<phonebench_probe::Profile>> {
    type Runs = Vec<Vec<phonebench_runner::EpisodeResult>>;
    let mut by_model: Vec<(String, Vec<phonebench_probe::ProbeResult>, Runs)> = Vec::new();
    for dir in dirs {
        let db = ResultsDb::open_existing(dir).with_context(|| format!("reading {}", dir.display()))?;
        let model = folder_model(&db, dir)?;
        let results = stored_results(&db)?;
        let episodes = db.episodes()?;
        match by_model.iter_mut().find(|(m, _, _)| *m == model) {
            Some((_, r, runs)) => {
                r.extend(results);
                runs.push(episodes);
            }
            None => by_model.push((model, results, vec![episodes])),
        }
    }
    Ok(by_model.iter().map(|(model, results, runs)| profile(model, results, runs)).collect())
}

/// Prints the profiles and writes the charts asked for.
pub fn run_profile(args: &ProfileArgs) -> Result<()> {
    let profiles = profiles(&args.dirs)?;
    // Files first: printing may end the process quietly on a closed pipe (`| head`).
    if let Some(file) = &args.svg {
        std::fs::write(file, radar_svg(&profiles))
            .with_context(|| format!("cannot write {}", file.display()))?;
    }
    if let Some(file) = &args.png {
        let png = radar_png(&profiles).map_err(anyhow::Error::msg)?;
        std::fs::write(file, png).with_context(|| format!("cannot write {}", file.display()))?;
    }
    if args.json {
        for p in &profiles {
            let values: serde_json::Map<String, serde_json::Value> = phonebench_probe::DIMENSIONS
                .iter()
                .zip(&p.values)
                .map(|((key, _), v)| (key.to_string(), serde_json::json!(v)))
                .collect();
            out!("{}", serde_json::json!({ "model": p.name, "dimensions": values }))?;
        }
    } else {
        out!("{}", phonebench_probe::profile::table(&profiles))?;
    }
    std::io::stdout().flush().ok();
    Ok(())
}
