//! SPHINX's probe data as items: `questions.json` (knowledge), `lowlevel_tasks.json` with its
//! screens (grounding), and the reference trajectories of `groundtruth/` with the goals of
//! `task_info_all.json` (completion).
//!
//! The files are untrusted: each is read whole only up to [`MAX_DATA_FILE_BYTES`], an entry that
//! does not have the expected shape is skipped with a note naming file and entry, and screens
//! are read only from inside the data folder (no symbolic links followed out of it).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use phonebench_actions::{Action, Key, Swipe};
use phonebench_env::StepRecord;
use phonebench_observe::sphinx::{sphinx_element, sphinx_index_table};
use phonebench_uitree::{Bounds, UiTree};
use serde_json::Value;

use crate::item::{
    CompletionItem, DataSource, ExpectedAction, ImageSource, ItemBody, ProbeItem, ProbeKind, Question,
    Screen, StepItem,
};

/// The largest SPHINX data file read (JSON or XML).
pub const MAX_DATA_FILE_BYTES: u64 = 64 << 20;

/// Items read from SPHINX's data, with what was skipped and why.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The items, in file order.
    pub items: Vec<ProbeItem>,
    /// One line per entry left out: file, entry and why.
    pub skipped: Vec<String>,
}

/// Why SPHINX's data could not be read at all.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct DataError {
    /// The file.
    pub file: PathBuf,
    /// What is wrong.
    pub message: String,
}

fn read_text(file: &Path) -> Result<String, DataError> {
    let err = |message: String| DataError { file: file.to_path_buf(), message };
    let meta = std::fs::symlink_metadata(file).map_err(|e| err(e.to_string()))?;
    if !meta.is_file() {
        return Err(err("not a regular file (links are not followed)".into()));
    }
    if meta.len() > MAX_DATA_FILE_BYTES {
        return Err(err(format!("{} bytes, more than the {MAX_DATA_FILE_BYTES} read", meta.len())));
    }
    std::fs::read_to_string(file).map_err(|e| err(e.to_string()))
}

fn read_json(file: &Path) -> Result<Value, DataError> {
    let text = read_text(file)?;
    serde_json::from_str(&text)
        .map_err(|e| DataError { file: file.to_path_buf(), message: format!("not valid JSON: {e}") })
}

fn read_list(file: &Path) -> Result<Vec<Value>, DataError> {
    match read_json(file)? {
        Value::Array(list) => Ok(list),
        _ => Err(DataError { file: file.to_path_buf(), message: "must be a JSON list".into() }),
    }
}

/// A regular file `name` directly inside `dir` (never through a link), if there is one.
fn file_in(dir: &Path, name: &str) -> Option<PathBuf> {
    let path = dir.join(name);
    std::fs::symlink_metadata(&path).ok().filter(|m| m.is_file()).map(|_| path)
}

/// The data folder, resolved once: every folder read below must resolve inside it, so a link
/// anywhere on a path (a linked `lowlevel_tasks/` or `groundtruth/<id>`) cannot lead reading
/// out of the folder.
struct Root(Option<PathBuf>);

impl Root {
    fn new(dir: &Path) -> Root {
        Root(dir.canonicalize().ok())
    }

