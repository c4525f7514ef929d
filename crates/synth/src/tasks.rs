//! A task suite grounded in an app package, with references found by searching the app on the
//! simulated phone (never handwritten):
//!
//! 1. **Explore**: breadth-first from the entry screen, tapping every visible clickable element
//!    that is not a switch or a text field (from a reset phone, replaying the path each time),
//!    until no new screen appears or [`MAX_TAPS`] taps. Each screen keeps the shortest tap path
//!    to it, each tap written as a selector (`#id "text"`, `"text"`, `@"desc"`) checked to name
//!    exactly the element tapped.
//! 2. **Propose**, from what the screens show and the package's state tables:
//!    - *navigation*: go to a screen, named by a text only it shows (criterion: `screen`);
//!    - *retrieval*: the value shown for a label (a two-line element, `label: value`, or a row
//!      of exactly two texts), the label shown once in the app (criterion: `answer`);
//!    - *state changes*: turn a switch to the other state, type a value into a text field
//!      (criteria: `state` on the `toggles` / `fields` tables of a rebuilt app).
//! 3. **Keep** only tasks that `validate` passes: the reference succeeds, the no-op agent fails
//!    with ACP 0 and the random agent (3 seeds) fails.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use phonebench_actions::{Action, Point, Target};
use phonebench_agents::resolve_selector;
use phonebench_phone::Phone;
use phonebench_tasks::reference::{Selector, SelectorTerm};
use phonebench_uitree::{NodeId, UiTree, WindowKind};
use serde::Serialize;

use crate::fidelity::{crash_message, phone_for};
use crate::{SynthError, slug, toml_str};

/// Most taps the exploration makes.
pub const MAX_TAPS: usize = 3000;
/// Most taps on the way to a screen.
pub const MAX_DEPTH: usize = 8;
/// Most tasks of each kind.
pub const MAX_PER_KIND: usize = 12;

/// One tap of a path: the reference step and the action that replays it.
#[derive(Debug, Clone)]
pub struct PathStep {
    /// The reference line (`tap #id "text"`).
    pub line: String,
    /// The tap.
    pub action: Action,
}

/// A screen found by exploring, and the shortest path to it.
#[derive(Debug, Clone)]
pub struct Reached {
    /// Screen name.
    pub screen: String,
    /// Taps from the entry screen.
    pub path: Vec<PathStep>,
    /// Its tree.
    pub tree: UiTree,
    /// The screen scrolled down once, twice, … (while the tree changes, at most
    /// [`MAX_SCROLLS`] times): what a long screen shows further down.
    pub scrolled: Vec<UiTree>,
}

/// Most scrolls down a screen's content is read through.
pub const MAX_SCROLLS: usize = 8;

/// The trees of the screen in front scrolled down, until nothing changes.
fn scroll_down(phone: &mut Phone) -> Result<Vec<UiTree>, SynthError> {
    let mut trees = Vec::new();
    let mut last = phone.tree().map_err(|e| SynthError::Load(e.to_string()))?.clone();
    for _ in 0..MAX_SCROLLS {
        let scroll = Action::Scroll { direction: phonebench_actions::Direction::Down, target: None };
        if phone.apply(&scroll).is_err() {
            break;
        }
        let tree = phone.tree().map_err(|e| SynthError::Load(e.to_string()))?.clone();
        if tree == last {
            break;
        }
        trees.push(tree.clone());
        last = tree;
    }
    Ok(trees)
}

/// A proposed task.
#[derive(Debug, Clone, Serialize)]
pub struct Proposal {
    /// Task id.
    pub id: String,
    /// `navigation`, `retrieval`, `toggle` or `field`.
    pub kind: String,
    /// The task file's text.
    #[serde(skip)]
    pub toml: String,
}

/// What synthesis kept and dropped.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteOutcome {
    /// Folder written.
    pub dir: PathBuf,
    /// Screens reached by exploring (of the package's screens).
    pub screens_reached: usize,
    /// The package's screens.
    pub screens_total: usize,
    /// Taps made exploring.
    pub taps: usize,
    /// Tasks kept (valid).
    pub kept: Vec<String>,
    /// Tasks dropped, with the first problem validation found.
    pub dropped: Vec<(String, String)>,
}

fn quote(text: &str) -> String {
    phonebench_tasks::reference::quote_string(text)
}

