//! Values between SQLite and templates, and the [`DataSource`] screens read state through.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use minijinja::Value;
use minijinja::value::{Serde, ValueKind};
use phonebench_apps::sandbox::{self, Budget};
use phonebench_apps::{DataSource, RowHeights, WindowSlice};
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
    /// The last restore (`None`: never restored). Reset skips a database still as its last
    /// pristine restore left it: restoring it would write the same bytes, and would throw away
    /// its prepared statements (a deserialize reloads the schema).
    restored_at: Mutex<Option<LastRestore>>,
    /// Screen query results at one stamp (see [`AppDb::remembered`]).
    results: Mutex<QueryResults>,
}

/// What the last restore of a database wrote, and its counters right after it.
#[derive(Debug, Clone, Copy)]
struct LastRestore {
    /// Counts this database's restores: stamps after different restores never compare equal,
    /// unless both are [`DataStamp::PRISTINE`].
    epoch: u64,
    /// The restore wrote the package's pristine snapshot and succeeded.
    pristine: bool,
    /// `total_changes` and the schema-change count right after it.
    rows_at: u64,
    schema_at: u64,
}

/// Screen query results kept while the tables they read do not change: a screen rendered again
/// because something else changed (a field it reads, the minute, a row of another table) runs
/// its queries again with the same answers.
#[derive(Debug, Default)]
struct QueryResults {
    /// What each query (by SQL text) reads, at the schema it was prepared with; `None`: its
    /// answer depends on more than the data (the generator, the clock), so it is never kept.
    reads: std::collections::HashMap<String, Option<Arc<[String]>>>,
    /// The schema count `reads` was learnt at.
    reads_schema: u64,
    /// Rows by query and parameters, with the moment they were read.
    rows: std::collections::HashMap<String, (QueryMoment, Vec<Value>)>,
}

/// When a kept result was read: the database's restores and schema changes, and the row
/// changes of each table the query reads (in the order of its read set). The result still holds
/// while all are equal.
#[derive(Debug, Clone, PartialEq, Eq)]
struct QueryMoment {
    restores: u64,
    schema: u64,
    tables: Vec<u64>,
}

/// Functions whose answer is not a function of the data (or of the statement's own effects):
/// a query calling one is run every time.
const IMPURE_FUNCTIONS: [&str; 6] =
    ["random", "randomblob", "phone_now", "changes", "total_changes", "last_insert_rowid"];

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

/// The `restores` of [`DataStamp::PRISTINE`]; no count of restores reaches it.
const PRISTINE_EPOCH: u64 = u64::MAX;

impl DataStamp {
    /// The stamp of a database untouched since it was restored from its package's pristine
    /// snapshot, whichever restore that was: the content is the snapshot's, byte for byte, so
    /// renders and query results made at this stamp hold after any later reset that leaves the
    /// database untouched too.
    pub const PRISTINE: DataStamp = DataStamp { restores: PRISTINE_EPOCH, rows: 0, schema: 0 };
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

    /// The moment now for a query `sql` (what [`AppDb::remember`] keeps results at), or `None`
    /// when its answer is not kept: it calls an impure function, or does not prepare (the run
    /// reports why).
    fn query_moment(&self, sql: &str) -> Option<QueryMoment> {
        let conn = self.conn.lock().ok()?;
        let schema = self.budget.schema_changes();
        let last = *self.restored_at.lock().ok()?;
        let mut results = self.results.lock().ok()?;
        if results.reads_schema != schema {
            results.reads.clear();
            results.rows.clear();
            results.reads_schema = schema;
        }
        let tables = match results.reads.get(sql) {
            Some(tables) => tables.clone(),
            None => {
                let tables = self.budget.reads_of(&conn, sql).ok().and_then(|reads| {
                    let impure = reads.functions.iter().any(|f| IMPURE_FUNCTIONS.contains(&f.as_str()));
                    (!impure).then(|| Arc::from(reads.tables))
                });
                if results.reads.len() >= KEPT_RESULTS {
                    results.reads.clear();
                }
                results.reads.insert(sql.to_string(), tables.clone());
                tables
            }
        }?;
        let tables: Vec<u64> = tables.iter().map(|table| self.budget.table_changes(table)).collect();
        // Tables untouched since a pristine restore hold the snapshot's rows whichever restore
        // it was: the answer kept then holds now (a query of untouched tables survives resets).
        let untouched = tables.iter().all(|&n| n == 0);
        Some(match last {
            Some(l) if l.pristine && schema == l.schema_at && untouched => {
                QueryMoment { restores: PRISTINE_EPOCH, schema: 0, tables }
            }
            Some(l) => QueryMoment { restores: l.epoch, schema, tables },
            None => QueryMoment { restores: 0, schema, tables },
        })
    }

