//! Static HTML reports of a run (BRIEF §7): `index.html` with the summary figures, breakdowns per
//! category and per tag, SR bar charts and a table of every episode; `glossary.html` defining
//! every figure; and one page per episode with its criteria, judge verdicts, trials and every
//! step: the screenshot with the touch point marked, the agent's output and each model call with
//! its prompt, reasoning, tokens and cost.
//!
//! The report is self-contained: inline CSS, inline SVG, no script and no external URL, so it
//! opens from a file system, an archive or a CI artifact. Screenshots are not copied: the pages
//! link the PNGs of the results folder by relative URL ([`screenshot_url`]). A
//! Content-Security-Policy meta tag forbids scripts and every fetch except images of the report's
//! own origin (`img-src 'self'`, which in Chromium covers `file:` pages' neighbouring files), so
//! even an escaping bug could not run agent-written script or reach the network.
//!
//! Escaping: everything reaches the page through minijinja templates named `*.html`, which
//! HTML-escape every value; nothing is marked safe. Observations, agent output, prompts,
//! reasoning, image labels, screenshot paths, answers, goals, criterion details, judge reasons and
//! task metadata are all treated as hostile. Screenshot URLs are percent-encoded segment by
//! segment, and stored paths that could leave the results folder are never linked.

mod chart;
#[cfg(test)]
mod fixture;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use minijinja::value::Serde;
use minijinja::{Environment, UndefinedBehavior};
use phonebench_model::CallRecord;
use phonebench_runner::metrics::{GLOSSARY, Metrics, Summary, number, percent, summarize};
use phonebench_runner::results::{
    Accounting, CriterionResult, EpisodeResult, ResultsDb, ResultsError, RunConfig, StepResult,
};
use serde::Serialize;

/// The index page's file name inside the output folder.
pub const INDEX_FILE: &str = "index.html";
/// The glossary page's file name inside the output folder.
pub const GLOSSARY_FILE: &str = "glossary.html";
/// The folder of episode pages inside the output folder.
pub const EPISODES_DIR: &str = "episodes";
/// Width, in CSS px, at which screenshots are shown on episode pages (a click opens the PNG).
pub const SHOT_WIDTH: u32 = 270;

/// The files a report consists of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportFiles {
    /// `OUT/index.html`.
    pub index: PathBuf,
    /// `OUT/glossary.html`.
    pub glossary: PathBuf,
    /// `OUT/episodes/<safe-key>.html`, in the order of the index's episode table.
    pub episodes: Vec<PathBuf>,
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The results could not be read.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// A file or folder could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A template failed to render (a bug in this crate, not in the results).
    #[error("rendering {template}: {source:#}")]
    Template {
        /// The template's name.
        template: String,
        /// The error.
        source: minijinja::Error,
    },
}

/// Where screenshots are and where the pages linking them go: both folders canonical, so the
/// relative URLs between them hold wherever `--out` points.
struct Screens<'a> {
    /// The results folder as given (to check that a screenshot file exists).
    results: &'a Path,
    /// The results folder, canonical.
    results_canonical: PathBuf,
    /// `OUT/episodes`, canonical.
    pages_canonical: PathBuf,
}

/// Reads `results_dir/results.sqlite` and writes the report into `out_dir` (created if needed;
/// files of an earlier report there are overwritten).
pub fn write_report(results_dir: &Path, out_dir: &Path) -> Result<ReportFiles, ReportError> {
    let db = ResultsDb::open_existing(results_dir)?;
    let config = db.config()?;
    let episodes = db.episodes()?;
    let wall = db.wall_times()?;
    let accounting = db.accounting()?;
    let pages = page_names(&episodes);
    let env = environment()?;

    let episodes_dir = out_dir.join(EPISODES_DIR);
    std::fs::create_dir_all(&episodes_dir)
        .map_err(|source| ReportError::Io { path: episodes_dir.clone(), source })?;
    let canonical = |path: &Path| {
        path.canonicalize().map_err(|source| ReportError::Io { path: path.to_path_buf(), source })
    };
    let screens = Screens {
        results: results_dir,
        results_canonical: canonical(results_dir)?,
        pages_canonical: canonical(&episodes_dir)?,
    };
    let mut files = Vec::with_capacity(episodes.len());
    for (episode, page) in episodes.iter().zip(&pages) {
        let steps = db.steps(&episode.key)?;
        let view = episode_page(episode, &steps, wall.get(&episode.key).copied(), &screens);
        let path = episodes_dir.join(page);
        write(&path, &render(&env, "episode.html", &view)?)?;
        files.push(path);
    }
    let glossary = out_dir.join(GLOSSARY_FILE);
    write(&glossary, &render(&env, "glossary.html", &glossary_page())?)?;
    let index = out_dir.join(INDEX_FILE);
    let mut view = index_page(config.as_ref(), &episodes, &pages, &wall, &accounting);
    let probe_results = phonebench_probe::run::stored_results(&db)?;
    if !probe_results.is_empty() {
        let configs = phonebench_probe::run::stored_configs(&db)?;
        let model = configs.first().map(|c| c.model.clone()).unwrap_or_else(|| "model".to_string());
        if config.is_none() {
            view.title = format!("phonebench report: capability probes of {model}");
        }
        view.has_run = !episodes.is_empty();
        view.capabilities = Some(capabilities_view(&model, &configs, &probe_results, &episodes));
    }
    write(&index, &render(&env, "index.html", &view)?)?;
    Ok(ReportFiles { index, glossary, episodes: files })
}

fn write(path: &Path, text: &str) -> Result<(), ReportError> {
    std::fs::write(path, text).map_err(|source| ReportError::Io { path: path.to_path_buf(), source })
}

const TEMPLATES: [(&str, &str); 5] = [
    ("layout.html", include_str!("../templates/layout.html")),
    ("macros.html", include_str!("../templates/macros.html")),
    ("index.html", include_str!("../templates/index.html")),
    ("episode.html", include_str!("../templates/episode.html")),
    ("glossary.html", include_str!("../templates/glossary.html")),
];

/// The template environment. Names end in `.html`, so minijinja's default callback turns HTML
/// auto-escaping on for all of them; strict undefined makes a misspelt field an error in the
/// tests instead of a silently empty cell. The global `terms` maps each glossary term's name to
/// its anchor and title, for column headers that link to their definition.
fn environment() -> Result<Environment<'static>, ReportError> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    for (name, source) in TEMPLATES {
        env.add_template(name, source)
            .map_err(|source| ReportError::Template { template: name.to_string(), source })?;
    }
    let terms: BTreeMap<&str, TermView> = terms().into_iter().map(|t| (t.name, t)).collect();
    env.add_global("terms", minijinja::Value::from(Serde(terms)));
    Ok(env)
}

fn render(env: &Environment<'_>, name: &str, ctx: &impl Serialize) -> Result<String, ReportError> {
    let template = |source| ReportError::Template { template: name.to_string(), source };
    env.get_template(name).and_then(|t| t.render(Serde(ctx))).map_err(template)
}

/// File names for the episode pages, one per episode in order: the key with every character
/// outside `[A-Za-z0-9._-]` replaced by `_` (so the name needs no URL escaping and cannot leave
/// the folder), cut to a length every file system accepts, and made unique with a `-N` suffix
/// when two keys map to the same name.
fn page_names(episodes: &[EpisodeResult]) -> Vec<String> {
    let mut used = BTreeSet::new();
    episodes
        .iter()
        .map(|e| {
            let mut base: String = e
                .key
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
                .take(120)
                .collect();
            // A leading dot would make a hidden file (or `..`).
            if base.is_empty() || base.starts_with('.') {
                base.insert(0, '_');
            }
            let mut name = format!("{base}.html");
            let mut n = 2;
            // Compared lowercased: case-insensitive file systems would merge `A` and `a`.
            while !used.insert(name.to_lowercase()) {
                name = format!("{base}-{n}.html");
                n += 1;
            }
            name
        })
        .collect()
}

