//! Criterion SQL runs in the SQLite sandbox: it cannot open files, read the host clock, draw
//! random numbers or run without end; each refusal fails the criterion with its cause.

// Test helpers outside `#[test]` functions unwrap too (clippy only exempts the functions).
#![allow(clippy::unwrap_used)]

use phonebench_env::{DatabasePair, Trajectory};
use phonebench_eval::{EvalContext, evaluate};
use phonebench_tasks::Criterion;
use serde::Deserialize;

fn database(sql: &str) -> Vec<u8> {
    let mut conn = rusqlite::Connection::open_in_memory().unwrap();
    conn.execute_batch(sql).unwrap();
    conn.serialize(rusqlite::MAIN_DB).unwrap().to_vec()
}

const SCHEMA: &str = "CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, created_at INTEGER);
    INSERT INTO notes VALUES (1, 'Milk', 1772442000000), (2, 'Bread', 1772445600000);";

fn trajectory() -> Trajectory {
    let mut t = Trajectory::default();
    t.databases.insert("notes".into(), DatabasePair { initial: database(SCHEMA), last: database(SCHEMA) });
    t
}

/// The verdict of one `state` criterion running `sql`: (passed, detail).
fn state(sql: &str) -> (bool, String) {
    #[derive(Deserialize)]
    struct File {
        criteria: Vec<Criterion>,
    }
    let text = format!("[[criteria]]\nstate = {{ app = \"notes\", sql = {} }}", toml_string(sql));
    let criteria = toml::from_str::<File>(&text).unwrap_or_else(|e| panic!("{e}\n{text}")).criteria;
    let verdict = evaluate(&criteria, &trajectory(), &EvalContext::default());
    (verdict.success, verdict.criteria[0].detail.clone())
}

fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// `sql` fails its criterion with a detail containing `cause`, the same twice.
fn refused(sql: &str, cause: &str) {
    let (passed, detail) = state(sql);
    assert!(!passed, "`{sql}` passed: {detail}");
    assert!(detail.contains(cause), "`{sql}`: expected `{cause}` in: {detail}");
    assert_eq!(state(sql), (passed, detail), "`{sql}` is refused the same way every time");
}

#[test]
fn criteria_cannot_reach_files() {
    let outside = std::env::temp_dir().join("phonebench-criterion-attach.sqlite");
    let path = outside.display();
    refused(&format!("ATTACH DATABASE '{path}' AS x"), "ATTACH is not allowed");
    refused(
        &format!("ATTACH DATABASE '{}' || 'x.sqlite' AS x", std::env::temp_dir().display()),
        "ATTACH is not allowed",
    );
    refused("DETACH DATABASE main", "DETACH is not allowed");
    refused(&format!("VACUUM INTO '{path}'"), "would write");
    assert!(!outside.exists(), "a criterion wrote a file");
    refused("SELECT load_extension('/tmp/x.so')", "load_extension() is not allowed");
    refused("PRAGMA writable_schema = 1", "PRAGMA writable_schema is not allowed");
}

#[test]
fn criteria_cannot_read_the_host_clock() {
    for sql in [
        "SELECT CURRENT_TIMESTAMP",
        "SELECT date()",
        "SELECT unixepoch()",
        "SELECT datetime('NOW')",
        "SELECT datetime('n' || 'ow')",
        "SELECT strftime('%s', 'now')",
        "SELECT 1 FROM notes WHERE datetime(created_at / 1000, 'unixepoch', 'localtime') > ''",
    ] {
        refused(sql, "host");
    }
    // Explicit times still work.
    let (passed, detail) = state(
        "SELECT 1 FROM notes WHERE datetime(created_at / 1000, 'unixepoch') = '2026-03-02 09:00:00' AND date('2024-01-01', '+1 day') = '2024-01-02'",
    );
    assert!(passed, "{detail}");
}

#[test]
fn criteria_cannot_use_random() {
    refused("SELECT 1 WHERE random() > 0 OR 1", "function of the recorded state");
    refused("SELECT randomblob(8)", "randomblob()");
    refused("SELECT title FROM notes ORDER BY random() LIMIT 1", "random()");
}

#[test]
fn criteria_are_bounded() {
    refused(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
        "SQLite operations",
    );
    refused(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) SELECT x FROM c",
        "add LIMIT",
    );
    let (passed, detail) = state(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000) SELECT x FROM c",
    );
    assert!(passed, "exactly the row limit is fine: {detail}");
}
