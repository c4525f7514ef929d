//! What traces say about an app: which recorded screens are the same page, what kind of page
//! each is, how often it is visited (P0/P1/P2), and how pages connect.
//!
//! **Page identity.** A screen's *structure* is the multiset of its visible elements' tokens:
//! `ShortClass#resource-id-name` for an element with an id, `ShortClass:text` (text normalised:
//! lower case, digits as `#`, at most 24 characters) for one without (then its text is all that
//! names it: a title, a label), and `ShortClass` for one with neither. System UI (status and
//! navigation bars, keyboards) is left out. Two screens' similarity is the weighted Jaccard
//! index of their multisets, Σ min(a, b) / Σ max(a, b) over tokens: 1 for the same structure,
//! 0 for nothing in common; a list with more or fewer rows of the same kind stays close.
//! Screens are the same page when they are of the same package and activity (where the source
//! says) and their similarity is at least [`SAME_PAGE`] (0.5: at least half of the two screens'
//! combined structure is shared). Screens are taken in order (trace, then screen) and each joins
//! the page whose first screen it is most similar to, or starts a new one. Screens whose source
//! keys are content hashes of one family (DroidBot's `state_str`) are merged by key first.
//!
//! **Page types**, first rule that holds: `launcher` (a launcher package or activity), `dialog`
//! (Android's alert ids, or the app content covers under 60% of the screen), `web` (a WebView
//! fills it), `form` (two or more text fields), `search` (a text field named or hinted search),
//! `settings` (three or more switches / check boxes, or "settings" in the activity or title),
//! `list` (a container with three or more children of the same structure, or five outline rows
//! of one class), `detail` (anything else).
//!
//! **Priorities.** A page's visits are the times a step starts on one of its screens, plus each
//! trace's last screen. Pages sorted by visits (ties by first sight): P0 are the fewest that
//! cover half of all visits, P1 those that bring the cover to 80%, P2 the rest (PhoneWorld's
//! "must build / recommended / long tail").

use std::collections::{BTreeMap, HashMap};

use phonebench_uitree::{NodeId, UiTree, WindowKind};
use serde::Serialize;

use crate::model::{Detail, ElementRef, Trace, TraceKind};

/// Similarity at which two screens are the same page.
pub const SAME_PAGE: f64 = 0.5;

/// A screen of a trace: (trace index, screen index).
pub type ScreenRef = (usize, usize);

/// The kind of a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PageType {
    /// The phone's home screen.
    Launcher,
    /// A dialog or popup over another page.
    Dialog,
    /// A web page.
    Web,
    /// Text fields to fill.
    Form,
    /// A search box (and results).
    Search,
    /// Switches and options.
    Settings,
    /// Repeated rows.
    List,
    /// One thing shown.
    Detail,
}

impl PageType {
    /// The type's name.
    pub fn name(self) -> &'static str {
        match self {
            PageType::Launcher => "launcher",
            PageType::Dialog => "dialog",
            PageType::Web => "web",
            PageType::Form => "form",
            PageType::Search => "search",
            PageType::Settings => "settings",
            PageType::List => "list",
            PageType::Detail => "detail",
        }
    }
}

/// How much a page matters, by visits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Priority {
    /// Must build: the most visited pages, half of all visits.
    P0,
    /// Recommended: up to 80% of visits.
    P1,
    /// Long tail.
    P2,
}

/// A page: recorded screens judged the same.
#[derive(Debug, Clone, Serialize)]
pub struct Page {
    /// Stable id: `p` + number in order of first sight (`p1`, `p2`, …).
    pub id: String,
    /// A title: the activity's short name, else the most prominent text.
    pub title: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: PageType,
    /// Package, when known.
    pub package: Option<String>,
    /// Activity, when known.
    pub activity: Option<String>,
    /// Its screens; the first is the representative.
    pub screens: Vec<ScreenRef>,
    /// The best-recorded screen (most detail, then most elements): what synthesis copies.
    pub representative: ScreenRef,
    /// Times visited.
    pub visits: usize,
    /// Its priority.
    pub priority: Priority,
}

