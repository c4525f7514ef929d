//! `phonebench probe`, `profile` and `report` through the binary, against `phonebench
//! mock-model` (a real HTTP server in its own process) and SPHINX's real data files: figures
//! equal what the scripted answers must score on those files, items export deterministically,
//! and the profile comes out as a table, JSON and a PNG.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::bin;

/// Every MCQ is answered `A`, every BQ `T`, every completion `NO`, every action `click [0]`.
const SCRIPT: &str = r#"
[[rule]]
contains = "Please answer with only the option character"
reply = "A"

[[rule]]
contains = "Please answer with only 'T'"
reply = "T"

[[rule]]
contains = "say YES, else say NO"
reply = "NO"

[[rule]]
reply = "In summary, the next action I will perform is ```click [0]```"
"#;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-probe-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{:?} failed:\n{}", cmd, String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn figures(stdout: &str) -> Vec<serde_json::Value> {
    stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn value(figures: &[serde_json::Value], mode: &str, measure: &str) -> (u64, f64) {
    let f = figures
        .iter()
        .find(|f| f["mode"] == mode && f["measure"] == measure)
        .unwrap_or_else(|| panic!("no {mode} {measure} in {figures:?}"));
    (f["n"].as_u64().unwrap(), f["original"].as_f64().unwrap())
}

#[test]
fn probes_on_sphinx_data_score_as_the_scripted_answers_must_and_the_profile_is_drawn() {
    let dir = tmp("sphinx");
    let cache = dir.join("cache");
    let sphinx = phonebench_testkit::shared("sphinx-data");
    std::fs::write(dir.join("script.toml"), SCRIPT).unwrap();
    let mut mock = Command::new(env!("CARGO_BIN_EXE_phonebench"))
        .args(["mock-model", "--script"])
        .arg(dir.join("script.toml"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(mock.stdout.take().unwrap()).read_line(&mut url).unwrap();
    let url = url.trim().to_string();
    let out = dir.join("results");
    let probe = |probe: &str, extra: &[&str]| {
        let mut cmd = bin(&cache);
        cmd.args(["probe", probe, "--data", "sphinx", "--sphinx-data"])
            .arg(&sphinx)
            .args(["--model", "mock-7b", "--base-url", &url, "--json", "--quiet", "--out"])
            .arg(&out)
            .args(extra);
        figures(&run_ok(&mut cmd))
    };

    // Knowledge over the first 20 questions: the MCQ is right when the answer is A; of the four
    // BQs (all answered T) exactly the one at the answer is right.
    let questions: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(sphinx.join("questions.json")).unwrap()).unwrap();
    let knowledge = probe("knowledge", &["--limit", "20"]);
    for kind in ["app_level", "intention_level"] {
        let of_kind: Vec<&serde_json::Value> =
            questions[..20].iter().filter(|q| q["question_type"] == kind).collect();
        let a = of_kind.iter().filter(|q| q["ground_truth"] == "A").count();
        let expected = (a + of_kind.len()) as f64 / (5 * of_kind.len()) as f64;
        let (n, accuracy) = value(&knowledge, "text", &format!("accuracy:{kind}"));
        assert_eq!(n as usize, 5 * of_kind.len());
        assert!((accuracy - expected).abs() < 1e-9, "{kind}: {accuracy} vs {expected}");
    }

    // Completion over SPHINX's reference trajectories: always NO is right on every screen but
    // the last; one item per screen (the stop's included), one trajectory per folder.
    let completion = probe("completion", &[]);
    let screens: usize = std::fs::read_dir(sphinx.join("groundtruth"))
        .unwrap()
        .flat_map(|task| std::fs::read_dir(task.unwrap().path()).unwrap())
        .map(|app| {
            let meta: Vec<serde_json::Value> = serde_json::from_str(
                &std::fs::read_to_string(app.unwrap().path().join("meta.json")).unwrap(),
            )
            .unwrap();
            meta.len()
        })
        .sum();
    let (last_n, last) = value(&completion, "tree", "last");
    let (pre_n, pre) = value(&completion, "tree", "pre");
    assert!(last_n >= 10, "{last_n} trajectories");
    assert_eq!((last, pre), (0.0, 1.0));
    assert_eq!((last_n + pre_n) as usize, screens);
    assert_eq!(value(&completion, "action", "overall"), (last_n, 0.0));

    // The folder's profile: a table, JSON, a PNG; the report shows the radar.
    let table = run_ok(bin(&cache).arg("profile").arg(&out).args(["--png"]).arg(dir.join("radar.png")));
    assert!(table.contains("Goal understanding") && table.contains("mock-7b"), "{table}");
    let png = std::fs::read(dir.join("radar.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000);
    let json = run_ok(bin(&cache).arg("profile").arg(&out).arg("--json"));
    let profile: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(profile["model"], "mock-7b");
    assert_eq!(profile["dimensions"]["planning"], 0.5);
    assert!(profile["dimensions"]["mcp_use"].is_null());
    run_ok(bin(&cache).arg("report").arg(&out));
    let index = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    assert!(index.contains("class=\"radar\"") && index.contains("Capabilities"));

    // A second identical probe reads every answer from the cache: no server needed.
    let _ = mock.kill();
    let _ = mock.wait();
    let again = tmp("again");
    let mut cmd = bin(&cache);
    cmd.args(["probe", "knowledge", "--data", "sphinx", "--sphinx-data"])
        .arg(&sphinx)
        .args([
            "--model",
            "mock-7b",
            "--base-url",
            &url,
            "--json",
            "--quiet",
            "--limit",
            "20",
            "--cache",
            "replay",
            "--out",
        ])
        .arg(&again);
    assert_eq!(figures(&run_ok(&mut cmd)), knowledge);
    assert_eq!(
        std::fs::read_to_string(again.join("probes.jsonl"))
            .unwrap()
            .lines()
            .filter(|l| l.contains("\"knowledge\""))
            .count(),
        20
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&again);
}

#[test]
fn generated_items_export_deterministically_without_a_model() {
    let dir = tmp("export");
    let export = |file: &str| {
        run_ok(
            bin(&dir.join("cache"))
                .args(["probe", "grounding", "--suite", "full:contacts", "--limit", "40", "--export"])
                .arg(dir.join(file)),
        );
        std::fs::read_to_string(dir.join(file)).unwrap()
    };
    let first = export("a.jsonl");
    assert_eq!(first, export("b.jsonl"), "the same items, byte for byte");
    let items: Vec<serde_json::Value> = first.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(items.len(), 40);
    for item in &items {
        assert_eq!(item["probe"], "grounding");
        assert!(item["id"].as_str().unwrap().starts_with("gen:"));
        assert!(item["screen"]["xml"].as_str().unwrap().starts_with("<?xml"));
        assert!(item["instruction"].as_str().unwrap().ends_with('.'));
    }
    // Unknown modes and a missing model are clear errors.
    let bad = bin(&dir.join("cache")).args(["probe", "completion", "--modes", "som"]).output().unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no mode `som` (its modes: tree, action, image)"));
    let _ = std::fs::remove_dir_all(&dir);
}