    /// The rows kept for `key` (a query and its parameters) if they were read at `moment`.
    fn remembered(&self, moment: &QueryMoment, key: &str) -> Option<Vec<Value>> {
        let results = self.results.lock().ok()?;
        let (at, rows) = results.rows.get(key)?;
        (at == moment).then(|| rows.clone())
    }

    /// Forgets every kept query result.
    pub fn forget_results(&self) {
        if let Ok(mut results) = self.results.lock() {
            *results = QueryResults::default();
        }
    }

    /// Keeps the rows a query gave at `moment` (forgetting every kept result when there are
    /// too many: crude, but the hit path stays free of bookkeeping).
    fn remember(&self, moment: QueryMoment, key: String, rows: &[Value]) {
        if let Ok(mut results) = self.results.lock() {
            if results.rows.len() >= KEPT_RESULTS {
                results.rows.clear();
            }
            results.rows.insert(key, (moment, rows.to_vec()));
        }
    }

    fn poisoned<T>(_: T) -> String {
        "database lock poisoned".to_string()
    }

    /// The database's stamp now.
    pub fn stamp(&self) -> Result<DataStamp, String> {
        let conn = self.conn.lock().map_err(Self::poisoned)?;
        let last = *self.restored_at.lock().map_err(Self::poisoned)?;
        Ok(self.stamp_of(&conn, last))
    }

    /// The stamp of the database `conn` holds, `last` restored.
    fn stamp_of(&self, conn: &Connection, last: Option<LastRestore>) -> DataStamp {
        let (rows, schema) = (conn.total_changes(), self.budget.schema_changes());
        match last {
            Some(l) if l.pristine && rows == l.rows_at && schema == l.schema_at => DataStamp::PRISTINE,
            Some(l) => DataStamp { restores: l.epoch, rows, schema },
            None => DataStamp { restores: 0, rows, schema },
        }
    }

    /// Replaces the database with `snapshot`, byte for byte: the package's pristine snapshot
    /// (what the database held when the phone was made), which no other bytes may be passed as
    /// (see [`DataStamp::PRISTINE`]; other bytes go through [`AppDb::restore_other`]).
    pub fn restore(&self, snapshot: &[u8]) -> Result<(), String> {
        self.restore_bytes(snapshot, true)
    }

    fn restore_bytes(&self, bytes: &[u8], pristine: bool) -> Result<(), String> {
        let mut conn = self.conn.lock().map_err(Self::poisoned)?;
        let mut restored_at = self.restored_at.lock().map_err(Self::poisoned)?;
        // A schema changed since the last restore goes back to another: what queries read
        // (views may differ) is learnt again.
        if restored_at.is_none_or(|l| l.schema_at != self.budget.schema_changes()) {
            self.forget_results();
        }
        let epoch = restored_at.map_or(0, |l| l.epoch) + 1;
        // Counted before it runs: a failed restore leaves the content unknown, never "as it was".
        *restored_at = Some(LastRestore { epoch, pristine: false, rows_at: 0, schema_at: 0 });
        phonebench_apps::sandbox::deserialize(
            &mut conn,
            phonebench_apps::sandbox::Profile::App,
            &self.budget,
            bytes,
            false,
        )
        .map_err(|e| format!("cannot restore the database snapshot: {e}"))?;
        // Table changes count from the restore (their epoch tells them apart).
        self.budget.forget_table_changes();
        *restored_at = Some(LastRestore {
            epoch,
            pristine,
            rows_at: conn.total_changes(),
            schema_at: self.budget.schema_changes(),
        });
        Ok(())
    }

