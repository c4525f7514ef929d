//! `phonebench bench`: step latency per step kind on each app's busiest screen, reset and
//! screenshot latency; `phonebench bench --throughput`: random-agent environments on every core.
//! What is measured and how to read it: `docs/performance.md`.

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};
use indicatif::{ProgressBar, ProgressStyle};
use phonebench_actions::{Action, Direction, Key, Target};
use phonebench_observe::{Observation, ObservationFormat};
use phonebench_phone::{Catalog, Phone, PhoneConfig, PhoneError};

use crate::play::{apps_dir, load_catalog};

/// `phonebench bench`.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Iterations per latency measurement.
    #[arg(long, default_value_t = 2000)]
    iterations: usize,
    /// JSON lines instead of a table.
    #[arg(long)]
    json: bool,
    /// App packages folder.
    #[arg(long)]
    apps: Option<PathBuf>,
    /// Measure random-agent throughput instead: environments (episodes of the suite's tasks)
    /// stepped on every core, resets, and memory per live environment.
    #[arg(long)]
    throughput: bool,
    /// Throughput: environments (default: 4 per core).
    #[arg(long, requires = "throughput")]
    envs: Option<usize>,
    /// Throughput: seconds of stepping.
    #[arg(long, default_value_t = 10.0, requires = "throughput")]
    seconds: f64,
    /// Throughput: live environments made to measure memory per environment (0: skip).
    #[arg(long, default_value_t = 1000, requires = "throughput")]
    memory_envs: usize,
    /// Throughput: the suite whose tasks the environments play.
    #[arg(long, default_value = "starter", requires = "throughput")]
    suite: String,
    /// Do not share markup parses and layouts between phones (`phonebench_phone::shared`):
    /// every phone computes its own, to measure what sharing saves.
    #[arg(long)]
    no_sharing: bool,
    /// Throughput: seeds the random agents (environment `i` uses `seed + i`).
    #[arg(long, default_value_t = 0, requires = "throughput")]
    seed: u64,
}

/// Runs `phonebench bench` as `args` says.
pub fn run(args: &BenchArgs) -> Result<()> {
    if args.no_sharing {
        phonebench_phone::shared::set_sharing(false);
    }
    if args.throughput {
        throughput(args)
    } else {
        latency(&apps_dir(args.apps.clone()), args.iterations.max(10), args.json)
    }
}

fn err(e: PhoneError) -> anyhow::Error {
    anyhow!("{e}")
}

/// Median and 99th percentile of `samples` in microseconds.
fn percentiles(samples: &mut [f64]) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99))
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// The observation agents get after every step (what a step costs includes it).
const FORMAT: ObservationFormat = ObservationFormat::SphinxTree;

/// How deep the exploration of an app goes: screens up to this many taps from the entry screen.
const MAX_DEPTH: usize = 2;
/// At most this many screens are explored per app (the entry screen included).
const MAX_PLACES: usize = 12;
/// At most this many elements of a screen are tapped during exploration (the first ones, in
/// index order): long lists repeat the same kind of row.
const MAX_TAPS: usize = 48;
/// The word the typing step types.
const WORD: &str = "word";
/// The typing step clears its field (untimed) every this many iterations, so the text stays short.
const CLEAR_EVERY: usize = 10;

/// A screen reached during exploration: the taps from the entry screen that reach it.
#[derive(Debug, Clone)]
struct Place {
    path: Vec<Action>,
    screen: String,
    nodes: usize,
}

/// What a screen looks like for "did the step change anything": the screen's name, the
/// observation's text and (where asked) a hash of every database.
#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    screen: Option<(String, String)>,
    text: String,
    databases: Option<u64>,
}

fn state(phone: &Phone, observation: &Observation, databases: Option<&[String]>) -> Result<State> {
    let screen = phone.current_screen().map(|(a, s)| (a.to_string(), s.to_string()));
    let databases = match databases {
        Some(apps) => Some(databases_hash(phone, apps)?),
        None => None,
    };
    Ok(State { screen, text: observation.text.clone(), databases })
}

/// The databases an app's actions can write: its own and those its manifest declares in
/// `writes` (the catalog refuses a package that writes any other).
fn writable(phone: &Phone, app: &str) -> Vec<String> {
    let mut apps = vec![app.to_string()];
    if let Some(package) = phone.catalog().get(app) {
        apps.extend(package.manifest.writes.iter().cloned());
    }
    apps
}

/// A hash of the databases' bytes (deterministic: `DefaultHasher::new` has fixed keys).
fn databases_hash(phone: &Phone, apps: &[String]) -> Result<u64> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for app in apps {
        phone.database_bytes(app).map_err(err)?.hash(&mut h);
    }
    Ok(h.finish())
}

