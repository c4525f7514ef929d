//! The results of a run, as written to `DIR/results.sqlite` and `DIR/episodes.jsonl`.
//!
//! SQLite is the durable record: each episode is inserted with all of its steps in one
//! transaction, so a crash leaves either the whole episode or nothing, and `--resume` skips what
//! is there. `episodes.jsonl` is exported from it sorted by task and instance, so it is
//! byte-identical for identical runs no matter how episodes were scheduled. Wall-clock figures
//! live only in SQLite (they differ between runs).

use std::collections::BTreeMap;
use std::fs::{File, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde::{Deserialize, Serialize};

/// The results database's file name inside a results folder.
pub const DB_FILE: &str = "results.sqlite";
/// The JSON Lines export's file name.
pub const JSONL_FILE: &str = "episodes.jsonl";
/// The capability probes' JSON Lines export's file name.
pub const PROBES_JSONL_FILE: &str = "probes.jsonl";
/// The lock file inside a results folder: whoever holds an exclusive OS lock on it may write
/// into the folder (see [`ResultsLock`]).
pub const LOCK_FILE: &str = "results.lock";
/// `PRAGMA application_id` of every results database we create ("PBRS"): how a file is known to
/// be ours before anything is read from or written into it.
pub const APPLICATION_ID: i32 = 0x5042_5253;

/// Why results could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// SQLite failed.
    #[error("{path}: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// The error.
        source: rusqlite::Error,
    },
    /// A file could not be written or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A stored JSON column did not parse (the file was edited or is from another version).
    #[error("{path}: bad stored JSON in {what}: {message}")]
    Json {
        /// The database file.
        path: PathBuf,
        /// Which column.
        what: String,
        /// What was wrong.
        message: String,
    },
    /// The folder holds results of a different run configuration.
    #[error("{0}")]
    Mismatch(String),
    /// Another process holds the folder's lock: it is running into the same folder.
    #[error(
        "{} is in use by another phonebench run ({} holds its lock, {}); wait for that run to end, or choose another results folder",
        .dir.display(),
        .holder.map_or_else(|| "another process".to_string(), |pid| format!("process {pid}")),
        .dir.join(LOCK_FILE).display()
    )]
    Locked {
        /// The results folder.
        dir: PathBuf,
        /// The process id the holder wrote into the lock file, when readable.
        holder: Option<u32>,
    },
    /// The file is an SQLite database but not one of our results databases.
    #[error("{}: not a phonebench results database ({why}); it is left untouched", .path.display())]
    NotOurs {
        /// The database file.
        path: PathBuf,
        /// What gave it away.
        why: String,
    },
}

/// One criterion's verdict as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionResult {
    /// Label.
    pub label: String,
    /// Whether it held.
    pub passed: bool,
    /// A guard: it gates success but is not counted in the ACP (absent in older results).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub guard: bool,
    /// The step it matched at, if it matched.
    pub step: Option<usize>,
    /// Why it failed or what it found.
    pub detail: String,
    /// Children of a combinator.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<CriterionResult>,
}

/// Token usage, as agents report it.
pub use phonebench_agents::Usage;

/// One episode's result: the line of `episodes.jsonl`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EpisodeResult {
    /// `task_id#instance`: unique within a run.
    pub key: String,
    /// Task id.
    pub task_id: String,
    /// Instance number.
    pub instance: u32,
    /// Instance seed.
    pub seed: u64,
    /// The disturbances the episode was played with (`none` unless the run asked for some).
    #[serde(default, skip_serializing_if = "is_undisturbed")]
    pub disturbances: phonebench_phone::Disturbances,
    /// Category name.
    pub category: String,
    /// Tags, axis → values.
    pub tags: BTreeMap<String, Vec<String>>,
    /// The goal given to the agent.
    pub goal: String,
    /// Agent name.
    pub agent: String,
    /// All top-level criteria held.
    pub success: bool,
    /// Share of the top-level criteria that are not guards that held.
    pub acp: f64,
    /// Agent turns taken.
    pub steps: u32,
    /// Turns the reference solution takes on this instance.
    pub reference_steps: u32,
    /// `ask_user` questions.
    pub queries: u32,
    /// MCP calls.
    pub mcp_calls: u32,
    /// MCP calls that did not succeed (tool errors, refused calls, failed servers).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub mcp_errors: u32,
    /// Turns whose output did not parse as the agent wrote it (outputs a repair call fixed
    /// included; `repairs` says how many).
    pub format_errors: u32,
    /// Actions equal to an earlier action of the episode (SPHINX's repetition count).
    pub repetitions: u32,
    /// How the episode ended (`finished`, `answered`, `budget`, `timeout`, `infrastructure`, …).
    pub end: String,
    /// Set when the harness or model server failed: the episode is reported apart.
    pub infrastructure_error: Option<String>,
    /// The agent's answer.
    pub answer: Option<String>,
    /// Top-level criterion verdicts.
    pub criteria: Vec<CriterionResult>,
    /// Token usage (as the server reported it; the same whether a call came from the cache).
    pub usage: Usage,
    /// Model calls made (all trials, judges and simulated users included).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub model_calls: u32,
    /// The price of those tokens in USD, when every model used has a price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Steps whose action came from a repair call.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub repairs: u32,
    /// SPHINX's "original" score (the episode ended at the first output that needed repair),
    /// for agents that repair; `success`/`acp` above are the "repaired" score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<Score>,
    /// Model-judge verdicts (never part of `success`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judge: Vec<JudgeResult>,
    /// Every trial, for agents that take several (the last is the one scored above).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trials: Vec<TrialResult>,
}

