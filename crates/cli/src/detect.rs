//! `phonebench detect-eval`: the pixel-only element detector (`phonebench-detect`) measured on
//! every screen of the simulator's apps against the UI tree's ground truth.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Result, anyhow};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use phonebench_actions::{Action, Target};
use phonebench_detect::eval::{Scores, score, truth};
use phonebench_detect::{ClassicDetector, Detector, ElementKind, Image};
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Catalog, Display, Phone, PhoneConfig};

use crate::play::{apps_dir, load_catalog};

/// Arguments of `phonebench detect-eval`.
#[derive(Args, Debug)]
pub struct DetectEvalArgs {
    /// App packages folder (default: the bundled apps).
    #[arg(long)]
    pub apps: Option<PathBuf>,
    /// Only this app (repeatable).
    #[arg(long = "app")]
    pub app: Vec<String>,
    /// Screen size, `WxH` or `WxH@DPI`.
    #[arg(long, default_value = "1080x2400@420")]
    pub size: String,
    /// One JSON line per app, then a total line.
    #[arg(long)]
    pub json: bool,
    /// At most this many distinct screen states per app.
    #[arg(long)]
    pub max_states: Option<usize>,
    /// Write each state's screenshot, truth and detection into this folder (debugging).
    #[arg(long, hide = true)]
    pub dump: Option<PathBuf>,
}

#[derive(Clone, Debug)]
enum Step {
    Start(String),
    Tap(u32),
}

/// Replays a path from a fresh phone.
fn replay(phone: &mut Phone, app: &str, path: &[Step]) -> bool {
    if phone.reset().is_err() {
        return false;
    }
    for step in path {
        let ok = match step {
            Step::Start(screen) => {
                phone.start_app(app, Some(screen), &BTreeMap::new()).is_ok() && phone.tree().is_ok()
            }
            Step::Tap(i) => {
                phone.observe(ObservationFormat::SphinxTree).is_ok()
                    && phone.apply(&Action::Tap { target: Target::Index(*i) }).is_ok()
                    && phone.tree().is_ok()
            }
        };
        if !ok {
            return false;
        }
    }
    true
}

/// What makes two states the same screen for the crawl.
fn state_key(phone: &mut Phone) -> Option<String> {
    let screen = phone.current_screen().map(|(a, s)| format!("{a}/{s}"));
    let foreground = phone.foreground();
    let keyboard = phone.keyboard_shown();
    let dark = phone.dark_theme();
    let tree = phone.tree().ok()?;
    let overlays: Vec<i32> = tree.windows().iter().map(|w| w.layer).filter(|l| (1..30).contains(l)).collect();
    Some(format!("{foreground:?} {screen:?} overlays={overlays:?} keyboard={keyboard} dark={dark}"))
}

/// One app's result.
struct AppResult {
    scores: Scores,
    error: Option<String>,
}

/// Scores the phone's current screen.
fn score_state(phone: &mut Phone, detector: &dyn Detector, dump: Option<(&Path, String)>) -> Result<Scores> {
    let pixmap = phone.screenshot().map_err(|e| anyhow!("{e}"))?;
    let display = phone.display();
    let tree = phone.tree().map_err(|e| anyhow!("{e}"))?.clone();
    let image = Image { width: pixmap.width(), height: pixmap.height(), rgba: pixmap.data() };
    let detected = detector.detect(image).map_err(|e| anyhow!("{e}"))?;
    let truth = truth(&tree, display.width, display.height);
    let scores = score(&detected, &truth);
    if let Some((dir, name)) = dump {
        let _ = std::fs::create_dir_all(dir);
        if let Ok(png) = phonebench_pixels::encode_png(&pixmap) {
            let _ = std::fs::write(dir.join(format!("{name}.png")), png);
        }
        let mut text = String::new();
        for t in &truth {
            text.push_str(&format!("T {:?} {:?} {:?} click={}\n", t.kind, t.bounds, t.text, t.clickable));
        }
        text.push_str(&phonebench_detect::element_list(&detected));
        let _ = std::fs::write(dir.join(format!("{name}.txt")), text);
    }
    Ok(scores)
}

/// Crawls one app and scores each distinct state.
fn eval_app(
    catalog: &Catalog,
    display: Display,
    app: &str,
    max: usize,
    dump: Option<&Path>,
    bar: &ProgressBar,
) -> AppResult {
    let mut result = AppResult { scores: Scores::default(), error: None };
    let detector = ClassicDetector::new();
    let mut phone = match Phone::new(catalog.clone(), PhoneConfig { display, ..PhoneConfig::default() }) {
        Ok(p) => p,
        Err(e) => {
            result.error = Some(e.to_string());
            return result;
        }
    };
    let Some(package) = catalog.get(app) else {
        result.error = Some(format!("no app `{app}`"));
        return result;
    };
    let screens: Vec<String> = package.screens.keys().cloned().collect();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut n = 0usize;
    let mut visit = |phone: &mut Phone, result: &mut AppResult| -> bool {
        if seen.len() >= max {
            return false;
        }
        // Only the app's own screens (a tap may open another app or go home).
        if phone.current_screen().map(|(a, _)| a) != Some(app) {
            return false;
        }
        let Some(key) = state_key(phone) else { return false };
        if !seen.insert(key) {
            return false;
        }
        let name = format!("{app}-{n:03}");
        n += 1;
        match score_state(phone, &detector, dump.map(|d| (d, name))) {
            Ok(s) => result.scores.add(&s),
            Err(e) => result.error = Some(e.to_string()),
        }
        bar.inc_length(0);
        bar.set_message(format!("{app}: {} states", seen.len()));
        true
    };
    let mut seeds = Vec::new();
    for screen in &screens {
        let path = vec![Step::Start(screen.clone())];
        if replay(&mut phone, app, &path) {
            visit(&mut phone, &mut result);
            seeds.push(path);
        }
    }
    for start in &seeds {
        if !replay(&mut phone, app, start) {
            continue;
        }
        let Ok(targets) = phone.observe(ObservationFormat::SphinxTree).map(|o| o.targets.len()) else {
            continue;
        };
        for i in 0..targets as u32 {
            let mut path = start.clone();
            path.push(Step::Tap(i));
            if replay(&mut phone, app, &path) {
                visit(&mut phone, &mut result);
            }
        }
    }
    result
}