/// An element that triggered a transition, and how often.
#[derive(Debug, Clone, Serialize)]
pub struct Trigger {
    /// The element (or the action, for keys and app launches).
    pub label: String,
    /// The element as recorded (none for keys).
    pub element: Option<ElementRef>,
    /// The action kind (`tap`, `key`, …).
    pub action: String,
    /// Times.
    pub count: usize,
}

/// A weighted, directed edge between pages.
#[derive(Debug, Clone, Serialize)]
pub struct Edge {
    /// Page index.
    pub from: usize,
    /// Page index.
    pub to: usize,
    /// Times recorded.
    pub weight: usize,
    /// What triggered it, most frequent first.
    pub triggers: Vec<Trigger>,
}

/// The whole analysis.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    /// Pages in order of first sight.
    pub pages: Vec<Page>,
    /// Edges, heaviest first (ties by pages).
    pub edges: Vec<Edge>,
    /// The page of every screen.
    #[serde(skip)]
    pub page_of: HashMap<ScreenRef, usize>,
    /// The similarity threshold used.
    pub threshold: f64,
}

/// A screen's structural tokens with their counts.
pub type Structure = BTreeMap<String, u32>;

fn is_system_package(p: &str) -> bool {
    p == "com.android.systemui" || p.contains("inputmethod")
}

/// The structure of a tree (see the module doc).
pub fn structure(tree: &UiTree) -> Structure {
    let mut tokens = Structure::new();
    for (id, node) in tree.iter() {
        let window = tree.window(tree.window_of(id));
        if matches!(window.kind, WindowKind::SystemUi | WindowKind::InputMethod)
            || is_system_package(&node.package)
        {
            continue;
        }
        if !node.is_visible() {
            continue;
        }
        *tokens.entry(token(node)).or_insert(0) += 1;
    }
    tokens
}

/// What a screen shows, as a multiset of its visible texts and descriptions (normalised as in
/// [`structure`]): how screens recorded at different detail are compared.
pub fn text_structure(tree: &UiTree) -> Structure {
    let mut tokens = Structure::new();
    for (id, node) in tree.iter() {
        let window = tree.window(tree.window_of(id));
        if matches!(window.kind, WindowKind::SystemUi | WindowKind::InputMethod)
            || is_system_package(&node.package)
            || !node.is_visible()
        {
            continue;
        }
        for text in [&node.text, &node.content_desc] {
            // An outline element's text may hold a label and its value on two lines.
            for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
                *tokens.entry(normalise(line)).or_insert(0) += 1;
            }
        }
    }
    tokens
}

fn token(node: &phonebench_uitree::Node) -> String {
    let class = node.short_class();
    let id = node.short_resource_id();
    if !id.is_empty() {
        format!("{class}#{id}")
    } else if !node.text.trim().is_empty() {
        format!("{class}:{}", normalise(&node.text))
    } else {
        class.to_string()
    }
}

fn normalise(text: &str) -> String {
    text.trim()
        .chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c.to_lowercase().next().unwrap_or(c) })
        .take(24)
        .collect()
}

/// Weighted Jaccard similarity of two structures (1 for two empty ones).
pub fn similarity(a: &Structure, b: &Structure) -> f64 {
    let (mut min, mut max) = (0u64, 0u64);
    let mut ia = a.iter().peekable();
    let mut ib = b.iter().peekable();
    loop {
        match (ia.peek(), ib.peek()) {
            (Some((ka, va)), Some((kb, vb))) => match ka.cmp(kb) {
                std::cmp::Ordering::Equal => {
                    min += u64::from((**va).min(**vb));
                    max += u64::from((**va).max(**vb));
                    ia.next();
                    ib.next();
                }
                std::cmp::Ordering::Less => {
                    max += u64::from(**va);
                    ia.next();
                }
                std::cmp::Ordering::Greater => {
                    max += u64::from(**vb);
                    ib.next();
                }
            },
            (Some((_, va)), None) => {
                max += u64::from(**va);
                ia.next();
            }
            (None, Some((_, vb))) => {
                max += u64::from(**vb);
                ib.next();
            }
            (None, None) => break,
        }
    }
    if max == 0 { 1.0 } else { min as f64 / max as f64 }
}

