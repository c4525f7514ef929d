//! Helpers the binary's run tests share: reading what a results folder holds.
// Each test file is its own crate and uses only some of these.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// The binary under test with `cache` as its cache folder (validation and responses) and no
/// model settings from the environment.
pub fn bin(cache: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_phonebench"));
    cmd.env("PHONEBENCH_CACHE", cache);
    for var in ["PHONEBENCH_MODEL", "PHONEBENCH_BASE_URL", "PHONEBENCH_API_KEY_ENV"] {
        cmd.env_remove(var);
    }
    cmd
}

/// The lines of `out/episodes.jsonl`, parsed.
pub fn episodes(out: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(out.join("episodes.jsonl"))
        .expect("episodes.jsonl is written")
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

/// Episodes committed to `out/results.sqlite` so far (0 before the database exists), read
/// without disturbing a run that is writing it.
pub fn stored_episodes(out: &Path) -> i64 {
    let db = out.join("results.sqlite");
    if !db.exists() {
        return 0;
    }
    rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|c| c.query_row("SELECT count(*) FROM episodes", [], |r| r.get(0)))
        .unwrap_or(0)
}
