//! `phonebench import-sphinx`: SPHINX's tasks as a suite of device tasks. Every (task, app) pair
//! of `task_info.json` that has a ground-truth `evaluator.json` becomes a task file whose criteria
//! are that evaluator (`sphinx_evaluator`, the file copied byte for byte), starting in the app's
//! Android package, with twice the ground truth's steps as its budget.
//!
//! Everything read is untrusted: names become file names and TOML only after they are checked,
//! descriptions are escaped as template text, and every written task is loaded back before it
//! counts as imported.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use phonebench_tasks::reference::parse_step;
use phonebench_tasks::spec::MAX_EVALUATOR_BYTES;
use phonebench_tasks::sphinx::import_sphinx_json;
use phonebench_tasks::{Suite, TaskSpec};
use serde_json::Value;

/// The first line of a `suite.toml` this command writes: a later import may replace such a folder
/// (and only such a folder, when it is not empty).
pub const MARKER: &str =
    "# Imported from SPHINX by `phonebench import-sphinx`; a new import replaces this folder.";

/// Largest `task_info.json`, `apk-info.csv` or `meta.json` read.
const MAX_DATA_BYTES: u64 = 16 * 1024 * 1024;

/// The fewest steps an imported task gets, however short its ground truth.
const MIN_STEPS: u32 = 10;

/// Arguments of `import-sphinx`.
#[derive(clap::Args, Debug, Clone)]
pub struct ImportSphinxArgs {
    /// SPHINX's task list (`task_info.json`: `[{id, description, apps}]`).
    #[arg(long)]
    pub task_info: PathBuf,
    /// The ground-truth folder (`<id>/<app>/evaluator.json`, `meta.json`, `0.xml`, …).
    #[arg(long)]
    pub groundtruth: PathBuf,
    /// SPHINX's app table (`apk-info.csv`: `apk_name,package_name,…`): the package each app
    /// starts in. Without it (or for an app it lacks), the package of the ground truth's first
    /// screen.
    #[arg(long)]
    pub apk_info: Option<PathBuf>,
    /// The suite folder to write (`suite.toml`, `tasks/`, `tasks/evaluators/`): new, empty, or an
    /// earlier import.
    #[arg(long)]
    pub out: PathBuf,
}

/// One imported task, ready to write.
struct Imported {
    task: String,
    evaluator: Vec<u8>,
    notes: Vec<String>,
}

/// Imports every pair; returns how many were skipped (the exit status is 2 when any was).
pub fn run(args: &ImportSphinxArgs) -> Result<usize> {
    let tasks = read_task_info(&args.task_info)?;
    let packages = match &args.apk_info {
        Some(file) => read_apk_info(file)?,
        None => BTreeMap::new(),
    };
    prepare_out(&args.out)?;
    let tasks_dir = args.out.join("tasks");
    // Inside `tasks/`: an evaluator must be in its task file's folder (`sphinx_evaluator` never
    // leaves it), and `Suite::load` reads only the `*.toml` files directly in `tasks/`.
    let evaluators_dir = tasks_dir.join("evaluators");
    for dir in [&tasks_dir, &evaluators_dir] {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let (mut imported, mut skipped) = (0, 0);
    for (id, description, apps) in &tasks {
        for app in apps {
            let pair = args.groundtruth.join(id).join(app);
            let evaluator = pair.join("evaluator.json");
            // Only pairs with a ground-truth evaluator are tasks; a name that could leave the
            // ground-truth folder is reported rather than looked up.
            let names_ok = safe_name(id) && safe_name(app);
            if names_ok && !is_regular_file(&evaluator) {
                continue;
            }
            let result = if names_ok {
                import_pair(id, app, description, &pair, &packages)
            } else {
                Err("the task id and app name must be letters, digits, `_` or `-`".to_string())
            };
            let written = result.and_then(|task| write_pair(&tasks_dir, &evaluators_dir, id, app, &task));
            match written {
                Ok(notes) => {
                    for note in notes {
                        eprintln!("note {id}/{app}: {note}");
                    }
                    imported += 1;
                }
                Err(reason) => {
                    out!("skipped {id}/{app}: {reason}")?;
                    skipped += 1;
                }
            }
        }
    }
    let name = args
        .out
        .file_name()
        .map(|n| {
            n.to_string_lossy().chars().filter(|c| c.is_ascii_alphanumeric() || "_-".contains(*c)).collect()
        })
        .filter(|n: &String| !n.is_empty())
        .unwrap_or_else(|| "sphinx".to_string());
    let manifest = format!(
        "{MARKER}\nname = {}\ndescription = \"\"\"\nSPHINX's tasks (PKU-ASE-RISE/Sphinx) that have a ground-truth evaluator, for real devices: each\n\
         task's criteria are its evaluator file in `tasks/evaluators/`, its goal the task's description.\n\"\"\"\nseed = 0\n",
        phonebench_tasks::toml_string(&name)
    );
    let manifest_file = args.out.join("suite.toml");
    std::fs::write(&manifest_file, manifest)
        .with_context(|| format!("cannot write {}", manifest_file.display()))?;
    // What was written must load as a suite: a failure here is this command's bug.
    if let Err(errors) = Suite::load(&args.out) {
        let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
        bail!("the imported suite does not load:\n{}", errors.join("\n"));
    }
    out!("imported {imported} tasks ({skipped} skipped)")?;
    Ok(skipped)
}

/// `task_info.json` as (id, description, apps), ids as text (upstream writes numbers).
fn read_task_info(file: &Path) -> Result<Vec<(String, String, Vec<String>)>> {
    let text = read_bounded(file, MAX_DATA_BYTES).map_err(anyhow::Error::msg)?;
    let value: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", file.display()))?;
    let Value::Array(entries) = value else {
        bail!("{}: expected a list of tasks ({{id, description, apps}})", file.display());
    };
    let mut out = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let id = match entry.get("id") {
            Some(Value::Number(n)) => n.to_string(),
            Some(Value::String(s)) => s.clone(),
            _ => bail!("{}: task {i} has no `id`", file.display()),
        };
        let Some(description) = entry.get("description").and_then(Value::as_str) else {
            bail!("{}: task {id} has no `description`", file.display());
        };
        let Some(apps) = entry.get("apps").and_then(Value::as_array) else {
            bail!("{}: task {id} has no `apps` list", file.display());
        };
        let apps = apps.iter().filter_map(Value::as_str).map(str::to_string).collect();
        out.push((id, description.to_string(), apps));
    }
    Ok(out)
}