/// Whether a text can go into a goal, answer or selector literally (they are templates there).
fn plain(text: &str) -> bool {
    !text.is_empty() && !text.contains(['{', '}']) && !text.contains("{%") && text.chars().count() <= 80
}

/// App content nodes: visible, non-empty, in an application window.
fn app_nodes(tree: &UiTree) -> Vec<NodeId> {
    let screen = tree.screen_bounds();
    tree.iter()
        .filter(|(id, n)| {
            let w = tree.window(tree.window_of(*id));
            let (cx, cy) = n.bounds.center();
            matches!(w.kind, WindowKind::Application)
                && n.is_visible()
                && !n.bounds.is_empty()
                && screen.contains(cx, cy)
        })
        .map(|(id, _)| id)
        .collect()
}

/// App content nodes the agent can read: visible and at least partly on the screen (a long
/// text running off the bottom is still read from its start).
fn readable_nodes(tree: &UiTree) -> Vec<NodeId> {
    let screen = tree.screen_bounds();
    tree.iter()
        .filter(|(id, n)| {
            let w = tree.window(tree.window_of(*id));
            matches!(w.kind, WindowKind::Application)
                && n.is_visible()
                && n.bounds.intersection(&screen).is_some_and(|b| !b.is_empty())
        })
        .map(|(id, _)| id)
        .collect()
}

/// The element a tap on `id` reaches: itself or its nearest clickable ancestor.
fn tap_target(tree: &UiTree, id: NodeId) -> NodeId {
    std::iter::once(id).chain(tree.ancestors(id)).find(|&a| tree.node(a).clickable).unwrap_or(id)
}

/// A selector naming `id` (or an element whose tap reaches the same target), as reference text.
pub fn selector_for(tree: &UiTree, id: NodeId) -> Option<String> {
    let node = tree.node(id);
    let short_id = node.resource_id.rsplit('/').next().unwrap_or("").to_string();
    let mut candidates: Vec<(Vec<SelectorTerm>, String)> = Vec::new();
    let text = node.text.trim().to_string();
    let has_text = plain(&node.text) && node.text == text;
    if !short_id.is_empty() && node.resource_id.contains(":id/") {
        if has_text {
            candidates.push((
                vec![SelectorTerm::Id(short_id.clone()), SelectorTerm::Text(text.clone())],
                format!("#{short_id} {}", quote(&text)),
            ));
        }
        candidates.push((vec![SelectorTerm::Id(short_id.clone())], format!("#{short_id}")));
    }
    if has_text {
        candidates.push((vec![SelectorTerm::Text(text.clone())], quote(&text)));
    }
    if plain(&node.content_desc) {
        candidates.push((
            vec![SelectorTerm::Desc(node.content_desc.clone())],
            format!("@{}", quote(&node.content_desc)),
        ));
    }
    let want = tap_target(tree, id);
    candidates
        .into_iter()
        .find(|(terms, _)| {
            resolve_selector(tree, &Selector(terms.clone()))
                .is_some_and(|found| tap_target(tree, found) == want)
        })
        .map(|(_, text)| text)
}

