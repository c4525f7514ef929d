#![allow(clippy::unwrap_used)]
//! `phonebench bench` through the binary: a row per step kind for every app (timed, or saying
//! why not), the same rows on a second run apart from the timings, and `--throughput`'s fields.
//! No timing is asserted: the figures depend on the machine.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const STEP_KINDS: [&str; 4] = ["step-scroll", "step-navigate", "step-write", "step-type"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `phonebench bench ARGS` and returns its JSON lines.
fn bench(args: &[&str]) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_phonebench")).arg("bench").args(args).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "bench {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

/// The rows without what varies between runs.
fn untimed(rows: &[Value]) -> Vec<Value> {
    rows.iter()
        .map(|row| {
            let mut row = row.clone();
            let object = row.as_object_mut().unwrap();
            object.remove("p50_us");
            object.remove("p99_us");
            row
        })
        .collect()
}

/// A folder with only some of the apps (and the shared partials), for a quicker run.
fn some_apps(ids: &[&str]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("bench-apps-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for id in ids.iter().chain(&["_shared"]) {
        copy_dir(&repo().join("apps").join(id), &dir.join(id));
    }
    dir
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

#[test]
fn every_app_has_a_row_per_step_kind_timed_or_explained() {
    let rows = bench(&["--json", "--iterations", "20"]);
    let apps: Vec<String> = Command::new(env!("CARGO_BIN_EXE_phonebench"))
        .args(["apps", "--json"])
        .output()
        .map(|o| String::from_utf8(o.stdout).unwrap())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].as_str().unwrap().to_string())
        .collect();
    assert!(apps.len() >= 10, "{apps:?}");
    let mut timed = [0usize; 4];
    for app in &apps {
        for (k, kind) in STEP_KINDS.iter().enumerate() {
            let found: Vec<&Value> =
                rows.iter().filter(|r| r["kind"] == *kind && r["app"] == **app).collect();
            assert_eq!(found.len(), 1, "{app}: one {kind} row, got {found:?}");
            let row = found[0];
            if row["p50_us"].is_null() {
                // No such step on the explored screens: said, not silently dropped.
                assert!(row["p99_us"].is_null(), "{row}");
                assert!(row["note"].as_str().unwrap().starts_with("no "), "{row}");
                continue;
            }
            timed[k] += 1;
            assert!(row["p50_us"].as_f64().unwrap() > 0.0, "{row}");
            assert!(row["p99_us"].as_f64().unwrap() >= row["p50_us"].as_f64().unwrap(), "{row}");
            assert_eq!(row["iterations"], 20, "{row}");
            assert!(row["nodes"].as_u64().unwrap() > 0, "{row}");
            assert!(row["screen"].is_string(), "{row}");
            let action = row["action"]["action"].as_str().unwrap();
            let expected = match *kind {
                "step-scroll" => "scroll",
                "step-type" => "type",
                _ => "tap",
            };
            assert_eq!(action, expected, "{row}");
        }
    }
    // Most apps have every kind of step within reach of their entry screen.
    for (kind, n) in STEP_KINDS.iter().zip(timed) {
        assert!(n * 2 > apps.len(), "{kind}: only {n} of {} apps timed", apps.len());
    }
    // The screenshot and reset rows are still there.
    for kind in ["render", "png", "shot", "som-androidworld", "som-sphinx", "reset"] {
        assert!(rows.iter().any(|r| r["kind"] == kind), "no {kind} row");
    }
}

#[test]
fn rows_are_the_same_on_a_second_run_apart_from_timings() {
    // Two apps with every kind of step: exploration and choices must not vary between runs.
    let apps = some_apps(&["clock", "todo"]);
    let dir = apps.to_str().unwrap();
    let first = bench(&["--json", "--iterations", "10", "--apps", dir]);
    let second = bench(&["--json", "--iterations", "10", "--apps", dir]);
    assert_eq!(untimed(&first), untimed(&second));
    for app in ["clock", "todo"] {
        for kind in STEP_KINDS {
            let row = first.iter().find(|r| r["kind"] == kind && r["app"] == app).unwrap();
            assert!(row["p50_us"].is_number(), "{row}");
        }
        // The writing tap is a tap whose app action wrote a database when explored; replaying
        // its path and the tap on `play` changes the app's rows.
        let write = first.iter().find(|r| r["kind"] == "step-write" && r["app"] == app).unwrap();
        assert_eq!(write["action"]["action"], "tap", "{write}");
        assert!(play_changes_data(dir, app, write), "{write}");
    }
    let _ = std::fs::remove_dir_all(&apps);
}

/// Replays a row's path and action on `phonebench play` and says whether the app's database
/// changed (by a dump of every table before and after).
fn play_changes_data(apps: &str, app: &str, row: &Value) -> bool {
    let tables = |script: &[String]| -> String {
        let out = Command::new(env!("CARGO_BIN_EXE_phonebench"))
            .args(["play", "--apps", apps, "--app", app, "--query"])
            .arg(format!("{app}:SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let names: Vec<String> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| v["name"].as_str().map(str::to_string))
            .collect();
        assert!(!names.is_empty(), "no tables listed:\n{text}");
        let mut args = vec!["play".to_string(), "--apps".into(), apps.into(), "--app".into(), app.into()];
        for name in names {
            args.push("--query".into());
            args.push(format!("{app}:SELECT * FROM \"{name}\""));
        }
        let out = Command::new(env!("CARGO_BIN_EXE_phonebench"))
            .args(&args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write as _;
                child.stdin.take().unwrap().write_all((script.join("\n") + "\n").as_bytes())?;
                child.wait_with_output()
            })
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with('{'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let path: Vec<String> = row["path"].as_array().unwrap().iter().map(Value::to_string).collect();
    let mut with_tap = path.clone();
    with_tap.push(row["action"].to_string());
    tables(&path) != tables(&with_tap)
}

#[test]
fn throughput_reports_steps_resets_and_memory() {
    let rows = bench(&["--throughput", "--seconds", "1", "--envs", "2", "--memory-envs", "5", "--json"]);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(row["kind"], "throughput");
    assert_eq!(row["envs"], 2);
    assert!(row["steps"].as_u64().unwrap() > 0, "{row}");
    assert!(row["steps_per_s"].as_f64().unwrap() > 0.0, "{row}");
    assert!(row["steps_per_s_per_core"].as_f64().unwrap() > 0.0, "{row}");
    assert!(row["resets_per_s"].is_number(), "{row}");
    assert!(row["cores"].as_u64().unwrap() >= 1, "{row}");
    if cfg!(target_os = "linux") {
        assert_eq!(row["memory_envs"], 5, "{row}");
        assert!(row["memory_per_env_mb"].is_number(), "{row}");
    } else {
        assert_eq!(row["memory_per_env_mb"], "unknown", "{row}");
    }
}
