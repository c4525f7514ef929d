//! `phonebench apps`, `phonebench play` and `phonebench bench`: the simulated phone from the
//! command line.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, anyhow};
use phonebench_actions::{Action, Direction, ParseOptions, Syntax, parse_action_with, print_action};
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Catalog, Display, Phone, PhoneConfig, PhoneError};

/// Where the app packages are: `--apps`, else `$PHONEBENCH_APPS`, else `./apps`, else the
/// repository's `apps/` this binary was built from.
pub fn apps_dir(given: Option<PathBuf>) -> PathBuf {
    if let Some(dir) = given {
        return dir;
    }
    if let Some(dir) = std::env::var_os("PHONEBENCH_APPS") {
        return PathBuf::from(dir);
    }
    let local = PathBuf::from("apps");
    if local.join("contacts").is_dir() {
        return local;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps")
}

/// Loads every package under `dir`.
pub fn load_catalog(dir: &Path) -> Result<Catalog> {
    Catalog::load_dir(dir).map_err(|e| anyhow!("{e}"))
}

/// `phonebench apps`.
pub fn list_apps(dir: &Path, json: bool) -> Result<()> {
    let catalog = load_catalog(dir)?;
    let mut out = std::io::stdout().lock();
    if json {
        for app in catalog.apps() {
            let m = &app.manifest;
            let line = serde_json::json!({
                "id": m.id, "name": m.name, "package": m.package, "entry": m.entry,
                "screens": app.screens.keys().collect::<Vec<_>>(),
                "actions": app.actions.len(),
                "search_indexes": app.indexes.iter().map(|(k, v)| (k.clone(), v.len())).collect::<std::collections::BTreeMap<_, _>>(),
                "dir": app.dir.display().to_string(),
            });
            writeln!(out, "{line}")?;
        }
    } else {
        writeln!(out, "{:<10} {:<16} {:<36} {:>7} {:>7}", "id", "name", "package", "screens", "actions")?;
        for app in catalog.apps() {
            let m = &app.manifest;
            writeln!(
                out,
                "{:<10} {:<16} {:<36} {:>7} {:>7}",
                m.id,
                m.name,
                m.package,
                app.screens.len(),
                app.actions.len()
            )?;
        }
    }
    Ok(())
}

/// Options of `phonebench play`.
pub struct PlayOptions {
    /// App to open first.
    pub app: Option<String>,
    /// Observation format printed after each action.
    pub format: ObservationFormat,
    /// Phone seed.
    pub seed: u64,
    /// `APP:SQL` queries printed as JSON lines when the session ends.
    pub queries: Vec<String>,
    /// Print app events as JSON lines when the session ends.
    pub events: bool,
    /// Save a PNG of every screen here (`step-000.png` is the first).
    pub screenshots: Option<PathBuf>,
    /// Screen size and density.
    pub display: Display,
}

/// `phonebench play`: observation, then one action per stdin line, each followed by the next
/// observation or the error. Returns how many lines were rejected.
pub fn play(dir: &Path, options: &PlayOptions) -> Result<usize> {
    let catalog = load_catalog(dir)?;
    let mut phone = Phone::new(
        catalog,
        PhoneConfig { seed: options.seed, display: options.display, ..PhoneConfig::default() },
    )
    .map_err(|e| anyhow!("{e}"))?;
    if let Some(app) = &options.app {
        phone.apply(&Action::OpenApp { app: app.clone() }).map_err(|e| anyhow!("{e}"))?;
    }
    if let Some(dir) = &options.screenshots {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut shot = 0usize;
    let mut save_screenshot = |phone: &mut Phone| -> Result<()> {
        if let Some(dir) = &options.screenshots {
            let png = crate::screenshot::screenshot_png(phone, None)?;
            let file = dir.join(format!("step-{shot:03}.png"));
            std::fs::write(&file, png).with_context(|| format!("cannot write {}", file.display()))?;
            shot += 1;
        }
        Ok(())
    };
    let print_observation = |phone: &mut Phone, out: &mut dyn Write| -> Result<()> {
        let observation = phone.observe(options.format).map_err(|e| anyhow!("{e}"))?;
        let place = match phone.current_screen() {
            Some((app, screen)) => format!("{app}/{screen}"),
            None => format!("{:?}", phone.foreground()).to_lowercase(),
        };
        writeln!(out, "=== {place} ({} elements)", observation.targets.len())?;
        write!(out, "{}", observation.text)?;
        if !observation.text.ends_with('\n') {
            writeln!(out)?;
        }
        Ok(())
    };
    save_screenshot(&mut phone)?;
    print_observation(&mut phone, &mut out)?;
    let mut rejected = 0;
    let parse_options = ParseOptions::default();
    for (number, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.context("reading stdin")?;
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let action = match parse_action_with(text, Syntax::Auto, &parse_options) {
            Ok(a) => a,
            Err(e) => {
                writeln!(out, "!!! line {}: {e}", number + 1)?;
                rejected += 1;
                continue;
            }
        };
        let shown = print_action(&action, Syntax::Canonical).unwrap_or_else(|_| text.to_string());
        writeln!(out, ">>> {shown}")?;
        match phone.apply(&action) {
            Ok(outcome) => {
                for note in &outcome.notes {
                    writeln!(out, "note: {note}")?;
                }
                save_screenshot(&mut phone)?;
                print_observation(&mut phone, &mut out)?;
            }
            Err(PhoneError::NotDeviceAction(kind)) => {
                writeln!(out, "note: `{kind}` is for the episode, not the phone; nothing changed")?;
            }
            Err(e) => {
                writeln!(out, "!!! line {}: {e}", number + 1)?;
                rejected += 1;
            }
        }
        out.flush()?;
    }
    for query in &options.queries {
        let (app, sql) =
            query.split_once(':').ok_or_else(|| anyhow!("--query takes APP:SQL, got `{query}`"))?;
        for row in phone.query(app, sql).map_err(|e| anyhow!("{e}"))? {
            writeln!(out, "{row}")?;
        }
    }
    if options.events {
        for event in phone.events() {
            writeln!(out, "{}", serde_json::to_string(event)?)?;
        }
    }
    Ok(rejected)
}

/// Median and 99th percentile of `samples` in microseconds.
fn percentiles(samples: &mut [f64]) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99))
}