/// Explores the app (see the module doc). Returns the screens reached and the taps made.
pub fn explore(phone: &mut Phone, app: &str) -> Result<(Vec<Reached>, usize), SynthError> {
    let none = BTreeMap::new();
    let load = |e: phonebench_phone::PhoneError| SynthError::Load(e.to_string());
    let go = |phone: &mut Phone, path: &[PathStep]| -> Result<(), SynthError> {
        phone.reset().map_err(load)?;
        phone.start_app(app, None, &none).map_err(load)?;
        for step in path {
            phone.apply(&step.action).map_err(load)?;
        }
        Ok(())
    };
    go(phone, &[])?;
    let entry = phone
        .current_screen()
        .map(|(_, s)| s.to_string())
        .ok_or_else(|| SynthError::Load("the app did not start".into()))?;
    let tree = phone.tree().map_err(load)?.clone();
    if let Some(message) = crash_message(&tree) {
        return Err(SynthError::Load(format!("the entry screen `{entry}` fails: {message}")));
    }
    let scrolled = scroll_down(phone)?;
    let mut reached = vec![Reached { screen: entry.clone(), path: Vec::new(), tree, scrolled }];
    let mut seen: BTreeSet<String> = BTreeSet::from([entry]);
    let mut queue = VecDeque::from([0usize]);
    let mut taps = 0;
    while let Some(i) = queue.pop_front() {
        if reached[i].path.len() >= MAX_DEPTH {
            continue;
        }
        let tree = reached[i].tree.clone();
        let mut targets = BTreeSet::new();
        for id in app_nodes(&tree) {
            let n = tree.node(id);
            if !n.clickable || n.checkable || n.is_editable() {
                continue;
            }
            if !targets.insert(tap_target(&tree, id)) {
                continue;
            }
            let Some(selector) = selector_for(&tree, id) else { continue };
            if taps >= MAX_TAPS {
                break;
            }
            let (x, y) = n.bounds.center();
            let step = PathStep {
                line: format!("tap {selector}"),
                action: Action::Tap { target: Target::Point(Point { x, y }) },
            };
            let mut path = reached[i].path.clone();
            path.push(step);
            go(phone, &path)?;
            taps += 1;
            let Some((_, screen)) = phone.current_screen() else { continue };
            let screen = screen.to_string();
            if seen.contains(&screen) {
                continue;
            }
            let tree = phone.tree().map_err(load)?.clone();
            if crash_message(&tree).is_some() {
                continue;
            }
            seen.insert(screen.clone());
            let scrolled = scroll_down(phone)?;
            reached.push(Reached { screen, path, tree, scrolled });
            queue.push_back(reached.len() - 1);
        }
    }
    Ok((reached, taps))
}

/// Label → value pairs a screen shows (see the module doc), in document order.
fn pairs(tree: &UiTree) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let nodes = readable_nodes(tree);
    for &id in &nodes {
        let text = tree.node(id).text.trim();
        let key_value = |line: &str| {
            line.split_once(" : ")
                .or_else(|| line.split_once(": "))
                .filter(|(l, v)| {
                    l.trim().chars().count() <= 40 && !l.trim().is_empty() && !v.trim().is_empty()
                })
                .map(|(l, v)| (l.trim().to_string(), v.trim().to_string()))
        };
        let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let kv_lines = lines.iter().filter(|l| key_value(l).is_some()).count();
        if kv_lines >= 2 && kv_lines * 2 >= lines.len() {
            // `key : value` per line (an "about" dialog's message).
            out.extend(lines.iter().filter_map(|l| key_value(l)));
        } else if lines.len() > 1 {
            // A label with its value under it (a settings row read as one element).
            out.push((lines[0].to_string(), lines[1..].join(" ")));
        } else if let Some(pair) = key_value(text) {
            out.push(pair);
        }
        let kids = tree.children(id);
        if kids.len() >= 2 {
            let text_nodes: Vec<NodeId> =
                tree.dfs(id).skip(1).filter(|&d| !tree.node(d).text.trim().is_empty()).collect();
            let texts: Vec<&str> = text_nodes.iter().map(|&d| tree.node(d).text.trim()).collect();
            // Two plain texts side by side: a label and its value. A button or field beside a
            // label ("Wake up" + "Save label") is not a value.
            let plain_text = |d: NodeId| {
                let n = tree.node(d);
                !n.clickable
                    && !n.is_editable()
                    && !n.checkable
                    && !matches!(n.short_class(), "Button" | "MaterialButton")
            };
            if texts.len() == 2
                && texts[0] != texts[1]
                && !texts[0].contains('\n')
                && text_nodes.iter().all(|&d| plain_text(d))
            {
                out.push((texts[0].to_string(), texts[1].to_string()));
            }
        }
    }
    // A label reads as words (not "00"); the value is short enough to type back.
    out.retain(|(l, v)| {
        plain(l) && plain(v) && l != v && v.chars().count() <= 60 && l.chars().any(char::is_alphabetic)
    });
    out
}

struct TaskText<'a> {
    id: String,
    goal: String,
    category: &'a str,
    app: &'a str,
    reference: Vec<String>,
    /// (perception, intent) tags; the actions come from the reference.
    tags: (&'a str, &'a str),
    criteria: Vec<String>,
}

