//! SPHINX ground-truth trajectories (`github.com/PKU-ASE-RISE/Sphinx`, `groundtruth/<task>/<app>/`):
//! `i.xml` (uiautomator dumps; `i.png` where recorded), `meta.json` (the actions: `type` click,
//! longclick, input with `message`, swipe, back, enter, stop…, each with the `element` acted on as
//! its uiautomator attributes), `activities.json` (`[package, activity]` per screen), `skills.json`
//! (sub-tasks with start and end action indices) and `evaluator.json` (success criteria, not read).
//!
//! Action `i` of `meta.json` is done on screen `i` and leads to screen `i + 1`; `stop` ends the
//! trajectory (a `Finish` step). Points are the element's centre, as SPHINX executes them.
//! Recorded swipes carry no direction: like `phonebench_eval::sphinx::load_groundtruth`, a swipe
//! on an element without `direction` is a swipe from and to its centre (the raw entry keeps the
//! original).
//!
//! One trace per trajectory folder, not per skill: skills are consecutive parts of one recorded
//! episode, so splitting would cut the transitions between them and copy screens; the task's
//! instruction covers the whole. The instruction is the task's `description` from the data
//! folder's `task_info_all.json` (else `task_info.json`) when the trajectory sits in
//! `<data>/groundtruth/<task id>/<app>`, else the skills' names joined.

use std::path::{Path, PathBuf};

use phonebench_actions::{Action, Direction, FinishStatus, Key, Point, Swipe, Target};
use phonebench_uitree::{Bounds, UiTree};
use serde_json::{Map, Value};

use crate::limits::{is_real_file, read_screenshot, read_text};
use crate::model::{Detail, ElementRef, Ingested, Trace, TraceFormat, TraceKind, TraceScreen, TraceStep};
use crate::read::find_element;

/// How deep a tree of trajectory folders is searched.
const MAX_DEPTH: usize = 6;

/// Reads one SPHINX trajectory folder (with `meta.json`), or every one under a folder.
pub fn read(path: &Path) -> Ingested {
    let mut out = Ingested::default();
    let has_meta =
        |entries: &[PathBuf]| entries.iter().any(|e| e.file_name().is_some_and(|n| n == "meta.json"));
    let what = "a SPHINX trajectory folder";
    let Some(folders) = crate::read::trace_folders(path, MAX_DEPTH, has_meta, what, &mut out) else {
        return out;
    };
    let found = folders.len();
    for (dir, entries) in folders {
        if let Some(trace) = read_trajectory(&dir, &entries, &mut out) {
            out.traces.push(trace);
        }
    }
    if found == 0 {
        out.problem(
            path,
            format!("no SPHINX trajectory here (no folder with meta.json within {MAX_DEPTH} folders)"),
        );
    }
    out
}

fn read_json(file: &Path) -> Result<Value, String> {
    let text = read_text(file)?;
    serde_json::from_str(&text).map_err(|e| crate::limits::json_error(&e))
}

