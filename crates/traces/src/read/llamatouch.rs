//! LlamaTouch ground-truth trace folders (`github.com/LlamaTouch/LlamaTouch`, `dataset/`): per
//! screen `i`, `i.png` (screenshot), `i.xml` (`uiautomator dump`), `i.vh` (the same screen as a
//! DroidBot-style JSON view list from an accessibility service), `i.json` (simplified
//! components), `i.activity` (`pkg/.Activity`), `i.ess` (annotated essential states); per trace
//! `eventStructs.txt` (one action per line, line `k` done on screen `k`) and `instruction.txt`
//! (the episode id, then the task).
//!
//! The action lines are what LlamaTouch's own loader (`LlamaTouch/Evaluator`,
//! `evaluator/task_trace.py`, `_extract_actions_from_file`) accepts: `[Home]`, `[Back]`,
//! `[Click] Screen Resolution (W, H), Click Position (X, Y)`, `[Swipe] Screen Resolution (W, H),
//! Start Position (X1, Y1), End Position (X2, Y2)` and `[Input] text`; `[Enter]` and `[Type]
//! text` are read too. Positions are in the `Screen Resolution` space (320×720 in the dataset),
//! not the screen's: they are scaled to the screenshot's size (else the tree's screen bounds)
//! and the element under the point is found with the tree's hit test. LlamaTouch's loader ends
//! every trace with STATUS_TASK_COMPLETE on the last screen (the file does not record it); so
//! does this reader, as a `Finish` step.
//!
//! The tree comes from `i.xml`, else from `i.vh`. `i.json` repeats what the tree holds and `i.ess`
//! is evaluation data (essential states): both are left out. `i_drawed.png` are annotation
//! pictures and are skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use phonebench_actions::{Action, FinishStatus, Key, Point, Swipe, Target};
use phonebench_uitree::{Bounds, Node, NodeId, TreeBuilder, UiTree};
use serde_json::Value;

use crate::limits::{is_real_file, read_screenshot, read_text};
use crate::model::{Detail, ElementRef, Ingested, Trace, TraceFormat, TraceKind, TraceScreen, TraceStep};
use crate::read::droidbot::split_activity;
use crate::read::stem;
use crate::views::tree_from_views;

/// How deep a folder of trace folders is searched (`dataset/<category>/<trace>`).
const MAX_DEPTH: usize = 4;

/// Reads one LlamaTouch trace folder, or every trace folder under a folder (sorted by name).
pub fn read(path: &Path) -> Ingested {
    let mut out = Ingested::default();
    let what = "a LlamaTouch trace folder";
    let Some(folders) = crate::read::trace_folders(path, MAX_DEPTH, is_trace_folder, what, &mut out) else {
        return out;
    };
    let found = folders.len();
    for (dir, entries) in folders {
        if let Some(trace) = read_trace(&dir, &entries, &mut out) {
            out.traces.push(trace);
        }
    }
    if found == 0 {
        out.problem(path, format!("no LlamaTouch trace here (no folder with eventStructs.txt, instruction.txt or 0.xml / 0.vh within {MAX_DEPTH} folders)"));
    }
    out
}

fn is_trace_folder(entries: &[PathBuf]) -> bool {
    entries.iter().any(|e| {
        let name = e.file_name().and_then(|n| n.to_str()).unwrap_or("");
        matches!(name, "eventStructs.txt" | "instruction.txt" | "0.xml" | "0.vh")
    })
}

/// The files of one screen.
#[derive(Default)]
struct ScreenFiles {
    xml: Option<PathBuf>,
    vh: Option<PathBuf>,
    image: Option<PathBuf>,
    activity: Option<PathBuf>,
}

