//! SPHINX import: evaluator files (`evaluator.json`) as criteria, and trajectory directories
//! (reference ground truth with `meta.json`, or agent traces with `actions.json`) as
//! [`Trajectory`]s, so upstream's own evaluators score upstream's own data.
//!
//! The evaluator import itself lives in [`phonebench_tasks::sphinx`] (task files name evaluator
//! files, and loading a task must not need this crate); it is re-exported here under the names it
//! always had. The mapping is described there and in `docs/criteria.md`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use phonebench_actions::{Action, Direction, FinishStatus, Key, Point, Swipe, Target};
use phonebench_env::{EpisodeEnd, ScreenRecord, StepRecord, Trajectory};
pub use phonebench_tasks::sphinx::{
    SphinxEvaluatorError, SphinxImport, criteria_from_sphinx_json, import_sphinx_json,
};
use phonebench_uitree::{Bounds, Node, XmlError, read_xml_bytes};
use serde_json::{Map, Value};

/// Why a SPHINX evaluator or trajectory could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum SphinxError {
    /// The evaluator file is not JSON, or an entry is malformed.
    #[error(transparent)]
    Evaluator(#[from] SphinxEvaluatorError),
    /// A file of a trajectory directory cannot be read.
    #[error("{}: {message}", file.display())]
    Io {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// A file of a trajectory directory has unexpected content.
    #[error("{}: {message}", file.display())]
    Data {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A screen dump cannot be read.
    #[error("{}: {source}", file.display())]
    Xml {
        /// The dump.
        file: PathBuf,
        /// Where and why.
        source: XmlError,
    },
}

/// Loads a SPHINX trajectory directory: `{i}.xml` screens, `activities.json`, and the actions
/// from `meta.json` (reference trajectories: a list ending in `stop`) or, when `meta.json` is not
/// such a list (agent traces keep a run summary there), from `actions.json` (`action_type` in
/// upper case). Screen `i` is the one before action `i`; the stop is the trajectory's implicit end
/// (no step is recorded for it). Without a stop (an agent that never stopped), the end is the
/// last screen, as upstream's offline evaluation appends STOP there.
pub fn load_groundtruth(dir: &Path) -> Result<Trajectory, SphinxError> {
    let (actions_file, entries) = read_actions(dir)?;
    let mut steps = Vec::new();
    let mut stopped = false;
    for (i, entry) in entries.iter().enumerate() {
        if stopped {
            return Err(SphinxError::Data {
                file: actions_file.clone(),
                message: format!("action {i} comes after the stop (action {})", i - 1),
            });
        }
        match parse_entry(entry).map_err(|message| SphinxError::Data {
            file: actions_file.clone(),
            message: format!("action {i}: {message}"),
        })? {
            None => stopped = true,
            Some(step) => steps.push(step),
        }
    }
    let activities_file = dir.join("activities.json");
    let activities = read_activities(&activities_file)?;
    if activities.len() < steps.len() + 1 {
        return Err(SphinxError::Data {
            file: activities_file,
            message: format!(
                "{} activities for {} screens ({} actions before the stop, plus the last screen)",
                activities.len(),
                steps.len() + 1,
                steps.len()
            ),
        });
    }
    let mut screens = Vec::with_capacity(steps.len() + 1);
    for (i, (package, activity)) in activities.into_iter().take(steps.len() + 1).enumerate() {
        let file = dir.join(format!("{i}.xml"));
        let bytes = std::fs::read(&file)
            .map_err(|e| SphinxError::Io { file: file.clone(), message: e.to_string() })?;
        let tree = read_xml_bytes(&bytes).map_err(|source| SphinxError::Xml { file, source })?;
        screens.push(ScreenRecord { tree: Arc::new(tree), app: None, package, activity });
    }
    let end =
        if stopped { EpisodeEnd::Finished { status: FinishStatus::Complete } } else { EpisodeEnd::Budget };
    Ok(Trajectory { screens, steps, end: Some(end), ..Trajectory::default() })
}

/// The first `k` actions of a trajectory, then STOP on screen `k` (what an agent that stopped
/// early would have recorded): later screens, steps, events, exchanges and MCP calls are dropped.
/// A `k` at or beyond the number of actions returns the trajectory unchanged.
pub fn stop_after(trajectory: &Trajectory, k: usize) -> Trajectory {
    if k >= trajectory.steps.len() || k >= trajectory.screens.len() {
        return trajectory.clone();
    }
    Trajectory {
        screens: trajectory.screens[..=k].to_vec(),
        steps: trajectory.steps[..k].to_vec(),
        end: Some(EpisodeEnd::Finished { status: FinishStatus::Complete }),
        answer: trajectory.answer.clone(),
        events: trajectory.events.iter().filter(|e| e.step < k).cloned().collect(),
        exchanges: trajectory.exchanges.iter().filter(|e| e.step < k).cloned().collect(),
        mcp_calls: trajectory.mcp_calls.iter().filter(|e| e.step < k).cloned().collect(),
        databases: trajectory.databases.clone(),
        databases_at_first_repair: trajectory.databases_at_first_repair.clone(),
    }
}

fn read_json(file: &Path) -> Result<Value, SphinxError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| SphinxError::Io { file: file.to_path_buf(), message: e.to_string() })?;
    serde_json::from_str(&text)
        .map_err(|e| SphinxError::Data { file: file.to_path_buf(), message: format!("not valid JSON: {e}") })
}

