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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Turns whose output did not parse.
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
    /// Token usage.
    pub usage: Usage,
}

/// One step as stored for the report (the final screen is a row with no action).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepResult {
    /// 0-based step number.
    pub step: u32,
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
}

/// The run's configuration, stored once per folder; resuming with another one is refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
                "{} holds results of a different run ({}); choose another --out",
                self.path.display(),
                serde_json::to_string(&existing).unwrap_or_default()
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
        tx.execute("DELETE FROM steps WHERE key = ?1", params![episode.key]).map_err(sql)?;
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
        for (step, text) in steps.iter().zip(&step_texts) {
            tx.execute(
                "INSERT INTO steps (key, step, data) VALUES (?1, ?2, ?3)",
                params![episode.key, step.step, text],
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
