//! An app package from analysed traces: one screen per page, each a template that reproduces
//! the recorded layout structure (classes, ids, nesting, sizes) with the recorded content moved
//! into tables, and the recorded transitions as actions.
//!
//! Where things go:
//! - `texts (page, slot, text)`: every recorded text, read by the templates (read-only content:
//!   no action writes it);
//! - `rows (list, pos, c1 … c8)`: the rows of recorded lists (a container with three or more
//!   children of one structure), which the template renders with a loop;
//! - `toggles (slot, page, label, checked)`: the state of every switch and check box (user
//!   state: tapping one writes it);
//! - `fields (slot, page, label, value)`: the text of every text field (user state: Enter saves
//!   it);
//! - `content/content.jsonl`: one document per page and per list row, indexed for BM25 search
//!   (`[search.content]`); a text field named or hinted "search" searches it.
//!
//! The layout keeps the recorded class of every element (`class=`), its resource id, its
//! nesting, the orientation of its containers (children side by side are a horizontal row) and
//! its size in dp (from the recorded bounds and the recorded screen's density).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use phonebench_traces::analyze::{Analysis, PageType, Priority, ScreenRef};
use phonebench_traces::read::find_element;
use phonebench_traces::{Detail, ElementRef, Trace};
use phonebench_uitree::{Node, NodeId, UiTree, WindowKind};
use serde::Serialize;

use crate::{SynthError, slug, toml_str};
use phonebench_phone::markup::is_class_name;

/// Deepest nesting written into a screen (the phone's layout allows 64; the loop and the
/// root take some).
pub const MAX_DEPTH: usize = 56;
/// Most recorded elements written into one screen (the phone's layout allows 20,000 views).
pub const MAX_ELEMENTS: usize = 15_000;

/// Most rows of one recorded list stored (each row is several views on the screen).
pub const MAX_LIST_ROWS: usize = 500;

/// Most text columns a list row may have to be stored as a row (more: the list stays as it is).
pub const MAX_ROW_SLOTS: usize = 8;

/// What to build.
#[derive(Debug, Clone)]
pub struct AppOptions {
    /// The app id (`[a-z0-9_]`), also the folder name.
    pub id: String,
    /// The launcher label (default: the id, capitalised).
    pub name: Option<String>,
    /// The recorded package to rebuild (default: the most visited one that is not a launcher or
    /// system UI).
    pub package: Option<String>,
    /// The lowest priority built: `P0` builds only the must-build pages, `P2` (the default)
    /// every page. The entry page is always built.
    pub min_priority: Priority,
}

impl AppOptions {
    /// Options for app `id`: the default label, package and every page.
    pub fn new(id: impl Into<String>) -> AppOptions {
        AppOptions { id: id.into(), name: None, package: None, min_priority: Priority::P2 }
    }
}

/// One generated screen and where it came from.
#[derive(Debug, Clone, Serialize)]
pub struct SynthScreen {
    /// Screen name (file stem).
    pub name: String,
    /// The analysis page it rebuilds.
    pub page: String,
    /// Page type.
    pub kind: PageType,
    /// Title.
    pub title: String,
    /// The recorded screen copied.
    pub representative: ScreenRef,
    /// Text slots moved into `texts`.
    pub texts: usize,
    /// Recorded elements left out because the screen nests deeper or holds more than the
    /// phone renders ([`MAX_DEPTH`], [`MAX_ELEMENTS`]).
    pub dropped: usize,
    /// Lists moved into `rows` (and their row counts).
    pub lists: Vec<usize>,
    /// Elements given a transition.
    pub transitions: usize,
}

/// A recorded transition between two screens of the app, and how the app carries it out.
#[derive(Debug, Clone, Serialize)]
pub struct SynthTransition {
    /// From screen.
    pub from: String,
    /// To screen.
    pub to: String,
    /// Times recorded.
    pub weight: usize,
    /// The element that triggered it (most often).
    pub trigger: Option<ElementRef>,
    /// The action kind recorded (`tap`, `key`, …).
    pub action: String,
    /// Whether the generated app wires it (an element was found on the recorded screen).
    pub wired: bool,
}

/// What was written.
#[derive(Debug, Clone, Serialize)]
pub struct SynthApp {
    /// App id.
    pub id: String,
    /// Folder.
    pub dir: PathBuf,
    /// Package rebuilt.
    pub package: String,
    /// Entry screen.
    pub entry: String,
    /// Screens.
    pub screens: Vec<SynthScreen>,
    /// Recorded transitions between the app's pages.
    pub transitions: Vec<SynthTransition>,
}

fn is_system(package: &str) -> bool {
    package == "com.android.systemui" || package.contains("inputmethod")
}

/// The package to rebuild when none is named: the most visited page package that is not a
/// launcher, system UI or a keyboard.
pub fn default_package(analysis: &Analysis) -> Option<String> {
    let mut visits: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &analysis.pages {
        if let Some(pkg) = p.package.as_deref()
            && p.kind != PageType::Launcher
            && !is_system(pkg)
            && !pkg.is_empty()
        {
            *visits.entry(pkg).or_default() += p.visits.max(1);
        }
    }
    visits.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0))).map(|(p, _)| p.to_string())
}

/// The pages of `package`: its own, plus pages of unknown package linked to them (DroidTask's
/// outlines carry no package), transitively; never launchers. An empty `package` means the
/// pages of no package (traces that name none).
pub fn app_pages(analysis: &Analysis, package: &str) -> Vec<usize> {
    let mut chosen: BTreeSet<usize> = analysis
        .pages
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            let ours =
                if package.is_empty() { p.package.is_none() } else { p.package.as_deref() == Some(package) };
            ours && p.kind != PageType::Launcher
        })
        .map(|(i, _)| i)
        .collect();
    loop {
        let before = chosen.len();
        for e in &analysis.edges {
            for (a, b) in [(e.from, e.to), (e.to, e.from)] {
                let page = &analysis.pages[b];
                if chosen.contains(&a) && page.package.is_none() && page.kind != PageType::Launcher {
                    chosen.insert(b);
                }
            }
        }
        if chosen.len() == before {
            break;
        }
    }
    chosen.into_iter().collect()
}