impl EpisodeResult {
    /// The judges' joint verdict: `Some(true)` when every judge passed the episode,
    /// `Some(false)` when one failed it, `None` when not judged or a judge gave no verdict.
    pub fn judge_passed(&self) -> Option<bool> {
        if self.judge.is_empty() {
            return None;
        }
        let mut all = true;
        for j in &self.judge {
            match j.passed {
                Some(false) => return Some(false),
                Some(true) => {}
                None => all = false,
            }
        }
        all.then_some(true)
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_undisturbed(d: &phonebench_phone::Disturbances) -> bool {
    *d == phonebench_phone::Disturbances::None
}

/// A success and a completion share.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// All top-level criteria held.
    pub success: bool,
    /// Share of the top-level criteria that are not guards that held.
    pub acp: f64,
}

/// One model judge's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeResult {
    /// The judge check's label.
    pub name: String,
    /// Pass, fail, or `None` when the judge's answer had no verdict.
    pub passed: Option<bool>,
    /// The judge's reason.
    pub reason: String,
}

/// One trial of an agent that takes several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialResult {
    /// All top-level criteria held.
    pub success: bool,
    /// Share of the top-level criteria that are not guards that held.
    pub acp: f64,
    /// Turns taken.
    pub steps: u32,
    /// How it ended.
    pub end: String,
}

/// What a run spent, per episode: kept in SQLite only, because it differs between identical
/// runs (a second run reads the cache and spends nothing).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Accounting {
    /// Model calls.
    pub calls: u32,
    /// Calls answered from the response cache.
    pub cached_calls: u32,
    /// Prompt tokens of calls that went to a server.
    pub new_prompt_tokens: u64,
    /// Completion tokens of calls that went to a server.
    pub new_completion_tokens: u64,
    /// USD spent on calls that went to a server (priced models only).
    pub new_cost_usd: f64,
    /// Wall time spent waiting for models, ms.
    pub model_latency_ms: u64,
}

impl Accounting {
    /// The accounting of a set of calls.
    pub fn of_calls<'a>(calls: impl IntoIterator<Item = &'a phonebench_agents::CallRecord>) -> Accounting {
        let mut a = Accounting::default();
        for c in calls {
            a.calls += 1;
            a.model_latency_ms += c.latency_ms;
            if c.cached {
                a.cached_calls += 1;
            } else {
                a.new_prompt_tokens += c.usage.prompt_tokens;
                a.new_completion_tokens += c.usage.completion_tokens;
                a.new_cost_usd += c.cost_usd.unwrap_or(0.0);
            }
        }
        a
    }

    /// Adds another episode's figures.
    pub fn add(&mut self, other: &Accounting) {
        self.calls += other.calls;
        self.cached_calls += other.cached_calls;
        self.new_prompt_tokens += other.new_prompt_tokens;
        self.new_completion_tokens += other.new_completion_tokens;
        self.new_cost_usd += other.new_cost_usd;
        self.model_latency_ms += other.model_latency_ms;
    }
}

/// One step as stored for the report (the final screen of each trial is a row with no action).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepResult {
    /// 0-based step number within its trial.
    pub step: u32,
    /// 0-based trial number (agents that take several trials).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trial: u32,
    /// App id in front.
    pub app: Option<String>,
    /// Screen or activity.
    pub activity: String,
    /// The observation the agent saw before acting (at most 1 MiB kept: see
    /// [`crate::episode::MAX_STORED_OBSERVATION_BYTES`]).
    pub observation: String,
    /// Whether `observation` is cut short (here, or by the observation's own size limit).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub observation_truncated: bool,
    /// What the agent said.
    pub raw: String,
    /// The parsed action (canonical JSON), if any.
    pub action: Option<serde_json::Value>,
    /// Where it touched.
    pub point: Option<(i32, i32)>,
    /// The element it hit, described.
    pub hit: Option<String>,
    /// Feedback given to the agent.
    pub feedback: Option<String>,
    /// Format error, if the output did not parse.
    pub format_error: Option<String>,
    /// Why the phone refused the action.
    pub rejected: Option<String>,
    /// The output did not parse and a repair call rewrote it: why the original failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repaired_from: Option<String>,
    /// The model calls of this step (prompt, full answer, tokens), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<phonebench_agents::CallRecord>,
    /// The screen's saved screenshot, relative to the results folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
    /// The screen's size in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen_size: Option<(u32, u32)>,
    /// The MCP call this step made (with its latency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<phonebench_env::McpCallRecord>,
}