fn render_task(t: &TaskText) -> String {
    let mut s = String::from(
        "# Generated by `phonebench synthesize-tasks`: the reference was found by exploring the app.\n",
    );
    let _ = writeln!(s, "id = {}", toml_str(&t.id));
    let _ = writeln!(s, "goal = {}", toml_str(&t.goal));
    let _ = writeln!(s, "category = \"{}\"", t.category);
    let _ = writeln!(s, "apps = [{}]", toml_str(t.app));
    let _ = writeln!(s, "start = {{ app = {} }}", toml_str(t.app));
    let _ = writeln!(s, "max_steps = {}", (t.reference.len() * 2 + 5).max(10));
    s.push_str("reference = [\n");
    for line in &t.reference {
        let _ = writeln!(s, "  {},", toml_str(line));
    }
    s.push_str("]\n\n[tags]\n");
    let steps = t.reference.len();
    let length = if steps <= 3 {
        "short"
    } else if steps <= 7 {
        "medium"
    } else {
        "long"
    };
    let depth = if steps <= 2 { "shallow" } else { "deep" };
    let _ = writeln!(
        s,
        "length = \"{length}\"\ndepth = \"{depth}\"\napps = \"single\"\ngoal = \"explicit\"\ndeterminism = \"static\""
    );
    let _ = writeln!(s, "perception = \"{}\"", t.tags.0);
    // The actions the reference really takes (a value read on the first screen needs no tap).
    let mut actions: Vec<&str> = Vec::new();
    for line in &t.reference {
        let kind = match line.split_whitespace().next().unwrap_or("") {
            "tap" => "tap",
            "type" | "append" => "type",
            "scroll" | "scroll_to" | "swipe" => "scroll",
            "answer" => "answer",
            _ => continue,
        };
        if !actions.contains(&kind) {
            actions.push(kind);
        }
    }
    let _ = writeln!(
        s,
        "actions = [{}]",
        actions.iter().map(|a| format!("\"{a}\"")).collect::<Vec<_>>().join(", ")
    );
    let _ = writeln!(s, "memory = \"none\"\nknowledge = \"none\"\nintent = [\"{}\"]", t.tags.1);
    for c in &t.criteria {
        let _ = writeln!(s, "\n[[criteria]]\n{c}");
    }
    s
}

/// At most `max` of `items`, evenly spread over them (first and last included), so that a long
/// screen's rows are asked about from top to bottom rather than only the first ones.
fn spread<T: Copy>(items: &[T], max: usize) -> Vec<T> {
    if items.len() <= max || max < 2 {
        return items.iter().take(max).copied().collect();
    }
    (0..max).map(|k| items[k * (items.len() - 1) / (max - 1)]).collect()
}

/// Values typed into fields: plain, distinct from anything a random agent types.
const FIELD_VALUES: [&str; 6] =
    ["Blue Heron", "Quarterly review", "Maple Street 42", "phonebench", "Ada Lovelace", "Harbor lights"];