fn short_activity(a: &str) -> &str {
    a.rsplit(['.', '/']).next().unwrap_or(a)
}

/// The package of a screen: the source's, else the root's.
pub fn screen_package(trace: &Trace, screen: usize) -> Option<String> {
    let s = &trace.screens[screen];
    s.package.clone().filter(|p| !p.is_empty()).or_else(|| {
        (!s.tree.is_empty()).then(|| s.tree.node(NodeId(0)).package.clone()).filter(|p| !p.is_empty())
    })
}

/// Analyses traces (see the module doc).
pub fn analyze(traces: &[Trace]) -> Analysis {
    analyze_with(traces, SAME_PAGE)
}

/// [`analyze`] with another similarity threshold.
pub fn analyze_with(traces: &[Trace], threshold: f64) -> Analysis {
    struct Candidate {
        structure: Structure,
        texts: Structure,
        detail: Detail,
        package: Option<String>,
        activity: Option<String>,
    }
    let mut pages: Vec<Page> = Vec::new();
    // Each page's exemplars: its first screen of each detail level (a page first seen as a
    // partial screen of two touched views must still be found by the full dump of it).
    let mut exemplars: Vec<(usize, Candidate)> = Vec::new();
    let mut page_of: HashMap<ScreenRef, usize> = HashMap::new();
    let mut by_key: HashMap<(&'static str, &str), usize> = HashMap::new();
    for (t, trace) in traces.iter().enumerate() {
        for (s, screen) in trace.screens.iter().enumerate() {
            let family = trace.format.key_family();
            if let Some(&p) = family.and_then(|f| by_key.get(&(f, screen.key.as_str()))) {
                page_of.insert((t, s), p);
                pages[p].screens.push((t, s));
                continue;
            }
            let candidate = Candidate {
                structure: structure(&screen.tree),
                texts: text_structure(&screen.tree),
                detail: screen.detail,
                package: screen_package(trace, s),
                activity: screen.activity.clone(),
            };
            let compatible = |c: &Candidate| {
                let same = |a: &Option<String>, b: &Option<String>, f: fn(&str) -> &str| match (a, b) {
                    (Some(a), Some(b)) => f(a) == f(b),
                    _ => true,
                };
                same(&c.package, &candidate.package, |p| p)
                    && same(&c.activity, &candidate.activity, short_activity)
            };
            let best = exemplars
                .iter()
                .filter(|(_, c)| compatible(c))
                .map(|(i, c)| {
                    let i = *i;
                    // A full dump and an outline of the same screen name their elements in
                    // different words (ids and classes against AutoDroid's tags): compare what
                    // they show instead.
                    // (A partial screen, only the views events touched, is compared as it is:
                    // one touched tab label is in every tab's screen, so containment would
                    // merge pages that differ.)
                    let by_text = (c.detail == Detail::Outline) != (candidate.detail == Detail::Outline);
                    let (a, b) = if by_text {
                        (&c.texts, &candidate.texts)
                    } else {
                        (&c.structure, &candidate.structure)
                    };
                    let sim = similarity(a, b);
                    (i, sim)
                })
                .filter(|(_, sim)| *sim >= threshold)
                .fold(None::<(usize, f64)>, |best, (i, sim)| match best {
                    Some((_, b)) if b >= sim => best,
                    _ => Some((i, sim)),
                });
            let p = match best {
                Some((p, _)) => {
                    if !exemplars.iter().any(|(q, c)| *q == p && c.detail == candidate.detail) {
                        exemplars.push((p, candidate));
                    }
                    p
                }
                None => {
                    pages.push(Page {
                        id: format!("p{}", pages.len() + 1),
                        title: String::new(),
                        kind: PageType::Detail,
                        package: candidate.package.clone(),
                        activity: candidate.activity.clone(),
                        screens: Vec::new(),
                        representative: (t, s),
                        visits: 0,
                        priority: Priority::P2,
                    });
                    exemplars.push((pages.len() - 1, candidate));
                    pages.len() - 1
                }
            };
            if let Some(f) = family {
                by_key.insert((f, screen.key.as_str()), p);
            }
            page_of.insert((t, s), p);
            pages[p].screens.push((t, s));
        }
    }
    for page in &mut pages {
        page.representative = *page
            .screens
            .iter()
            .max_by(|a, b| {
                let (sa, sb) = (&traces[a.0].screens[a.1], &traces[b.0].screens[b.1]);
                (sa.detail, sa.tree.len(), std::cmp::Reverse(*a)).cmp(&(
                    sb.detail,
                    sb.tree.len(),
                    std::cmp::Reverse(*b),
                ))
            })
            .unwrap_or(&page.screens[0]);
        let (t, s) = page.representative;
        let screen = &traces[t].screens[s];
        if page.package.is_none() {
            page.package = page.screens.iter().find_map(|&(t, s)| screen_package(&traces[t], s));
        }
        if page.activity.is_none() {
            page.activity = page.screens.iter().find_map(|&(t, s)| traces[t].screens[s].activity.clone());
        }
        page.kind = page_type(&screen.tree, screen.detail, page.package.as_deref(), page.activity.as_deref());
        page.title = title(&screen.tree, page.activity.as_deref());
    }
    // Visits.
    for (t, trace) in traces.iter().enumerate() {
        for step in &trace.steps {
            if let Some(&p) = page_of.get(&(t, step.from)) {
                pages[p].visits += 1;
            }
        }
        if trace.kind != TraceKind::Graph
            && let Some(last) = trace.steps.last().and_then(|s| s.to)
            && let Some(&p) = page_of.get(&(t, last))
        {
            pages[p].visits += 1;
        }
    }
    assign_priorities(&mut pages);
    // Edges.
    let mut edges: BTreeMap<(usize, usize), (usize, BTreeMap<String, Trigger>)> = BTreeMap::new();
    for (t, trace) in traces.iter().enumerate() {
        for step in &trace.steps {
            let (Some(&from), Some(&to)) =
                (page_of.get(&(t, step.from)), step.to.and_then(|to| page_of.get(&(t, to))))
            else {
                continue;
            };
            let entry = edges.entry((from, to)).or_default();
            entry.0 += 1;
            let action = step.action.kind().to_string();
            let label = match (&step.target, &step.action) {
                (_, phonebench_actions::Action::Key { key }) => format!(
                    "key {}",
                    serde_json::to_value(key)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_else(|| format!("{key:?}"))
                ),
                (_, phonebench_actions::Action::OpenApp { app }) => format!("open {app}"),
                (Some(e), _) if !e.label().is_empty() => e.label(),
                _ => action.clone(),
            };
            let trigger = entry.1.entry(format!("{action}\u{0}{label}")).or_insert_with(|| Trigger {
                label,
                element: step.target.clone(),
                action,
                count: 0,
            });
            trigger.count += 1;
        }
    }
    let mut edges: Vec<Edge> = edges
        .into_iter()
        .map(|((from, to), (weight, triggers))| {
            let mut triggers: Vec<Trigger> = triggers.into_values().collect();
            triggers.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.label.cmp(&b.label)));
            Edge { from, to, weight, triggers }
        })
        .collect();
    edges.sort_by(|a, b| b.weight.cmp(&a.weight).then((a.from, a.to).cmp(&(b.from, b.to))));
    Analysis { pages, edges, page_of, threshold }
}

