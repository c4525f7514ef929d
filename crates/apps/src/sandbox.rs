//! The one sandbox every SQLite connection on package or task content runs in: the pristine
//! database's build (schema and seed), each phone app's database (actions, screen queries, task
//! setup and parameter queries) and the read-only databases criteria query.
//!
//! Package and task files are untrusted. [`install`] makes a connection unable to reach the host
//! and unable to run without end:
//! - an authorizer refuses `ATTACH` / `DETACH` (other database files), `load_extension` and every
//!   `PRAGMA` but a few read-only ones; `SQLITE_LIMIT_ATTACHED` = 0 (which also stops
//!   `VACUUM INTO`, a file write that no authorizer code covers) and a length limit back it up;
//! - the date and time functions refuse the host clock in every spelling (`'now'` however it is
//!   written or built, no time value, `CURRENT_TIMESTAMP` and its kin) and the host time zone
//!   (`'localtime'`, `'utc'`); with explicit values they answer as SQLite's own do;
//! - criterion connections refuse `random()` / `randomblob()` (a criterion is a function of the
//!   recorded state); app connections get the phone's seeded ones from
//!   [`crate::sql::install_functions`];
//! - a progress handler ends a statement after [`MAX_STATEMENT_OPS`] virtual-machine operations
//!   (counted, so the same statement stops at the same point every time) or when the optional
//!   wall-clock [`Deadline`] passes.
//!
//! SQLite reports an interruption as "interrupted" and a refused authorization as "not
//! authorized"; [`explain`] turns such an error into the reason the sandbox recorded.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rusqlite::config::DbConfig;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::limits::Limit as SqlLimit;
use rusqlite::types::Value;
use rusqlite::{Connection, ErrorCode, ffi};

/// Virtual-machine operations between two calls of the progress handler.
pub const OPS_PER_CHECK: i32 = 1_000;

/// Virtual-machine operations one statement may run (a statement that locks an app database
/// anew, a template query, a criterion query, one seed statement; a task's setup script counts as
/// one). Real statements take thousands; a recursive query without end reaches this in well under
/// a second.
pub const MAX_STATEMENT_OPS: u64 = 50_000_000;

/// Rows a template `query()` or a criterion may read: a list that would show more is a package
/// bug (or an attack on the harness's time), and is an error that says to add `LIMIT`.
pub const MAX_ROWS: usize = 10_000;

/// The largest string, blob or row a statement may build, in bytes (`SQLITE_LIMIT_LENGTH`):
/// `zeroblob(1e9)` or `printf('%.*c', 1e9, 'x')` fail instead of taking a gigabyte.
pub const MAX_LENGTH_BYTES: i32 = 10_000_000;

/// What a connection is for, which decides what `random()` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// An app database (or its build): `random()` is the caller's deterministic generator.
    App,
    /// A criterion's read-only database: `random()` and `randomblob()` are refused.
    Criterion,
}

/// A limit that ended a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LimitHit {
    /// The statement ran [`MAX_STATEMENT_OPS`] operations.
    #[error(
        "stopped after {MAX_STATEMENT_OPS} SQLite operations (the statement limit; a recursive query without end?)"
    )]
    Operations,
    /// The wall-clock deadline set on the phone passed.
    #[error("{DEADLINE_MESSAGE}")]
    Deadline,
}

/// The words every error caused by the wall-clock deadline contains (see [`is_deadline`]).
pub const DEADLINE_MESSAGE: &str = "stopped: the time limit for this episode passed";

/// Whether an error message (at any depth of wrapping) was caused by the wall-clock deadline
/// rather than by the package, the task or the agent.
pub fn is_deadline(message: &str) -> bool {
    message.contains(DEADLINE_MESSAGE)
}

/// An optional wall-clock deadline shared by connections (all of one phone's apps): statements
/// running when it passes end with [`LimitHit::Deadline`]. Only the runner's `--timeout` sets
/// it; without one nothing depends on the wall clock.
#[derive(Debug, Clone, Default)]
pub struct Deadline(Arc<Mutex<Option<Instant>>>);

impl Deadline {
    /// Sets (or with `None` clears) the deadline.
    pub fn set(&self, at: Option<Instant>) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = at;
        }
    }

    /// The deadline, if one is set.
    pub fn get(&self) -> Option<Instant> {
        self.0.lock().ok().and_then(|slot| *slot)
    }

    /// Whether a deadline is set and has passed.
    pub fn passed(&self) -> bool {
        self.get().is_some_and(|at| Instant::now() >= at)
    }
}

