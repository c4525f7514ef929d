//! The trace-to-app pipeline through the binary, as a user runs it: `ingest` (a bad file in the
//! batch is reported and skipped, the rest stored; exit 2), `analyze` (tables, JSON, the HTML
//! graph with a thumbnail per page), `synthesize-app`, `synthesize-tasks`, and `validate` on
//! the result.

#![allow(clippy::unwrap_used)]

mod common;

use std::fs;
use std::path::PathBuf;

use phonebench_testkit::shared;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-cli-traces-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(cmd: &mut std::process::Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_pipeline_runs_end_to_end_from_the_command_line() {
    let dir = tmp("e2e");
    let db = dir.join("traces.db");
    // DroidTask's clock: the exploration run (DroidBot format), then its YAML with one broken
    // copy in the same batch.
    let (code, stdout, stderr) = run(common::bin(&dir)
        .args(["ingest", "droidbot"])
        .arg(shared("realdata/droidtask/clock_run"))
        .arg("--out")
        .arg(&db));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("40 screens  169 steps"), "{stdout}");
    let broken = dir.join("broken.yaml");
    fs::write(&broken, "records:\n- Choice: [1\n").unwrap();
    let (code, stdout, stderr) = run(common::bin(&dir)
        .args(["ingest", "droidtask"])
        .arg(shared("realdata/droidtask/user_tasks/clock"))
        .arg(&broken)
        .arg("--out")
        .arg(&db));
    assert_eq!(code, 2, "a skipped file is exit 2: {stdout}{stderr}");
    assert!(stderr.contains("broken.yaml: ") && stderr.contains("line 3"), "{stderr}");
    assert!(stdout.contains("Set the snooze time to 5 minute"), "the good files are stored: {stdout}");

    // Analysis: a table, JSON and the HTML graph.
    let html = dir.join("graph.html");
    let (code, stdout, stderr) = run(common::bin(&dir).arg("analyze").arg(&db).arg("--html").arg(&html));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("settings") && stdout.contains("P0"), "{stdout}");
    let (_, json, _) = run(common::bin(&dir).arg("analyze").arg(&db).arg("--json"));
    let analysis: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    let pages = analysis["pages"].as_array().unwrap();
    assert!(pages.len() >= 8);
    let html = fs::read_to_string(&html).unwrap();
    assert!(html.contains("<svg") && html.contains("class=\"page\""));
    assert_eq!(
        html.matches("<image href=\"data:image/png;base64,").count(),
        pages.len(),
        "a thumbnail per page"
    );

    // The app, its tasks, and validation by the ordinary command.
    let apps = dir.join("apps");
    let (code, stdout, stderr) =
        run(common::bin(&dir).arg("synthesize-app").arg(&db).arg("--out").arg(apps.join("clock")));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("recorded tap transitions reproduced"), "{stdout}");
    let suite = dir.join("suite");
    let (code, stdout, stderr) =
        run(common::bin(&dir).arg("synthesize-tasks").arg(apps.join("clock")).arg("--out").arg(&suite));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let kept = stdout.lines().filter(|l| l.starts_with("kept")).count();
    assert!(kept >= 5, "{stdout}");
    let (code, stdout, stderr) =
        run(common::bin(&dir).arg("validate").arg("--apps").arg(&apps).arg("--suite").arg(&suite));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains(&format!("{kept}/{kept} tasks valid")), "{stdout}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn bad_inputs_get_clear_errors() {
    let dir = tmp("bad");
    // Not a traces database.
    fs::write(dir.join("not.db"), "hello").unwrap();
    let (code, _, stderr) = run(common::bin(&dir).arg("analyze").arg(dir.join("not.db")));
    assert_ne!(code, 0);
    assert!(stderr.contains("not.db"), "{stderr}");
    let (code, _, stderr) = run(common::bin(&dir).arg("analyze").arg(dir.join("missing.db")));
    assert_ne!(code, 0);
    assert!(stderr.contains("phonebench ingest"), "{stderr}");
    // A folder of the wrong format: reported, nothing stored, no panic.
    let (code, _, stderr) =
        run(common::bin(&dir).args(["ingest", "droidbot"]).arg(&dir).arg("--out").arg(dir.join("t.db")));
    assert_eq!(code, 2);
    assert!(stderr.contains("not a DroidBot output folder"), "{stderr}");
    assert!(!stderr.contains("panicked"));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn user_mistakes_never_destroy_data() {
    let dir = tmp("mistakes");
    let db = dir.join("t.db");
    let (code, _, stderr) = run(common::bin(&dir)
        .args(["ingest", "droidbot"])
        .arg(shared("realdata/droidbot_utg/qqmusic_small"))
        .arg("--out")
        .arg(&db));
    assert_eq!(code, 0, "{stderr}");
    let before = fs::read(&db).unwrap();
    // --html pointed at the database itself, or at some other file, is refused.
    let (code, _, stderr) = run(common::bin(&dir).arg("analyze").arg(&db).arg("--html").arg(&db));
    assert_ne!(code, 0);
    assert!(stderr.contains("database itself"), "{stderr}");
    assert_eq!(fs::read(&db).unwrap(), before);
    fs::write(dir.join("notes.txt"), "mine").unwrap();
    let (code, _, stderr) =
        run(common::bin(&dir).arg("analyze").arg(&db).arg("--html").arg(dir.join("notes.txt")));
    assert_ne!(code, 0);
    assert!(stderr.contains("not an HTML page"), "{stderr}");
    assert_eq!(fs::read_to_string(dir.join("notes.txt")).unwrap(), "mine");
    // Ingesting into another tool's SQLite database is refused before anything is written.
    let foreign = dir.join("results.sqlite");
    {
        let conn = rusqlite::Connection::open(&foreign).unwrap();
        conn.execute_batch("CREATE TABLE episodes (key TEXT); INSERT INTO episodes VALUES ('a');").unwrap();
    }
    let foreign_before = fs::read(&foreign).unwrap();
    let (code, _, stderr) = run(common::bin(&dir)
        .args(["ingest", "droidbot"])
        .arg(shared("realdata/droidbot_utg/qqmusic_small"))
        .arg("--out")
        .arg(&foreign));
    assert_ne!(code, 0);
    assert!(stderr.contains("something else"), "{stderr}");
    assert_eq!(fs::read(&foreign).unwrap(), foreign_before);
    // The same folder named another way is the same trace: stored once.
    let dotted = format!("{}/.", shared("realdata/droidbot_utg/qqmusic_small").display());
    let (code, stdout, stderr) =
        run(common::bin(&dir).args(["ingest", "droidbot", &dotted]).arg("--out").arg(&db));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let traces: i64 = conn.query_row("SELECT count(*) FROM traces", [], |r| r.get(0)).unwrap();
    assert_eq!(traces, 1);
    // A second app with an id already beside it is refused (the folder would stop loading).
    let apps = dir.join("apps");
    let (code, _, stderr) =
        run(common::bin(&dir).arg("synthesize-app").arg(&db).arg("--out").arg(apps.join("qq")));
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(common::bin(&dir)
        .arg("synthesize-app")
        .arg(&db)
        .arg("--out")
        .arg(apps.join("other"))
        .args(["--id", "qq"]));
    assert_ne!(code, 0);
    assert!(stderr.contains("already holds an app with id `qq`"), "{stderr}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn hostile_files_are_refused_quickly_and_reported_briefly() {
    let dir = tmp("hostile");
    let data = dir.join("episodes");
    fs::create_dir_all(&data).unwrap();
    // Nested 100,000 deep: refused before parsing.
    fs::write(data.join("deep.json"), "[".repeat(100_000)).unwrap();
    // 50,000 entries that are not steps: one problem line per entry would flood the terminal.
    fs::write(data.join("many.json"), format!("[{}{{}}]", "{},".repeat(49_999))).unwrap();
    let (code, _, stderr) =
        run(common::bin(&dir).args(["ingest", "aitw"]).arg(&data).arg("--out").arg(dir.join("t.db")));
    assert_eq!(code, 2);
    assert!(stderr.contains("deep.json: line 1: nested more than 128 levels deep"), "{stderr}");
    let many: Vec<&str> = stderr.lines().filter(|l| l.contains("many.json")).collect();
    assert!(many.len() <= 21, "{} lines about many.json", many.len());
    assert!(many.iter().any(|l| l.contains("more problems in this file are not listed")), "{stderr}");
    let _ = fs::remove_dir_all(&dir);
}
