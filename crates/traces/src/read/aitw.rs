//! Android-in-the-Wild episodes as Android-in-the-Zoo writes them: a JSON file holding the list
//! of an episode's steps, each with `episode_id`, `step_id`, `instruction`, `image_path`, the
//! screen's OCR and icon detections (`ui_positions`, `ui_text`, `ui_types`, the lists as JSON
//! strings) and the action (`result_action_type`, `result_touch_yx`, `result_lift_yx`,
//! `result_action_text`). The screenshots lie beside the JSON (`image_path`'s file name).
//!
//! Units. `ui_positions` boxes are `[y, x, height, width]`. AITZ's boxes are in **pixels of the
//! screenshot it ships** (the real episode's screenshots are 270×600: its largest `y + height` is
//! 590 and `x + width` 257, and the navigation bar's back icon sits at `y` 574 of 600); AITW's own
//! TFRecords give them as fractions of the screen (all values ≤ 1), which this reader also takes
//! and scales by the screenshot's size. `result_touch_yx` / `result_lift_yx` are `[y, x]` fractions
//! of the screen (`[-1, -1]` when the action has no point).
//!
//! Actions (AITW's `action_type.py`): 4 dual point, a tap when touch and lift are at most 0.04
//! apart in fractions of the screen (AITW's `_SWIPE_DISTANCE_THRESHOLD`), else a swipe; 3 type;
//! 5 back; 6 home; 7 enter; 10 task complete; 11 task impossible.
//!
//! Screens are built from the boxes: a full-screen FrameLayout holding one `TextView` (text from
//! `ui_text`) or `ImageView` (the icon type, `ICON_GOOGLE`, as content description) per box, at its
//! real bounds. The detections hold no containers, ids or states, so the detail is `Outline`.

use std::collections::BTreeMap;
use std::path::Path;

use phonebench_actions::{Action, FinishStatus, Key, Point, Swipe, Target};
use phonebench_uitree::{Bounds, Node, NodeId, TreeBuilder, UiTree};
use serde_json::Value;

use crate::limits::{MAX_VIEWS, read_screenshot, read_text};
use crate::model::{
    Detail, ElementRef, Ingested, Screenshot, Trace, TraceFormat, TraceKind, TraceScreen, TraceStep,
};
use crate::read::droidbot::inside;
use crate::read::llamatouch::image_size;

/// AITW's tap/swipe threshold: touch and lift at most this far apart (fractions of the screen).
pub const TAP_DISTANCE: f64 = 0.04;
/// How deep a folder is searched for `.json` files.
const MAX_DEPTH: usize = 8;

/// Reads an AITZ episode JSON file, or every `.json` file under a folder (sorted).
pub fn read(path: &Path) -> Ingested {
    crate::read::file_or_folder(path, &["json"], MAX_DEPTH, "Android-in-the-Zoo episodes", read_file)
}

fn read_file(file: &Path, out: &mut Ingested) {
    let text = match read_text(file) {
        Ok(text) => text,
        Err(e) => return out.problem(file, e),
    };
    let doc: Value = match serde_json::from_str(&text) {
        Ok(doc) => doc,
        Err(e) => return out.problem(file, crate::limits::json_error(&e)),
    };
    let Some(steps) = doc.as_array() else {
        return out.problem(file, "not a JSON list of steps: not an Android-in-the-Zoo episode");
    };
    if steps.is_empty() {
        return out.problem(file, "the list of steps is empty");
    }
    let dir = file.parent().unwrap_or(Path::new("."));
    // Episode id → its steps (entry number, step id, step), in the file's order.
    let mut episodes: BTreeMap<String, Vec<(usize, i64, &Value)>> = BTreeMap::new();
    for (i, step) in steps.iter().enumerate() {
        if !step.is_object() {
            out.problem(file, format!("entry {i}: not a JSON object"));
            continue;
        }
        let episode = match step.get("episode_id") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => {
                out.problem(file, format!("entry {i}: no `episode_id`"));
                continue;
            }
        };
        let Some(step_id) = int_field(step, "step_id") else {
            out.problem(file, format!("entry {i}: no integer `step_id`"));
            continue;
        };
        episodes.entry(episode).or_default().push((i, step_id, step));
    }
    for (episode, mut list) in episodes {
        list.sort_by_key(|&(i, id, _)| (id, i));
        if let Some(trace) = read_episode(file, dir, &episode, &list, out) {
            out.traces.push(trace);
        }
    }
}