/// `apk-info.csv`: app name → package (columns found by their header names).
fn read_apk_info(file: &Path) -> Result<BTreeMap<String, String>> {
    let text = read_bounded(file, MAX_DATA_BYTES).map_err(anyhow::Error::msg)?;
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().map(csv_fields).unwrap_or_default();
    let column = |name: &str| header.iter().position(|h| h == name);
    let (Some(app_col), Some(package_col)) = (column("apk_name"), column("package_name")) else {
        bail!("{}: the header needs `apk_name` and `package_name`", file.display());
    };
    let mut out = BTreeMap::new();
    for line in lines {
        let fields = csv_fields(line);
        if let (Some(app), Some(package)) = (fields.get(app_col), fields.get(package_col))
            && !app.is_empty()
            && !package.is_empty()
        {
            out.insert(app.clone(), package.clone());
        }
    }
    Ok(out)
}

/// The fields of one CSV line (double-quoted fields may hold commas and `""`).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.trim_end_matches('\r').chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field).trim().to_string()),
            (c, _) => field.push(c),
        }
    }
    fields.push(field.trim().to_string());
    fields
}

/// The output folder must be new, empty, or an earlier import (its `suite.toml` starts with
/// [`MARKER`]); an earlier import's tasks and evaluators are removed first, so the folder holds
/// exactly this import.
fn prepare_out(out: &Path) -> Result<()> {
    let meta = match std::fs::symlink_metadata(out) {
        Ok(m) => m,
        Err(_) => {
            return std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()));
        }
    };
    if !meta.is_dir() {
        bail!("{} is not a folder", out.display());
    }
    let empty =
        std::fs::read_dir(out).with_context(|| format!("cannot list {}", out.display()))?.next().is_none();
    if empty {
        return Ok(());
    }
    let manifest = out.join("suite.toml");
    let earlier = is_regular_file(&manifest)
        && read_bounded(&manifest, MAX_DATA_BYTES).is_ok_and(|t| t.starts_with(MARKER));
    if !earlier {
        bail!(
            "{} is not empty and is not an earlier SPHINX import: choose a new folder (nothing was written)",
            out.display()
        );
    }
    for (dir, ext) in [("tasks", "toml"), ("tasks/evaluators", "json")] {
        let dir = out.join(dir);
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(|e| e.ok()) {
            let path = entry.path();
            let ours = path.extension().is_some_and(|x| x == ext)
                && entry.file_type().is_ok_and(|t| t.is_file() || t.is_symlink());
            if ours {
                std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
            }
        }
    }
    Ok(())
}

