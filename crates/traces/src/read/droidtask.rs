//! DroidTask / AutoDroid YAML: `task_name`, `step_num` and `records`, each record a screen in
//! AutoDroid's simplified HTML (`State`: `<button id=3 text='desc'>text</button>`, `<p>`,
//! `<checkbox checked=True>`, `<input>`, `<br>` between text parts), the element chosen
//! (`Choice`, -1 at the end), the text typed (`Input`, `'null'` for none), and the state hashes
//! before (`state_str`, one or a list) and after (`new_state_str`). The hashes are DroidBot's, so
//! a screen here and one of the same run's `states/` are the same screen.
//!
//! A `task_name` with spaces is an instruction (an episode); a one-word name (AutoDroid writes
//! `utg` for its exploration graphs) is a label (an exploration).

use std::path::Path;

use phonebench_actions::{Action, FinishStatus, Key, Point, Target};
use serde_yaml_ng::Value;

use crate::limits::{MAX_NESTING, read_text_max};
use crate::model::{Detail, ElementRef, Ingested, Trace, TraceFormat, TraceKind, TraceScreen, TraceStep};
use crate::read::stem;
use crate::views::{OUTLINE_ROW, OUTLINE_TOP, OUTLINE_WIDTH, OutlineElement, tree_from_outline};

/// Reads a DroidTask YAML file, or every `.yaml` / `.yml` file under a folder (sorted).
pub fn read(path: &Path) -> Ingested {
    crate::read::file_or_folder(path, &["yaml", "yml"], 8, "DroidTask data", read_file)
}

fn read_file(file: &Path, out: &mut Ingested) {
    match read_records(file, out) {
        Ok(Some(trace)) => out.traces.push(trace),
        Ok(None) => {}
        Err(message) => out.problem(file, message),
    }
}

/// Largest DroidTask YAML file read (real ones are a few KB; YAML parses into tens of times
/// its size).
const MAX_YAML_BYTES: u64 = 4 * 1024 * 1024;

/// Whether `element` is AutoDroid's own "go back" element (the Back key, not on the screen).
fn is_go_back(element: &OutlineElement) -> bool {
    element.text.eq_ignore_ascii_case("go back") && element.content_desc.is_empty()
}

/// The screens and steps of one file, built record by record.
#[derive(Default)]
struct Walk {
    screens: Vec<TraceScreen>,
    keys: Vec<Vec<String>>,
    steps: Vec<TraceStep>,
    /// Steps waiting for the screen that followed them.
    pending: Vec<usize>,
}