/// The run's configuration, stored once per folder; resuming with another one is refused.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunConfig {
    /// Suite name.
    pub suite: String,
    /// Agent name.
    pub agent: String,
    /// Suite seed.
    pub seed: u64,
    /// Instances per task.
    pub instances: u32,
    /// Task glob, if any.
    pub tasks: Option<String>,
    /// Observation format name.
    pub format: String,
    /// The model the agent used, for model-driven agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A fingerprint of the agent's configuration and prompts: resuming with edited prompts is
    /// refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_fingerprint: Option<String>,
    /// The step budget given on the command line, when it overrides the tasks'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    /// Episodes end at the first format error (SPHINX's rule).
    #[serde(default, skip_serializing_if = "is_false")]
    pub end_on_format_error: bool,
    /// Episodes end at the third identical action in a row (SPHINX's rule).
    #[serde(default, skip_serializing_if = "is_false")]
    pub stop_on_repetition: bool,
    /// The screen, when not the default one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<String>,
    /// The model-based simulated user (model and prompt), when one answers `ask_user`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The model judge (model and prompt), when one is used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    /// The time limit of an episode, in ms (episodes cut short by it end as `timeout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The longest one agent turn may take, in ms (beyond it: an infrastructure failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_timeout_ms: Option<u64>,
    /// Screenshots are saved (a resumed run without them would leave half the report blank).
    #[serde(default, skip_serializing_if = "is_false")]
    pub save_screenshots: bool,
    /// Content hash of the suite's `suite.toml`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_file: Option<String>,
    /// Content hash of each selected task's file, by task id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub task_files: BTreeMap<String, String>,
    /// Content hash of each installed app package (every file of its folder), by app id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub apps: BTreeMap<String, String>,
    /// The MCP configuration (servers and limits), when not the default one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<String>,
    /// The slice of the run's episodes this folder holds (`I/N`), for a sharded run; merged
    /// shards have none, like the unsharded run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// The disturbance levels every episode is played at, when not only `none`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disturbances: Vec<String>,
    /// The device the episodes ran on (`adb:SERIAL`); none for the simulated phone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The phonebench build that ran the episodes ([`crate::fingerprint::binary_identity`]).
    /// Absent in results written before builds were recorded: such a folder cannot be resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl RunConfig {
    /// The fields in which `other` differs from this configuration, as `name: this → other`;
    /// hashed files are named by what they are (`task `x`: its file changed`).
    pub fn differences(&self, other: &RunConfig) -> Vec<String> {
        let (Some(a), Some(b)) = (flatten(self), flatten(other)) else {
            return vec!["(unreadable configuration)".into()];
        };
        let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        // Unset (`null` or left out) reads as `-`.
        let show = |v: Option<&serde_json::Value>| {
            v.filter(|v| !v.is_null()).map_or_else(|| "-".to_string(), |v| v.to_string())
        };
        keys.into_iter()
            .filter(|k| a.get(*k) != b.get(*k))
            .map(|k| {
                let (before, after) = (a.get(k), b.get(k));
                let change = |what: &str| match (before, after) {
                    (Some(_), Some(_)) => format!("its {what} changed"),
                    (Some(_), None) => "not in this run".to_string(),
                    _ => "new in this run".to_string(),
                };
                if let Some(task) = k.strip_prefix("task_files.") {
                    format!("task `{task}`: {}", change("file"))
                } else if let Some(app) = k.strip_prefix("apps.") {
                    format!("app `{app}`: {}", change("package"))
                } else if k == "suite_file" {
                    format!("suite.toml: {}", change("content"))
                } else {
                    format!("{k}: {} → {}", show(before), show(after))
                }
            })
            .collect()
    }
}

/// A configuration as `field` → value, the maps' entries as `field.key` → value.
fn flatten(config: &RunConfig) -> Option<BTreeMap<String, serde_json::Value>> {
    let serde_json::Value::Object(fields) = serde_json::to_value(config).ok()? else { return None };
    let mut out = BTreeMap::new();
    for (name, value) in fields {
        match value {
            serde_json::Value::Object(entries) => {
                out.extend(entries.into_iter().map(|(k, v)| (format!("{name}.{k}"), v)));
            }
            value => {
                out.insert(name, value);
            }
        }
    }
    Some(out)
}