/// Resets the phone, opens `app` and replays `path`, observing after each action as an agent
/// would (index targets refer to the observation before them). Returns the last observation.
fn go(phone: &mut Phone, app: &str, path: &[Action]) -> Result<Observation> {
    phone.reset().map_err(err)?;
    phone.apply(&Action::OpenApp { app: app.to_string() }).map_err(err)?;
    let mut observation = phone.observe(FORMAT).map_err(err)?;
    for action in path {
        phone.apply(action).map_err(err)?;
        observation = phone.observe(FORMAT).map_err(err)?;
    }
    Ok(observation)
}

fn tap(index: u32) -> Action {
    Action::Tap { target: Target::Index(index) }
}

/// A tap from a place that opens another screen of the app and writes no database.
#[derive(Debug, Clone)]
struct Navigation {
    place: usize,
    index: u32,
    to: String,
    to_nodes: usize,
}

/// A tap from a place whose action writes a database.
#[derive(Debug, Clone)]
struct Writing {
    place: usize,
    index: u32,
    /// Tapping it again restores every database and the screen exactly (a switch, a star).
    toggle: bool,
}

/// What exploring an app found: its screens (breadth-first, so in order of distance) and the
/// first step of each kind on each screen.
#[derive(Debug, Default)]
struct Explored {
    places: Vec<Place>,
    scrolls: Vec<bool>,
    navigations: Vec<Option<Navigation>>,
    writes: Vec<Option<Writing>>,
}

/// Explores `app` breadth-first from its entry screen: on every screen, whether scrolling moves
/// anything, and every tap (the first [`MAX_TAPS`] elements) classified by what it did. Screens are
/// told apart by name; the first path found to a name is kept. Deterministic: the phone is, and
/// every decision is made on what it showed.
fn explore(phone: &mut Phone, app: &str) -> Result<Explored> {
    go(phone, app, &[])?;
    let entry_screen = phone.current_screen().map(|s| s.1.to_string()).unwrap_or_default();
    let nodes = phone.tree().map_err(err)?.len();
    let mut found = Explored::default();
    found.places.push(Place { path: Vec::new(), screen: entry_screen.clone(), nodes });
    let mut seen = BTreeSet::from([entry_screen]);
    let dbs = writable(phone, app);
    let dbs = Some(dbs.as_slice());
    let mut at = 0;
    while at < found.places.len() {
        let place = found.places[at].clone();
        let base_observation = go(phone, app, &place.path)?;
        let base = state(phone, &base_observation, dbs)?;
        // Scrolling: does a plain scroll down change what the agent sees?
        phone.apply(&Action::Scroll { direction: Direction::Down, target: None }).map_err(err)?;
        let scrolled = phone.observe(FORMAT).map_err(err)?;
        found.scrolls.push(scrolled.text != base.text && phone.current_screen() == base_screen(&base));
        let mut navigation: Option<Navigation> = None;
        let mut write: Option<Writing> = None;
        let mut dirty = true;
        let taps = base_observation.targets.len().min(MAX_TAPS) as u32;
        for index in 0..taps {
            if dirty {
                go(phone, app, &place.path)?;
            }
            dirty = true;
            if phone.apply(&tap(index)).is_err() {
                continue;
            }
            let after_observation = phone.observe(FORMAT).map_err(err)?;
            if phone.foreground_app() != Some(app) {
                continue;
            }
            let after = state(phone, &after_observation, dbs)?;
            if after == base {
                dirty = false;
                continue;
            }
            if after.databases != base.databases {
                if write.is_none() {
                    // A toggle: the same tap again gives back every byte and the same screen.
                    let mut toggle = false;
                    if after.screen == base.screen && phone.apply(&tap(index)).is_ok() {
                        let again = phone.observe(FORMAT).map_err(err)?;
                        toggle = state(phone, &again, dbs)? == base;
                    }
                    write = Some(Writing { place: at, index, toggle });
                }
                continue;
            }
            let to = after.screen.as_ref().map(|s| s.1.clone()).unwrap_or_default();
            let to_nodes = phone.tree().map_err(err)?.len();
            // Back is cheaper than a reset; it must give back exactly the screen and data. It
            // also tells an opened screen (Back returns here) from a closed one (an up arrow).
            let mut back_here = false;
            if phone.apply(&Action::Key { key: Key::Back }).is_ok() {
                let back = phone.observe(FORMAT).map_err(err)?;
                let back = state(phone, &back, dbs)?;
                back_here = back.screen == base.screen;
                dirty = back != base;
            }
            if after.screen != base.screen {
                // The heaviest navigation of the screen is the one measured (ties: the first);
                // only one Back undoes is measured, tabs and up arrows are only explored.
                if back_here && navigation.as_ref().is_none_or(|n| to_nodes > n.to_nodes) {
                    navigation = Some(Navigation { place: at, index, to: to.clone(), to_nodes });
                }
                if place.path.len() < MAX_DEPTH && found.places.len() < MAX_PLACES && seen.insert(to.clone())
                {
                    let mut path = place.path.clone();
                    path.push(tap(index));
                    found.places.push(Place { path, screen: to, nodes: to_nodes });
                }
            }
        }
        found.navigations.push(navigation);
        found.writes.push(write);
        at += 1;
    }
    Ok(found)
}

