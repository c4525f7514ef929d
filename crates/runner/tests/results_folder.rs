//! A results folder belongs to one run at a time and holds only our database: the folder's lock
//! refuses a second writer and is released when its holder ends; SQLite files that are not ours
//! are refused and left byte for byte as they were; resuming refuses results recorded by an
//! older build that did not record what shaped its episodes.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use phonebench_phone::Catalog;
use phonebench_runner::results::{APPLICATION_ID, DB_FILE, JSONL_FILE, LOCK_FILE, ResultsError};
use phonebench_runner::{
    AgentChoice, AgentKind, ResultsDb, ResultsLock, RunConfig, RunError, RunOptions, run_suite,
};
use phonebench_tasks::Suite;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-results-folder-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn options(out: &Path) -> RunOptions {
    RunOptions {
        tasks: Some("contacts.create".into()),
        ..RunOptions::new("starter", AgentChoice::Builtin(AgentKind::Noop), out)
    }
}

fn run(options: &RunOptions) -> Result<phonebench_runner::RunOutcome, RunError> {
    let catalog = Catalog::load_dir(&repo().join("apps")).unwrap();
    let suite = Suite::load(&repo().join("suites/starter")).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(run_suite(&catalog, &suite, options))
}

fn is_locked(e: &ResultsError, dir: &Path) -> bool {
    matches!(e, ResultsError::Locked { dir: d, holder } if d == dir && *holder == Some(std::process::id()))
}

