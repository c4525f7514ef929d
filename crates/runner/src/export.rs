//! Training data from a results folder: `phonebench export`.
//!
//! A run folder's `results.sqlite` holds every episode with its steps (observation text, the
//! agent's raw output, the parsed canonical action, the saved screenshot). This module turns
//! the verifier-confirmed episodes (the task's criteria passed: [`EpisodeResult::success`]) into
//! JSON Lines a trainer loads directly:
//!
//! - [`ExportFormat::Sft`]: one chat per agent step in LLaMA-Factory's ShareGPT-with-images
//!   convention (`messages` + `images`, one `<image>` per image), which TRL's SFT trainer reads
//!   too. The assistant turn is the stored action printed in the chosen [`Syntax`], so parsing
//!   it back gives the stored action.
//! - [`ExportFormat::Trajectory`]: one record per step with the episode's reward on its last
//!   step, for offline RL and filtering.
//!
//! Beside the file goes a Hugging Face dataset card (`README.md`). The output depends only on
//! the database and the screenshots: records are sorted by episode key then step, and nothing
//! time- or machine-dependent is written, so a re-export is byte-identical.
//!
//! The database and the screenshot paths in it are treated as untrusted: a stored path must be
//! relative, stay inside the run folder and not go through a symbolic link, or the export stops.

use std::fmt;
use std::io::Read as _;
use std::path::{Component, Path, PathBuf};
use std::str::FromStr;

use phonebench_actions::{Action, Syntax, canonical, print_action};
use serde_json::{Value, json};

use crate::record::safe_name;
use crate::results::{
    DB_FILE, EpisodeResult, JSONL_FILE, ResultsDb, ResultsError, ResultsLock, RunConfig, StepResult,
};

/// The folder inside a run folder that exports go to by default.
pub const EXPORT_DIR: &str = "export";
/// The dataset card's file name (what the Hugging Face Hub shows for a dataset).
pub const CARD_FILE: &str = "README.md";
/// A line every card we write holds, so an export never replaces someone else's README.
pub const CARD_MARK: &str = "<!-- written by phonebench export -->";
/// The folder, beside the exported file, that `--images path` copies screenshots into.
pub const IMAGES_DIR: &str = "images";
/// The largest screenshot an export reads: a stored path naming something bigger is refused
/// (ours are a few hundred KiB; this only stops a crafted folder from exhausting memory).
pub const MAX_IMAGE_BYTES: u64 = 64 << 20;
/// The placeholder marking where an image goes in a user turn (LLaMA-Factory's default; TRL's
/// vision collators read the `images` column in the same order).
pub const IMAGE_TOKEN: &str = "<image>";

/// The record layout of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// Chat records for supervised fine-tuning, one per agent step.
    Sft,
    /// Step records with rewards, one per agent step.
    Trajectory,
}

impl ExportFormat {
    /// The name on the command line and in the card.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Sft => "sft",
            ExportFormat::Trajectory => "trajectory",
        }
    }

    /// The file written inside `DIR/export/` when no output file is given.
    pub fn default_file(self) -> &'static str {
        match self {
            ExportFormat::Sft => "sft.jsonl",
            ExportFormat::Trajectory => "trajectory.jsonl",
        }
    }
}

impl fmt::Display for ExportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ExportFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "sft" => Ok(ExportFormat::Sft),
            "trajectory" => Ok(ExportFormat::Trajectory),
            other => Err(format!("unknown export format `{other}`; expected sft or trajectory")),
        }
    }
}

/// How records reference screenshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImageMode {
    /// Copied into `images/` beside the exported file and referenced by relative path.
    #[default]
    Path,
    /// Embedded as `data:image/png;base64,…` strings (one self-contained file).
    Inline,
}

impl ImageMode {
    /// The name on the command line and in the card.
    pub fn name(self) -> &'static str {
        match self {
            ImageMode::Path => "path",
            ImageMode::Inline => "inline",
        }
    }
}

impl FromStr for ImageMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "path" => Ok(ImageMode::Path),
            "inline" => Ok(ImageMode::Inline),
            other => Err(format!("unknown image mode `{other}`; expected path or inline")),
        }
    }
}

/// What to export and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportOptions {
    /// The record layout.
    pub format: ExportFormat,
    /// How screenshots are referenced.
    pub images: ImageMode,
    /// The syntax SFT assistant turns (and the previous actions in user turns) are printed in.
    /// [`Syntax::Auto`] is refused: it names no way of printing.
    pub syntax: Syntax,
    /// Keep every scored episode (failures with reward 0), not only verifier-confirmed ones.
    pub all: bool,
    /// The JSON Lines file; `None` is `DIR/export/<format>.jsonl`.
    pub out: Option<PathBuf>,
}

impl ExportOptions {
    /// Confirmed episodes only, images by path, canonical JSON, the default file.
    pub fn new(format: ExportFormat) -> ExportOptions {
        ExportOptions { format, images: ImageMode::Path, syntax: Syntax::Canonical, all: false, out: None }
    }
}