/// The exclusive right to write into a results folder, held from [`ResultsLock::acquire`] until
/// it is dropped.
///
/// It is an OS file lock (`flock` on Unix, `LockFileEx` on Windows) on [`LOCK_FILE`], so the
/// operating system releases it when the holder ends in any way, a crash or `kill -9`
/// included: a stale lock cannot keep a later run out. The holder's process id is written into
/// the file for the refusal message only; the lock itself is what counts.
#[derive(Debug)]
pub struct ResultsLock {
    file: File,
    dir: PathBuf,
}

impl ResultsLock {
    /// Creates `dir` if needed and takes its lock, or fails with [`ResultsError::Locked`] at
    /// once (it never waits) when another holder has it.
    pub fn acquire(dir: &Path) -> Result<ResultsLock, ResultsError> {
        std::fs::create_dir_all(dir)
            .map_err(|source| ResultsError::Io { path: dir.to_path_buf(), source })?;
        let path = dir.join(LOCK_FILE);
        let io = |source| ResultsError::Io { path: path.clone(), source };
        // Not truncated on open: the holder's pid must stay readable for a refused process.
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                let holder = file.read_to_string(&mut text).ok().and_then(|_| text.trim().parse().ok());
                return Err(ResultsError::Locked { dir: dir.to_path_buf(), holder });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        // Best effort: the pid only improves the message another process may print.
        let _ = file.set_len(0).and_then(|()| file.rewind()).and_then(|()| {
            write!(file, "{}", std::process::id())?;
            file.flush()
        });
        Ok(ResultsLock { file, dir: dir.to_path_buf() })
    }

    /// The locked results folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for ResultsLock {
    fn drop(&mut self) {
        // Closing the file releases the lock too; unlocking first makes the release immediate
        // even if something still shares the descriptor.
        let _ = self.file.unlock();
    }
}

/// Deletes the results of the folder `lock` holds (database, `episodes.jsonl`, the default
/// `report/` folder and saved screenshots), keeping the folder and its lock: `--fresh`. Nothing
/// is deleted unless the folder's `results.sqlite` is ours; a foreign one is an error.
pub fn clear(lock: &ResultsLock) -> Result<(), ResultsError> {
    let dir = lock.dir();
    // Only a folder that holds our results database is ours to clear: `--out` may name a folder
    // with the user's own `report/` or a foreign `results.sqlite`, which must survive a typo.
    let db = dir.join(DB_FILE);
    if !db.is_file() {
        return Ok(());
    }
    {
        let sql = |source| ResultsError::Sqlite { path: db.clone(), source };
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&db, flags).map_err(sql)?;
        check_ours(&conn, &db)?;
    }
    for name in [DB_FILE, "results.sqlite-wal", "results.sqlite-shm", JSONL_FILE, PROBES_JSONL_FILE] {
        let file = dir.join(name);
        match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(ResultsError::Io { path: file, source: e });
            }
            _ => {}
        }
    }
    for name in ["report", crate::run::SCREENSHOTS_DIR] {
        let sub = dir.join(name);
        if sub.is_dir() {
            std::fs::remove_dir_all(&sub).map_err(|source| ResultsError::Io { path: sub.clone(), source })?;
        }
    }
    Ok(())
}

/// The tables every results database has (and what a database from before [`APPLICATION_ID`]
/// was set is recognised by).
const TABLES: [&str; 4] = ["run", "episodes", "accounting", "steps"];
/// Tables added later (capability probes): a database without them is still ours.
const LATER_TABLES: [&str; 2] = ["probe_runs", "probe_results"];

/// Whether `conn` is one of our results databases: `Ok(true)` if it is, `Ok(false)` if it is
/// empty (no tables: a new file), an error naming the reason otherwise.
fn check_ours(conn: &Connection, path: &Path) -> Result<bool, ResultsError> {
    let sql = |source| ResultsError::Sqlite { path: path.to_path_buf(), source };
    let id: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0)).map_err(sql)?;
    if id == APPLICATION_ID {
        return Ok(true);
    }
    let not_ours = |why: String| Err(ResultsError::NotOurs { path: path.to_path_buf(), why });
    if id != 0 {
        return not_ours(format!("its application id is {id:#x}, ours is {APPLICATION_ID:#x}"));
    }
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .map_err(sql)?;
    let tables: Vec<String> =
        stmt.query_map([], |r| r.get(0)).map_err(sql)?.collect::<Result<_, _>>().map_err(sql)?;
    if tables.is_empty() {
        return Ok(false);
    }
    // Results written before the application id was set: recognised by their tables.
    let missing: Vec<&str> = TABLES.iter().copied().filter(|t| !tables.iter().any(|n| n == t)).collect();
    let extra: Vec<&str> = tables
        .iter()
        .map(String::as_str)
        .filter(|n| !TABLES.contains(n) && !LATER_TABLES.contains(n))
        .collect();
    if missing.is_empty() && extra.is_empty() {
        return Ok(true);
    }
    let mut why = Vec::new();
    if !missing.is_empty() {
        why.push(format!("no table {}", missing.join(", ")));
    }
    if !extra.is_empty() {
        why.push(format!("tables {} that are not ours", extra.join(", ")));
    }
    not_ours(why.join("; "))
}

