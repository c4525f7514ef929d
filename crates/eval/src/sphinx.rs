//! SPHINX import: evaluator files (`evaluator.json`) as criteria, and trajectory directories
//! (reference ground truth with `meta.json`, or agent traces with `actions.json`) as
//! [`Trajectory`]s, so upstream's own evaluators score upstream's own data.
//!
//! Mapping (see `docs/criteria.md`): `stoppage` → `element` on the last screen, `findelement` →
//! `element` on any screen, `lastaction` → `action` on the last action (check rules only),
//! `findaction` → `action` on any action, `findelementbyaction` → `action_element`, `rule` with
//! `order` `sequential` / `consecutive` / `present` → `sequence` / `consecutive` / `all`.
//! `match_type` / `check_type` `equal` → [`Op::Equals`] and `include` → [`Op::Contains`] on every
//! rule of that set.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use phonebench_actions::{Action, Direction, FinishStatus, Key, Point, Swipe, Target};
use phonebench_env::{EpisodeEnd, ScreenRecord, StepRecord, Trajectory};
use phonebench_tasks::criteria::{ActionCheck, ActionElementCheck, ElementCheck};
use phonebench_tasks::{Criterion, CriterionKind, Op, Rules, Scope};
use phonebench_uitree::{Bounds, Node, XmlError, read_xml_bytes};
use serde_json::{Map, Value};

/// Why a SPHINX evaluator or trajectory could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum SphinxError {
    /// The evaluator text is not JSON.
    #[error("evaluator is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// An evaluator entry is malformed; `at` locates it (`[1].evaluators[0]`).
    #[error("evaluator {at}: {message}")]
    Evaluator {
        /// Where in the evaluator list (`[i]`, `[i].evaluators[j]`, …).
        at: String,
        /// What is wrong.
        message: String,
    },
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

/// An imported evaluator: the criteria (one per top-level entry, in order) and notes on anything
/// that was adapted (non-string rule values).
#[derive(Debug, Clone, PartialEq)]
pub struct SphinxImport {
    /// The criteria, one per top-level evaluator entry.
    pub criteria: Vec<Criterion>,
    /// What was adapted, one sentence each (empty for well-formed files).
    pub notes: Vec<String>,
}

/// Reads a SPHINX evaluator file (a JSON list of evaluator entries) as criteria.
pub fn criteria_from_sphinx_json(text: &str) -> Result<Vec<Criterion>, SphinxError> {
    import_sphinx_json(text).map(|i| i.criteria)
}

/// Reads a SPHINX evaluator file, with notes on what was adapted.
pub fn import_sphinx_json(text: &str) -> Result<SphinxImport, SphinxError> {
    let value: Value = serde_json::from_str(text)?;
    let Value::Array(entries) = value else {
        return Err(evaluator_error("", "the evaluator file must be a JSON list of evaluators"));
    };
    let mut notes = Vec::new();
    let criteria = entries
        .iter()
        .enumerate()
        .map(|(i, e)| convert(e, &format!("[{i}]"), &mut notes))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SphinxImport { criteria, notes })
}

fn evaluator_error(at: &str, message: impl Into<String>) -> SphinxError {
    SphinxError::Evaluator {
        at: if at.is_empty() { "file".into() } else { at.to_string() },
        message: message.into(),
    }
}