/// What an export wrote and what it left out.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExportSummary {
    /// The JSON Lines file.
    pub file: PathBuf,
    /// The dataset card.
    pub card: PathBuf,
    /// Lines written.
    pub records: usize,
    /// Episodes stored in the run.
    pub episodes_stored: usize,
    /// Episodes whose steps were exported.
    pub episodes_kept: usize,
    /// Of those, the verifier-confirmed ones.
    pub episodes_confirmed: usize,
    /// Scored episodes whose criteria did not all pass, left out (without `all`).
    pub episodes_failed_left_out: usize,
    /// Episodes that failed for infrastructure reasons: never exported (not the agent's doing).
    pub episodes_infrastructure: usize,
    /// Agent steps of the kept episodes' scored trials.
    pub steps: usize,
    /// SFT: steps left out because the output did not parse (no action to learn from).
    pub steps_format_error: usize,
    /// SFT: steps left out because the chosen syntax cannot express their action.
    pub steps_inexpressible: usize,
    /// Steps of earlier trials (agents that retry), left out: only the scored trial is kept.
    pub steps_earlier_trials: usize,
    /// Images referenced (copied, or embedded).
    pub images: usize,
}

/// Verifier-confirmed episodes of a run, for `phonebench rollouts`' summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RolloutCounts {
    /// Episodes whose criteria all passed.
    pub confirmed: usize,
    /// Episodes scored (infrastructure failures excluded).
    pub scored: usize,
    /// Episodes that failed for infrastructure reasons.
    pub infrastructure: usize,
    /// Agent steps of the confirmed episodes.
    pub confirmed_steps: usize,
}

/// Why an export could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The folder is missing, or holds no results database of ours.
    #[error("{}: not a phonebench run folder ({why}); give the --out folder of `phonebench run` or `phonebench rollouts`", .dir.display())]
    NotARun {
        /// The folder given.
        dir: PathBuf,
        /// What is missing or wrong.
        why: String,
    },
    /// The run stored no episode.
    #[error("{}: the run holds no episodes yet; run `phonebench rollouts --out {}` first", .dir.display(), .dir.display())]
    Empty {
        /// The run folder.
        dir: PathBuf,
    },
    /// Episodes are stored, but the selection keeps none of them.
    #[error("{}: nothing to export: {why}", .dir.display())]
    Nothing {
        /// The run folder.
        dir: PathBuf,
        /// Why every episode was left out.
        why: String,
    },
    /// The results database could not be read.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// A file could not be read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// An output file or folder could not be written.
    #[error("cannot write the export to {}: {source}", .path.display())]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A screenshot path stored in the database is not a plain file inside the run folder.
    #[error("{}: episode `{key}` step {step}: refusing screenshot path `{stored}`: {why}", .db.display())]
    UnsafeScreenshot {
        /// The results database.
        db: PathBuf,
        /// The episode.
        key: String,
        /// The step.
        step: u32,
        /// The path as stored.
        stored: String,
        /// What is wrong with it.
        why: String,
    },
    /// A stored step does not hold what the runner writes (edited, or from another version).
    #[error("{}: episode `{key}` step {step}: {why}", .db.display())]
    BadStep {
        /// The results database.
        db: PathBuf,
        /// The episode.
        key: String,
        /// The step.
        step: u32,
        /// What is wrong.
        why: String,
    },
    /// The options cannot produce a valid export.
    #[error("{0}")]
    Options(String),
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> ExportError + '_ {
    move |source| ExportError::Io { path: path.to_path_buf(), source }
}

fn write_error(path: &Path) -> impl Fn(std::io::Error) -> ExportError + '_ {
    move |source| ExportError::Write { path: path.to_path_buf(), source }
}

/// Opens a run folder's results read-only, telling "not a run folder" apart from a damaged one.
fn open_run(dir: &Path) -> Result<ResultsDb, ExportError> {
    let not_a_run = |why: String| ExportError::NotARun { dir: dir.to_path_buf(), why };
    if !dir.is_dir() {
        return Err(not_a_run(if dir.exists() { "not a folder".into() } else { "no such folder".into() }));
    }
    if !dir.join(DB_FILE).is_file() {
        return Err(not_a_run(format!("it has no {DB_FILE}")));
    }
    match ResultsDb::open_existing(dir) {
        Ok(db) => Ok(db),
        Err(ResultsError::NotOurs { why, .. }) => Err(not_a_run(format!("its {DB_FILE} is not ours: {why}"))),
        Err(e) => Err(e.into()),
    }
}

/// Counts the verifier-confirmed episodes of the run in `dir`.
pub fn rollout_counts(dir: &Path) -> Result<RolloutCounts, ExportError> {
    let db = open_run(dir)?;
    let mut counts = RolloutCounts::default();
    for e in db.episodes()? {
        if e.infrastructure_error.is_some() {
            counts.infrastructure += 1;
            continue;
        }
        counts.scored += 1;
        if e.success {
            counts.confirmed += 1;
            counts.confirmed_steps += e.steps as usize;
        }
    }
    Ok(counts)
}

/// One step ready to be written: the stored row and what the export derived from it.
struct Step<'a> {
    row: &'a StepResult,
    action: Option<Action>,
    /// How the image is referenced in the records (relative path or data URL).
    image: Option<String>,
    /// The screenshot's bytes, to copy to `image` ([`ImageMode::Path`]).
    png: Option<Vec<u8>>,
}