impl Walk {
    fn record(&mut self, i: usize, record: &Value, file: &Path) -> Result<(), String> {
        let state = record.get("State").and_then(Value::as_str).ok_or("no `State` text")?;
        let elements = parse_state_elements(state)?;
        // AutoDroid's "go back" pseudo-element is the Back key, not something on the screen.
        let on_screen: Vec<&StateElement> = elements.iter().filter(|e| !is_go_back(&e.element)).collect();
        let outline: Vec<OutlineElement> = on_screen.iter().map(|e| e.element.clone()).collect();
        let state_keys: Vec<String> = match record.get("state_str") {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Sequence(list)) => {
                list.iter().filter_map(Value::as_str).map(str::to_string).collect()
            }
            _ => Vec::new(),
        };
        let choice = match record.get("Choice") {
            Some(Value::Number(n)) => n.as_i64().ok_or("`Choice` is not an integer")?,
            Some(Value::String(s)) => s.trim().parse().map_err(|_| "`Choice` is not an integer")?,
            _ => return Err("no `Choice`".into()),
        };
        let chosen = if choice < 0 {
            None
        } else {
            Some(
                elements
                    .iter()
                    .find(|e| e.id == choice)
                    .ok_or(format!("`Choice` {choice} names no element of the State"))?,
            )
        };
        let key = state_keys.first().cloned().unwrap_or_else(|| format!("{}#{}", stem(file), i + 1));
        let from = match self.keys.iter().position(|k| k.contains(&key)) {
            Some(s) => s,
            None => {
                let tree = tree_from_outline("", &outline)?;
                self.screens.push(TraceScreen {
                    key: key.clone(),
                    package: None,
                    activity: None,
                    tree,
                    detail: Detail::Outline,
                    screenshot: None,
                });
                self.keys.push(if state_keys.is_empty() { vec![key.clone()] } else { state_keys.clone() });
                self.screens.len() - 1
            }
        };
        // Records are consecutive: the previous step led here. (`new_state_str` often is not
        // among the next record's `state_str` hashes, which AutoDroid computes differently, so
        // it cannot decide this.)
        for step in self.pending.drain(..) {
            self.steps[step].to = Some(from);
        }
        let input = match record.get("Input") {
            Some(Value::String(s)) if s != "null" => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let raw = format!("Choice: {choice}, Input: {}", input.as_deref().unwrap_or("null"));
        let Some(chosen) = chosen else {
            let finish = Action::Finish { status: FinishStatus::Complete, reason: None };
            self.steps.push(TraceStep { from, to: None, action: finish, target: None, raw });
            return Ok(());
        };
        let e = &chosen.element;
        let element = ElementRef {
            class: e.class.clone(),
            text: e.text.clone(),
            content_desc: e.content_desc.clone(),
            ..ElementRef::default()
        };
        let action = match on_screen.iter().position(|o| o.id == choice) {
            None => Action::Key { key: Key::Back },
            Some(row) => {
                // The outline row of the element (rows are laid out in the State's order).
                let (x, y) = (OUTLINE_WIDTH / 2, OUTLINE_TOP + OUTLINE_ROW * row as i32 + OUTLINE_ROW / 2);
                match input {
                    Some(text) => Action::Type {
                        text,
                        target: Some(Target::Point(Point { x, y })),
                        clear: true,
                        enter: false,
                    },
                    None => Action::Tap { target: Target::Point(Point { x, y }) },
                }
            }
        };
        self.pending.push(self.steps.len());
        self.steps.push(TraceStep { from, to: None, action, target: Some(element), raw });
        Ok(())
    }
}

fn read_records(file: &Path, out: &mut Ingested) -> Result<Option<Trace>, String> {
    let text = read_text_max(file, MAX_YAML_BYTES)?;
    // Block-style nesting shows as indentation (flow style is checked by `read_text`).
    if let Some((n, _)) =
        text.lines().enumerate().find(|(_, l)| l.len() - l.trim_start().len() > 2 * MAX_NESTING)
    {
        return Err(format!("line {}: indented more than {} levels deep (the limit)", n + 1, MAX_NESTING));
    }
    let doc: Value = serde_yaml_ng::from_str(&text).map_err(|e| match e.location() {
        Some(l) if !e.to_string().contains(" at line ") => format!("line {}: {e}", l.line()),
        _ => e.to_string(),
    })?;
    let records = doc
        .get("records")
        .and_then(Value::as_sequence)
        .ok_or("no `records` list: not a DroidTask task or UTG file")?;
    let task_name =
        doc.get("task_name").and_then(Value::as_str).map(|s| s.trim().to_string()).unwrap_or_default();
    let is_instruction = task_name.contains(char::is_whitespace);
    let mut walk = Walk::default();
    for (i, record) in records.iter().enumerate() {
        // A bad record is skipped alone; the step before it then leads nowhere recorded.
        if let Err(message) = walk.record(i, record, file) {
            out.problem(file, format!("record {}: {message}", i + 1));
            walk.pending.clear();
        }
    }
    let Walk { screens, steps, .. } = walk;
    if screens.is_empty() {
        return Err("`records` is empty".into());
    }
    Ok(Some(Trace {
        format: TraceFormat::Droidtask,
        name: stem(file),
        origin: file.display().to_string(),
        package: None,
        instruction: is_instruction.then_some(task_name),
        kind: if is_instruction { TraceKind::Episode } else { TraceKind::Exploration },
        screens,
        steps,
    }))
}

/// An element of AutoDroid's simplified HTML, with the id it carries.
#[derive(Debug, Clone, PartialEq)]
pub struct StateElement {
    /// The `id=` number (the position AutoDroid gave it; `Choice` names it).
    pub id: i64,
    /// What it says.
    pub element: OutlineElement,
}

