//! The runner end to end, through the binary: the starter suite with the scripted agents, byte
//! identical results for the same seed, and a run killed with SIGKILL then resumed.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{episodes, stored_episodes};

/// Every run in this file shares one validation cache (in a temp folder, not the user's), so
/// the suite is validated once and not again by each run.
fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_phonebench"));
    cmd.env(
        "PHONEBENCH_CACHE",
        std::env::temp_dir().join(format!("phonebench-run-test-cache-{}", std::process::id())),
    );
    cmd
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-run-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn run(out: &Path, agent: &str, extra: &[&str]) -> String {
    let output = bin()
        .args(["run", "--suite", "starter", "--agent", agent, "--quiet", "--no-report", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(
        output.status.success(),
        "run --agent {agent} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn success_rate(eps: &[serde_json::Value]) -> f64 {
    let ok = eps.iter().filter(|e| e["success"] == serde_json::json!(true)).count();
    ok as f64 / eps.len() as f64
}

#[test]
fn scripted_agents_score_as_they_must_and_runs_are_reproducible() {
    let a = tmp("reference-a");
    run(&a, "reference", &[]);
    let eps = episodes(&a);
    assert!(eps.len() >= 30, "the starter suite has at least 30 tasks, got {}", eps.len());
    let failed: Vec<&str> = eps
        .iter()
        .filter(|e| e["success"] != serde_json::json!(true))
        .map(|e| e["key"].as_str().unwrap())
        .collect();
    assert!(failed.is_empty(), "reference must solve every task; failed: {failed:?}");

    // Same seed → byte-identical episodes.jsonl.
    let b = tmp("reference-b");
    run(&b, "reference", &[]);
    assert_eq!(
        std::fs::read(a.join("episodes.jsonl")).unwrap(),
        std::fs::read(b.join("episodes.jsonl")).unwrap()
    );

    let noop = tmp("noop");
    run(&noop, "noop", &[]);
    assert_eq!(success_rate(&episodes(&noop)), 0.0, "noop must solve nothing");

    let random = tmp("random");
    run(&random, "random", &[]);
    let sr = success_rate(&episodes(&random));
    assert!(sr < 0.05, "random SR must stay under 5%, got {sr}");

    for d in [a, b, noop, random] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn a_run_killed_with_sigkill_resumes_to_the_same_summary() {
    // A slice of the suite keeps the test short; three instances each make enough episodes to
    // kill the run in the middle.
    let args = ["--tasks", "contacts.*", "--instances", "3", "--concurrency", "1"];
    let whole = tmp("whole");
    let whole_stdout = run(&whole, "random", &args);
    let total = episodes(&whole).len() as i64;

    let killed = tmp("killed");
    let mut child = bin()
        .args(["run", "--suite", "starter", "--agent", "random", "--quiet", "--no-report", "--out"])
        .arg(&killed)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    // Kill as soon as a few episodes are committed, well before the end.
    while stored_episodes(&killed) < 3 {
        assert!(started.elapsed() < Duration::from_secs(300), "no episode was stored in time");
        assert!(child.try_wait().unwrap().is_none(), "the run ended before it could be killed");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    let at_kill = stored_episodes(&killed);
    assert!(at_kill < total, "the kill came too late to test anything ({at_kill}/{total})");
    assert!(!killed.join("episodes.jsonl").exists(), "the export is written only at the end");

    // Without --resume the folder is refused rather than mixed.
    let refused = bin()
        .args(["run", "--suite", "starter", "--agent", "random", "--quiet", "--no-report", "--out"])
        .arg(&killed)
        .args(args)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--resume"));

    let resumed_stdout = run(&killed, "random", &[&args[..], &["--resume"]].concat());
    assert_eq!(stored_episodes(&killed), total, "no duplicates, nothing missing");
    assert_eq!(
        std::fs::read(whole.join("episodes.jsonl")).unwrap(),
        std::fs::read(killed.join("episodes.jsonl")).unwrap(),
        "resumed results equal uninterrupted results"
    );
    let table =
        |s: &str| s.lines().take_while(|l| !l.contains("episodes run")).collect::<Vec<_>>().join("\n");
    assert_eq!(table(&whole_stdout), table(&resumed_stdout), "same summary table");
    assert!(resumed_stdout.contains(&format!("{at_kill} already done")), "{resumed_stdout}");

    for d in [whole, killed] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn validate_reports_bad_tasks_with_file_and_line() {
    let dir = tmp("bad-suite");
    std::fs::create_dir_all(dir.join("tasks")).unwrap();
    std::fs::write(dir.join("suite.toml"), "name = \"bad\"\n").unwrap();
    std::fs::write(
        dir.join("tasks/broken.toml"),
        "id = \"broken\"\ngoal = \"Do it\"\ncategory = \"completion\"\napps = [\"contacts\"]\nreference = [\"tap #nope\"]\n\n[[criteria]]\nstate = { app = \"contacts\", sql = \"SELECT 1\", equals = 2, bogus = 1 }\n",
    )
    .unwrap();
    let out = bin().args(["validate", "--suite"]).arg(&dir).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("broken.toml:7:") && err.contains("unknown field `bogus`"), "{err}");

    // Parses, but the reference cannot run and the runner refuses it.
    std::fs::write(
        dir.join("tasks/broken.toml"),
        "id = \"broken\"\ngoal = \"Do it\"\ncategory = \"completion\"\napps = [\"contacts\"]\nstart = { app = \"contacts\" }\nreference = [\"tap #nope\"]\n\n[[criteria]]\nstate = { app = \"contacts\", sql = \"SELECT 1\", equals = 2 }\n",
    )
    .unwrap();
    let out = bin().args(["validate", "--suite"]).arg(&dir).output().unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("FAIL  broken") && text.contains("no element matches #nope"), "{text}");
    let out = bin()
        .args(["run", "--quiet", "--suite"])
        .arg(&dir)
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("do not validate"));
    let _ = std::fs::remove_dir_all(dir);
}
