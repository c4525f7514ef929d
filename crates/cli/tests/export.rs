//! `phonebench rollouts` and `phonebench export` through the binary: a few starter tasks played
//! by the reference agent, exported as SFT chats and trajectories; the assistant turns parse
//! back to the stored actions, images are where the records say, a re-export is byte-identical,
//! failures come in only with `--all`, and what is not a run (or a tampered one) is refused with
//! a message, never a panic.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use phonebench_actions::{Action, ParseOptions, Syntax, canonical, parse_action_with};
use serde_json::Value;

/// Four tasks of the starter suite: a few seconds with the reference agent.
const TASKS: &str = "contacts.c*";

/// One validation cache for every run of this file (not the user's).
fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_phonebench"));
    cmd.env(
        "PHONEBENCH_CACHE",
        std::env::temp_dir().join(format!("phonebench-export-test-cache-{}", std::process::id())),
    );
    for var in ["PHONEBENCH_MODEL", "PHONEBENCH_BASE_URL", "PHONEBENCH_API_KEY_ENV"] {
        cmd.env_remove(var);
    }
    cmd
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-export-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn text(output: &Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// `phonebench rollouts` into `out`; returns its stdout.
fn rollouts(out: &Path, tasks: &str, agent: &str, extra: &[&str]) -> String {
    let output = bin()
        .args([
            "rollouts",
            "--suite",
            "starter",
            "--tasks",
            tasks,
            "--agent",
            agent,
            "--quiet",
            "--no-report",
        ])
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "rollouts failed:\n{}", text(&output));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `phonebench export DIR ARGS…`, expected to succeed; returns its stdout.
fn export(dir: &Path, args: &[&str]) -> String {
    let output = bin().arg("export").arg(dir).args(args).output().unwrap();
    assert!(output.status.success(), "export {args:?} failed:\n{}", text(&output));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `phonebench export DIR ARGS…`, expected to fail cleanly; returns stderr.
fn export_fails(dir: &Path, args: &[&str]) -> String {
    let output = bin().arg("export").arg(dir).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "export {args:?} should fail:\n{}", text(&output));
    assert_eq!(output.status.code(), Some(1), "an error exits 1: {stderr}");
    assert!(!stderr.contains("panicked"), "no panic: {stderr}");
    assert!(stderr.starts_with("error: "), "one error line: {stderr}");
    stderr
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `(key, success, steps)` of every stored episode, straight from the database.
fn stored(dir: &Path) -> Vec<(String, bool, i64)> {
    let conn = rusqlite::Connection::open_with_flags(
        dir.join("results.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut stmt = conn.prepare("SELECT key, success, steps FROM episodes ORDER BY key").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
}

/// The trajectory records' actions by (episode, step).
fn actions_by_step(trajectory: &[Value]) -> BTreeMap<(String, u64), Value> {
    trajectory
        .iter()
        .map(|r| {
            ((r["episode"].as_str().unwrap().to_string(), r["step"].as_u64().unwrap()), r["action"].clone())
        })
        .collect()
}

/// Every SFT record's assistant turn, parsed in `syntax`, equals the trajectory's action for
/// the same step; every record has one `<image>` per image, and the images exist.
fn check_sft(file: &Path, syntax: Syntax, actions: &BTreeMap<(String, u64), Value>) -> usize {
    let records = lines(file);
    let folder = file.parent().unwrap();
    for r in &records {
        let messages = r["messages"].as_array().unwrap();
        let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["system", "user", "assistant"], "{r}");
        let user = messages[1]["content"].as_str().unwrap();
        let images = r["images"].as_array().unwrap();
        assert_eq!(user.matches("<image>").count(), images.len(), "one <image> per image: {user}");
        assert_eq!(images.len(), 1, "rollouts save every screen");
        for image in images {
            let image = image.as_str().unwrap();
            assert!(image.starts_with("images/") && !image.contains(".."), "{image}");
            let bytes = std::fs::read(folder.join(image)).unwrap();
            assert!(bytes.starts_with(b"\x89PNG"), "{image} is a PNG");
        }
        let key = (r["episode"].as_str().unwrap().to_string(), r["step"].as_u64().unwrap());
        let expected = actions.get(&key).unwrap_or_else(|| panic!("no trajectory record for {key:?}"));
        let expected: Action = canonical::from_canonical_value(expected.clone()).unwrap();
        let said = messages[2]["content"].as_str().unwrap();
        let parsed = parse_action_with(said, syntax, &ParseOptions::default())
            .unwrap_or_else(|e| panic!("`{said}` does not parse as {syntax}: {e}"));
        assert_eq!(parsed, expected, "{key:?}: `{said}` in {syntax}");
        assert!(user.starts_with("Goal: "), "{user}");
        assert!(
            user.contains(&format!("Previous actions:{}", if key.1 == 0 { " none" } else { "\n1. " })),
            "{user}"
        );
    }
    records.len()
}

#[test]
fn rollouts_export_verified_steps_that_round_trip() {
    let run = tmp("reference");
    let stdout = rollouts(&run, TASKS, "reference", &[]);
    let episodes = stored(&run);
    assert_eq!(episodes.len(), 4, "{TASKS} selects four tasks: {episodes:?}");
    assert!(episodes.iter().all(|(_, ok, _)| *ok), "the reference solves every task: {episodes:?}");
    let steps: i64 = episodes.iter().map(|(_, _, n)| n).sum();
    assert!(
        stdout.contains(&format!("verifier-confirmed: 4 of 4 scored episodes ({steps} agent steps)")),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("next: phonebench export {} --format sft", run.display())), "{stdout}");
    // Screenshots were saved without being asked for.
    assert!(run.join("screenshots").is_dir(), "rollouts force --save-screenshots");

    let out = export(&run, &["--format", "trajectory"]);
    assert!(out.contains(&format!("{steps} records from 4 episodes (4 verifier-confirmed)")), "{out}");
    let trajectory = lines(&run.join("export/trajectory.jsonl"));
    assert_eq!(trajectory.len() as i64, steps, "one record per stored agent step");
    // Sorted by episode key, then step; reward and done only on each episode's last step.
    let order: Vec<(String, u64)> = trajectory
        .iter()
        .map(|r| (r["episode"].as_str().unwrap().to_string(), r["step"].as_u64().unwrap()))
        .collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
    for (key, _, n) in &episodes {
        let mine: Vec<&Value> = trajectory.iter().filter(|r| r["episode"] == key.as_str()).collect();
        assert_eq!(mine.len() as i64, *n, "{key}");
        for (i, r) in mine.iter().enumerate() {
            let last = i + 1 == mine.len();
            assert_eq!(r["done"], last, "{r}");
            assert_eq!(r["reward"].as_f64(), Some(if last { 1.0 } else { 0.0 }), "{r}");
            assert_eq!(r["success"], true);
            assert!(r["action"].is_object() && r["screenshot"].is_string(), "{r}");
            assert!(!r["observation"].as_str().unwrap().is_empty());
        }
    }
    let actions = actions_by_step(&trajectory);

    export(&run, &["--format", "sft"]);
    let sft = run.join("export/sft.jsonl");
    assert_eq!(check_sft(&sft, Syntax::Canonical, &actions) as i64, steps);

    // Another syntax into another folder: the turns parse back in it; a step the syntax cannot
    // express is counted, never written wrong.
    let sphinx = run.join("sphinx/sft.jsonl");
    let out = export(&run, &["--format", "sft", "--syntax", "sphinx", "--out", sphinx.to_str().unwrap()]);
    let n = check_sft(&sphinx, Syntax::Sphinx, &actions) as i64;
    let card = std::fs::read_to_string(run.join("sphinx/README.md")).unwrap();
    let counted = "- steps left out because `sphinx` cannot express their action: ";
    let inexpressible: i64 = card
        .lines()
        .find_map(|l| l.strip_prefix(counted))
        .unwrap_or_else(|| panic!("the card counts inexpressible steps:\n{card}"))
        .parse()
        .unwrap();
    assert_eq!(n + inexpressible, steps, "{out}");
    assert!(n > 0);
    let first: Value = lines(&sphinx).remove(0);
    assert!(
        first["messages"][0]["content"].as_str().unwrap().contains("SPHINX"),
        "the system turn names the syntax"
    );

    // Byte-identical on a re-export.
    let card = run.join("export/README.md");
    let (before, card_before) = (std::fs::read(&sft).unwrap(), std::fs::read(&card).unwrap());
    export(&run, &["--format", "sft"]);
    assert_eq!(std::fs::read(&sft).unwrap(), before, "re-export is byte-identical");
    assert_eq!(std::fs::read(&card).unwrap(), card_before, "the card too");

    // The dataset card: front matter the Hub reads, then what was kept.
    let card = String::from_utf8(card_before).unwrap();
    assert!(
        card.starts_with("---\nconfigs:\n- config_name: default\n  data_files: \"sft.jsonl\"\n"),
        "{card}"
    );
    assert!(card.contains("- config_name: trajectory\n  data_files: \"trajectory.jsonl\""), "{card}");
    for needle in [
        "license: apache-2.0",
        "task_categories:",
        "- suite: `starter`",
        "- agent: `reference`",
        "- seed: 0",
        "- episodes kept: 4 (4 verifier-confirmed)",
        "datasets.load_dataset(\"json\"",
    ] {
        assert!(card.contains(needle), "card lacks `{needle}`:\n{card}");
    }

    // Inline images: one self-contained file, the same records otherwise.
    let inline = run.join("inline/sft.jsonl");
    export(&run, &["--format", "sft", "--images", "inline", "--out", inline.to_str().unwrap()]);
    let inline_records = lines(&inline);
    assert_eq!(inline_records.len() as i64, steps);
    for (a, b) in inline_records.iter().zip(lines(&sft)) {
        let image = a["images"][0].as_str().unwrap();
        assert!(image.starts_with("data:image/png;base64,iVBORw0KGgo"), "a PNG data URL");
        assert_eq!(a["messages"], b["messages"], "only the image reference differs");
    }
    assert!(!run.join("inline/images").exists(), "inline copies no files");

    let _ = std::fs::remove_dir_all(&run);
}

#[test]
fn all_keeps_failures_with_reward_zero() {
    let run = tmp("random");
    let stdout = rollouts(&run, TASKS, "random", &["--max-steps", "4"]);
    let episodes = stored(&run);
    let confirmed = episodes.iter().filter(|(_, ok, _)| *ok).count();
    assert_eq!(confirmed, 0, "random play in 4 steps solves nothing: {episodes:?}");
    assert!(stdout.contains("verifier-confirmed: 0 of 4 scored episodes"), "{stdout}");
    assert!(stdout.contains("--all"), "the hint names --all when nothing is confirmed: {stdout}");

    let e = export_fails(&run, &["--format", "trajectory"]);
    assert!(e.contains("none of the 4 scored episodes was verifier-confirmed") && e.contains("--all"), "{e}");
    let out = export(&run, &["--format", "trajectory", "--all"]);
    assert!(
        out.contains(&format!("from {} episodes ({confirmed} verifier-confirmed)", episodes.len())),
        "{out}"
    );
    let records = lines(&run.join("export/trajectory.jsonl"));
    let steps: i64 = episodes.iter().map(|(_, _, n)| n).sum();
    assert_eq!(records.len() as i64, steps);
    for (key, ok, _) in &episodes {
        let mine: Vec<&Value> = records.iter().filter(|r| r["episode"] == key.as_str()).collect();
        let last = mine.last().unwrap();
        assert_eq!(last["done"], true);
        assert_eq!(last["success"], *ok);
        assert_eq!(last["reward"].as_f64(), Some(if *ok { 1.0 } else { 0.0 }), "{key}: {last}");
        assert!(mine.iter().all(|r| r["reward"].as_f64() == Some(0.0) || r["done"] == true));
    }
    let card = std::fs::read_to_string(run.join("export/README.md")).unwrap();
    assert!(card.contains("failures included with reward 0 (`--all`)"), "{card}");

    let _ = std::fs::remove_dir_all(&run);
}

#[test]
fn what_is_not_a_run_is_refused_with_a_message() {
    let root = tmp("not-a-run");
    std::fs::create_dir_all(&root).unwrap();
    let e = export_fails(&root, &["--format", "sft"]);
    assert!(e.contains("not a phonebench run folder") && e.contains("no results.sqlite"), "{e}");
    assert!(!root.join("results.lock").exists(), "nothing is created in a folder that is not a run");

    let e = export_fails(&root.join("missing"), &["--format", "sft"]);
    assert!(e.contains("no such folder"), "{e}");

    // Someone else's SQLite file under our name.
    let foreign = root.join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    let conn = rusqlite::Connection::open(foreign.join("results.sqlite")).unwrap();
    conn.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');").unwrap();
    drop(conn);
    let e = export_fails(&foreign, &["--format", "sft"]);
    assert!(e.contains("not a phonebench run folder") && e.contains("not ours"), "{e}");

    // A bad option value is clap's error (exit 2), never a panic.
    let output = bin().arg("export").arg(&root).args(["--format", "csv"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(text(&output).contains("sft or trajectory"));
    let output =
        bin().arg("export").arg(&root).args(["--format", "sft", "--syntax", "auto"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    let output = bin().args(["rollouts", "--suite", "starter"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "rollouts without --out: {}", text(&output));
    assert!(text(&output).contains("--out"));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn tampered_runs_and_bad_outputs_are_refused() {
    let run = tmp("tampered");
    rollouts(&run, "calendar.c*", "reference", &[]);
    let episodes = stored(&run);
    assert_eq!(episodes.len(), 2, "{episodes:?}");
    let steps: i64 = episodes.iter().map(|(_, _, n)| n).sum();

    // An unwritable output: under a regular file, and the run's own database.
    let blocker = run.join("blocker");
    std::fs::write(&blocker, "a file").unwrap();
    let e = export_fails(&run, &["--format", "sft", "--out", blocker.join("sft.jsonl").to_str().unwrap()]);
    assert!(
        e.contains("cannot write the export to") && e.contains("blocker"),
        "the error names the path: {e}"
    );
    let e = export_fails(&run, &["--format", "sft", "--out", run.join("results.sqlite").to_str().unwrap()]);
    assert!(e.contains("would write over the run's own `results.sqlite`"), "{e}");
    // Spellings through a folder that does not exist, and the run's other files, are refused
    // too; what was there is untouched.
    let before = std::fs::read(run.join("results.sqlite")).unwrap();
    let sneaky = format!("{}/nonexistent/../results.sqlite", run.display());
    let e = export_fails(&run, &["--format", "sft", "--out", &sneaky]);
    assert!(e.contains("run's own `results.sqlite`"), "{e}");
    assert_eq!(std::fs::read(run.join("results.sqlite")).unwrap(), before);
    for own in ["episodes.jsonl", "report/index.html"] {
        let e = export_fails(&run, &["--format", "sft", "--out", run.join(own).to_str().unwrap()]);
        assert!(e.contains("run's own"), "{own}: {e}");
    }
    // Outside the run: an existing file that is not an export, or a README that is not our
    // card beside the output, is never replaced.
    let elsewhere =
        run.parent().unwrap().join(format!("{}-elsewhere", run.file_name().unwrap().to_string_lossy()));
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("notes.txt"), "mine").unwrap();
    let e = export_fails(&run, &["--format", "sft", "--out", elsewhere.join("notes.txt").to_str().unwrap()]);
    assert!(e.contains("not a JSON Lines export"), "{e}");
    std::fs::write(elsewhere.join("README.md"), "# my project").unwrap();
    let e = export_fails(&run, &["--format", "sft", "--out", elsewhere.join("data.jsonl").to_str().unwrap()]);
    assert!(e.contains("not a phonebench dataset card"), "{e}");
    assert_eq!(std::fs::read_to_string(elsewhere.join("README.md")).unwrap(), "# my project");
    let _ = std::fs::remove_dir_all(&elsewhere);

    let db = rusqlite::Connection::open(run.join("results.sqlite")).unwrap();
    let key = &episodes[0].0;
    let edit = |step: i64, change: &dyn Fn(&mut Value)| {
        let data: String = db
            .query_row(
                "SELECT data FROM steps WHERE key = ?1 AND step = ?2",
                rusqlite::params![key, step],
                |r| r.get(0),
            )
            .unwrap();
        let mut value: Value = serde_json::from_str(&data).unwrap();
        change(&mut value);
        db.execute(
            "UPDATE steps SET data = ?3 WHERE key = ?1 AND step = ?2",
            rusqlite::params![key, step, value.to_string()],
        )
        .unwrap();
        data
    };

    // A format error: left out of SFT and counted; kept in the trajectory with a null action.
    edit(1, &|v| {
        v["action"] = Value::Null;
        v["format_error"] = "not an action".into();
        v["raw"] = "I think I will tap".into();
    });
    let out = export(&run, &["--format", "sft"]);
    assert!(out.contains("left out: 1 steps whose output did not parse"), "{out}");
    assert_eq!(lines(&run.join("export/sft.jsonl")).len() as i64, steps - 1);
    let card = std::fs::read_to_string(run.join("export/README.md")).unwrap();
    assert!(card.contains("did not parse (no action to learn): 1"), "{card}");
    export(&run, &["--format", "trajectory"]);
    let trajectory = lines(&run.join("export/trajectory.jsonl"));
    assert_eq!(trajectory.len() as i64, steps);
    let broken = trajectory.iter().find(|r| r["episode"] == key.as_str() && r["step"] == 1).unwrap();
    assert!(broken["action"].is_null() && broken["raw"] == "I think I will tap", "{broken}");

    // Screenshot paths that leave the run folder, absolute ones, and links are refused.
    std::fs::write(
        run.parent().unwrap().join(format!("secret-{}.png", std::process::id())),
        b"\x89PNG\r\n\x1a\n",
    )
    .unwrap();
    let original = edit(0, &|_| {});
    let original: Value = serde_json::from_str(&original).unwrap();
    let real = original["screenshot"].as_str().unwrap().to_string();
    for (stored, why) in
        [(format!("../secret-{}.png", std::process::id()), "`..`"), ("/etc/hostname".to_string(), "absolute")]
    {
        edit(0, &|v| v["screenshot"] = stored.clone().into());
        let e = export_fails(&run, &["--format", "sft"]);
        assert!(e.contains("refusing screenshot path") && e.contains(why) && e.contains(key.as_str()), "{e}");
    }
    #[cfg(unix)]
    {
        let link = run.join("screenshots/link.png");
        std::os::unix::fs::symlink(
            run.parent().unwrap().join(format!("secret-{}.png", std::process::id())),
            &link,
        )
        .unwrap();
        edit(0, &|v| v["screenshot"] = "screenshots/link.png".into());
        let e = export_fails(&run, &["--format", "trajectory", "--images", "inline"]);
        assert!(e.contains("symbolic link"), "{e}");
    }
    edit(0, &|v| v["screenshot"] = real.clone().into());
    export(&run, &["--format", "sft"]);

    // A link planted where an image goes is replaced, never written through.
    #[cfg(unix)]
    {
        let victim = run.join("victim.txt");
        std::fs::write(&victim, "keep me").unwrap();
        let image =
            run.join("export").join(lines(&run.join("export/sft.jsonl"))[0]["images"][0].as_str().unwrap());
        std::fs::remove_file(&image).unwrap();
        std::os::unix::fs::symlink(&victim, &image).unwrap();
        export(&run, &["--format", "sft"]);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert!(std::fs::symlink_metadata(&image).unwrap().is_file(), "the link was replaced by the image");
        // An export folder that is a link is refused.
        std::fs::rename(run.join("export"), run.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(run.join("elsewhere"), run.join("export")).unwrap();
        let e = export_fails(&run, &["--format", "sft"]);
        assert!(e.contains("symbolic link"), "{e}");
    }

    // An empty run (its episodes deleted) is named as such.
    db.execute_batch("DELETE FROM steps; DELETE FROM accounting; DELETE FROM episodes;").unwrap();
    let e = export_fails(&run, &["--format", "sft"]);
    assert!(e.contains("holds no episodes"), "{e}");
    drop(db);
    let _ = std::fs::remove_file(run.parent().unwrap().join(format!("secret-{}.png", std::process::id())));
    let _ = std::fs::remove_dir_all(&run);
}