/// Proposes tasks for an explored app (see the module doc).
pub fn propose(phone: &Phone, app: &str, label: &str, reached: &[Reached]) -> Vec<Proposal> {
    let mut out = Vec::new();
    let path_lines = |r: &Reached| r.path.iter().map(|p| p.line.clone()).collect::<Vec<_>>();
    // Navigation: a text only this screen shows.
    let mut text_screens: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for r in reached {
        for id in app_nodes(&r.tree) {
            let t = r.tree.node(id).text.trim().to_string();
            if plain(&t) && !t.contains('\n') {
                text_screens.entry(t).or_default().insert(r.screen.as_str());
            }
        }
    }
    let mut nav = 0;
    for r in reached.iter().skip(1) {
        if nav >= MAX_PER_KIND {
            break;
        }
        let titled = app_nodes(&r.tree).into_iter().map(|id| r.tree.node(id)).find(|n| {
            let t = n.text.trim();
            plain(t)
                && !t.contains('\n')
                && t.chars().filter(|c| c.is_alphabetic()).count() >= 3
                && text_screens.get(t).is_some_and(|s| s.len() == 1)
        });
        let Some(node) = titled else { continue };
        let text = node.text.trim();
        nav += 1;
        out.push(Proposal {
            id: format!("{app}.open_{}", slug(&r.screen, 28)),
            kind: "navigation".into(),
            toml: render_task(&TaskText {
                id: format!("{app}.open_{}", slug(&r.screen, 28)),
                goal: format!("In {label}, go to the screen that shows \u{201c}{text}\u{201d}."),
                category: "completion",
                app,
                reference: path_lines(r),
                tags: ("text", "navigate"),
                criteria: vec![
                    format!(
                        "name = {}\nscreen = {{ app = {}, screen = {} }}",
                        toml_str(&format!("the screen showing {text}")),
                        toml_str(app),
                        toml_str(&r.screen)
                    ),
                    // Being on the screen when the step budget runs out is luck, not arrival:
                    // the agent must end there by finishing.
                    "name = \"the agent finished there\"\nguard = true\nfinish = { status = \"complete\" }"
                        .to_string(),
                ],
            }),
        });
    }
    // Retrieval: labels shown once in the whole app.
    // (screen, whether the pair is only seen scrolled down, pair).
    let mut all_pairs: Vec<(usize, bool, (String, String))> = Vec::new();
    for (i, r) in reached.iter().enumerate() {
        // A pair seen on the screen as it opens is not asked again from a scrolled view (each
        // view repeats what stays on screen); a label shown twice on a screen with two values
        // still counts both.
        let first: Vec<(String, String)> = pairs(&r.tree);
        for p in &first {
            all_pairs.push((i, false, p.clone()));
        }
        let mut seen_scrolled: BTreeSet<(String, String)> = first.into_iter().collect();
        for tree in &r.scrolled {
            for p in pairs(tree) {
                if seen_scrolled.insert(p.clone()) {
                    all_pairs.push((i, true, p));
                }
            }
        }
    }
    // A label is asked about only when everywhere it is shown, it is shown with the same value
    // (two recordings of one settings screen agree; two rows "Total" with different sums do not).
    let mut values_of: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, _, (l, v)) in &all_pairs {
        values_of.entry(l.to_lowercase()).or_default().insert(v.to_lowercase());
    }
    let mut asked = BTreeSet::new();
    let eligible: Vec<&(usize, bool, (String, String))> = all_pairs
        .iter()
        .filter(|(_, _, (l, _))| values_of[&l.to_lowercase()].len() == 1 && asked.insert(l.to_lowercase()))
        .collect();
    for (i, below, (l, v)) in spread(&eligible, MAX_PER_KIND) {
        let r = &reached[*i];
        let mut reference = path_lines(r);
        if *below {
            // Further down: scroll until the label is on screen, as a person would.
            reference.push(format!("scroll_to ~{}", quote(l)));
        }
        reference.push(format!("answer {}", quote(v)));
        let id = format!("{app}.read_{}", slug(l, 28));
        out.push(Proposal {
            id: id.clone(),
            kind: "retrieval".into(),
            toml: render_task(&TaskText {
                id,
                goal: format!(
                    "In {label}, what is shown with \u{201c}{l}\u{201d}? Answer with that value only."
                ),
                category: "retrieval",
                app,
                reference,
                tags: ("text", "read"),
                criteria: vec![format!(
                    "name = {}\nanswer = {{ normalized = {} }}",
                    toml_str(&format!("the value shown with {l}")),
                    toml_str(v)
                )],
            }),
        });
    }
    // State: switches (toggles table) and text fields (fields table) of a rebuilt app.
    let table = |sql: &str| phone.query(app, sql).unwrap_or_default();
    let toggles = table("SELECT slot, page, label, checked FROM toggles ORDER BY slot");
    let fields = table("SELECT slot, page, label FROM fields ORDER BY slot");
    let str_of =
        |row: &serde_json::Value, k: &str| row.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    let mut toggled = 0;
    for row in &toggles {
        if toggled >= MAX_PER_KIND {
            break;
        }
        let (slot, page, text) = (str_of(row, "slot"), str_of(row, "page"), str_of(row, "label"));
        let checked = row.get("checked").and_then(|v| v.as_i64()).unwrap_or(0);
        let Some(r) = reached.iter().find(|r| r.screen == page) else { continue };
        let Some(node) = app_nodes(&r.tree)
            .into_iter()
            .find(|&id| r.tree.node(id).checkable && r.tree.node(id).text.trim() == text)
        else {
            continue;
        };
        let Some(selector) = selector_for(&r.tree, node) else { continue };
        if !plain(&text) || toggles.iter().filter(|o| str_of(o, "label") == text).count() > 1 {
            continue;
        }
        // Four or more check boxes on one screen of which at most one is on are a choice (a
        // ringtone list, recorded as check boxes): the task is to select one, not to turn one
        // off.
        let group: Vec<i64> = toggles
            .iter()
            .filter(|o| str_of(o, "page") == page)
            .map(|o| o.get("checked").and_then(|v| v.as_i64()).unwrap_or(0))
            .collect();
        let choice = group.len() >= 4 && group.iter().filter(|&&c| c == 1).count() <= 1;
        if choice && checked == 1 {
            continue;
        }
        let mut reference = path_lines(r);
        reference.push(format!("tap {selector}"));
        let want = 1 - checked.clamp(0, 1);
        let id = format!("{app}.toggle_{}", slug(&text, 28));
        toggled += 1;
        out.push(Proposal {
            id: id.clone(),
            kind: "toggle".into(),
            toml: render_task(&TaskText {
                id,
                goal: if choice {
                    format!("In {label}, select \u{201c}{text}\u{201d}.")
                } else {
                    format!("In {label}, turn {} \u{201c}{text}\u{201d}.", if want == 1 { "on" } else { "off" })
                },
                category: "completion",
                app,
                reference,
                tags: ("state", "configure"),
                criteria: vec![
                    format!("name = {}\nstate = {{ app = {}, sql = {}, equals = {want} }}", toml_str(&format!("{text} is {}", if want == 1 { "on" } else { "off" })), toml_str(app), toml_str(&format!("SELECT checked FROM toggles WHERE slot = '{}'", slot.replace('\'', "''")))),
                    format!("name = \"no other switch changed\"\nguard = true\nchanges = {{ app = {}, table = \"toggles\", updated = {{ max = 1 }} }}", toml_str(app)),
                ],
            }),
        });
    }
    for (k, row) in fields.iter().enumerate().take(MAX_PER_KIND) {
        let (slot, page, hint) = (str_of(row, "slot"), str_of(row, "page"), str_of(row, "label"));
        let Some(r) = reached.iter().find(|r| r.screen == page) else { continue };
        let Some(node) = app_nodes(&r.tree).into_iter().find(|&id| r.tree.node(id).is_editable()) else {
            continue;
        };
        let Some(selector) = selector_for(&r.tree, node) else { continue };
        let value = FIELD_VALUES[k % FIELD_VALUES.len()];
        let mut reference = path_lines(r);
        reference.push(format!("type {selector} {}", quote(value)));
        let name = if plain(&hint) { hint.clone() } else { "text".into() };
        // Where the field is: the screen's first text that reads as words (two screens may
        // each have a "Label" field).
        let screen_text =
            app_nodes(&r.tree).into_iter().map(|id| r.tree.node(id).text.trim().to_string()).find(|t| {
                plain(t)
                    && !t.contains('\n')
                    && t.chars().filter(|c| c.is_alphabetic()).count() >= 3
                    && *t != hint
            });
        let place = match &screen_text {
            Some(t) => format!(" on the screen showing \u{201c}{t}\u{201d}"),
            None => String::new(),
        };
        let id = format!("{app}.fill_{}", slug(&slot, 28));
        out.push(Proposal {
            id: id.clone(),
            kind: "field".into(),
            toml: render_task(&TaskText {
                id,
                goal: format!(
                    "In {label}, enter \u{201c}{value}\u{201d} in the \u{201c}{name}\u{201d} field{place}."
                ),
                category: "completion",
                app,
                reference,
                tags: ("text", "update"),
                criteria: vec![format!(
                    "name = \"the field holds the text\"\nstate = {{ app = {}, sql = {}, equals = {} }}",
                    toml_str(app),
                    toml_str(&format!(
                        "SELECT value FROM fields WHERE slot = '{}'",
                        slot.replace('\'', "''")
                    )),
                    toml_str(value)
                )],
            }),
        });
    }
    out
}

