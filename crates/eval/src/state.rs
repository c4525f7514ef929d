//! `state` and `changes`: SQL over the app databases recorded in the trajectory.
//!
//! Databases are opened read-only from their serialized bytes, so a check can never change what
//! another check (or a report) sees.

use std::collections::BTreeMap;

use phonebench_apps::sandbox::{self, Budget, Deadline, Profile};
use phonebench_env::Trajectory;
use phonebench_tasks::criteria::{ChangesCheck, CountRange, SqlParams, StateCheck};
use rusqlite::Connection;
use rusqlite::types::Value;

/// A recorded database opened for criteria: read-only, in the SQLite sandbox of
/// [`phonebench_apps::sandbox`] (no files, no clock, no `random()`, bounded statements).
struct Db {
    conn: Connection,
    budget: Budget,
}

/// Opens serialized database bytes read-only in memory, sandboxed.
fn open(bytes: &[u8], what: &str) -> Result<Db, String> {
    if bytes.is_empty() {
        return Err(format!("the {what} database was not recorded"));
    }
    let mut conn =
        Connection::open_in_memory().map_err(|e| format!("cannot open an in-memory database: {e}"))?;
    conn.deserialize_read_exact(rusqlite::MAIN_DB, bytes, bytes.len(), true)
        .map_err(|e| format!("cannot read the {what} database: {e}"))?;
    // The deserialized database is read-only already; this also refuses writes to temp tables.
    conn.pragma_update(None, "query_only", true)
        .map_err(|e| format!("cannot make the database read-only: {e}"))?;
    // After our own PRAGMA: the sandbox's authorizer refuses setting one.
    let budget = sandbox::install(&mut conn, Profile::Criterion, Deadline::default())
        .map_err(|e| format!("cannot set up the SQLite sandbox: {e}"))?;
    Ok(Db { conn, budget })
}

fn database<'t>(trajectory: &'t Trajectory, app: &str) -> Result<&'t phonebench_env::DatabasePair, String> {
    trajectory.databases.get(app).ok_or_else(|| {
        let known: Vec<&str> = trajectory.databases.keys().map(String::as_str).collect();
        if known.is_empty() {
            format!("no database was recorded for app `{app}` (none was recorded at all)")
        } else {
            format!("no database was recorded for app `{app}` (recorded: {})", known.join(", "))
        }
    })
}

/// Runs a read-only query with `:name` parameters bound from `params`, with a fresh operation
/// budget; more than `max_rows` rows is an error.
fn query(db: &Db, sql: &str, params: &SqlParams, max_rows: usize) -> Result<Vec<Vec<Value>>, String> {
    db.budget.arm();
    let mut stmt = db.conn.prepare(sql).map_err(|e| format!("bad SQL: {}", sandbox::explain(&e)))?;
    if !stmt.readonly() {
        return Err("the query would write: state queries must be read-only (SELECT)".into());
    }
    for i in 1..=stmt.parameter_count() {
        let Some(name) = stmt.parameter_name(i).map(str::to_string) else {
            return Err(format!(
                "parameter {i} is positional (`?`): name it (`:name`) after a task parameter"
            ));
        };
        let bare = name.trim_start_matches([':', '@', '$']);
        let Some(value) = params.get(bare) else {
            let known: Vec<&str> = params.keys().map(String::as_str).collect();
            return Err(format!(
                "parameter `{name}` is not a task parameter (known: {})",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            ));
        };
        stmt.raw_bind_parameter(i, json_to_sql(value)).map_err(|e| format!("cannot bind `{name}`: {e}"))?;
    }
    let columns = stmt.column_count();
    let mut rows = stmt.raw_query();
    let mut out = Vec::new();
    loop {
        match rows.next() {
            Ok(Some(_)) if out.len() == max_rows => return Err(sandbox::too_many_rows()),
            Ok(Some(row)) => {
                let mut values = Vec::with_capacity(columns);
                for c in 0..columns {
                    values.push(row.get::<_, Value>(c).map_err(|e| format!("cannot read column {c}: {e}"))?);
                }
                out.push(values);
            }
            Ok(None) => break,
            Err(e) => return Err(format!("query failed: {}", sandbox::explain(&e))),
        }
    }
    Ok(out)
}