    /// `Ok` when `folder` is a real folder (not a link) resolving inside the data folder.
    fn check_folder(&self, folder: &Path) -> Result<(), String> {
        let meta = std::fs::symlink_metadata(folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        if !meta.is_dir() {
            return Err(format!("{}: not a folder (links are not followed)", folder.display()));
        }
        match (&self.0, folder.canonicalize()) {
            (Some(root), Ok(real)) if real.starts_with(root) => Ok(()),
            _ => Err(format!("{}: resolves outside the data folder; not read", folder.display())),
        }
    }

    /// `Ok` when every entry of a trajectory folder is a regular file of at most
    /// [`MAX_DATA_FILE_BYTES`] (what `load_groundtruth` reads must not be a link or huge).
    fn check_trace(&self, folder: &Path) -> Result<(), String> {
        self.check_folder(folder)?;
        let entries = std::fs::read_dir(folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", folder.display()))?;
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            if meta.file_type().is_symlink() {
                return Err(format!("{}: a link (links are not followed)", path.display()));
            }
            if !meta.is_file() && !meta.is_dir() {
                return Err(format!("{}: not a regular file", path.display()));
            }
            if meta.is_file() && meta.len() > MAX_DATA_FILE_BYTES {
                return Err(format!(
                    "{}: {} bytes, more than the {MAX_DATA_FILE_BYTES} read",
                    path.display(),
                    meta.len()
                ));
            }
        }
        Ok(())
    }
}

/// `questions.json`: one knowledge item per question (`sphinx:q<position>`).
pub fn knowledge(dir: &Path) -> Result<Loaded, DataError> {
    let file = dir.join("questions.json");
    let mut loaded = Loaded::default();
    for (i, entry) in read_list(&file)?.iter().enumerate() {
        match question(entry) {
            Ok(q) => loaded.items.push(ProbeItem {
                id: format!("sphinx:q{i:03}"),
                probe: ProbeKind::Knowledge,
                source: DataSource::Sphinx,
                app: Some(q.app_name.clone()),
                body: ItemBody::Question(q),
            }),
            Err(why) => loaded.skipped.push(format!("{}: entry {i}: {why}", file.display())),
        }
    }
    Ok(loaded)
}

fn question(entry: &Value) -> Result<Question, String> {
    let text = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_string);
    let question = text("question").ok_or("no `question` string")?;
    let answer = text("ground_truth").ok_or("no `ground_truth` string")?;
    let question_type = text("question_type").ok_or("no `question_type` string")?;
    let app_name = entry
        .get("app_name")
        .and_then(Value::as_array)
        .and_then(|names| names.first())
        .and_then(Value::as_str)
        .ok_or("no `app_name` list with a name first")?
        .to_string();
    // The typo is SPHINX's; the spelled-out key is read too.
    let category = text("app_cateory").or_else(|| text("app_category"));
    let Some(Value::Object(options)) = entry.get("options") else { return Err("no `options` object".into()) };
    let mut pairs = Vec::new();
    for letter in ["A", "B", "C", "D"] {
        let option =
            options.get(letter).and_then(Value::as_str).ok_or_else(|| format!("no option {letter}"))?;
        pairs.push((letter.to_string(), option.to_string()));
    }
    if !["A", "B", "C", "D"].contains(&answer.as_str()) {
        return Err(format!("ground_truth `{answer}` is not A, B, C or D"));
    }
    Ok(Question { question_type, app_name, category, question, options: pairs, answer })
}

/// `lowlevel_tasks.json` with `lowlevel_tasks/<id>.xml` (and `.png`): one grounding item per
/// task whose screen is present (`sphinx:ll<id>`).
pub fn grounding(dir: &Path) -> Result<Loaded, DataError> {
    let file = dir.join("lowlevel_tasks.json");
    let screens = dir.join("lowlevel_tasks");
    let mut loaded = Loaded::default();
    let entries = read_list(&file)?;
    if let Err(why) = Root::new(dir).check_folder(&screens) {
        loaded.skipped.push(format!("no screens read: {why}"));
        return Ok(loaded);
    }
    let mut missing = 0usize;
    let mut ids = std::collections::BTreeSet::new();
    for (i, entry) in entries.iter().enumerate() {
        let at = |why: String| format!("{}: entry {i}: {why}", file.display());
        let id = match entry.get("id") {
            Some(Value::Number(n)) if n.is_u64() => n.to_string(),
            Some(Value::String(s)) if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric()) => {
                s.clone()
            }
            _ => {
                loaded.skipped.push(at("no `id` (a number)".into()));
                continue;
            }
        };
        if !ids.insert(id.clone()) {
            loaded.skipped.push(at(format!("id {id} comes twice (the first is kept)")));
            continue;
        }
        let Some(xml) = file_in(&screens, &format!("{id}.xml")) else {
            missing += 1;
            continue;
        };
        let tree = match read_text(&xml).and_then(|text| {
            phonebench_uitree::read_xml(&text)
                .map_err(|e| DataError { file: xml.clone(), message: e.to_string() })
        }) {
            Ok(tree) => Arc::new(tree),
            Err(e) => {
                loaded.skipped.push(at(e.to_string()));
                continue;
            }
        };
        let instruction = entry.get("instruction").and_then(Value::as_str);
        let expected = entry
            .get("groundtruth")
            .ok_or_else(|| "no `groundtruth`".to_string())
            .and_then(|g| lowlevel_expected(g, &tree));
        let (Some(instruction), Ok(expected)) = (instruction, expected.clone()) else {
            let why = expected.err().unwrap_or_else(|| "no `instruction` string".into());
            loaded.skipped.push(at(why));
            continue;
        };
        let image = file_in(&screens, &format!("{id}.png")).map(ImageSource::File);
        loaded.items.push(ProbeItem {
            id: format!("sphinx:ll{id}"),
            probe: ProbeKind::Grounding,
            source: DataSource::Sphinx,
            app: entry.get("app").and_then(Value::as_str).map(str::to_string),
            body: ItemBody::Step(StepItem {
                instruction: instruction.to_string(),
                goal: None,
                history: Vec::new(),
                screen: Screen { tree, image },
                expected,
            }),
        });
    }
    if missing > 0 {
        loaded.skipped.push(format!(
            "{}: {missing} tasks have no screen in {} (SPHINX's repository has them all)",
            file.display(),
            screens.display()
        ));
    }
    Ok(loaded)
}