fn assign_priorities(pages: &mut [Page]) {
    // The launcher is the phone's, not the app's: it is P2 and outside the count (an
    // exploration that goes Home between runs would otherwise make it "must build").
    let counted = |p: &Page| p.kind != PageType::Launcher;
    let total: usize = pages.iter().filter(|p| counted(p)).map(|p| p.visits).sum();
    for p in pages.iter_mut().filter(|p| !counted(p)) {
        p.priority = Priority::P2;
    }
    let mut order: Vec<usize> = (0..pages.len()).filter(|&i| counted(&pages[i])).collect();
    order.sort_by(|&a, &b| pages[b].visits.cmp(&pages[a].visits).then(a.cmp(&b)));
    let mut covered = 0usize;
    for i in order {
        // A page is P0 while the pages before it cover less than half; P1 below 80%.
        let before = covered as f64 / total.max(1) as f64;
        pages[i].priority = if pages[i].visits == 0 {
            Priority::P2
        } else if before < 0.5 {
            Priority::P0
        } else if before < 0.8 {
            Priority::P1
        } else {
            Priority::P2
        };
        covered += pages[i].visits;
    }
}

/// The type of a page from its representative screen (see the module doc).
pub fn page_type(tree: &UiTree, detail: Detail, package: Option<&str>, activity: Option<&str>) -> PageType {
    let package = package.unwrap_or("").to_ascii_lowercase();
    let activity_lc = activity.unwrap_or("").to_ascii_lowercase();
    if package.contains("launcher") || activity_lc.contains("launcher") {
        return PageType::Launcher;
    }
    let nodes: Vec<&phonebench_uitree::Node> = tree
        .iter()
        .filter(|(id, n)| {
            let w = tree.window(tree.window_of(*id));
            !matches!(w.kind, WindowKind::SystemUi | WindowKind::InputMethod)
                && !is_system_package(&n.package)
        })
        .map(|(_, n)| n)
        .collect();
    let has_id = |suffix: &str| nodes.iter().any(|n| n.resource_id == format!("android:id/{suffix}"));
    if has_id("alertTitle") || has_id("parentPanel") || (has_id("message") && has_id("button1")) {
        return PageType::Dialog;
    }
    if detail == Detail::Full {
        let screen = tree.screen_bounds();
        let content = nodes
            .iter()
            .map(|n| n.bounds)
            .filter(|b| !b.is_empty())
            .fold(None, |acc: Option<phonebench_uitree::Bounds>, b| Some(acc.map_or(b, |a| a.union(&b))));
        if let Some(c) = content
            && screen.area() > 0
            && (c.area() as f64) < 0.6 * screen.area() as f64
            && nodes.iter().any(|n| n.clickable)
        {
            return PageType::Dialog;
        }
        if let Some(web) = nodes.iter().find(|n| n.short_class() == "WebView")
            && screen.area() > 0
            && web.bounds.area() as f64 >= 0.5 * screen.area() as f64
        {
            return PageType::Web;
        }
    }
    let fields: Vec<&&phonebench_uitree::Node> = nodes.iter().filter(|n| n.is_editable()).collect();
    let searchy = |s: &str| s.to_ascii_lowercase().contains("search");
    if fields.len() >= 2 {
        return PageType::Form;
    }
    if fields.iter().any(|n| {
        searchy(&n.resource_id)
            || searchy(&n.text)
            || n.hint.as_deref().is_some_and(searchy)
            || searchy(&n.content_desc)
    }) || nodes.iter().any(|n| n.short_class() == "SearchView")
    {
        return PageType::Search;
    }
    let checkables = nodes
        .iter()
        .filter(|n| n.checkable || matches!(n.short_class(), "Switch" | "CheckBox" | "SwitchCompat"))
        .count();
    let title_text = title(tree, activity).to_ascii_lowercase();
    if checkables >= 3
        || activity_lc.contains("setting")
        || activity_lc.contains("preference")
        || title_text.contains("settings")
    {
        return PageType::Settings;
    }
    if has_repeated_rows(tree) {
        return PageType::List;
    }
    if detail == Detail::Outline {
        let mut classes: BTreeMap<&str, usize> = BTreeMap::new();
        for n in &nodes {
            *classes.entry(n.short_class()).or_default() += 1;
        }
        if classes.iter().any(|(c, n)| *n >= 5 && *c != "FrameLayout") {
            return PageType::List;
        }
    }
    PageType::Detail
}