fn read_trace(dir: &Path, entries: &[PathBuf], out: &mut Ingested) -> Option<Trace> {
    let mut files: BTreeMap<usize, ScreenFiles> = BTreeMap::new();
    for entry in entries {
        let (Some(stem), Some(ext)) =
            (entry.file_stem().and_then(|s| s.to_str()), entry.extension().and_then(|s| s.to_str()))
        else {
            continue;
        };
        let Ok(index) = stem.parse::<usize>() else { continue };
        if !matches!(ext, "xml" | "vh" | "png" | "jpg" | "jpeg" | "activity") {
            continue;
        }
        if !is_real_file(entry) {
            out.problem(entry, "not a regular file (a symbolic link, folder or device is refused)");
            continue;
        }
        let slot = files.entry(index).or_default();
        match ext {
            "xml" => slot.xml = Some(entry.clone()),
            "vh" => slot.vh = Some(entry.clone()),
            "activity" => slot.activity = Some(entry.clone()),
            _ => slot.image = Some(entry.clone()),
        }
    }
    // Screen index in the folder → position in `screens`.
    let mut position: BTreeMap<usize, usize> = BTreeMap::new();
    let mut screens = Vec::new();
    for (&index, f) in &files {
        if f.xml.is_none() && f.vh.is_none() && f.image.is_none() {
            continue;
        }
        if let Some(screen) = read_screen(index, f, out) {
            position.insert(index, screens.len());
            screens.push(screen);
        }
    }
    if screens.is_empty() {
        out.problem(dir, "no screen could be read (no i.xml, i.vh or i.png)");
        return None;
    }
    if let Some((&last, _)) = position.iter().next_back() {
        let missing: Vec<usize> = (0..=last).filter(|i| !position.contains_key(i)).collect();
        if !missing.is_empty() {
            out.problem(dir, format!("screens {missing:?} are missing: steps on or to them are left out"));
        }
    }
    let instruction = read_instruction(&dir.join("instruction.txt"), out);
    let mut steps = Vec::new();
    let events = dir.join("eventStructs.txt");
    let mut acted_on_last = false;
    let last_index = position.keys().next_back().copied().unwrap_or(0);
    if is_real_file(&events) {
        match read_text(&events) {
            Ok(text) => {
                for (k, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                    let Some(&from) = position.get(&k) else {
                        out.problem(
                            &events,
                            format!("line {}: screen {k} (the one it acts on) is missing", k + 1),
                        );
                        continue;
                    };
                    match parse_event(line.trim(), &screens[from]) {
                        Ok((action, target)) => {
                            acted_on_last |= k == last_index;
                            steps.push(TraceStep {
                                from,
                                to: position.get(&(k + 1)).copied(),
                                action,
                                target,
                                raw: line.trim().to_string(),
                            });
                        }
                        Err(message) => out.problem(&events, format!("line {}: {message}", k + 1)),
                    }
                }
            }
            Err(e) => out.problem(&events, e),
        }
    } else {
        out.problem(&events, "missing: the trace has screens but no actions");
    }
    if !acted_on_last && is_real_file(&events) {
        steps.push(TraceStep {
            from: screens.len() - 1,
            to: None,
            action: Action::Finish { status: FinishStatus::Complete, reason: None },
            target: None,
            raw: "(end of eventStructs.txt: LlamaTouch counts the last screen as STATUS_TASK_COMPLETE)"
                .into(),
        });
    }
    let package = screens.iter().rev().find_map(|s| s.package.clone());
    Some(Trace {
        format: TraceFormat::Llamatouch,
        name: stem(dir),
        origin: dir.display().to_string(),
        package,
        instruction,
        kind: TraceKind::Episode,
        screens,
        steps,
    })
}

/// `instruction.txt`: the episode id on the first line, then the task (a one-line file is the
/// task alone).
fn read_instruction(file: &Path, out: &mut Ingested) -> Option<String> {
    if std::fs::symlink_metadata(file).is_err() {
        out.problem(file, "missing: the trace has no instruction");
        return None;
    }
    match read_text(file) {
        Ok(text) => {
            let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            let task = match lines.as_slice() {
                [] => None,
                [only] => Some(only.to_string()),
                [_, rest @ ..] => Some(rest.join("\n")),
            };
            if task.is_none() {
                out.problem(file, "is empty");
            }
            task
        }
        Err(e) => {
            out.problem(file, e);
            None
        }
    }
}

fn read_screen(index: usize, f: &ScreenFiles, out: &mut Ingested) -> Option<TraceScreen> {
    let mut tree = None;
    if let Some(xml) = &f.xml {
        match read_text(xml).and_then(|t| crate::views::tree_from_xml(&t)) {
            Ok(t) => tree = Some(t),
            Err(e) => out.problem(xml, e),
        }
    }
    if tree.is_none()
        && let Some(vh) = &f.vh
    {
        match read_view_list(vh) {
            Ok(t) => tree = Some(t),
            Err(e) => out.problem(vh, e),
        }
    }
    let screenshot = f.image.as_ref().and_then(|p| match read_screenshot(p) {
        Ok(s) => Some(s),
        Err(e) => {
            out.problem(p, e);
            None
        }
    });
    let (activity_package, activity) = match &f.activity {
        Some(p) => match read_text(p) {
            Ok(text) => {
                let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
                if line.is_empty() { (None, None) } else { split_activity(Some(line)) }
            }
            Err(e) => {
                out.problem(p, e);
                (None, None)
            }
        },
        None => (None, None),
    };
    let (tree, detail) = match tree {
        Some(tree) => (tree, Detail::Full),
        // A screenshot alone: the screen is known to exist (and its size), its elements are not.
        None if screenshot.is_some() => {
            (screen_only(screenshot.as_ref().and_then(|s| image_size(&s.bytes))), Detail::Partial)
        }
        None => return None,
    };
    let tree_package =
        (!tree.is_empty()).then(|| tree.node(NodeId(0)).package.clone()).filter(|p| !p.is_empty());
    Some(TraceScreen {
        key: index.to_string(),
        package: activity_package.or(tree_package),
        activity,
        tree,
        detail,
        screenshot,
    })
}

