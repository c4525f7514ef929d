//! `phonebench apps` and `phonebench play`: the simulated phone from the command line
//! (`phonebench bench` is `bench.rs`).

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use phonebench_actions::{Action, ParseOptions, Syntax, parse_action_with, print_action};
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