/// Builds one pair's task file text (not yet written).
fn import_pair(
    id: &str,
    app: &str,
    description: &str,
    pair: &Path,
    packages: &BTreeMap<String, String>,
) -> Result<Imported, String> {
    let evaluator_file = pair.join("evaluator.json");
    let evaluator = read_bounded(&evaluator_file, MAX_EVALUATOR_BYTES)?;
    let imported = import_sphinx_json(&evaluator).map_err(|e| e.to_string())?;
    if imported.criteria.is_empty() {
        return Err("the evaluator has no entries: a task needs criteria".into());
    }
    let goal = goal_template(description)?;
    let package = match packages.get(app) {
        Some(p) => p.clone(),
        None => first_screen_package(pair)?,
    };
    if !is_package(&package) {
        return Err(format!("`{package}` is not an Android package name"));
    }
    let actions = read_actions(pair);
    let steps = match &actions {
        Some(actions) => actions.iter().filter(|a| action_type(a).as_deref() != Some("stop")).count(),
        None => screen_dumps(pair).saturating_sub(1),
    };
    let max_steps = u32::try_from(steps).unwrap_or(u32::MAX / 2).saturating_mul(2).max(MIN_STEPS);
    let mut notes = imported.notes;
    let reference = match actions.as_deref().map(reference_from) {
        Some(Ok(steps)) => Some(steps),
        Some(Err(why)) => {
            notes.push(format!("no reference written: {why}"));
            None
        }
        None => {
            notes.push("no reference written: meta.json is not a list of actions".into());
            None
        }
    };
    let mut task = String::new();
    task.push_str(&format!("id = {}\n", phonebench_tasks::toml_string(&format!("sphinx.{id}.{app}"))));
    task.push_str(&format!("goal = {}\n", phonebench_tasks::toml_string(&goal)));
    task.push_str("category = \"completion\"\ndevice = true\n");
    task.push_str(&format!("apps = [{}]\n", phonebench_tasks::toml_string(&package)));
    task.push_str(&format!("start = {{ app = {} }}\n", phonebench_tasks::toml_string(&package)));
    task.push_str(&format!("max_steps = {max_steps}\n"));
    task.push_str(&format!(
        "sphinx_evaluator = {}\n",
        phonebench_tasks::toml_string(&format!("evaluators/{id}_{app}.json"))
    ));
    if let Some(steps) = reference {
        task.push_str("reference = [\n");
        for step in steps {
            task.push_str(&format!("  {},\n", phonebench_tasks::toml_string(&step)));
        }
        task.push_str("]\n");
    }
    task.push_str("\n[tags]\napps = \"single\"\n");
    Ok(Imported { task, evaluator: evaluator.into_bytes(), notes })
}

/// Writes one pair's evaluator and task file and loads the task back; on failure nothing of the
/// pair is left behind. Returns the notes.
fn write_pair(
    tasks_dir: &Path,
    evaluators_dir: &Path,
    id: &str,
    app: &str,
    imported: &Imported,
) -> Result<Vec<String>, String> {
    let evaluator = evaluators_dir.join(format!("{id}_{app}.json"));
    let task = tasks_dir.join(format!("sphinx_{id}_{app}.toml"));
    let written = std::fs::write(&evaluator, &imported.evaluator)
        .and_then(|()| std::fs::write(&task, &imported.task))
        .map_err(|e| format!("cannot write: {e}"))
        .and_then(|()| TaskSpec::load(&task).map_err(|e| e.to_string()));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&task);
        let _ = std::fs::remove_file(&evaluator);
        return Err(e);
    }
    Ok(imported.notes.clone())
}

/// The description as goal template text: upstream's descriptions are plain text, so template
/// syntax in one is wrapped as raw text (and one that would end the raw block is refused).
fn goal_template(description: &str) -> Result<String, String> {
    let description = description.trim();
    if description.is_empty() {
        return Err("the description is empty".into());
    }
    if !["{{", "{%", "{#"].iter().any(|s| description.contains(s)) {
        return Ok(description.to_string());
    }
    if description.contains("endraw") {
        return Err("the description holds template syntax and `endraw`: it cannot be kept as text".into());
    }
    Ok(format!("{{% raw %}}{description}{{% endraw %}}"))
}

/// The package of the ground truth's first screen (`0.xml`): its first node that is not the
/// system UI's.
fn first_screen_package(pair: &Path) -> Result<String, String> {
    let file = pair.join("0.xml");
    if !is_regular_file(&file) {
        return Err("no package: the app is not in apk-info.csv and there is no 0.xml".into());
    }
    let bytes = read_bounded(&file, MAX_DATA_BYTES)?;
    let tree =
        phonebench_uitree::read_xml_bytes(bytes.as_bytes()).map_err(|e| format!("0.xml: {}", e.message))?;
    tree.iter()
        .map(|(_, node)| node.package.clone())
        .find(|p| !p.is_empty() && p != "com.android.systemui")
        .ok_or_else(|| "no package: the app is not in apk-info.csv and 0.xml names none".into())
}