/// The segments of a stored screenshot path (relative to the results folder), or `None` when the
/// path could leave the folder or is not a plain relative path: empty, absolute (`/x`, `C:\x`,
/// `C:x`), with a backslash, a NUL, or an empty, `.` or `..` segment. Such a screenshot is not
/// shown: the runner never writes one, so it comes from an edited or hostile results folder.
pub fn screenshot_segments(stored: &str) -> Option<Vec<&str>> {
    if stored.is_empty() || stored.contains(['\\', '\0']) || Path::new(stored).has_root() {
        return None;
    }
    let segments: Vec<&str> = stored.split('/').collect();
    if segments.iter().any(|s| s.is_empty() || *s == "." || *s == "..") {
        return None;
    }
    // What the platform makes of it (a Windows drive prefix such as `C:` is not `Normal`).
    if !Path::new(stored).components().all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    Some(segments)
}

/// Percent-encodes one URL path segment: every byte outside the unreserved set
/// `A-Z a-z 0-9 - . _ ~` (so `/`, `%`, `?`, `#`, `:`, quotes, spaces and non-ASCII never reach
/// the URL raw, and a segment can never read as a scheme or a query).
fn encode_segment(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The relative URL from a page in `from_dir` to the file `target` (both absolute and free of
/// `.`/`..`, as canonical paths are): `..` up to their common ancestor, then the target's
/// segments percent-encoded. `None` when they share no root (another Windows drive) or `target`
/// is not below a folder.
pub fn relative_url(from_dir: &Path, target: &Path) -> Option<String> {
    let from: Vec<Component> = from_dir.components().collect();
    let to: Vec<Component> = target.components().collect();
    if !from_dir.is_absolute() || !target.is_absolute() || from.first() != to.first() {
        return None;
    }
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts = Vec::new();
    for c in &from[common..] {
        match c {
            Component::Normal(_) => parts.push("..".to_string()),
            _ => return None,
        }
    }
    let rest = &to[common..];
    if rest.is_empty() {
        return None;
    }
    for c in rest {
        match c {
            Component::Normal(name) => parts.push(encode_segment(name.as_encoded_bytes())),
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// The URL from a page in `pages_dir` to the screenshot stored as `stored`, relative to
/// `results_dir` (both canonical): `None` when the stored path is refused by
/// [`screenshot_segments`].
pub fn screenshot_url(results_dir: &Path, pages_dir: &Path, stored: &str) -> Option<String> {
    let segments = screenshot_segments(stored)?;
    let target = segments.iter().fold(results_dir.to_path_buf(), |p, s| p.join(s));
    relative_url(pages_dir, &target)
}

/// An episode's outcome word, also its CSS class: `success`, `failure` or `infrastructure`.
fn outcome(e: &EpisodeResult) -> &'static str {
    if e.infrastructure_error.is_some() {
        "infrastructure"
    } else if e.success {
        "success"
    } else {
        "failure"
    }
}

fn success_word(success: bool) -> &'static str {
    if success { "success" } else { "failure" }
}

/// A verdict word, also its CSS class: `pass`, `fail` or `none` (no verdict).
fn verdict(passed: Option<bool>) -> &'static str {
    match passed {
        Some(true) => "pass",
        Some(false) => "fail",
        None => "none",
    }
}

/// A wall-clock duration for people: ms below a second, then seconds, minutes, hours.
fn duration(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        60_000..3_600_000 => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1000),
        _ => format!("{} h {} min", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

/// A price in USD, or `-` when unknown: cents for a dollar and more, else four decimals.
fn money(usd: Option<f64>) -> String {
    match usd {
        Some(v) if v >= 1.0 => format!("${v:.2}"),
        Some(v) => format!("${v:.4}"),
        None => "-".to_string(),
    }
}

/// A glossary term with its anchor on the glossary page.
#[derive(Debug, Clone, Serialize)]
struct TermView {
    name: &'static str,
    title: &'static str,
    definition: &'static str,
    /// The anchor, `term-` and the name lowercased with other characters than letters and digits
    /// replaced by `-` (unique: a clash gets a `-N` suffix).
    id: String,
}

fn terms() -> Vec<TermView> {
    let mut used = BTreeSet::new();
    GLOSSARY
        .iter()
        .map(|t| {
            let slug: String = t
                .name
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
                .collect();
            let mut id = format!("term-{slug}");
            let mut n = 2;
            while !used.insert(id.clone()) {
                id = format!("term-{slug}-{n}");
                n += 1;
            }
            TermView { name: t.name, title: t.title, definition: t.definition, id }
        })
        .collect()
}

#[derive(Serialize)]
struct GlossaryPage {
    title: &'static str,
    terms: Vec<TermView>,
    version: &'static str,
}

fn glossary_page() -> GlossaryPage {
    GlossaryPage { title: "phonebench report: glossary", terms: terms(), version: env!("CARGO_PKG_VERSION") }
}

/// A group's figures formatted for display.
#[derive(Serialize)]
struct MetricsView {
    episodes: usize,
    scored: usize,
    infrastructure: usize,
    successes: usize,
    sr: String,
    acp: String,
    spl: String,
    avg_steps: String,
    avg_queries: String,
    uiq: String,
    avg_mcp_calls: String,
    mcp_error_rate: String,
    format_error_rate: String,
    repetition_rate: String,
    prompt_tokens: u64,
    completion_tokens: u64,
    sr_original: String,
    acp_original: String,
    judged: usize,
    judge_sr: String,
    model_calls: u64,
    cost: String,
}

impl From<&Metrics> for MetricsView {
    fn from(m: &Metrics) -> MetricsView {
        MetricsView {
            episodes: m.episodes,
            scored: m.scored,
            infrastructure: m.infrastructure,
            successes: m.successes,
            sr: percent(m.sr),
            acp: percent(m.acp),
            spl: percent(m.spl),
            avg_steps: number(m.avg_steps, 1),
            avg_queries: number(m.avg_queries, 2),
            uiq: number(m.uiq, 3),
            avg_mcp_calls: number(m.avg_mcp_calls, 2),
            mcp_error_rate: percent(m.mcp_error_rate),
            format_error_rate: percent(m.format_error_rate),
            repetition_rate: percent(m.repetition_rate),
            prompt_tokens: m.prompt_tokens,
            completion_tokens: m.completion_tokens,
            sr_original: percent(m.sr_original),
            acp_original: percent(m.acp_original),
            judged: m.judged,
            judge_sr: percent(m.judge_sr),
            model_calls: m.model_calls,
            cost: money(m.cost_usd),
        }
    }
}

/// The index's optional columns and cards: each is shown only when some episode has its data,
/// so reports of scripted agents and of older results folders look as they did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
struct Columns {
    /// SPHINX's original (unrepaired) score.
    original: bool,
    /// Model-judge verdicts.
    judge: bool,
    /// Model calls.
    calls: bool,
    /// Prices.
    cost: bool,
    /// Token counts.
    tokens: bool,
}

fn columns(episodes: &[EpisodeResult]) -> Columns {
    let any = |f: &dyn Fn(&EpisodeResult) -> bool| episodes.iter().any(f);
    Columns {
        original: any(&|e| e.original.is_some()),
        judge: any(&|e| !e.judge.is_empty()),
        calls: any(&|e| e.model_calls > 0),
        cost: any(&|e| e.cost_usd.is_some()),
        tokens: any(&|e| e.usage.prompt_tokens + e.usage.completion_tokens > 0),
    }
}

#[derive(Serialize)]
struct GroupView {
    name: String,
    m: MetricsView,
}

/// A row of the index's episode table.
#[derive(Serialize)]
struct EpisodeRow<'a> {
    key: &'a str,
    /// File name of its page inside [`EPISODES_DIR`].
    page: &'a str,
    category: &'a str,
    outcome: &'static str,
    acp: String,
    steps: u32,
    reference_steps: u32,
    queries: u32,
    mcp_calls: u32,
    mcp_errors: u32,
    format_errors: u32,
    repetitions: u32,
    end: &'a str,
    wall: String,
    /// The original (unrepaired) outcome, `-` when the agent does not repair.
    original: &'static str,
    /// The judges' joint verdict: `pass`, `fail`, `none` (no verdict) or `-` (not judged).
    judge: &'static str,
    model_calls: u32,
    cost: String,
    prompt_tokens: u64,
    completion_tokens: u64,
}

#[derive(Serialize)]
struct InfrastructureRow<'a> {
    key: &'a str,
    page: &'a str,
    error: &'a str,
}

/// What running this folder's episodes spent (from `ResultsDb::accounting`; differs between runs).
#[derive(Serialize)]
struct SpendView {
    calls: u32,
    cached_calls: u32,
    new_prompt_tokens: u64,
    new_completion_tokens: u64,
    new_cost: String,
    model_time: String,
}

#[derive(Serialize)]
struct IndexPage<'a> {
    title: String,
    config: Option<&'a RunConfig>,
    overall: MetricsView,
    columns: Columns,
    categories: Vec<GroupView>,
    tags: Vec<GroupView>,
    sr_by_category: Option<chart::BarChart>,
    sr_by_tag: Option<chart::BarChart>,
    episodes: Vec<EpisodeRow<'a>>,
    infrastructure: Vec<InfrastructureRow<'a>>,
    wall_total: String,
    spend: Option<SpendView>,
    robustness: Option<RobustnessView>,
    /// The folder holds run episodes (a folder of probes alone has none to summarize).
    has_run: bool,
    /// The capability probes' figures and profile, when the folder holds probe results.
    capabilities: Option<CapabilitiesView>,
    version: &'static str,
}