/// A connection's operation budget: [`Budget::arm`] starts a fresh one before each statement.
#[derive(Debug, Clone, Default)]
pub struct Budget {
    /// Progress-handler calls since the last arm (each is [`OPS_PER_CHECK`] operations).
    checks: Arc<AtomicU64>,
    /// Statements that change the schema prepared so far (the authorizer sees every statement
    /// as it is prepared; a schema change expires the prepared ones, so a repeated one is seen
    /// again). Row changes are counted by SQLite itself (`total_changes`); together they tell
    /// whether a database changed since some moment.
    schema_changes: Arc<AtomicU64>,
    /// Row changes per table and the tables a statement being recorded reads.
    tables: Arc<TableLog>,
}

/// What the connection's hooks learn about tables: how many row changes each has had (SQLite's
/// update hook; the truncate optimization, which skips the hook, is turned off by the
/// authorizer), and, while [`Budget::reads_of`] prepares a statement, which tables and
/// functions it uses (the authorizer sees them at prepare time, views expanded into their
/// tables, `count(*)` as a read of the table). Together they tell whether a query's answer can
/// have changed since some moment without comparing any data.
#[derive(Debug, Default)]
struct TableLog {
    /// Row changes so far by table name (the few tables of one app: a scan beats hashing).
    changes: Mutex<Vec<(Box<str>, u64)>>,
    /// Set while a statement is prepared for [`Budget::reads_of`].
    recording: std::sync::atomic::AtomicBool,
    read: Mutex<Reads>,
    /// The table or view the statement being prepared drops, until its delete check.
    dropped: Mutex<Option<String>>,
}

/// The tables (by name, sorted, without duplicates) and the SQL functions a statement uses, as
/// its preparation showed them to the authorizer.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reads {
    /// Tables read, views expanded into the tables they read.
    pub tables: Vec<String>,
    /// Functions called, in lower case.
    pub functions: Vec<String>,
}

impl TableLog {
    fn bump(&self, table: &str) {
        let mut changes = self.changes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match changes.iter_mut().find(|(name, _)| &**name == table) {
            Some((_, n)) => *n += 1,
            None => changes.push((table.into(), 1)),
        }
    }

    /// Whether the statement being prepared drops `table` (asked for a delete from it, which
    /// SQLite checks right after the drop itself). Forgets the drop once asked.
    fn dropping(&self, table: &str) -> bool {
        let mut dropped = self.dropped.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if dropped.as_deref() == Some(table) {
            *dropped = None;
            return true;
        }
        false
    }

    fn saw(&self, action: &AuthAction<'_>) {
        let drops = match action {
            AuthAction::DropTable { table_name } | AuthAction::DropTempTable { table_name } => {
                Some(*table_name)
            }
            AuthAction::DropView { view_name } | AuthAction::DropTempView { view_name } => Some(*view_name),
            _ => None,
        };
        // SQLite asks about the dropped table's delete right after the drop itself: any other
        // request in between ends the mark, so a drop that stopped early (or was refused) cannot
        // let a later `DELETE FROM` of the same name skip the row-by-row count.
        match (drops, action) {
            (Some(name), _) => {
                *self.dropped.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
                    Some(name.to_string());
            }
            (None, AuthAction::Delete { .. }) => {}
            (None, _) => *self.dropped.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None,
        }
        if !self.recording.load(Ordering::Relaxed) {
            return;
        }
        let mut read = self.read.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match action {
            AuthAction::Read { table_name, .. } => read.tables.push(table_name.to_string()),
            AuthAction::Function { function_name } => read.functions.push(function_name.to_ascii_lowercase()),
            _ => {}
        }
    }
}

impl Budget {
    /// Row changes (inserted, updated or deleted rows, rolled-back ones included) `table` has had
    /// on this connection so far. A restore or a schema change is not counted here: callers
    /// compare those apart.
    pub fn table_changes(&self, table: &str) -> u64 {
        let changes = self.tables.changes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        changes.iter().find(|(name, _)| &**name == table).map_or(0, |(_, n)| *n)
    }

