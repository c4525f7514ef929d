//! Values between SQLite and templates, and the [`DataSource`] screens read state through.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use minijinja::Value;
use minijinja::value::{Serde, ValueKind};
use phonebench_apps::DataSource;
use phonebench_apps::sandbox::{self, Budget};
use phonebench_search::ContentIndex;
use rusqlite::Connection;
use rusqlite::types::{Value as SqlValue, ValueRef};

/// An app's database, shared between the phone and the templates rendering its screens.
pub type SharedDb = Arc<AppDb>;

/// An app's sandboxed connection (see [`phonebench_apps::sandbox`]) behind a lock. Each lock is
/// one use (an action's statement, a template query, a task's setup script) and starts a fresh
/// operation budget, so every use gets the same allowance whatever ran before it.
#[derive(Debug)]
pub struct AppDb {
    conn: Mutex<Connection>,
    budget: Budget,
    /// The database's [`DataStamp`] right after the last [`AppDb::restore`], or `None` when it
    /// was never restored. Reset skips a database whose stamp is still that: restoring it
    /// would write the same bytes, and would throw away its prepared statements (a deserialize
    /// reloads the schema).
    restored_at: Mutex<Option<DataStamp>>,
    /// Screen query results at one stamp (see [`AppDb::remembered`]).
    results: Mutex<QueryResults>,
}

/// Screen query results kept while their database does not change: a screen rendered again
/// because something else changed (a field it reads, the minute) runs its queries again with
/// the same answers.
#[derive(Debug, Default)]
struct QueryResults {
    stamp: Option<DataStamp>,
    rows: std::collections::HashMap<String, Vec<Value>>,
}

/// Query results kept per app at most; forgotten wholesale beyond.
const KEPT_RESULTS: usize = 512;

/// Where a database's content is in its history: restores, changed rows (SQLite's
/// `total_changes`, rolled-back ones included) and schema-changing statements so far. Equal
/// stamps of one database mean equal content; a screen is rendered again only when a stamp of
/// the data it reads moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataStamp {
    restores: u64,
    rows: u64,
    schema: u64,
}

/// Prepared statements kept per app connection: the busiest screens run a few dozen distinct
/// queries, and rusqlite's default of 16 made them evict each other every render.
const STATEMENT_CACHE: usize = 256;

impl AppDb {
    /// Wraps a connection that [`phonebench_apps::sandbox::install`] set up with `budget`.
    pub fn new(conn: Connection, budget: Budget) -> AppDb {
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        AppDb { conn: Mutex::new(conn), budget, restored_at: Mutex::new(None), results: Mutex::default() }
    }

    /// The rows `sql` with `params` gave at `stamp`, if kept.
    fn remembered(&self, stamp: DataStamp, key: &str) -> Option<Vec<Value>> {
        let results = self.results.lock().ok()?;
        if results.stamp != Some(stamp) {
            return None;
        }
        results.rows.get(key).cloned()
    }

    /// Forgets every kept query result.
    pub fn forget_results(&self) {
        if let Ok(mut results) = self.results.lock() {
            *results = QueryResults::default();
        }
    }

    /// Keeps the rows a query gave at `stamp` (forgetting those of other stamps).
    fn remember(&self, stamp: DataStamp, key: String, rows: &[Value]) {
        if let Ok(mut results) = self.results.lock() {
            if results.stamp != Some(stamp) || results.rows.len() >= KEPT_RESULTS {
                results.rows.clear();
                results.stamp = Some(stamp);
            }
            results.rows.insert(key, rows.to_vec());
        }
    }

    fn poisoned<T>(_: T) -> String {
        "database lock poisoned".to_string()
    }

    /// The database's stamp now.
    pub fn stamp(&self) -> Result<DataStamp, String> {
        let conn = self.conn.lock().map_err(Self::poisoned)?;
        let restores = self.restored_at.lock().map_err(Self::poisoned)?.map_or(0, |s| s.restores);
        Ok(DataStamp { restores, rows: conn.total_changes(), schema: self.budget.schema_changes() })
    }

