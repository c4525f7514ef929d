//! phonebench's own run folders: `results.sqlite` (see `phonebench_runner::results`), read
//! read-only with plain SQLite. Table `episodes` (`key`, `result`: the episode's JSON, whose
//! `goal` is the instruction) and table `steps` (`key`, `step`, `data`: a `StepResult` as JSON:
//! `observation`, `app`, `activity`, `action` in canonical JSON, `point`, `hit`, `screenshot`
//! relative to the folder, `trial`). Every row is a screen (the last row of a trial has no
//! action); a row with an action is a step to the next row's screen of the same trial.
//!
//! An observation in uiautomator XML is the screen in full. Other observation formats (SPHINX's
//! tree and list, AndroidWorld's, the element list) are text for a model: each non-empty line
//! becomes an outline element (the `text:`, `content-desc:`, `resource-id:` and `class:` it
//! names, else the line as text). On such screens the element a step acted on comes from the
//! step's `hit` description (`android.widget.Button id=save text="Save"`).

use std::path::Path;

use phonebench_actions::{Action, Target};
use phonebench_uitree::{NodeId, read_xml};
use rusqlite::{Connection, OpenFlags};
use serde_json::Value;

use crate::limits::{is_real_dir, is_real_file, read_screenshot};
use crate::model::{Detail, ElementRef, Ingested, Trace, TraceFormat, TraceKind, TraceScreen, TraceStep};
use crate::read::droidbot::inside;
use crate::views::{OutlineElement, tree_from_outline};

/// The results database's file name in a run folder.
pub const DB_FILE: &str = "results.sqlite";
/// Most outline elements made from one text observation.
const MAX_OUTLINE_LINES: usize = 5_000;

/// Reads a phonebench run folder (or its `results.sqlite`).
pub fn read(path: &Path) -> Ingested {
    let mut out = Ingested::default();
    let (dir, db) = if is_real_dir(path) {
        (path.to_path_buf(), path.join(DB_FILE))
    } else if is_real_file(path) {
        (path.parent().unwrap_or(Path::new(".")).to_path_buf(), path.to_path_buf())
    } else {
        out.problem(path, "not a file or folder (or a symbolic link, which is refused)");
        return out;
    };
    if !is_real_file(&db) {
        let why = if std::fs::symlink_metadata(&db).is_ok() {
            "is not a regular file (a symbolic link is refused)"
        } else {
            "is missing: not a phonebench run folder"
        };
        out.problem(&db, why);
        return out;
    }
    if let Err(e) = read_db(&dir, &db, &mut out) {
        out.problem(&db, e);
    }
    out
}

fn read_db(dir: &Path, db: &Path, out: &mut Ingested) -> Result<(), String> {
    let conn =
        // Immutable: SQLite then neither locks nor writes anything beside the file (no -wal or
        // -shm in the run folder), so a read-only folder reads too.
        Connection::open_with_flags(
            immutable_uri(db),
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI,
        )
            .map_err(|e| e.to_string())?;
    let has_table = |name: &str| -> Result<bool, String> {
        conn.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1", [name], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| n > 0)
        .map_err(|e| format!("not a readable SQLite database: {e}"))
    };
    for table in ["episodes", "steps"] {
        if !has_table(table)? {
            return Err(format!("no `{table}` table: not a phonebench results database"));
        }
    }
    let episodes: Vec<(String, String)> = {
        let mut stmt =
            conn.prepare("SELECT key, result FROM episodes ORDER BY key").map_err(|e| e.to_string())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| e.to_string())?;
        rows.collect::<Result<_, _>>().map_err(|e| format!("the `episodes` table: {e}"))?
    };
    if episodes.is_empty() {
        return Err("no episodes recorded".into());
    }
    let mut stmt = conn
        .prepare("SELECT step, data FROM steps WHERE key = ?1 ORDER BY step")
        .map_err(|e| e.to_string())?;
    for (key, result) in episodes {
        let goal = match serde_json::from_str::<Value>(&result) {
            Ok(v) => v.get("goal").and_then(Value::as_str).map(str::to_string),
            Err(e) => {
                out.problem(db, format!("episode {key}: its result is not JSON ({e}); read without a goal"));
                None
            }
        };
        let rows: Vec<(i64, String)> = match stmt
            .query_map([&key], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .and_then(|rows| rows.collect::<Result<_, _>>())
        {
            Ok(rows) => rows,
            Err(e) => {
                out.problem(db, format!("episode {key}: its steps cannot be read: {e}"));
                continue;
            }
        };
        match read_episode(dir, db, &key, goal, &rows, out) {
            Some(trace) => out.traces.push(trace),
            None => out.problem(db, format!("episode {key}: no step could be read")),
        }
    }
    Ok(())
}

