//! The binary under misuse: two runs into one results folder, resuming with anything changed
//! that shapes the episodes, `report` pointed at someone else's SQLite file, output piped into
//! a reader that stops early, errors that would repeat their cause, and a person at the terminal
//! whose stdin closes.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{episodes, stored_episodes};

/// Every run here shares one validation cache (in a temp folder, not the user's).
fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_phonebench"));
    cmd.env(
        "PHONEBENCH_CACHE",
        std::env::temp_dir().join(format!("phonebench-hardening-test-cache-{}", std::process::id())),
    );
    cmd
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-hardening-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn show(out: &Output) -> String {
    format!("status {}\nstdout:\n{}\nstderr:\n{}", out.status, text(&out.stdout), text(&out.stderr))
}

/// A one-task copy of the full suite and a copy of the apps, for a test to edit.
struct Copies {
    suite: PathBuf,
    apps: PathBuf,
}

fn copies(dir: &Path) -> Copies {
    let suite = dir.join("suite");
    std::fs::create_dir_all(suite.join("tasks")).unwrap();
    let full = repo().join("suites/full");
    std::fs::copy(full.join("suite.toml"), suite.join("suite.toml")).unwrap();
    std::fs::copy(full.join("tasks/contacts_create.toml"), suite.join("tasks/contacts_create.toml")).unwrap();
    let apps = dir.join("apps");
    copy_dir(&repo().join("apps"), &apps);
    Copies { suite, apps }
}

