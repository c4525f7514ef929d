//! Static HTML reports of a run (BRIEF §7): `index.html` with the summary figures, breakdowns per
//! category and per tag, SR bar charts and a table of every episode, plus one page per episode
//! with its criteria and every step.
//!
//! The report is self-contained: inline CSS, inline SVG, no script and no external URL, so it
//! opens from a file system, an archive or a CI artifact. A Content-Security-Policy meta tag
//! forbids scripts and any fetch, so even an escaping bug could not run agent-written script.
//!
//! Escaping: everything reaches the page through minijinja templates named `*.html`, which
//! HTML-escape every value; nothing is marked safe. Observations, agent output, answers, goals,
//! criterion details and task metadata are all treated as hostile.

mod chart;
#[cfg(test)]
mod fixture;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use minijinja::value::Serde;
use minijinja::{Environment, UndefinedBehavior};
use phonebench_runner::metrics::{Metrics, Summary, number, percent, summarize};
use phonebench_runner::results::{
    CriterionResult, EpisodeResult, ResultsDb, ResultsError, RunConfig, StepResult,
};
use serde::Serialize;

/// The index page's file name inside the output folder.
pub const INDEX_FILE: &str = "index.html";
/// The folder of episode pages inside the output folder.
pub const EPISODES_DIR: &str = "episodes";

/// The files a report consists of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportFiles {
    /// `OUT/index.html`.
    pub index: PathBuf,
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

/// Reads `results_dir/results.sqlite` and writes the report into `out_dir` (created if needed;
/// files of an earlier report there are overwritten).
pub fn write_report(results_dir: &Path, out_dir: &Path) -> Result<ReportFiles, ReportError> {
    let db = ResultsDb::open_existing(results_dir)?;
    let config = db.config()?;
    let episodes = db.episodes()?;
    let wall = db.wall_times()?;
    let pages = page_names(&episodes);
    let env = environment()?;

    let episodes_dir = out_dir.join(EPISODES_DIR);
    std::fs::create_dir_all(&episodes_dir)
        .map_err(|source| ReportError::Io { path: episodes_dir.clone(), source })?;
    let mut files = Vec::with_capacity(episodes.len());
    for (episode, page) in episodes.iter().zip(&pages) {
        let steps = db.steps(&episode.key)?;
        let html =
            render(&env, "episode.html", &episode_page(episode, &steps, wall.get(&episode.key).copied()))?;
        let path = episodes_dir.join(page);
        write(&path, &html)?;
        files.push(path);
    }
    let index = out_dir.join(INDEX_FILE);
    write(&index, &render(&env, "index.html", &index_page(config.as_ref(), &episodes, &pages, &wall))?)?;
    Ok(ReportFiles { index, episodes: files })
}

fn write(path: &Path, text: &str) -> Result<(), ReportError> {
    std::fs::write(path, text).map_err(|source| ReportError::Io { path: path.to_path_buf(), source })
}

const TEMPLATES: [(&str, &str); 4] = [
    ("layout.html", include_str!("../templates/layout.html")),
    ("macros.html", include_str!("../templates/macros.html")),
    ("index.html", include_str!("../templates/index.html")),
    ("episode.html", include_str!("../templates/episode.html")),
];

/// The template environment. Names end in `.html`, so minijinja's default callback turns HTML
/// auto-escaping on for all of them; strict undefined makes a misspelt field an error in the
/// tests instead of a silently empty cell.
fn environment() -> Result<Environment<'static>, ReportError> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    for (name, source) in TEMPLATES {
        env.add_template(name, source)
            .map_err(|source| ReportError::Template { template: name.to_string(), source })?;
    }
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

/// A wall-clock duration for people: ms below a second, then seconds, minutes, hours.
fn duration(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        60_000..3_600_000 => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1000),
        _ => format!("{} h {} min", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
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
    format_error_rate: String,
    repetition_rate: String,
    prompt_tokens: u64,
    completion_tokens: u64,
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
            format_error_rate: percent(m.format_error_rate),
            repetition_rate: percent(m.repetition_rate),
            prompt_tokens: m.prompt_tokens,
            completion_tokens: m.completion_tokens,
        }
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
    format_errors: u32,
    repetitions: u32,
    end: &'a str,
    wall: String,
}

#[derive(Serialize)]
struct InfrastructureRow<'a> {
    key: &'a str,
    page: &'a str,
    error: &'a str,
}

#[derive(Serialize)]
struct IndexPage<'a> {
    title: String,
    config: Option<&'a RunConfig>,
    overall: MetricsView,
    categories: Vec<GroupView>,
    tags: Vec<GroupView>,
    sr_by_category: Option<chart::BarChart>,
    sr_by_tag: Option<chart::BarChart>,
    episodes: Vec<EpisodeRow<'a>>,
    infrastructure: Vec<InfrastructureRow<'a>>,
    wall_total: String,
    version: &'static str,
}

fn groups(groups: &[phonebench_runner::metrics::Group]) -> Vec<GroupView> {
    groups.iter().map(|g| GroupView { name: g.name.clone(), m: MetricsView::from(&g.metrics) }).collect()
}

fn sr_rows(groups: &[phonebench_runner::metrics::Group]) -> Vec<(String, Option<f64>)> {
    groups.iter().map(|g| (g.name.clone(), g.metrics.sr)).collect()
}

fn index_page<'a>(
    config: Option<&'a RunConfig>,
    episodes: &'a [EpisodeResult],
    pages: &'a [String],
    wall: &BTreeMap<String, u64>,
) -> IndexPage<'a> {
    let summary: Summary = summarize(episodes);
    let title = match config {
        Some(c) => format!("phonebench report: {} / {}", c.suite, c.agent),
        None => "phonebench report".to_string(),
    };
    IndexPage {
        title,
        config,
        overall: MetricsView::from(&summary.overall),
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
                format_errors: e.format_errors,
                repetitions: e.repetitions,
                end: &e.end,
                wall: wall.get(&e.key).map_or_else(|| "-".to_string(), |&ms| duration(ms)),
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

#[derive(Serialize)]
struct StepView<'a> {
    step: u32,
    /// The row after the last turn: the screen the episode ended on, with no action.
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
}

#[derive(Serialize)]
struct EpisodePage<'a> {
    e: &'a EpisodeResult,
    outcome: &'static str,
    tags: Vec<String>,
    acp: String,
    wall: String,
    criteria: Vec<CriterionView<'a>>,
    steps: Vec<StepView<'a>>,
}

fn episode_page<'a>(e: &'a EpisodeResult, steps: &'a [StepResult], wall_ms: Option<u64>) -> EpisodePage<'a> {
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
        criteria: e.criteria.iter().map(CriterionView::from).collect(),
        steps: steps
            .iter()
            .map(|s| StepView {
                step: s.step,
                last_screen: s.step >= e.steps && s.action.is_none() && s.raw.is_empty(),
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
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{HOSTILE, build_results};

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
        fixture::cleanup(&dir);
    }

    #[test]
    fn report_is_deterministic() {
        let dir = build_results("determinism");
        let a = write_report(&dir, &dir.join("a")).unwrap();
        let b = write_report(&dir, &dir.join("b")).unwrap();
        assert_eq!(read(&a.index), read(&b.index));
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