/// The screen of each app with the most nodes among its entry screen and the screens one tap
/// away from it (the busiest screen the benchmark steps on), with the taps that reach it.
fn busiest_screen(phone: &mut Phone, app: &str) -> Result<(String, Vec<Action>, usize)> {
    let err = |e: PhoneError| anyhow!("{e}");
    phone.reset().map_err(err)?;
    phone.apply(&Action::OpenApp { app: app.to_string() }).map_err(err)?;
    let entry = phone.current_screen().map(|s| s.1.to_string()).unwrap_or_default();
    let mut best = (entry, Vec::new(), phone.tree().map_err(err)?.len());
    let observation = phone.observe(ObservationFormat::SphinxTree).map_err(err)?;
    for index in 0..observation.targets.len() as u32 {
        phone.reset().map_err(err)?;
        phone.apply(&Action::OpenApp { app: app.to_string() }).map_err(err)?;
        phone.observe(ObservationFormat::SphinxTree).map_err(err)?;
        let tap = Action::Tap { target: phonebench_actions::Target::Index(index) };
        if phone.apply(&tap).is_err() || phone.foreground_app() != Some(app) {
            continue;
        }
        let nodes = phone.tree().map_err(err)?.len();
        if nodes > best.2 {
            let screen = phone.current_screen().map(|s| s.1.to_string()).unwrap_or_default();
            best = (screen, vec![tap], nodes);
        }
    }
    Ok(best)
}

