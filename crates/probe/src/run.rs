//! Running a probe into a results folder: the same `results.sqlite` as runs, the response
//! cache through the model handle, infrastructure failures kept apart and retried on resume.

use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};
use phonebench_agents::llm::ModelHandle;
use phonebench_runner::ResultsDb;
use phonebench_runner::results::ResultsError;
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::ask::{AskSettings, ProbeResult, ask, askable};
use crate::item::{DataSource, Mode, ProbeItem, ProbeKind};

/// A probe run's configuration, stored per probe in the results folder: resuming with another
/// is refused (`--fresh` starts over), so results of different settings never mix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeConfig {
    /// The probe.
    pub probe: ProbeKind,
    /// The model asked.
    pub model: String,
    /// The item sources.
    pub data: Vec<DataSource>,
    /// The modes asked.
    pub modes: Vec<Mode>,
    /// Reading and repair.
    pub settings: AskSettings,
    /// Only the first N items of each source, when limited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// The suite generated items came from, and its seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    /// A digest of the items (ids, prompts' inputs and answers): edited data is another run.
    pub items: String,
    /// Sampling and extra fields sent with every request.
    pub sampling: String,
}

/// Why a probe could not run (infrastructure failures of single items are not errors: they are
/// stored as such).
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The results folder failed.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// The folder holds this probe's results under another configuration.
    #[error("{0}")]
    Mismatch(String),
}

/// What a probe run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProbeRunOutcome {
    /// Item × mode pairs asked now.
    pub asked: usize,
    /// Pairs already stored (resumed).
    pub skipped: usize,
    /// Pairs that cannot be asked in their mode (no screenshot, or one that cannot be read).
    pub unavailable: usize,
    /// Pairs whose model server failed (stored, retried on resume).
    pub infrastructure_failures: usize,
}

/// Options of [`run_probe`].
#[derive(Debug, Clone)]
pub struct ProbeRunOptions {
    /// Items asked at once.
    pub concurrency: usize,
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// Continue a stored run with this configuration.
    pub resume: bool,
    /// Delete this probe's stored results first.
    pub fresh: bool,
}