    /// Starts every table's count of row changes again from zero (after the database was
    /// replaced: its owner tells counts of different contents apart).
    pub fn forget_table_changes(&self) {
        self.tables.changes.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
    }

    /// The tables and functions `sql` uses, by preparing it afresh (not from the statement cache:
    /// the authorizer only sees a statement being prepared). An error if it does not prepare.
    pub fn reads_of(&self, conn: &Connection, sql: &str) -> rusqlite::Result<Reads> {
        let log = &self.tables;
        *log.read.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Reads::default();
        log.recording.store(true, Ordering::Relaxed);
        let prepared = conn.prepare(sql).map(drop);
        log.recording.store(false, Ordering::Relaxed);
        let mut reads =
            std::mem::take(&mut *log.read.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        prepared?;
        reads.tables.sort();
        reads.tables.dedup();
        reads.functions.sort();
        reads.functions.dedup();
        Ok(reads)
    }
    /// Starts a fresh budget: call before running a statement (or one use of the connection).
    pub fn arm(&self) {
        self.checks.store(0, Ordering::Relaxed);
    }

    /// How many schema-changing statements (`CREATE`, `DROP`, `ALTER`, `REINDEX`, `ANALYZE`,
    /// temporary objects included) were prepared on the connection so far.
    pub fn schema_changes(&self) -> u64 {
        self.schema_changes.load(Ordering::Relaxed)
    }
}

/// Whether an authorizer request is part of a statement that changes the schema.
fn changes_schema(action: &AuthAction<'_>) -> bool {
    matches!(
        action,
        AuthAction::CreateIndex { .. }
            | AuthAction::CreateTable { .. }
            | AuthAction::CreateTempIndex { .. }
            | AuthAction::CreateTempTable { .. }
            | AuthAction::CreateTempTrigger { .. }
            | AuthAction::CreateTempView { .. }
            | AuthAction::CreateTrigger { .. }
            | AuthAction::CreateView { .. }
            | AuthAction::DropIndex { .. }
            | AuthAction::DropTable { .. }
            | AuthAction::DropTempIndex { .. }
            | AuthAction::DropTempTable { .. }
            | AuthAction::DropTempTrigger { .. }
            | AuthAction::DropTempView { .. }
            | AuthAction::DropTrigger { .. }
            | AuthAction::DropView { .. }
            | AuthAction::AlterTable { .. }
            | AuthAction::Reindex { .. }
            | AuthAction::Analyze { .. }
            | AuthAction::CreateVtable { .. }
            | AuthAction::DropVtable { .. }
            | AuthAction::Unknown { .. }
    )
}

thread_local! {
    /// Why the sandbox last refused or stopped a statement on this thread. Statements run on the
    /// thread that steps them, and the handler runs inside that step, so the reason recorded
    /// here is the one of the error the same thread sees next.
    static LAST_REFUSAL: RefCell<Option<String>> = const { RefCell::new(None) };
    /// A connection without overrides that the date and time functions delegate to.
    static PLAIN: RefCell<Option<Connection>> = const { RefCell::new(None) };
}

fn record(reason: String) {
    LAST_REFUSAL.with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            *slot = Some(reason);
        }
    });
}

/// An error from a sandboxed connection in words, its cause said once: SQLite's "interrupted"
/// and "not authorized" become the reason the sandbox recorded (which limit ended the statement,
/// what was refused); a statement that does not compile gives its message and offset without
/// repeating the statement.
pub fn explain(err: &rusqlite::Error) -> String {
    let code = err.sqlite_error_code();
    // A refused function is reported as a plain error ("not authorized to use function").
    let refused =
        matches!(code, Some(ErrorCode::OperationInterrupted | ErrorCode::AuthorizationForStatementDenied))
            || err.to_string().contains("not authorized");
    if refused
        && let Some(reason) = LAST_REFUSAL.with(|slot| slot.try_borrow_mut().ok().and_then(|mut s| s.take()))
    {
        return reason;
    }
    match err {
        // rusqlite's text for a statement that does not compile repeats the whole statement,
        // which the caller's message names already.
        rusqlite::Error::SqlInputError { msg, offset, .. } => format!("{msg} (at offset {offset})"),
        other => other.to_string(),
    }
}