fn read_trajectory(dir: &Path, entries: &[PathBuf], out: &mut Ingested) -> Option<Trace> {
    let meta_file = dir.join("meta.json");
    let actions = match read_json(&meta_file) {
        Ok(Value::Array(list)) => list,
        Ok(_) => {
            out.problem(&meta_file, "not a JSON list of actions");
            return None;
        }
        Err(e) => {
            out.problem(&meta_file, e);
            return None;
        }
    };
    let activities_file = dir.join("activities.json");
    let activities: Vec<Option<(String, String)>> = if std::fs::symlink_metadata(&activities_file).is_ok() {
        match read_json(&activities_file) {
            Ok(Value::Array(list)) => list
                .iter()
                .enumerate()
                .map(|(i, pair)| match pair.as_array().map(Vec::as_slice) {
                    Some([Value::String(p), Value::String(a)]) => Some((p.clone(), a.clone())),
                    _ => {
                        out.problem(&activities_file, format!("entry {i} is not [package, activity]"));
                        None
                    }
                })
                .collect(),
            Ok(_) => {
                out.problem(&activities_file, "not a JSON list of [package, activity]");
                Vec::new()
            }
            Err(e) => {
                out.problem(&activities_file, e);
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    // Screens by number: i.xml (and i.png).
    let mut numbered: Vec<(usize, PathBuf)> = entries
        .iter()
        .filter(|e| e.extension().is_some_and(|x| x == "xml"))
        .filter_map(|e| Some((e.file_stem()?.to_str()?.parse::<usize>().ok()?, e.clone())))
        .collect();
    numbered.sort();
    let mut screens = Vec::new();
    let mut position = std::collections::BTreeMap::new();
    for (i, file) in numbered {
        let tree = match read_text(&file).and_then(|t| crate::views::tree_from_xml(&t)) {
            Ok(tree) => tree,
            Err(e) => {
                out.problem(&file, format!("{e}; the screen is left out"));
                continue;
            }
        };
        let png = dir.join(format!("{i}.png"));
        let screenshot = if std::fs::symlink_metadata(&png).is_ok() {
            match read_screenshot(&png) {
                Ok(s) => Some(s),
                Err(e) => {
                    out.problem(&png, e);
                    None
                }
            }
        } else {
            None
        };
        let (package, activity) = match activities.get(i).cloned().flatten() {
            Some((p, a)) => (Some(p), Some(a)),
            None => (None, None),
        };
        position.insert(i, screens.len());
        screens.push(TraceScreen {
            key: i.to_string(),
            package,
            activity,
            tree,
            detail: Detail::Full,
            screenshot,
        });
    }
    if screens.is_empty() {
        out.problem(dir, "no screen (i.xml) could be read");
        return None;
    }
    let mut steps = Vec::new();
    for (i, entry) in actions.iter().enumerate() {
        let Some(&from) = position.get(&i) else {
            out.problem(
                &meta_file,
                format!("action {i}: screen {i}.xml (the one it acts on) is missing or unreadable"),
            );
            continue;
        };
        match parse_entry(entry, &screens[from].tree) {
            Ok((action, target)) => {
                let to = if matches!(action, Action::Finish { .. }) {
                    None
                } else {
                    position.get(&(i + 1)).copied()
                };
                steps.push(TraceStep { from, to, action, target, raw: entry.to_string() });
            }
            Err(e) => out.problem(&meta_file, format!("action {i}: {e}")),
        }
    }
    let package = actions
        .iter()
        .find_map(|a| a.get("element").and_then(|e| e.get("package")).and_then(Value::as_str))
        .map(str::to_string)
        .or_else(|| screens.iter().find_map(|s| s.package.clone()));
    let instruction = task_description(dir, out).or_else(|| skills_summary(dir, out));
    Some(Trace {
        format: TraceFormat::Sphinx,
        name: trajectory_name(dir),
        origin: dir.display().to_string(),
        package,
        instruction,
        kind: TraceKind::Episode,
        screens,
        steps,
    })
}

/// `<task id>/<app>` (the folder's last two names).
fn trajectory_name(dir: &Path) -> String {
    let app = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match dir.parent().and_then(Path::file_name) {
        Some(task) => format!("{}/{app}", task.to_string_lossy()),
        None => app,
    }
}

/// The task's description, when `dir` is `<data>/groundtruth/<task id>/<app>` and `<data>` has
/// `task_info_all.json` or `task_info.json` naming the task.
fn task_description(dir: &Path, out: &mut Ingested) -> Option<String> {
    let task = dir.parent()?;
    let id: u64 = task.file_name()?.to_str()?.parse().ok()?;
    let groundtruth = task.parent()?;
    if groundtruth.file_name()? != "groundtruth" {
        return None;
    }
    let data = groundtruth.parent()?;
    for name in ["task_info_all.json", "task_info.json"] {
        let file = data.join(name);
        if !is_real_file(&file) {
            continue;
        }
        match read_json(&file) {
            Ok(Value::Array(tasks)) => {
                let found = tasks.iter().find(|t| t.get("id").and_then(Value::as_u64) == Some(id));
                if let Some(d) = found.and_then(|t| t.get("description")).and_then(Value::as_str) {
                    return Some(d.to_string());
                }
            }
            Ok(_) => out.problem(&file, "not a JSON list of tasks"),
            Err(e) => out.problem(&file, e),
        }
    }
    None
}

/// The skills' names in order, joined: `create a task; delete it`.
fn skills_summary(dir: &Path, out: &mut Ingested) -> Option<String> {
    let file = dir.join("skills.json");
    if std::fs::symlink_metadata(&file).is_err() {
        return None;
    }
    match read_json(&file) {
        Ok(Value::Array(skills)) => {
            let mut named: Vec<(i64, String)> = skills
                .iter()
                .filter_map(|s| {
                    Some((
                        s.get("start_index").and_then(Value::as_i64).unwrap_or(0),
                        s.get("name")?.as_str()?.trim().to_string(),
                    ))
                })
                .filter(|(_, n)| !n.is_empty())
                .collect();
            named.sort_by_key(|(start, _)| *start);
            (!named.is_empty()).then(|| named.into_iter().map(|(_, n)| n).collect::<Vec<_>>().join("; "))
        }
        Ok(_) => {
            out.problem(&file, "not a JSON list of skills");
            None
        }
        Err(e) => {
            out.problem(&file, e);
            None
        }
    }
}

/// The recorded element as a reference (its attributes are uiautomator's, all strings).
fn element_ref(e: &Map<String, Value>) -> Result<ElementRef, String> {
    let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let bounds = match e.get("bounds") {
        Some(Value::String(b)) => {
            Some(Bounds::parse(b).map_err(|err| format!("element bounds {b:?}: {err}"))?)
        }
        Some(_) => return Err("element `bounds` is not a string".into()),
        None => None,
    };
    Ok(ElementRef {
        class: s("class"),
        resource_id: s("resource-id"),
        text: s("text"),
        text_is_prefix: false,
        content_desc: s("content-desc"),
        bounds,
    })
}

fn direction(text: &str) -> Result<Direction, String> {
    match text.trim().trim_start_matches("direction=").to_ascii_lowercase().as_str() {
        "up" => Ok(Direction::Up),
        "down" => Ok(Direction::Down),
        "left" => Ok(Direction::Left),
        "right" => Ok(Direction::Right),
        other => Err(format!("unknown swipe direction `{other}`")),
    }
}

/// One `meta.json` entry on a screen whose tree is `tree`.
pub fn parse_entry(entry: &Value, tree: &UiTree) -> Result<(Action, Option<ElementRef>), String> {
    let obj = entry.as_object().ok_or("not a JSON object")?;
    let kind = match obj.get("type").or_else(|| obj.get("action_type")) {
        Some(Value::String(t)) => t.to_ascii_lowercase(),
        Some(_) => return Err("`type` is not a string".into()),
        None => return Err("no `type`".into()),
    };
    let element = match obj.get("element") {
        None | Some(Value::Null) => None,
        Some(Value::Object(e)) => Some(element_ref(e)?),
        Some(_) => return Err("`element` is not an object".into()),
    };
    // The element as it is in the screen's tree, when it can be found there.
    let target = element.map(|e| match find_element(tree, &e) {
        Some(id) => ElementRef::of_node(tree.node(id)),
        None => e,
    });
    let centre = target.as_ref().and_then(|t| t.bounds).map(|b| {
        let (x, y) = b.center();
        Point { x, y }
    });
    let at = |what: &str| centre.map(Target::Point).ok_or(format!("`{what}` needs an `element` with bounds"));
    let action = match kind.as_str() {
        "stop" => Action::Finish { status: FinishStatus::Complete, reason: None },
        "click" | "check" => Action::Tap { target: at("click")? },
        "longclick" => Action::LongPress { target: at("longclick")? },
        "input" | "text" => {
            let text = match obj.get("message") {
                Some(Value::String(m)) => m.clone(),
                Some(Value::Number(n)) => n.to_string(),
                _ => return Err("`input` needs a string `message`".into()),
            };
            let clear = obj.get("clear").and_then(Value::as_bool).unwrap_or(true);
            Action::Type { text, target: Some(at("input")?), clear, enter: false }
        }
        "swipe" => {
            let from = centre.ok_or("`swipe` needs an `element` with bounds")?;
            match obj.get("direction") {
                Some(Value::String(d)) => Action::Swipe(Swipe::Direction {
                    direction: direction(d)?,
                    target: Some(Target::Point(from)),
                }),
                None | Some(Value::Null) => Action::Swipe(Swipe::Between { from, to: from }),
                Some(_) => return Err("`direction` is not a string".into()),
            }
        }
        "back" => Action::Key { key: Key::Back },
        "enter" => Action::Key { key: Key::Enter },
        "home" | "restart" => Action::RestartApp { app: None },
        "none" => Action::Wait { ms: None },
        other => {
            return Err(format!(
                "unknown action type `{other}` (SPHINX writes click, longclick, input, swipe, back, enter, restart, none, stop)"
            ));
        }
    };
    let target = if matches!(
        action,
        Action::Key { .. } | Action::Finish { .. } | Action::RestartApp { .. } | Action::Wait { .. }
    ) {
        None
    } else {
        target
    };
    Ok((action, target))
}
