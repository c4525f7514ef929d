//! The page-identity metric measured where the truth is known: screens of our own apps, found by
//! tapping around on the simulated phone, clustered by `analyze` with the screen names hidden
//! (no activity), then compared with the real screen names.
//!
//! - purity: the share of screens whose page's most common true screen is their own (pages do
//!   not mix screens);
//! - completeness: the share of screens whose true screen's most common page is their page
//!   (a screen is not split over pages; a detail screen showing different records is one page).

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use phonebench_actions::{Action, Key, Point, Target};
use phonebench_apps::Catalog;
use phonebench_phone::{Phone, PhoneConfig};
use phonebench_testkit::workspace_root;
use phonebench_traces::{Detail, Trace, TraceFormat, TraceKind, TraceScreen, analyze};
use phonebench_uitree::{UiTree, WindowKind, write_xml};

/// Screens of one app: (true screen name, tree), at most `max` distinct trees.
fn screens_of(phone: &mut Phone, app: &str, max: usize) -> Vec<(String, UiTree)> {
    let none = BTreeMap::new();
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    let mut queue: VecDeque<Vec<Action>> = VecDeque::from([Vec::new()]);
    let mut taps = 0;
    while let Some(path) = queue.pop_front() {
        if out.len() >= max || taps > max * 12 || path.len() > 4 {
            break;
        }
        phone.reset().unwrap();
        phone.start_app(app, None, &none).unwrap();
        for a in &path {
            phone.apply(a).unwrap();
        }
        let Some((front, screen)) = phone.current_screen() else { continue };
        if front != app {
            continue;
        }
        let screen = screen.to_string();
        let tree = phone.tree().unwrap().clone();
        if !seen.insert(write_xml(&tree)) {
            continue;
        }
        out.push((screen, tree.clone()));
        for (id, n) in tree.iter() {
            let w = tree.window(tree.window_of(id));
            if !n.clickable
                || n.is_editable()
                || !matches!(w.kind, WindowKind::Application)
                || n.bounds.is_empty()
            {
                continue;
            }
            let (x, y) = n.bounds.center();
            let mut next = path.clone();
            next.push(Action::Tap { target: Target::Point(Point { x, y }) });
            queue.push_back(next);
            taps += 1;
        }
        let mut back = path.clone();
        back.push(Action::Key { key: Key::Back });
        queue.push_back(back);
    }
    out
}

fn majority<'a>(items: impl Iterator<Item = &'a str>) -> &'a str {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for i in items {
        *counts.entry(i).or_default() += 1;
    }
    counts.into_iter().max_by_key(|(_, n)| *n).map(|(k, _)| k).unwrap_or("")
}

#[test]
fn pages_found_by_structure_match_the_true_screens_of_our_apps() {
    let catalog = Catalog::load_dir(&workspace_root().join("apps")).unwrap();
    let mut phone = Phone::new(catalog.clone(), PhoneConfig::default()).unwrap();
    let (mut screens, mut pure, mut complete, mut apps) = (0usize, 0usize, 0usize, 0usize);
    let mut per_app = Vec::new();
    for package in catalog.apps() {
        let app = package.manifest.id.clone();
        let found = screens_of(&mut phone, &app, 40);
        let trace = Trace {
            format: TraceFormat::Phonebench,
            name: app.clone(),
            origin: app.clone(),
            package: Some(package.manifest.package.clone()),
            instruction: None,
            kind: TraceKind::Graph,
            screens: found
                .iter()
                .map(|(name, tree)| TraceScreen {
                    key: name.clone(),
                    package: Some(package.manifest.package.clone()),
                    activity: None,
                    tree: tree.clone(),
                    detail: Detail::Full,
                    screenshot: None,
                })
                .collect(),
            steps: Vec::new(),
        };
        let analysis = analyze(std::slice::from_ref(&trace));
        let truth: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        let page: Vec<usize> = (0..found.len()).map(|s| analysis.page_of[&(0, s)]).collect();
        let mut by_page: HashMap<usize, Vec<&str>> = HashMap::new();
        let mut by_truth: HashMap<&str, Vec<usize>> = HashMap::new();
        for s in 0..found.len() {
            by_page.entry(page[s]).or_default().push(truth[s]);
            by_truth.entry(truth[s]).or_default().push(page[s]);
        }
        let (mut p, mut c) = (0, 0);
        for s in 0..found.len() {
            p += usize::from(majority(by_page[&page[s]].iter().copied()) == truth[s]);
            let pages: Vec<String> = by_truth[truth[s]].iter().map(|p| p.to_string()).collect();
            c += usize::from(majority(pages.iter().map(String::as_str)) == page[s].to_string());
        }
        per_app.push(format!(
            "{app}: {} screens ({} distinct names) → {} pages, purity {:.2}, completeness {:.2}",
            found.len(),
            by_truth.len(),
            by_page.len(),
            p as f64 / found.len().max(1) as f64,
            c as f64 / found.len().max(1) as f64
        ));
        screens += found.len();
        pure += p;
        complete += c;
        apps += 1;
    }
    let purity = pure as f64 / screens as f64;
    let completeness = complete as f64 / screens as f64;
    println!("{}", per_app.join("\n"));
    println!("{apps} apps, {screens} screens: purity {purity:.3}, completeness {completeness:.3}");
    assert!(screens >= 300, "{screens}");
    // A page rarely mixes different screens, and a screen is rarely split: the metric works on
    // screens it was never fitted to.
    assert!(purity >= 0.85, "purity {purity:.3}\n{}", per_app.join("\n"));
    assert!(completeness >= 0.7, "completeness {completeness:.3}\n{}", per_app.join("\n"));
}