fn base_screen(state: &State) -> Option<(&str, &str)> {
    state.screen.as_ref().map(|(a, s)| (a.as_str(), s.as_str()))
}

/// The busiest place (most nodes; ties: the first found) among those where `has` holds.
fn busiest(places: &[Place], has: impl Fn(usize) -> bool) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, place) in places.iter().enumerate() {
        if has(i) && best.is_none_or(|b| place.nodes > places[b].nodes) {
            best = Some(i);
        }
    }
    best
}

/// One measured row: the step kind, where, what, and the timings.
struct Measured<'a> {
    kind: &'a str,
    app: &'a str,
    place: &'a Place,
    action: serde_json::Value,
    restore: &'a str,
    iterations: usize,
    samples: Vec<f64>,
}

impl Measured<'_> {
    fn row(mut self) -> serde_json::Value {
        let (p50, p99) = percentiles(&mut self.samples);
        serde_json::json!({
            "kind": self.kind, "app": self.app, "screen": self.place.screen, "nodes": self.place.nodes,
            "path": self.place.path, "action": self.action, "restore": self.restore,
            "iterations": self.iterations, "p50_us": round1(p50), "p99_us": round1(p99),
        })
    }
}

fn missing(kind: &str, app: &str, what: &str) -> serde_json::Value {
    serde_json::json!({
        "kind": kind, "app": app, "screen": null, "nodes": null, "action": null, "iterations": 0,
        "p50_us": null, "p99_us": null, "note": format!("no {what} step found"),
    })
}

/// Times `action` + observation on a fresh observation of the phone; returns microseconds.
fn timed_step(phone: &mut Phone, action: &Action) -> Result<f64> {
    let start = Instant::now();
    phone.apply(action).map_err(err)?;
    let observation = phone.observe(FORMAT).map_err(err)?;
    let us = start.elapsed().as_secs_f64() * 1e6;
    std::hint::black_box(observation);
    Ok(us)
}

fn step_scroll(phone: &mut Phone, app: &str, place: &Place, iterations: usize) -> Result<serde_json::Value> {
    go(phone, app, &place.path)?;
    let mut samples = Vec::with_capacity(iterations);
    for i in 0..iterations {
        // Alternate scrolls so every step changes the screen and renders it anew.
        let direction = if i % 2 == 0 { Direction::Down } else { Direction::Up };
        samples.push(timed_step(phone, &Action::Scroll { direction, target: None })?);
    }
    let action = Action::Scroll { direction: Direction::Down, target: None };
    let m = Measured {
        kind: "step-scroll",
        app,
        place,
        action: serde_json::to_value(&action)?,
        restore: "none: scrolls down and up alternately",
        iterations,
        samples,
    };
    Ok(m.row())
}

fn step_navigate(
    phone: &mut Phone,
    app: &str,
    place: &Place,
    nav: &Navigation,
    iterations: usize,
) -> Result<serde_json::Value> {
    let observation = go(phone, app, &place.path)?;
    let base = state(phone, &observation, None)?;
    let action = tap(nav.index);
    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        samples.push(timed_step(phone, &action)?);
        phone.apply(&Action::Key { key: Key::Back }).map_err(err)?;
        let back = phone.observe(FORMAT).map_err(err)?;
        if state(phone, &back, None)? != base {
            go(phone, app, &place.path)?;
        }
    }
    let m = Measured {
        kind: "step-navigate",
        app,
        place,
        action: serde_json::to_value(&action)?,
        restore: "back (reset + replay when not back on the same screen)",
        iterations,
        samples,
    };
    let mut row = m.row();
    row["to"] = serde_json::json!(nav.to);
    row["to_nodes"] = serde_json::json!(nav.to_nodes);
    Ok(row)
}

