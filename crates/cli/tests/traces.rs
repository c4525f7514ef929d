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