/// PRAGMAs a statement may use: read-only schema introspection (with a table or index name) and
/// a few read-only values (without an argument, which would set them).
const PRAGMAS_WITH_NAME: [&str; 7] = [
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
];
const PRAGMAS_READ_ONLY: [&str; 5] =
    ["user_version", "data_version", "foreign_keys", "query_only", "page_count"];

fn random_refusal(name: &str) -> String {
    format!("{name}() is not allowed in a criterion: a criterion must be a function of the recorded state")
}

fn authorize(profile: Profile, budget: &Budget, context: AuthContext<'_>) -> Authorization {
    if changes_schema(&context.action) {
        budget.schema_changes.fetch_add(1, Ordering::Relaxed);
    }
    budget.tables.saw(&context.action);
    let deny = |reason: String| {
        record(reason);
        Authorization::Deny
    };
    match context.action {
        AuthAction::Attach { .. } => {
            deny("ATTACH is not allowed: app and task SQL may not open other database files".into())
        }
        AuthAction::Detach { .. } => deny("DETACH is not allowed (nothing can be attached)".into()),
        AuthAction::Unknown { code, .. } if code == ffi::SQLITE_ATTACH || code == ffi::SQLITE_DETACH => {
            deny("ATTACH is not allowed: app and task SQL may not open other database files".into())
        }
        AuthAction::Function { function_name } if function_name.eq_ignore_ascii_case("load_extension") => {
            deny("load_extension() is not allowed: app and task SQL may not load code".into())
        }
        // Refused where it is written, even where SQLite would never call it (`random() OR 1`).
        AuthAction::Function { function_name }
            if profile == Profile::Criterion
                && (function_name.eq_ignore_ascii_case("random")
                    || function_name.eq_ignore_ascii_case("randomblob")) =>
        {
            deny(random_refusal(&function_name.to_ascii_lowercase()))
        }
        AuthAction::Pragma { pragma_name, pragma_value } => {
            let name = pragma_name.to_ascii_lowercase();
            let allowed = PRAGMAS_WITH_NAME.contains(&name.as_str())
                || (pragma_value.is_none() && PRAGMAS_READ_ONLY.contains(&name.as_str()));
            if allowed {
                Authorization::Allow
            } else {
                deny(format!(
                    "PRAGMA {pragma_name} is not allowed (allowed: {}, and reading {})",
                    PRAGMAS_WITH_NAME.join(", "),
                    PRAGMAS_READ_ONLY.join(", ")
                ))
            }
        }
        // `DELETE FROM t` without a condition would empty the table in one go (the truncate
        // optimization), which SQLite's update hook does not see; `Ignore` on this code is
        // SQLite's documented way to delete row by row instead, so every change is counted. Not
        // where `DROP` asks (a delete from the schema table, then from the dropped table or
        // view): `Ignore` there would skip the drop. Schema changes are counted apart.
        AuthAction::Delete { table_name }
            if !table_name.starts_with("sqlite_") && !budget.tables.dropping(table_name) =>
        {
            Authorization::Ignore
        }
        _ => Authorization::Allow,
    }
}

/// Date and time functions: name and the index of their first time value (what comes before it
/// is `strftime`'s format; after it, modifiers).
const CLOCK_FUNCTIONS: [(&str, usize); 7] = [
    ("date", 0),
    ("time", 0),
    ("datetime", 0),
    ("julianday", 0),
    ("unixepoch", 0),
    ("strftime", 1),
    ("timediff", 0),
];

const HOST_CLOCK: &str = "reads the host clock; use phone_now() (the virtual clock, ms since the epoch)";

/// Why a call of date function `name` would read the host, if it would.
fn host_reading(name: &str, first_time: usize, ctx: &Context<'_>) -> Option<String> {
    if ctx.len() <= first_time {
        return Some(format!("{name}() without a time value {HOST_CLOCK}"));
    }
    for i in first_time..ctx.len() {
        let bytes = match ctx.get::<Value>(i) {
            Ok(Value::Text(text)) => text.into_bytes(),
            // SQLite reads a blob argument as text: `datetime(x'6e6f77')` is `datetime('now')`.
            Ok(Value::Blob(blob)) => blob,
            _ => continue,
        };
        // SQLite reads the argument as a C string, so it stops at the first NUL.
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        let word = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
        // No date or other modifier contains these words, so any spacing or padding around them
        // is refused too.
        if word.contains("now") {
            return Some(format!("{name}('now') {HOST_CLOCK}"));
        }
        if let Some(zone) = ["localtime", "utc"].into_iter().find(|z| word.contains(z)) {
            return Some(format!("{name}(…, '{zone}') reads the host time zone; the phone's times are UTC"));
        }
    }
    None
}