/// An open results database: writable (under the folder's [`ResultsLock`]) or read-only.
#[derive(Debug)]
pub struct ResultsDb {
    conn: Connection,
    path: PathBuf,
    /// The folder's lock when this handle took it itself ([`ResultsDb::open`]).
    _lock: Option<ResultsLock>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS run (id INTEGER PRIMARY KEY CHECK (id = 1), config TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (
    key TEXT PRIMARY KEY,
    task_id TEXT NOT NULL,
    instance INTEGER NOT NULL,
    category TEXT NOT NULL,
    success INTEGER NOT NULL,
    acp REAL NOT NULL,
    steps INTEGER NOT NULL,
    infrastructure_error TEXT,
    wall_ms INTEGER NOT NULL,
    result TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS accounting (key TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS steps (
    key TEXT NOT NULL REFERENCES episodes(key),
    step INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (key, step)
);
CREATE TABLE IF NOT EXISTS probe_runs (probe TEXT PRIMARY KEY, config TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS probe_results (
    key TEXT PRIMARY KEY,
    probe TEXT NOT NULL,
    infrastructure_error TEXT,
    result TEXT NOT NULL,
    calls TEXT NOT NULL
);
";

impl ResultsDb {
    /// Takes the lock of `dir` ([`ResultsLock::acquire`]), then opens (creating if needed) its
    /// results database for writing; the lock is held as long as the handle.
    pub fn open(dir: &Path) -> Result<ResultsDb, ResultsError> {
        let lock = ResultsLock::acquire(dir)?;
        let mut db = ResultsDb::open_locked(&lock)?;
        db._lock = Some(lock);
        Ok(db)
    }

    /// Opens (creating if needed) the results database of the folder whose lock the caller
    /// holds, for writing. A database that is not ours is refused before anything is written.
    pub fn open_locked(lock: &ResultsLock) -> Result<ResultsDb, ResultsError> {
        let path = lock.dir().join(DB_FILE);
        let sql = |source| ResultsError::Sqlite { path: path.clone(), source };
        let conn = Connection::open(&path).map_err(sql)?;
        if !check_ours(&conn, &path)? {
            conn.pragma_update(None, "application_id", APPLICATION_ID).map_err(sql)?;
        }
        // WAL + NORMAL: a committed episode survives the process being killed.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(sql)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(sql)?;
        conn.execute_batch(SCHEMA).map_err(sql)?;
        Ok(ResultsDb { conn, path, _lock: None })
    }

    /// Opens the existing results database of `dir` read-only (for reports and readers): an
    /// error if there is none or it is not ours. Nothing is ever written into it, and it can be
    /// read while a run writes it.
    pub fn open_existing(dir: &Path) -> Result<ResultsDb, ResultsError> {
        let path = dir.join(DB_FILE);
        if !path.is_file() {
            return Err(ResultsError::Io {
                path,
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no results here (run `phonebench run` first)",
                ),
            });
        }
        let sql = |source| ResultsError::Sqlite { path: path.clone(), source };
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&path, flags).map_err(sql)?;
        if !check_ours(&conn, &path)? {
            return Err(ResultsError::NotOurs { path, why: "it has no tables".into() });
        }
        Ok(ResultsDb { conn, path, _lock: None })
    }

    fn sql(&self) -> impl Fn(rusqlite::Error) -> ResultsError + '_ {
        |source| ResultsError::Sqlite { path: self.path.clone(), source }
    }

    fn json(&self, what: &str) -> impl Fn(serde_json::Error) -> ResultsError + '_ {
        let what = what.to_string();
        move |e| ResultsError::Json { path: self.path.clone(), what: what.clone(), message: e.to_string() }
    }

    /// The stored configuration, if any.
    pub fn config(&self) -> Result<Option<RunConfig>, ResultsError> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT config FROM run WHERE id = 1", [], |r| r.get(0))
            .optional()
            .map_err(self.sql())?;
        text.map(|t| serde_json::from_str(&t).map_err(self.json("run.config"))).transpose()
    }