/// Exports the run in `dir` as `options` say: writes the JSON Lines file and the dataset card
/// (both through a temporary file and a rename) and, with [`ImageMode::Path`], the images.
pub fn export(dir: &Path, options: &ExportOptions) -> Result<ExportSummary, ExportError> {
    if options.syntax == Syntax::Auto {
        return Err(ExportError::Options(
            "--syntax auto names no way of printing actions; choose canonical, json, sphinx, androidworld or mobileworld".into(),
        ));
    }
    let db = open_run(dir)?;
    let db_path = dir.join(DB_FILE);
    let config = db.config()?.unwrap_or_default();
    let mut episodes = db.episodes()?;
    if episodes.is_empty() {
        return Err(ExportError::Empty { dir: dir.to_path_buf() });
    }
    // Sorted by key (not task then instance), as the records promise.
    episodes.sort_by(|a, b| a.key.cmp(&b.key));

    let file = match &options.out {
        Some(out) => out.clone(),
        None => dir.join(EXPORT_DIR).join(options.format.default_file()),
    };
    check_out(dir, &file)?;
    if options.out.is_none() {
        refuse_link(&dir.join(EXPORT_DIR))?;
    }
    // Inside the run folder, the export is written under the folder's lock, like the report:
    // never while a run (or `--fresh`, which deletes screenshots) is writing there.
    let _lock = if crate::results::resolve_path(&file).starts_with(crate::results::resolve_path(dir)) {
        Some(ResultsLock::acquire(dir)?)
    } else {
        None
    };
    let out_dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
    let out_dir = if out_dir.as_os_str().is_empty() { PathBuf::from(".") } else { out_dir };

    let mut summary = ExportSummary { episodes_stored: episodes.len(), ..ExportSummary::default() };
    let mut text = String::new();
    let mut out_dir_made = false;
    for episode in &episodes {
        if episode.infrastructure_error.is_some() {
            summary.episodes_infrastructure += 1;
            continue;
        }
        if !episode.success && !options.all {
            summary.episodes_failed_left_out += 1;
            continue;
        }
        let rows = db.steps(&episode.key)?;
        let last_trial = rows.iter().map(|r| r.trial).max().unwrap_or(0);
        // Each trial's rows are its screens: one per agent step, then the screen it ended on,
        // which has no action and is not a step.
        for earlier in 0..last_trial {
            summary.steps_earlier_trials +=
                rows.iter().filter(|r| r.trial == earlier).count().saturating_sub(1);
        }
        let trial: Vec<&StepResult> = rows.iter().filter(|r| r.trial == last_trial).collect();
        // What the runner writes: steps numbered 0, 1, 2… in each trial, observations within
        // the stored cap. Anything else was edited: refused rather than made into records.
        for (i, row) in trial.iter().enumerate() {
            let bad = |why: String| ExportError::BadStep {
                db: db_path.clone(),
                key: episode.key.clone(),
                step: row.step,
                why,
            };
            if row.step as usize != i {
                return Err(bad(format!(
                    "trial {last_trial} has step {} where step {i} belongs (the database was edited?)",
                    row.step
                )));
            }
            if row.observation.len() > crate::episode::MAX_STORED_OBSERVATION_BYTES + 1024 {
                return Err(bad(format!(
                    "the observation is {} bytes, over the {} the runner stores (the database was edited?)",
                    row.observation.len(),
                    crate::episode::MAX_STORED_OBSERVATION_BYTES
                )));
            }
        }
        let n = (episode.steps as usize).min(trial.len().saturating_sub(1));
        let mut steps = Vec::with_capacity(n);
        for row in &trial[..n] {
            let action = stored_action(&db_path, episode, row)?;
            let (image, png) = match &row.screenshot {
                None => (None, None),
                Some(stored) => {
                    let bytes = read_screenshot(dir, &db_path, episode, row.step, stored)?;
                    match options.images {
                        ImageMode::Inline => {
                            (Some(format!("data:image/png;base64,{}", base64(&bytes))), None)
                        }
                        ImageMode::Path => {
                            let name =
                                format!("{IMAGES_DIR}/{}-{:03}.png", safe_name(&episode.key), row.step);
                            (Some(name), Some(bytes))
                        }
                    }
                }
            };
            steps.push(Step { row, action, image, png });
        }
        summary.episodes_kept += 1;
        summary.episodes_confirmed += usize::from(episode.success);
        summary.steps += steps.len();
        let written = match options.format {
            ExportFormat::Sft => sft_records(episode, &steps, options.syntax, &mut text, &mut summary),
            ExportFormat::Trajectory => trajectory_records(episode, &steps, &mut text, &mut summary),
        };
        // Only the images of written records are counted and copied (an SFT step left out
        // takes its screenshot with it). They are written now, not held for the whole run.
        for i in written {
            let step = &steps[i];
            if let Some(name) = &step.image {
                summary.images += 1;
                if let Some(png) = &step.png {
                    let path = out_dir.join(name);
                    if !out_dir_made {
                        let images = out_dir.join(IMAGES_DIR);
                        refuse_link(&images)?;
                        std::fs::create_dir_all(&images).map_err(write_error(&images))?;
                        out_dir_made = true;
                    }
                    // Replaces whatever is there: the same screenshot gives the same bytes.
                    write_new(&path, png)?;
                }
            }
        }
    }
    if summary.records == 0 {
        let why = if summary.episodes_kept == 0 {
            let scored = summary.episodes_stored - summary.episodes_infrastructure;
            if scored == 0 {
                format!(
                    "all {} stored episodes failed for infrastructure reasons (not scored); complete the run with --resume",
                    summary.episodes_stored
                )
            } else {
                format!(
                    "none of the {scored} scored episodes was verifier-confirmed; --all exports failures too (reward 0)"
                )
            }
        } else {
            format!(
                "the {} kept episodes have no step that can be exported ({} format errors, {} actions {} cannot express)",
                summary.episodes_kept,
                summary.steps_format_error,
                summary.steps_inexpressible,
                options.syntax
            )
        };
        return Err(ExportError::Nothing { dir: dir.to_path_buf(), why });
    }

    std::fs::create_dir_all(&out_dir).map_err(write_error(&out_dir))?;
    write_atomically(&file, text.as_bytes())?;
    let card = out_dir.join(CARD_FILE);
    let card_text = dataset_card(&config, options, &summary, &file);
    write_atomically(&card, card_text.as_bytes())?;
    summary.file = file;
    summary.card = card;
    Ok(summary)
}