/// The capability section: the radar, the profile and every probe figure.
#[derive(Serialize)]
struct CapabilitiesView {
    model: String,
    /// The radar chart, an SVG element built by `phonebench_probe::radar_svg` (labels escaped
    /// there; marked safe in the template).
    radar: String,
    profile: Vec<(String, String)>,
    probes: Vec<String>,
    figures: Vec<FigureRow>,
    infrastructure: usize,
}

#[derive(Serialize)]
struct FigureRow {
    probe: &'static str,
    data: &'static str,
    mode: &'static str,
    measure: String,
    n: u32,
    original: String,
    repaired: String,
}

fn capabilities_view(
    model: &str,
    configs: &[phonebench_probe::ProbeConfig],
    results: &[phonebench_probe::ProbeResult],
    episodes: &[EpisodeResult],
) -> CapabilitiesView {
    let profile = phonebench_probe::profile(model, results, &[episodes.to_vec()]);
    CapabilitiesView {
        model: model.to_string(),
        radar: phonebench_probe::radar_svg(std::slice::from_ref(&profile)),
        profile: phonebench_probe::DIMENSIONS
            .iter()
            .zip(&profile.values)
            .map(|((_, label), v)| (label.to_string(), percent(*v)))
            .collect(),
        probes: configs
            .iter()
            .map(|c| {
                let modes: Vec<&str> = c.modes.iter().map(|m| m.name()).collect();
                let data: Vec<&str> = c.data.iter().map(|d| d.name()).collect();
                format!(
                    "{}: {} data, modes {}, {} parsing{}",
                    c.probe.name(),
                    data.join("+"),
                    modes.join(", "),
                    c.settings.parsing.name(),
                    if c.settings.repair { ", repair on" } else { ", no repair" }
                )
            })
            .collect(),
        figures: phonebench_probe::score::figures(results)
            .into_iter()
            .map(|f| FigureRow {
                probe: f.probe.name(),
                data: f.source.name(),
                mode: f.mode.name(),
                measure: f.measure,
                n: f.n,
                original: percent(f.original),
                repaired: percent(f.repaired),
            })
            .collect(),
        infrastructure: results.iter().filter(|r| !r.scored()).count(),
    }
}

/// The robustness table with its figures as text.
#[derive(Serialize)]
struct RobustnessView {
    levels: Vec<String>,
    rows: Vec<RobustnessRowView>,
}

#[derive(Serialize)]
struct RobustnessRowView {
    name: String,
    sr: Vec<String>,
    delta: Vec<String>,
}

fn robustness_view(episodes: &[EpisodeResult]) -> Option<RobustnessView> {
    let r = phonebench_runner::metrics::robustness(episodes)?;
    Some(RobustnessView {
        levels: r.levels,
        rows: r
            .rows
            .into_iter()
            .map(|row| RobustnessRowView {
                name: row.name,
                sr: row.sr.iter().map(|s| percent(*s)).collect(),
                delta: row
                    .delta
                    .iter()
                    .map(|d| d.map_or_else(|| "-".to_string(), |d| format!("{:+.1}", d * 100.0)))
                    .collect(),
            })
            .collect(),
    })
}

fn groups(groups: &[phonebench_runner::metrics::Group]) -> Vec<GroupView> {
    groups.iter().map(|g| GroupView { name: g.name.clone(), m: MetricsView::from(&g.metrics) }).collect()
}

fn sr_rows(groups: &[phonebench_runner::metrics::Group]) -> Vec<(String, Option<f64>)> {
    groups.iter().map(|g| (g.name.clone(), g.metrics.sr)).collect()
}

fn spend(accounting: &BTreeMap<String, Accounting>) -> Option<SpendView> {
    let mut total = Accounting::default();
    for a in accounting.values() {
        total.add(a);
    }
    (total.calls > 0).then(|| SpendView {
        calls: total.calls,
        cached_calls: total.cached_calls,
        new_prompt_tokens: total.new_prompt_tokens,
        new_completion_tokens: total.new_completion_tokens,
        new_cost: money(Some(total.new_cost_usd)),
        model_time: duration(total.model_latency_ms),
    })
}

fn index_page<'a>(
    config: Option<&'a RunConfig>,
    episodes: &'a [EpisodeResult],
    pages: &'a [String],
    wall: &BTreeMap<String, u64>,
    accounting: &BTreeMap<String, Accounting>,
) -> IndexPage<'a> {
    let summary: Summary = summarize(episodes);
    let title = match config {
        Some(c) => format!("phonebench report: {} / {}", c.suite, c.agent),
        None => "phonebench report".to_string(),
    };
    IndexPage {
        title,
        config,
        has_run: true,
        capabilities: None,
        overall: MetricsView::from(&summary.overall),
        columns: columns(episodes),
        categories: groups(&summary.categories),
        tags: groups(&summary.tags),
        sr_by_category: chart::bar_chart("SR per category", &sr_rows(&summary.categories)),
        sr_by_tag: chart::bar_chart("SR per tag", &sr_rows(&summary.tags)),
        episodes: episodes
            .iter()
            .zip(pages)
            .map(|(e, page)| EpisodeRow {
                key: &e.key,
                page,
                category: &e.category,
                outcome: outcome(e),
                acp: percent(Some(e.acp)),
                steps: e.steps,
                reference_steps: e.reference_steps,
                queries: e.queries,
                mcp_calls: e.mcp_calls,
                mcp_errors: e.mcp_errors,
                format_errors: e.format_errors,
                repetitions: e.repetitions,
                end: &e.end,
                wall: wall.get(&e.key).map_or_else(|| "-".to_string(), |&ms| duration(ms)),
                original: e.original.map_or("-", |o| success_word(o.success)),
                judge: if e.judge.is_empty() { "-" } else { verdict(e.judge_passed()) },
                model_calls: e.model_calls,
                cost: money(e.cost_usd),
                prompt_tokens: e.usage.prompt_tokens,
                completion_tokens: e.usage.completion_tokens,
            })
            .collect(),
        infrastructure: episodes
            .iter()
            .zip(pages)
            .filter_map(|(e, page)| {
                e.infrastructure_error.as_deref().map(|error| InfrastructureRow { key: &e.key, page, error })
            })
            .collect(),
        wall_total: duration(wall.values().sum()),
        spend: spend(accounting),
        robustness: robustness_view(episodes),
        version: env!("CARGO_PKG_VERSION"),
    }
}

/// A criterion verdict with its children always present (the stored form omits an empty list,
/// which strict templates would read as an error).
#[derive(Serialize)]
struct CriterionView<'a> {
    label: &'a str,
    passed: bool,
    step: Option<usize>,
    detail: &'a str,
    children: Vec<CriterionView<'a>>,
}