    /// Stores the configuration of a new run, or checks that a resumed run has the same one
    /// (every setting, task file, app and the build; [`RunConfig::differences`] names what
    /// differs). Results of an older phonebench that recorded less are refused.
    pub fn claim(&self, config: &RunConfig, resume: bool) -> Result<(), ResultsError> {
        let text = serde_json::to_string(config).map_err(self.json("run.config"))?;
        // A folder is one model's: capability probes of another model stay apart from this run.
        for (probe, stored) in self.probe_configs()? {
            let model = serde_json::from_str::<serde_json::Value>(&stored)
                .ok()
                .and_then(|v| v.get("model").and_then(|m| m.as_str()).map(str::to_string));
            if model.is_some() && model != config.model {
                return Err(ResultsError::Mismatch(format!(
                    "{} holds the {probe} probe's results of model `{}`, and one folder holds one model's results; choose another --out",
                    self.path.display(),
                    model.unwrap_or_default()
                )));
            }
        }
        match self.config()? {
            // Nothing stored yet (a run that ended before its first episode): nothing to mix,
            // so this run's configuration replaces the old one.
            Some(existing) if existing != *config && self.count()? == 0 => {
                self.conn
                    .execute("UPDATE run SET config = ?1 WHERE id = 1", params![text])
                    .map_err(self.sql())?;
                Ok(())
            }
            // Written before task files, apps and the build were recorded: whether the episodes
            // stored were made by the same tasks and code cannot be known, so none are mixed in.
            Some(existing) if existing.binary.is_none() && config.binary.is_some() => {
                Err(ResultsError::Mismatch(format!(
                    "{} holds results of an older phonebench that did not record its task files, apps and build, so whether this run would produce the same episodes cannot be checked; start over with --fresh, or choose another --out",
                    self.path.display()
                )))
            }
            Some(existing) if existing == *config => {
                if !resume && self.count()? > 0 {
                    return Err(ResultsError::Mismatch(format!(
                        "{} already holds results of this run; pass --resume to continue it, --fresh to start over, or choose another --out",
                        self.path.display()
                    )));
                }
                Ok(())
            }
            Some(existing) => Err(ResultsError::Mismatch(format!(
                "{} holds results of a different run, and results of different runs are never mixed; what differs (stored → now): {}; run with the same settings and files, choose another --out, or --fresh to start over",
                self.path.display(),
                existing.differences(config).join("; ")
            ))),
            None => {
                self.conn
                    .execute("INSERT INTO run (id, config) VALUES (1, ?1)", params![text])
                    .map_err(self.sql())?;
                Ok(())
            }
        }
    }

    /// Number of stored episodes.
    pub fn count(&self) -> Result<usize, ResultsError> {
        self.conn
            .query_row("SELECT count(*) FROM episodes", [], |r| r.get::<_, i64>(0))
            .map(|n| n as usize)
            .map_err(self.sql())
    }

    /// Whether an episode is stored.
    pub fn has(&self, key: &str) -> Result<bool, ResultsError> {
        self.conn
            .query_row("SELECT 1 FROM episodes WHERE key = ?1", params![key], |_| Ok(()))
            .optional()
            .map(|o| o.is_some())
            .map_err(self.sql())
    }

