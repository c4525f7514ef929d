//! `traces.db`: the trace model in SQLite, so that ingesting (slow, many formats) and analysing
//! (often re-run) are separate commands. Trees are stored as uiautomator XML (our reader reads
//! back what our writer wrote, equal), screenshots as their original bytes.

use std::path::Path;

use phonebench_uitree::{read_xml, write_xml};
use rusqlite::{Connection, OpenFlags, params};

use crate::model::{
    Detail, ElementRef, Problem, Screenshot, Trace, TraceFormat, TraceKind, TraceScreen, TraceStep,
};

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: &str = "1";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS traces (
  id INTEGER PRIMARY KEY,
  format TEXT NOT NULL,
  name TEXT NOT NULL,
  origin TEXT NOT NULL,
  package TEXT,
  instruction TEXT,
  kind TEXT NOT NULL,
  UNIQUE (format, origin, name)
);
CREATE TABLE IF NOT EXISTS screens (
  trace_id INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  key TEXT NOT NULL,
  package TEXT,
  activity TEXT,
  detail TEXT NOT NULL,
  tree TEXT NOT NULL,
  screenshot BLOB,
  screenshot_mime TEXT,
  PRIMARY KEY (trace_id, idx)
);
CREATE TABLE IF NOT EXISTS steps (
  trace_id INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  from_screen INTEGER NOT NULL,
  to_screen INTEGER,
  action TEXT NOT NULL,
  target TEXT,
  raw TEXT NOT NULL,
  PRIMARY KEY (trace_id, idx)
);
CREATE TABLE IF NOT EXISTS problems (id INTEGER PRIMARY KEY, path TEXT NOT NULL, message TEXT NOT NULL);
";