fn convert(entry: &Value, at: &str, notes: &mut Vec<String>) -> Result<Criterion, SphinxError> {
    let Value::Object(obj) = entry else {
        return Err(evaluator_error(at, "an evaluator must be a JSON object"));
    };
    let kind = match obj.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(_) => return Err(evaluator_error(at, "`type` must be a string")),
        None => return Err(evaluator_error(at, "missing `type`")),
    };
    let at = format!("{at} ({kind})");
    let at = at.as_str();
    let rules = |rules_key: &str, type_key: &str, notes: &mut Vec<String>| -> Result<Rules, SphinxError> {
        let op = match_type(obj, type_key, at)?;
        read_rules(obj, rules_key, op, at, notes)
    };
    let kind = match kind {
        "stoppage" => {
            let find = rules("match_rules", "match_type", notes)?;
            if find.get("activity").is_some() {
                return Err(evaluator_error(
                    at,
                    "`activity` is not allowed in stoppage `match_rules` (upstream rejects it); put it in `check_rules`",
                ));
            }
            let check = rules("check_rules", "check_type", notes)?;
            CriterionKind::Element(ElementCheck { on: Scope::Last, find, check })
        }
        "findelement" => {
            let find = rules("match_rules", "match_type", notes)?;
            let check = rules("check_rules", "check_type", notes)?;
            CriterionKind::Element(ElementCheck { on: Scope::Any, find, check })
        }
        "lastaction" => {
            let check = rules("check_rules", "check_type", notes)?;
            CriterionKind::Action(ActionCheck { on: Scope::Last, find: Rules::default(), check })
        }
        "findaction" => {
            let find = rules("match_rules", "match_type", notes)?;
            let check = rules("check_rules", "check_type", notes)?;
            CriterionKind::Action(ActionCheck { on: Scope::Any, find, check })
        }
        "findelementbyaction" => {
            let action = rules("action_match_rules", "action_match_type", notes)?;
            let element = rules("element_match_rules", "element_match_type", notes)?;
            let check = rules("check_rules", "check_type", notes)?;
            CriterionKind::ActionElement(ActionElementCheck { action, element, check })
        }
        "rule" => {
            let order = match obj.get("order") {
                Some(Value::String(o)) => o.as_str(),
                Some(_) => return Err(evaluator_error(at, "`order` must be a string")),
                None => return Err(evaluator_error(at, "missing `order`")),
            };
            let children = match obj.get("evaluators") {
                Some(Value::Array(list)) => list
                    .iter()
                    .enumerate()
                    .map(|(j, e)| convert(e, &format!("{at}.evaluators[{j}]"), notes))
                    .collect::<Result<Vec<_>, _>>()?,
                Some(_) => return Err(evaluator_error(at, "`evaluators` must be a list")),
                None => return Err(evaluator_error(at, "missing `evaluators`")),
            };
            if children.is_empty() {
                // Upstream accepts an empty rule (it passes vacuously, `present` even returning
                // position -1); the criteria language requires at least one child.
                return Err(evaluator_error(
                    at,
                    "`evaluators` is empty: a rule needs at least one evaluator",
                ));
            }
            match order {
                "sequential" => CriterionKind::Sequence(children),
                "consecutive" => CriterionKind::Consecutive(children),
                "present" => CriterionKind::All(children),
                other => {
                    return Err(evaluator_error(
                        at,
                        format!("unknown order `{other}`: use sequential, consecutive or present"),
                    ));
                }
            }
        }
        other => {
            return Err(evaluator_error(
                at,
                format!(
                    "unknown evaluator type `{other}`: use stoppage, findelement, lastaction, findaction, \
                     findelementbyaction or rule"
                ),
            ));
        }
    };
    Ok(Criterion::new(kind))
}

/// `equal` → equals, `include` → contains.
fn match_type(obj: &Map<String, Value>, key: &str, at: &str) -> Result<fn(String) -> Op, SphinxError> {
    match obj.get(key) {
        Some(Value::String(t)) if t == "equal" => Ok(Op::Equals),
        Some(Value::String(t)) if t == "include" => Ok(Op::Contains),
        Some(Value::String(t)) => Err(evaluator_error(at, format!("`{key}` is `{t}`: use equal or include"))),
        Some(_) => Err(evaluator_error(at, format!("`{key}` must be a string (equal or include)"))),
        None => Err(evaluator_error(at, format!("missing `{key}`"))),
    }
}