/// `run` of the copied suite into `out`, plus `extra`; with the noop agent unless `extra` names
/// one.
fn run_copy(c: &Copies, out: &Path, extra: &[&str]) -> Output {
    let agent: &[&str] = if extra.contains(&"--agent") { &[] } else { &["--agent", "noop"] };
    bin()
        .args(["run", "--quiet", "--no-report"])
        .args(agent)
        .arg("--suite")
        .arg(&c.suite)
        .arg("--apps")
        .arg(&c.apps)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

/// Appends `line` to `file`; returns the original bytes to restore.
fn append(file: &Path, line: &str) -> Vec<u8> {
    let before = std::fs::read(file).unwrap();
    let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    writeln!(f, "\n{line}").unwrap();
    before
}

#[test]
fn resume_refuses_any_change_that_shapes_the_episodes_and_names_it() {
    let dir = tmp("resume");
    let c = copies(&dir);
    let out = dir.join("out");
    let first = run_copy(&c, &out, &[]);
    assert!(first.status.success(), "{}", show(&first));
    let same = run_copy(&c, &out, &["--resume"]);
    assert!(same.status.success(), "the same run resumes: {}", show(&same));
    assert!(text(&same.stdout).contains("1 already done"), "{}", show(&same));

    // Every flag that shapes an episode, and the field its refusal names.
    let changes: [(&[&str], &str); 12] = [
        (&["--max-steps", "3"], "max_steps: - → 3"),
        (&["--size", "768x1280"], "display: - → \"768x1280"),
        (&["--stop-on-repetition"], "stop_on_repetition: - → true"),
        (&["--end-on-format-error"], "end_on_format_error: - → true"),
        (&["--timeout", "5"], "timeout_ms: 600000 → 5000"),
        (&["--model-timeout", "5"], "turn_timeout_ms:"),
        (&["--format", "uiautomator"], "format: \"sphinx-tree\" → \"uiautomator\""),
        (&["--seed", "7"], "seed: 0 → 7"),
        (&["--instances", "2"], "instances: 1 → 2"),
        (&["--tasks", "contacts.*"], "tasks: - → \"contacts.*\""),
        (&["--save-screenshots"], "save_screenshots: - → true"),
        (&["--agent", "random"], "agent: \"noop\" → \"random\""),
    ];
    for (flags, named) in changes {
        let refused = run_copy(&c, &out, &[flags, &["--resume"][..]].concat());
        assert!(!refused.status.success(), "{flags:?} must be refused: {}", show(&refused));
        let err = text(&refused.stderr);
        assert!(err.contains("holds results of a different run"), "{flags:?}: {err}");
        assert!(err.contains(named), "{flags:?} must name `{named}`: {err}");
    }

    // Edited files: the task, the suite manifest, an app package.
    let files: [(PathBuf, &str, &str); 3] = [
        (c.suite.join("tasks/contacts_create.toml"), "# edited", "task `contacts.create`: its file changed"),
        (c.suite.join("suite.toml"), "# edited", "suite.toml: its content changed"),
        (c.apps.join("contacts/seed.sql"), "-- edited", "app `contacts`: its package changed"),
    ];
    for (file, line, named) in files {
        let before = append(&file, line);
        let refused = run_copy(&c, &out, &["--resume"]);
        assert!(!refused.status.success(), "{} edited must be refused: {}", file.display(), show(&refused));
        let err = text(&refused.stderr);
        assert!(err.contains(named), "must name `{named}`: {err}");
        std::fs::write(&file, before).unwrap();
    }
    assert_eq!(stored_episodes(&out), 1, "nothing was mixed in");
    let restored = run_copy(&c, &out, &["--resume"]);
    assert!(restored.status.success(), "the files as they were resume again: {}", show(&restored));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Holds `dir`'s lock as another process would (a raw OS lock on the lock file).
fn hold_lock(dir: &Path) -> std::fs::File {
    std::fs::create_dir_all(dir).unwrap();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join("results.lock"))
        .unwrap();
    file.try_lock().unwrap();
    file
}

#[test]
fn a_results_folder_in_use_is_refused_to_every_writer() {
    let dir = tmp("locked");
    let c = copies(&dir);
    let out = dir.join("out");
    let first = run_copy(&c, &out, &[]);
    assert!(first.status.success(), "{}", show(&first));
    let db_before = std::fs::read(out.join("results.sqlite")).unwrap();

    let lock = hold_lock(&out);
    for extra in [&["--resume"][..], &["--fresh"][..]] {
        let refused = run_copy(&c, &out, extra);
        assert!(!refused.status.success(), "{extra:?}: {}", show(&refused));
        let err = text(&refused.stderr);
        assert!(
            err.contains(&out.display().to_string()) && err.contains("in use by another phonebench run"),
            "{extra:?}: {err}"
        );
    }
    assert_eq!(std::fs::read(out.join("results.sqlite")).unwrap(), db_before, "--fresh deleted nothing");

    // The report into the folder waits for the run; elsewhere it only reads, so it may go on.
    let report = bin().arg("report").arg(&out).output().unwrap();
    assert!(!report.status.success(), "{}", show(&report));
    assert!(text(&report.stderr).contains("in use by another phonebench run"), "{}", show(&report));
    assert!(!out.join("report").exists());
    let elsewhere = bin().arg("report").arg(&out).arg("--out").arg(dir.join("report")).output().unwrap();
    assert!(elsewhere.status.success(), "{}", show(&elsewhere));

    // Released (as when the holder ends or crashes): the folder is usable again.
    drop(lock);
    let resumed = run_copy(&c, &out, &["--resume"]);
    assert!(resumed.status.success(), "{}", show(&resumed));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn report_refuses_a_sqlite_file_that_is_not_ours_and_leaves_it_unchanged() {
    let dir = tmp("foreign");
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("results.sqlite");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');").unwrap();
    drop(conn);
    let before = std::fs::read(&db).unwrap();
    let out = bin().arg("report").arg(&dir).output().unwrap();
    assert!(!out.status.success(), "{}", show(&out));
    assert!(text(&out.stderr).contains("not a phonebench results database"), "{}", show(&out));
    assert_eq!(std::fs::read(&db).unwrap(), before, "byte for byte unchanged");
    assert!(!dir.join("report").exists() && !dir.join("results.lock").exists(), "nothing written beside it");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `cmd` with its stdout a pipe that is closed after the first line; asserts a quiet
/// status 0.
fn reader_stops_after_one_line(mut cmd: Command, stdin: Option<String>) {
    let mut child = cmd
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    }
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(!line.is_empty(), "one line was printed");
    drop(reader);
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

#[test]
fn output_into_a_reader_that_stops_ends_quietly_with_status_0() {
    let groundtruth = phonebench_testkit::shared_dir().join("sphinx-data/groundtruth");
    let mut dirs = Vec::new();
    for task in std::fs::read_dir(&groundtruth).unwrap() {
        for app in std::fs::read_dir(task.unwrap().path()).unwrap() {
            dirs.push(app.unwrap().path());
        }
    }
    assert!(!dirs.is_empty());
    // Many folders, so that it is still writing long after the reader has gone.
    let mut cmd = bin();
    cmd.arg("sphinx-eval");
    for _ in 0..20 {
        cmd.args(&dirs);
    }
    reader_stops_after_one_line(cmd, None);

    let mut cmd = bin();
    cmd.args(["play", "--app", "contacts"]);
    reader_stops_after_one_line(cmd, Some("scroll down\nscroll up\n".repeat(200)));
}

#[test]
fn an_error_says_its_cause_once() {
    let dir = tmp("empty");
    std::fs::create_dir_all(&dir).unwrap();
    let out = bin().arg("report").arg(&dir).output().unwrap();
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert_eq!(err.matches("no results here").count(), 1, "{err}");
    assert!(err.starts_with("error: writing the report of"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_person_whose_stdin_closes_stops_the_run_and_the_episode_is_scored() {
    let dir = tmp("human");
    let c = copies(&dir);
    let out = dir.join("out");
    let run = bin()
        .args(["run", "--agent", "human", "--instances", "2", "--no-report", "--suite"])
        .arg(&c.suite)
        .arg("--apps")
        .arg(&c.apps)
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(3), "an incomplete run: {}", show(&run));
    let err = text(&run.stderr);
    assert!(err.contains("stdin closed") && err.contains("--resume"), "{err}");
    assert!(err.contains("1 episode was not started"), "{err}");
    let eps = episodes(&out);
    assert_eq!(eps.len(), 1, "no episode after the person stopped: {eps:?}");
    let e = &eps[0];
    assert_eq!(e["infrastructure_error"], serde_json::Value::Null, "scored, not infrastructure: {e}");
    assert_eq!(e["success"], serde_json::json!(false), "{e}");
    assert_eq!(e["end"], serde_json::json!("finished (infeasible)"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