/// Explores the package at `app_dir`, writes every proposed task into `out` (a suite folder),
/// validates each and deletes the ones that fail.
pub fn synthesize_tasks(app_dir: &Path, out: &Path) -> Result<SuiteOutcome, SynthError> {
    let mut phone = phone_for(app_dir)?;
    let manifest = phone
        .catalog()
        .apps()
        .first()
        .map(|p| (p.manifest.id.clone(), p.manifest.name.clone(), p.screens.len()));
    let (app, label, screens_total) =
        manifest.ok_or_else(|| SynthError::Load("no app in the package".into()))?;
    let (reached, taps) = explore(&mut phone, &app)?;
    phone.reset().map_err(|e| SynthError::Load(e.to_string()))?;
    let proposals = propose(&phone, &app, &label, &reached);
    let io = |p: &Path, e: std::io::Error| SynthError::Io(format!("{}: {e}", p.display()));
    let tasks_dir = out.join("tasks");
    if tasks_dir.exists() && std::fs::read_dir(&tasks_dir).map_err(|e| io(&tasks_dir, e))?.next().is_some() {
        return Err(SynthError::Input(format!(
            "{} already holds tasks (choose a new folder)",
            tasks_dir.display()
        )));
    }
    std::fs::create_dir_all(&tasks_dir).map_err(|e| io(&tasks_dir, e))?;
    let suite_toml = out.join("suite.toml");
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| app.clone());
    std::fs::write(
        &suite_toml,
        format!(
            "name = {}\ndescription = {}\nseed = 0\n",
            toml_str(&name),
            toml_str(&format!("Tasks generated from the {label} app by exploring it (phonebench synthesize-tasks); each passed validation."))
        ),
    )
    .map_err(|e| io(&suite_toml, e))?;
    let mut files = BTreeMap::new();
    let mut used = BTreeSet::new();
    for p in &proposals {
        let mut id = p.id.clone();
        let mut n = 2;
        while !used.insert(id.clone()) {
            id = format!("{}_{n}", p.id);
            n += 1;
        }
        let toml = if id == p.id {
            p.toml.clone()
        } else {
            p.toml.replacen(&format!("id = {}", toml_str(&p.id)), &format!("id = {}", toml_str(&id)), 1)
        };
        let file = tasks_dir.join(format!("{}.toml", id.replace('.', "_")));
        std::fs::write(&file, toml).map_err(|e| io(&file, e))?;
        files.insert(id, file);
    }
    // Validated with the apps installed beside the package (what `validate --apps` will load),
    // else the package alone; what fails to load is removed again, so a re-run is possible.
    let catalog = app_dir
        .parent()
        .and_then(|apps| phonebench_apps::Catalog::load_dir(apps).ok())
        .filter(|c| c.get(&app).is_some())
        .unwrap_or_else(|| phone.catalog().clone());
    let verdicts = match validate_suite(&catalog, out) {
        Ok(v) => v,
        Err(e) => {
            for file in files.values() {
                let _ = std::fs::remove_file(file);
            }
            let _ = std::fs::remove_file(&suite_toml);
            let _ = std::fs::remove_dir(&tasks_dir);
            return Err(e);
        }
    };
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for (id, problems) in verdicts {
        if problems.is_empty() {
            kept.push(id);
        } else {
            if let Some(file) = files.get(&id) {
                std::fs::remove_file(file).map_err(|e| io(file, e))?;
            }
            dropped.push((id, problems.first().cloned().unwrap_or_default()));
        }
    }
    Ok(SuiteOutcome {
        dir: out.to_path_buf(),
        screens_reached: reached.len(),
        screens_total,
        taps,
        kept,
        dropped,
    })
}