/// A tree of one empty full-screen root (nothing known but the screen's size).
fn screen_only(size: Option<(u32, u32)>) -> UiTree {
    let Some((w, h)) = size else { return UiTree::default() };
    let mut builder = TreeBuilder::new();
    let root = Node::new(
        "android.widget.FrameLayout",
        "",
        Bounds::new(0, 0, w.min(1 << 20) as i32, h.min(1 << 20) as i32),
    );
    if builder.leaf(root).is_err() {
        return UiTree::default();
    }
    builder.finish().unwrap_or_default()
}

fn read_view_list(file: &Path) -> Result<UiTree, String> {
    let text = read_text(file)?;
    let value: Value = serde_json::from_str(&text).map_err(|e| crate::limits::json_error(&e))?;
    let views = value.as_array().ok_or("not a JSON list of views")?;
    tree_from_views(views)
}

/// The size in pixels of a PNG or JPEG, from its header.
pub fn image_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.get(12..16) == Some(b"IHDR") {
        let be = |r: std::ops::Range<usize>| {
            bytes.get(r).and_then(|b| <[u8; 4]>::try_from(b).ok()).map(u32::from_be_bytes)
        };
        return Some((be(16..20)?, be(20..24)?)).filter(|&(w, h)| w > 0 && h > 0);
    }
    if bytes.starts_with(&[0xFF, 0xD8]) {
        let mut i = 2;
        while i + 9 < bytes.len() {
            if bytes[i] != 0xFF {
                return None;
            }
            let marker = bytes[i + 1];
            if marker == 0xFF {
                i += 1;
                continue;
            }
            let len = u16::from_be_bytes([bytes[i + 2], bytes[i + 3]]) as usize;
            let is_sof = (0xC0..=0xCF).contains(&marker) && !matches!(marker, 0xC4 | 0xC8 | 0xCC);
            if is_sof {
                let h = u16::from_be_bytes([bytes[i + 5], bytes[i + 6]]) as u32;
                let w = u16::from_be_bytes([bytes[i + 7], bytes[i + 8]]) as u32;
                return Some((w, h)).filter(|&(w, h)| w > 0 && h > 0);
            }
            i += 2 + len;
        }
    }
    None
}

/// The screen's size in pixels: its screenshot's, else its tree's screen bounds.
fn screen_size(screen: &TraceScreen) -> Option<(u32, u32)> {
    if let Some(size) = screen.screenshot.as_ref().and_then(|s| image_size(&s.bytes)) {
        return Some(size);
    }
    let b = screen.tree.screen_bounds();
    (b.width() > 0 && b.height() > 0).then(|| (b.width() as u32, b.height() as u32))
}

