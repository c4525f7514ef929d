//! `phonebench task-report`: one line per task with its reference length, criteria, tags and
//! what random play reached, pairs of goals that read alike, a summary; bad options refused.

#![allow(clippy::unwrap_used)]

use std::process::Command;

use serde_json::Value;

fn report(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_phonebench")).arg("task-report").args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn every_task_gets_its_figures_and_alike_goals_are_paired() {
    // contacts.company_count and contacts.company_people ask about one company's people.
    let (ok, stdout, stderr) =
        report(&["--tasks", "contacts.c*", "--random-runs", "2", "--similar", "0.3", "--json"]);
    assert!(ok, "{stderr}");
    let lines: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let tasks: Vec<&Value> = lines.iter().filter(|l| l.get("kind").is_none()).collect();
    let ids: Vec<&str> = tasks.iter().map(|t| t["task"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "contacts.company_count",
            "contacts.company_people",
            "contacts.create",
            "contacts.create_full_favorite"
        ]
    );
    for t in &tasks {
        assert!(t["reference_steps"].as_u64().unwrap() > 0, "{t}");
        assert!(t["criteria"].as_u64().unwrap() > 0, "{t}");
        assert!(!t["goal"].as_str().unwrap().is_empty());
        assert!(t["tags"]["length"].is_array(), "{t}");
        assert_eq!(t["random_runs"], 2);
        assert_eq!(t["random_successes"], 0);
        let paths = t["random_paths"].as_u64().unwrap();
        assert!((1..=2).contains(&paths), "{t}");
        assert!(t["random_screens"].as_u64().unwrap() >= 1);
        assert!(t["problem"].is_null(), "{t}");
    }
    let similar: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "similar").collect();
    assert!(
        similar.iter().any(|s| s["a"] == "contacts.company_count" && s["b"] == "contacts.company_people"),
        "{stdout}"
    );
    let total = lines.last().unwrap();
    assert_eq!(total["kind"], "total");
    assert_eq!(total["tasks"], 4);
    assert_eq!(total["similar_pairs"].as_u64().unwrap() as usize, similar.len());

    // The table names the same tasks.
    let (ok, table, _) = report(&["--tasks", "contacts.c*", "--random-runs", "1"]);
    assert!(ok);
    assert!(
        table.contains("contacts.create_full_favorite") && table.contains("4 tasks: mean reference"),
        "{table}"
    );
}

#[test]
fn bad_options_are_refused() {
    let (ok, _, stderr) = report(&["--similar", "1.5"]);
    assert!(!ok && stderr.contains("--similar"), "{stderr}");
    let (ok, _, stderr) = report(&["--tasks", "no.such.*"]);
    assert!(!ok && stderr.contains("no task matches"), "{stderr}");
    let (ok, _, stderr) = report(&["--random-runs", "0"]);
    assert!(!ok && stderr.contains("random-runs"), "{stderr}");
}