/// `meta.json`'s action list, when it is one.
fn read_actions(pair: &Path) -> Option<Vec<Value>> {
    let file = pair.join("meta.json");
    if !is_regular_file(&file) {
        return None;
    }
    match serde_json::from_str(&read_bounded(&file, MAX_DATA_BYTES).ok()?) {
        Ok(Value::Array(actions)) => Some(actions),
        _ => None,
    }
}

fn action_type(action: &Value) -> Option<String> {
    action
        .get("type")
        .or_else(|| action.get("action_type"))
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase)
}

/// How many `{i}.xml` screen dumps the folder holds.
fn screen_dumps(pair: &Path) -> usize {
    (0..).take_while(|i| pair.join(format!("{i}.xml")).is_file()).count()
}

/// The ground truth as reference steps (selectors from the recorded elements), or why it cannot
/// be written as one. Every step is parsed back before it is used.
fn reference_from(actions: &[Value]) -> Result<Vec<String>, String> {
    let mut steps = Vec::new();
    for (i, action) in actions.iter().enumerate() {
        let kind = action_type(action).ok_or_else(|| format!("action {i} has no type"))?;
        let element = action.get("element").filter(|e| e.is_object());
        let selector = |prefer_id: bool| element.and_then(|e| selector_of(e, prefer_id));
        let need = |s: Option<String>| {
            s.ok_or_else(|| format!("action {i} ({kind}): its element has no id, text or description"))
        };
        let step = match kind.as_str() {
            "stop" => break,
            "click" | "check" => format!("tap {}", need(selector(false))?),
            "longclick" => format!("long_press {}", need(selector(false))?),
            "input" | "text" => {
                let message = action.get("message").and_then(Value::as_str).unwrap_or_default();
                format!("type {} {}", need(selector(true))?, quote(message)?)
            }
            "swipe" => match action.get("direction").and_then(Value::as_str) {
                Some(d) => format!(
                    "swipe {} {}",
                    d.trim_start_matches("direction=").to_ascii_lowercase(),
                    need(selector(false))?
                ),
                None => return Err(format!("action {i} (swipe) has no direction")),
            },
            "back" => "back".into(),
            "enter" => "enter".into(),
            "none" => "wait".into(),
            other => return Err(format!("action {i} ({other}) has no reference step")),
        };
        parse_step(&step).map_err(|e| format!("action {i} ({kind}): {e}"))?;
        steps.push(step);
    }
    Ok(steps)
}

/// A selector for a recorded element: its resource id (the part after `/`) and, unless only the
/// id is wanted (a field whose text is about to change), its text or else its description.
fn selector_of(element: &Value, prefer_id: bool) -> Option<String> {
    let attr =
        |name: &str| element.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
    let id = attr("resource-id")
        .map(|id| id.rsplit('/').next().unwrap_or(id).to_string())
        .filter(|id| id.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)));
    let mut terms = Vec::new();
    if let Some(id) = &id {
        terms.push(format!("#{id}"));
    }
    if !(prefer_id && id.is_some()) {
        if let Some(text) = attr("text").and_then(|t| quote(t).ok()) {
            terms.push(text);
        } else if let Some(desc) = attr("content-desc").and_then(|d| quote(d).ok()) {
            terms.push(format!("@{desc}"));
        }
    }
    if terms.is_empty() { None } else { Some(terms.join(" ")) }
}

/// A reference string (`"…"`, a template): refused when the text holds template syntax.
fn quote(text: &str) -> Result<String, String> {
    if ["{{", "{%", "{#"].iter().any(|s| text.contains(s)) {
        return Err(format!("`{text}` holds template syntax"));
    }
    Ok(phonebench_tasks::reference::quote_string(text))
}

/// A name that is safe as one path component and in a task id.
fn safe_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `com.example.app`: dot-separated parts of letters, digits and `_`.
fn is_package(name: &str) -> bool {
    name.len() <= 256
        && name
            .split('.')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

/// A regular file, not reached through a link at its own name.
fn is_regular_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

/// A regular file's text, refusing links and files over `limit` bytes.
fn read_bounded(file: &Path, limit: u64) -> Result<String, String> {
    use std::io::Read as _;
    let meta = std::fs::symlink_metadata(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file (links are not followed)", file.display()));
    }
    if meta.len() > limit {
        return Err(format!("{} is {} bytes, more than {limit}", file.display(), meta.len()));
    }
    let mut text = String::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(limit + 1).read_to_string(&mut text))
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    if text.len() as u64 > limit {
        return Err(format!("{} is more than {limit} bytes", file.display()));
    }
    Ok(text)
}