/// Why traces.db could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("{path}: {source}")]
    Sqlite {
        /// The database file.
        path: String,
        /// The failure.
        source: rusqlite::Error,
    },
    /// The file is not a traces database of this version, or a row is damaged.
    #[error("{path}: {message}")]
    Invalid {
        /// The database file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// An open traces.db.
pub struct TraceDb {
    conn: Connection,
    path: String,
}

impl TraceDb {
    fn sql(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite { path: self.path.clone(), source }
    }

    fn invalid(&self, message: impl Into<String>) -> StoreError {
        StoreError::Invalid { path: self.path.clone(), message: message.into() }
    }

    /// Opens `path` for writing, creating it (traces read later are added; a trace read again
    /// from the same origin replaces the earlier copy).
    pub fn create(path: &Path) -> Result<TraceDb, StoreError> {
        let name = path.display().to_string();
        let conn =
            Connection::open(path).map_err(|source| StoreError::Sqlite { path: name.clone(), source })?;
        let db = TraceDb { conn, path: name };
        // Only an empty database or a traces database is written to: never another tool's.
        let tables: Vec<String> = db
            .conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
            .map_err(|_| db.invalid("not a SQLite database (refused: it is not a traces database)"))?;
        const OURS: [&str; 5] = ["meta", "problems", "screens", "steps", "traces"];
        if !tables.is_empty()
            && (!tables.iter().any(|t| t == "meta") || tables.iter().any(|t| !OURS.contains(&t.as_str())))
        {
            return Err(db.invalid(format!(
                "a SQLite database of something else (tables {}): refused, write traces to a new file",
                tables.join(", ")
            )));
        }
        db.conn.execute_batch("PRAGMA foreign_keys = ON;").map_err(|e| db.sql(e))?;
        db.conn.execute_batch(SCHEMA).map_err(|e| db.sql(e))?;
        let version: Option<String> =
            db.conn.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0)).ok();
        match version.as_deref() {
            None => {
                db.conn
                    .execute("INSERT INTO meta (key, value) VALUES ('schema', ?1)", [SCHEMA_VERSION])
                    .map_err(|e| db.sql(e))?;
            }
            Some(SCHEMA_VERSION) => {}
            Some(other) => {
                return Err(db.invalid(format!("schema version {other}, this build writes {SCHEMA_VERSION}")));
            }
        }
        Ok(db)
    }

    /// Opens an existing traces.db read-only.
    pub fn open(path: &Path) -> Result<TraceDb, StoreError> {
        let name = path.display().to_string();
        if !path.is_file() {
            return Err(StoreError::Invalid {
                path: name,
                message: "no such file (make it with `phonebench ingest`)".into(),
            });
        }
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|source| StoreError::Sqlite { path: name.clone(), source })?;
        let db = TraceDb { conn, path: name };
        let version: String =
            db.conn.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0)).map_err(
                |_| db.invalid("not a traces database (no schema version): make it with `phonebench ingest`"),
            )?;
        if version != SCHEMA_VERSION {
            return Err(db.invalid(format!("schema version {version}, this build reads {SCHEMA_VERSION}")));
        }
        Ok(db)
    }

    /// Stores one trace (replacing one of the same format, origin and name).
    pub fn insert(&mut self, trace: &Trace) -> Result<(), StoreError> {
        let path = self.path.clone();
        let err = |source| StoreError::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(err)?;
        tx.execute(
            "DELETE FROM traces WHERE format = ?1 AND origin = ?2 AND name = ?3",
            params![trace.format.name(), trace.origin, trace.name],
        )
        .map_err(err)?;
        tx.execute(
            "INSERT INTO traces (format, name, origin, package, instruction, kind) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![trace.format.name(), trace.name, trace.origin, trace.package, trace.instruction, trace.kind.name()],
        )
        .map_err(err)?;
        let id = tx.last_insert_rowid();
        for (i, s) in trace.screens.iter().enumerate() {
            tx.execute(
                "INSERT INTO screens (trace_id, idx, key, package, activity, detail, tree, screenshot, screenshot_mime)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    id,
                    i as i64,
                    s.key,
                    s.package,
                    s.activity,
                    s.detail.name(),
                    write_xml(&s.tree),
                    s.screenshot.as_ref().map(|p| p.bytes.as_slice()),
                    s.screenshot.as_ref().map(|p| p.mime.as_str()),
                ],
            )
            .map_err(err)?;
        }
        for (i, s) in trace.steps.iter().enumerate() {
            let action = serde_json::to_string(&s.action).unwrap_or_else(|_| "null".into());
            let target = s.target.as_ref().and_then(|t| serde_json::to_string(t).ok());
            tx.execute(
                "INSERT INTO steps (trace_id, idx, from_screen, to_screen, action, target, raw) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![id, i as i64, s.from as i64, s.to.map(|t| t as i64), action, target, s.raw],
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    /// Records problems met while reading.
    pub fn add_problems(&mut self, problems: &[Problem]) -> Result<(), StoreError> {
        for p in problems {
            self.conn
                .execute("INSERT INTO problems (path, message) VALUES (?1, ?2)", params![p.path, p.message])
                .map_err(|e| StoreError::Sqlite { path: self.path.clone(), source: e })?;
        }
        Ok(())
    }

    /// Every problem recorded, oldest first.
    pub fn problems(&self) -> Result<Vec<Problem>, StoreError> {
        let mut stmt =
            self.conn.prepare("SELECT path, message FROM problems ORDER BY id").map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([], |r| Ok(Problem { path: r.get(0)?, message: r.get(1)? }))
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }

    /// Every trace, in the order they were stored.
    pub fn traces(&self) -> Result<Vec<Trace>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, format, name, origin, package, instruction, kind FROM traces ORDER BY id")
            .map_err(|e| self.sql(e))?;
        type Row = (i64, String, String, String, Option<String>, Option<String>, String);
        let rows: Vec<Row> = stmt
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?))
            })
            .map_err(|e| self.sql(e))?
            .collect::<Result<_, _>>()
            .map_err(|e| self.sql(e))?;
        let mut traces = Vec::with_capacity(rows.len());
        for (id, format, name, origin, package, instruction, kind) in rows {
            let format = TraceFormat::from_name(&format)
                .ok_or_else(|| self.invalid(format!("trace {id}: unknown format {format}")))?;
            let kind = TraceKind::from_name(&kind)
                .ok_or_else(|| self.invalid(format!("trace {id}: unknown kind {kind}")))?;
            let screens = self.screens(id)?;
            let steps = self.steps(id, screens.len())?;
            traces.push(Trace { format, name, origin, package, instruction, kind, screens, steps });
        }
        Ok(traces)
    }

    fn screens(&self, trace: i64) -> Result<Vec<TraceScreen>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT idx, key, package, activity, detail, tree, screenshot, screenshot_mime FROM screens
                 WHERE trace_id = ?1 ORDER BY idx",
            )
            .map_err(|e| self.sql(e))?;
        type Row =
            (i64, String, Option<String>, Option<String>, String, String, Option<Vec<u8>>, Option<String>);
        let rows: Vec<Row> = stmt
            .query_map([trace], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?))
            })
            .map_err(|e| self.sql(e))?
            .collect::<Result<_, _>>()
            .map_err(|e| self.sql(e))?;
        let mut screens = Vec::with_capacity(rows.len());
        for (i, (idx, key, package, activity, detail, tree, shot, mime)) in rows.into_iter().enumerate() {
            if idx != i as i64 {
                return Err(self.invalid(format!("trace {trace}: screen {i} is missing")));
            }
            let detail = Detail::from_name(&detail).ok_or_else(|| {
                self.invalid(format!("trace {trace} screen {idx}: unknown detail {detail}"))
            })?;
            let tree =
                read_xml(&tree).map_err(|e| self.invalid(format!("trace {trace} screen {idx}: {e}")))?;
            let screenshot = match (shot, mime) {
                (Some(bytes), Some(mime)) => Some(Screenshot { mime, bytes }),
                _ => None,
            };
            screens.push(TraceScreen { key, package, activity, tree, detail, screenshot });
        }
        Ok(screens)
    }

    fn steps(&self, trace: i64, screens: usize) -> Result<Vec<TraceStep>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT idx, from_screen, to_screen, action, target, raw FROM steps WHERE trace_id = ?1 ORDER BY idx")
            .map_err(|e| self.sql(e))?;
        type Row = (i64, i64, Option<i64>, String, Option<String>, String);
        let rows: Vec<Row> = stmt
            .query_map([trace], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
            .map_err(|e| self.sql(e))?
            .collect::<Result<_, _>>()
            .map_err(|e| self.sql(e))?;
        let index = |i: i64, what: &str, idx: i64| -> Result<usize, StoreError> {
            usize::try_from(i).ok().filter(|&i| i < screens).ok_or_else(|| {
                self.invalid(format!("trace {trace} step {idx}: {what} screen {i} does not exist"))
            })
        };
        let mut steps = Vec::with_capacity(rows.len());
        for (idx, from, to, action, target, raw) in rows {
            let action = serde_json::from_str(&action)
                .map_err(|e| self.invalid(format!("trace {trace} step {idx}: action: {e}")))?;
            let target: Option<ElementRef> = match target {
                Some(t) => Some(
                    serde_json::from_str(&t)
                        .map_err(|e| self.invalid(format!("trace {trace} step {idx}: target: {e}")))?,
                ),
                None => None,
            };
            steps.push(TraceStep {
                from: index(from, "from", idx)?,
                to: to.map(|t| index(t, "to", idx)).transpose()?,
                action,
                target,
                raw,
            });
        }
        Ok(steps)
    }
}
