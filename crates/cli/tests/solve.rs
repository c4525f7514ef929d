//! `phonebench solve` (the oracle): small starter tasks solved, re-verified by a normal run and
//! never longer than their references; a padded reference flagged by `validate --oracle`; an
//! unsolvable budget reported as such, byte for byte the same on a second run; the `--json`
//! shape.

#![allow(clippy::unwrap_used)]

use std::path::Path;
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

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn small_starter_tasks_are_solved_verified_and_no_longer_than_the_reference() {
    let (ok, stdout, stderr) = phonebench(&[
        "solve",
        "--suite",
        "starter",
        "--tasks",
        "contacts.create",
        "--json",
        "--max-expansions",
        "400",
        "--improve-expansions",
        "40",
    ]);
    assert!(ok, "{stdout}{stderr}");
    let lines = json_lines(&stdout);
    let tasks: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "task").collect();
    assert_eq!(tasks.len(), 1);
    for t in tasks {
        assert_eq!(t["solved"], true, "{t}");
        assert_eq!(t["verified"], true, "{t}");
        let (length, reference) = (t["length"].as_u64().unwrap(), t["reference_length"].as_u64().unwrap());
        assert!(length >= 1 && length <= reference, "{t}");
        assert_eq!(t["solution"].as_array().unwrap().len() as u64, length);
        // A completion task ends with `finish`.
        assert_eq!(t["solution"].as_array().unwrap().last().unwrap()["action"], "finish", "{t}");
    }
}

#[test]
fn a_retrieval_task_is_answered_from_what_the_screen_shows() {
    // The world clock's times are on its screen: the oracle answers from what it sees (the
    // expected time is a hidden parameter, never a candidate).
    let (ok, stdout, stderr) = phonebench(&[
        "solve",
        "--suite",
        "starter",
        "--tasks",
        "clock.city_time",
        "--json",
        "--max-expansions",
        "1000",
    ]);
    assert!(ok, "{stdout}{stderr}");
    let t = &json_lines(&stdout)[0];
    assert_eq!((t["solved"].clone(), t["verified"].clone()), (Value::Bool(true), Value::Bool(true)), "{t}");
    assert!(t["length"].as_u64().unwrap() <= t["reference_length"].as_u64().unwrap(), "{t}");
    let last = t["solution"].as_array().unwrap().last().unwrap();
    assert_eq!(last["action"], "answer", "{t}");
}

#[test]
fn an_unsolvable_budget_is_reported_and_the_output_is_deterministic() {
    let args =
        ["solve", "--suite", "starter", "--tasks", "contacts.create", "--json", "--max-expansions", "3"];
    let (ok, first, stderr) = phonebench(&args);
    assert!(!ok, "an unsolved task fails the command: {first}{stderr}");
    let lines = json_lines(&first);
    let t = &lines[0];
    assert_eq!(t["solved"], false);
    assert_eq!(t["expansions"], 3);
    assert!(t["reason"].as_str().unwrap().starts_with("unsolved within budget"), "{t}");
    let (_, second, _) = phonebench(&args);
    assert_eq!(first, second, "two runs give the same bytes");
    // The text table says the same.
    let text_args: Vec<&str> = args.iter().copied().filter(|a| *a != "--json").collect();
    let (_, text, _) = phonebench(&text_args);
    assert!(text.contains("contacts.create: unsolved within budget"), "{text}");
    assert!(text.contains("0/1 solved"), "{text}");
}

#[test]
fn the_json_lines_have_the_documented_shape() {
    let (_, stdout, stderr) = phonebench(&[
        "solve",
        "--suite",
        "starter",
        "--tasks",
        "clock.city_time",
        "--json",
        "--max-expansions",
        "5",
        "--improve-expansions",
        "0",
    ]);
    let lines = json_lines(&stdout);
    assert_eq!(lines.len(), 2, "{stdout}{stderr}");
    let t = &lines[0];
    for key in [
        "kind",
        "task",
        "solved",
        "length",
        "reference_length",
        "solution",
        "expansions",
        "reason",
        "verified",
        "bound",
        "exhaustive",
    ] {
        assert!(t.get(key).is_some(), "no `{key}` in {t}");
    }
    assert_eq!(t["kind"], "task");
    assert_eq!(t["task"], "clock.city_time");
    let total = &lines[1];
    assert_eq!(total["kind"], "total");
    assert_eq!(total["tasks"], 1);
    for key in ["solved", "verified", "shorter_than_reference", "equal_to_reference", "budget"] {
        assert!(total.get(key).is_some(), "no `{key}` in {total}");
    }
    assert_eq!(total["budget"]["max_expansions"], 5);
}

#[test]
fn validate_oracle_flags_a_reference_longer_than_the_oracles_solution() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::env::temp_dir().join(format!("phonebench-solve-padded-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tasks")).unwrap();
    std::fs::write(dir.join("suite.toml"), "name = \"padded\"\n").unwrap();
    let task = std::fs::read_to_string(repo.join("suites/full/tasks/contacts_create.toml")).unwrap();
    // A wasted turn before saving: the reference still passes, one turn longer than needed.
    let padded = task.replacen("  'tap #menu_save',", "  'wait',\n  'tap #menu_save',", 1);
    assert_ne!(padded, task);
    std::fs::write(dir.join("tasks/contacts_create.toml"), padded).unwrap();
    let suite = dir.to_str().unwrap();
    let (ok, stdout, stderr) = phonebench(&[
        "validate",
        "--suite",
        suite,
        "--oracle",
        "--max-expansions",
        "1500",
        "--improve-expansions",
        "800",
    ]);
    assert!(!ok, "{stdout}{stderr}");
    assert!(stdout.contains("FAIL  contacts.create"), "{stdout}");
    assert!(
        stdout.contains("the reference takes 7 turns on instance 0, the oracle solved it in 6"),
        "{stdout}"
    );
    // Without --oracle the padded task is valid.
    let (ok, stdout, stderr) = phonebench(&["validate", "--suite", suite]);
    assert!(ok, "{stdout}{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn explain_walks_the_reference_through_the_action_space() {
    // `contacts.add_email`'s reference taps goal words and types values into their fields:
    // every step is offered at cost 2, and the closing `finish` passes.
    let (ok, stdout, stderr) =
        phonebench(&["solve", "--suite", "starter", "--tasks", "contacts.add_email", "--explain", "--json"]);
    assert!(ok, "{stdout}{stderr}");
    let lines = json_lines(&stdout);
    assert_eq!(lines.len(), 1, "{stdout}");
    let walked = &lines[0];
    assert_eq!(walked["kind"], "explain");
    assert_eq!(walked["task"], "contacts.add_email");
    assert_eq!(walked["passes"], true, "{walked}");
    assert_eq!(walked["ending"][1], true, "{walked}");
    let steps = walked["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 6, "{walked}");
    assert!(steps.iter().all(|s| s["cost"] == 2), "{walked}");
    // Text mode: a table, and exit 1 when a step is not offered (a tool called with an amount
    // the agent computes: shares times the quoted price).
    let (ok, stdout, _) =
        phonebench(&["solve", "--suite", "starter", "--tasks", "mcp.fin_shares_value_text", "--explain"]);
    assert!(!ok, "{stdout}");
    assert!(stdout.contains("NONE") && stdout.contains("offered instead"), "{stdout}");
}