/// `(A, B)` after `label` in `line`.
fn pair_after(line: &str, label: &str) -> Option<(i64, i64)> {
    let rest = &line[line.find(label)? + label.len()..];
    let rest = rest.trim_start().strip_prefix('(')?;
    let inner = &rest[..rest.find(')')?];
    let (a, b) = inner.split_once(',')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// A point of the `(w, h)` resolution space on a `size` screen.
fn scale(p: (i64, i64), resolution: (i64, i64), size: (u32, u32)) -> Point {
    let x = (p.0 as f64 * f64::from(size.0) / resolution.0 as f64).round();
    let y = (p.1 as f64 * f64::from(size.1) / resolution.1 as f64).round();
    Point {
        x: x.clamp(0.0, f64::from(size.0.saturating_sub(1))) as i32,
        y: y.clamp(0.0, f64::from(size.1.saturating_sub(1))) as i32,
    }
}

/// The element a touch at `p` lands on, described: the tree's hit test, unless what it finds
/// neither takes touches nor lies inside something that does (a full-screen overlay such as the
/// launcher's `Home` view, which Android lets touches through); then the smallest element at `p`
/// that takes touches (the latest in the document on a tie).
pub fn element_at(tree: &UiTree, p: Point) -> Option<ElementRef> {
    let hit = tree.hit_test(p.x, p.y)?;
    let takes = |id: NodeId| {
        let n = tree.node(id);
        n.clickable || n.long_clickable || n.checkable || n.is_editable()
    };
    if takes(hit) || tree.ancestors(hit).any(takes) {
        return Some(ElementRef::of_node(tree.node(hit)));
    }
    let best = tree
        .iter()
        .filter(|(id, n)| n.is_visible() && n.bounds.contains(p.x, p.y) && takes(*id))
        .min_by_key(|(id, n)| (n.bounds.area(), std::cmp::Reverse(id.0)))
        .map(|(id, _)| id)
        .unwrap_or(hit);
    Some(ElementRef::of_node(tree.node(best)))
}

fn resolution(line: &str) -> Result<(i64, i64), String> {
    let (w, h) = pair_after(line, "Screen Resolution").ok_or("no `Screen Resolution (W, H)`")?;
    if w <= 0 || h <= 0 {
        return Err(format!("Screen Resolution ({w}, {h}) is empty"));
    }
    Ok((w, h))
}

/// One `eventStructs.txt` line on `screen`.
pub fn parse_event(line: &str, screen: &TraceScreen) -> Result<(Action, Option<ElementRef>), String> {
    let open = line.strip_prefix('[').ok_or("does not start with `[Type]`")?;
    let close = open.find(']').ok_or("the action type's `[` is never closed")?;
    let kind = &open[..close];
    let rest = &open[close + 1..];
    let size =
        || screen_size(screen).ok_or("the screen's size is unknown (no screenshot, no tree)".to_string());
    match kind {
        "Home" => Ok((Action::Key { key: Key::Home }, None)),
        "Back" => Ok((Action::Key { key: Key::Back }, None)),
        "Enter" => Ok((Action::Key { key: Key::Enter }, None)),
        "Input" | "Type" => {
            let text = rest.strip_prefix(' ').unwrap_or(rest).to_string();
            Ok((Action::Type { text, target: None, clear: false, enter: false }, None))
        }
        "Click" | "LongClick" | "Long Click" => {
            let res = resolution(rest)?;
            let p = pair_after(rest, "Click Position").ok_or("no `Click Position (X, Y)`")?;
            if p.0 < 0 || p.1 < 0 || p.0 > res.0 || p.1 > res.1 {
                return Err(format!(
                    "Click Position ({}, {}) is outside the Screen Resolution ({}, {})",
                    p.0, p.1, res.0, res.1
                ));
            }
            let point = scale(p, res, size()?);
            let target = element_at(&screen.tree, point);
            let action = if kind == "Click" {
                Action::Tap { target: Target::Point(point) }
            } else {
                Action::LongPress { target: Target::Point(point) }
            };
            Ok((action, target))
        }
        "Swipe" => {
            let res = resolution(rest)?;
            let a = pair_after(rest, "Start Position").ok_or("no `Start Position (X, Y)`")?;
            let b = pair_after(rest, "End Position").ok_or("no `End Position (X, Y)`")?;
            let size = size()?;
            let (from, to) = (scale(a, res, size), scale(b, res, size));
            Ok((Action::Swipe(Swipe::Between { from, to }), element_at(&screen.tree, from)))
        }
        other => {
            Err(format!("unknown action `[{other}]` (LlamaTouch writes Home, Back, Click, Swipe, Input)"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_and_jpeg_sizes_come_from_their_headers() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&270u32.to_be_bytes());
        png.extend_from_slice(&600u32.to_be_bytes());
        assert_eq!(image_size(&png), Some((270, 600)));
        let jpeg =
            [0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 0, 0, 0xFF, 0xC0, 0, 11, 8, 0x09, 0x60, 0x04, 0x38, 3, 0, 0];
        assert_eq!(image_size(&jpeg), Some((1080, 2400)));
        assert_eq!(image_size(b"GIF89a"), None);
        assert_eq!(
            pair_after("Screen Resolution (320, 720), Click Position (204, 170)", "Click Position"),
            Some((204, 170))
        );
        assert_eq!(scale((160, 360), (320, 720), (1080, 2400)), Point { x: 540, y: 1200 });
    }
}