fn int_field(step: &Value, name: &str) -> Option<i64> {
    match step.get(name)? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A field that is a JSON list or a string holding one (AITZ writes the lists as strings).
fn list_field(step: &Value, name: &str) -> Result<Vec<Value>, String> {
    match step.get(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => Ok(a.clone()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Array(a)) => Ok(a),
            Ok(_) => Err(format!("`{name}` is not a list")),
            Err(e) => Err(format!("`{name}` is not a JSON list: {e}")),
        },
        Some(other) => Err(format!("`{name}` is a {}, not a list", kind_of(other))),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    }
}

/// `[y, x]` fractions; `None` for AITW's `[-1, -1]` (no point).
fn yx_field(step: &Value, name: &str) -> Result<Option<(f64, f64)>, String> {
    let list = list_field(step, name)?;
    if list.is_empty() {
        return Ok(None);
    }
    let nums: Vec<f64> = list.iter().filter_map(Value::as_f64).filter(|f| f.is_finite()).collect();
    match nums.as_slice() {
        [y, x] if *y < 0.0 || *x < 0.0 => Ok(None),
        [y, x] if *y <= 1.0 && *x <= 1.0 => Ok(Some((*y, *x))),
        [y, x] => Err(format!("`{name}` [{y}, {x}] is not a pair of fractions of the screen")),
        _ => Err(format!("`{name}` is not a `[y, x]` pair of numbers")),
    }
}

fn read_episode(
    file: &Path,
    dir: &Path,
    episode: &str,
    list: &[(usize, i64, &Value)],
    out: &mut Ingested,
) -> Option<Trace> {
    let mut screens = Vec::new();
    let mut pending: Vec<(usize, &Value, usize)> = Vec::new(); // (entry, step, screen)
    for &(i, step_id, step) in list {
        match read_screen(file, dir, episode, step_id, step, out) {
            Ok(screen) => {
                pending.push((i, step, screens.len()));
                screens.push(screen);
            }
            Err(e) => out.problem(file, format!("entry {i} (step {step_id}): {e}")),
        }
    }
    if screens.is_empty() {
        out.problem(file, format!("episode {episode}: no step could be read"));
        return None;
    }
    let mut steps = Vec::new();
    for (k, &(i, step, screen)) in pending.iter().enumerate() {
        let to = pending.get(k + 1).map(|p| p.2);
        match step_action(step, &screens[screen]) {
            Ok((action, target, raw)) => {
                let to = if matches!(action, Action::Finish { .. }) { None } else { to };
                steps.push(TraceStep { from: screen, to, action, target, raw });
            }
            Err(e) => out.problem(file, format!("entry {i}: {e}; the step is left out")),
        }
    }
    let instruction =
        list.iter().find_map(|(_, _, s)| s.get("instruction").and_then(Value::as_str)).map(str::to_string);
    Some(Trace {
        format: TraceFormat::Aitw,
        name: episode.to_string(),
        origin: file.display().to_string(),
        package: None,
        instruction,
        kind: TraceKind::Episode,
        screens,
        steps,
    })
}

