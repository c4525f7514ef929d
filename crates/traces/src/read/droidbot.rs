//! DroidBot output (also AutoDroid's and DroidTask's raw runs, which are DroidBot's): a folder
//! with `utg.js` (the UI transition graph: `var utg = {nodes, edges, ...}`), `states/`
//! (`state_<tag>.json`: `state_str`, `foreground_activity`, `views`; `screen_<tag>.png|jpg`) and
//! `events/` (`event_<tag>.json`: `event`, `start_state`, `stop_state`).
//!
//! A state file gives a screen in full. A state known only from `utg.js` becomes an outline of
//! the node's ids and texts. A state known only from events becomes a partial screen of the
//! views those events touched. With `events/` the trace is the exploration in time order;
//! without, the graph's edges in event order.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use phonebench_actions::{Action, Direction, Key, Point, Target};
use phonebench_uitree::{Node, TreeBuilder, UiTree};
use serde_json::Value;

use crate::limits::{is_real_dir, is_real_file, list_dir, read_screenshot, read_text};
use crate::model::{Detail, ElementRef, Ingested, Trace, TraceFormat, TraceKind, TraceScreen, TraceStep};
use crate::read::{find_element, stem};
use crate::views::{OutlineElement, tree_from_outline, tree_from_views, view_node};

/// Reads one DroidBot output folder, or a `utg.js` file.
pub fn read(path: &Path) -> Ingested {
    let mut out = Ingested::default();
    let (dir, utg_file) = if is_real_file(path) {
        (path.parent().unwrap_or(Path::new(".")).to_path_buf(), Some(path.to_path_buf()))
    } else if is_real_dir(path) {
        let utg = path.join("utg.js");
        if std::fs::symlink_metadata(&utg).is_ok() && !is_real_file(&utg) {
            out.problem(&utg, "not a regular file (a symbolic link, folder or FIFO is refused)");
        }
        (path.to_path_buf(), is_real_file(&utg).then_some(utg))
    } else {
        out.problem(path, "not a file or folder (or a symbolic link, which is refused)");
        return out;
    };
    let mut builder = Builder::new(&dir);
    let utg = match &utg_file {
        Some(file) => match read_utg(file) {
            Ok(utg) => Some(utg),
            Err(message) => {
                out.problem(file, message);
                None
            }
        },
        None => None,
    };
    let states_dir = dir.join("states");
    if is_real_dir(&states_dir) {
        builder.read_states(&states_dir, &mut out);
    }
    let events_dir = dir.join("events");
    let has_events = is_real_dir(&events_dir);
    if let Some(utg) = &utg {
        builder.add_utg_nodes(utg, utg_file.as_deref().unwrap_or(path), &mut out);
    }
    let kind = if has_events {
        builder.read_events(&events_dir, &mut out);
        TraceKind::Exploration
    } else if let Some(utg) = &utg {
        builder.add_utg_edges(utg, utg_file.as_deref().unwrap_or(path), &mut out);
        TraceKind::Graph
    } else {
        if builder.screens.is_empty() {
            // A utg.js that failed to read has been reported already.
            if utg_file.is_none() {
                out.problem(path, "no utg.js, states/ or events/ here: not a DroidBot output folder");
            }
            return out;
        }
        TraceKind::Graph
    };
    let package = utg.as_ref().and_then(|u| u.get("app_package")).and_then(Value::as_str).map(str::to_string);
    let screens = builder.finish();
    if screens.is_empty() {
        if out.problems.is_empty() {
            out.problem(path, "no screen could be read");
        }
        return out;
    }
    out.traces.push(Trace {
        format: TraceFormat::Droidbot,
        name: stem(&dir),
        // The output folder, also when its utg.js was named: one recording, one origin.
        origin: dir.display().to_string(),
        package,
        instruction: None,
        kind,
        screens,
        steps: builder.steps,
    });
    out
}

fn read_utg(file: &Path) -> Result<Value, String> {
    let text = read_text(file)?;
    // `var utg = {...}` (a JavaScript file that the HTML viewer loads); a bare JSON file too.
    let start = text.find('{').ok_or("no JSON object in the file")?;
    let body = text[start..].trim_end().trim_end_matches(';');
    let utg: Value = serde_json::from_str(body)
        .map_err(|e| format!("line {}: {e}", e.line() + text[..start].lines().count().saturating_sub(1)))?;
    if !utg.get("nodes").is_some_and(Value::is_array) {
        return Err("no `nodes` list: not a DroidBot UTG".into());
    }
    Ok(utg)
}