fn read_actions(dir: &Path) -> Result<(PathBuf, Vec<Value>), SphinxError> {
    let meta = dir.join("meta.json");
    if meta.is_file()
        && let Value::Array(entries) = read_json(&meta)?
    {
        return Ok((meta, entries));
    }
    let actions = dir.join("actions.json");
    if actions.is_file() {
        return match read_json(&actions)? {
            Value::Array(entries) => Ok((actions, entries)),
            _ => Err(SphinxError::Data { file: actions, message: "must be a JSON list of actions".into() }),
        };
    }
    Err(SphinxError::Data {
        file: dir.to_path_buf(),
        message: "no actions: neither meta.json (a list of actions) nor actions.json".into(),
    })
}

fn read_activities(file: &Path) -> Result<Vec<(String, String)>, SphinxError> {
    let Value::Array(list) = read_json(file)? else {
        return Err(SphinxError::Data {
            file: file.to_path_buf(),
            message: "must be a list of [package, activity]".into(),
        });
    };
    list.iter()
        .enumerate()
        .map(|(i, pair)| match pair.as_array().map(Vec::as_slice) {
            Some([Value::String(p), Value::String(a)]) => Ok((p.clone(), a.clone())),
            _ => Err(SphinxError::Data {
                file: file.to_path_buf(),
                message: format!("entry {i} is not [package, activity]: {pair}"),
            }),
        })
        .collect()
}

/// One action entry (`meta.json` or `actions.json` form) as a step; `None` for the stop.
fn parse_entry(entry: &Value) -> Result<Option<StepRecord>, String> {
    let Value::Object(obj) = entry else {
        return Err("not a JSON object".into());
    };
    let name = match (obj.get("type"), obj.get("action_type")) {
        (Some(Value::String(t)), _) | (None, Some(Value::String(t))) => t.to_ascii_lowercase(),
        _ => return Err("missing `type` (or `action_type`)".into()),
    };
    let element = match obj.get("element") {
        None | Some(Value::Null) => None,
        Some(Value::Object(e)) => Some(e),
        Some(_) => return Err("`element` must be an object or null".into()),
    };
    let coords = read_coords(obj.get("coords"))?;
    let centre = match element {
        Some(e) => match e.get("bounds") {
            Some(Value::String(b)) => {
                Some(Bounds::parse(b).map_err(|err| format!("element bounds: {err}"))?.center())
            }
            _ => return Err("the element has no `bounds`".into()),
        },
        None => None,
    };
    // Upstream takes the element's centre when there is an element, else the first coordinate.
    let point = centre.or_else(|| coords.first().copied());
    let target = |what: &str| -> Result<Target, String> {
        point
            .map(|(x, y)| Target::Point(Point::new(x, y)))
            .ok_or_else(|| format!("{what} needs an `element` or `coords`"))
    };
    let direction = match obj.get("direction") {
        None | Some(Value::Null) => None,
        Some(Value::String(d)) => Some(read_direction(d)?),
        Some(_) => return Err("`direction` must be a string".into()),
    };
    let action = match name.as_str() {
        "stop" => return Ok(None),
        "click" | "check" => Action::Tap { target: target("click")? },
        "longclick" => Action::LongPress { target: target("longclick")? },
        "input" | "text" => {
            let text = match obj.get("message") {
                Some(Value::String(m)) => m.clone(),
                _ => return Err("input needs a string `message`".into()),
            };
            let clear = obj.get("clear").and_then(Value::as_bool).unwrap_or(true);
            Action::Type { text, target: Some(target("input")?), clear, enter: false }
        }
        "swipe" => match (direction, centre, coords.as_slice(), point) {
            // Coordinate mode: finger down at the first point, up at the second.
            (_, None, [from, to, ..], _) => {
                Action::Swipe(Swipe::Between { from: Point::new(from.0, from.1), to: Point::new(to.0, to.1) })
            }
            (Some(direction), _, _, Some((x, y))) => {
                Action::Swipe(Swipe::Direction { direction, target: Some(Target::Point(Point::new(x, y))) })
            }
            // Reference swipes carry no direction: recorded as a swipe from and to the element's
            // centre, so no `direction` rule can hold on it (the raw entry keeps the original).
            (None, _, _, Some((x, y))) => {
                Action::Swipe(Swipe::Between { from: Point::new(x, y), to: Point::new(x, y) })
            }
            (_, _, _, None) => return Err("swipe needs an `element` or `coords`".into()),
        },
        "back" => Action::Key { key: Key::Back },
        "enter" => Action::Key { key: Key::Enter },
        "restart" | "home" => Action::RestartApp { app: None },
        "none" => Action::Wait { ms: None },
        other => {
            return Err(format!(
                "unknown action type `{other}`: expected click, input, swipe, longclick, back, enter, restart, none or stop"
            ));
        }
    };
    let hit = element.map(node_from_attributes);
    Ok(Some(StepRecord {
        raw: entry.to_string(),
        action: Some(action),
        point: if matches!(name.as_str(), "back" | "enter" | "restart" | "home" | "none") {
            None
        } else {
            point
        },
        hit,
        ..StepRecord::default()
    }))
}

