//! Sharded runs: the shards split the episodes between them (every one exactly once), and their
//! merge is the unsharded run's folder, `episodes.jsonl` byte for byte; folders that are not
//! the shards of one run, or not all of them, are refused with what is wrong.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use phonebench_phone::Catalog;
use phonebench_runner::results::JSONL_FILE;
use phonebench_runner::{
    AgentChoice, AgentKind, MergeError, ResultsDb, RunError, RunOptions, Shard, merge, run_suite,
};
use phonebench_tasks::Suite;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-shards-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Random play (so episodes differ in length and outcome) over a few tasks, 3 instances each.
fn options(out: &Path, shard: Option<&str>) -> RunOptions {
    RunOptions {
        tasks: Some("contacts.c*".into()),
        instances: 3,
        seed: 7,
        concurrency: 2,
        shard: shard.map(|s| s.parse().unwrap()),
        ..RunOptions::new("starter", AgentChoice::Builtin(AgentKind::Random), out)
    }
}

fn run(options: &RunOptions) -> Result<phonebench_runner::RunOutcome, RunError> {
    let catalog = Catalog::load_dir(&repo().join("apps")).unwrap();
    let suite = Suite::load(&repo().join("suites/starter")).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(run_suite(&catalog, &suite, options))
}

fn refusal(result: Result<phonebench_runner::MergeOutcome, MergeError>) -> String {
    match result {
        Err(MergeError::Refused(why)) => why,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn shard_names_are_checked() {
    assert_eq!("2/4".parse::<Shard>().unwrap(), Shard { index: 2, count: 4 });
    for bad in ["4/4", "1/0", "-1/4", "a/b", "3", ""] {
        let e = bad.parse::<Shard>().unwrap_err();
        assert!(e.contains(bad) || bad.is_empty(), "{bad}: {e}");
    }
}

#[test]
fn merged_shards_are_the_unsharded_run_byte_for_byte() {
    let base = tmp("merge");
    let whole = base.join("whole");
    let all = run(&options(&whole, None)).unwrap();
    assert!(all.episodes.len() >= 9);
    drop(all);
    let mut dirs = Vec::new();
    let mut total = 0;
    for i in 0..4 {
        let dir = base.join(format!("shard{i}"));
        let outcome = run(&options(&dir, Some(&format!("{i}/4")))).unwrap();
        // Dealt in turn: the shards differ by at most one episode.
        assert!(outcome.episodes.len().abs_diff(all_len(&whole) / 4) <= 1);
        total += outcome.episodes.len();
        drop(outcome);
        dirs.push(dir);
    }
    assert_eq!(total, all_len(&whole), "every episode in exactly one shard");

    // Incomplete or doubled sets are refused before anything is written.
    let out = base.join("merged");
    let why = refusal(merge(&dirs[..2], &out, false));
    assert!(why.contains("missing shards: 2/4, 3/4"), "{why}");
    let doubled = [dirs[0].clone(), dirs[1].clone(), dirs[1].clone()];
    assert!(refusal(merge(&doubled, &out, false)).contains("given twice"));
    let why = refusal(merge(&[whole.clone(), dirs[0].clone()], &out, false));
    assert!(why.contains("not a shard"), "{why}");
    assert!(!out.join(JSONL_FILE).exists());

    let merged = merge(&dirs, &out, false).unwrap();
    assert_eq!(merged.episodes, total);
    assert!(merged.config.shard.is_none());
    drop(merged);
    let a = std::fs::read(whole.join(JSONL_FILE)).unwrap();
    let b = std::fs::read(out.join(JSONL_FILE)).unwrap();
    assert!(a == b, "the merged episodes.jsonl differs from the unsharded run's");
    // The merged folder is a run folder like any: same configuration, steps kept.
    let (w, m) = (ResultsDb::open_existing(&whole).unwrap(), ResultsDb::open_existing(&out).unwrap());
    assert_eq!(w.config().unwrap(), m.config().unwrap());
    let key = &w.episodes().unwrap()[0].key;
    assert_eq!(w.steps(key).unwrap(), m.steps(key).unwrap());
    drop((w, m));

    // Never into a shard (--fresh would clear it) or inside one.
    for inside in [dirs[0].clone(), dirs[1].join("screenshots")] {
        let why = refusal(merge(&dirs, &inside, true));
        assert!(why.contains("lies inside"), "{why}");
    }
    assert_eq!(dirs.iter().map(|d| all_len(d)).sum::<usize>(), total);

    // A second merge into the same folder needs --fresh.
    assert!(refusal(merge(&dirs, &out, false)).contains("already holds results"));
    merge(&dirs, &out, true).unwrap();
    let _ = std::fs::remove_dir_all(&base);
}

fn all_len(dir: &Path) -> usize {
    ResultsDb::open_existing(dir).unwrap().count().unwrap()
}

#[test]
fn shards_of_different_runs_are_not_merged() {
    let base = tmp("different");
    let a = base.join("a");
    let b = base.join("b");
    run(&options(&a, Some("0/2"))).unwrap();
    run(&RunOptions { seed: 8, ..options(&b, Some("1/2")) }).unwrap();
    let why = refusal(merge(&[a, b], &base.join("out"), false));
    assert!(why.contains("not shards of one run") && why.contains("seed"), "{why}");
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn an_unfinished_shard_is_named() {
    let base = tmp("unfinished");
    let (a, b) = (base.join("a"), base.join("b"));
    run(&options(&a, Some("0/2"))).unwrap();
    // Shard 1 ran only part of its slice (as if killed): a narrower task glob is another run,
    // so the folder is made by deleting one stored episode instead.
    run(&options(&b, Some("1/2"))).unwrap();
    let conn = rusqlite::Connection::open(b.join("results.sqlite")).unwrap();
    conn.execute("DELETE FROM steps WHERE key = (SELECT min(key) FROM episodes)", []).unwrap();
    conn.execute("DELETE FROM episodes WHERE key = (SELECT min(key) FROM episodes)", []).unwrap();
    drop(conn);
    let why = refusal(merge(&[a, b], &base.join("out"), false));
    assert!(why.contains("in no shard") && why.contains("--resume"), "{why}");
    let _ = std::fs::remove_dir_all(&base);
}