fn read_rules(
    obj: &Map<String, Value>,
    key: &str,
    op: fn(String) -> Op,
    at: &str,
    notes: &mut Vec<String>,
) -> Result<Rules, SphinxError> {
    let map = match obj.get(key) {
        Some(Value::Object(map)) => map,
        Some(_) => return Err(evaluator_error(at, format!("`{key}` must be an object of attribute rules"))),
        None => return Err(evaluator_error(at, format!("missing `{key}`"))),
    };
    let rules = map
        .iter()
        .map(|(attribute, value)| {
            let text = match value {
                Value::String(s) => s.clone(),
                other => {
                    let text = other.to_string();
                    notes.push(format!(
                        "evaluator {at}: `{key}.{attribute}` is {text}, not a string; it is compared as the text \
                         `{text}` (upstream compares it unequal to every attribute, and `include` would crash)"
                    ));
                    text
                }
            };
            (attribute.clone(), op(text))
        })
        .collect();
    Ok(Rules(rules))
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
    fn maps_every_evaluator_type() {
        let text = r#"[
            {"type":"stoppage","match_type":"equal","match_rules":{"resource-id":"a"},"check_type":"include","check_rules":{"text":"b","activity":"X"}},
            {"type":"findelement","match_type":"include","match_rules":{"text":"c","activity":"Y"},"check_type":"equal","check_rules":{}},
            {"type":"lastaction","check_type":"equal","check_rules":{"text":"OK"}},
            {"type":"findaction","match_type":"equal","match_rules":{"action_type":"click"},"check_type":"equal","check_rules":{"message":"m"}},
            {"type":"findelementbyaction","action_match_type":"equal","action_match_rules":{"action_type":"click"},
             "element_match_type":"include","element_match_rules":{"class":"Edit"},"check_type":"equal","check_rules":{"text":"160"}},
            {"type":"rule","order":"present","evaluators":[{"type":"lastaction","check_type":"equal","check_rules":{}}]}
        ]"#;
        let c = criteria_from_sphinx_json(text).unwrap();
        assert_eq!(c.len(), 6);
        let CriterionKind::Element(e) = &c[0].kind else { panic!("stoppage") };
        assert_eq!(e.on, Scope::Last);
        assert_eq!(e.check.get("text"), Some(&Op::Contains("b".into())));
        assert_eq!(e.check.get("activity"), Some(&Op::Contains("X".into())));
        let CriterionKind::Element(e) = &c[1].kind else { panic!("findelement") };
        assert_eq!(e.on, Scope::Any);
        assert_eq!(e.find.get("activity"), Some(&Op::Contains("Y".into())));
        let CriterionKind::Action(a) = &c[2].kind else { panic!("lastaction") };
        assert!(a.on == Scope::Last && a.find.is_empty());
        let CriterionKind::Action(a) = &c[3].kind else { panic!("findaction") };
        assert_eq!(a.on, Scope::Any);
        let CriterionKind::ActionElement(a) = &c[4].kind else { panic!("findelementbyaction") };
        assert_eq!(a.element.get("class"), Some(&Op::Contains("Edit".into())));
        assert!(matches!(&c[5].kind, CriterionKind::All(v) if v.len() == 1));
    }

    #[test]
    fn errors_name_the_problem_and_the_place() {
        let err = |t: &str| criteria_from_sphinx_json(t).unwrap_err().to_string();
        assert!(err(r#"[{"type":"nope"}]"#).contains("unknown evaluator type `nope`"));
        assert!(err(r#"[{"type":"stoppage","match_type":"equal","match_rules":{"activity":"A"},"check_type":"equal","check_rules":{}}]"#)
            .contains("`activity` is not allowed"));
        let e = err(
            r#"[{"type":"rule","order":"sequential","evaluators":[{"type":"findaction","match_type":"equal","match_rules":{}}]}]"#,
        );
        assert!(
            e.contains("[0] (rule).evaluators[0] (findaction)") && e.contains("missing `check_type`"),
            "{e}"
        );
        assert!(err(r#"[{"type":"findelement","match_type":"like","match_rules":{},"check_type":"equal","check_rules":{}}]"#)
            .contains("`match_type` is `like`"));
        assert!(err(r#"{"type":"stoppage"}"#).contains("JSON list"));
        assert!(err(r#"[{"type":"rule","order":"sideways","evaluators":[{"type":"lastaction","check_type":"equal","check_rules":{}}]}]"#)
            .contains("unknown order `sideways`"));
        assert!(err("[").contains("not valid JSON"));
    }

    #[test]
    fn non_string_values_become_text_with_a_note() {
        let imported = import_sphinx_json(
            r#"[{"type":"stoppage","match_type":"equal","match_rules":{"index":3},"check_type":"equal","check_rules":{}}]"#,
        )
        .unwrap();
        let CriterionKind::Element(e) = &imported.criteria[0].kind else { panic!("stoppage") };
        assert_eq!(e.find.get("index"), Some(&Op::Equals("3".into())));
        assert_eq!(imported.notes.len(), 1);
        assert!(imported.notes[0].contains("match_rules.index"), "{}", imported.notes[0]);
    }

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