    /// Replaces the database with `snapshot` (serialized bytes), byte for byte.
    pub fn restore(&self, snapshot: &[u8]) -> Result<(), String> {
        let mut conn = self.conn.lock().map_err(Self::poisoned)?;
        let mut restored_at = self.restored_at.lock().map_err(Self::poisoned)?;
        let restores = restored_at.map_or(0, |s| s.restores) + 1;
        // Counted before it runs: a failed restore leaves the content unknown, never "as it was".
        *restored_at = Some(DataStamp { restores, rows: u64::MAX, schema: u64::MAX });
        phonebench_apps::sandbox::deserialize(
            &mut conn,
            phonebench_apps::sandbox::Profile::App,
            &self.budget,
            snapshot,
            false,
        )
        .map_err(|e| format!("cannot restore the database snapshot: {e}"))?;
        *restored_at =
            Some(DataStamp { restores, rows: conn.total_changes(), schema: self.budget.schema_changes() });
        Ok(())
    }

    /// [`AppDb::restore`], unless nothing changed the database since it was last restored from
    /// this same `snapshot` (no row changed — rolled-back changes count too — and no
    /// schema-changing statement was prepared). Returns whether it restored.
    pub fn restore_if_changed(&self, snapshot: &[u8]) -> Result<bool, String> {
        let unchanged = {
            let restored_at = *self.restored_at.lock().map_err(Self::poisoned)?;
            restored_at.is_some() && restored_at == Some(self.stamp()?)
        };
        if unchanged {
            return Ok(false);
        }
        self.restore(snapshot)?;
        Ok(true)
    }

    /// Locks the connection for one use, with a fresh operation budget.
    pub fn lock(&self) -> Result<DbGuard<'_>, PoisonError<MutexGuard<'_, Connection>>> {
        let guard = self.conn.lock()?;
        self.budget.arm();
        Ok(DbGuard(guard))
    }
}

/// The locked connection of an [`AppDb`].
#[derive(Debug)]
pub struct DbGuard<'a>(MutexGuard<'a, Connection>);

impl Deref for DbGuard<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.0
    }
}

impl DerefMut for DbGuard<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        &mut self.0
    }
}

/// A SQLite value as a template value.
pub fn to_template(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::from(()),
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => Value::from(f),
        ValueRef::Text(t) => Value::from(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::from_bytes(b.to_vec()),
    }
}

/// A template value as a SQLite parameter. Text stays text: what an agent typed is bound as it is.
pub fn to_sql(value: &Value) -> SqlValue {
    match value.kind() {
        ValueKind::Undefined | ValueKind::None => SqlValue::Null,
        ValueKind::Bool => SqlValue::Integer(i64::from(value.is_true())),
        ValueKind::Number => match value.as_i64() {
            Some(i) => SqlValue::Integer(i),
            None => f64::try_from(value.clone()).map(SqlValue::Real).unwrap_or(SqlValue::Null),
        },
        ValueKind::String => SqlValue::Text(value.as_str().unwrap_or_default().to_string()),
        ValueKind::Bytes => SqlValue::Blob(value.as_bytes().map(<[u8]>::to_vec).unwrap_or_default()),
        _ => SqlValue::Text(value.to_string()),
    }
}

/// A template value as JSON (for app events).
pub fn to_json(value: &Value) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

/// Runs a read-only query, binding `:name` parameters from `lookup`; more than
/// [`sandbox::MAX_ROWS`] rows is an error (a screen that lists a whole large table is a package
/// bug, and would make every step slow).
pub fn query_rows(
    conn: &Connection,
    sql: &str,
    lookup: &dyn Fn(&str) -> Option<Value>,
) -> Result<Vec<Value>, String> {
    let sql_error = |e: rusqlite::Error| format!("SQL error in `{sql}`: {}", sandbox::explain(&e));
    let mut stmt = conn.prepare_cached(sql).map_err(sql_error)?;
    if !stmt.readonly() {
        return Err(format!("`{sql}` changes state: screens only read, actions change"));
    }
    bind(&mut stmt, sql, lookup)?;
    let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
    let mut rows = stmt.raw_query();
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(sql_error)? {
        if out.len() == sandbox::MAX_ROWS {
            return Err(format!("`{sql}`: {}", sandbox::too_many_rows()));
        }
        let mut map = BTreeMap::new();
        for (i, name) in names.iter().enumerate() {
            let v = row.get_ref(i).map_err(|e| e.to_string())?;
            map.insert(name.clone(), to_template(v));
        }
        out.push(Value::from(map));
    }
    Ok(out)
}