/// Screens by state key, in order of first sight.
struct Builder<'a> {
    dir: &'a Path,
    index: BTreeMap<String, usize>,
    screens: Vec<TraceScreen>,
    /// Views touched on states without a state file, to make partial screens of.
    touched: BTreeMap<usize, Vec<Value>>,
    steps: Vec<TraceStep>,
}

impl<'a> Builder<'a> {
    fn new(dir: &'a Path) -> Self {
        Builder {
            dir,
            index: BTreeMap::new(),
            screens: Vec::new(),
            touched: BTreeMap::new(),
            steps: Vec::new(),
        }
    }

    fn add(&mut self, screen: TraceScreen) -> usize {
        if let Some(&i) = self.index.get(&screen.key) {
            if screen.detail > self.screens[i].detail {
                let shot = self.screens[i].screenshot.take();
                self.screens[i] = screen;
                if self.screens[i].screenshot.is_none() {
                    self.screens[i].screenshot = shot;
                }
            }
            return i;
        }
        let i = self.screens.len();
        self.index.insert(screen.key.clone(), i);
        self.screens.push(screen);
        i
    }

    /// The screen for `key`, made as an empty partial screen when unknown.
    fn screen(&mut self, key: &str) -> usize {
        if let Some(&i) = self.index.get(key) {
            return i;
        }
        self.add(TraceScreen {
            key: key.to_string(),
            package: None,
            activity: None,
            tree: UiTree::default(),
            detail: Detail::Partial,
            screenshot: None,
        })
    }

    fn read_states(&mut self, dir: &Path, out: &mut Ingested) {
        let files = match list_dir(dir) {
            Ok(files) => files,
            Err(e) => return out.problem(dir, e),
        };
        for file in files.iter().filter(|f| f.extension().is_some_and(|e| e == "json")) {
            match self.read_state(file, &files) {
                Ok(screen) => {
                    self.add(screen);
                }
                Err(message) => out.problem(file, message),
            }
        }
    }

    fn read_state(&self, file: &Path, siblings: &[std::path::PathBuf]) -> Result<TraceScreen, String> {
        let text = read_text(file)?;
        let state: Value = serde_json::from_str(&text).map_err(|e| crate::limits::json_error(&e))?;
        let key =
            state.get("state_str").and_then(Value::as_str).ok_or("no `state_str`: not a DroidBot state")?;
        let views = state.get("views").and_then(Value::as_array).ok_or("no `views` list")?;
        let tree = tree_from_views(views)?;
        let (package, activity) = split_activity(state.get("foreground_activity").and_then(Value::as_str));
        // `state_<tag>.json` → `screen_<tag>.png` / `.jpg`.
        let tag = state.get("tag").and_then(Value::as_str).map(str::to_string).or_else(|| {
            file.file_stem()
                .and_then(|s| s.to_str())
                .and_then(|s| s.strip_prefix("state_"))
                .map(str::to_string)
        });
        let screenshot = tag.and_then(|tag| {
            siblings
                .iter()
                .filter(|p| p.file_stem().and_then(|s| s.to_str()) == Some(&format!("screen_{tag}")))
                .find_map(|p| read_screenshot(p).ok())
        });
        Ok(TraceScreen {
            key: key.to_string(),
            package: package.or_else(|| {
                (!tree.is_empty()).then(|| tree.node(phonebench_uitree::NodeId(0)).package.clone())
            }),
            activity,
            tree,
            detail: Detail::Full,
            screenshot,
        })
    }

    fn add_utg_nodes(&mut self, utg: &Value, file: &Path, out: &mut Ingested) {
        let Some(nodes) = utg.get("nodes").and_then(Value::as_array) else { return };
        let mut seen_nodes = std::collections::BTreeSet::new();
        for (i, node) in nodes.iter().enumerate() {
            let Some(key) = node.get("state_str").or_else(|| node.get("id")).and_then(Value::as_str) else {
                out.problem(file, format!("node {i}: no `state_str` or `id`"));
                continue;
            };
            if !seen_nodes.insert(key.to_string()) {
                out.problem(file, format!("node {i}: `{key}` is listed twice (the first is kept)"));
                continue;
            }
            if self.index.get(key).is_some_and(|&s| self.screens[s].detail == Detail::Full) {
                continue;
            }
            let package = node.get("package").and_then(Value::as_str).unwrap_or("");
            let activity = node.get("activity").and_then(Value::as_str).map(str::to_string);
            let elements = outline_of_content(node.get("content").and_then(Value::as_str).unwrap_or(""));
            let tree = match tree_from_outline(package, &elements) {
                Ok(tree) => tree,
                Err(e) => {
                    out.problem(file, format!("node {i}: {e}"));
                    continue;
                }
            };
            let screenshot = node
                .get("image")
                .and_then(Value::as_str)
                .filter(|p| inside(p))
                .and_then(|p| read_screenshot(&self.dir.join(p)).ok());
            self.add(TraceScreen {
                key: key.to_string(),
                package: (!package.is_empty()).then(|| package.to_string()),
                activity,
                tree,
                detail: Detail::Outline,
                screenshot,
            });
        }
    }