fn step_write(
    phone: &mut Phone,
    app: &str,
    place: &Place,
    write: &Writing,
    iterations: usize,
) -> Result<serde_json::Value> {
    let observation = go(phone, app, &place.path)?;
    let dbs = writable(phone, app);
    let dbs = write.toggle.then_some(dbs.as_slice());
    let base = state(phone, &observation, dbs)?;
    let action = tap(write.index);
    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        samples.push(timed_step(phone, &action)?);
        let mut restored = false;
        if write.toggle && phone.apply(&action).is_ok() {
            let again = phone.observe(FORMAT).map_err(err)?;
            restored = state(phone, &again, dbs)? == base;
        }
        if !restored {
            go(phone, app, &place.path)?;
        }
    }
    let restore = if write.toggle {
        "inverse tap (reset + replay when the screen or data differ)"
    } else {
        "reset + replay"
    };
    let m = Measured {
        kind: "step-write",
        app,
        place,
        action: serde_json::to_value(&action)?,
        restore,
        iterations,
        samples,
    };
    Ok(m.row())
}

/// The index of a text field on the observed screen that a tap focuses and that takes
/// [`WORD`]: tried in index order, each from a fresh replay of the path. Returns the field's
/// index before the tap and after it (the keyboard may renumber).
fn find_field(phone: &mut Phone, app: &str, place: &Place) -> Result<Option<(u32, u32)>> {
    let observation = go(phone, app, &place.path)?;
    let tree = phone.tree().map_err(err)?;
    let fields: Vec<u32> = observation
        .targets
        .iter()
        .enumerate()
        .filter(|(_, id)| tree.node(**id).class.ends_with("EditText"))
        .map(|(i, _)| i as u32)
        .collect();
    for index in fields {
        go(phone, app, &place.path)?;
        if phone.apply(&tap(index)).is_err() {
            continue;
        }
        let focused = phone.observe(FORMAT).map_err(err)?;
        let screen = phone.current_screen().map(|s| s.1.to_string());
        if screen.as_deref() != Some(place.screen.as_str()) {
            continue;
        }
        let Some(after) = focused_field(phone, &focused)? else { continue };
        let typed = Action::Type {
            text: WORD.into(),
            target: Some(Target::Index(after)),
            clear: false,
            enter: false,
        };
        if phone.apply(&typed).is_err() {
            continue;
        }
        let observation = phone.observe(FORMAT).map_err(err)?;
        if observation.text != focused.text && observation.text.contains(WORD) {
            return Ok(Some((index, after)));
        }
    }
    Ok(None)
}

/// The index of the focused text field on the last observation.
fn focused_field(phone: &mut Phone, observation: &Observation) -> Result<Option<u32>> {
    let tree = phone.tree().map_err(err)?;
    Ok(observation
        .targets
        .iter()
        .position(|id| {
            let node = tree.node(*id);
            node.focused && node.class.ends_with("EditText")
        })
        .map(|i| i as u32))
}

fn step_type(
    phone: &mut Phone,
    app: &str,
    place: &Place,
    field: (u32, u32),
    iterations: usize,
) -> Result<serde_json::Value> {
    go(phone, app, &place.path)?;
    phone.apply(&tap(field.0)).map_err(err)?;
    phone.observe(FORMAT).map_err(err)?;
    let action =
        Action::Type { text: WORD.into(), target: Some(Target::Index(field.1)), clear: false, enter: false };
    let clear = Action::Type { text: String::new(), target: None, clear: true, enter: false };
    let mut samples = Vec::with_capacity(iterations);
    for i in 0..iterations {
        if i > 0 && i % CLEAR_EVERY == 0 {
            phone.apply(&clear).map_err(err)?;
            phone.observe(FORMAT).map_err(err)?;
        }
        samples.push(timed_step(phone, &action)?);
    }
    let mut path = place.path.clone();
    path.push(tap(field.0));
    let focused = Place { path, ..place.clone() };
    let m = Measured {
        kind: "step-type",
        app,
        place: &focused,
        action: serde_json::to_value(&action)?,
        restore: "the field is cleared every 10 steps",
        iterations,
        samples,
    };
    Ok(m.row())
}

/// Explores every app (on every core: each thread its own phone, taking the next app), in the
/// apps' order. Exploration is untimed; it only decides what the measurements step on.
fn explore_all(catalog: &Catalog, ids: &[String]) -> Result<Vec<Explored>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(ids.len()).max(1);
    let bar = progress(ids.len() as u64, "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} apps explored");
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Vec<(usize, Result<Explored>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (next, bar) = (&next, &bar);
                scope.spawn(move || {
                    let mut done = Vec::new();
                    let mut phone = match Phone::new(catalog.clone(), PhoneConfig::default()) {
                        Ok(phone) => phone,
                        Err(e) => return vec![(usize::MAX, Err(err(e)))],
                    };
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(app) = ids.get(i) else { break };
                        done.push((i, explore(&mut phone, app)));
                        bar.inc(1);
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| vec![(usize::MAX, Err(anyhow!("an exploring thread panicked")))])
            })
            .collect()
    });
    bar.finish_and_clear();
    let mut slots: Vec<Option<Explored>> = ids.iter().map(|_| None).collect();
    for (i, result) in results.into_iter().flatten() {
        let found = result?;
        if let Some(slot) = slots.get_mut(i) {
            *slot = Some(found);
        }
    }
    slots
        .into_iter()
        .zip(ids)
        .map(|(s, app)| s.ok_or_else(|| anyhow!("app `{app}` was not explored")))
        .collect()
}