fn read_screen(
    file: &Path,
    dir: &Path,
    episode: &str,
    step_id: i64,
    step: &Value,
    out: &mut Ingested,
) -> Result<TraceScreen, String> {
    let positions = list_field(step, "ui_positions")?;
    let texts = list_field(step, "ui_text")?;
    let types = list_field(step, "ui_types")?;
    if texts.len() != positions.len() || types.len() != positions.len() {
        return Err(format!(
            "{} ui_positions, {} ui_text and {} ui_types: the lists must be as long",
            positions.len(),
            texts.len(),
            types.len()
        ));
    }
    let screenshot = match step.get("image_path") {
        Some(Value::String(p)) => screenshot_beside(file, dir, p, out),
        Some(Value::Null) | None => None,
        Some(other) => return Err(format!("`image_path` is a {}, not a string", kind_of(other))),
    };
    let mut boxes = Vec::with_capacity(positions.len());
    for (k, p) in positions.iter().enumerate() {
        let nums: Vec<f64> =
            p.as_array().map(|a| a.iter().filter_map(Value::as_f64).collect()).unwrap_or_default();
        let [y, x, h, w] = nums.as_slice() else {
            return Err(format!("ui_positions[{k}] is not `[y, x, height, width]`"));
        };
        if [*y, *x, *h, *w].iter().any(|v| !v.is_finite() || *v < 0.0) {
            return Err(format!("ui_positions[{k}] has a negative or non-finite number"));
        }
        boxes.push((*y, *x, *h, *w));
    }
    let size = screenshot.as_ref().and_then(|s| image_size(&s.bytes));
    let tree = tree_from_boxes(&boxes, &texts, &types, size)?;
    let key = match step.get("image_path").and_then(Value::as_str).and_then(|p| Path::new(p).file_stem()) {
        Some(s) => s.to_string_lossy().into_owned(),
        None => format!("{episode}_{step_id}"),
    };
    Ok(TraceScreen { key, package: None, activity: None, tree, detail: Detail::Outline, screenshot })
}

/// The screenshot named by `image_path`'s file name, beside the JSON file.
fn screenshot_beside(file: &Path, dir: &Path, image_path: &str, out: &mut Ingested) -> Option<Screenshot> {
    let name =
        Path::new(image_path).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if !inside(&name) {
        out.problem(file, format!("`image_path` {image_path:?} names no file"));
        return None;
    }
    let shot = dir.join(&name);
    match read_screenshot(&shot) {
        Ok(s) => Some(s),
        Err(e) => {
            out.problem(&shot, e);
            None
        }
    }
}

/// The screen of one step: a full-screen root and one leaf per detected box, at its bounds.
/// Boxes in fractions (every number ≤ 1) are scaled by `size`; boxes in pixels are taken as they
/// are. Without a screenshot the screen is as large as the boxes reach.
pub fn tree_from_boxes(
    boxes: &[(f64, f64, f64, f64)],
    texts: &[Value],
    types: &[Value],
    size: Option<(u32, u32)>,
) -> Result<UiTree, String> {
    if boxes.len() > MAX_VIEWS {
        return Err(format!("{} boxes, over the {MAX_VIEWS}-view limit", boxes.len()));
    }
    let fractions =
        !boxes.is_empty() && boxes.iter().all(|&(y, x, h, w)| y <= 1.0 && x <= 1.0 && h <= 1.0 && w <= 1.0);
    let (sw, sh) = match size {
        Some((w, h)) => (f64::from(w), f64::from(h)),
        None if fractions => {
            return Err("boxes in fractions of the screen but no screenshot to size them".into());
        }
        None => (
            boxes.iter().map(|b| b.1 + b.3).fold(1.0, f64::max).ceil(),
            boxes.iter().map(|b| b.0 + b.2).fold(1.0, f64::max).ceil(),
        ),
    };
    let px = |v: f64, scale: f64| -> i32 {
        (if fractions { v * scale } else { v }).round().min(f64::from(i32::MAX / 2)) as i32
    };
    let mut builder = TreeBuilder::new();
    builder
        .open(Node::new("android.widget.FrameLayout", "", Bounds::new(0, 0, sw as i32, sh as i32)))
        .map_err(|e| e.to_string())?;
    for (k, &(y, x, h, w)) in boxes.iter().enumerate() {
        let (l, t) = (px(x, sw), px(y, sh));
        let bounds = Bounds::new(l, t, l + px(w, sw), t + px(h, sh));
        let kind = types.get(k).and_then(Value::as_str).unwrap_or("");
        let text = texts.get(k).and_then(Value::as_str).unwrap_or("");
        let is_text = kind.eq_ignore_ascii_case("TEXT");
        let mut node = Node::new(
            if is_text { "android.widget.TextView" } else { "android.widget.ImageView" },
            "",
            bounds,
        );
        node.index = k as i32;
        node.text = text.to_string();
        if !is_text {
            node.content_desc = kind.to_string();
        }
        builder.leaf(node).map_err(|e| e.to_string())?;
    }
    builder.close().map_err(|e| e.to_string())?;
    builder.finish().map_err(|e| e.to_string())
}