/// One row of an episode: (screen index, trial, action, target, raw output).
type Row = (usize, u64, Option<Action>, Option<ElementRef>, String);

fn read_episode(
    dir: &Path,
    db: &Path,
    key: &str,
    goal: Option<String>,
    rows: &[(i64, String)],
    out: &mut Ingested,
) -> Option<Trace> {
    let mut screens = Vec::new();
    let mut acted: Vec<Row> = Vec::new();
    for (step, data) in rows {
        let where_ = format!("episode {key}, step {step}");
        let data: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(e) => {
                out.problem(db, format!("{where_}: not JSON ({e})"));
                continue;
            }
        };
        let s = |name: &str| data.get(name).and_then(Value::as_str).unwrap_or("");
        let observation = s("observation");
        let (tree, detail) = {
            let trimmed = observation.trim_start();
            let xml = trimmed.starts_with("<?xml") || trimmed.starts_with("<hierarchy");
            match xml.then(|| read_xml(trimmed)) {
                Some(Ok(tree)) => (tree, Detail::Full),
                other => {
                    if let Some(Err(e)) = other {
                        let cut =
                            if data.get("observation_truncated").and_then(Value::as_bool).unwrap_or(false) {
                                " (it was cut short)"
                            } else {
                                ""
                            };
                        out.problem(db, format!("{where_}: the XML observation{cut} does not parse (line {}: {}); kept as an outline", e.line, e.message));
                    }
                    match tree_from_outline("", &outline_of_text(observation)) {
                        Ok(tree) => (tree, Detail::Outline),
                        Err(e) => {
                            out.problem(db, format!("{where_}: {e}"));
                            continue;
                        }
                    }
                }
            }
        };
        let screenshot = match data.get("screenshot").and_then(Value::as_str) {
            Some(p) if inside(p) => match read_screenshot(&dir.join(p)) {
                Ok(shot) => Some(shot),
                Err(e) => {
                    out.problem(dir.join(p), format!("{where_}: {e}"));
                    None
                }
            },
            Some(p) => {
                out.problem(
                    db,
                    format!("{where_}: screenshot path {p:?} leads outside the run folder; ignored"),
                );
                None
            }
            None => None,
        };
        let package = (detail == Detail::Full && !tree.is_empty())
            .then(|| tree.node(NodeId(0)).package.clone())
            .filter(|p| !p.is_empty());
        let activity = Some(s("activity").to_string()).filter(|a| !a.is_empty());
        let action = match data.get("action") {
            None | Some(Value::Null) => None,
            Some(v) => match serde_json::from_value::<Action>(v.clone()) {
                Ok(a) => Some(a),
                Err(e) => {
                    out.problem(
                        db,
                        format!("{where_}: the action is not canonical JSON ({e}); the step is left out"),
                    );
                    None
                }
            },
        };
        let target = match &action {
            Some(action) => step_target(action, &data, &tree, detail),
            None => None,
        };
        let trial = data.get("trial").and_then(Value::as_u64).unwrap_or(0);
        let raw = s("raw").to_string();
        acted.push((screens.len(), trial, action, target, raw));
        screens.push(TraceScreen {
            key: format!("{key}:{step}"),
            package,
            activity,
            tree,
            detail,
            screenshot,
        });
    }
    if screens.is_empty() {
        return None;
    }
    let mut steps = Vec::new();
    for (k, (from, trial, action, target, raw)) in acted.iter().enumerate() {
        let Some(action) = action else { continue };
        let to = acted.get(k + 1).filter(|next| next.1 == *trial).map(|next| next.0);
        let to = if matches!(action, Action::Finish { .. } | Action::Answer { .. }) { None } else { to };
        steps.push(TraceStep {
            from: *from,
            to,
            action: action.clone(),
            target: target.clone(),
            raw: raw.clone(),
        });
    }
    let package = screens.iter().find_map(|s| s.package.clone());
    Some(Trace {
        format: TraceFormat::Phonebench,
        name: key.to_string(),
        origin: dir.display().to_string(),
        package,
        instruction: goal,
        kind: TraceKind::Episode,
        screens,
        steps,
    })
}