/// `phonebench bench` (latency): per app, each step kind on the busiest explored screen that
/// has one, screenshot timings on the busiest screen, then reset latency.
fn latency(dir: &Path, iterations: usize, json: bool) -> Result<()> {
    let catalog = load_catalog(dir)?;
    let ids: Vec<String> = catalog.apps().iter().map(|a| a.manifest.id.clone()).collect();
    let mut phone = Phone::new(catalog, PhoneConfig::default()).map_err(err)?;
    let explored = explore_all(phone.catalog(), &ids)?;
    let bar =
        progress(ids.len() as u64, "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} apps measured {msg}");
    let mut rows = Vec::new();
    for (app, found) in ids.iter().zip(&explored) {
        bar.set_message(app.clone());
        let places = &found.places;
        match busiest(places, |i| found.scrolls[i]) {
            Some(i) => rows.push(step_scroll(&mut phone, app, &places[i], iterations)?),
            None => rows.push(missing("step-scroll", app, "scroll")),
        }
        match busiest(places, |i| found.navigations[i].is_some()) {
            Some(i) => {
                let nav = found.navigations[i].clone().ok_or_else(|| anyhow!("no navigation"))?;
                rows.push(step_navigate(&mut phone, app, &places[nav.place], &nav, iterations)?);
            }
            None => rows.push(missing("step-navigate", app, "navigating tap")),
        }
        match busiest(places, |i| found.writes[i].is_some()) {
            Some(i) => {
                let write = found.writes[i].clone().ok_or_else(|| anyhow!("no write"))?;
                rows.push(step_write(&mut phone, app, &places[write.place], &write, iterations)?);
            }
            None => rows.push(missing("step-write", app, "writing tap")),
        }
        // Text fields are looked for from the busiest screen down; the first that takes typing wins.
        let mut order: Vec<usize> = (0..places.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(places[i].nodes));
        let mut typed = None;
        for i in order {
            if let Some(field) = find_field(&mut phone, app, &places[i])? {
                typed = Some(step_type(&mut phone, app, &places[i], field, iterations)?);
                break;
            }
        }
        rows.push(typed.unwrap_or_else(|| missing("step-type", app, "typing")));
        let heaviest = busiest(places, |_| true).map_or(&places[0], |i| &places[i]);
        go(&mut phone, app, &heaviest.path)?;
        rows.extend(pixel_timings(&mut phone, app, heaviest, iterations)?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        phone.apply(&Action::OpenApp { app: ids[0].clone() }).map_err(err)?;
        let start = Instant::now();
        phone.reset().map_err(err)?;
        samples.push(start.elapsed().as_secs_f64() * 1e6);
    }
    let (p50, p99) = percentiles(&mut samples);
    rows.push(serde_json::json!({"kind": "reset", "apps": ids.len(), "iterations": iterations, "p50_us": round1(p50), "p99_us": round1(p99)}));
    print_rows(&rows, json)
}

fn print_rows(rows: &[serde_json::Value], json: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        for row in rows {
            writeln!(out, "{row}")?;
        }
        return Ok(());
    }
    writeln!(
        out,
        "{:<14} {:<9} {:<18} {:>6} {:>9} {:>9}  action",
        "what", "app", "screen", "nodes", "p50 (µs)", "p99 (µs)"
    )?;
    for row in rows {
        let s = |k: &str| match &row[k] {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => "-".to_string(),
            other => other.to_string(),
        };
        let app = if row["kind"] == "reset" { format!("all {}", s("apps")) } else { s("app") };
        let what = match (&row["action"], &row["note"]) {
            (_, serde_json::Value::String(note)) => note.clone(),
            (serde_json::Value::Null, _) => String::new(),
            (action, _) => {
                let mut text = action.to_string();
                if let Some(to) = row["to"].as_str() {
                    text.push_str(&format!(" → {to}"));
                }
                text
            }
        };
        writeln!(
            out,
            "{:<14} {:<9} {:<18} {:>6} {:>9} {:>9}  {}",
            s("kind"),
            app,
            s("screen"),
            s("nodes"),
            s("p50_us"),
            s("p99_us"),
            what
        )?;
    }
    Ok(())
}