/// `path` made absolute and with `.` and `..` resolved by its text (a folder that does not
/// exist cannot hide a `..`), then with its longest existing ancestor canonicalised (links in
/// it resolved).
fn real_path(path: &Path) -> PathBuf {
    use std::path::Component;
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut lexical = PathBuf::new();
    for c in absolute.components() {
        match c {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other.as_os_str()),
        }
    }
    let mut existing = lexical.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match existing.file_name() {
            Some(name) => rest.push(name.to_os_string()),
            None => break,
        }
        if !existing.pop() {
            break;
        }
    }
    let mut real = std::fs::canonicalize(&existing).unwrap_or(existing);
    for name in rest.into_iter().rev() {
        real.push(name);
    }
    real
}

/// Refuses an output that could overwrite anything but an earlier export: inside the run
/// folder only `export/` is ours to write; an existing file must be a regular JSON Lines file
/// (an earlier export); a card (`README.md`) already beside it must be one of ours.
fn check_out(dir: &Path, file: &Path) -> Result<(), ExportError> {
    let refuse = |why: String| Err(ExportError::Options(format!("{}: {why}", file.display())));
    let real = real_path(file);
    let run = real_path(dir);
    // Inside the run folder, nothing of the run's own may be written over: its database and
    // journal files, episodes.jsonl, probes.jsonl, the lock, report/ and screenshots/ (checked
    // on the path with `..` and links resolved, so no spelling gets around it).
    if let Ok(inside) = real.strip_prefix(&run) {
        let first = inside
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        let own = [DB_FILE, JSONL_FILE, "probes.jsonl", crate::results::LOCK_FILE, "report", "screenshots"];
        if own.contains(&first.as_str())
            || first.starts_with(&format!("{DB_FILE}-"))
            || inside.as_os_str().is_empty()
        {
            return refuse(format!(
                "--out would write over the run's own `{first}`: refused (choose another file)"
            ));
        }
    }
    if let Ok(meta) = std::fs::symlink_metadata(&real) {
        if !meta.is_file() {
            return refuse(
                "--out names something that is not a regular file (a folder, device or link): refused".into(),
            );
        }
        let mut head = [0u8; 1];
        let looks_like_export = meta.len() == 0
            || std::fs::File::open(&real).and_then(|mut f| std::io::Read::read(&mut f, &mut head)).is_ok()
                && head[0] == b'{';
        if !looks_like_export {
            return refuse("--out exists and is not a JSON Lines export: refused (choose a new file)".into());
        }
    }
    if let Some(parent) = real.parent() {
        let card = parent.join(CARD_FILE);
        if let Ok(text) = std::fs::read_to_string(&card)
            && !text.contains(CARD_MARK)
        {
            return refuse(format!(
                "{} beside it is not a phonebench dataset card and would be replaced: refused (choose another folder)",
                card.display()
            ));
        }
    }
    if file.file_name().is_none() || file.as_os_str().to_string_lossy().ends_with('/') {
        return Err(ExportError::Options(format!("{}: --out must name a file", file.display())));
    }
    if file.is_dir() {
        return Err(ExportError::Options(format!(
            "{}: --out names a folder; give a file name",
            file.display()
        )));
    }
    let resolved = crate::results::resolve_path(file);
    for own in [DB_FILE, JSONL_FILE, "results.sqlite-wal", "results.sqlite-shm", crate::results::LOCK_FILE] {
        if resolved == crate::results::resolve_path(&dir.join(own)) {
            return Err(ExportError::Options(format!(
                "{}: --out would overwrite the run's own {own}; choose another file",
                file.display()
            )));
        }
    }
    if file.file_name().is_some_and(|n| n == CARD_FILE) {
        return Err(ExportError::Options(format!(
            "{}: {CARD_FILE} is the dataset card's name; give the records another file name",
            file.display()
        )));
    }
    Ok(())
}