/// `phonebench bench`: step latency (action + new observation) on each app's busiest screen and
/// reset latency, as medians and p99 over many iterations.
pub fn bench(dir: &Path, iterations: usize, json: bool) -> Result<()> {
    let catalog = load_catalog(dir)?;
    let ids: Vec<String> = catalog.apps().iter().map(|a| a.manifest.id.clone()).collect();
    let mut phone = Phone::new(catalog, PhoneConfig::default()).map_err(|e| anyhow!("{e}"))?;
    let err = |e: PhoneError| anyhow!("{e}");
    let mut rows = Vec::new();
    for app in &ids {
        let (screen, path, nodes) = busiest_screen(&mut phone, app)?;
        phone.reset().map_err(err)?;
        phone.apply(&Action::OpenApp { app: app.clone() }).map_err(err)?;
        phone.observe(ObservationFormat::SphinxTree).map_err(err)?;
        for action in &path {
            phone.apply(action).map_err(err)?;
            phone.observe(ObservationFormat::SphinxTree).map_err(err)?;
        }
        let mut samples = Vec::with_capacity(iterations);
        for i in 0..iterations {
            // Alternate scrolls so every step changes the screen and renders it anew.
            let direction = if i % 2 == 0 { Direction::Down } else { Direction::Up };
            let action = Action::Scroll { direction, target: None };
            let start = Instant::now();
            phone.apply(&action).map_err(err)?;
            let observation = phone.observe(ObservationFormat::SphinxTree).map_err(err)?;
            samples.push(start.elapsed().as_secs_f64() * 1e6);
            std::hint::black_box(observation);
        }
        let (p50, p99) = percentiles(&mut samples);
        rows.push(serde_json::json!({"kind": "step", "app": app, "screen": screen, "nodes": nodes, "iterations": iterations, "p50_us": round1(p50), "p99_us": round1(p99)}));
        rows.extend(pixel_timings(&mut phone, app, &screen, nodes, iterations)?);
    }
    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        phone.apply(&Action::OpenApp { app: ids[0].clone() }).map_err(err)?;
        let start = Instant::now();
        phone.reset().map_err(err)?;
        samples.push(start.elapsed().as_secs_f64() * 1e6);
    }
    let (p50, p99) = percentiles(&mut samples);
    rows.push(serde_json::json!({"kind": "reset", "apps": ids.len(), "iterations": iterations, "p50_us": round1(p50), "p99_us": round1(p99)}));
    let mut out = std::io::stdout().lock();
    if json {
        for row in &rows {
            writeln!(out, "{row}")?;
        }
    } else {
        writeln!(
            out,
            "{:<17} {:<10} {:<16} {:>6} {:>10} {:>10}",
            "what", "app", "screen", "nodes", "p50 (µs)", "p99 (µs)"
        )?;
        for row in &rows {
            let s = |k: &str| row[k].as_str().map(str::to_string).unwrap_or_else(|| row[k].to_string());
            let app = if row["kind"] == "reset" { format!("all {}", s("apps")) } else { s("app") };
            let screen = if row["kind"] == "reset" { "-".to_string() } else { s("screen") };
            let nodes = if row["kind"] == "reset" { "-".to_string() } else { s("nodes") };
            writeln!(
                out,
                "{:<17} {:<10} {:<16} {:>6} {:>10} {:>10}",
                s("kind"),
                app,
                screen,
                nodes,
                s("p50_us"),
                s("p99_us")
            )?;
        }
    }
    Ok(())
}

/// Screenshot timings on the current screen: render, PNG encode, and each set-of-marks overlay
/// (drawn over a copy of the frame; the copy is not timed).
fn pixel_timings(
    phone: &mut Phone,
    app: &str,
    screen: &str,
    nodes: usize,
    iterations: usize,
) -> Result<Vec<serde_json::Value>> {
    let err = |e: PhoneError| anyhow!("{e}");
    // A frame costs milliseconds: fewer iterations keep the benchmark short.
    let n = (iterations / 10).clamp(10, 200);
    let mut rows = Vec::new();
    let mut row = |kind: &str, samples: &mut Vec<f64>| {
        let (p50, p99) = percentiles(samples);
        rows.push(serde_json::json!({"kind": kind, "app": app, "screen": screen, "nodes": nodes, "iterations": n, "p50_us": round1(p50), "p99_us": round1(p99)}));
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

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}