fn progress(len: u64, template: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()));
    bar
}

/// Screenshot timings on the current screen: render, PNG encode, and each set-of-marks overlay
/// (drawn over a copy of the frame; the copy is not timed).
fn pixel_timings(
    phone: &mut Phone,
    app: &str,
    place: &Place,
    iterations: usize,
) -> Result<Vec<serde_json::Value>> {
    // A frame costs milliseconds: fewer iterations keep the benchmark short.
    let n = (iterations / 10).clamp(5, 200);
    let mut rows = Vec::new();
    let mut row = |kind: &str, samples: &mut Vec<f64>| {
        let (p50, p99) = percentiles(samples);
        rows.push(serde_json::json!({"kind": kind, "app": app, "screen": place.screen, "nodes": place.nodes, "path": place.path, "iterations": n, "p50_us": round1(p50), "p99_us": round1(p99)}));
    };
    let (mut render, mut encode, mut both) = (Vec::new(), Vec::new(), Vec::new());
    let mut frame = phone.screenshot().map_err(err)?;
    for _ in 0..n {
        let start = Instant::now();
        frame = phone.screenshot().map_err(err)?;
        let rendered = start.elapsed();
        let png = phonebench_pixels::encode_png(&frame)?;
        let total = start.elapsed();
        std::hint::black_box(png);
        render.push(rendered.as_secs_f64() * 1e6);
        encode.push((total - rendered).as_secs_f64() * 1e6);
        both.push(total.as_secs_f64() * 1e6);
    }
    row("render", &mut render);
    row("png", &mut encode);
    row("shot", &mut both);
    for style in [phonebench_pixels::SomStyle::AndroidWorld, phonebench_pixels::SomStyle::Sphinx] {
        let observation = phone.observe(crate::screenshot::som_format(style)).map_err(err)?;
        let tree = phone.tree().map_err(err)?.clone();
        let mut samples = Vec::with_capacity(n);
        for _ in 0..n {
            let mut copy = frame.clone();
            let start = Instant::now();
            phonebench_pixels::draw_marks(&mut copy, &tree, &observation.targets, style);
            samples.push(start.elapsed().as_secs_f64() * 1e6);
            std::hint::black_box(copy);
        }
        row(&format!("som-{}", style.name()), &mut samples);
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------------------------
// Throughput

/// Steps a live environment takes when made for the memory measurement: enough to have drawn
/// screens and recorded a few steps, as an environment in use has.
const MEMORY_STEPS: usize = 5;

/// The suite's tasks as environments start them: episode `n` of the whole run is task
/// `n mod T`, instance `n / T` (so every task comes before any task's second instance).
struct Tasks {
    catalog: Catalog,
    specs: Vec<phonebench_tasks::TaskSpec>,
    seed: u64,
}

impl Tasks {
    /// Starts episode `n`: draws the instance (with the thread's `instantiator`), then sets the
    /// task up on the last episode's phone, reset to the task's seed and clock
    /// (`Episode::start_on`), or on a new phone for an environment's first episode. A task that
    /// cannot start is skipped for the next one.
    fn start(
        &self,
        n: u64,
        instantiator: &mut phonebench_runner::Instantiator,
        mut phone: Option<phonebench_phone::Phone>,
    ) -> Result<phonebench_env::Episode> {
        let t = self.specs.len() as u64;
        let mut last = None;
        for k in n..n + t {
            let spec = &self.specs[(k % t) as usize];
            let instance = (k / t) as u32;
            let options = phonebench_env::EpisodeOptions::default();
            let started = instantiator
                .instantiate(spec, self.seed, instance)
                .map_err(|e| anyhow!("task `{}`: {e}", spec.id))
                .and_then(|task| {
                    match phone.take() {
                        Some(phone) => phonebench_env::Episode::start_on(phone, &task, options),
                        None => phonebench_env::Episode::start(&self.catalog, &task, options),
                    }
                    .map_err(|e| anyhow!("task `{}`: {e}", spec.id))
                });
            match started {
                Ok(episode) => return Ok(episode),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| anyhow!("the suite has no tasks")))
    }
}

/// One environment and its random agent.
struct Env {
    /// `None` only while the next episode starts.
    episode: Option<phonebench_env::Episode>,
    agent: phonebench_agents::RandomAgent,
    /// The next episode number this environment starts (`index + k * envs`).
    next: u64,
}

impl Env {
    /// One random step; at the episode's end, the next episode starts (a reset). Returns
    /// how long the reset took, if there was one.
    fn step(
        &mut self,
        tasks: &Tasks,
        instantiator: &mut phonebench_runner::Instantiator,
        stride: u64,
    ) -> Result<Option<Duration>> {
        let Some(episode) = self.episode.as_mut() else {
            anyhow::bail!("an environment without an episode");
        };
        let action = self.agent.decide(episode.observation().targets.len());
        // What a client of `phonebench serve` sends: the action's canonical JSON.
        let raw = serde_json::to_string(&action)?;
        let done = match episode.step(raw, Ok(action)) {
            Ok(feedback) => feedback.done,
            // The phone failed (an infrastructure end): the environment resets, as a trainer's would.
            Err(_) => true,
        };
        if !done {
            return Ok(None);
        }
        let start = Instant::now();
        let phone = self.episode.take().and_then(phonebench_env::Episode::into_phone);
        self.episode = Some(tasks.start(self.next, instantiator, phone)?);
        self.next += stride;
        Ok(Some(start.elapsed()))
    }
}

/// Resident memory of this process in bytes (Linux: `/proc/self/statm`'s resident pages).
fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page_size()?)
}