/// A screen name from a page: its id and a slug of its title (`p7_settings`).
fn screen_name(id: &str, title: &str) -> String {
    let slug = slug(title, 24);
    if slug.is_empty() { id.to_string() } else { format!("{id}_{slug}") }
}

/// SQL string literal of recorded text (control characters other than line breaks and tabs
/// dropped: a NUL would cut the seed's statement short).
fn sql_str(s: &str) -> String {
    let clean: String = s.chars().filter(|c| !c.is_control() || matches!(c, '\n' | '\t')).collect();
    format!("'{}'", clean.replace('\'', "''"))
}

/// XML attribute value (the template's output is XML; literal text in templates is escaped
/// here, values from tables are escaped by the template engine).
fn xml_attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '{' => out.push_str("&#123;"),
            '}' => out.push_str("&#125;"),
            '%' => out.push_str("&#37;"),
            '#' => out.push_str("&#35;"),
            c if c.is_control() && c != '\n' => {}
            '\n' => out.push_str("&#10;"),
            c => out.push(c),
        }
    }
    out
}

/// The tag (behaviour) for a recorded node, and whether the recorded class must be kept with
/// `class=` because the tag's class differs.
fn tag_for(tree: &UiTree, id: NodeId) -> (&'static str, &'static str) {
    let node = tree.node(id);
    let short = node.short_class();
    let has_children = !tree.children(id).is_empty();
    let known: &[(&[&str], &str, &str)] = &[
        (
            &["TextView", "AppCompatTextView", "MaterialTextView", "CheckedTextView"],
            "TextView",
            "android.widget.TextView",
        ),
        (&["Button", "AppCompatButton", "MaterialButton"], "Button", "android.widget.Button"),
        (
            &["ImageButton", "AppCompatImageButton", "FloatingActionButton"],
            "ImageButton",
            "android.widget.ImageButton",
        ),
        (&["ImageView", "AppCompatImageView"], "ImageView", "android.widget.ImageView"),
        (
            &[
                "EditText",
                "AppCompatEditText",
                "AutoCompleteTextView",
                "TextInputEditText",
                "SearchAutoComplete",
            ],
            "EditText",
            "android.widget.EditText",
        ),
        (&["CheckBox", "AppCompatCheckBox", "MaterialCheckBox"], "CheckBox", "android.widget.CheckBox"),
        (&["Switch", "SwitchCompat", "SwitchMaterial"], "Switch", "android.widget.Switch"),
        (
            &["RadioButton", "AppCompatRadioButton", "MaterialRadioButton"],
            "RadioButton",
            "android.widget.RadioButton",
        ),
        (&["SeekBar"], "SeekBar", "android.widget.SeekBar"),
        (
            &["RecyclerView", "ListView", "GridView"],
            "RecyclerView",
            "androidx.recyclerview.widget.RecyclerView",
        ),
        (
            &["ScrollView", "NestedScrollView", "HorizontalScrollView"],
            "ScrollView",
            "android.widget.ScrollView",
        ),
        (&["FrameLayout"], "FrameLayout", "android.widget.FrameLayout"),
    ];
    for (names, tag, class) in known {
        if names.contains(&short) {
            // A text class with children (rare) or a leaf-only tag holding children must stay a
            // container.
            let leaf_tag = !matches!(*tag, "RecyclerView" | "ScrollView" | "FrameLayout");
            if !(leaf_tag && has_children) {
                // A button showing only an icon draws as one.
                if *tag == "Button" && node.text.trim().is_empty() {
                    return ("ImageButton", "android.widget.ImageButton");
                }
                return (tag, class);
            }
        }
    }
    if has_children {
        return ("LinearLayout", "android.widget.LinearLayout");
    }
    if node.checkable {
        ("CheckBox", "android.widget.CheckBox")
    } else if node.is_editable() {
        ("EditText", "android.widget.EditText")
    } else if !node.text.trim().is_empty() {
        ("TextView", "android.widget.TextView")
    } else if node.clickable && !node.content_desc.is_empty() {
        ("ImageButton", "android.widget.ImageButton")
    } else {
        ("View", "android.view.View")
    }
}

/// Whether `id`'s children sit side by side (a horizontal row).
fn horizontal(tree: &UiTree, id: NodeId) -> bool {
    let kids: Vec<_> =
        tree.children(id).iter().map(|&c| tree.node(c).bounds).filter(|b| !b.is_empty()).collect();
    if kids.len() < 2 {
        return false;
    }
    kids.windows(2).all(|w| w[1].left >= w[0].right - 2 && w[1].top < w[0].bottom && w[0].top < w[1].bottom)
}

/// Whether `id`'s children run one under another (each starting below the one before).
fn vertical(tree: &UiTree, id: NodeId) -> bool {
    let kids: Vec<_> =
        tree.children(id).iter().map(|&c| tree.node(c).bounds).filter(|b| !b.is_empty()).collect();
    kids.windows(2).all(|w| w[1].top >= w[0].bottom - 2)
}