/// Parses AutoDroid's simplified HTML: `<tag id=N attr=value ...>text</tag>` elements, `<br>`
/// inside text as a line break. Tags: `button` (clickable), `checkbox` (checkable, `checked=`),
/// `input` (a text field; its text is the hint or content), `p` (text), anything else a view.
/// The `text='...'` attribute is the content description AutoDroid took for icon buttons.
pub fn parse_state(state: &str) -> Result<Vec<OutlineElement>, String> {
    parse_state_elements(state).map(|v| v.into_iter().map(|e| e.element).collect())
}

/// [`parse_state`] keeping each element's id.
pub fn parse_state_elements(state: &str) -> Result<Vec<StateElement>, String> {
    let mut elements = Vec::new();
    let mut rest = state;
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        let close = after.find('>').ok_or("an element's `<` is never closed by `>`")?;
        let head = &after[..close];
        let mut words = head.splitn(2, char::is_whitespace);
        let tag = words.next().unwrap_or("").to_string();
        if tag.is_empty() || tag.starts_with('/') || tag == "br" {
            rest = &after[close + 1..];
            continue;
        }
        let attrs = words.next().unwrap_or("");
        let body_start = &after[close + 1..];
        let end_tag = format!("</{tag}>");
        let (inner, next) = match body_start.find(&end_tag) {
            Some(e) => (&body_start[..e], &body_start[e + end_tag.len()..]),
            None => return Err(format!("`<{tag}` is never closed by `{end_tag}`")),
        };
        let id = attribute(attrs, "id")
            .and_then(|v| v.parse::<i64>().ok())
            .ok_or(format!("`<{tag}` without a numeric id"))?;
        let text = inner
            .replace("<br>", "\n")
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        let desc = attribute(attrs, "text").unwrap_or_default();
        let checked = attribute(attrs, "checked").is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let (class, clickable, checkable, editable) = match tag.as_str() {
            "button" => ("android.widget.Button", true, false, false),
            "checkbox" => ("android.widget.CheckBox", true, true, false),
            "input" => ("android.widget.EditText", true, false, true),
            "p" => ("android.widget.TextView", false, false, false),
            _ => ("android.view.View", false, false, false),
        };
        elements.push(StateElement {
            id,
            element: OutlineElement {
                class: class.into(),
                text,
                resource_id: String::new(),
                content_desc: desc,
                checkable,
                checked: checkable && checked,
                clickable,
                editable,
            },
        });
        rest = next;
    }
    Ok(elements)
}

/// `name=value` or `name='value'` in an element head.
fn attribute(attrs: &str, name: &str) -> Option<String> {
    let mut rest = attrs;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return None;
        }
        let eq = rest.find('=')?;
        let key = rest[..eq].trim();
        let value_part = &rest[eq + 1..];
        let (value, after) = if let Some(q) = value_part.strip_prefix('\'') {
            let end = q.find('\'').unwrap_or(q.len());
            (&q[..end], q.get(end + 1..).unwrap_or(""))
        } else {
            let end = value_part.find(char::is_whitespace).unwrap_or(value_part.len());
            (&value_part[..end], &value_part[end..])
        };
        if key == name {
            return Some(value.to_string());
        }
        rest = after;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn autodroid_html_reads_tags_ids_descriptions_and_checks() {
        let state = "<button id=0 text='More apps'></button>\n<checkbox id=6 checked=True>Start week</checkbox>\n<button id=7>A<br>B</button>\n<input id=8>Search</input>\n<p id=9>Title</p>";
        let e = parse_state_elements(state).unwrap_or_default();
        assert_eq!(e.len(), 5);
        assert_eq!(
            (e[0].id, e[0].element.content_desc.as_str(), e[0].element.clickable),
            (0, "More apps", true)
        );
        assert!(e[1].element.checked && e[1].element.checkable);
        assert_eq!(e[2].element.text, "A\nB");
        assert!(e[3].element.editable);
        assert_eq!(e[4].element.class, "android.widget.TextView");
        assert!(parse_state("<button id=1>never closed").is_err());
        assert!(parse_state("<button>no id</button>").is_err());
    }
}