/// The page size, from `/proc/self/smaps`' first `KernelPageSize` (statm counts pages).
fn page_size() -> Option<u64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .filter(|s| s.contains("KernelPageSize"))
        .or_else(|| std::fs::read_to_string("/proc/self/smaps").ok())?;
    let line = smaps.lines().find(|l| l.starts_with("KernelPageSize:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Memory the system still has available, in bytes (`/proc/meminfo`), to stop making
/// environments before the machine runs out.
fn available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Environments are not made for the memory figure once less than this is available.
const MEMORY_RESERVE: u64 = 2 << 30;

/// `phonebench bench --throughput`.
fn throughput(args: &BenchArgs) -> Result<()> {
    let suite = crate::suite::load_suite(&args.suite)?;
    if suite.tasks.is_empty() {
        anyhow::bail!("suite `{}` has no tasks", args.suite);
    }
    let catalog = load_catalog(&apps_dir(args.apps.clone()))?;
    let tasks = Tasks { catalog, specs: suite.tasks.clone(), seed: suite.manifest.seed };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let envs = args.envs.unwrap_or(4 * cores).max(1);
    let threads = cores.min(envs);
    let seconds = if args.seconds.is_finite() && args.seconds > 0.0 { args.seconds } else { 10.0 };

    // Every thread makes its own environments (round-robin: environment i is thread i mod
    // threads'), then all start stepping together.
    let barrier = std::sync::Barrier::new(threads + 1);
    let stop = AtomicBool::new(false);
    let setup =
        progress(envs as u64, "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} environments started");
    let (results, elapsed) = std::thread::scope(|scope| -> Result<_> {
        let mut handles = Vec::new();
        for t in 0..threads {
            let (tasks, barrier, stop, setup) = (&tasks, &barrier, &stop, &setup);
            handles.push(scope.spawn(move || -> Result<(u64, u64, Duration)> {
                let mut instantiator = phonebench_runner::Instantiator::new(tasks.catalog.clone());
                let made: Result<Vec<Env>> = (t..envs)
                    .step_by(threads)
                    .map(|i| {
                        let env = Env {
                            episode: Some(tasks.start(i as u64, &mut instantiator, None)?),
                            agent: phonebench_agents::RandomAgent::new(args.seed.wrapping_add(i as u64)),
                            next: (i + envs) as u64,
                        };
                        setup.inc(1);
                        Ok(env)
                    })
                    .collect();
                // Wait for the others even after a failure, or they would wait forever.
                barrier.wait();
                let mut mine = made?;
                let (mut steps, mut resets, mut resetting) = (0u64, 0u64, Duration::ZERO);
                while !stop.load(Ordering::Relaxed) {
                    for env in &mut mine {
                        if let Some(took) = env.step(tasks, &mut instantiator, envs as u64)? {
                            resets += 1;
                            resetting += took;
                        }
                        steps += 1;
                    }
                }
                Ok((steps, resets, resetting))
            }));
        }
        barrier.wait();
        setup.finish_and_clear();
        let started = Instant::now();
        let bar = progress((seconds * 10.0) as u64, "{spinner} [{elapsed_precise}] {bar:40} stepping");
        while started.elapsed().as_secs_f64() < seconds {
            std::thread::sleep(Duration::from_millis(50).min(Duration::from_secs_f64(seconds / 4.0)));
            bar.set_position((started.elapsed().as_secs_f64() * 10.0) as u64);
        }
        stop.store(true, Ordering::Relaxed);
        let results: Vec<Result<(u64, u64, Duration)>> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(anyhow!("a thread panicked"))))
            .collect();
        let elapsed = started.elapsed().as_secs_f64();
        bar.finish_and_clear();
        Ok((results, elapsed))
    })?;
    let (hits, misses) = phonebench_phone::shared::sharing_counts();
    let (mut steps, mut resets, mut resetting) = (0u64, 0u64, Duration::ZERO);
    for r in results {
        let (s, n, took) = r?;
        steps += s;
        resets += n;
        resetting += took;
    }
    // Where the threads' time went: resets, and steps (the rest of the threads' time).
    let busy = elapsed * threads as f64;
    let reset_ms = if resets > 0 { resetting.as_secs_f64() * 1e3 / resets as f64 } else { 0.0 };
    let step_us = (busy - resetting.as_secs_f64()).max(0.0) * 1e6 / steps.max(1) as f64;

    let memory = memory_per_env(&tasks, args)?;
    let steps_per_s = steps as f64 / elapsed;
    let row = serde_json::json!({
        "kind": "throughput", "suite": suite.manifest.name, "envs": envs, "cores": cores, "threads": threads,
        "seconds": round1(elapsed), "steps": steps, "resets": resets,
        "steps_per_s": steps_per_s.round(), "steps_per_s_per_core": (steps_per_s / cores as f64).round(),
        "resets_per_s": round1(resets as f64 / elapsed),
        "reset_ms": round1(reset_ms), "step_us": round1(step_us),
        "shared_hits": hits, "shared_misses": misses,
        "memory_envs": memory.map_or(0, |m| m.1),
        "memory_per_env_mb": memory.map_or(serde_json::json!("unknown"), |m| serde_json::json!((m.0 * 100.0).round() / 100.0)),
    });
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{row}")?;
    } else {
        writeln!(
            out,
            "random agent on suite `{}`: {envs} environments on {cores} cores ({threads} threads), {:.1} s",
            suite.manifest.name, elapsed
        )?;
        writeln!(out, "{:<22} {:>12}", "steps", steps)?;
        writeln!(out, "{:<22} {:>12}", "steps/s", row["steps_per_s"].to_string())?;
        writeln!(out, "{:<22} {:>12}", "steps/s per core", row["steps_per_s_per_core"].to_string())?;
        writeln!(out, "{:<22} {:>12}", "resets", resets)?;
        writeln!(out, "{:<22} {:>12}", "resets/s", row["resets_per_s"].to_string())?;
        writeln!(out, "{:<22} {:>12}", "ms per reset", row["reset_ms"].to_string())?;
        writeln!(out, "{:<22} {:>12}", "µs per step", row["step_us"].to_string())?;
        let shared = if hits + misses > 0 {
            format!("{:.0}%", 100.0 * hits as f64 / (hits + misses) as f64)
        } else {
            "off".to_string()
        };
        writeln!(out, "{:<22} {:>12}", "shared parse/layout", shared)?;
        let mb = match memory {
            Some((mb, n)) => format!("{mb:.2} (over {n})"),
            None if args.memory_envs == 0 => "skipped".to_string(),
            None => "unknown".to_string(),
        };
        writeln!(out, "{:<22} {:>12}", "memory/env (MB)", mb)?;
    }
    Ok(())
}

