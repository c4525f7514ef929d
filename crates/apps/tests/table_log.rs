//! The sandbox's table log: every kind of row change moves the changed table's count (and only
//! that table's), and `reads_of` names the tables a query reads, views and `count(*)` included.
//! Screen query results are kept by these counts, so a change they miss would show stale data.
#![allow(clippy::unwrap_used)]

use phonebench_apps::sandbox::{self, Budget, Deadline, Profile};
use rusqlite::Connection;

fn connection() -> (Connection, Budget) {
    let mut conn = Connection::open_in_memory().unwrap();
    let budget = sandbox::install(&mut conn, Profile::App, Deadline::default()).unwrap();
    conn.execute_batch(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT UNIQUE);
         CREATE TABLE u (x INTEGER);
         CREATE TABLE log (what TEXT);
         CREATE VIEW v AS SELECT a FROM t;
         CREATE TRIGGER t_log AFTER INSERT ON t BEGIN INSERT INTO log VALUES ('t'); END;",
    )
    .unwrap();
    (conn, budget)
}

fn counts(budget: &Budget) -> [u64; 3] {
    ["t", "u", "log"].map(|table| budget.table_changes(table))
}

#[test]
fn every_kind_of_row_change_is_counted_for_its_table_only() {
    let (conn, budget) = connection();
    assert_eq!(counts(&budget), [0, 0, 0]);
    conn.execute("INSERT INTO u VALUES (1), (2), (3)", []).unwrap();
    assert_eq!(counts(&budget), [0, 3, 0], "an insert counts each row, of u only");
    conn.execute("INSERT INTO t (a) VALUES ('x')", []).unwrap();
    assert_eq!(counts(&budget), [1, 3, 1], "a trigger's write counts for the table it writes");
    conn.execute("UPDATE u SET x = x + 1 WHERE x > 1", []).unwrap();
    assert_eq!(counts(&budget)[1], 5);
    // REPLACE deletes the conflicting row and inserts: t moves.
    let before = counts(&budget);
    conn.execute("INSERT OR REPLACE INTO t (id, a) VALUES (7, 'x')", []).unwrap();
    assert!(counts(&budget)[0] > before[0]);
    // A delete without a condition would be SQLite's truncate optimization, which the update
    // hook never sees: the sandbox turns it off, so the rows are counted.
    let before = counts(&budget);
    let deleted = conn.execute("DELETE FROM u", []).unwrap();
    assert_eq!(deleted, 3);
    assert_eq!(counts(&budget)[1], before[1] + 3, "DELETE FROM u (no WHERE) counted row by row");
    assert_eq!(conn.query_row("SELECT count(*) FROM u", [], |r| r.get::<_, i64>(0)).unwrap(), 0);
    // A rolled-back change still moved the count (counts only ever say "may have changed").
    let before = counts(&budget);
    conn.execute_batch("BEGIN; INSERT INTO u VALUES (9); ROLLBACK;").unwrap();
    assert_eq!(counts(&budget)[1], before[1] + 1);
}

#[test]
fn drop_still_drops_with_the_truncate_optimization_off() {
    let (conn, budget) = connection();
    let schema_before = budget.schema_changes();
    conn.execute_batch(
        "DROP TRIGGER t_log; DROP VIEW v; DROP TABLE u; CREATE INDEX ta ON t (a); DROP INDEX ta;",
    )
    .unwrap();
    let left: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(left, ["log", "sqlite_autoindex_t_1", "t"]);
    assert!(budget.schema_changes() > schema_before);
}

#[test]
fn reads_of_names_the_tables_and_functions_a_query_uses() {
    let (conn, budget) = connection();
    let reads = budget.reads_of(&conn, "SELECT count(*) FROM u").unwrap();
    assert_eq!(reads.tables, ["u"]);
    assert_eq!(reads.functions, ["count"]);
    let reads =
        budget.reads_of(&conn, "SELECT a FROM v WHERE EXISTS (SELECT 1 FROM log) ORDER BY random()").unwrap();
    // SQLite names the view too; what matters is that its tables are there.
    assert!(
        reads.tables.contains(&"log".to_string()) && reads.tables.contains(&"t".to_string()),
        "{reads:?}"
    );
    assert_eq!(reads.functions, ["random"]);
    let reads = budget.reads_of(&conn, "WITH n AS (SELECT x FROM u) SELECT upper(a) FROM t, n").unwrap();
    assert_eq!(reads.tables, ["t", "u"]);
    assert!(budget.reads_of(&conn, "SELECT nope FROM t").is_err());
    // Recording stops with the call: later statements are not added.
    conn.prepare("SELECT * FROM log").unwrap();
    let reads = budget.reads_of(&conn, "SELECT 1").unwrap();
    assert!(reads.tables.is_empty());
}