/// The stored action as an [`Action`], or `None` for a step whose output did not parse.
fn stored_action(
    db: &Path,
    episode: &EpisodeResult,
    row: &StepResult,
) -> Result<Option<Action>, ExportError> {
    match &row.action {
        None => Ok(None),
        Some(value) => {
            canonical::from_canonical_value(value.clone()).map(Some).map_err(|e| ExportError::BadStep {
                db: db.to_path_buf(),
                key: episode.key.clone(),
                step: row.step,
                why: format!("the stored action is not canonical JSON: {e}"),
            })
        }
    }
}

/// Reads a stored screenshot after checking its path: relative, no `..`, no symbolic link on
/// the way, a regular file inside the run folder, at most [`MAX_IMAGE_BYTES`].
fn read_screenshot(
    dir: &Path,
    db: &Path,
    episode: &EpisodeResult,
    step: u32,
    stored: &str,
) -> Result<Vec<u8>, ExportError> {
    let refuse = |why: String| ExportError::UnsafeScreenshot {
        db: db.to_path_buf(),
        key: episode.key.clone(),
        step,
        stored: stored.to_string(),
        why,
    };
    let relative = Path::new(stored);
    if stored.is_empty() || stored.contains('\0') {
        return Err(refuse("it is empty or holds a NUL".into()));
    }
    if stored.contains('\\') {
        return Err(refuse("backslashes are not path separators the runner writes".into()));
    }
    for part in relative.components() {
        match part {
            Component::Normal(_) => {}
            Component::CurDir => {}
            Component::ParentDir => return Err(refuse("it climbs out with `..`".into())),
            Component::RootDir | Component::Prefix(_) => return Err(refuse("it is absolute".into())),
        }
    }
    // Every component is checked without following links, so a link anywhere on the way
    // (a folder or the file itself) is refused rather than followed out of the run folder.
    let mut path = dir.to_path_buf();
    for part in relative.components() {
        let Component::Normal(name) = part else { continue };
        path.push(name);
        let meta = std::fs::symlink_metadata(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                refuse(format!("{} does not exist (the run folder lost its screenshots)", path.display()))
            } else {
                ExportError::Io { path: path.clone(), source: e }
            }
        })?;
        if meta.file_type().is_symlink() {
            return Err(refuse(format!("{} is a symbolic link", path.display())));
        }
    }
    let meta = std::fs::symlink_metadata(&path).map_err(io(&path))?;
    if !meta.file_type().is_file() {
        return Err(refuse(format!("{} is not a regular file", path.display())));
    }
    if meta.len() > MAX_IMAGE_BYTES {
        return Err(refuse(format!("{} is larger than {MAX_IMAGE_BYTES} bytes", path.display())));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(&path)
        .and_then(|f| f.take(MAX_IMAGE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(io(&path))?;
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return Err(refuse(format!("{} grew past {MAX_IMAGE_BYTES} bytes while read", path.display())));
    }
    if !bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Err(refuse(format!("{} is not a PNG", path.display())));
    }
    Ok(bytes)
}

/// `<image>` typed by a task author or shown on a screen would read as a second image slot to
/// a trainer: it is written `< image>` in text fields so the count of slots equals the images.
fn neutralize(text: &str) -> String {
    text.replace(IMAGE_TOKEN, "< image>")
}

/// The system turn: what the agent is and which syntax it answers in.
fn system_prompt(syntax: Syntax) -> String {
    let how = match syntax {
        Syntax::Sphinx => "SPHINX's action syntax, e.g. `click [3]`, `text [3] [hello]`, `press [back]`",
        Syntax::AndroidWorld => "AndroidWorld's JSONAction, e.g. {\"action_type\": \"click\", \"index\": 3}",
        Syntax::MobileWorld => "MobileWorld's JSONAction, e.g. {\"action_type\": \"click\", \"index\": 3}",
        Syntax::Auto | Syntax::Json | Syntax::Canonical => {
            "phonebench's canonical action JSON, e.g. {\"action\":\"tap\",\"target\":{\"index\":3}}"
        }
    };
    format!(
        "You operate an Android phone to reach the user's goal. Each turn you get the goal, your previous actions and the current screen (its screenshot and its elements). Reply with exactly one action, written in {how}; an action names an element by its index or by a point on the screenshot in pixels."
    )
}

/// The user turn of step `i`: goal, the actions so far, the current screen.
fn user_turn(goal: &str, steps: &[Step<'_>], i: usize, syntax: Syntax) -> String {
    let mut text = format!("Goal: {}\n\nPrevious actions:", neutralize(goal));
    if i == 0 {
        text.push_str(" none");
    }
    for (n, step) in steps[..i].iter().enumerate() {
        // A previous action the syntax cannot express is shown as canonical JSON; a format error
        // as what the agent said, so the history is what happened.
        let shown = match &step.action {
            Some(a) => print_action(a, syntax).unwrap_or_else(|_| canonical::to_canonical_json(a)),
            None => format!("(unparseable output: {})", one_line(&step.row.raw)),
        };
        text.push_str(&format!("\n{}. {}", n + 1, neutralize(&shown)));
    }
    text.push_str("\n\nCurrent screen:\n");
    if steps[i].image.is_some() {
        text.push_str(IMAGE_TOKEN);
        text.push('\n');
    }
    text.push_str(&neutralize(&steps[i].row.observation));
    text
}

/// Text on one line, cut to 200 characters.
fn one_line(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut cut: String = flat.chars().take(200).collect();
    if cut.len() < flat.len() {
        cut.push('…');
    }
    cut
}

fn push_line(text: &mut String, record: &Value) {
    // Serializing a `Value` cannot fail (no maps with non-string keys).
    text.push_str(&record.to_string());
    text.push('\n');
}

fn sft_records(
    episode: &EpisodeResult,
    steps: &[Step<'_>],
    syntax: Syntax,
    text: &mut String,
    summary: &mut ExportSummary,
) -> Vec<usize> {
    let system = system_prompt(syntax);
    let mut written = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let Some(action) = &step.action else {
            summary.steps_format_error += 1;
            continue;
        };
        let Ok(assistant) = print_action(action, syntax) else {
            summary.steps_inexpressible += 1;
            continue;
        };
        let images: Vec<&str> = step.image.iter().map(String::as_str).collect();
        let record = json!({
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user_turn(&episode.goal, steps, i, syntax)},
                {"role": "assistant", "content": assistant},
            ],
            "images": images,
            "episode": episode.key,
            "task_id": episode.task_id,
            "step": step.row.step,
        });
        push_line(text, &record);
        summary.records += 1;
        written.push(i);
    }
    written
}