    /// [`AppDb::restore`], unless nothing changed the database since it was last restored from
    /// this same `snapshot` (no row changed — rolled-back changes count too — and no
    /// schema-changing statement was prepared). Returns whether it restored.
    pub fn restore_if_changed(&self, snapshot: &[u8]) -> Result<bool, String> {
        let unchanged = self.stamp()? == DataStamp::PRISTINE;
        if unchanged {
            return Ok(false);
        }
        self.restore(snapshot)?;
        Ok(true)
    }

    /// [`AppDb::restore`] with bytes that are not the snapshot the next
    /// [`AppDb::restore_if_changed`] restores (a phone snapshot's): that one then restores
    /// whatever the stamp says.
    pub fn restore_other(&self, bytes: &[u8]) -> Result<(), String> {
        self.restore_bytes(bytes, false)
    }

    /// The database's bytes (SQLite's serialization of `main`).
    pub fn serialize(&self) -> Result<Vec<u8>, String> {
        let mut conn = self.conn.lock().map_err(Self::poisoned)?;
        conn.serialize(rusqlite::MAIN_DB).map(|d| d.to_vec()).map_err(|e| e.to_string())
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
    let columns = Arc::new(Columns::new(stmt.column_names()));
    let mut rows = stmt.raw_query();
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(sql_error)? {
        if out.len() == sandbox::MAX_ROWS {
            return Err(format!("`{sql}`: {}", sandbox::too_many_rows()));
        }
        let values = (0..columns.count)
            .map(|i| row.get_ref(i).map(to_template).map_err(|e| e.to_string()))
            .collect::<Result<Box<[Value]>, String>>()?;
        out.push(Value::from_object(Row { columns: Arc::clone(&columns), values }));
    }
    Ok(out)
}

/// A query's column names, shared by its rows: each distinct name, sorted, with the last
/// column of that name (a map from name to value, as a `BTreeMap` of the row would be).
#[derive(Debug)]
struct Columns {
    count: usize,
    by_name: Vec<(Arc<str>, usize)>,
}

impl Columns {
    fn new<'a>(names: impl Iterator<Item = &'a str>) -> Columns {
        let mut by_name: Vec<(Arc<str>, usize)> = Vec::new();
        let mut count = 0;
        for (i, name) in names.enumerate() {
            count += 1;
            match by_name.iter_mut().find(|(n, _)| &**n == name) {
                Some(entry) => entry.1 = i,
                None => by_name.push((Arc::from(name), i)),
            }
        }
        by_name.sort_by(|a, b| a.0.cmp(&b.0));
        Columns { count, by_name }
    }
}

/// A query's row as templates and actions see it: a map from column name to value, in the
/// names' order. One allocation for its values, the names shared with the other rows (a
/// `BTreeMap` per row allocated each name again, and was a tenth of a list screen's render).
#[derive(Debug)]
struct Row {
    columns: Arc<Columns>,
    values: Box<[Value]>,
}

impl minijinja::value::Object for Row {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.get_value_by_str(key.as_str()?)
    }

    fn get_value_by_str(self: &Arc<Self>, key: &str) -> Option<Value> {
        let by_name = &self.columns.by_name;
        let at = by_name.binary_search_by(|(name, _)| (**name).cmp(key)).ok()?;
        self.values.get(by_name[at].1).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> minijinja::value::Enumerator {
        use minijinja::value::ObjectExt;
        self.mapped_rev_key_value_enumerator(|this| {
            Box::new(
                this.columns
                    .by_name
                    .iter()
                    .map(|(name, i)| (Value::from(Arc::clone(name)), this.values[*i].clone())),
            )
        })
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.columns.by_name.len())
    }
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
    /// Where the screen is scrolled, for virtualised lists (`None`: every row is rendered).
    pub scrolled: Option<Scrolled>,
    /// The `window` calls the render made, in order, with the rows each rendered.
    pub windows: Mutex<Windows>,
    /// The last render's `window` calls and rows (a window that still holds what can show is
    /// kept, so a data change or a small scroll does not move it).
    pub kept_windows: Windows,
    /// px per dp of the display (what `text_height` rounds to).
    pub density: f32,
}