/// The structure of a subtree (classes and ids in document order), to find list rows.
fn shape(tree: &UiTree, id: NodeId) -> String {
    tree.dfs(id)
        .map(|d| {
            let n = tree.node(d);
            format!("{}#{}", n.short_class(), n.short_resource_id())
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The nodes of a row that carry text, in document order.
fn text_nodes(tree: &UiTree, id: NodeId) -> Vec<NodeId> {
    tree.dfs(id).filter(|&d| !tree.node(d).text.trim().is_empty()).collect()
}

/// A recorded list: the container, its rows (same shape), and the shape's text slots.
struct List {
    rows: Vec<NodeId>,
    name: String,
}

/// What the templates need to know about the whole app.
struct Wiring {
    /// (page, node) → action name.
    clicks: HashMap<(usize, NodeId), String>,
    /// Per page: recorded triggers not on the copied screen (they were on another screen of
    /// the same page), added as elements so that the transition exists: (element, action).
    extras: BTreeMap<usize, Vec<(ElementRef, String)>>,
    /// Actions: name → steps (TOML).
    actions: BTreeMap<String, String>,
}

/// The density (px per dp) a recorded screen was taken at: its width over 411.43 dp, the
/// width of the phones most traces come from (1080 px at 2.625).
fn density_of(tree: &UiTree) -> f32 {
    let w = tree.screen_bounds().width().max(1) as f32;
    (w / 411.43).clamp(0.5, 6.0)
}

fn dp(px: i64, density: f32) -> i64 {
    ((px as f32) / density).round().max(1.0) as i64
}

/// The root of the app's content on a recorded screen: the topmost application window of the
/// app's package (dumps also hold helper overlays, such as uiautomator's own, above the app),
/// else the topmost application window that is not system UI.
fn content_root(tree: &UiTree, package: &str) -> Option<NodeId> {
    let windows: Vec<_> = tree
        .windows_top_down()
        .into_iter()
        .map(|w| tree.window(w))
        .filter(|w| {
            matches!(w.kind, WindowKind::Application | WindowKind::Overlay)
                && !is_system(&tree.node(w.root).package)
        })
        .collect();
    windows.iter().find(|w| tree.node(w.root).package == package).or_else(|| windows.first()).map(|w| w.root)
}

/// Whether a node is left out of the rebuilt screen: system bars, invisible or empty nodes.
fn skipped(node: &Node, detail: Detail) -> bool {
    if is_system(&node.package) {
        return true;
    }
    let id = node.resource_id.as_str();
    if id == "android:id/statusBarBackground" || id == "android:id/navigationBarBackground" {
        return true;
    }
    detail == Detail::Full && (!node.is_visible() || node.bounds.is_empty())
}

/// Builds the package (see the module doc) under `out` (which must not exist or be empty).
pub fn synthesize_app(
    traces: &[Trace],
    analysis: &Analysis,
    options: &AppOptions,
    out: &Path,
) -> Result<SynthApp, SynthError> {
    let id_ok = options.id.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && options.id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && options.id.len() <= 64;
    if !id_ok {
        return Err(SynthError::Input(format!(
            "`{}` is not an app id (a lowercase letter, then lowercase letters, digits and _)",
            options.id
        )));
    }
    // Another package beside the new one with the same id would make the folder unloadable.
    if let Some(parent) = out.parent().filter(|p| p.is_dir()) {
        for entry in std::fs::read_dir(parent).into_iter().flatten().flatten() {
            let manifest = entry.path().join("app.toml");
            if entry.path() == out || !manifest.is_file() {
                continue;
            }
            let text = std::fs::read_to_string(&manifest).unwrap_or_default();
            if text.lines().any(|l| l.replace(' ', "") == format!("id=\"{}\"", options.id)) {
                return Err(SynthError::Input(format!(
                    "{} already holds an app with id `{}`: choose another --id",
                    entry.path().display(),
                    options.id
                )));
            }
        }
    } // Traces whose screens name no package (AITW's OCR outlines) give an app of every page
    // that is not a launcher, under a package of our own.
    let package = match &options.package {
        Some(p) => p.clone(),
        None => match default_package(analysis) {
            Some(p) => p,
            None if analysis.pages.iter().all(|p| p.package.is_none()) => String::new(),
            None => {
                return Err(SynthError::Input(
                    "no app package in the traces (only launchers or system UI): name one with --package"
                        .into(),
                ));
            }
        },
    };
    let mut pages = app_pages(analysis, &package);
    if pages.is_empty() {
        let known: BTreeSet<&str> = analysis
            .pages
            .iter()
            .filter(|p| p.kind != PageType::Launcher)
            .filter_map(|p| p.package.as_deref())
            .collect();
        let launcher = analysis
            .pages
            .iter()
            .any(|p| p.kind == PageType::Launcher && p.package.as_deref() == Some(&package));
        return Err(SynthError::Input(format!(
            "no app page of package `{package}` in the traces{} (packages with app pages: {})",
            if launcher { " (its pages are launcher screens, which are the phone's)" } else { "" },
            if known.is_empty() {
                "none".to_string()
            } else {
                known.into_iter().collect::<Vec<_>>().join(", ")
            }
        )));
    }
    let names: HashMap<usize, String> =
        pages.iter().map(|&p| (p, screen_name(&analysis.pages[p].id, &analysis.pages[p].title))).collect();
    // Entry: the page most often entered from outside the app (a launcher, another app), else
    // the most visited.
    let inside: BTreeSet<usize> = pages.iter().copied().collect();
    let mut entered: BTreeMap<usize, usize> = BTreeMap::new();
    for e in &analysis.edges {
        if !inside.contains(&e.from) && inside.contains(&e.to) {
            *entered.entry(e.to).or_default() += e.weight;
        }
    }
    let entry =
        entered.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(p, _)| *p).unwrap_or_else(|| {
            *pages
                .iter()
                .max_by(|&&a, &&b| analysis.pages[a].visits.cmp(&analysis.pages[b].visits).then(b.cmp(&a)))
                .unwrap_or(&pages[0])
        });

    // PhoneWorld builds the long tail only when needed: pages below the chosen priority are
    // left out (the entry page stays), and transitions into them with them.
    pages.retain(|&p| p == entry || analysis.pages[p].priority <= options.min_priority);
    let inside: BTreeSet<usize> = pages.iter().copied().collect();
    // Transitions: heaviest edges first claim their trigger element.
    let mut wiring = Wiring { clicks: HashMap::new(), extras: BTreeMap::new(), actions: BTreeMap::new() };
    let mut transitions = Vec::new();
    for e in &analysis.edges {
        if !inside.contains(&e.from) || !inside.contains(&e.to) || e.from == e.to {
            continue;
        }
        let (from, to) = (&names[&e.from], &names[&e.to]);
        let (t, s) = analysis.pages[e.from].representative;
        let tree = &traces[t].screens[s].tree;
        let mut wired = false;
        // The transition is checked with the trigger the app wired (the most frequent one that
        // could be), else the most frequent recorded.
        let mut top = e.triggers.first();
        for trigger in &e.triggers {
            let Some(element) = &trigger.element else { continue };
            if !matches!(trigger.action.as_str(), "tap" | "long_press" | "double_tap") {
                continue;
            }
            let node = find_element(tree, element)
                .or_else(|| find_element(tree, &ElementRef { bounds: None, ..element.clone() }));
            if node.is_some_and(|n| wiring.clicks.contains_key(&(e.from, n))) {
                continue;
            }
            // A dialog's button back to the page that opened it closes the dialog.
            let closes = analysis.pages[e.from].kind == PageType::Dialog
                && analysis.edges.iter().any(|b| b.from == e.to && b.to == e.from);
            let action = if closes {
                wiring.actions.insert("close".into(), "steps = [ { back = 1 } ]".into());
                "close".to_string()
            } else {
                let name = format!("go_{to}");
                wiring.actions.insert(name.clone(), format!("steps = [ {{ navigate = \"{to}\" }} ]"));
                name
            };
            match node {
                Some(node) => {
                    wiring.clicks.insert((e.from, node), action);
                }
                None => {
                    let extras = wiring.extras.entry(e.from).or_default();
                    if extras.iter().any(|(x, _)| x.label() == element.label()) {
                        continue;
                    }
                    extras.push((element.clone(), action));
                }
            }
            if !wired {
                top = Some(trigger);
            }
            wired = true;
        }
        transitions.push(SynthTransition {
            from: from.clone(),
            to: to.clone(),
            weight: e.weight,
            trigger: top.and_then(|t| t.element.clone()),
            action: top.map(|t| t.action.clone()).unwrap_or_default(),
            wired,
        });
    }

    let mut schema = String::from(
        "-- Generated by `phonebench synthesize-app` from recorded traces.\n\
         -- Read-only content (no action writes these):\n\
         CREATE TABLE texts (page TEXT NOT NULL, slot TEXT NOT NULL, text TEXT NOT NULL, PRIMARY KEY (page, slot));\n",
    );
    let _ = writeln!(
        schema,
        "CREATE TABLE rows (list TEXT NOT NULL, pos INTEGER NOT NULL, {}, PRIMARY KEY (list, pos));",
        (1..=MAX_ROW_SLOTS).map(|i| format!("c{i} TEXT")).collect::<Vec<_>>().join(", ")
    );
    schema.push_str(
        "-- User state (actions write these; a reset restores the seed):\n\
         CREATE TABLE toggles (slot TEXT PRIMARY KEY, page TEXT NOT NULL, label TEXT NOT NULL, checked INTEGER NOT NULL);\n\
         CREATE TABLE fields (slot TEXT PRIMARY KEY, page TEXT NOT NULL, label TEXT NOT NULL, value TEXT NOT NULL);\n",
    );
    let mut seed = String::new();
    let mut content = String::new();
    let mut screens = Vec::new();
    let mut screen_files: BTreeMap<String, String> = BTreeMap::new();
    let mut has_search = false;
    for &p in &pages {
        let page = &analysis.pages[p];
        let name = names[&p].clone();
        let (t, s) = page.representative;
        let recorded = &traces[t].screens[s];
        let mut writer = ScreenWriter {
            package: &package,
            tree: &recorded.tree,
            detail: recorded.detail,
            page: p,
            name: &name,
            density: density_of(&recorded.tree),
            wiring: &mut wiring,
            seed: &mut seed,
            out: String::new(),
            slots: 0,
            texts: Vec::new(),
            lists: Vec::new(),
            transitions: 0,
            has_search: &mut has_search,
            fields: 0,
            emitted: 0,
            dropped: 0,
            row_docs: Vec::new(),
        };
        writer.write()?;
        let ScreenWriter { out: template, texts, lists, transitions: wired, row_docs, dropped, .. } = writer;
        let body: Vec<String> = texts.iter().map(|(_, t)| t.clone()).collect();
        let doc = serde_json::json!({
            "id": format!("{name}"),
            "screen": name,
            "title": page.title,
            "body": body.join(" \u{2022} ").replace('\n', " "),
        });
        content.push_str(&doc.to_string());
        content.push('\n');
        for doc in row_docs {
            content.push_str(&doc.to_string());
            content.push('\n');
        }
        screen_files.insert(name.clone(), template);
        screens.push(SynthScreen {
            name: name.clone(),
            page: page.id.clone(),
            kind: page.kind,
            title: page.title.clone(),
            representative: page.representative,
            texts: texts.len(),
            lists: lists.iter().map(|(_, n)| *n).collect(),
            transitions: wired,
            dropped,
        });
    }

    let mut actions = String::from(
        "# Generated by `phonebench synthesize-app`: the recorded transitions and state changes.\n\n",
    );
    actions.push_str(
        "[set_toggle]\nsteps = [ { sql = \"UPDATE toggles SET checked = :value WHERE slot = :slot\" } ]\n\n",
    );
    if has_search {
        actions.push_str(
            "[search]\nsteps = [\n  { query = \"SELECT value FROM fields WHERE slot = :slot\" },\n  { navigate = \"search_results\", args = { q = \"value\" } },\n]\n\n",
        );
    }
    actions.push_str(
        "[save_field]\nsteps = [ { sql = \"UPDATE fields SET value = :value WHERE slot = :slot\" } ]\n\n",
    );
    for (name, steps) in &wiring.actions {
        let _ = writeln!(actions, "[{name}]\n{steps}\n");
    }
    if has_search {
        screen_files.insert("search_results".into(), SEARCH_RESULTS.to_string());
    }

    let label = options.name.clone().unwrap_or_else(|| {
        let mut c = options.id.chars();
        c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
    });
    // The manifest's package: the recorded one when it is a package name, else ours.
    let valid_package = is_class_name(&package) && !package.contains('$');
    let manifest_package =
        if valid_package { package.clone() } else { format!("phonebench.generated.{}", options.id) };
    let manifest = format!(
        "# Generated by `phonebench synthesize-app` from recorded traces.\n\
         id = \"{id}\"\nname = {name}\npackage = {package}\nentry = \"{entry}\"\n\n\
         [search.content]\nfile = \"content/content.jsonl\"\nfields = {{ title = 3.0, body = 1.0 }}\n",
        id = options.id,
        name = toml_str(&label),
        package = toml_str(&manifest_package),
        entry = names[&entry],
    );
    write_package(out, &manifest, &schema, &seed, &actions, &content, &screen_files)?;
    Ok(SynthApp {
        id: options.id.clone(),
        dir: out.to_path_buf(),
        package: manifest_package,
        entry: names[&entry].clone(),
        screens,
        transitions,
    })
}

/// A recorded trigger that is not on the copied screen, as an element of its own.
fn extra_element(element: &ElementRef, action: &str, indent: usize) -> String {
    let short = element.class.rsplit('.').next().unwrap_or("");
    let text = element.text.trim();
    let mut attrs = String::new();
    let tag = if text.is_empty() { "ImageButton" } else { "Button" };
    if is_class_name(&element.class) {
        let _ = write!(attrs, " class=\"{}\"", xml_attr(&element.class));
    }
    if !element.resource_id.is_empty() && element.resource_id.contains(":id/") {
        let _ = write!(attrs, " id=\"{}\"", xml_attr(&element.resource_id));
    }
    if !text.is_empty() {
        let _ = write!(attrs, " text=\"{}\"", xml_attr(text));
    }
    let desc = if element.content_desc.is_empty() && text.is_empty() {
        short
    } else {
        element.content_desc.as_str()
    };
    if !desc.is_empty() {
        let _ = write!(attrs, " desc=\"{}\"", xml_attr(desc));
    }
    format!("{}<{tag}{attrs} on-click=\"{action}\"/>\n", "  ".repeat(indent))
}

const SEARCH_RESULTS: &str = r#"{# Search over the app's recorded content (BM25, content/content.jsonl). #}
<LinearLayout width="match" height="match">
  <Toolbar id="toolbar"><TextView id="title" text="Results for {{ args.q }}" size="20"/></Toolbar>
  <RecyclerView id="results" weight="1">
    {% for hit in search("content", args.q, limit=20) %}
    <LinearLayout id="result_row" padding="16" on-click="open_result" arg-screen="{{ hit.screen }}">
      <TextView id="result_title" text="{{ hit.title }}" size="16" bold="true"/>
      <TextView id="result_body" text="{{ hit.body[:120] }}" lines="2" color="secondary"/>
    </LinearLayout>
    {% else %}
    <TextView id="empty" text="No results" padding="16"/>
    {% endfor %}
  </RecyclerView>
</LinearLayout>
"#;

fn write_package(
    out: &Path,
    manifest: &str,
    schema: &str,
    seed: &str,
    actions: &str,
    content: &str,
    screens: &BTreeMap<String, String>,
) -> Result<(), SynthError> {
    let io = |path: &Path, e: std::io::Error| SynthError::Io(format!("{}: {e}", path.display()));
    if out.exists() {
        let empty = std::fs::read_dir(out).map_err(|e| io(out, e))?.next().is_none();
        if !empty {
            return Err(SynthError::Input(format!(
                "{} exists and is not empty (choose a new folder)",
                out.display()
            )));
        }
    }
    for dir in [out.to_path_buf(), out.join("screens"), out.join("content")] {
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    }
    let mut actions = actions.to_string();
    if screens.contains_key("search_results") {
        actions.push_str("[open_result]\nsteps = [ { navigate_by = \"screen\" } ]\n");
    }
    let files: Vec<(PathBuf, &str)> = vec![
        (out.join("app.toml"), manifest),
        (out.join("schema.sql"), schema),
        (out.join("seed.sql"), seed),
        (out.join("actions.toml"), &actions),
        (out.join("content/content.jsonl"), content),
    ];
    for (path, text) in files {
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
    }
    for (name, template) in screens {
        let path = out.join("screens").join(format!("{name}.xml"));
        std::fs::write(&path, template).map_err(|e| io(&path, e))?;
    }
    Ok(())
}

/// Writes one screen's template.
struct ScreenWriter<'a> {
    package: &'a str,
    tree: &'a UiTree,
    detail: Detail,
    page: usize,
    name: &'a str,
    density: f32,
    wiring: &'a mut Wiring,
    seed: &'a mut String,
    out: String,
    slots: usize,
    /// (slot, text) of the texts moved into `texts`.
    texts: Vec<(String, String)>,
    /// (list name, rows).
    lists: Vec<(String, usize)>,
    transitions: usize,
    has_search: &'a mut bool,
    fields: usize,
    /// Search documents for the list rows.
    row_docs: Vec<serde_json::Value>,
    /// Elements written so far.
    emitted: usize,
    /// Recorded elements left out (too deep, too many).
    dropped: usize,
}

impl ScreenWriter<'_> {
    fn write(&mut self) -> Result<(), SynthError> {
        let Some(root) = content_root(self.tree, self.package) else {
            // An empty recorded screen (a partial state with nothing touched) still gets a screen.
            self.out.push_str("<LinearLayout width=\"match\" height=\"match\"/>\n");
            return Ok(());
        };
        let _ = writeln!(
            self.out,
            "{{# Generated by `phonebench synthesize-app`: page {} of the recorded traces. Texts come from the `texts` table, list rows from `rows`. #}}",
            self.name
        );
        let _ = writeln!(
            self.out,
            "{{% macro tx(slot) %}}{{{{ query_value(\"SELECT text FROM texts WHERE page = {} AND slot = :slot\", slot=slot) or '' }}}}{{% endmacro %}}",
            sql_str(self.name)
        );
        self.node(root)?;
        Ok(())
    }

    fn slot(&mut self) -> String {
        self.slots += 1;
        format!("s{}", self.slots)
    }

    fn list_of(&self, id: NodeId) -> Option<List> {
        if self.detail != Detail::Full {
            return None;
        }
        let kids = self.tree.children(id);
        if kids.len() < 3 {
            return None;
        }
        let mut by_shape: BTreeMap<String, Vec<NodeId>> = BTreeMap::new();
        for &k in kids {
            if self.tree.children(k).is_empty() || self.tree.node(k).checkable {
                continue;
            }
            by_shape.entry(shape(self.tree, k)).or_default().push(k);
        }
        let rows = by_shape.into_values().filter(|rows| rows.len() >= 3).max_by_key(|rows| rows.len())?;
        let slots = text_nodes(self.tree, rows[0]).len();
        if slots == 0 || slots > MAX_ROW_SLOTS {
            return None;
        }
        // Rows that lead to different pages are tabs or a menu, not a list of one kind of thing.
        let targets: BTreeSet<&String> = rows
            .iter()
            .flat_map(|&r| self.tree.dfs(r))
            .filter_map(|d| self.wiring.clicks.get(&(self.page, d)))
            .collect();
        if targets.len() > 1 {
            return None;
        }
        Some(List { rows, name: format!("{}_l{}", self.name, id.0) })
    }

    /// Emits `id` and its subtree. `row` = (list name, column of each text node in the row
    /// template) while inside a list's row template.
    fn node(&mut self, root: NodeId) -> Result<(), SynthError> {
        // Iterative: (node, indent, row context, parent horizontal, closing?)
        enum Work {
            Open(NodeId, usize, Option<Place>, Option<RowCtx>),
            Close(&'static str, usize),
            Raw(String),
        }
        /// Where a child sits in its recorded parent: the parent's bounds and axis, and the
        /// previous sibling's bounds (margins reproduce the recorded gaps).
        #[derive(Clone, Copy)]
        struct Place {
            horizontal: bool,
            stack: bool,
            parent: phonebench_uitree::Bounds,
            prev: Option<phonebench_uitree::Bounds>,
        }
        #[derive(Clone)]
        struct RowCtx {
            columns: HashMap<NodeId, usize>,
            root: NodeId,
        }
        let mut stack = vec![Work::Open(root, 0, None, None)];
        while let Some(work) = stack.pop() {
            match work {
                Work::Raw(text) => self.out.push_str(&text),
                Work::Close(tag, indent) => {
                    let _ = writeln!(self.out, "{}</{tag}>", "  ".repeat(indent));
                }
                Work::Open(id, indent, place, row) => {
                    let node = self.tree.node(id).clone();
                    if skipped(&node, self.detail) && id != root {
                        continue;
                    }
                    // The phone lays out at most 64 levels and 20,000 views: deeper or further
                    // recorded elements are left out (and counted), not written to fail there.
                    if indent >= MAX_DEPTH || self.emitted >= MAX_ELEMENTS {
                        self.dropped += self.tree.dfs(id).len();
                        continue;
                    }
                    self.emitted += 1;
                    let (mut tag, mut tag_class) = tag_for(self.tree, id);
                    // An outline's rows have made-up bounds: lay them out one under another.
                    // A recorded container whose children neither run side by side nor one
                    // under another (a ConstraintLayout, a CoordinatorLayout with a floating
                    // button) stacks them, each placed by its recorded offsets.
                    if self.detail == Detail::Full
                        && tag == "LinearLayout"
                        && !horizontal(self.tree, id)
                        && !vertical(self.tree, id)
                    {
                        (tag, tag_class) = ("FrameLayout", "android.widget.FrameLayout");
                    }
                    if self.detail != Detail::Full && tag == "FrameLayout" {
                        (tag, tag_class) = if id == root {
                            // ...and scroll when there are more than fit.
                            ("ScrollView", "android.widget.ScrollView")
                        } else {
                            ("LinearLayout", "android.widget.LinearLayout")
                        };
                    }
                    let mut attrs = String::new();
                    if node.class != tag_class && is_class_name(&node.class) {
                        let _ = write!(attrs, " class=\"{}\"", xml_attr(&node.class));
                    }
                    let rid = node.resource_id.as_str();
                    let mut element_id = String::new();
                    if !rid.is_empty() && rid.contains(":id/") {
                        element_id = rid.to_string();
                    }
                    // Text: from `texts`, or from the row's column inside a list row.
                    if !node.text.trim().is_empty() && !matches!(tag, "EditText") {
                        match row.as_ref().and_then(|r| r.columns.get(&id)) {
                            Some(col) => {
                                let _ = write!(attrs, " text=\"{{{{ r.c{col} or '' }}}}\"");
                            }
                            None => {
                                let slot = self.slot();
                                let _ = write!(attrs, " text=\"{{{{ tx('{slot}') }}}}\"");
                                let _ = writeln!(
                                    self.seed,
                                    "INSERT INTO texts (page, slot, text) VALUES ({}, {}, {});",
                                    sql_str(self.name),
                                    sql_str(&slot),
                                    sql_str(&node.text)
                                );
                                self.texts.push((slot, node.text.clone()));
                            }
                        }
                    }
                    if !node.content_desc.is_empty() {
                        let _ = write!(attrs, " desc=\"{}\"", xml_attr(&node.content_desc));
                    }
                    if !node.enabled {
                        attrs.push_str(" enabled=\"false\"");
                    }
                    if node.selected {
                        attrs.push_str(" selected=\"true\"");
                    }
                    let label = if node.text.trim().is_empty() {
                        node.content_desc.clone()
                    } else {
                        node.text.trim().to_string()
                    };
                    // State: switches and check boxes, text fields.
                    if matches!(tag, "CheckBox" | "Switch") && row.is_none() {
                        let local = self.slot();
                        let slot = format!("{}.{local}", self.name);
                        let _ = writeln!(
                            self.seed,
                            "INSERT INTO toggles (slot, page, label, checked) VALUES ({}, {}, {}, {});",
                            sql_str(&slot),
                            sql_str(self.name),
                            sql_str(&label),
                            i32::from(node.checked)
                        );
                        let _ = write!(
                            attrs,
                            " checked=\"{{{{ 'true' if query_value(\"SELECT checked FROM toggles WHERE slot = {}\") == 1 else 'false' }}}}\" on-change=\"set_toggle\" arg-slot=\"{}\"",
                            sql_str(&slot),
                            xml_attr(&slot)
                        );
                    }
                    if tag == "EditText" && row.is_none() {
                        self.fields += 1;
                        let slot = format!("{}.f{}", self.name, self.fields);
                        if element_id.is_empty() {
                            element_id = format!("field_{}", self.fields);
                        }
                        let hint =
                            node.hint.clone().filter(|h| !h.is_empty()).unwrap_or_else(|| node.text.clone());
                        let _ = writeln!(
                            self.seed,
                            "INSERT INTO fields (slot, page, label, value) VALUES ({}, {}, {}, '');",
                            sql_str(&slot),
                            sql_str(self.name),
                            sql_str(&hint)
                        );
                        let searchy = [rid, hint.as_str(), node.content_desc.as_str()]
                            .iter()
                            .any(|s| s.to_ascii_lowercase().contains("search"));
                        // Every change is saved (`:value` is the field's new text); Enter in
                        // a search field searches the app's content.
                        let _ = write!(
                            attrs,
                            " hint=\"{}\" value=\"{{{{ query_value(\"SELECT value FROM fields WHERE slot = {}\") or '' }}}}\" on-change=\"save_field\" arg-slot=\"{}\"",
                            xml_attr(&hint),
                            sql_str(&slot),
                            xml_attr(&slot)
                        );
                        if searchy {
                            *self.has_search = true;
                            attrs.push_str(" on-submit=\"search\"");
                        }
                    }
                    if !element_id.is_empty() {
                        let _ = write!(attrs, " id=\"{}\"", xml_attr(&element_id));
                    }
                    if let Some(action) = self.wiring.clicks.get(&(self.page, id)).cloned() {
                        let _ = write!(attrs, " on-click=\"{action}\"");
                        self.transitions += 1;
                    } else if (node.clickable || node.long_clickable)
                        && !matches!(tag, "CheckBox" | "Switch" | "EditText")
                    {
                        attrs.push_str(" clickable=\"true\"");
                    }
                    // Geometry, where recorded: sizes, and margins for the recorded gaps (a
                    // list row inside its loop keeps only its size).
                    if self.detail == Detail::Full
                        && id != root
                        && let Some(place) = place
                    {
                        let b = node.bounds;
                        let full_width = b.width() >= place.parent.width() - 4;
                        // Text takes the room our fonts need (a recorded app's fonts differ:
                        // its exact box would wrap or cut the text).
                        let text_leaf = self.tree.children(id).is_empty() && !node.text.trim().is_empty();
                        if full_width && !place.horizontal {
                            attrs.push_str(" width=\"match\"");
                        } else if !text_leaf {
                            let _ = write!(attrs, " width=\"{}\"", dp(b.width(), self.density));
                        }
                        if !text_leaf {
                            let _ = write!(attrs, " height=\"{}\"", dp(b.height(), self.density));
                        }
                        let in_loop = row.as_ref().is_some_and(|r| r.root == id);
                        let (top, left) = if place.stack {
                            (b.top - place.parent.top, b.left - place.parent.left)
                        } else if place.horizontal {
                            (
                                b.top - place.parent.top,
                                b.left - place.prev.map_or(place.parent.left, |p| p.right),
                            )
                        } else {
                            (
                                b.top - place.prev.map_or(place.parent.top, |p| p.bottom),
                                b.left - place.parent.left,
                            )
                        };
                        let (top, left) = (if in_loop { 0 } else { top.max(0) }, left.max(0));
                        let (top, left) = (i64::from(top), i64::from(left));
                        if top > 0 || left > 0 {
                            let _ = write!(
                                attrs,
                                " margin=\"{} 0 0 {}\"",
                                if top > 0 { dp(top, self.density) } else { 0 },
                                if left > 0 { dp(left, self.density) } else { 0 }
                            );
                        }
                    }
                    if id == root {
                        attrs.push_str(" width=\"match\" height=\"match\"");
                    } else if self.detail != Detail::Full && tag == "View" {
                        // An outline's element with only an id (a UTG node lists ids apart
                        // from texts) still exists on the screen, as a hairline.
                        attrs.push_str(" width=\"match\" height=\"1\"");
                    }
                    let kids: Vec<NodeId> = self.tree.children(id).to_vec();
                    let pad = "  ".repeat(indent);
                    if kids.is_empty()
                        || matches!(
                            tag,
                            "TextView"
                                | "Button"
                                | "EditText"
                                | "CheckBox"
                                | "Switch"
                                | "RadioButton"
                                | "ImageView"
                                | "ImageButton"
                                | "SeekBar"
                                | "View"
                        )
                    {
                        let _ = writeln!(self.out, "{pad}<{tag}{attrs}/>");
                        continue;
                    }
                    let is_horizontal = horizontal(self.tree, id);
                    if is_horizontal && tag == "LinearLayout" {
                        attrs.push_str(" orientation=\"horizontal\"");
                    }
                    let _ = writeln!(self.out, "{pad}<{tag}{attrs}>");
                    stack.push(Work::Close(tag, indent));
                    // A list: the first row becomes a loop over `rows`; other children stay.
                    let list = if row.is_none() { self.list_of(id) } else { None };
                    let mut pending: Vec<Work> = Vec::new();
                    let mut loop_emitted = false;
                    let stack_axis = tag == "FrameLayout";
                    let mut prev: Option<phonebench_uitree::Bounds> = None;
                    let place_of = |k: NodeId, prev: &mut Option<phonebench_uitree::Bounds>| {
                        let p = Place {
                            horizontal: is_horizontal,
                            stack: stack_axis,
                            parent: node.bounds,
                            prev: *prev,
                        };
                        let b = self.tree.node(k).bounds;
                        if !b.is_empty() {
                            *prev = Some(b);
                        }
                        p
                    };
                    for &k in &kids {
                        match &list {
                            Some(l) if l.rows.contains(&k) => {
                                if loop_emitted {
                                    continue;
                                }
                                loop_emitted = true;
                                let template_row = l.rows[0];
                                let text_ids = text_nodes(self.tree, template_row);
                                // Rows past the limit are left out (a screen renders every row).
                                for &r in l.rows.iter().skip(MAX_LIST_ROWS) {
                                    self.dropped += self.tree.dfs(r).len();
                                }
                                for (pos, &r) in l.rows.iter().enumerate().take(MAX_LIST_ROWS) {
                                    let values = text_nodes(self.tree, r);
                                    let texts: Vec<&str> =
                                        values.iter().map(|&v| self.tree.node(v).text.trim()).collect();
                                    self.row_docs.push(serde_json::json!({
                                        "id": format!("{}#{pos}", l.name),
                                        "screen": self.name,
                                        "title": texts.first().copied().unwrap_or(""),
                                        "body": texts.get(1..).map(|t| t.join(" \u{2022} ").replace('\n', " ")).unwrap_or_default(),
                                    }));
                                    let mut cols = Vec::new();
                                    for i in 0..MAX_ROW_SLOTS {
                                        cols.push(
                                            values
                                                .get(i)
                                                .map(|&v| sql_str(&self.tree.node(v).text))
                                                .unwrap_or_else(|| "NULL".into()),
                                        );
                                    }
                                    let _ = writeln!(
                                        self.seed,
                                        "INSERT INTO rows (list, pos, {}) VALUES ({}, {pos}, {});",
                                        (1..=MAX_ROW_SLOTS)
                                            .map(|i| format!("c{i}"))
                                            .collect::<Vec<_>>()
                                            .join(", "),
                                        sql_str(&l.name),
                                        cols.join(", ")
                                    );
                                }
                                self.lists.push((l.name.clone(), l.rows.len().min(MAX_LIST_ROWS)));
                                let columns: HashMap<NodeId, usize> =
                                    text_ids.iter().enumerate().map(|(i, &n)| (n, i + 1)).collect();
                                // A click recorded on any row opens what the first row's did.
                                if let Some(action) = l.rows.iter().find_map(|r| {
                                    self.tree
                                        .dfs(*r)
                                        .find_map(|d| self.wiring.clicks.get(&(self.page, d)).cloned())
                                }) {
                                    self.wiring.clicks.entry((self.page, template_row)).or_insert(action);
                                }
                                pending.push(Work::Raw(format!(
                                    "{}{{% for r in query(\"SELECT * FROM rows WHERE list = {} ORDER BY pos\") %}}\n",
                                    "  ".repeat(indent + 1),
                                    sql_str(&l.name)
                                )));
                                let place = place_of(template_row, &mut prev);
                                if let Some(last) = l.rows.last() {
                                    prev = Some(self.tree.node(*last).bounds);
                                }
                                pending.push(Work::Open(
                                    template_row,
                                    indent + 1,
                                    Some(place),
                                    Some(RowCtx { columns, root: template_row }),
                                ));
                                pending
                                    .push(Work::Raw(format!("{}{{% endfor %}}\n", "  ".repeat(indent + 1))));
                            }
                            _ => {
                                if skipped(self.tree.node(k), self.detail) {
                                    continue;
                                }
                                let place = place_of(k, &mut prev);
                                pending.push(Work::Open(k, indent + 1, Some(place), row.clone()));
                            }
                        }
                    }
                    // Triggers recorded on other screens of this page come first, where they
                    // are on screen whatever the rest of the layout does.
                    if id == root {
                        for (element, action) in
                            self.wiring.extras.get(&self.page).cloned().unwrap_or_default()
                        {
                            pending.insert(0, Work::Raw(extra_element(&element, &action, indent + 1)));
                            self.transitions += 1;
                        }
                    }
                    // The stack pops last-pushed first: push children in reverse.
                    for w in pending.into_iter().rev() {
                        stack.push(w);
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_text_and_classes_are_made_safe_for_the_package() {
        assert_eq!(sql_str("it's\0 ok\n"), "'it''s ok\n'");
        assert!(is_class_name("androidx.appcompat.widget.AppCompatTextView"));
        assert!(is_class_name("com.x.Outer$Inner"));
        for bad in ["", "a b", "1abc", "a..b", "x\"y", "a.b-c"] {
            assert!(!is_class_name(bad), "{bad:?}");
        }
        assert_eq!(
            xml_attr("{{ x }} <a & \"b\">"),
            "&#123;&#123; x &#125;&#125; &lt;a &amp; &quot;b&quot;&gt;"
        );
        assert_eq!(screen_name("p7", "Settings & more!"), "p7_settings_more");
        assert_eq!(screen_name("p8", "設定"), "p8");
    }
}