fn trajectory_records(
    episode: &EpisodeResult,
    steps: &[Step<'_>],
    text: &mut String,
    summary: &mut ExportSummary,
) -> Vec<usize> {
    let reward = if episode.success { 1.0 } else { 0.0 };
    for (i, step) in steps.iter().enumerate() {
        let last = i + 1 == steps.len();
        // Re-printed from the parsed action, so the object is canonical whatever the stored text.
        let action = step
            .action
            .as_ref()
            .map(|a| serde_json::from_str::<Value>(&canonical::to_canonical_json(a)).unwrap_or(Value::Null))
            .unwrap_or(Value::Null);
        let record = json!({
            "episode": episode.key,
            "task_id": episode.task_id,
            "step": step.row.step,
            "goal": episode.goal,
            "observation": step.row.observation,
            "screenshot": step.image,
            "action": action,
            "raw": step.row.raw,
            "reward": if last { reward } else { 0.0 },
            "done": last,
            // Gymnasium's distinction: the episode was cut off (step budget, time limit), not
            // ended by the agent or the task.
            "truncated": last && matches!(episode.end.as_str(), "budget" | "timeout"),
            "success": episode.success,
        });
        push_line(text, &record);
        summary.records += 1;
    }
    (0..steps.len()).collect()
}

/// Refuses a folder we write into that is a symbolic link: a run folder from elsewhere could
/// point `export/` or `images/` anywhere.
fn refuse_link(path: &Path) -> Result<(), ExportError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(ExportError::Write {
            path: path.to_path_buf(),
            source: std::io::Error::other("it is a symbolic link; remove it or give --out elsewhere"),
        }),
        _ => Ok(()),
    }
}

/// Writes `bytes` as a new file at `path`, removing what is there first: a symbolic link left
/// at that name is removed, never followed (`create_new` does not follow links).
fn write_new(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    use std::io::Write as _;
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(ExportError::Write {
                path: path.to_path_buf(),
                source: std::io::Error::other("a folder is in the way"),
            });
        }
        Ok(_) => std::fs::remove_file(path).map_err(write_error(path))?,
        Err(_) => {}
    }
    let mut file =
        std::fs::OpenOptions::new().write(true).create_new(true).open(path).map_err(write_error(path))?;
    file.write_all(bytes).map_err(write_error(path))
}

/// Writes `bytes` to `path` through a temporary file beside it and a rename, so a reader never
/// sees half a file.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    write_new(&tmp, bytes)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        ExportError::Write { path: path.to_path_buf(), source: e }
    })
}