/// Validates every task of the suite at `dir` against `catalog` (as `phonebench validate`
/// does, in parallel on every core): (task id, problems) per task, empty when valid.
pub fn validate_suite(
    catalog: &phonebench_apps::Catalog,
    dir: &Path,
) -> Result<Vec<(String, Vec<String>)>, SynthError> {
    let suite = phonebench_tasks::Suite::load(dir).map_err(|errors| {
        SynthError::Input(errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))
    })?;
    let seed = suite.manifest.seed;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| SynthError::Io(format!("cannot start the async runtime: {e}")))?;
    let tasks: Vec<phonebench_tasks::TaskSpec> = suite.select(None).into_iter().cloned().collect();
    let results = runtime.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        let permits = phonebench_runner::cpu_permits();
        for (i, task) in tasks.into_iter().enumerate() {
            let (catalog, permits) = (catalog.clone(), permits.clone());
            set.spawn(async move {
                let _permit = permits.acquire_owned().await;
                (i, phonebench_runner::validate::validate_task(&catalog, &task, seed).await)
            });
        }
        let mut out = Vec::new();
        while let Some(r) = set.join_next().await {
            match r {
                Ok(v) => out.push(v),
                Err(e) => return Err(SynthError::Io(format!("a validation task failed: {e}"))),
            }
        }
        out.sort_by_key(|(i, _)| *i);
        Ok(out)
    })?;
    Ok(results.into_iter().map(|(_, v)| (v.task_id, v.problems)).collect())
}