impl<'a> From<&'a CriterionResult> for CriterionView<'a> {
    fn from(c: &'a CriterionResult) -> CriterionView<'a> {
        CriterionView {
            label: &c.label,
            passed: c.passed,
            step: c.step,
            detail: &c.detail,
            // Recursion depth is the criteria's nesting depth, which task authors write by hand
            // (a few levels), not something an agent controls.
            children: c.children.iter().map(CriterionView::from).collect(),
        }
    }
}

/// The touch point's position over a screenshot, as CSS percentages of its width and height.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct Marker {
    left: String,
    top: String,
}

/// Where the touch point `(x, y)` lies on a `width × height` screen, in percent; `None` when
/// the size is unknown or zero or the point is off the screen (the point is still listed).
fn marker(point: Option<(i32, i32)>, size: Option<(u32, u32)>) -> Option<Marker> {
    let ((x, y), (w, h)) = (point?, size?);
    if w == 0 || h == 0 || x < 0 || y < 0 || x as u32 > w || y as u32 > h {
        return None;
    }
    let pct = |v: i32, of: u32| format!("{:.2}%", f64::from(v) * 100.0 / f64::from(of));
    Some(Marker { left: pct(x, w), top: pct(y, h) })
}

/// A step's screenshot: shown when `url` is set, else a note says why not.
#[derive(Serialize)]
struct ShotView<'a> {
    /// The path as stored, relative to the results folder (shown as text).
    path: &'a str,
    /// The URL from the episode page to the PNG.
    url: Option<String>,
    /// Why it is not shown.
    problem: Option<&'static str>,
    width: u32,
    /// The shown height, from the screen's aspect ratio, when known.
    height: Option<u32>,
    marker: Option<Marker>,
}

fn shot_view<'a>(s: &'a StepResult, screens: &Screens<'_>, last_screen: bool) -> Option<ShotView<'a>> {
    let path = s.screenshot.as_deref()?;
    let (url, problem) = match screenshot_url(&screens.results_canonical, &screens.pages_canonical, path) {
        None => (None, Some("the path leaves the results folder or is not relative")),
        // Checked below the folder as given: the segments were validated above.
        Some(_) if !screens.results.join(path).is_file() => (None, Some("the file is missing")),
        Some(url) => (Some(url), None),
    };
    let height = s
        .screen_size
        .filter(|&(w, h)| w > 0 && h > 0)
        .map(|(w, h)| (u64::from(SHOT_WIDTH) * u64::from(h)).div_ceil(u64::from(w)).min(100_000) as u32);
    Some(ShotView {
        path,
        url,
        problem,
        width: SHOT_WIDTH,
        height,
        // The last screen has no action: a point there would be stale.
        marker: if last_screen { None } else { marker(s.point, s.screen_size) },
    })
}

#[derive(Serialize)]
struct MessageView<'a> {
    role: &'a str,
    text: &'a str,
    images: &'a [String],
}

#[derive(Serialize)]
struct ToolCallView<'a> {
    name: &'a str,
    arguments: &'a str,
}

/// One model call of a step.
#[derive(Serialize)]
struct CallView<'a> {
    purpose: &'a str,
    model: &'a str,
    response: &'a str,
    /// The response is the step's agent output shown above (not repeated).
    response_is_output: bool,
    reasoning: Option<&'a str>,
    tool_calls: Vec<ToolCallView<'a>>,
    prompt: Vec<MessageView<'a>>,
    prompt_tokens: u64,
    completion_tokens: u64,
    cached: bool,
    latency: String,
    cost: String,
}

fn call_view<'a>(c: &'a CallRecord, raw: &str) -> CallView<'a> {
    CallView {
        purpose: &c.purpose,
        model: &c.model,
        response: &c.response,
        response_is_output: !raw.is_empty() && c.response == raw,
        reasoning: c.reasoning.as_deref().filter(|r| !r.is_empty()),
        tool_calls: c
            .tool_calls
            .iter()
            .map(|t| ToolCallView { name: &t.name, arguments: &t.arguments })
            .collect(),
        prompt: c
            .prompt
            .iter()
            .map(|m| MessageView { role: &m.role, text: &m.text, images: &m.images })
            .collect(),
        prompt_tokens: c.usage.prompt_tokens,
        completion_tokens: c.usage.completion_tokens,
        cached: c.cached,
        latency: duration(c.latency_ms),
        cost: money(c.cost_usd),
    }
}

#[derive(Serialize)]
struct StepView<'a> {
    /// The section's anchor: `step-N` in the scored (last) trial, which criteria link to;
    /// `trial-T-step-N` in earlier ones.
    id: String,
    step: u32,
    /// The row after a trial's last turn: the screen it ended on, with no action.
    last_screen: bool,
    app: Option<&'a str>,
    activity: &'a str,
    observation: &'a str,
    raw: &'a str,
    action: Option<String>,
    point: Option<String>,
    hit: Option<&'a str>,
    feedback: Option<&'a str>,
    format_error: Option<&'a str>,
    rejected: Option<&'a str>,
    repaired_from: Option<&'a str>,
    screenshot: Option<ShotView<'a>>,
    calls: Vec<CallView<'a>>,
    mcp: Option<McpView<'a>>,
}

/// An MCP call of a step.
#[derive(Serialize)]
struct McpView<'a> {
    tool: &'a str,
    /// The arguments as one line of JSON.
    arguments: String,
    is_error: bool,
    truncated: bool,
    failure: Option<&'a str>,
    latency_ms: u64,
}

/// A trial's steps with its outcome (from `EpisodeResult::trials`, when stored).
#[derive(Serialize)]
struct TrialView<'a> {
    /// 1-based.
    number: u32,
    /// The scored trial.
    scored: bool,
    outcome: Option<&'static str>,
    acp: Option<String>,
    steps_taken: Option<u32>,
    end: Option<&'a str>,
    steps: Vec<StepView<'a>>,
}

#[derive(Serialize)]
struct JudgeView<'a> {
    name: &'a str,
    verdict: &'static str,
    reason: &'a str,
}

#[derive(Serialize)]
struct ScoreView {
    outcome: &'static str,
    acp: String,
}

#[derive(Serialize)]
struct EpisodePage<'a> {
    e: &'a EpisodeResult,
    outcome: &'static str,
    tags: Vec<String>,
    acp: String,
    wall: String,
    // Fields the stored form omits when empty or zero (strict templates cannot test for them).
    trial_count: usize,
    model_calls: u32,
    repairs: u32,
    cost: String,
    /// SPHINX's original score and the repaired one (`e.success`/`e.acp`), for repairing agents.
    original: Option<ScoreView>,
    repaired: Option<ScoreView>,
    /// The judges' joint verdict, when judged.
    judge: Option<&'static str>,
    judges: Vec<JudgeView<'a>>,
    criteria: Vec<CriterionView<'a>>,
    /// More than one trial: steps are grouped under trial headings.
    multi_trial: bool,
    trials: Vec<TrialView<'a>>,
}