    fn add_utg_edges(&mut self, utg: &Value, file: &Path, out: &mut Ingested) {
        let Some(edges) = utg.get("edges").and_then(Value::as_array) else { return };
        // (event id, edge order, from, to, event)
        let mut all = Vec::new();
        for (i, edge) in edges.iter().enumerate() {
            let (Some(from), Some(to)) =
                (edge.get("from").and_then(Value::as_str), edge.get("to").and_then(Value::as_str))
            else {
                out.problem(file, format!("edge {i}: no `from` / `to`"));
                continue;
            };
            // An edge between states the graph does not list would make up a screen.
            if !self.index.contains_key(from) || !self.index.contains_key(to) {
                out.problem(
                    file,
                    format!("edge {i}: `{from}` → `{to}` names a state that is not a node (edge left out)"),
                );
                continue;
            }
            let events = edge.get("events").and_then(Value::as_array).cloned().unwrap_or_default();
            for event in events {
                let id = event.get("event_id").and_then(Value::as_i64).unwrap_or(i64::MAX);
                all.push((id, i, from.to_string(), to.to_string(), event));
            }
        }
        all.sort_by_key(|a| (a.0, a.1));
        for (_, _, from, to, event) in all {
            let raw = event.get("event_str").and_then(Value::as_str).unwrap_or("").to_string();
            let from = self.screen(&from);
            let to = self.screen(&to);
            let (action, target) = self.edge_action(&raw, from);
            self.steps.push(TraceStep { from, to: Some(to), action, target, raw });
        }
    }

    /// An action from a UTG edge's `event_str` (`TouchEvent(state=..., view=HASH(Activity/Class-Text))`).
    fn edge_action(&mut self, raw: &str, from: usize) -> (Action, Option<ElementRef>) {
        let kind = raw.split('(').next().unwrap_or("");
        let target = view_descriptor(raw);
        let resolved = target.as_ref().and_then(|t| {
            let tree = &self.screens[from].tree;
            find_element(tree, t).map(|id| {
                let node = tree.node(id);
                (node.bounds.center(), ElementRef { text_is_prefix: false, ..ElementRef::of_node(node) })
            })
        });
        let (point, target) = match resolved {
            Some((point, element)) => (Some(point), Some(element)),
            None => (None, target),
        };
        let at = |t: &Option<ElementRef>| match point {
            Some((x, y)) => Target::Point(Point { x, y }),
            None => Target::Description(t.as_ref().map(ElementRef::label).unwrap_or_default()),
        };
        let action = match kind {
            "TouchEvent" => Action::Tap { target: at(&target) },
            "LongTouchEvent" => Action::LongPress { target: at(&target) },
            "SetTextEvent" => Action::Type {
                text: field(raw, "text=").unwrap_or_default(),
                target: Some(at(&target)),
                clear: true,
                enter: false,
            },
            "KeyEvent" => Action::Key { key: key_named(&field(raw, "name=").unwrap_or_default()) },
            "ScrollEvent" | "SwipeEvent" => Action::Scroll {
                direction: direction_named(&field(raw, "direction=").unwrap_or_default()),
                target: None,
            },
            "IntentEvent" => intent_action(&field(raw, "intent=").unwrap_or_default()),
            "KillAppEvent" => Action::Key { key: Key::Home },
            _ => Action::Wait { ms: None },
        };
        (action, target)
    }

    fn read_events(&mut self, dir: &Path, out: &mut Ingested) {
        let files = match list_dir(dir) {
            Ok(files) => files,
            Err(e) => return out.problem(dir, e),
        };
        for file in files.iter().filter(|f| f.extension().is_some_and(|e| e == "json")) {
            if let Err(message) = self.read_event(file) {
                out.problem(file, message);
            }
        }
    }