/// Asks every item in every mode of `config` (skipping pairs stored already when resuming) and
/// stores each result as it comes, then exports `probes.jsonl`.
pub async fn run_probe(
    db: &mut ResultsDb,
    items: &[ProbeItem],
    config: &ProbeConfig,
    model: &ModelHandle,
    options: &ProbeRunOptions,
) -> Result<ProbeRunOutcome, ProbeError> {
    let probe = config.probe.name();
    // One folder is one model's: its profile and report speak for that model alone.
    for other in stored_configs(db)? {
        if other.model != config.model && other.probe != config.probe {
            return Err(ProbeError::Mismatch(format!(
                "this folder holds probes of model `{}`, and one folder holds one model's results; choose another --out for `{}`",
                other.model, config.model
            )));
        }
    }
    if let Some(run) = db.config()?
        && run.model.as_deref() != Some(config.model.as_str())
    {
        return Err(ProbeError::Mismatch(format!(
            "this folder holds a run of agent `{}`{}, and one folder holds one model's results; choose another --out for the probes of `{}`",
            run.agent,
            run.model.map(|m| format!(" with model `{m}`")).unwrap_or_default(),
            config.model
        )));
    }
    let text = serde_json::to_string(config).map_err(|e| ProbeError::Mismatch(e.to_string()))?;
    let stored: Option<ProbeConfig> = db.probe_config(probe)?.and_then(|t| serde_json::from_str(&t).ok());
    let done: std::collections::BTreeSet<String> = match stored {
        _ if options.fresh => {
            db.set_probe_config(probe, &text, true)?;
            Default::default()
        }
        None => {
            db.set_probe_config(probe, &text, true)?;
            Default::default()
        }
        Some(existing) if existing == *config => {
            let done: std::collections::BTreeSet<String> = db.probe_done_keys(probe)?.into_iter().collect();
            if !options.resume && !done.is_empty() {
                return Err(ProbeError::Mismatch(format!(
                    "this folder already holds results of the {probe} probe with these settings; pass --resume to continue it, --fresh to start over, or choose another --out"
                )));
            }
            done
        }
        Some(existing) => {
            return Err(ProbeError::Mismatch(format!(
                "this folder holds results of the {probe} probe with other settings ({}), and results of different settings are never mixed; --fresh starts this probe over, or choose another --out",
                differences(&existing, config).join("; ")
            )));
        }
    };
    // Stored items found unaskable earlier count as unavailable again, not as done work.
    let unaskable: std::collections::BTreeSet<String> = db
        .probe_results(Some(probe))?
        .into_iter()
        .filter(|(_, text)| {
            serde_json::from_str::<serde_json::Value>(text)
                .is_ok_and(|v| v.get("unaskable").is_some_and(|u| !u.is_null()))
        })
        .map(|(key, _)| key)
        .collect();
    let mut outcome = ProbeRunOutcome::default();
    let mut pending = Vec::new();
    for item in items {
        for &mode in &config.modes {
            let key = ProbeResult::key_of(config.probe, mode, &item.id);
            if !askable(item, mode) || unaskable.contains(&key) {
                outcome.unavailable += 1;
            } else if done.contains(&key) {
                outcome.skipped += 1;
            } else {
                pending.push((item.clone(), mode));
            }
        }
    }
    let bar = if options.progress { ProgressBar::new(pending.len() as u64) } else { ProgressBar::hidden() };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} items {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let permits = Arc::new(Semaphore::new(options.concurrency.max(1)));
    let mut set = JoinSet::new();
    for (item, mode) in pending {
        let permits = permits.clone();
        let model = model.clone();
        let (kind, settings) = (config.probe, config.settings);
        set.spawn(async move {
            let _permit = permits.acquire_owned().await;
            ask(&model, kind, &item, mode, settings).await
        });
    }
    let mut failure = None;
    while let Some(joined) = set.join_next().await {
        let (result, calls) = match joined {
            Ok(r) => r,
            // A panicking task is our bug: counted, nothing stored, so a resume retries it.
            Err(e) => {
                outcome.infrastructure_failures += 1;
                bar.set_message(format!("internal error: {e}"));
                continue;
            }
        };
        // An item found unaskable while asking is counted once, as unavailable.
        if result.unaskable.is_some() {
            outcome.unavailable += 1;
        } else {
            outcome.asked += 1;
        }
        if result.infrastructure_error.is_some() {
            outcome.infrastructure_failures += 1;
        }
        let stored = serde_json::to_string(&result).map_err(|e| ProbeError::Mismatch(e.to_string()));
        let calls = serde_json::to_string(&calls).map_err(|e| ProbeError::Mismatch(e.to_string()));
        match (stored, calls) {
            (Ok(stored), Ok(calls)) => {
                if let Err(e) = db.insert_probe(
                    &result.key,
                    probe,
                    result.infrastructure_error.as_deref(),
                    &stored,
                    &calls,
                ) {
                    failure.get_or_insert(ProbeError::from(e));
                    set.abort_all();
                }
            }
            (Err(e), _) | (_, Err(e)) => {
                failure.get_or_insert(e);
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if let Some(e) = failure {
        return Err(e);
    }
    db.export_probes_jsonl()?;
    Ok(outcome)
}

fn differences(a: &ProbeConfig, b: &ProbeConfig) -> Vec<String> {
    let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) =
        (serde_json::to_value(a), serde_json::to_value(b))
    else {
        return vec!["(unreadable configuration)".into()];
    };
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let show = |v: Option<&serde_json::Value>| v.map_or_else(|| "-".to_string(), ToString::to_string);
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("{k}: {} → {}", show(a.get(k)), show(b.get(k))))
        .collect()
}

/// Every stored result of a folder, parsed, sorted by key.
pub fn stored_results(db: &ResultsDb) -> Result<Vec<ProbeResult>, ResultsError> {
    let mut out = Vec::new();
    for (key, text) in db.probe_results(None)? {
        match serde_json::from_str(&text) {
            Ok(result) => out.push(result),
            Err(e) => {
                return Err(ResultsError::Json {
                    path: std::path::PathBuf::from(key),
                    what: "probe_results.result".into(),
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(out)
}

/// Every stored probe configuration of a folder.
pub fn stored_configs(db: &ResultsDb) -> Result<Vec<ProbeConfig>, ResultsError> {
    let mut out = Vec::new();
    for (probe, text) in db.probe_configs()? {
        match serde_json::from_str(&text) {
            Ok(config) => out.push(config),
            Err(e) => {
                return Err(ResultsError::Json {
                    path: std::path::PathBuf::from(probe),
                    what: "probe_runs.config".into(),
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(out)
}

/// A digest of items, for the configuration: their export form, hashed.
pub fn items_digest(items: &[ProbeItem]) -> String {
    // FNV-1a over the canonical JSON of every item: stable across builds and platforms.
    let mut hash = phonebench_tasks::Fnv::default();
    for item in items {
        hash.eat(phonebench_model::canonical_json(&item.to_json()).as_bytes());
    }
    format!("{:016x}-{}", hash.0, items.len())
}