fn lowlevel_expected(groundtruth: &Value, tree: &UiTree) -> Result<ExpectedAction, String> {
    let kind = groundtruth.get("type").and_then(Value::as_str).ok_or("groundtruth has no `type`")?;
    let kind = match kind {
        "text" => "input",
        k @ ("click" | "longclick" | "input" | "swipe" | "back" | "enter") => k,
        other => return Err(format!("unknown groundtruth type `{other}`")),
    }
    .to_string();
    let bounds = match groundtruth.get("element") {
        Some(Value::Object(e)) => {
            let text = e.get("bounds").and_then(Value::as_str).ok_or("the element has no `bounds`")?;
            Some(Bounds::parse(text).map_err(|e| format!("element bounds: {e}"))?)
        }
        _ => None,
    };
    if ExpectedAction::needs_element(&kind) && bounds.is_none() {
        return Err(format!("a `{kind}` groundtruth needs an element"));
    }
    let text = groundtruth.get("message").and_then(Value::as_str).map(str::to_string);
    if kind == "input" && text.is_none() {
        return Err("an input groundtruth needs a `message`".into());
    }
    // The element of SPHINX's index table with the ground truth's bounds (what an oracle picks).
    let index =
        bounds.and_then(|b| sphinx_index_table(tree).iter().position(|&id| tree.node(id).bounds == b));
    Ok(ExpectedAction { kind, bounds, text, index })
}