fn read_coords(value: Option<&Value>) -> Result<Vec<(i32, i32)>, String> {
    let Some(value) = value else { return Ok(Vec::new()) };
    let bad = || format!("`coords` must be a list of [x, y] pairs, got {value}");
    let list = value.as_array().ok_or_else(bad)?;
    list.iter()
        .map(|pair| {
            let xy = pair.as_array().ok_or_else(bad)?;
            let num =
                |v: &Value| v.as_f64().filter(|f| f.is_finite()).map(|f| f.floor() as i32).ok_or_else(bad);
            match xy.as_slice() {
                [x, y] => Ok((num(x)?, num(y)?)),
                _ => Err(bad()),
            }
        })
        .collect()
}

fn read_direction(text: &str) -> Result<Direction, String> {
    let d = text.trim().trim_start_matches("direction=").to_ascii_lowercase();
    match d.as_str() {
        "up" => Ok(Direction::Up),
        "down" => Ok(Direction::Down),
        "left" => Ok(Direction::Left),
        "right" => Ok(Direction::Right),
        _ => Err(format!("unknown swipe direction `{text}`")),
    }
}

/// The element as recorded with the action (attributes that do not parse are left at defaults:
/// the node is informational, the point is what evaluation uses).
fn node_from_attributes(attributes: &Map<String, Value>) -> Node {
    let mut node = Node::default();
    for (name, value) in attributes {
        if let Value::String(v) = value {
            let _ = node.set_attribute(name, v);
        }
    }
    node
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_actions_parse_in_upper_case_with_coordinates() {
        let step =
            parse_entry(&serde_json::json!({"action_type":"CLICK","coords":[[10,20]]})).unwrap().unwrap();
        assert_eq!(step.point, Some((10, 20)));
        assert_eq!(step.sphinx_type(), "click");
        let step = parse_entry(
            &serde_json::json!({"action_type":"TEXT","message":"hi","element":{"bounds":"[0,0][11,11]"}}),
        )
        .unwrap()
        .unwrap();
        assert_eq!(step.point, Some((5, 5)));
        assert_eq!(step.sphinx_type(), "input");
        assert_eq!(step.message(), Some("hi"));
        let step = parse_entry(
            &serde_json::json!({"action_type":"SWIPE","element":{"bounds":"[0,0][10,30]"},"direction":"up"}),
        )
        .unwrap()
        .unwrap();
        assert_eq!(step.sphinx_type(), "swipe");
        assert!(matches!(
            step.action,
            Some(Action::Swipe(Swipe::Direction { direction: Direction::Up, .. }))
        ));
        let step = parse_entry(&serde_json::json!({"type":"back","element":null})).unwrap().unwrap();
        assert_eq!((step.sphinx_type(), step.point), ("back", None));
        assert!(parse_entry(&serde_json::json!({"action_type":"STOP"})).unwrap().is_none());
        assert!(
            parse_entry(&serde_json::json!({"type":"click","element":null}))
                .unwrap_err()
                .contains("needs an `element`")
        );
        assert!(
            parse_entry(&serde_json::json!({"type":"jump"}))
                .unwrap_err()
                .contains("unknown action type `jump`")
        );
    }
}
