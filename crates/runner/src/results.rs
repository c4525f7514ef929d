//! The results of a run, as written to `DIR/results.sqlite` and `DIR/episodes.jsonl`.
//!
//! SQLite is the durable record: each episode is inserted with all of its steps in one
//! transaction, so a crash leaves either the whole episode or nothing, and `--resume` skips what
//! is there. `episodes.jsonl` is exported from it sorted by task and instance, so it is
//! byte-identical for identical runs no matter how episodes were scheduled. Wall-clock figures
//! live only in SQLite (they differ between runs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

/// The results database's file name inside a results folder.
pub const DB_FILE: &str = "results.sqlite";
/// The JSON Lines export's file name.
pub const JSONL_FILE: &str = "episodes.jsonl";

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
}

/// One criterion's verdict as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionResult {
    /// Label.
    pub label: String,
    /// Whether it held.
    pub passed: bool,
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
    /// Share of top-level criteria that held.
    pub acp: f64,
    /// Agent turns taken.
    pub steps: u32,
    /// Turns the reference solution takes on this instance.
    pub reference_steps: u32,
    /// `ask_user` questions.
    pub queries: u32,
    /// MCP calls.
    pub mcp_calls: u32,
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

/// A success and a completion share.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// All top-level criteria held.
    pub success: bool,
    /// Share of top-level criteria that held.
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
    /// Share of top-level criteria that held.
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
    /// The observation the agent saw before acting.
    pub observation: String,
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
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl RunConfig {
    /// The fields in which `other` differs from this configuration, as `name: this → other`.
    pub fn differences(&self, other: &RunConfig) -> Vec<String> {
        let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) =
            (serde_json::to_value(self), serde_json::to_value(other))
        else {
            return vec!["(unreadable configuration)".into()];
        };
        let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        let show = |v: Option<&serde_json::Value>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
        keys.into_iter()
            .filter(|k| a.get(*k) != b.get(*k))
            .map(|k| format!("{k}: {} → {}", show(a.get(k)), show(b.get(k))))
            .collect()
    }
}

/// An open results database.
#[derive(Debug)]
pub struct ResultsDb {
    conn: Connection,
    path: PathBuf,
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
";

impl ResultsDb {
    /// Opens (creating if needed) the results database in `dir`.
    pub fn open(dir: &Path) -> Result<ResultsDb, ResultsError> {
        std::fs::create_dir_all(dir)
            .map_err(|source| ResultsError::Io { path: dir.to_path_buf(), source })?;
        let path = dir.join(DB_FILE);
        let sql = |source| ResultsError::Sqlite { path: path.clone(), source };
        let conn = Connection::open(&path).map_err(sql)?;
        // WAL + NORMAL: a committed episode survives the process being killed.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(sql)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(sql)?;
        conn.execute_batch(SCHEMA).map_err(sql)?;
        Ok(ResultsDb { conn, path })
    }

    /// Opens an existing results database (for reports); an error if there is none.
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
        ResultsDb::open(dir)
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

    /// Stores the configuration of a new run, or checks that a resumed run has the same one.
    pub fn claim(&self, config: &RunConfig, resume: bool) -> Result<(), ResultsError> {
        match self.config()? {
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
                "{} holds results of a different run ({}); choose another --out, or --fresh to start over",
                self.path.display(),
                existing.differences(config).join("; ")
            ))),
            None => {
                let text = serde_json::to_string(config).map_err(self.json("run.config"))?;
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
            .prepare("SELECT result FROM episodes ORDER BY task_id, instance")
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