/// A `[y, x]` fraction on `screen` (its root's size).
fn to_point(yx: (f64, f64), tree: &UiTree) -> Point {
    let b = tree.screen_bounds();
    let x = (yx.1 * b.width() as f64).round().clamp(0.0, (b.width() - 1).max(0) as f64) as i32;
    let y = (yx.0 * b.height() as f64).round().clamp(0.0, (b.height() - 1).max(0) as f64) as i32;
    Point { x, y }
}

/// The box a touch at `p` lands on (the root is not a box).
fn box_at(tree: &UiTree, p: Point) -> Option<ElementRef> {
    tree.hit_test(p.x, p.y).filter(|&id| id != NodeId(0)).map(|id| ElementRef::of_node(tree.node(id)))
}

fn step_action(step: &Value, screen: &TraceScreen) -> Result<(Action, Option<ElementRef>, String), String> {
    let kind = int_field(step, "result_action_type").ok_or("no integer `result_action_type`")?;
    let text = match step.get("result_action_text") {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        Some(other) => return Err(format!("`result_action_text` is a {}, not a string", kind_of(other))),
    };
    let touch = yx_field(step, "result_touch_yx")?;
    let lift = yx_field(step, "result_lift_yx")?;
    let show =
        |p: Option<(f64, f64)>| p.map(|(y, x)| format!("[{y:.4}, {x:.4}]")).unwrap_or_else(|| "-".into());
    let raw = format!("action_type {kind} touch_yx {} lift_yx {} text {text:?}", show(touch), show(lift));
    let tree = &screen.tree;
    let (action, target) = match kind {
        4 => {
            let touch = touch.ok_or("a dual-point action (4) without `result_touch_yx`")?;
            let lift = lift.unwrap_or(touch);
            let distance = ((touch.0 - lift.0).powi(2) + (touch.1 - lift.1).powi(2)).sqrt();
            let from = to_point(touch, tree);
            if distance <= TAP_DISTANCE {
                (Action::Tap { target: Target::Point(from) }, box_at(tree, from))
            } else {
                (Action::Swipe(Swipe::Between { from, to: to_point(lift, tree) }), None)
            }
        }
        3 => (Action::Type { text, target: None, clear: false, enter: false }, None),
        5 => (Action::Key { key: Key::Back }, None),
        6 => (Action::Key { key: Key::Home }, None),
        7 => (Action::Key { key: Key::Enter }, None),
        10 => (Action::Finish { status: FinishStatus::Complete, reason: None }, None),
        11 => (Action::Finish { status: FinishStatus::Infeasible, reason: None }, None),
        other => return Err(format!("unknown `result_action_type` {other} (AITW has 3-7, 10 and 11)")),
    };
    Ok((action, target, raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_in_pixels_and_in_fractions_land_at_the_same_place() {
        let texts = vec![Value::from("Clock"), Value::from("")];
        let types = vec![Value::from("TEXT"), Value::from("ICON_GOOGLE")];
        let pixels = tree_from_boxes(
            &[(300.0, 135.0, 30.0, 27.0), (0.0, 0.0, 10.0, 10.0)],
            &texts,
            &types,
            Some((270, 600)),
        )
        .unwrap_or_default();
        let fractions = tree_from_boxes(
            &[(0.5, 0.5, 0.05, 0.1), (0.0, 0.0, 10.0 / 600.0, 10.0 / 270.0)],
            &texts,
            &types,
            Some((270, 600)),
        )
        .unwrap_or_default();
        for tree in [&pixels, &fractions] {
            assert_eq!(tree.len(), 3);
            assert_eq!(tree.node(NodeId(1)).bounds, Bounds::new(135, 300, 162, 330));
            assert_eq!(tree.node(NodeId(2)).content_desc, "ICON_GOOGLE");
        }
        assert!(tree_from_boxes(&[(0.5, 0.5, 0.1, 0.1)], &texts[..1], &types[..1], None).is_err());
    }
}