fn episode_page<'a>(
    e: &'a EpisodeResult,
    steps: &'a [StepResult],
    wall_ms: Option<u64>,
    screens: &Screens<'_>,
) -> EpisodePage<'a> {
    // Rows are stored trial after trial; group them by trial number.
    let mut by_trial: BTreeMap<u32, Vec<&StepResult>> = BTreeMap::new();
    for s in steps {
        by_trial.entry(s.trial).or_default().push(s);
    }
    let stored_trials = u32::try_from(e.trials.len()).unwrap_or(u32::MAX);
    let last_trial = by_trial.keys().next_back().copied().unwrap_or(0).max(stored_trials.saturating_sub(1));
    let trials = (0..=last_trial)
        .filter_map(|t| {
            let rows = by_trial.remove(&t).unwrap_or_default();
            let result = e.trials.get(t as usize);
            if rows.is_empty() && result.is_none() {
                return None;
            }
            let scored = t == last_trial;
            // Turns of this trial: the trial's own count, or the episode's for the scored one.
            let turns = result.map_or(if scored { e.steps } else { 0 }, |r| r.steps);
            let count = rows.len();
            let steps = rows
                .into_iter()
                .enumerate()
                .map(|(i, s)| {
                    let last_screen =
                        i + 1 == count && s.step >= turns && s.action.is_none() && s.raw.is_empty();
                    StepView {
                        id: if scored {
                            format!("step-{}", s.step)
                        } else {
                            format!("trial-{}-step-{}", t + 1, s.step)
                        },
                        step: s.step,
                        last_screen,
                        app: s.app.as_deref(),
                        activity: &s.activity,
                        observation: &s.observation,
                        raw: &s.raw,
                        // Compact canonical JSON: one line, the form agents and tools exchange.
                        action: s.action.as_ref().map(|a| a.to_string()),
                        point: s.point.map(|(x, y)| format!("({x}, {y})")),
                        hit: s.hit.as_deref(),
                        feedback: s.feedback.as_deref(),
                        format_error: s.format_error.as_deref(),
                        rejected: s.rejected.as_deref(),
                        repaired_from: s.repaired_from.as_deref(),
                        screenshot: shot_view(s, screens, last_screen),
                        calls: s.calls.iter().map(|c| call_view(c, &s.raw)).collect(),
                        mcp: s.mcp.as_ref().map(|m| McpView {
                            tool: &m.tool,
                            arguments: serde_json::Value::Object(m.arguments.clone()).to_string(),
                            is_error: m.is_error,
                            truncated: m.truncated,
                            failure: m.failure.as_deref(),
                            latency_ms: m.latency_ms,
                        }),
                    }
                })
                .collect();
            Some(TrialView {
                number: t + 1,
                scored,
                outcome: result.map(|r| success_word(r.success)),
                acp: result.map(|r| percent(Some(r.acp))),
                steps_taken: result.map(|r| r.steps),
                end: result.map(|r| r.end.as_str()),
                steps,
            })
        })
        .collect::<Vec<_>>();
    EpisodePage {
        e,
        outcome: outcome(e),
        tags: e
            .tags
            .iter()
            .flat_map(|(axis, values)| values.iter().map(move |v| format!("{axis}={v}")))
            .collect(),
        acp: percent(Some(e.acp)),
        wall: wall_ms.map_or_else(|| "-".to_string(), duration),
        trial_count: e.trials.len(),
        model_calls: e.model_calls,
        repairs: e.repairs,
        cost: money(e.cost_usd),
        original: e
            .original
            .map(|o| ScoreView { outcome: success_word(o.success), acp: percent(Some(o.acp)) }),
        repaired: e
            .original
            .map(|_| ScoreView { outcome: success_word(e.success), acp: percent(Some(e.acp)) }),
        judge: (!e.judge.is_empty()).then(|| verdict(e.judge_passed())),
        judges: e
            .judge
            .iter()
            .map(|j| JudgeView { name: &j.name, verdict: verdict(j.passed), reason: &j.reason })
            .collect(),
        criteria: e.criteria.iter().map(CriterionView::from).collect(),
        multi_trial: trials.len() > 1,
        trials,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{HOSTILE, SCREEN, SHOTS_DIR, SHOTS_PAGE, build_plain_results, build_results};

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn page_names_are_safe_and_unique() {
        let mut a = fixture::episode("contacts/add#0", "completion");
        a.key = "contacts/add#0".to_string();
        let mut b = a.clone();
        b.key = "contacts?add#0".to_string();
        let mut c = a.clone();
        c.key = "../../etc/passwd".to_string();
        let mut d = a.clone();
        d.key = "CONTACTS_ADD_0".to_string();
        let names = page_names(&[a, b, c, d]);
        assert_eq!(
            names,
            [
                "contacts_add_0.html",
                "contacts_add_0-2.html",
                "_.._.._etc_passwd.html",
                "CONTACTS_ADD_0-3.html"
            ]
        );
        assert!(names.iter().all(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))));
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(0), "0 ms");
        assert_eq!(duration(999), "999 ms");
        assert_eq!(duration(1_500), "1.5 s");
        assert_eq!(duration(125_000), "2 min 5 s");
        assert_eq!(duration(3_600_000 + 120_000), "1 h 2 min");
    }

    #[test]
    fn missing_results_are_an_error_naming_the_file() {
        let dir = fixture::temp_dir("missing");
        let err = write_report(&dir, &dir.join("report")).unwrap_err();
        assert!(matches!(err, ReportError::Results(_)), "{err}");
        assert!(err.to_string().contains("results.sqlite"), "{err}");
        assert!(!dir.join("report").exists(), "nothing is written when there are no results");
        fixture::cleanup(&dir);
    }

    #[test]
    fn the_results_are_only_read_even_while_a_run_holds_the_folder() {
        let dir = fixture::build_results("read-only");
        let db = dir.join(phonebench_runner::results::DB_FILE);
        let before = std::fs::read(&db).unwrap();
        // A run holding the folder does not stop a reader (the CLI's `report` takes the lock
        // itself when it writes into the folder).
        let lock = phonebench_runner::ResultsLock::acquire(&dir).unwrap();
        let out = fixture::temp_dir("read-only-out");
        write_report(&dir, &out).unwrap();
        drop(lock);
        assert_eq!(std::fs::read(&db).unwrap(), before, "the database is byte for byte as it was");
        fixture::cleanup(&dir);
        fixture::cleanup(&out);
    }

    #[test]
    fn index_shows_summary_breakdowns_charts_and_links() {
        let dir = build_results("index");
        let files = write_report(&dir, &dir.join("report")).unwrap();
        assert_eq!(files.index, dir.join("report/index.html"));
        assert_eq!(files.episodes.len(), 4);
        let html = read(&files.index);
        // Summary: 3 scored episodes (one infrastructure failure apart), 2 successes.
        for (id, value) in [
            ("sr", "66.7%"),
            ("acp", "77.8%"),
            ("spl", "60.0%"),
            ("steps", "3.7"),
            ("queries", "1.00"),
            ("uiq", "0.500"),
            ("mcp", "0.33"),
            ("format-errors", "9.1%"),
            ("repetitions", "37.5%"),
            ("infrastructure", "1"),
        ] {
            let card = format!("id=\"{id}\"");
            let at = html.find(&card).unwrap_or_else(|| panic!("no {card} in index"));
            let value_at = html[at..].find("class=\"value\"").map(|v| at + v).unwrap();
            assert!(
                html[value_at..value_at + 40].contains(&format!(">{value}<")),
                "{id}: {}",
                &html[at..at + 200]
            );
        }
        // Breakdown rows per category and tag, with SR.
        assert!(html.contains("<td class=\"name\">ask_user</td>"), "{html}");
        assert!(html.contains("<td class=\"name\">apps=single</td>"));
        // Two charts, drawn inline.
        assert_eq!(html.matches("<svg").count(), 2);
        assert!(html.contains("aria-label=\"SR per category\""));
        // Every episode links to its page, and the page exists.
        for path in &files.episodes {
            let name = path.file_name().unwrap().to_str().unwrap();
            assert!(html.contains(&format!("href=\"episodes/{name}\"")), "no link to {name}");
            assert!(path.is_file());
        }
        // The infrastructure failure is listed apart with its error.
        assert!(html.contains("model server unreachable"));
        // Self-contained: no scripts, no external resources.
        assert!(!html.contains("<script"));
        assert!(!html.contains("http://") && !html.contains("https://"), "external URL in index");
        assert!(html.contains("Content-Security-Policy"));
        fixture::cleanup(&dir);
    }

    #[test]
    fn episode_page_shows_criteria_and_steps_escaped() {
        let dir = build_results("episode");
        let files = write_report(&dir, &dir.join("report")).unwrap();
        let page = files.episodes.iter().find(|p| p.to_string_lossy().contains("messages.hostile")).unwrap();
        let html = read(page);
        // The hostile strings appear only escaped, in observations, raw output, answers, goals.
        assert!(!html.contains("<script"), "unescaped script in {}", page.display());
        assert!(!html.contains(HOSTILE), "the hostile string appears unescaped");
        // Every block the templates open is closed once: no extra `</pre>` from the data.
        assert_eq!(html.matches("<pre").count(), html.matches("</pre>").count());
        let escaped = "&lt;&#x2f;pre&gt;&lt;script&gt;alert(1)&lt;&#x2f;script&gt;";
        assert!(
            html.matches(escaped).count() >= 5,
            "expected the hostile string escaped in goal, answer, observation, raw, feedback"
        );
        // Criteria: nested, with verdicts, steps and details.
        assert!(html.contains("class=\"criterion fail\""));
        assert!(html.contains("class=\"criterion pass\""));
        assert!(html.contains("a message was sent"));
        assert!(html.contains("href=\"#step-1\""), "the matched step links to the step");
        assert!(html.contains("sent text differs"));
        // Steps: observation, raw output, parsed action, hit, feedback, format error, rejection.
        assert!(html.contains("id=\"step-0\""));
        assert!(html.contains("{&quot;action&quot;:&quot;tap&quot;,"), "canonical JSON action");
        assert!(html.contains("Button &quot;Send&quot;"));
        assert!(html.contains("expected an action, got prose"));
        assert!(html.contains("no element 99"));
        assert!(html.contains("(540, 1200)"));
        assert!(html.contains("Last screen"));

        // Model calls, prompts, reasoning, image labels, tool calls, judge verdicts and the
        // screenshot path are hostile too: all escaped, none raw.
        let esc = escape(HOSTILE);
        for needle in [
            format!("<pre class=\"reasoning\">reasoning {esc}</pre>"),
            format!("<pre>Goal: {esc}</pre>"),
            format!("<div class=\"image-label\">[image: screen {esc}]</div>"),
            format!("<span class=\"purpose\">grounding {esc}</span>"),
            format!("model {esc}"),
            format!("<pre class=\"response\">response {esc}</pre>"),
            format!("tool call tool {esc}"),
            format!("{{&quot;x&quot;: &quot;{esc}&quot;}}"),
            format!("<span class=\"judge-name\">judge {esc}</span>"),
            format!("reason {esc}"),
            format!("<figcaption>{}</figcaption>", escape(&fixture::hostile_shot())),
        ] {
            assert!(html.contains(&needle), "no {needle} in {}", page.display());
        }
        assert!(html.matches(escaped).count() >= 15, "the hostile string is not escaped everywhere");
        // Its screenshot is shown, the URL percent-encoded: no `<`, `>` or `"` of the path in it.
        let srcs = img_srcs(&html);
        assert_eq!(srcs.len(), 1, "{srcs:?}");
        assert_eq!(
            srcs[0],
            "..&#x2f;..&#x2f;screenshots&#x2f;%3C&#x2f;pre%3E%3Cscript%3Ealert%281%29%3C&#x2f;script%3E.png"
        );
        // Stored paths that leave the folder or name no file are named but never linked.
        assert_eq!(html.matches("the path leaves the results folder or is not relative").count(), 3);
        for path in
            ["..&#x2f;..&#x2f;..&#x2f;etc&#x2f;passwd", "&#x2f;etc&#x2f;passwd", "screenshots\\evil.png"]
        {
            assert!(html.contains(&format!("is not relative): {path}</figcaption>")), "{path} not named");
        }
        assert!(html.contains("(the file is missing): screenshots&#x2f;missing.png</figcaption>"));
        assert!(!html.contains("etc&#x2f;passwd\""), "a refused path reached an attribute");
        // The judge call sits on the last screen; the joint verdict is in the facts.
        assert!(html.contains("<span class=\"purpose\">judge</span>"));
        assert!(html.contains("<dd id=\"judge\"><span class=\"verdict fail\">fail</span>"));
        fixture::cleanup(&dir);
    }

    /// minijinja's HTML escaping, to build expected text.
    fn escape(text: &str) -> String {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#x27;")
            .replace('/', "&#x2f;")
    }

    /// The `src` attributes of the page's images, as written.
    fn img_srcs(html: &str) -> Vec<&str> {
        html.split("<img src=\"").skip(1).map(|rest| &rest[..rest.find('"').unwrap()]).collect()
    }

    /// Resolves an `src` written on a page in `page_dir` to the file it names, the way a browser
    /// does: entities decoded, percent-decoded, `..` applied to the page's folder.
    fn resolve(page_dir: &Path, src: &str) -> PathBuf {
        let url = src.replace("&#x2f;", "/");
        assert!(!url.contains(['&', '<', '>', '"', '\'', ' ', '#', '?', ':']), "unencoded {url}");
        let mut path = page_dir.to_path_buf();
        for segment in url.split('/') {
            if segment == ".." {
                assert!(path.pop());
                continue;
            }
            let bytes = segment.as_bytes();
            let mut decoded = Vec::new();
            let mut i = 0;
            while i < bytes.len() {
                if bytes[i] == b'%' {
                    let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                    decoded.push(u8::from_str_radix(hex, 16).unwrap());
                    i += 3;
                } else {
                    decoded.push(bytes[i]);
                    i += 1;
                }
            }
            path.push(String::from_utf8(decoded).unwrap());
        }
        path
    }

    #[test]
    fn screenshot_paths_are_checked_and_encoded() {
        let ok = |stored| screenshot_segments(stored).is_some();
        assert!(ok("screenshots/contacts.add_0-1a2b3c4d/step-003.png"));
        assert!(ok("a b/ü é #1?.png"));
        assert!(ok("...png"), "dots inside a name are fine");
        for bad in [
            "",
            "..",
            "../x.png",
            "screenshots/../../x.png",
            "screenshots/..",
            "./x.png",
            "a/./x.png",
            "a//x.png",
            "a/",
            "/etc/passwd",
            "//server/share/x.png",
            "a\\b.png",
            "..\\..\\x.png",
            "C:\\x.png",
            "x\0.png",
        ] {
            assert!(!ok(bad), "{bad:?} accepted");
            assert_eq!(screenshot_url(Path::new("/r"), Path::new("/r/report/episodes"), bad), None);
        }
        assert_eq!(encode_segment("az-AZ_09.~".as_bytes()), "az-AZ_09.~");
        assert_eq!(encode_segment("a b#?%:/\"<>".as_bytes()), "a%20b%23%3F%25%3A%2F%22%3C%3E");
        assert_eq!(encode_segment("ü".as_bytes()), "%C3%BC");
    }

    #[test]
    fn screenshot_urls_are_relative_to_the_page() {
        let url = |results: &str, pages: &str, stored: &str| {
            screenshot_url(Path::new(results), Path::new(pages), stored)
        };
        // The default `--out`: the report inside the results folder.
        assert_eq!(
            url("/runs/r1", "/runs/r1/report/episodes", "screenshots/k-1/step-000.png").as_deref(),
            Some("../../screenshots/k-1/step-000.png")
        );
        // `--out` elsewhere: up to the common ancestor, then down, names encoded on the way.
        assert_eq!(
            url("/data/run 1", "/tmp/out/episodes", "screenshots/x.png").as_deref(),
            Some("../../../data/run%201/screenshots/x.png")
        );
        assert_eq!(url("/", "/out/episodes", "s.png").as_deref(), Some("../../s.png"));
        // Spaces, unicode, `#` and `?` in stored names: percent-encoded UTF-8.
        assert_eq!(
            url("/r", "/r/report/episodes", "shots/Zürich café/step #1?.png").as_deref(),
            Some("../../shots/Z%C3%BCrich%20caf%C3%A9/step%20%231%3F.png")
        );
        // Nothing can read as a scheme, even when the results lie below the pages' folder.
        assert_eq!(
            url("/o/episodes", "/o/episodes", "javascript:alert(1)").as_deref(),
            Some("javascript%3Aalert%281%29")
        );
        assert_eq!(url("/o/episodes/res", "/o/episodes", "a.png").as_deref(), Some("res/a.png"));
        // Relative folders are refused (the report passes canonical ones).
        assert_eq!(relative_url(Path::new("out/episodes"), Path::new("/r/a.png")), None);
        assert_eq!(relative_url(Path::new("/r"), Path::new("r/a.png")), None);
        assert_eq!(relative_url(Path::new("/r/a.png"), Path::new("/r/a.png")), None);
    }

    #[test]
    fn touch_markers_are_percentages_of_the_screen() {
        let m = marker(Some((27, 180)), Some((108, 240))).unwrap();
        assert_eq!((m.left.as_str(), m.top.as_str()), ("25.00%", "75.00%"));
        let m = marker(Some((0, 2400)), Some((1080, 2400))).unwrap();
        assert_eq!((m.left.as_str(), m.top.as_str()), ("0.00%", "100.00%"));
        assert_eq!(marker(None, Some((108, 240))), None);
        assert_eq!(marker(Some((1, 1)), None), None, "no size (older results): no marker");
        assert_eq!(marker(Some((1, 1)), Some((0, 240))), None);
        assert_eq!(marker(Some((-1, 5)), Some((108, 240))), None, "off the screen");
        assert_eq!(marker(Some((5, 241)), Some((108, 240))), None, "off the screen");
    }

    /// Every screenshot `src` of the fixture's pages resolves, from the page's folder, to the PNG
    /// the step names, whether the report sits in the results folder or in a folder elsewhere
    /// whose name needs encoding.
    #[test]
    fn screenshot_urls_resolve_from_the_page_to_the_png() {
        let dir = build_results("urls");
        let elsewhere = fixture::temp_dir("urls-out ü #1");
        // Folders given relative to the working directory, as `phonebench report DIR --out X`
        // passes them.
        let relative = |path: &Path| {
            let cwd = std::env::current_dir().unwrap().canonicalize().unwrap();
            let path = path.canonicalize().unwrap();
            let mut up: PathBuf = cwd.components().skip(1).map(|_| "..").collect();
            up.extend(path.components().skip(1));
            up
        };
        for (results, out) in [
            (dir.clone(), dir.join("report")),
            (dir.clone(), elsewhere.join("nested report")),
            (relative(&dir), relative(&elsewhere).join("relative report")),
        ] {
            let files = write_report(&results, &out).unwrap();
            let page = files.episodes.iter().find(|p| p.ends_with(SHOTS_PAGE)).unwrap();
            let html = read(page);
            let srcs = img_srcs(&html);
            assert_eq!(srcs.len(), 2, "{srcs:?}");
            for (n, src) in srcs.iter().enumerate() {
                let file = resolve(&page.parent().unwrap().canonicalize().unwrap(), src);
                let expected = dir.join(format!("{SHOTS_DIR}/step-{n:03}.png"));
                assert_eq!(file.canonicalize().unwrap(), expected.canonicalize().unwrap(), "{src}");
                // The full PNG is a click away.
                assert!(html.contains(&format!("<a class=\"shot-frame\" href=\"{src}\"")));
            }
            // Shown 270 px wide, with the screen's aspect ratio; the touch point marked in %.
            let height = SHOT_WIDTH * SCREEN.1 / SCREEN.0;
            assert!(html.contains(&format!("width=\"270\" height=\"{height}\"")), "no sized img");
            assert_eq!(html.matches("class=\"touch\"").count(), 1);
            assert!(html.contains("<span class=\"touch\" style=\"left: 25.00%; top: 75.00%\""));
            let hostile = files.episodes.iter().find(|p| p.ends_with("messages.hostile_0.html")).unwrap();
            let src = img_srcs(&read(hostile))[0].to_string();
            let file = resolve(&hostile.parent().unwrap().canonicalize().unwrap(), &src);
            assert_eq!(
                file.canonicalize().unwrap(),
                dir.join(fixture::hostile_shot()).canonicalize().unwrap()
            );
        }
        fixture::cleanup(&elsewhere);
        fixture::cleanup(&dir);
    }

    #[test]
    fn episode_page_shows_screenshots_calls_repairs_and_scores() {
        let dir = build_results("calls");
        let files = write_report(&dir, &dir.join("report")).unwrap();
        let page = files.episodes.iter().find(|p| p.ends_with(SHOTS_PAGE)).unwrap();
        let html = read(page);
        for needle in [
            // SPHINX's two scores and the model calls in the facts.
            "<dd id=\"score-repaired\"><span class=\"verdict pass\">success</span>, ACP 100.0% (1 output(s) repaired)",
            "<dd id=\"score-original\"><span class=\"verdict fail\">failure</span>, ACP 0.0%",
            "<dd id=\"model-calls\">3 (cost $0.0015)</dd>",
            // The repaired step.
            "original output did not parse: expected an action, got prose; repaired",
            // Each call: purpose, model, tokens, cache, latency, cost; reasoning shown.
            "<span class=\"purpose\">action</span> call · mock-vision-1 · 400 prompt + 20 completion tokens · cached no · 1.2 s · cost $0.0005",
            "<span class=\"purpose\">repair</span> call · mock-vision-1 · 150 prompt + 5 completion tokens · cached yes · 3 ms · cost $0.0005",
            "<pre class=\"reasoning\">The Add button opens the new-contact form.</pre>",
            // A response other than the agent output is shown; the same one is not repeated.
            "<pre class=\"response\">I think the Add button is next.</pre>",
            "<span class=\"muted\">the agent output above</span>",
            // The prompt, collapsed, role by role, with image labels.
            "<details class=\"prompt\"><summary>Prompt (2 message(s))</summary>",
            "<span class=\"role\">system</span><pre>You operate an Android phone. Answer with one action.</pre>",
            "<div class=\"image-label\">[image: screen 0]</div>",
            "<figcaption>screenshots&#x2f;contacts add#0 ü&#x2f;step-000.png</figcaption>",
        ] {
            assert!(html.contains(needle), "no {needle} in {}", page.display());
        }
        assert!(!html.contains("Trial 1"), "one trial: no trial headings");

        // Two trials: grouped under headings with their outcomes; the scored one keeps the
        // `step-N` anchors the criteria link to.
        let page = files.episodes.iter().find(|p| p.ends_with("settings.wifi_0.html")).unwrap();
        let html = read(page);
        let first = html
            .find("<h3 class=\"trial\" id=\"trial-1\">Trial 1 <span class=\"badge failure\">failure</span>")
            .unwrap();
        let second = html
            .find("<h3 class=\"trial\" id=\"trial-2\">Trial 2 <span class=\"badge success\">success</span>")
            .unwrap();
        assert!(html[second..].contains("ACP 100.0% · 2 step(s) · finished · scored"));
        let ids = |from: usize, to: usize| -> Vec<&str> {
            html[from..to]
                .split("<section class=\"step\" id=\"")
                .skip(1)
                .map(|r| &r[..r.find('"').unwrap()])
                .collect()
        };
        assert_eq!(ids(first, second), ["trial-1-step-0", "trial-1-step-1"]);
        assert_eq!(ids(second, html.len()), ["step-0", "step-1", "step-2"]);
        assert!(html.contains("href=\"#step-1\""));
        assert_eq!(html.matches("Last screen").count(), 2, "each trial ends on its last screen");
        assert!(html.contains("<h4>Step 0"), "steps are headed below their trial");
        // The reflection sits on trial 1's last screen, the judge on trial 2's.
        let reflection = html.find("<span class=\"purpose\">reflection</span>").unwrap();
        let judge = html.find("<span class=\"purpose\">judge</span>").unwrap();
        assert!(first < reflection && reflection < second && second < judge);
        assert!(html.contains("<dd id=\"judge\"><span class=\"verdict pass\">pass</span>"));
        assert!(html.contains("<span class=\"judge-name\">the Wi-Fi toggle reads on</span>: <span class=\"text judge-reason\">The switch shows On.</span>"));
        assert!(html.contains("<dt>trials</dt><dd>2 (the last is scored)</dd>"));
        fixture::cleanup(&dir);
    }

    /// The value shown by the card with this `id`.
    fn card<'h>(html: &'h str, id: &str) -> Option<&'h str> {
        let at = html.find(&format!("<div class=\"card \" id=\"{id}\">"))?;
        let value = at + html[at..].find("<div class=\"value\">")? + "<div class=\"value\">".len();
        Some(&html[value..value + html[value..].find('<')?])
    }

    #[test]
    fn index_shows_new_columns_and_spend_only_when_episodes_have_them() {
        let rich = build_results("columns-rich");
        let plain = build_plain_results("columns-plain");
        let rich_html = read(&write_report(&rich, &rich.join("report")).unwrap().index);
        let plain_files = write_report(&plain, &plain.join("report")).unwrap();
        let plain_html = read(&plain_files.index);

        // Header cells of the optional columns, in the breakdown tables and the episode table.
        let optional = [
            ("SR-orig", "term-sr-orig"),
            ("judge SR", "term-judge"),
            ("original", "term-sr-orig"),
            ("judge", "term-judge"),
        ];
        for (label, id) in optional {
            let th = format!("<a href=\"glossary.html#{id}\" title=\"");
            let header = format!("\">{}</a></th>", escape(label));
            assert!(rich_html.contains(&th) && rich_html.contains(&header), "no {label} column");
            assert!(!plain_html.contains(&header), "{label} column without data");
        }
        // Calls and cost link to their glossary terms too.
        let calls = "<a href=\"glossary.html#term-calls\" title=\"model calls\">model calls</a></th>";
        let cost = "<a href=\"glossary.html#term-cost\" title=\"price of the tokens\">cost</a></th>";
        assert_eq!(rich_html.matches(calls).count(), 3, "{rich_html}");
        assert_eq!(rich_html.matches(cost).count(), 3);
        assert!(!plain_html.contains(calls) && !plain_html.contains(cost));
        // Row cells: the original outcome, the joint judge verdict, calls, cost and tokens.
        assert!(rich_html.contains("<td class=\"name original\">failure</td><td class=\"name judge\">-</td><td>3</td><td>$0.0015</td><td>1200 / 80</td>"), "{rich_html}");
        assert!(rich_html.contains("<td class=\"name original\">-</td><td class=\"name judge\">pass</td><td>5</td><td>$0.0025</td><td>0 / 0</td>"));

        // Cards: SR-orig over the one repairing episode, judge SR over the two judged ones; the
        // cost is unknown because one call of `messages.hostile#0` has no price.
        assert_eq!(card(&rich_html, "sr-original"), Some("0.0%"));
        assert!(
            rich_html.contains("<div class=\"note\">ACP-orig 0.0%; SR above is the repaired figure</div>")
        );
        assert_eq!(card(&rich_html, "judge-sr"), Some("50.0%"));
        assert_eq!(card(&rich_html, "model-calls"), Some("11"));
        assert_eq!(card(&rich_html, "cost"), Some("-"));
        // This folder's spend, from the accounting table: 11 calls, 1 from the cache.
        assert!(rich_html.contains("<h3 id=\"spend\">This run's model spend</h3>"));
        assert_eq!(card(&rich_html, "spend-calls"), Some("11"));
        assert_eq!(card(&rich_html, "spend-cached"), Some("1"));
        assert_eq!(card(&rich_html, "spend-tokens"), Some("4000 &#x2f; 200"));
        assert_eq!(card(&rich_html, "spend-cost"), Some("$0.0045"));
        assert_eq!(card(&rich_html, "spend-latency"), Some("12.5 s"));
        for id in ["sr-original", "judge-sr", "model-calls", "cost", "spend-calls"] {
            assert_eq!(card(&plain_html, id), None, "{id} card without data");
        }
        assert!(!plain_html.contains("id=\"spend\""));
        // The figures every report has are unchanged, their headers still linked.
        assert_eq!(card(&plain_html, "sr"), Some("66.7%"));
        assert!(
            plain_html.contains("<th><a href=\"glossary.html#term-sr\" title=\"success rate\">SR</a></th>")
        );

        // Older results: episode pages without screenshots, calls, trials or judges.
        for page in &plain_files.episodes {
            let html = read(page);
            for absent in [
                "<img",
                "<figure",
                "class=\"calls\"",
                "class=\"trial\"",
                "id=\"judge\"",
                "score-original",
                "model-calls",
            ] {
                assert!(!html.contains(absent), "{absent} in {}", page.display());
            }
        }
        fixture::cleanup(&rich);
        fixture::cleanup(&plain);

        // Each optional column depends on its own data only; tokens too (scripted agents that
        // report none get no tokens column).
        let none = [fixture::episode("a#0", "completion"), fixture::episode("b#0", "completion")];
        assert_eq!(columns(&none), Columns::default());
        let mut some = none.clone();
        some[1].usage.completion_tokens = 1;
        some[0].original = Some(phonebench_runner::results::Score { success: true, acp: 1.0 });
        assert_eq!(columns(&some), Columns { original: true, tokens: true, ..Columns::default() });
        some[1].judge.push(phonebench_runner::results::JudgeResult {
            name: "j".to_string(),
            passed: None,
            reason: String::new(),
        });
        (some[0].model_calls, some[1].cost_usd) = (2, Some(0.0));
        assert_eq!(
            columns(&some),
            Columns { original: true, judge: true, calls: true, cost: true, tokens: true }
        );
        let env = environment().unwrap();
        let html = render(
            &env,
            "index.html",
            &index_page(None, &none, &page_names(&none), &BTreeMap::new(), &BTreeMap::new()),
        )
        .unwrap();
        assert!(!html.contains("tokens (prompt &#x2f; compl.)"), "tokens column without tokens");
        let html = render(
            &env,
            "index.html",
            &index_page(None, &some, &page_names(&some), &BTreeMap::new(), &BTreeMap::new()),
        )
        .unwrap();
        // The category table and the episode table (no tags, so no tag table).
        assert_eq!(html.matches("tokens (prompt &#x2f; compl.)</a></th>").count(), 2);
        assert_eq!(html.matches("<td class=\"name judge\">").count(), 2);
        assert!(html.contains("<td class=\"name judge\">no verdict</td>"), "a judge without verdict");
    }

    #[test]
    fn glossary_page_defines_every_term_and_headers_link_to_it() {
        let dir = build_results("glossary");
        let files = write_report(&dir, &dir.join("report")).unwrap();
        assert_eq!(files.glossary, dir.join("report").join(GLOSSARY_FILE));
        let glossary = read(&files.glossary);
        assert_eq!(glossary.matches("<dt id=\"").count(), GLOSSARY.len());
        for (term, view) in GLOSSARY.iter().zip(terms()) {
            let entry = format!(
                "<dt id=\"{}\"><span class=\"term-name\">{}</span> — {}</dt>\n<dd>{}</dd>",
                view.id,
                escape(term.name),
                escape(term.title),
                escape(term.definition)
            );
            assert!(glossary.contains(&entry), "glossary lacks {entry}");
        }
        let ids: BTreeSet<String> = terms().into_iter().map(|t| t.id).collect();
        assert_eq!(ids.len(), GLOSSARY.len(), "anchors are unique");
        assert!(glossary.contains("Content-Security-Policy") && !glossary.contains("<script"));

        // The summary links the glossary; every header link lands on an entry.
        let index = read(&files.index);
        assert!(index.contains("<a href=\"glossary.html\" id=\"glossary-link\">glossary</a>"));
        let links: Vec<&str> =
            index.split("href=\"glossary.html#").skip(1).map(|r| &r[..r.find('"').unwrap()]).collect();
        assert!(links.len() >= 30, "{links:?}");
        for id in &links {
            assert!(ids.contains(*id), "{id} is no glossary entry");
        }
        for id in ["term-sr", "term-acp", "term-spl", "term-uiq", "term-fmt-err", "term-repeat", "term-infra"]
        {
            assert!(links.contains(&id), "no header links {id}");
        }
        fixture::cleanup(&dir);
    }

    #[test]
    fn report_is_deterministic() {
        let dir = build_results("determinism");
        let a = write_report(&dir, &dir.join("a")).unwrap();
        let b = write_report(&dir, &dir.join("b")).unwrap();
        assert_eq!(read(&a.index), read(&b.index));
        assert_eq!(read(&a.glossary), read(&b.glossary));
        for (x, y) in a.episodes.iter().zip(&b.episodes) {
            assert_eq!(read(x), read(y));
        }
        fixture::cleanup(&dir);
    }

    #[test]
    fn templates_escape_hostile_task_metadata_in_charts_and_tables() {
        let dir = build_results("metadata");
        let files = write_report(&dir, &dir.join("report")).unwrap();
        let html = read(&files.index);
        // The fixture's hostile tag value reaches a chart label, a tooltip and a table cell.
        assert!(!html.contains("<script"));
        assert!(html.matches("intent=&lt;&#x2f;pre&gt;&lt;script&gt;").count() >= 3, "{html}");
        assert!(HOSTILE.contains("<script>"));
        fixture::cleanup(&dir);
    }
}