/// The element a step acted on: on a full tree, the node at the step's point (else at the
/// action's point); otherwise the step's `hit` description.
fn step_target(
    action: &Action,
    data: &Value,
    tree: &phonebench_uitree::UiTree,
    detail: Detail,
) -> Option<ElementRef> {
    let point = data
        .get("point")
        .and_then(Value::as_array)
        .and_then(|p| {
            Some((i32::try_from(p.first()?.as_i64()?).ok()?, i32::try_from(p.get(1)?.as_i64()?).ok()?))
        })
        .or(match action {
            Action::Tap { target: Target::Point(p) }
            | Action::LongPress { target: Target::Point(p) }
            | Action::DoubleTap { target: Target::Point(p) } => Some((p.x, p.y)),
            Action::Type { target: Some(Target::Point(p)), .. } => Some((p.x, p.y)),
            _ => None,
        });
    if detail == Detail::Full
        && let Some((x, y)) = point
        && let Some(id) = tree.hit_test(x, y)
    {
        return Some(ElementRef::of_node(tree.node(id)));
    }
    data.get("hit").and_then(Value::as_str).and_then(parse_hit)
}

/// The runner's `hit` description: `class id=short text="…" desc="…"` (quoted values may hold
/// spaces and `\"`).
pub fn parse_hit(hit: &str) -> Option<ElementRef> {
    let hit = hit.trim();
    if hit.is_empty() {
        return None;
    }
    let (class, mut rest) = hit.split_once(' ').unwrap_or((hit, ""));
    let mut e = ElementRef { class: class.to_string(), ..ElementRef::default() };
    loop {
        rest = rest.trim_start();
        let Some(eq) = rest.find('=') else { break };
        let name = rest[..eq].trim().to_string();
        let after = &rest[eq + 1..];
        let (value, next) = if let Some(q) = after.strip_prefix('"') {
            let mut value = String::new();
            let mut end = q.len();
            let mut chars = q.char_indices();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        // Rust's `{:?}` escapes.
                        match chars.next() {
                            Some((_, 'n')) => value.push('\n'),
                            Some((_, 't')) => value.push('\t'),
                            Some((_, 'r')) => value.push('\r'),
                            Some((_, n)) => value.push(n),
                            None => {}
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            (value, &q[end.min(q.len())..])
        } else {
            let end = after.find(' ').unwrap_or(after.len());
            (after[..end].to_string(), &after[end..])
        };
        match name.as_str() {
            "id" => e.resource_id = value,
            "text" => e.text = value,
            "desc" => e.content_desc = value,
            _ => {}
        }
        rest = next;
    }
    Some(e)
}

/// A text observation as outline elements: one per non-empty line.
pub fn outline_of_text(text: &str) -> Vec<OutlineElement> {
    let mut elements = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()).take(MAX_OUTLINE_LINES) {
        let field = |name: &str| -> Option<String> {
            let start = line.find(&format!("{name}: "))? + name.len() + 2;
            let rest = &line[start..];
            // Up to the next `, key:` or the closing parenthesis.
            let mut end = rest.len();
            for key in [", text: ", ", content-desc: ", ", resource-id: ", ", class: ", ", checked: ", ")"] {
                if let Some(i) = rest.find(key) {
                    end = end.min(i);
                }
            }
            Some(rest[..end].trim().to_string())
        };
        let class = field("class");
        let (text, desc, id) = (field("text"), field("content-desc"), field("resource-id"));
        let structured = class.is_some() || text.is_some() || desc.is_some() || id.is_some();
        elements.push(OutlineElement {
            class: class.unwrap_or_else(|| "android.widget.TextView".into()),
            text: if structured { text.unwrap_or_default() } else { line.to_string() },
            resource_id: id.unwrap_or_default(),
            content_desc: desc.unwrap_or_default(),
            clickable: line.contains("to click") || line.contains("clickable"),
            editable: line.contains("to input") || line.contains("EditText"),
            ..OutlineElement::default()
        });
    }
    elements
}

/// `file:PATH?immutable=1`, the path percent-encoded where a URI needs it.
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(*b as char)
            }
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hit_descriptions_and_sphinx_lines_become_elements() {
        let e = parse_hit("android.widget.EditText id=input_hour text=\"0\\\"7 x\" desc=\"Hour\"")
            .unwrap_or_default();
        assert_eq!(
            (e.class.as_str(), e.resource_id.as_str(), e.text.as_str(), e.content_desc.as_str()),
            ("android.widget.EditText", "input_hour", "0\"7 x", "Hour")
        );
        let o = outline_of_text(
            "a View (resource-id: title, text: Alarm, class: android.widget.TextView)\n\n plain line ",
        );
        assert_eq!(o.len(), 2);
        assert_eq!(
            (o[0].text.as_str(), o[0].resource_id.as_str(), o[0].class.as_str()),
            ("Alarm", "title", "android.widget.TextView")
        );
        assert_eq!(o[1].text, "plain line");
    }
}