/// Binds every parameter of `stmt` by name.
pub fn bind(
    stmt: &mut rusqlite::Statement<'_>,
    sql: &str,
    lookup: &dyn Fn(&str) -> Option<Value>,
) -> Result<(), String> {
    for i in 1..=stmt.parameter_count() {
        let Some(name) = stmt.parameter_name(i).map(str::to_string) else {
            return Err(format!("`{sql}` uses a positional parameter; name it (`:name`)"));
        };
        let key = name.trim_start_matches([':', '@', '$']);
        let value = lookup(key).ok_or_else(|| format!("parameter `{name}` of `{sql}` has no value here"))?;
        stmt.raw_bind_parameter(i, to_sql(&value)).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// What a rendering screen reads: its app's database, the databases it may read, its indexes.
#[derive(Debug)]
pub struct ScreenData {
    /// The app's own database.
    pub own: SharedDb,
    /// Other apps' databases this app may read, by app id.
    pub reads: BTreeMap<String, SharedDb>,
    /// Content indexes by name.
    pub indexes: BTreeMap<String, Arc<ContentIndex>>,
}

impl DataSource for ScreenData {
    fn query(&self, app: Option<&str>, sql: &str, params: &[(String, Value)]) -> Result<Vec<Value>, String> {
        let db = match app {
            None => &self.own,
            Some(id) => self.reads.get(id).ok_or_else(|| {
                format!("query_app(`{id}`): this app may not read `{id}` (list it in `reads` in app.toml)")
            })?,
        };
        // A query whose answer depends on more than the data (the generator, the clock) runs
        // every time.
        let lower = sql.to_ascii_lowercase();
        let pure =
            !["random", "phone_now", "changes(", "last_insert_rowid"].iter().any(|f| lower.contains(f));
        let stamp = if pure { db.stamp().ok() } else { None };
        // The parameters' debug form keeps their types apart (`1` and `"1"`).
        let key = format!("{sql}\u{0}{params:?}");
        if let Some(rows) = stamp.and_then(|stamp| db.remembered(stamp, &key)) {
            return Ok(rows);
        }
        let conn = db.lock().map_err(|_| "database lock poisoned".to_string())?;
        let lookup = |name: &str| params.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        let rows = query_rows(&conn, sql, &lookup)?;
        drop(conn);
        if let Some(stamp) = stamp {
            db.remember(stamp, key, &rows);
        }
        Ok(rows)
    }

    fn search(&self, index: &str, text: &str, limit: usize) -> Result<Vec<Value>, String> {
        let idx =
            self.indexes.get(index).ok_or_else(|| format!("search: there is no content index `{index}`"))?;
        Ok(idx
            .search(text, limit)
            .into_iter()
            .map(|hit| {
                let mut doc: serde_json::Map<String, serde_json::Value> = (*hit.document).clone();
                doc.insert("score".into(), serde_json::json!(hit.score));
                Value::from(Serde(doc))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_text_stays_text_and_numbers_stay_numbers() {
        assert_eq!(to_sql(&Value::from("007")), SqlValue::Text("007".into()));
        assert_eq!(to_sql(&Value::from(7)), SqlValue::Integer(7));
        assert_eq!(to_sql(&Value::from(1.5)), SqlValue::Real(1.5));
        assert_eq!(to_sql(&Value::from(true)), SqlValue::Integer(1));
        assert_eq!(to_sql(&Value::from(())), SqlValue::Null);
    }

    #[test]
    fn queries_bind_by_name_and_refuse_writes() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (a TEXT); INSERT INTO t VALUES ('x'), ('y');").unwrap();
        let lookup = |n: &str| (n == "a").then(|| Value::from("y"));
        let rows = query_rows(&conn, "SELECT a FROM t WHERE a = :a", &lookup).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].get_attr("a").unwrap().as_str(), Some("y"));
        let e = query_rows(&conn, "DELETE FROM t", &lookup).unwrap_err();
        assert!(e.contains("changes state"), "{e}");
        let e = query_rows(&conn, "SELECT :b", &lookup).unwrap_err();
        assert!(e.contains(":b"), "{e}");
    }
}

/// The SQLite sandbox on a phone's app databases: templates, actions, task setup and parameter
/// queries are refused what reaches the host and are stopped by the limits, with the cause.
#[cfg(test)]
mod sandbox_tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::time::Instant;

    use minijinja::Value;
    use phonebench_apps::sandbox::is_deadline;
    use phonebench_apps::templates::template_error;
    use phonebench_apps::{AppPackage, Catalog, DATA_KEY, RenderData};

    use super::ScreenData;
    use crate::{Outcome, Phone, PhoneConfig};

    const RECURSE: &str =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

    /// SQL a template may carry (the load-time text check does not see these) and the cause each
    /// must be refused with.
    fn runtime_cases() -> Vec<(String, &'static str)> {
        let outside = std::env::temp_dir().join("phonebench-phone-attach.sqlite");
        let path = outside.display();
        vec![
            (format!("ATTACH DATABASE '{path}' AS x"), "ATTACH is not allowed"),
            (format!("ATTACH DATABASE '{path}' || '2' AS x"), "ATTACH is not allowed"),
            ("DETACH DATABASE main".into(), "DETACH is not allowed"),
            (format!("VACUUM INTO '{path}'"), "changes state"),
            ("SELECT load_extension('/tmp/x.so')".into(), "load_extension() is not allowed"),
            ("SELECT CURRENT_TIMESTAMP".into(), "host clock"),
            ("SELECT date()".into(), "host clock"),
            ("SELECT unixepoch()".into(), "host clock"),
            ("SELECT datetime('n' || 'ow')".into(), "host clock"),
            ("SELECT strftime('%s')".into(), "host clock"),
            ("SELECT datetime(0, 'unixepoch', 'local' || 'time')".into(), "time zone"),
            (RECURSE.into(), "SQLite operations"),
            (
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10001) SELECT x FROM c"
                    .into(),
                "add LIMIT",
            ),
        ]
    }

    /// The worked example with a probe screen per case and two probe actions.
    fn notes_phone(name: &str) -> (Phone, PathBuf) {
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/example-notes");
        let dir =
            std::env::temp_dir().join(format!("phonebench-phone-sandbox-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("screens")).expect("temp folder");
        for file in ["app.toml", "schema.sql", "seed.sql"] {
            std::fs::copy(example.join(file), dir.join(file)).expect("copy");
        }
        for screen in ["list", "edit", "detail"] {
            let file = format!("screens/{screen}.xml");
            std::fs::copy(example.join(&file), dir.join(&file)).expect("copy");
        }
        for (i, (sql, _)) in runtime_cases().iter().enumerate() {
            let source = format!(
                "<LinearLayout>\n  <TextView text=\"{{{{ query_value(\"{sql}\") }}}}\"/>\n</LinearLayout>\n"
            );
            std::fs::write(dir.join(format!("screens/probe{i}.xml")), source).expect("probe screen");
        }
        let actions = std::fs::read_to_string(example.join("actions.toml")).expect("actions");
        let actions = format!(
            "{actions}\n[probe_clock]\nsteps = [ {{ sql = \"INSERT INTO notes (body, created_at) VALUES (datetime('n' || 'ow'), 0)\" }} ]\n\n[probe_loop]\nsteps = [ {{ sql = \"INSERT INTO notes (body, created_at) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*), 0 FROM c\" }} ]\n"
        );
        std::fs::write(dir.join("actions.toml"), actions).expect("actions");
        let package = AppPackage::load(&dir).unwrap_or_else(|e| panic!("the probe package loads: {e}"));
        let catalog = Catalog::new(vec![package]).expect("catalog");
        let phone = Phone::new(catalog, PhoneConfig::default()).expect("phone");
        (phone, dir)
    }

    fn render_probe(phone: &Phone, dir: &Path, i: usize) -> String {
        let app = &phone.apps[0];
        let data = ScreenData { own: app.db.clone(), reads: BTreeMap::new(), indexes: BTreeMap::new() };
        let ctx = Value::from_pairs([(DATA_KEY, Value::from_object(RenderData(Arc::new(data))))]);
        let name = format!("probe{i}.xml");
        let template = app.package.env.get_template(&name).expect("probe template");
        match template.render(ctx) {
            Ok(out) => panic!("{name} rendered: {out}"),
            Err(e) => template_error(&dir.join("screens").join(&name), &e).to_string(),
        }
    }

    #[test]
    fn template_queries_are_refused_with_file_line_and_cause() {
        let (phone, dir) = notes_phone("templates");
        for (i, (sql, cause)) in runtime_cases().iter().enumerate() {
            let first = render_probe(&phone, &dir, i);
            assert!(first.contains(&format!("probe{i}.xml:2: ")), "`{sql}`: {first}");
            assert!(first.contains(cause), "`{sql}`: expected `{cause}` in {first}");
            assert_eq!(render_probe(&phone, &dir, i), first, "`{sql}` fails the same way every time");
        }
        assert!(!std::env::temp_dir().join("phonebench-phone-attach.sqlite").exists());
    }

    #[test]
    fn actions_are_refused_at_run_time_with_their_line() {
        let (mut phone, _dir) = notes_phone("actions");
        phone.start_app("notes", None, &BTreeMap::new()).expect("start");
        // A failing action shows the app's crash dialog with the error.
        let mut run = |action: &str| {
            phone.run_action(action, BTreeMap::new(), &mut Outcome::default()).expect("no phone error");
            match phone.overlay.take() {
                Some(crate::phone::Overlay::Crash { message, .. }) => message,
                other => panic!("`{action}` showed no crash dialog: {other:?}"),
            }
        };
        let e = run("probe_clock");
        assert!(
            e.contains("actions.toml:") && e.contains("action `probe_clock`") && e.contains("host clock"),
            "{e}"
        );
        let first = run("probe_loop");
        assert!(first.contains("action `probe_loop`") && first.contains("SQLite operations"), "{first}");
        assert_eq!(run("probe_loop"), first, "the same error every time");
        // The phone still works, and the failed actions left nothing behind.
        let rows = phone.query("notes", "SELECT count(*) AS n FROM notes").expect("query");
        assert_eq!(rows[0]["n"], serde_json::json!(2));
    }

    #[test]
    fn setup_and_parameter_queries_are_sandboxed() {
        let (mut phone, _dir) = notes_phone("setup");
        let none = BTreeMap::new();
        let e = phone.execute("notes", "ATTACH DATABASE '/tmp/x.sqlite' AS x", &none).expect_err("refused");
        assert!(e.to_string().contains("ATTACH is not allowed"), "{e}");
        let e = phone.execute(
            "notes",
            "INSERT INTO notes (body, created_at) VALUES ('x', CURRENT_TIMESTAMP)",
            &none,
        );
        assert!(e.expect_err("refused").to_string().contains("host clock"));
        let e = phone.query_with("notes", RECURSE, &none).expect_err("stopped");
        assert!(e.to_string().contains("SQLite operations"), "{e}");
        assert!(!is_deadline(&e.to_string()));
    }

    #[test]
    fn a_passed_deadline_stops_statements_and_is_recognisable() {
        let (mut phone, _dir) = notes_phone("deadline");
        phone.set_deadline(Some(Instant::now()));
        let e = phone.query_with("notes", RECURSE, &BTreeMap::new()).expect_err("stopped");
        assert!(is_deadline(&e.to_string()), "{e}");
        phone.set_deadline(None);
        let rows = phone.query("notes", "SELECT count(*) AS n FROM notes").expect("works again");
        assert_eq!(rows[0]["n"], serde_json::json!(2));
    }
}