    fn read_event(&mut self, file: &Path) -> Result<(), String> {
        let text = read_text(file)?;
        let record: Value = serde_json::from_str(&text).map_err(|e| crate::limits::json_error(&e))?;
        let event =
            record.get("event").filter(|e| e.is_object()).ok_or("no `event` object: not a DroidBot event")?;
        let start = record.get("start_state").and_then(Value::as_str).ok_or("no `start_state`")?;
        let stop = record.get("stop_state").and_then(Value::as_str);
        let kind = event.get("event_type").and_then(Value::as_str).ok_or("no `event.event_type`")?;
        let raw = record.get("event_str").and_then(Value::as_str).unwrap_or(kind).to_string();
        let from = self.screen(start);
        let to = stop.map(|s| self.screen(s));
        let view = event.get("view").filter(|v| v.is_object());
        let element = view.map(|v| ElementRef::of_node(&view_node(v)));
        if let Some(v) = view
            && self.screens[from].detail == Detail::Partial
        {
            self.touched.entry(from).or_default().push(v.clone());
        }
        let point = match (event.get("x").and_then(Value::as_i64), event.get("y").and_then(Value::as_i64)) {
            (Some(x), Some(y)) => Some(Point { x: x as i32, y: y as i32 }),
            _ => element.as_ref().and_then(|e| e.bounds).map(|b| {
                let (x, y) = b.center();
                Point { x, y }
            }),
        };
        let target = || match (&point, &element) {
            (Some(p), _) => Ok(Target::Point(*p)),
            (None, Some(e)) => Ok(Target::Description(e.label())),
            (None, None) => Err(format!("a {kind} event without a view or coordinates")),
        };
        let str_of = |name: &str| event.get(name).and_then(Value::as_str).unwrap_or("").to_string();
        let action = match kind {
            "touch" | "click" => Action::Tap { target: target()? },
            "long_touch" | "long_click" => Action::LongPress { target: target()? },
            "set_text" => {
                Action::Type { text: str_of("text"), target: target().ok(), clear: true, enter: false }
            }
            "key" => Action::Key { key: key_named(&str_of("name")) },
            "scroll" | "swipe" => {
                Action::Scroll { direction: direction_named(&str_of("direction")), target: target().ok() }
            }
            "intent" => intent_action(&str_of("intent")),
            "kill_app" => Action::Key { key: Key::Home },
            other => return Err(format!("unknown event type `{other}`")),
        };
        self.steps.push(TraceStep { from, to, action, target: element, raw });
        Ok(())
    }

    fn finish(&mut self) -> Vec<TraceScreen> {
        for (screen, views) in std::mem::take(&mut self.touched) {
            if self.screens[screen].detail != Detail::Partial {
                continue;
            }
            self.screens[screen].tree = partial_tree(&views);
            if let Some(first) = views.first() {
                let package = first.get("package").and_then(Value::as_str).unwrap_or("");
                if !package.is_empty() {
                    self.screens[screen].package = Some(package.to_string());
                }
            }
        }
        std::mem::take(&mut self.screens)
    }
}

/// A partial screen: a full-screen root holding the touched views (each once) at their bounds.
fn partial_tree(views: &[Value]) -> UiTree {
    let mut nodes: Vec<Node> = Vec::new();
    for v in views {
        let node = view_node(v);
        if !nodes.iter().any(|n| n.bounds == node.bounds && n.class == node.class && n.text == node.text) {
            nodes.push(node);
        }
    }
    let width = nodes.iter().map(|n| n.bounds.right).max().unwrap_or(1080).max(1080);
    let height = nodes.iter().map(|n| n.bounds.bottom).max().unwrap_or(2400).max(2400);
    let package = nodes.first().map(|n| n.package.clone()).unwrap_or_default();
    let mut builder = TreeBuilder::new();
    let mut ok = builder
        .open(Node::new(
            "android.widget.FrameLayout",
            package,
            phonebench_uitree::Bounds::new(0, 0, width, height),
        ))
        .is_ok();
    for n in nodes {
        ok &= builder.leaf(n).is_ok();
    }
    ok &= builder.close().is_ok();
    if !ok {
        return UiTree::default();
    }
    builder.finish().unwrap_or_default()
}

/// `pkg/.Activity` → (`pkg`, `.Activity`).
pub fn split_activity(value: Option<&str>) -> (Option<String>, Option<String>) {
    match value {
        Some(v) => match v.split_once('/') {
            Some((p, a)) => (Some(p.to_string()), Some(a.to_string())),
            None => (None, Some(v.to_string())),
        },
        None => (None, None),
    }
}