/// The reference trajectories under `groundtruth/<id>/<app>/` of the tasks in
/// `task_info_all.json` (else `task_info.json`): one completion item per screen
/// (`sphinx:<id>/<app>:<i>`), YES expected on the last one only, as `run_complete.py` asks.
pub fn completion(dir: &Path) -> Result<Loaded, DataError> {
    // task_info_all.json when it is there in any form (a link is then refused by name, not
    // silently replaced by the smaller task_info.json).
    let all = dir.join("task_info_all.json");
    let file = if std::fs::symlink_metadata(&all).is_ok() { all } else { dir.join("task_info.json") };
    if std::fs::symlink_metadata(&file).is_err() {
        return Err(DataError {
            file: dir.to_path_buf(),
            message: "neither task_info_all.json nor task_info.json is here: not SPHINX's data folder".into(),
        });
    }
    let root = Root::new(dir);
    let mut loaded = Loaded::default();
    let mut pairs = std::collections::BTreeSet::new();
    let mut missing = 0usize;
    for (i, task) in read_list(&file)?.iter().enumerate() {
        let id = match task.get("id") {
            Some(Value::Number(n)) if n.is_u64() => n.to_string(),
            _ => {
                loaded.skipped.push(format!("{}: entry {i}: no numeric `id`", file.display()));
                continue;
            }
        };
        let (Some(goal), Some(apps)) =
            (task.get("description").and_then(Value::as_str), task.get("apps").and_then(Value::as_array))
        else {
            loaded.skipped.push(format!("{}: task {id}: no `description` or `apps`", file.display()));
            continue;
        };
        for app in apps.iter().filter_map(Value::as_str) {
            if app.is_empty() || !app.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                loaded
                    .skipped
                    .push(format!("{}: task {id}: app name `{app}` is not a plain name", file.display()));
                continue;
            }
            if !pairs.insert((id.clone(), app.to_string())) {
                loaded.skipped.push(format!(
                    "{}: task {id}, app {app} comes twice (the first is kept)",
                    file.display()
                ));
                continue;
            }
            let trace = dir.join("groundtruth").join(&id).join(app);
            if std::fs::symlink_metadata(&trace).is_err() {
                missing += 1;
                continue;
            }
            if let Err(why) = root.check_trace(&trace) {
                loaded.skipped.push(why);
                continue;
            }
            match phonebench_eval::load_groundtruth(&trace) {
                Ok(trajectory) => {
                    let name = format!("{id}/{app}");
                    let history: Vec<String> = trajectory.steps.iter().map(describe_step).collect();
                    let n = trajectory.screens.len();
                    for (k, screen) in trajectory.screens.iter().enumerate() {
                        let image = file_in(&trace, &format!("{k}.png")).map(ImageSource::File);
                        loaded.items.push(ProbeItem {
                            id: format!("sphinx:{name}:{k:02}"),
                            probe: ProbeKind::Completion,
                            source: DataSource::Sphinx,
                            app: Some(app.to_string()),
                            body: ItemBody::Completion(CompletionItem {
                                goal: goal.to_string(),
                                history: history[..k].to_vec(),
                                screen: Screen { tree: screen.tree.clone(), image },
                                expected: k + 1 == n,
                                trajectory: name.clone(),
                                last: k + 1 == n,
                            }),
                        });
                    }
                }
                Err(e) => loaded.skipped.push(format!("{}: {e}", trace.display())),
            }
        }
    }
    if missing > 0 {
        loaded.skipped.push(format!(
            "{}: {missing} (task, app) pairs have no folder under {} (SPHINX's repository has them all)",
            file.display(),
            dir.join("groundtruth").display()
        ));
    }
    Ok(loaded)
}

/// SPHINX's `get_description` of a recorded step, its element described from the attributes
/// recorded with it (`Click on a View (text: Save, class: android.widget.Button).`).
pub fn describe_step(step: &StepRecord) -> String {
    match &step.action {
        None => "Do nothing.".to_string(),
        Some(action) => describe_action(
            action,
            || step.hit.as_ref().map(sphinx_element).unwrap_or_else(|| "a View".to_string()),
            str::to_string,
        ),
    }
}

/// SPHINX's `get_description` of an action on `element` (described lazily); actions SPHINX
/// has no words for (opening an app by name, asking the user, a tool call) in the same style.
pub fn describe_action(
    action: &Action,
    element: impl Fn() -> String,
    app_name: impl Fn(&str) -> String,
) -> String {
    match action {
        Action::Tap { .. } | Action::DoubleTap { .. } => format!("Click on {}.", element()),
        Action::LongPress { .. } => format!("Long click on {}.", element()),
        Action::Type { text, .. } => format!("Type {text} on {}.", element()),
        Action::Swipe(Swipe::Direction { direction, .. }) => {
            format!("Swipe on {} in {} direction.", element(), direction.as_str())
        }
        Action::Scroll { direction, .. } => {
            format!("Swipe on {} in {} direction.", element(), direction.opposite().as_str())
        }
        // SPHINX's reference swipes carry no direction (recorded from and to the element's
        // centre); `swipe_action` defaults to up.
        Action::Swipe(Swipe::Between { from, to }) if from == to => {
            format!("Swipe on {} in up direction.", element())
        }
        Action::Swipe(_) | Action::Drag { .. } => "Swipe on the screen.".to_string(),
        Action::Key { key: Key::Back } => "Go back.".to_string(),
        Action::Key { key: Key::Enter } => "Press enter.".to_string(),
        Action::Key { .. } => "Press a key.".to_string(),
        Action::OpenApp { app } => format!("Open the {} app.", app_name(app)),
        Action::RestartApp { .. } => "Restart the app.".to_string(),
        Action::Finish { .. } | Action::Answer { .. } => "Stop the app.".to_string(),
        Action::Wait { .. } => "Do nothing.".to_string(),
        Action::AskUser { text } => format!("Ask the user: {text}"),
        Action::McpCall { tool, .. } => format!("Call the tool {tool}."),
    }
}