impl ScreenData {
    /// What a screen of the app reads, rendering every row of its lists.
    pub fn new(
        own: SharedDb,
        reads: BTreeMap<String, SharedDb>,
        indexes: BTreeMap<String, Arc<ContentIndex>>,
    ) -> Self {
        ScreenData {
            own,
            reads,
            indexes,
            scrolled: None,
            windows: Mutex::default(),
            kept_windows: Vec::new(),
            density: 1.0,
        }
    }
}

/// Where a screen's scroll containers are, as a virtualised list needs to know it.
#[derive(Debug, Clone)]
pub struct Scrolled {
    /// Scroll offsets in px by scroll key (a container's id).
    pub offsets: BTreeMap<String, f32>,
    /// px per dp.
    pub density: f32,
    /// The most of a list that can show at once, in dp (the app's part of the screen).
    pub viewport_dp: f64,
}

/// One call of the template function `window`: a list of rows of the given heights with `gap`
/// dp between them, `before` dp into the scroll container `list`, measured in px at the
/// display's density (`tops` are whole multiples of 1/64 px, as every length the layout sums is
/// at the densities phones have, so they add up exactly).
#[derive(Debug, Clone, PartialEq)]
pub struct WindowCall {
    /// The scroll container's id.
    pub list: String,
    /// Rows in the whole list.
    pub rows: usize,
    /// Where each row starts, px from the first row's top, and (last) where the list ends
    /// with one more gap: `rows + 1` entries. Empty when the screen's scroll is not known.
    pub tops: Arc<[f64]>,
    /// Space between rows, px.
    pub gap: f64,
    /// Where the first row starts in the container's content, px.
    pub before: f64,
}

/// Rows rendered beyond those that can show, on each side, when a list's window is placed
/// anew: a scroll of less than this (a swipe moves about half a screen) keeps the window, and
/// the render, as they are.
const WINDOW_MARGIN_ROWS: usize = 10;

/// A list's rendered rows, `first..last`.
pub type RowRange = (usize, usize);

/// A render's `window` calls, in order, each with the rows it rendered.
pub type Windows = Vec<(WindowCall, RowRange)>;

/// `dp` in px at `density`, to the nearest 1/64 px.
fn exact_px(dp: f64, density: f64) -> f64 {
    (dp * density * 64.0).round() / 64.0
}

/// The dp a `<Gap>` is given so that the layout, which reads it as an `f32` and multiplies it
/// by the density in `f32`, makes `px` of it (the rows it stands for, summed exactly): the
/// smallest `f32` whose product is at least `px`. That product is `px` itself when an `f32`
/// gives it; else it is over by a fraction of an `f32` step, far below the 1/64 px that lengths
/// come in, and the layout's rounding to whole pixels (half away from zero) places everything
/// after the gap as it would place it after the rows.
fn gap_dp(px: f64, density: f32) -> f64 {
    let target = px as f32;
    if !(target > 0.0 && density > 0.0 && target.is_finite()) {
        return 0.0;
    }
    let mut v = (px / f64::from(density)) as f32;
    for _ in 0..16 {
        if v * density >= target {
            break;
        }
        v = f32::from_bits(v.to_bits() + 1);
    }
    for _ in 0..16 {
        let lower = f32::from_bits(v.to_bits() - 1);
        if lower * density < target {
            break;
        }
        v = lower;
    }
    f64::from(v)
}