/// A UTG node's `content`: package, activity, state, then resource ids (comma-separated), then
/// texts (comma-separated; they may run over several lines). Each id and text is one element.
fn outline_of_content(content: &str) -> Vec<OutlineElement> {
    let lines: Vec<&str> = content.lines().collect();
    let mut elements = Vec::new();
    let texts = lines.get(4..).map(|l| l.join("\n")).unwrap_or_default();
    for text in texts.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        elements.push(OutlineElement {
            class: "android.widget.TextView".into(),
            text: text.to_string(),
            ..Default::default()
        });
    }
    for id in lines.get(3).copied().unwrap_or("").split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let class = if id.ends_with("/checkbox") { "android.widget.CheckBox" } else { "android.view.View" };
        elements.push(OutlineElement {
            class: class.into(),
            resource_id: id.to_string(),
            checkable: class.ends_with("CheckBox"),
            ..Default::default()
        });
    }
    elements
}

/// `view=HASH(Activity/Class-Text)` in an event string → the element it names (text cut short).
fn view_descriptor(raw: &str) -> Option<ElementRef> {
    let start = raw.find("view=")? + "view=".len();
    let rest = &raw[start..];
    let open = rest.find('(')?;
    let inner = &rest[open + 1..];
    // The descriptor ends at the parenthesis that closes it (texts may hold parentheses).
    let mut depth = 1;
    let mut end = inner.len();
    for (i, c) in inner.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    end = i;
                    break;
                }
            }
            _ => {}
        }
    }
    let inner = &inner[..end];
    let after_activity = inner.split_once('/').map(|(_, r)| r).unwrap_or(inner);
    let (class, text) = after_activity.split_once('-').unwrap_or((after_activity, ""));
    Some(ElementRef {
        class: class.to_string(),
        text: text.to_string(),
        text_is_prefix: true,
        ..Default::default()
    })
}

/// The value of `name=` in an event string: quoted (`'...'`) or up to the next `,` / `)`.
fn field(raw: &str, name: &str) -> Option<String> {
    let start = raw.find(name)? + name.len();
    let rest = &raw[start..];
    if let Some(quoted) = rest.strip_prefix('\'') {
        return quoted.find('\'').map(|end| quoted[..end].to_string());
    }
    let end = rest.find([',', ')']).unwrap_or(rest.len());
    Some(rest[..end].trim().to_string())
}

fn key_named(name: &str) -> Key {
    match name.to_ascii_uppercase().trim_start_matches("KEYCODE_") {
        "BACK" => Key::Back,
        "HOME" => Key::Home,
        "ENTER" => Key::Enter,
        "MENU" => Key::Menu,
        "SEARCH" => Key::Search,
        "APP_SWITCH" => Key::AppSwitch,
        other => Key::Other(other.to_string()),
    }
}

fn direction_named(name: &str) -> Direction {
    match name.to_ascii_lowercase().as_str() {
        "up" => Direction::Up,
        "left" => Direction::Left,
        "right" => Direction::Right,
        _ => Direction::Down,
    }
}

/// `am start pkg/.Activity` → open the package; anything else (a broadcast, a stop) → Home.
fn intent_action(intent: &str) -> Action {
    let mut words = intent.split_whitespace();
    match (words.next(), words.next()) {
        (Some("am"), Some("start")) => {
            let component = words.rfind(|w| !w.starts_with('-')).unwrap_or("");
            let package = component.split('/').next().unwrap_or(component);
            Action::OpenApp { app: package.to_string() }
        }
        _ => Action::Key { key: Key::Home },
    }
}

/// Whether a relative path from a trace file stays inside the trace's folder.
pub fn inside(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_descriptor_names_class_and_text_prefix() {
        let raw = "TouchEvent(state=7d3d, view=dba6(WebViewBrowserActivity/TextView-About WebV))";
        let e = view_descriptor(raw).unwrap_or_default();
        assert_eq!((e.class.as_str(), e.text.as_str(), e.text_is_prefix), ("TextView", "About WebV", true));
        let e = view_descriptor("TouchEvent(state=1, view=2(A/Button-Save (1)))").unwrap_or_default();
        assert_eq!(e.text, "Save (1)");
        assert_eq!(field("KeyEvent(state=1, name=BACK)", "name=").as_deref(), Some("BACK"));
        assert_eq!(intent_action("am start com.x/com.x.Main"), Action::OpenApp { app: "com.x".into() });
        assert!(inside("states/a.png") && !inside("../a.png") && !inside("/etc/passwd"));
    }
}
