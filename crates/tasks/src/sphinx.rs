//! SPHINX evaluator files (`evaluator.json`) as criteria: upstream's evaluators become checks of
//! the one criteria language, so a task file can name an evaluator file (`sphinx_evaluator`) and
//! `phonebench-eval` can score upstream's own data with them.
//!
//! Mapping (see `docs/criteria.md`): `stoppage` → `element` on the last screen, `findelement` →
//! `element` on any screen, `lastaction` → `action` on the last action (check rules only),
//! `findaction` → `action` on any action, `findelementbyaction` → `action_element`, `rule` with
//! `order` `sequential` / `consecutive` / `present` → `sequence` / `consecutive` / `all`.
//! `match_type` / `check_type` `equal` → [`Op::Equals`] and `include` → [`Op::Contains`] on every
//! rule of that set.
//!
//! This depends only on the criteria types, so it lives here rather than in `phonebench-eval`
//! (which re-exports it): loading a task file must not need the evaluator.

use serde_json::{Map, Value};

use crate::criteria::{
    ActionCheck, ActionElementCheck, Criterion, CriterionKind, ElementCheck, Op, Rules, Scope,
};

/// Why a SPHINX evaluator file could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum SphinxEvaluatorError {
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
pub fn criteria_from_sphinx_json(text: &str) -> Result<Vec<Criterion>, SphinxEvaluatorError> {
    import_sphinx_json(text).map(|i| i.criteria)
}

/// Reads a SPHINX evaluator file, with notes on what was adapted.
pub fn import_sphinx_json(text: &str) -> Result<SphinxImport, SphinxEvaluatorError> {
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

fn evaluator_error(at: &str, message: impl Into<String>) -> SphinxEvaluatorError {
    SphinxEvaluatorError::Evaluator {
        at: if at.is_empty() { "file".into() } else { at.to_string() },
        message: message.into(),
    }
}

fn convert(entry: &Value, at: &str, notes: &mut Vec<String>) -> Result<Criterion, SphinxEvaluatorError> {
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
    let rules =
        |rules_key: &str, type_key: &str, notes: &mut Vec<String>| -> Result<Rules, SphinxEvaluatorError> {
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
fn match_type(
    obj: &Map<String, Value>,
    key: &str,
    at: &str,
) -> Result<fn(String) -> Op, SphinxEvaluatorError> {
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
) -> Result<Rules, SphinxEvaluatorError> {
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
}
