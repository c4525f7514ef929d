//! `phonebench suites`, views and per-app sub-suites on the command line, and a run with
//! several disturbance levels: every episode at each, keyed by level, the robustness table in
//! the run's output and its report.

#![allow(clippy::unwrap_used)]

use std::process::Command;

use serde_json::Value;

fn phonebench(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_phonebench")).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn suites_lists_folders_views_and_per_app_sub_suites_with_their_counts() {
    let (ok, stdout, stderr) = phonebench(&["suites", "--json"]);
    assert!(ok, "{stderr}");
    let rows: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let count = |name: &str| rows.iter().find(|r| r["suite"] == name).map(|r| r["tasks"].as_u64().unwrap());
    let full = count("full").expect("full is listed");
    assert!(full >= 350, "{full}");
    assert_eq!(count("starter"), Some(142));
    let lite = count("lite").expect("lite is listed");
    assert!((40..=70).contains(&lite), "{lite}");
    let kind = |name: &str| {
        rows.iter().find(|r| r["suite"] == name).map(|r| r["kind"].as_str().unwrap().to_string())
    };
    assert_eq!(kind("lite").as_deref(), Some("view of full"));
    // One per-app sub-suite per app the full suite uses, each no larger than the suite.
    let per_app: Vec<&Value> = rows.iter().filter(|r| r["kind"] == "per app").collect();
    assert!(per_app.len() >= 20, "{}", per_app.len());
    assert!(per_app.iter().all(|r| r["tasks"].as_u64().unwrap() <= full));
    let (ok, table, _) = phonebench(&["suites"]);
    assert!(ok && table.contains("full:maps") && table.contains("view of full"), "{table}");
}

#[test]
fn a_per_app_sub_suite_validates_and_an_unknown_app_is_a_clear_error() {
    let (ok, stdout, stderr) = phonebench(&["validate", "--suite", "full:camera"]);
    assert!(ok, "{stdout}{stderr}");
    let last = stdout.lines().last().unwrap();
    assert!(last.ends_with("tasks valid") && !last.starts_with("0/"), "{last}");
    let (ok, _, stderr) = phonebench(&["validate", "--suite", "full:toaster"]);
    assert!(!ok);
    assert!(
        stderr.contains("no task of suite `full` involves app `toaster`") && stderr.contains("camera"),
        "{stderr}"
    );
    let (ok, _, stderr) =
        phonebench(&["run", "--suite", "full:camera", "--disturbances", "stormy", "--out", "/nonexistent"]);
    assert!(!ok && stderr.contains("none, light, heavy"), "{stderr}");
}

#[test]
fn a_run_at_two_levels_plays_each_episode_at_both_and_sets_the_rates_side_by_side() {
    let out = std::env::temp_dir().join(format!("phonebench-levels-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let out_s = out.to_str().unwrap();
    let (ok, stdout, stderr) = phonebench(&[
        "run",
        "--suite",
        "full:camera",
        "--agent",
        "reference",
        "--disturbances",
        "none,heavy",
        "--quiet",
        "--out",
        out_s,
    ]);
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("robustness to disturbances"), "{stdout}");
    let jsonl = std::fs::read_to_string(out.join("episodes.jsonl")).unwrap();
    let episodes: Vec<Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let heavy: Vec<&Value> = episodes.iter().filter(|e| e["disturbances"] == "heavy").collect();
    assert!(!heavy.is_empty() && heavy.len() * 2 == episodes.len(), "{jsonl}");
    assert!(heavy.iter().all(|e| e["key"].as_str().unwrap().ends_with("@heavy")));
    // The reference, taking the standard dismiss step, succeeds at both levels.
    assert!(episodes.iter().all(|e| e["success"] == true), "{jsonl}");
    let report = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    assert!(
        report.contains("id=\"robustness-table\"") && report.contains("SR heavy"),
        "robustness table missing"
    );
    // Resuming at other levels is another run: refused, naming what differs.
    let (ok, _, stderr) = phonebench(&[
        "run",
        "--suite",
        "full:camera",
        "--agent",
        "reference",
        "--quiet",
        "--resume",
        "--out",
        out_s,
    ]);
    assert!(!ok && stderr.contains("disturbances"), "{stderr}");
    let _ = std::fs::remove_dir_all(&out);
}