fn figures(s: &Scores) -> serde_json::Value {
    let per_kind: serde_json::Map<String, serde_json::Value> = ElementKind::ALL
        .iter()
        .filter_map(|k| {
            let c = s.per_kind.get(k)?;
            let r = |a: u64, b: u64| {
                if b == 0 { serde_json::Value::Null } else { serde_json::json!(a as f64 / b as f64) }
            };
            Some((
                k.as_str().to_string(),
                serde_json::json!({
                    "truth": c.truth, "detected": c.detected,
                    "recall": r(c.truth_matched, c.truth), "precision": r(c.detected_matched, c.detected),
                }),
            ))
        })
        .collect();
    serde_json::json!({
        "screens": s.screens, "truth": s.truth, "detected": s.detected, "matched": s.matched,
        "precision": s.precision(), "recall": s.recall(), "mean_iou": s.mean_iou(),
        "clickable_truth": s.clickable_truth,
        "clickable_recall": s.clickable_recall(), "clickable_recall_predicted": s.clickable_recall_predicted(),
        "text_accuracy": s.text_accuracy(), "text_similarity": s.text_similarity(),
        "per_kind": per_kind,
    })
}

/// `phonebench detect-eval`.
pub fn run(args: &DetectEvalArgs) -> Result<()> {
    let display: Display = args.size.parse().map_err(|e: String| anyhow!("--size: {e}"))?;
    display.check().map_err(|e| anyhow!("--size: {e}"))?;
    let catalog = load_catalog(&apps_dir(args.apps.clone()))?;
    let mut apps: Vec<String> = catalog.apps().iter().map(|a| a.manifest.id.clone()).collect();
    if !args.app.is_empty() {
        for want in &args.app {
            if !apps.contains(want) {
                anyhow::bail!("--app {want}: no such app (apps: {})", apps.join(", "));
            }
        }
        apps.retain(|a| args.app.contains(a));
    }
    let max = args.max_states.unwrap_or(usize::MAX).max(1);
    let bar = ProgressBar::new(apps.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} apps {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<AppResult>>> = Mutex::new((0..apps.len()).map(|_| None).collect());
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(apps.len()).max(1);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(app) = apps.get(i) else { break };
                    let r = eval_app(&catalog, display, app, max, args.dump.as_deref(), &bar);
                    if let Ok(mut all) = results.lock() {
                        all[i] = Some(r);
                    }
                    bar.inc(1);
                }
            });
        }
    });
    bar.finish_and_clear();
    let results = results.into_inner().map_err(|_| anyhow!("a worker failed"))?;
    let mut total = Scores::default();
    let mut rows = Vec::new();
    for (app, r) in apps.iter().zip(results) {
        let r = r.ok_or_else(|| anyhow!("{app}: not evaluated"))?;
        if let Some(e) = r.error {
            anyhow::bail!("{app}: {e}");
        }
        total.add(&r.scores);
        rows.push((app.clone(), r.scores));
    }
    if args.json {
        for (app, s) in &rows {
            let mut v = serde_json::json!({"kind": "app", "app": app});
            if let (Some(o), serde_json::Value::Object(f)) = (v.as_object_mut(), figures(s)) {
                o.extend(f);
            }
            out!("{v}")?;
        }
        let mut v = serde_json::json!({"kind": "total"});
        if let (Some(o), serde_json::Value::Object(f)) = (v.as_object_mut(), figures(&total)) {
            o.extend(f);
        }
        out!("{v}")?;
        return Ok(());
    }
    out!(
        "{:<10} {:>7} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "app",
        "screens",
        "truth",
        "prec",
        "recall",
        "iou",
        "click",
        "clickp",
        "text",
        "textsim"
    )?;
    let line = |name: &str, s: &Scores| {
        out!(
            "{:<10} {:>7} {:>6} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3}",
            name,
            s.screens,
            s.truth,
            s.precision(),
            s.recall(),
            s.mean_iou(),
            s.clickable_recall(),
            s.clickable_recall_predicted(),
            s.text_accuracy(),
            s.text_similarity()
        )
    };
    for (app, s) in &rows {
        line(app, s)?;
    }
    line("total", &total)?;
    out!("")?;
    out!("{:<10} {:>7} {:>7} {:>7} {:>9}", "kind", "truth", "recall", "detected", "precision")?;
    for k in ElementKind::ALL {
        if let Some(c) = total.per_kind.get(&k) {
            let r = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
            out!(
                "{:<10} {:>7} {:>7.3} {:>7} {:>9.3}",
                k.as_str(),
                c.truth,
                r(c.truth_matched, c.truth),
                c.detected,
                r(c.detected_matched, c.detected)
            )?;
        }
    }
    Ok(())
}