/// Results of [`builtin`] calls kept per thread: with the host clock and zone refused the date
/// functions are pure, and screens call them with the same arguments render after render (a
/// calendar month runs thousands). Forgotten wholesale when full.
const BUILTIN_MEMO: usize = 16_384;

thread_local! {
    static BUILTIN_RESULTS: RefCell<std::collections::HashMap<String, Value>> =
        RefCell::new(std::collections::HashMap::new());
}

/// Runs SQLite's own `name` on `args` through a connection without overrides.
fn builtin(name: &str, args: Vec<Value>) -> rusqlite::Result<Value> {
    // The arguments' debug form keeps their types apart (`Integer(5)`, `Text("5")`).
    let key = format!("{name}{args:?}");
    if let Some(hit) = BUILTIN_RESULTS.with(|memo| memo.try_borrow().ok().and_then(|m| m.get(&key).cloned()))
    {
        return Ok(hit);
    }
    let result = run_builtin(name, args)?;
    BUILTIN_RESULTS.with(|memo| {
        if let Ok(mut memo) = memo.try_borrow_mut() {
            if memo.len() >= BUILTIN_MEMO {
                memo.clear();
            }
            memo.insert(key, result.clone());
        }
    });
    Ok(result)
}

fn run_builtin(name: &str, args: Vec<Value>) -> rusqlite::Result<Value> {
    PLAIN.with(|cell| {
        let mut slot = cell.try_borrow_mut().map_err(|_| user_error(format!("{name}(): re-entered")))?;
        if slot.is_none() {
            *slot = Some(Connection::open_in_memory()?);
        }
        let Some(conn) = slot.as_ref() else { return Err(user_error(format!("{name}(): no connection"))) };
        let placeholders = (1..=args.len()).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ");
        let mut stmt = conn.prepare_cached(&format!("SELECT {name}({placeholders})"))?;
        stmt.query_row(rusqlite::params_from_iter(args), |row| row.get::<_, Value>(0))
    })
}

fn user_error(message: String) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(message.into())
}

/// Replaces the date and time functions (an application function takes precedence over a
/// built-in of the same name) with ones that refuse the host clock and time zone.
fn install_clock_guards(conn: &Connection) -> rusqlite::Result<()> {
    // Deterministic: with the host refused, equal arguments give equal results, and SQLite allows
    // the functions where it allows its own (CHECK constraints, generated columns, indexes).
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    for (name, first_time) in CLOCK_FUNCTIONS {
        conn.create_scalar_function(name, -1, flags, move |ctx| {
            if let Some(reason) = host_reading(name, first_time, ctx) {
                return Err(user_error(reason));
            }
            let args = (0..ctx.len()).map(|i| ctx.get::<Value>(i)).collect::<rusqlite::Result<Vec<_>>>()?;
            builtin(name, args)
        })?;
    }
    // The parser turns these keywords into calls of zero-argument functions of the same name.
    for keyword in ["current_timestamp", "current_date", "current_time"] {
        conn.create_scalar_function(keyword, 0, flags, move |_| -> rusqlite::Result<Value> {
            Err(user_error(format!("{} {HOST_CLOCK}", keyword.to_ascii_uppercase())))
        })?;
    }
    Ok(())
}