impl WindowCall {
    /// A call for rows of `heights` at `density` (px per dp).
    fn new(list: &str, heights: &RowHeights, gap: f64, before: f64, density: f64) -> Self {
        let n = heights.len();
        let gap_px = exact_px(gap, density);
        let mut tops = Vec::with_capacity(n + 1);
        let mut top = 0.0;
        tops.push(top);
        for i in 0..n {
            top += exact_px(heights.get(i), density) + gap_px;
            tops.push(top);
        }
        WindowCall {
            list: list.to_string(),
            rows: n,
            tops: tops.into(),
            gap: gap_px,
            before: exact_px(before, density),
        }
    }

    /// px of rows `from..to` and the gaps between them (0 for none).
    fn span(&self, from: usize, to: usize) -> f64 {
        if to <= from || self.tops.len() <= to {
            return 0.0;
        }
        self.tops[to] - self.tops[from] - self.gap
    }

    /// The rows that can show (`top..bottom`) with the container scrolled as `scrolled` says,
    /// the viewport taken as large as the app's part of the screen.
    fn visible(&self, scrolled: &Scrolled) -> RowRange {
        if self.tops.len() != self.rows + 1 {
            return (0, self.rows);
        }
        let viewport = scrolled.viewport_dp * f64::from(scrolled.density);
        let total = self.before + self.tops[self.rows];
        let offset = f64::from(scrolled.offsets.get(&self.list).copied().unwrap_or(0.0));
        let offset = offset.clamp(0.0, (total - viewport).max(0.0)) - self.before;
        // The first row whose end (with its gap) is below the top edge, and the rows that start
        // above the bottom edge.
        let top = self.tops[1..].partition_point(|&end| end <= offset);
        let bottom = self.tops[..self.rows].partition_point(|&start| start < offset + viewport);
        (top.min(self.rows), bottom.max(top).min(self.rows))
    }

    /// The rows to render: `kept` (the last render's rows for this list) while it still holds
    /// every row that can show, else those rows and a margin on each side. The window depends
    /// on the scrolls that led here, not only on where the list is; what shows does not (the
    /// rows outside the window are off screen either way).
    pub fn range(&self, scrolled: &Scrolled, kept: Option<RowRange>) -> RowRange {
        let (top, bottom) = self.visible(scrolled);
        match kept {
            Some((first, last)) if first <= top && bottom <= last.min(self.rows) => {
                (first, last.min(self.rows))
            }
            _ => (top.saturating_sub(WINDOW_MARGIN_ROWS), (bottom + WINDOW_MARGIN_ROWS).min(self.rows)),
        }
    }
}

impl DataSource for ScreenData {
    fn query(&self, app: Option<&str>, sql: &str, params: &[(String, Value)]) -> Result<Vec<Value>, String> {
        let db = match app {
            None => &self.own,
            Some(id) => self.reads.get(id).ok_or_else(|| {
                format!("query_app(`{id}`): this app may not read `{id}` (list it in `reads` in app.toml)")
            })?,
        };
        // Kept while the tables the query reads are unchanged; a query whose answer depends on
        // more than the data (the generator, the clock) runs every time.
        let moment = db.query_moment(sql);
        // The parameters' debug form keeps their types apart (`1` and `"1"`).
        let key = format!("{sql}\u{0}{params:?}");
        if let Some(rows) = moment.as_ref().and_then(|moment| db.remembered(moment, &key)) {
            return Ok(rows);
        }
        let conn = db.lock().map_err(|_| "database lock poisoned".to_string())?;
        let lookup = |name: &str| params.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        let rows = query_rows(&conn, sql, &lookup)?;
        drop(conn);
        if let Some(moment) = moment {
            db.remember(moment, key, &rows);
        }
        Ok(rows)
    }

