//! The Python package's own tests (pytest, `python/tests`) against this build's `phonebench`:
//! the client, the Gymnasium environment, the adapters, the WebSocket route, the token, and
//! Ray (a local cluster runs the starter suite in 4 shards, merged byte-identical to the
//! unsharded run). The venv is tools/py's (tools/test.sh makes it from the pinned
//! requirements); a missing venv or package is a failure, never a skip.

use std::process::Command;

use phonebench_testkit::workspace_root as repo;

#[test]
fn the_python_package_tests_pass() {
    let python = phonebench_testkit::venv_python();
    let output = Command::new(&python)
        .args(["-m", "pytest", "python/tests", "-q", "-p", "no:cacheprovider"])
        .env("PHONEBENCH_BIN", env!("CARGO_BIN_EXE_phonebench"))
        .env("PYTHONPATH", repo().join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(repo())
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "pytest failed:\n{stdout}\n{stderr}");
    // Nothing skipped: a skipped test would hide a missing dependency.
    let summary = stdout.lines().rev().find(|l| l.contains(" passed")).unwrap_or_default().to_string();
    assert!(!summary.contains("skipped") && !summary.contains("xfail"), "pytest skipped tests: {summary}");
    assert!(summary.contains(" passed"), "no test ran:\n{stdout}");
}