/// A YAML scalar: JSON strings are valid YAML, and quoting keeps any name from changing the
/// structure.
fn yaml(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

/// The Hugging Face dataset card: YAML front matter the Hub reads, then what the data is.
fn dataset_card(config: &RunConfig, options: &ExportOptions, summary: &ExportSummary, file: &Path) -> String {
    let file_name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let dir = file.parent().unwrap_or(Path::new("."));
    // The card describes the folder: the other format's default file, when an earlier export
    // left it there, stays loadable as a second configuration.
    let mut configs = vec![(options.format, file_name.clone())];
    for other in [ExportFormat::Sft, ExportFormat::Trajectory] {
        if other != options.format
            && other.default_file() != file_name
            && dir.join(other.default_file()).is_file()
        {
            configs.push((other, other.default_file().to_string()));
        }
    }
    configs.sort_by_key(|(f, _)| *f != ExportFormat::Sft);
    let mut card = String::from("---\nconfigs:\n");
    for (i, (format, name)) in configs.iter().enumerate() {
        let config_name = if i == 0 { "default" } else { format.name() };
        card.push_str(&format!("- config_name: {config_name}\n  data_files: {}\n", yaml(name)));
    }
    card.push_str("license: apache-2.0\n");
    card.push_str("task_categories:\n- image-text-to-text\n");
    card.push_str("tags:\n- phonebench\n- android\n- gui-agent\n- synthetic\n");
    card.push_str(&format!(
        "pretty_name: {}\n",
        yaml(&format!("phonebench {} {}", config.suite, config.agent))
    ));
    card.push_str("---\n\n");
    card.push_str(CARD_MARK);
    card.push_str("\n\n");

    let or_dash = |s: &str| if s.is_empty() { "-".to_string() } else { format!("`{s}`") };
    card.push_str(&format!(
        "# phonebench rollouts: suite {}, agent {}\n\n",
        or_dash(&config.suite),
        or_dash(&config.agent)
    ));
    card.push_str(
        "Agent steps on phonebench's simulated Android phone, exported by `phonebench export` from a run folder. \
         Every episode was scored by the task's own criteria (a programmatic verifier reading the apps' databases and the trajectory), \
         not by a model.\n\n",
    );
    card.push_str("## Source run\n\n");
    card.push_str(&format!("- suite: {}\n", or_dash(&config.suite)));
    card.push_str(&format!("- agent: {}\n", or_dash(&config.agent)));
    card.push_str(&format!(
        "- model: {}\n",
        config.model.as_deref().map_or("none (scripted agent)".to_string(), |m| format!("`{m}`"))
    ));
    card.push_str(&format!("- seed: {}\n", config.seed));
    card.push_str(&format!("- instances per task: {}\n", config.instances));
    card.push_str(&format!("- observation format: {}\n", or_dash(&config.format)));
    if let Some(size) = &config.display {
        card.push_str(&format!("- screen: `{size}`\n"));
    }
    card.push_str("\n## What was kept\n\n");
    card.push_str(&format!(
        "- format: `{}` in `{}` ({} records)\n",
        options.format, file_name, summary.records
    ));
    card.push_str(&format!("- episodes stored in the run: {}\n", summary.episodes_stored));
    card.push_str(&format!(
        "- episodes kept: {} ({} verifier-confirmed{})\n",
        summary.episodes_kept,
        summary.episodes_confirmed,
        if options.all { ", failures included with reward 0 (`--all`)" } else { "" }
    ));
    if !options.all {
        card.push_str(&format!(
            "- episodes left out because their criteria did not all pass: {}\n",
            summary.episodes_failed_left_out
        ));
    }
    card.push_str(&format!(
        "- episodes left out because the harness or model server failed (never scored, never exported): {}\n",
        summary.episodes_infrastructure
    ));
    card.push_str(&format!("- agent steps of the kept episodes: {}\n", summary.steps));
    if options.format == ExportFormat::Sft {
        card.push_str(&format!(
            "- steps left out because the agent's output did not parse (no action to learn): {}\n",
            summary.steps_format_error
        ));
        card.push_str(&format!(
            "- steps left out because `{}` cannot express their action: {}\n",
            options.syntax, summary.steps_inexpressible
        ));
    }
    card.push_str(&format!(
        "- steps of earlier trials left out (only the scored trial is exported): {}\n",
        summary.steps_earlier_trials
    ));
    card.push_str(&format!(
        "- images: {} ({})\n",
        summary.images,
        match options.images {
            ImageMode::Path => format!("PNG files under `{IMAGES_DIR}/`, referenced relative to this folder"),
            ImageMode::Inline => "embedded as `data:image/png;base64,…` strings".to_string(),
        }
    ));
    if summary.images == 0 {
        card.push_str("  (the run saved no screenshots: `phonebench rollouts` always saves them)\n");
    }

    card.push_str("\n## Fields\n\n");
    match options.format {
        ExportFormat::Sft => {
            card.push_str(&format!(
                "One record per agent step, in LLaMA-Factory's ShareGPT format with images (TRL's SFT trainer reads the same columns):\n\n\
                 - `messages`: a system turn (the task and the action syntax), a user turn (`Goal:`, `Previous actions:`, `Current screen:` with `{IMAGE_TOKEN}` where the screenshot goes, then the screen's text), and the assistant turn: the action taken, and nothing else.\n\
                 - `images`: the screenshot of the current screen (one per `{IMAGE_TOKEN}`; empty when none was saved).\n\
                 - `episode`: the episode key `task#instance`; `task_id`; `step`: 0-based step in the episode.\n\n\
                 Literal `{IMAGE_TOKEN}` text in goals or screens is written `< image>`, so the placeholders count the images exactly.\n"
            ));
        }
        ExportFormat::Trajectory => {
            card.push_str(
                "One record per agent step:\n\n\
                 - `episode`, `task_id`, `step` (0-based), `goal`\n\
                 - `observation`: the screen's text the agent saw\n\
                 - `screenshot`: the screen's image (relative path or data URL), `null` when none was saved\n\
                 - `action`: the action taken as canonical JSON, `null` when the output did not parse\n\
                 - `raw`: what the agent said\n\
                 - `reward`: the episode's verdict (1 for success, 0 for failure) on its last step, 0 elsewhere\n\
                 - `done`: true on the last step\n\
                 - `success`: the episode's verdict, on every step\n",
            );
        }
    }
    let load = format!(
        "\n## Loading\n\n```python\nimport datasets\n\nds = datasets.load_dataset(\"json\", data_files=\"{file_name}\", split=\"train\")\n```\n"
    );
    match options.format {
        ExportFormat::Sft => {
            card.push_str(&format!(
                "\n## Action syntax\n\nAssistant turns and previous actions are written in `{0}`; `phonebench parse-action --syntax {0} 'ACTION'` reads one back as canonical JSON (docs/actions.md).\n",
                options.syntax
            ));
            card.push_str(&load);
            card.push_str(
                "\nWith LLaMA-Factory, register the file in `dataset_info.json` with `\"formatting\": \"sharegpt\"`, \
                 `\"columns\": {\"messages\": \"messages\", \"images\": \"images\"}` and \
                 `\"tags\": {\"role_tag\": \"role\", \"content_tag\": \"content\", \"user_tag\": \"user\", \"assistant_tag\": \"assistant\", \"system_tag\": \"system\"}`. \
                 TRL's `SFTTrainer` takes the `messages` and `images` columns as they are. See docs/training-data.md.\n",
            );
        }
        ExportFormat::Trajectory => {
            card.push_str(
                "\n## Action syntax\n\n`action` is phonebench's canonical action JSON (docs/actions.md).\n",
            );
            card.push_str(&load);
            card.push_str("\nSee docs/training-data.md.\n");
        }
    }
    card
}

/// Standard base64 with padding (RFC 4648), for `data:` URLs.
fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), expected, "{input:?}");
        }
        assert_eq!(base64(&[0xff, 0xfe, 0xfd]), "//79");
    }

    #[test]
    fn image_placeholders_in_text_are_neutralized() {
        assert_eq!(neutralize("see <image> and <image>"), "see < image> and < image>");
        assert_eq!(neutralize("<imag"), "<imag");
    }

    #[test]
    fn formats_and_modes_parse_by_name() {
        assert_eq!("sft".parse::<ExportFormat>(), Ok(ExportFormat::Sft));
        assert_eq!("trajectory".parse::<ExportFormat>(), Ok(ExportFormat::Trajectory));
        assert!("csv".parse::<ExportFormat>().unwrap_err().contains("sft or trajectory"));
        assert_eq!("inline".parse::<ImageMode>(), Ok(ImageMode::Inline));
        assert!("url".parse::<ImageMode>().is_err());
    }

    fn episode() -> EpisodeResult {
        EpisodeResult { key: "t#0".into(), task_id: "t".into(), ..EpisodeResult::default() }
    }

    #[test]
    fn screenshot_paths_that_leave_the_run_folder_are_refused() {
        let dir = std::env::temp_dir().join(format!("phonebench-export-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let run = dir.join("run");
        std::fs::create_dir_all(run.join("screenshots")).unwrap();
        std::fs::write(dir.join("secret.png"), b"\x89PNG\r\n\x1a\nsecret").unwrap();
        std::fs::write(run.join("screenshots/ok.png"), b"\x89PNG\r\n\x1a\nok").unwrap();
        std::fs::write(run.join("screenshots/text.png"), b"not a png").unwrap();
        let db = run.join(DB_FILE);
        let read = |stored: &str| read_screenshot(&run, &db, &episode(), 0, stored);
        assert_eq!(read("screenshots/ok.png").unwrap(), b"\x89PNG\r\n\x1a\nok");
        for (stored, why) in [
            ("../secret.png", "`..`"),
            ("screenshots/../../secret.png", "`..`"),
            ("/etc/passwd", "absolute"),
            ("screenshots/missing.png", "does not exist"),
            ("screenshots", "not a regular file"),
            ("screenshots/text.png", "not a PNG"),
            ("", "empty"),
        ] {
            let e = read(stored).unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("t#0"), "{stored}: {e}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.join("secret.png"), run.join("screenshots/link.png")).unwrap();
            std::os::unix::fs::symlink(&dir, run.join("up")).unwrap();
            for stored in ["screenshots/link.png", "up/secret.png"] {
                let e = read(stored).unwrap_err().to_string();
                assert!(e.contains("symbolic link"), "{stored}: {e}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_user_turn_holds_goal_history_and_one_image_slot() {
        let rows: Vec<StepResult> = (0..3)
            .map(|i| StepResult {
                step: i,
                trial: 0,
                app: None,
                activity: String::new(),
                observation: format!("screen {i} <image>"),
                observation_truncated: false,
                raw: if i == 1 { "blah".into() } else { String::new() },
                action: None,
                point: None,
                hit: None,
                feedback: None,
                format_error: None,
                rejected: None,
                repaired_from: None,
                calls: Vec::new(),
                screenshot: None,
                screen_size: None,
                mcp: None,
            })
            .collect();
        let tap = Action::Tap { target: phonebench_actions::Target::Index(3) };
        let steps: Vec<Step<'_>> = rows
            .iter()
            .enumerate()
            .map(|(i, row)| Step {
                row,
                action: (i != 1).then(|| tap.clone()),
                image: Some(format!("images/x-{i:03}.png")),
                png: None,
            })
            .collect();
        let text = user_turn("Call <image> Bob", &steps, 2, Syntax::Sphinx);
        assert_eq!(text.matches(IMAGE_TOKEN).count(), 1, "{text}");
        assert!(text.starts_with("Goal: Call < image> Bob\n"), "{text}");
        assert!(text.contains("\n1. click [3]\n2. (unparseable output: blah)\n"), "{text}");
        assert!(text.ends_with("Current screen:\n<image>\nscreen 2 < image>"), "{text}");
        assert!(user_turn("g", &steps, 0, Syntax::Sphinx).contains("Previous actions: none"));
    }
}