/// Whether some container has three or more children of the same structure (a list's rows).
fn has_repeated_rows(tree: &UiTree) -> bool {
    for (id, node) in tree.iter() {
        let children = tree.children(id);
        if children.len() < 3 || is_system_package(&node.package) {
            continue;
        }
        let mut shapes: BTreeMap<String, usize> = BTreeMap::new();
        for &c in children {
            if tree.children(c).is_empty() {
                continue;
            }
            let shape: String = tree
                .dfs(c)
                .map(|d| {
                    let n = tree.node(d);
                    format!("{}#{}", n.short_class(), n.short_resource_id())
                })
                .collect::<Vec<_>>()
                .join(",");
            *shapes.entry(shape).or_default() += 1;
        }
        if shapes.values().any(|&n| n >= 3) {
            return true;
        }
    }
    false
}

/// A page's title: the activity's short name without `Activity`, else the first text of a
/// toolbar or title element, else the first text on the screen.
pub fn title(tree: &UiTree, activity: Option<&str>) -> String {
    let titled = tree.iter().find(|(_, n)| {
        let id = n.short_resource_id().to_ascii_lowercase();
        !n.text.trim().is_empty()
            && (id.contains("title") || id.contains("toolbar"))
            && !is_system_package(&n.package)
    });
    if let Some((_, n)) = titled {
        return n.text.trim().lines().next().unwrap_or("").chars().take(40).collect();
    }
    if let Some(a) = activity.map(short_activity).filter(|a| !a.is_empty()) {
        let a = a.trim_end_matches("Activity");
        if !a.is_empty() {
            return a.to_string();
        }
    }
    // The first text that reads as words (three letters or more: not "S" or "0.0"), else the
    // first text at all.
    let texts: Vec<&str> = tree
        .iter()
        .filter(|(_, n)| !is_system_package(&n.package))
        .map(|(_, n)| n.text.trim().lines().next().unwrap_or("").trim())
        .filter(|t| !t.is_empty())
        .collect();
    texts
        .iter()
        .find(|t| t.chars().filter(|c| c.is_alphabetic()).count() >= 3)
        .or(texts.first())
        .map(|t| t.chars().take(40).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(pairs: &[(&str, u32)]) -> Structure {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn weighted_jaccard_is_min_over_max() {
        let a = s(&[("A", 2), ("B", 1)]);
        let b = s(&[("A", 1), ("C", 1)]);
        // min: A 1 = 1; max: A 2 + B 1 + C 1 = 4.
        assert!((similarity(&a, &b) - 0.25).abs() < 1e-12);
        assert_eq!(similarity(&a, &a), 1.0);
        assert_eq!(similarity(&a, &s(&[("Z", 3)])), 0.0);
        assert_eq!(similarity(&Structure::new(), &Structure::new()), 1.0);
    }

    #[test]
    fn priorities_cover_half_then_eighty_percent() {
        let page = |visits| Page {
            id: String::new(),
            title: String::new(),
            kind: PageType::Detail,
            package: None,
            activity: None,
            screens: vec![],
            representative: (0, 0),
            visits,
            priority: Priority::P2,
        };
        // 10 visits: 4 (0%→40%: P0), 3 (40%→70%... starts at 40% < 50%: P0), 2 (starts 70%: P1),
        // 1 (starts 90%: P2), 0 → P2.
        let mut pages = vec![page(2), page(4), page(0), page(3), page(1)];
        assign_priorities(&mut pages);
        let p: Vec<Priority> = pages.iter().map(|p| p.priority).collect();
        assert_eq!(p, vec![Priority::P1, Priority::P0, Priority::P2, Priority::P0, Priority::P2]);
    }
}