#[test]
fn a_held_lock_refuses_every_other_writer_and_is_released_on_drop() {
    let dir = tmp("lock");
    let lock = ResultsLock::acquire(&dir).unwrap();
    assert!(dir.join(LOCK_FILE).is_file());

    // A second holder (in another process this is the same OS lock) is refused at once.
    let second = ResultsLock::acquire(&dir).unwrap_err();
    assert!(is_locked(&second, &dir), "{second:?}");
    let message = second.to_string();
    assert!(message.contains(&dir.display().to_string()), "names the folder: {message}");
    assert!(message.contains("in use by another phonebench run"), "{message}");
    assert!(message.contains(&format!("process {}", std::process::id())), "names the holder: {message}");
    let opened = ResultsDb::open(&dir).unwrap_err();
    assert!(is_locked(&opened, &dir), "{opened:?}");

    // A run into the folder (even one told to start over) is refused before it deletes
    // anything.
    std::fs::write(dir.join(JSONL_FILE), "kept\n").unwrap();
    let refused = run(&RunOptions { fresh: true, ..options(&dir) }).unwrap_err();
    assert!(matches!(&refused, RunError::Results(e) if is_locked(e, &dir)), "{refused:?}");
    assert_eq!(std::fs::read_to_string(dir.join(JSONL_FILE)).unwrap(), "kept\n");

    // Released when the holder goes (the OS does the same when a process dies).
    drop(lock);
    let again = ResultsLock::acquire(&dir).unwrap();
    drop(again);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_run_holds_the_lock_until_its_outcome_is_dropped() {
    let dir = tmp("run-lock");
    let outcome = run(&options(&dir)).unwrap();
    assert_eq!(outcome.episodes.len(), 1);
    assert!(is_locked(&ResultsLock::acquire(&dir).unwrap_err(), &dir), "the caller still writes the report");
    // Readers are never locked out.
    assert_eq!(ResultsDb::open_existing(&dir).unwrap().count().unwrap(), 1);
    drop(outcome);
    let resumed = run(&RunOptions { resume: true, ..options(&dir) }).unwrap();
    assert_eq!((resumed.ran, resumed.skipped), (0, 1));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A file at `dir/results.sqlite` made by someone else: a table of theirs, and their
/// application id when given.
fn foreign(dir: &Path, application_id: Option<i32>) -> Vec<u8> {
    std::fs::create_dir_all(dir).unwrap();
    let conn = rusqlite::Connection::open(dir.join(DB_FILE)).unwrap();
    conn.execute_batch("CREATE TABLE secrets (value TEXT); INSERT INTO secrets VALUES ('keep me');").unwrap();
    if let Some(id) = application_id {
        conn.pragma_update(None, "application_id", id).unwrap();
    }
    drop(conn);
    std::fs::read(dir.join(DB_FILE)).unwrap()
}

#[test]
fn sqlite_files_that_are_not_ours_are_refused_and_left_unchanged() {
    for (name, id, why) in [("plain", None, "tables secrets"), ("other-app", Some(0x1234), "application id")]
    {
        let dir = tmp(&format!("foreign-{name}"));
        let before = foreign(&dir, id);
        let read = ResultsDb::open_existing(&dir).unwrap_err();
        assert!(matches!(read, ResultsError::NotOurs { .. }), "{read:?}");
        assert!(read.to_string().contains("not a phonebench results database"), "{read}");
        assert!(read.to_string().contains(why), "{read}");
        let write = ResultsDb::open(&dir).unwrap_err();
        assert!(matches!(write, ResultsError::NotOurs { .. }), "{write:?}");
        let refused = run(&options(&dir)).unwrap_err();
        assert!(matches!(refused, RunError::Results(ResultsError::NotOurs { .. })), "{refused:?}");
        assert_eq!(std::fs::read(dir.join(DB_FILE)).unwrap(), before, "{name}: the file is unchanged");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn our_databases_carry_the_application_id_and_older_ones_are_still_read() {
    let dir = tmp("ours");
    drop(ResultsDb::open(&dir).unwrap());
    let conn = rusqlite::Connection::open(dir.join(DB_FILE)).unwrap();
    let id: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0)).unwrap();
    assert_eq!(id, APPLICATION_ID);
    // Written before the id existed: recognised by its tables.
    conn.pragma_update(None, "application_id", 0).unwrap();
    drop(conn);
    let before = std::fs::read(dir.join(DB_FILE)).unwrap();
    assert_eq!(ResultsDb::open_existing(&dir).unwrap().count().unwrap(), 0);
    assert_eq!(std::fs::read(dir.join(DB_FILE)).unwrap(), before, "read-only: not even the id is set");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn results_of_an_older_build_are_not_resumed() {
    let dir = tmp("older");
    drop(run(&options(&dir)).unwrap());
    // What an older phonebench stored: no task files, apps or build.
    let conn = rusqlite::Connection::open(dir.join(DB_FILE)).unwrap();
    let text: String = conn.query_row("SELECT config FROM run", [], |r| r.get(0)).unwrap();
    let mut config: RunConfig = serde_json::from_str(&text).unwrap();
    assert!(config.binary.is_some() && !config.task_files.is_empty() && !config.apps.is_empty());
    config.binary = None;
    config.task_files.clear();
    config.apps.clear();
    config.suite_file = None;
    config.timeout_ms = None;
    config.turn_timeout_ms = None;
    conn.execute("UPDATE run SET config = ?1", [serde_json::to_string(&config).unwrap()]).unwrap();
    drop(conn);
    let refused = run(&RunOptions { resume: true, ..options(&dir) }).unwrap_err();
    let message = refused.to_string();
    assert!(message.contains("older phonebench") && message.contains("--fresh"), "{message}");
    // Starting over is allowed.
    let fresh = run(&RunOptions { fresh: true, ..options(&dir) }).unwrap();
    assert_eq!(fresh.ran, 1);
    drop(fresh);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn differences_name_hashed_files_by_what_they_are() {
    let mut a = RunConfig { binary: Some("b1".into()), ..RunConfig::default() };
    a.task_files.insert("contacts.create".into(), "01".into());
    a.task_files.insert("contacts.delete".into(), "02".into());
    a.apps.insert("contacts".into(), "03".into());
    let mut b = a.clone();
    b.task_files.insert("contacts.create".into(), "ff".into());
    b.task_files.remove("contacts.delete");
    b.task_files.insert("messages.send".into(), "04".into());
    b.apps.insert("contacts".into(), "ff".into());
    b.max_steps = Some(3);
    b.binary = Some("b2".into());
    let d = a.differences(&b);
    for expected in [
        "task `contacts.create`: its file changed",
        "task `contacts.delete`: not in this run",
        "task `messages.send`: new in this run",
        "app `contacts`: its package changed",
        "max_steps: - → 3",
        "binary: \"b1\" → \"b2\"",
    ] {
        assert!(d.iter().any(|l| l == expected), "missing {expected:?} in {d:?}");
    }
    assert_eq!(d.len(), 6, "{d:?}");
    assert!(a.differences(&a.clone()).is_empty());
}

#[test]
fn fresh_deletes_nothing_in_a_folder_that_is_not_ours() {
    // A user's folder with its own `report/` and a foreign `results.sqlite`.
    let dir = tmp("fresh-foreign");
    std::fs::create_dir_all(dir.join("report")).unwrap();
    std::fs::write(dir.join("report/mine.html"), "mine").unwrap();
    let conn = rusqlite::Connection::open(dir.join(DB_FILE)).unwrap();
    conn.execute_batch("CREATE TABLE secrets (x); INSERT INTO secrets VALUES ('keep');").unwrap();
    drop(conn);
    let before = std::fs::read(dir.join(DB_FILE)).unwrap();
    let refused = run(&RunOptions { fresh: true, ..options(&dir) }).unwrap_err();
    assert!(refused.to_string().contains("not a phonebench results database"), "{refused}");
    assert_eq!(std::fs::read(dir.join(DB_FILE)).unwrap(), before, "the foreign database is kept");
    assert_eq!(std::fs::read_to_string(dir.join("report/mine.html")).unwrap(), "mine");
    // Without any results database, `--fresh` has nothing of ours to delete either.
    std::fs::remove_file(dir.join(DB_FILE)).unwrap();
    drop(run(&RunOptions { fresh: true, ..options(&dir) }).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}