/// Puts `conn` in the sandbox (see the module documentation) and returns its operation budget,
/// which the caller arms before each statement. App connections install the phone's
/// deterministic `random()` with [`crate::sql::install_functions`] as well.
pub fn install(conn: &mut Connection, profile: Profile, deadline: Deadline) -> rusqlite::Result<Budget> {
    conn.set_limit(SqlLimit::SQLITE_LIMIT_ATTACHED, 0)?;
    conn.set_limit(SqlLimit::SQLITE_LIMIT_LENGTH, MAX_LENGTH_BYTES)?;
    // The query planner stability guarantee: a plan never depends on the values bound. Without
    // it SQLite marks a statement whose plan a bound value may change (a `LIKE :q`, a bound
    // value compared with a literal or a partial index's condition) to be re-prepared on every
    // new binding, so a cached statement was parsed and planned again on every render: 40% of
    // Todo's write (1,288 → 751 µs at p50, `examples/profile_step`; docs/performance.md). The
    // rows a query returns do not change, only plans, which tables this small do not need.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    install_clock_guards(conn)?;
    if profile == Profile::Criterion {
        let flags = FunctionFlags::SQLITE_UTF8;
        for (name, arity) in [("random", 0), ("randomblob", 1)] {
            conn.create_scalar_function(name, arity, flags, move |_| -> rusqlite::Result<Value> {
                Err(user_error(random_refusal(name)))
            })?;
        }
    }
    let budget = Budget::default();
    let hooked = budget.clone();
    conn.authorizer(Some(move |context: AuthContext<'_>| authorize(profile, &hooked, context)))?;
    let log = budget.tables.clone();
    conn.update_hook(Some(move |_: rusqlite::hooks::Action, _: &str, table: &str, _: i64| log.bump(table)))?;
    let checks = budget.checks.clone();
    let max_checks = MAX_STATEMENT_OPS / OPS_PER_CHECK as u64;
    conn.progress_handler(
        OPS_PER_CHECK,
        Some(move || {
            let n = checks.fetch_add(1, Ordering::Relaxed) + 1;
            let hit = if n > max_checks {
                Some(LimitHit::Operations)
            } else if deadline.passed() {
                Some(LimitHit::Deadline)
            } else {
                None
            };
            match hit {
                Some(hit) => {
                    record(hit.to_string());
                    true
                }
                None => false,
            }
        }),
    )?;
    Ok(budget)
}

/// Replaces a sandboxed connection's main database with serialized `bytes` (a snapshot).
///
/// SQLite implements this with an internal `ATTACH`, which the sandbox's authorizer would refuse:
/// the authorizer is lifted for this one call, in which no package or task SQL runs.
pub fn deserialize(
    conn: &mut Connection,
    profile: Profile,
    budget: &Budget,
    bytes: &[u8],
    read_only: bool,
) -> rusqlite::Result<()> {
    conn.authorizer(None::<fn(AuthContext<'_>) -> Authorization>)?;
    let result = conn.deserialize_read_exact(rusqlite::MAIN_DB, bytes, bytes.len(), read_only);
    let hooked = budget.clone();
    conn.authorizer(Some(move |context: AuthContext<'_>| authorize(profile, &hooked, context)))?;
    result
}

/// The error for a query that returned more than [`MAX_ROWS`] rows.
pub fn too_many_rows() -> String {
    format!("the query returns more than {MAX_ROWS} rows (the limit): add LIMIT")
}

/// Why statically visible SQL text would read the host clock or time zone, if it would: `'now'`,
/// `'localtime'` or `'utc'` as a string (any case, spaces inside the quotes), `CURRENT_TIMESTAMP`
/// / `CURRENT_DATE` / `CURRENT_TIME`, or a date function called without arguments. This lets the
/// loader name the file and line early; the functions themselves refuse what text cannot show
/// (`'n' || 'ow'`, a value from a table).
pub fn host_clock_in_text(sql: &str) -> Option<String> {
    let bytes = sql.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\'' {
            let start = i + 1;
            let mut end = start;
            while end < bytes.len() && !(bytes[end] == b'\'' && bytes.get(end + 1) != Some(&b'\'')) {
                end += if bytes[end] == b'\'' { 2 } else { 1 };
            }
            let literal = sql.get(start..end.min(bytes.len())).unwrap_or("").trim().to_ascii_lowercase();
            match literal.as_str() {
                "now" => return Some(format!("SQL uses 'now', which {HOST_CLOCK}")),
                "localtime" | "utc" => {
                    return Some(format!(
                        "SQL uses the '{literal}' modifier, which reads the host time zone; the phone's times are UTC"
                    ));
                }
                _ => {}
            }
            i = end + 1;
            continue;
        }
        if b.is_ascii_alphabetic() || b == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = sql[start..i].to_ascii_lowercase();
            if matches!(word.as_str(), "current_timestamp" | "current_date" | "current_time") {
                return Some(format!("SQL uses {}, which {HOST_CLOCK}", word.to_ascii_uppercase()));
            }
            if CLOCK_FUNCTIONS.iter().any(|(name, first)| *name == word && *first == 0) {
                let rest = sql[i..].trim_start();
                if let Some(after) = rest.strip_prefix('(')
                    && after.trim_start().starts_with(')')
                {
                    return Some(format!("SQL calls {word}() without a time value, which {HOST_CLOCK}"));
                }
            }
            continue;
        }
        i += 1;
    }
    None
}

/// The byte offset and reason of the first quoted `'now'`, `'localtime'` or `'utc'` (any case,
/// spaces inside the quotes) in a template source, whose SQL sits inside template strings. Every
/// quote is tried as an opening one, so an apostrophe in the text before cannot hide it.
pub fn host_clock_in_template(source: &str) -> Option<(usize, String)> {
    let quotes: Vec<usize> = source.match_indices('\'').map(|(i, _)| i).collect();
    for pair in quotes.windows(2) {
        let inner = source.get(pair[0] + 1..pair[1]).unwrap_or("");
        if inner.len() > 16 {
            continue;
        }
        match inner.trim().to_ascii_lowercase().as_str() {
            "now" => {
                return Some((pair[0], format!("SQL uses 'now', which {HOST_CLOCK} or the `now` variable")));
            }
            word @ ("localtime" | "utc") => {
                return Some((
                    pair[0],
                    format!(
                        "SQL uses the '{word}' modifier, which reads the host time zone; the phone's times are UTC"
                    ),
                ));
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandboxed(profile: Profile) -> (Connection, Budget) {
        let mut conn = Connection::open_in_memory().expect("memory database");
        let budget = install(&mut conn, profile, Deadline::default()).expect("sandbox installs");
        (conn, budget)
    }

    fn refusal(conn: &Connection, sql: &str) -> String {
        match conn.query_row(sql, [], |row| row.get::<_, Value>(0)) {
            Ok(v) => panic!("`{sql}` was allowed: {v:?}"),
            Err(e) => explain(&e),
        }
    }

    #[test]
    fn files_extensions_and_pragmas_are_refused() {
        let (conn, _) = sandboxed(Profile::App);
        let path = std::env::temp_dir().join("phonebench-sandbox-attach.sqlite");
        let e = conn.execute_batch(&format!("ATTACH DATABASE '{}' AS x", path.display())).unwrap_err();
        assert!(explain(&e).contains("ATTACH is not allowed"), "{e}");
        let e = conn.execute_batch("ATTACH DATABASE '/tmp/' || 'x.sqlite' AS x").unwrap_err();
        assert!(explain(&e).contains("ATTACH is not allowed"), "{e}");
        let e = conn.execute_batch("DETACH DATABASE main").unwrap_err();
        assert!(explain(&e).contains("DETACH is not allowed"), "{e}");
        // VACUUM INTO attaches its target internally: the authorizer refuses that too.
        let e = conn.execute_batch(&format!("VACUUM INTO '{}'", path.display())).unwrap_err();
        assert!(explain(&e).contains("ATTACH is not allowed"), "{e}");
        assert!(!path.exists(), "VACUUM INTO wrote a file");
        assert!(refusal(&conn, "SELECT load_extension('x')").contains("load_extension"));
        let e = conn.execute_batch("PRAGMA writable_schema = ON").unwrap_err();
        assert!(explain(&e).contains("PRAGMA writable_schema is not allowed"), "{e}");
        let e = conn.execute_batch("PRAGMA user_version = 3").unwrap_err();
        assert!(explain(&e).contains("not allowed"), "{e}");
        conn.execute_batch("CREATE TABLE t (a)").expect("ordinary SQL runs");
        let columns: i64 = conn
            .query_row("SELECT count(*) FROM pragma_table_info('t')", [], |r| r.get(0))
            .expect("introspection");
        assert_eq!(columns, 1);
    }

    #[test]
    fn the_host_clock_is_refused_in_every_spelling() {
        let (conn, _) = sandboxed(Profile::App);
        for sql in [
            "SELECT CURRENT_TIMESTAMP",
            "SELECT current_date",
            "SELECT CURRENT_TIME",
            "SELECT date()",
            "SELECT unixepoch()",
            "SELECT julianday()",
            "SELECT datetime('NOW')",
            "SELECT datetime(' now ')",
            "SELECT datetime('n' || 'ow')",
            "SELECT strftime('%s', 'now')",
            "SELECT strftime('%s')",
            "SELECT time('now', '+1 hour')",
            "SELECT timediff('now', '2024-01-01')",
            "SELECT datetime(0, 'unixepoch', 'localtime')",
            "SELECT datetime('2024-01-01', 'UTC')",
        ] {
            let e = refusal(&conn, sql);
            assert!(e.contains("host"), "`{sql}`: {e}");
        }
        let e = refusal(&conn, "SELECT datetime('n' || 'ow')");
        assert!(e.contains("phone_now()"), "{e}");
    }

    #[test]
    fn date_functions_with_explicit_values_still_work() {
        let (conn, _) = sandboxed(Profile::App);
        let text = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, String>(0)).expect(sql);
        assert_eq!(text("SELECT datetime(1772442000000 / 1000, 'unixepoch')"), "2026-03-02 09:00:00");
        assert_eq!(text("SELECT date('2024-01-01', '+1 day')"), "2024-01-02");
        assert_eq!(text("SELECT strftime('%Y-%m', '2024-05-06')"), "2024-05");
        assert_eq!(text("SELECT time('12:00', '+90 minutes')"), "13:30:00");
        let epoch: i64 = conn.query_row("SELECT unixepoch('1970-01-02')", [], |r| r.get(0)).expect("epoch");
        assert_eq!(epoch, 86_400);
        // Usable where SQLite demands deterministic functions.
        conn.execute_batch(
            "CREATE TABLE e (ms INTEGER, day TEXT GENERATED ALWAYS AS (date(ms / 1000, 'unixepoch')));
             INSERT INTO e (ms) VALUES (1772442000000);",
        )
        .expect("generated column with date()");
        assert_eq!(text("SELECT day FROM e"), "2026-03-02");
    }

    #[test]
    fn criteria_may_not_use_random() {
        let (conn, _) = sandboxed(Profile::Criterion);
        assert!(refusal(&conn, "SELECT random()").contains("function of the recorded state"));
        assert!(refusal(&conn, "SELECT randomblob(4)").contains("randomblob()"));
    }

    #[test]
    fn a_recursive_query_without_end_stops_at_the_same_limit_every_time() {
        let (conn, budget) = sandboxed(Profile::App);
        let sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
        let mut errors = Vec::new();
        for _ in 0..2 {
            budget.arm();
            errors.push(refusal(&conn, sql));
        }
        assert!(errors[0].contains("SQLite operations"), "{}", errors[0]);
        assert_eq!(errors[0], errors[1]);
        // A fresh budget per statement: the connection still works.
        budget.arm();
        let n: i64 = conn.query_row("SELECT 41 + 1", [], |r| r.get(0)).expect("works after a stop");
        assert_eq!(n, 42);
    }

    #[test]
    fn a_passed_deadline_stops_a_statement_and_says_so() {
        let mut conn = Connection::open_in_memory().expect("memory database");
        let deadline = Deadline::default();
        install(&mut conn, Profile::App, deadline.clone()).expect("sandbox installs");
        deadline.set(Some(Instant::now()));
        assert!(deadline.passed());
        let e = refusal(
            &conn,
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
        );
        assert!(is_deadline(&e), "{e}");
        assert!(!is_deadline(&LimitHit::Operations.to_string()));
        deadline.set(None);
        assert!(!deadline.passed());
    }

    #[test]
    fn huge_values_hit_the_length_limit() {
        let (conn, _) = sandboxed(Profile::App);
        let e = refusal(&conn, "SELECT zeroblob(1000000000)");
        assert!(e.contains("too big"), "{e}");
    }

    #[test]
    fn static_text_check_finds_the_visible_spellings() {
        for sql in [
            "INSERT INTO a VALUES (datetime('now'))",
            "SELECT datetime(' NOW ')",
            "SELECT CURRENT_TIMESTAMP",
            "SELECT date ( )",
            "SELECT datetime(x, 'localtime')",
        ] {
            assert!(host_clock_in_text(sql).is_some(), "{sql}");
        }
        for sql in [
            "SELECT datetime(x / 1000, 'unixepoch')",
            "SELECT 'nowhere', 'it''s now'",
            "SELECT current_timestamp_ms FROM t",
            "SELECT date('2024-01-01', '+1 day')",
        ] {
            assert_eq!(host_clock_in_text(sql), None, "{sql}");
        }
    }
}