fn json_to_sql(value: &serde_json::Value) -> Value {
    match value {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Integer(i64::from(*b)),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Integer(i),
            None => Value::Real(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => Value::Text(s.clone()),
        other => Value::Text(other.to_string()),
    }
}

/// A SQL value as text, for reports and text comparisons.
pub(crate) fn sql_text(value: &Value) -> String {
    match value {
        Value::Null => "NULL".into(),
        Value::Integer(i) => i.to_string(),
        Value::Real(f) => f.to_string(),
        Value::Text(s) => s.clone(),
        Value::Blob(b) => format!("<{} byte blob>", b.len()),
    }
}

fn sql_number(value: &Value) -> Option<f64> {
    match value {
        Value::Integer(i) => Some(*i as f64),
        Value::Real(f) => Some(*f),
        Value::Text(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Whether a SQL value equals an expected JSON value: numbers compare as numbers (`1` = `1.0` =
/// `'1'`), `null` only equals NULL, booleans are SQLite's 1/0, anything else compares as text.
pub(crate) fn sql_equals(actual: &Value, expected: &serde_json::Value) -> bool {
    match expected {
        serde_json::Value::Null => matches!(actual, Value::Null),
        serde_json::Value::Bool(b) => match actual {
            Value::Integer(i) => *i == i64::from(*b),
            Value::Text(s) => s == if *b { "true" } else { "false" },
            _ => false,
        },
        serde_json::Value::Number(n) => match (n.as_i64(), actual) {
            // Exact for integers: large ids must not collide through f64 rounding.
            (Some(e), Value::Integer(a)) => e == *a,
            _ => match (n.as_f64(), sql_number(actual)) {
                (Some(e), Some(a)) => numbers_equal(e, a),
                _ => false,
            },
        },
        serde_json::Value::String(s) => match actual {
            Value::Null => false,
            Value::Text(t) => t == s,
            Value::Integer(_) | Value::Real(_) => match (s.trim().parse::<f64>(), sql_number(actual)) {
                (Ok(e), Some(a)) => numbers_equal(e, a),
                _ => sql_text(actual) == *s,
            },
            Value::Blob(_) => false,
        },
        // Lists and objects: a column holding JSON text with the same structure.
        other => {
            matches!(actual, Value::Text(t) if serde_json::from_str::<serde_json::Value>(t).ok().as_ref() == Some(other))
        }
    }
}

fn numbers_equal(a: f64, b: f64) -> bool {
    // Sums of money stored as REAL are not exact; a relative tolerance far below display precision.
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Renders a count constraint for reports (`exactly 2`, `at least 1`).
pub(crate) fn count_text(range: &CountRange) -> String {
    match (range.min, range.max) {
        (Some(a), Some(b)) if a == b => format!("exactly {a}"),
        (Some(a), Some(b)) => format!("{a} to {b}"),
        (Some(a), None) => format!("at least {a}"),
        (None, Some(b)) => format!("at most {b}"),
        (None, None) => "any number".into(),
    }
}

/// Evaluates a `state` check: `Ok((passed, detail))`, or `Err` when it cannot be evaluated.
pub(crate) fn state(
    check: &StateCheck,
    trajectory: &Trajectory,
    params: &SqlParams,
) -> Result<(bool, String), String> {
    let pair = database(trajectory, &check.app)?;
    let conn = open(&pair.last, "final")?;
    let rows = query(&conn, &check.sql, params, sandbox::MAX_ROWS)?;
    let mut failures = Vec::new();
    let first = rows.first().and_then(|r| r.first());
    if let Some(expected) = &check.equals {
        match first {
            None => failures.push(format!("expected {expected} but the query returned no rows")),
            Some(v) if !sql_equals(v, expected) => {
                failures.push(format!("expected {expected}, got {}", sql_text(v)))
            }
            Some(_) => {}
        }
    }
    if let Some(expected_rows) = &check.rows {
        let same = rows.len() == expected_rows.len()
            && rows.iter().zip(expected_rows).all(|(got, want)| {
                got.len() == want.len() && got.iter().zip(want).all(|(g, w)| sql_equals(g, w))
            });
        if !same {
            failures.push(format!(
                "expected rows {}, got {}",
                serde_json::Value::from(expected_rows.clone()),
                show_rows(&rows)
            ));
        }
    }
    let count = match (&check.count, &check.equals, &check.rows) {
        (Some(c), _, _) => Some(*c),
        (None, None, None) => Some(CountRange::at_least_one()),
        _ => None,
    };
    if let Some(range) = count
        && !range.contains(rows.len() as u64)
    {
        failures.push(format!("expected {} rows, got {}", count_text(&range), rows.len()));
    }
    if failures.is_empty() {
        let shown = match first {
            Some(v) => format!("{} row(s), first value {}", rows.len(), sql_text(v)),
            None => "no rows".into(),
        };
        Ok((true, shown))
    } else {
        Ok((false, failures.join("; ")))
    }
}

fn show_rows(rows: &[Vec<Value>]) -> String {
    const MAX: usize = 5;
    let shown: Vec<String> = rows
        .iter()
        .take(MAX)
        .map(|r| format!("[{}]", r.iter().map(sql_text).collect::<Vec<_>>().join(", ")))
        .collect();
    let more = if rows.len() > MAX { format!(" … ({} rows)", rows.len()) } else { String::new() };
    format!("[{}]{more}", shown.join(", "))
}

/// A table's rows by key (`rowid`, or the whole row for tables without one).
type Keyed = BTreeMap<Vec<KeyPart>, Vec<Value>>;

/// A sortable form of a SQL value, for row keys.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum KeyPart {
    Null,
    Integer(i64),
    Real(u64),
    Text(String),
    Blob(Vec<u8>),
}

fn key_part(value: &Value) -> KeyPart {
    match value {
        Value::Null => KeyPart::Null,
        Value::Integer(i) => KeyPart::Integer(*i),
        Value::Real(f) => KeyPart::Real(f.to_bits()),
        Value::Text(s) => KeyPart::Text(s.clone()),
        Value::Blob(b) => KeyPart::Blob(b.clone()),
    }
}

fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn tables(db: &Db) -> Result<Vec<String>, String> {
    db.budget.arm();
    let mut stmt = db
        .conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
        .map_err(|e| format!("cannot list tables: {e}"))?;
    let names = stmt
        .query_map([], |row| row.get::<_, String>(0))
        .map_err(|e| format!("cannot list tables: {e}"))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot list tables: {e}"))?;
    Ok(names)
}

/// Rows keyed by `rowid`; a `WITHOUT ROWID` table is keyed by the whole row (so an update shows as
/// a removal plus an addition).
///
/// Whole tables are read (no row limit: the statement's operation limit still holds), since a
/// check on changes must see every row.
fn keyed_rows(db: &Db, table: &str) -> Result<Keyed, String> {
    let quoted = quote_identifier(table);
    let with_rowid = format!("SELECT rowid, * FROM {quoted}");
    let (sql, keyed_by_rowid) = match db.conn.prepare(&with_rowid) {
        Ok(_) => (with_rowid, true),
        Err(_) => (format!("SELECT * FROM {quoted}"), false),
    };
    let rows = query(db, &sql, &SqlParams::new(), usize::MAX).map_err(|e| format!("table `{table}`: {e}"))?;
    let mut out = Keyed::new();
    for row in rows {
        if keyed_by_rowid {
            let key = row.first().map(key_part).into_iter().collect();
            out.insert(key, row.into_iter().skip(1).collect());
        } else {
            out.insert(row.iter().map(key_part).collect(), row);
        }
    }
    Ok(out)
}

/// Added, removed and updated row counts between two versions of a table.
fn diff(before: &Keyed, after: &Keyed) -> (u64, u64, u64) {
    let added = after.keys().filter(|k| !before.contains_key(*k)).count() as u64;
    let removed = before.keys().filter(|k| !after.contains_key(*k)).count() as u64;
    let updated = after.iter().filter(|(k, v)| before.get(*k).is_some_and(|b| b != *v)).count() as u64;
    (added, removed, updated)
}

/// Evaluates a `changes` check.
pub(crate) fn changes(check: &ChangesCheck, trajectory: &Trajectory) -> Result<(bool, String), String> {
    let pair = database(trajectory, &check.app)?;
    let initial = open(&pair.initial, "initial")?;
    let last = open(&pair.last, "final")?;
    let before_tables = tables(&initial)?;
    let after_tables = tables(&last)?;
    if !after_tables.iter().any(|t| t == &check.table) {
        return Err(format!(
            "app `{}` has no table `{}` (tables: {})",
            check.app,
            check.table,
            after_tables.join(", ")
        ));
    }
    let before = if before_tables.iter().any(|t| t == &check.table) {
        keyed_rows(&initial, &check.table)?
    } else {
        Keyed::new()
    };
    let after = keyed_rows(&last, &check.table)?;
    let (added, removed, updated) = diff(&before, &after);
    let mut failures = Vec::new();
    for (what, range, n) in [
        ("added", &check.added, added),
        ("removed", &check.removed, removed),
        ("updated", &check.updated, updated),
    ] {
        if let Some(range) = range
            && !range.contains(n)
        {
            failures.push(format!("expected {} rows {what}, got {n}", count_text(range)));
        }
    }
    if check.only {
        let mut others: Vec<&String> =
            before_tables.iter().chain(&after_tables).filter(|t| **t != check.table).collect();
        others.sort();
        others.dedup();
        for table in others {
            let in_before = before_tables.contains(table);
            let in_after = after_tables.contains(table);
            let changed = match (in_before, in_after) {
                (true, true) => keyed_rows(&initial, table)? != keyed_rows(&last, table)?,
                _ => true,
            };
            if changed {
                failures.push(format!("table `{table}` changed too"));
            }
        }
    }
    let summary = format!("{}: {added} added, {removed} removed, {updated} updated", check.table);
    if failures.is_empty() {
        Ok((true, summary))
    } else {
        Ok((false, format!("{summary}; {}", failures.join("; "))))
    }
}