/// RSS before and after making `--memory-envs` live environments (each started and stepped
/// [`MEMORY_STEPS`] times), per environment in MB, and how many were made (fewer when memory
/// ran short). `None` where RSS cannot be read (not Linux) or none were asked for.
fn memory_per_env(tasks: &Tasks, args: &BenchArgs) -> Result<Option<(f64, usize)>> {
    let wanted = args.memory_envs;
    let Some(before) = rss_bytes() else { return Ok(None) };
    if wanted == 0 {
        return Ok(None);
    }
    let bar = progress(wanted as u64, "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} live environments");
    let mut live = Vec::with_capacity(wanted);
    let mut instantiator = phonebench_runner::Instantiator::new(tasks.catalog.clone());
    for i in 0..wanted {
        if available_bytes().is_some_and(|a| a < MEMORY_RESERVE) {
            break;
        }
        let mut env = Env {
            episode: Some(tasks.start(i as u64, &mut instantiator, None)?),
            agent: phonebench_agents::RandomAgent::new(args.seed.wrapping_add(i as u64)),
            next: (i + wanted) as u64,
        };
        for _ in 0..MEMORY_STEPS {
            env.step(tasks, &mut instantiator, wanted as u64)?;
        }
        live.push(env);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let after = rss_bytes().unwrap_or(before);
    let made = live.len();
    std::hint::black_box(&live);
    drop(live);
    if made == 0 {
        return Ok(None);
    }
    Ok(Some((after.saturating_sub(before) as f64 / made as f64 / (1 << 20) as f64, made)))
}