    fn window(&self, list: &str, heights: &RowHeights, gap: f64, before: f64) -> WindowSlice {
        let rows = heights.len();
        let whole = WindowSlice { first: 0, last: rows, above: 0.0, below: 0.0 };
        let Some(scrolled) = self.scrolled.as_ref() else {
            // Every row is rendered; the call is kept so a later render knows the list.
            if let Ok(mut windows) = self.windows.lock() {
                let call = WindowCall { list: list.to_string(), rows, tops: Arc::new([]), gap, before };
                windows.push((call, (0, rows)));
            }
            return whole;
        };
        let density = scrolled.density;
        let call = WindowCall::new(list, heights, gap, before, f64::from(density));
        let Ok(mut windows) = self.windows.lock() else { return whole };
        // The same call of the last render (by position among the calls, and list).
        let kept = self.kept_windows.get(windows.len()).filter(|(c, _)| c.list == call.list).map(|(_, r)| *r);
        let (first, last) = call.range(scrolled, kept);
        let slice = WindowSlice {
            first,
            last,
            above: gap_dp(call.span(0, first), density),
            below: gap_dp(call.span(last, rows), density),
        };
        windows.push((call, (first, last)));
        slice
    }

    fn density(&self) -> f32 {
        self.density
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

    #[test]
    fn a_gap_makes_exactly_the_px_of_the_rows_it_stands_for() {
        // The layout reads a `<Gap>`'s dp as an f32 and multiplies it by the density in f32.
        let (mut exact, mut all) = (0, 0);
        for dpi in [120u32, 160, 240, 320, 400, 420, 440, 480, 560, 640] {
            let density = dpi as f32 / 160.0;
            for k in 1..2000u32 {
                // Sums of rows with text rounded up to whole px and dp paddings.
                let px = exact_px(f64::from(k) * 7.25, f64::from(density)) + f64::from(k % 7);
                let made = f64::from((gap_dp(px, density) as f32) * density);
                assert!(made >= px && made - px < 1.0 / 256.0, "{dpi} dpi, {px} px: {made}");
                exact += usize::from(made == px);
                all += 1;
            }
        }
        assert!(exact * 10 > all * 9, "mostly exact: {exact} of {all}");
        // Whole dp at the common densities: always exact.
        for density in [2.0f32, 2.625, 3.0, 3.5] {
            for dp in 1..5000u32 {
                let px = f64::from(dp) * f64::from(density);
                assert_eq!(f64::from((gap_dp(px, density) as f32) * density), px, "{density}, {dp} dp");
            }
        }
    }

    fn scrolled_at(offset_px: f32, density: f32, viewport_dp: f64) -> Scrolled {
        Scrolled { offsets: [("list".to_string(), offset_px)].into(), density, viewport_dp }
    }

    #[test]
    fn rows_of_their_own_heights_are_found_where_the_list_is_scrolled() {
        // Ten 100 dp headers, each followed by nine 50 dp rows; 4 dp between rows.
        let heights: Vec<f64> = (0..100).map(|i| if i % 10 == 0 { 100.0 } else { 50.0 }).collect();
        let call = WindowCall::new("list", &RowHeights::PerRow(heights.clone()), 4.0, 20.0, 2.0);
        assert_eq!(call.tops.len(), 101);
        assert_eq!(call.span(0, 2), 2.0 * (100.0 + 4.0 + 50.0));
        assert_eq!(call.span(3, 3), 0.0);
        // A 300 dp viewport at the top shows rows 0..4 (20 + 104 + 3 * 54 = 286 < 300 < 340).
        assert_eq!(call.visible(&scrolled_at(0.0, 2.0, 300.0)), (0, 5));
        // Scrolled to the 12th row's top (20 + 2 * 104 + 9 * 54 + 54 = 768 dp): rows 12 and on.
        let top12 = 20.0 + 2.0 * 104.0 + 10.0 * 54.0;
        let (top, bottom) = call.visible(&scrolled_at((top12 * 2.0) as f32, 2.0, 300.0));
        assert_eq!(top, 12);
        assert!(bottom > top && bottom <= 18, "{bottom}");
        // The window keeps a margin of rows on each side, and holds while they cover the view.
        let range = call.range(&scrolled_at((top12 * 2.0) as f32, 2.0, 300.0), None);
        assert_eq!(range, (2, bottom + WINDOW_MARGIN_ROWS));
        assert_eq!(call.range(&scrolled_at((top12 * 2.0 + 40.0) as f32, 2.0, 300.0), Some(range)), range);
        // Past the end, the last rows.
        let (top, bottom) = call.visible(&scrolled_at(1e9, 2.0, 300.0));
        assert_eq!(bottom, 100);
        assert!(top > 90, "{top}");
        // Uniform heights give the same rows as the same heights listed.
        let uniform =
            WindowCall::new("list", &RowHeights::Uniform { rows: 100, height: 50.0 }, 0.0, 0.0, 2.625);
        let listed = WindowCall::new("list", &RowHeights::PerRow(vec![50.0; 100]), 0.0, 0.0, 2.625);
        assert_eq!(uniform, listed);
    }

    /// An app database as the phone makes one: sandboxed, with a pristine snapshot.
    fn app_db() -> (SharedDb, Vec<u8>) {
        let mut conn = Connection::open_in_memory().unwrap();
        let budget =
            sandbox::install(&mut conn, sandbox::Profile::App, sandbox::Deadline::default()).unwrap();
        conn.execute_batch(
            "CREATE TABLE t (a TEXT); CREATE TABLE u (b TEXT); INSERT INTO t VALUES ('seed');",
        )
        .unwrap();
        let pristine = conn.serialize(rusqlite::MAIN_DB).unwrap().to_vec();
        let db = Arc::new(AppDb::new(conn, budget));
        db.restore(&pristine).unwrap();
        (db, pristine)
    }

    fn screen_query(db: &SharedDb, sql: &str) -> Vec<String> {
        let data = ScreenData::new(db.clone(), BTreeMap::new(), BTreeMap::new());
        let rows = data.query(None, sql, &[]).unwrap();
        rows.iter().map(|r| r.get_attr("v").map(|v| v.to_string()).unwrap_or_default()).collect()
    }

    fn write(db: &SharedDb, sql: &str) {
        db.lock().unwrap().execute_batch(sql).unwrap();
    }

    #[test]
    fn kept_query_results_follow_the_tables_they_read_across_restores() {
        let (db, pristine) = app_db();
        let sql = "SELECT group_concat(a) AS v FROM t";
        assert_eq!(screen_query(&db, sql), ["seed"]);
        assert_eq!(db.stamp().unwrap(), DataStamp::PRISTINE);
        // Another table's change keeps the answer; this table's change gives the new one.
        write(&db, "INSERT INTO u VALUES ('x')");
        assert_eq!(screen_query(&db, sql), ["seed"]);
        write(&db, "INSERT INTO t VALUES ('one')");
        assert_eq!(screen_query(&db, sql), ["seed,one"]);
        // The same number of changes after another restore is other content: never a hit.
        db.restore(&pristine).unwrap();
        write(&db, "INSERT INTO t VALUES ('two')");
        assert_eq!(screen_query(&db, sql), ["seed,two"]);
        // Untouched since a pristine restore: the pristine stamp again, whichever restore.
        db.restore(&pristine).unwrap();
        assert_eq!(db.stamp().unwrap(), DataStamp::PRISTINE);
        assert!(!db.restore_if_changed(&pristine).unwrap(), "nothing to restore");
        // Other bytes are not pristine, even untouched.
        let mut other = Connection::open_in_memory().unwrap();
        other
            .execute_batch(
                "CREATE TABLE t (a TEXT); CREATE TABLE u (b TEXT); INSERT INTO t VALUES ('other');",
            )
            .unwrap();
        db.restore_other(&other.serialize(rusqlite::MAIN_DB).unwrap()).unwrap();
        assert_ne!(db.stamp().unwrap(), DataStamp::PRISTINE);
        assert_eq!(screen_query(&db, sql), ["other"]);
        assert!(db.restore_if_changed(&pristine).unwrap());
        assert_eq!(screen_query(&db, sql), ["seed"]);
        // A query calling an impure function is never kept.
        let random = "SELECT count(*) AS v FROM t WHERE random() IS NOT NULL";
        assert_eq!(screen_query(&db, random), ["1"]);
        assert!(db.query_moment(random).is_none());
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
        let data = ScreenData::new(app.db.clone(), BTreeMap::new(), BTreeMap::new());
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