    /// Stores an episode and its steps atomically. An infrastructure failure replaces a stored
    /// one on a later attempt (it was not the agent's result).
    pub fn insert(
        &mut self,
        episode: &EpisodeResult,
        steps: &[StepResult],
        accounting: &Accounting,
        wall_ms: u64,
    ) -> Result<(), ResultsError> {
        let result = serde_json::to_string(episode).map_err(self.json("episode"))?;
        let step_texts: Vec<String> = steps
            .iter()
            .map(|s| serde_json::to_string(s).map_err(self.json("step")))
            .collect::<Result<_, _>>()?;
        let path = self.path.clone();
        let sql = |source| ResultsError::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let accounting = serde_json::to_string(accounting).map_err(|e| ResultsError::Json {
            path: path.clone(),
            what: "accounting".into(),
            message: e.to_string(),
        })?;
        tx.execute("DELETE FROM steps WHERE key = ?1", params![episode.key]).map_err(sql)?;
        tx.execute(
            "INSERT OR REPLACE INTO accounting (key, data) VALUES (?1, ?2)",
            params![episode.key, accounting],
        )
        .map_err(sql)?;
        tx.execute("DELETE FROM episodes WHERE key = ?1", params![episode.key]).map_err(sql)?;
        tx.execute(
            "INSERT INTO episodes (key, task_id, instance, category, success, acp, steps, infrastructure_error, wall_ms, result)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                episode.key,
                episode.task_id,
                episode.instance,
                episode.category,
                episode.success,
                episode.acp,
                episode.steps,
                episode.infrastructure_error,
                wall_ms as i64,
                result
            ],
        )
        .map_err(sql)?;
        // The `step` column is the row's position (trials restart their own step numbers).
        for (i, text) in step_texts.iter().enumerate() {
            tx.execute(
                "INSERT INTO steps (key, step, data) VALUES (?1, ?2, ?3)",
                params![episode.key, i as i64, text],
            )
            .map_err(sql)?;
        }
        tx.commit().map_err(sql)
    }

    /// Keys of stored episodes that count as done (infrastructure failures are retried on resume).
    pub fn done_keys(&self) -> Result<Vec<String>, ResultsError> {
        let mut stmt = self
            .conn
            .prepare("SELECT key FROM episodes WHERE infrastructure_error IS NULL ORDER BY key")
            .map_err(self.sql())?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(self.sql())?;
        rows.collect::<Result<Vec<String>, _>>().map_err(self.sql())
    }

    /// Every stored episode, sorted by task id then instance.
    pub fn episodes(&self) -> Result<Vec<EpisodeResult>, ResultsError> {
        let mut stmt = self
            .conn
            // `key` last: a task's instance at several disturbance levels (`t#0`, `t#0@heavy`)
            // comes out in one order whatever order the episodes finished in.
            .prepare("SELECT result FROM episodes ORDER BY task_id, instance, key")
            .map_err(self.sql())?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(self.sql())?;
        let mut out = Vec::new();
        for text in rows {
            let text = text.map_err(self.sql())?;
            out.push(serde_json::from_str(&text).map_err(self.json("episodes.result"))?);
        }
        Ok(out)
    }

    /// Wall time of each episode in ms, by key.
    pub fn wall_times(&self) -> Result<BTreeMap<String, u64>, ResultsError> {
        let mut stmt = self.conn.prepare("SELECT key, wall_ms FROM episodes").map_err(self.sql())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64)))
            .map_err(self.sql())?;
        rows.collect::<Result<_, _>>().map_err(self.sql())
    }

    /// What each episode spent, by key (episodes stored before accounting existed have none).
    pub fn accounting(&self) -> Result<BTreeMap<String, Accounting>, ResultsError> {
        let mut stmt = self.conn.prepare("SELECT key, data FROM accounting").map_err(self.sql())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(self.sql())?;
        let mut out = BTreeMap::new();
        for row in rows {
            let (key, text) = row.map_err(self.sql())?;
            out.insert(key, serde_json::from_str(&text).map_err(self.json("accounting.data"))?);
        }
        Ok(out)
    }

    /// The steps of one episode, in order.
    pub fn steps(&self, key: &str) -> Result<Vec<StepResult>, ResultsError> {
        let mut stmt =
            self.conn.prepare("SELECT data FROM steps WHERE key = ?1 ORDER BY step").map_err(self.sql())?;
        let rows = stmt.query_map(params![key], |r| r.get::<_, String>(0)).map_err(self.sql())?;
        let mut out = Vec::new();
        for text in rows {
            let text = text.map_err(self.sql())?;
            out.push(serde_json::from_str(&text).map_err(self.json("steps.data"))?);
        }
        Ok(out)
    }

    /// The stored configuration of capability probe `probe`, if any (JSON text).
    pub fn probe_config(&self, probe: &str) -> Result<Option<String>, ResultsError> {
        if !self.has_table("probe_runs")? {
            return Ok(None);
        }
        self.conn
            .query_row("SELECT config FROM probe_runs WHERE probe = ?1", params![probe], |r| r.get(0))
            .optional()
            .map_err(self.sql())
    }

    /// Stores the configuration of probe `probe` (replacing any), deleting its stored results
    /// when `clear` is set (a new configuration never mixes with results of another).
    pub fn set_probe_config(&mut self, probe: &str, config: &str, clear: bool) -> Result<(), ResultsError> {
        let path = self.path.clone();
        let sql = |source| ResultsError::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        if clear {
            tx.execute("DELETE FROM probe_results WHERE probe = ?1", params![probe]).map_err(sql)?;
        }
        tx.execute(
            "INSERT OR REPLACE INTO probe_runs (probe, config) VALUES (?1, ?2)",
            params![probe, config],
        )
        .map_err(sql)?;
        tx.commit().map_err(sql)
    }

    /// Stores one probe item's result (JSON) and its model calls (JSON: kept in SQLite only,
    /// like an episode's accounting, since latency and cache hits differ between runs). A
    /// stored result with the same key is replaced.
    pub fn insert_probe(
        &mut self,
        key: &str,
        probe: &str,
        infrastructure_error: Option<&str>,
        result: &str,
        calls: &str,
    ) -> Result<(), ResultsError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO probe_results (key, probe, infrastructure_error, result, calls)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![key, probe, infrastructure_error, result, calls],
            )
            .map(|_| ())
            .map_err(self.sql())
    }

    /// Keys of the stored probe results of `probe` that count as done (infrastructure failures
    /// are retried).
    pub fn probe_done_keys(&self, probe: &str) -> Result<Vec<String>, ResultsError> {
        if !self.has_table("probe_results")? {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare("SELECT key FROM probe_results WHERE probe = ?1 AND infrastructure_error IS NULL ORDER BY key")
            .map_err(self.sql())?;
        let rows = stmt.query_map(params![probe], |r| r.get(0)).map_err(self.sql())?;
        rows.collect::<Result<Vec<String>, _>>().map_err(self.sql())
    }

    /// Every stored probe result as `(key, result JSON)`, sorted by key; `probe` narrows it to
    /// one probe.
    pub fn probe_results(&self, probe: Option<&str>) -> Result<Vec<(String, String)>, ResultsError> {
        if !self.has_table("probe_results")? {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare("SELECT key, result FROM probe_results WHERE ?1 IS NULL OR probe = ?1 ORDER BY key")
            .map_err(self.sql())?;
        let rows = stmt
            .query_map(params![probe], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(self.sql())?;
        rows.collect::<Result<_, _>>().map_err(self.sql())
    }

    /// The stored model calls of one probe item (JSON), if it is stored.
    pub fn probe_calls(&self, key: &str) -> Result<Option<String>, ResultsError> {
        if !self.has_table("probe_results")? {
            return Ok(None);
        }
        self.conn
            .query_row("SELECT calls FROM probe_results WHERE key = ?1", params![key], |r| r.get(0))
            .optional()
            .map_err(self.sql())
    }

    /// Every stored probe configuration as `(probe, config JSON)`, sorted.
    pub fn probe_configs(&self) -> Result<Vec<(String, String)>, ResultsError> {
        if !self.has_table("probe_runs")? {
            return Ok(Vec::new());
        }
        let mut stmt =
            self.conn.prepare("SELECT probe, config FROM probe_runs ORDER BY probe").map_err(self.sql())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(self.sql())?;
        rows.collect::<Result<_, _>>().map_err(self.sql())
    }

    /// Whether the database has table `name` (results written before it existed, opened
    /// read-only, do not).
    fn has_table(&self, name: &str) -> Result<bool, ResultsError> {
        self.conn
            .query_row(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
                params![name],
                |_| Ok(()),
            )
            .optional()
            .map(|o| o.is_some())
            .map_err(self.sql())
    }

    /// Writes `probes.jsonl` next to the database: one line per stored probe result, sorted
    /// by key, through a temporary file and a rename. Nothing is written when there are none.
    pub fn export_probes_jsonl(&self) -> Result<Option<PathBuf>, ResultsError> {
        let results = self.probe_results(None)?;
        if results.is_empty() {
            return Ok(None);
        }
        let dir = self.path.parent().map(Path::to_path_buf).unwrap_or_default();
        let target = dir.join(PROBES_JSONL_FILE);
        let tmp = dir.join(format!("{PROBES_JSONL_FILE}.tmp"));
        let mut text = String::new();
        for (_, result) in results {
            text.push_str(&result);
            text.push('\n');
        }
        std::fs::write(&tmp, text).map_err(|source| ResultsError::Io { path: tmp.clone(), source })?;
        std::fs::rename(&tmp, &target).map_err(|source| ResultsError::Io { path: target.clone(), source })?;
        Ok(Some(target))
    }

    /// Writes `episodes.jsonl` next to the database: one line per episode, sorted, written to a
    /// temporary file and renamed so a reader never sees half a file.
    pub fn export_jsonl(&self) -> Result<PathBuf, ResultsError> {
        let dir = self.path.parent().map(Path::to_path_buf).unwrap_or_default();
        let target = dir.join(JSONL_FILE);
        let tmp = dir.join(format!("{JSONL_FILE}.tmp"));
        let mut text = String::new();
        for e in self.episodes()? {
            text.push_str(&serde_json::to_string(&e).map_err(self.json("episode"))?);
            text.push('\n');
        }
        std::fs::write(&tmp, text).map_err(|source| ResultsError::Io { path: tmp.clone(), source })?;
        std::fs::rename(&tmp, &target).map_err(|source| ResultsError::Io { path: target.clone(), source })?;
        Ok(target)
    }
}

/// `path` made absolute, with the symbolic links of its deepest existing ancestor resolved (the
/// rest need not exist yet).
pub fn resolve_path(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest = Vec::new();
    let mut base = absolute.as_path();
    loop {
        if let Ok(real) = base.canonicalize() {
            return rest.iter().rev().fold(real, |acc: PathBuf, part| acc.join(part));
        }
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                base = parent;
            }
            _ => return absolute,
        }
    }
}
