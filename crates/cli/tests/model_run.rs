//! A model-driven run through the binary against `phonebench mock-model` (a real HTTP server in
//! its own process): the starter suite with `sphinx-react`, raw outputs, tokens and format
//! errors recorded; the server killed mid-run gives infrastructure failures that `--resume`
//! completes to the results of an uninterrupted run; a second identical run reads every answer
//! from the response cache (zero new tokens, byte-identical `episodes.jsonl`), even with no
//! server at all.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{bin, episodes, stored_episodes};

/// A sphinx-react "model": the first indexed element of the tree is clicked; screens showing
/// "Display" get an answer without the fenced action (a format error the repair call fixes).
const SCRIPT: &str = r#"
[[rule]]
scope = "all"
contains = "fixing an output"
reply = "In summary, the next action I will perform is ```press [back]```"

[[rule]]
contains = "text: Display"
reply = "I would click on Display now."

[[rule]]
regex = '\n\t*\[(\d+)\] a View'
reply = "Let me look around. In summary, the next action I will perform is ```click [$1]```"
delay_ms = 5

[[rule]]
reply = "In summary, the next action I will perform is ```press [back]```"
"#;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-model-run-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A mock server process on `addr`; returns it and its base URL.
fn mock(script: &Path, addr: &str, log: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_phonebench"))
        .args(["mock-model", "--script"])
        .arg(script)
        .args(["--addr", addr, "--log"])
        .arg(log)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the mock starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the mock prints its URL");
    let url = line.trim().to_string();
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/v1"), "{url}");
    (child, url)
}

fn run_args(url: &str, out: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        "--suite",
        "starter",
        "--agent",
        "sphinx-react",
        "--model",
        "mock-7b",
        "--base-url",
        url,
        "--max-steps",
        "3",
        "--quiet",
        "--no-report",
        "--max-retries",
        "1",
        "--retry-base-ms",
        "20",
        "--concurrency",
        "2",
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(out.display().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// `(calls, cached calls, new prompt tokens, new completion tokens)` summed over a folder.
fn spent(out: &Path) -> (u64, u64, u64, u64) {
    let c = rusqlite::Connection::open_with_flags(
        out.join("results.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut stmt = c.prepare("SELECT data FROM accounting").unwrap();
    let rows: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    rows.iter().fold((0, 0, 0, 0), |acc, text| {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let n = |k: &str| v[k].as_u64().unwrap();
        (
            acc.0 + n("calls"),
            acc.1 + n("cached_calls"),
            acc.2 + n("new_prompt_tokens"),
            acc.3 + n("new_completion_tokens"),
        )
    })
}

fn requests_logged(log: &Path) -> usize {
    std::fs::read_to_string(log).map(|t| t.lines().count()).unwrap_or(0)
}

#[test]
fn a_model_run_records_outputs_survives_a_dead_server_and_replays_from_the_cache() {
    let root = tmp("root");
    std::fs::create_dir_all(&root).unwrap();
    let script = root.join("script.toml");
    std::fs::write(&script, SCRIPT).unwrap();
    let log = root.join("requests.jsonl");
    let (mut server, url) = mock(&script, "127.0.0.1:0", &log);
    let addr = url.trim_start_matches("http://").trim_end_matches("/v1").to_string();

    // 1. An uninterrupted run, cache off: the baseline.
    let cache_off = root.join("cache-off");
    let whole = root.join("whole");
    let output = bin(&cache_off).args(run_args(&url, &whole, &["--cache", "off"])).output().unwrap();
    assert!(
        output.status.success(),
        "the uninterrupted run completes: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let eps = episodes(&whole);
    assert!(eps.len() >= 40, "the whole starter suite ran: {}", eps.len());
    assert!(eps.iter().all(|e| e["infrastructure_error"].is_null()));
    assert!(eps.iter().all(|e| e["usage"]["prompt_tokens"].as_u64().unwrap() > 0), "tokens per episode");
    assert!(eps.iter().any(|e| e["format_errors"].as_u64().unwrap() > 0), "format errors are counted");
    assert!(eps.iter().all(|e| e["original"].is_object()), "repairing agents carry the original score");
    let db = rusqlite::Connection::open(whole.join("results.sqlite")).unwrap();
    let raws: Vec<String> = db
        .prepare("SELECT data FROM steps")
        .unwrap()
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let steps: Vec<serde_json::Value> = raws.iter().map(|t| serde_json::from_str(t).unwrap()).collect();
    let acted: Vec<&serde_json::Value> = steps.iter().filter(|s| s["action"].is_object()).collect();
    assert!(acted.iter().all(|s| !s["raw"].as_str().unwrap().is_empty() && s["calls"].is_array()));
    assert!(
        acted.iter().any(|s| s["raw"] == "I would click on Display now."),
        "raw outputs are stored verbatim"
    );

    // 2. The same run, killed server mid-way: infrastructure failures, an incomplete run (exit 3).
    let cache_kill = root.join("cache-kill");
    let killed = root.join("killed");
    let mut run = bin(&cache_kill)
        .args(run_args(&url, &killed, &["--cache", "off"]))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while stored_episodes(&killed) < 6 {
        assert!(started.elapsed() < Duration::from_secs(600), "no episode stored in time");
        assert!(run.try_wait().unwrap().is_none(), "the run ended before the server could be killed");
        std::thread::sleep(Duration::from_millis(5));
    }
    server.kill().unwrap();
    server.wait().unwrap();
    let status = run.wait().unwrap();
    assert_eq!(status.code(), Some(3), "a run with infrastructure failures exits 3");
    let partial = rusqlite::Connection::open(killed.join("results.sqlite")).unwrap();
    let infra: i64 = partial
        .query_row("SELECT count(*) FROM episodes WHERE infrastructure_error IS NOT NULL", [], |r| r.get(0))
        .unwrap();
    assert!(infra > 0, "the dead server shows as infrastructure failures");
    let message: String = partial
        .query_row(
            "SELECT infrastructure_error FROM episodes WHERE infrastructure_error IS NOT NULL LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(message.contains("unreachable"), "{message}");

    // The server comes back on the same address; --resume completes the run exactly.
    let (mut server, url2) = mock(&script, &addr, &log);
    assert_eq!(url, url2);
    let output =
        bin(&cache_kill).args(run_args(&url, &killed, &["--cache", "off", "--resume"])).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(
        std::fs::read(whole.join("episodes.jsonl")).unwrap(),
        std::fs::read(killed.join("episodes.jsonl")).unwrap(),
        "killed + resumed equals uninterrupted"
    );

    // 3. With the cache (a slice of the suite, to keep the test short): a first run fills it, a
    // second identical run reads every answer from it.
    let cache = root.join("cache");
    let first = root.join("first");
    let slice = ["--tasks", "contacts.*"];
    assert!(bin(&cache).args(run_args(&url, &first, &slice)).output().unwrap().status.success());
    let (calls, cached, _, _) = spent(&first);
    assert!(calls > cached, "the first run asked the server");
    let before = requests_logged(&log);
    let second = root.join("second");
    let output = bin(&cache).args(run_args(&url, &second, &slice)).output().unwrap();
    assert!(output.status.success());
    assert_eq!(requests_logged(&log), before, "no request reached the server");
    let (calls2, cached2, prompt2, completion2) = spent(&second);
    assert_eq!((cached2, prompt2, completion2), (calls2, 0, 0), "every call from the cache, zero new tokens");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!(
            "model calls this run: {calls2} ({calls2} from the cache); new tokens: 0 prompt, 0 completion"
        )),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read(first.join("episodes.jsonl")).unwrap(),
        std::fs::read(second.join("episodes.jsonl")).unwrap(),
        "byte-identical episodes.jsonl"
    );

    // Replay-only needs no server at all; a request it has not recorded is an infrastructure
    // failure, not the agent's.
    server.kill().unwrap();
    server.wait().unwrap();
    let replayed = root.join("replayed");
    let output = bin(&cache)
        .args(run_args(&url, &replayed, &["--cache", "replay", "--tasks", "contacts.*"]))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(
        std::fs::read(first.join("episodes.jsonl")).unwrap(),
        std::fs::read(replayed.join("episodes.jsonl")).unwrap()
    );
    let other = root.join("other-model");
    let args: Vec<String> =
        run_args(&url, &other, &["--cache", "replay", "--tasks", "settings.screen_timeout"])
            .into_iter()
            .map(|a| if a == "mock-7b" { "another-model".to_string() } else { a })
            .collect();
    let output = bin(&cache).args(args).output().unwrap();
    assert_eq!(output.status.code(), Some(3));
    let e = &episodes(&other)[0];
    assert!(e["infrastructure_error"].as_str().unwrap().contains("replay-only cache"), "{e}");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn unknown_agents_and_missing_servers_are_clear_errors() {
    let cache = tmp("errors-cache");
    let out = bin(&cache).args(["run", "--agent", "gpt4", "--out"]).arg(tmp("gpt4")).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown agent `gpt4`")
            && err.contains("sphinx-react")
            && err.contains("--agent-config"),
        "{err}"
    );
    let out = bin(&cache).args(["run", "--agent", "t3a", "--out"]).arg(tmp("t3a")).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--base-url"), "{err}");
    let out = bin(&cache)
        .args(["run", "--agent", "t3a", "--base-url", "localhost:1/v1", "--model", "m", "--out"])
        .arg(tmp("bad-url"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("http://"));
    let out = bin(&cache).args(["agents"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for name in ["reference", "sphinx-react", "t3a", "m3a", "reflexion", "planner-executor", "coords"] {
        assert!(text.contains(name), "{text}");
    }
    // Every built-in agent exports to a self-contained folder that loads back (templates beside
    // it, shared ones in sub-folders) and builds.
    let export = tmp("export");
    for name in ["sphinx-react", "t3a", "m3a", "reflexion", "planner-executor", "coords"] {
        let dir = export.join(name);
        let out = bin(&cache).args(["agents", "--export", name, "--out"]).arg(&dir).output().unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let toml = std::fs::read_to_string(dir.join("agent.toml")).unwrap();
        assert!(!toml.contains("builtin:"), "{toml}");
        let out = bin(&cache)
            .args(["run", "--agent-config"])
            .arg(dir.join("agent.toml"))
            .args([
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "m",
                "--tasks",
                "nothing-matches",
                "--out",
            ])
            .arg(tmp(&format!("exported-{name}")))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no task matches"), "{name}: {err}");
        // A second export into the same folder writes nothing.
        let out = bin(&cache).args(["agents", "--export", name, "--out"]).arg(&dir).output().unwrap();
        assert!(!out.status.success());
    }
    for file in [
        "reflexion/sphinx-react/prompt.j2",
        "reflexion/critic.j2",
        "coords/qwen3-vl/system.j2",
        "coords/qwen2.5-vl/system.j2",
    ] {
        assert!(export.join(file).is_file(), "{file}");
    }
    let _ = std::fs::remove_dir_all(export);

    // Resuming with other settings is refused, naming what differs.
    let folder = tmp("resume-diff");
    let noop = |extra: &[&str]| {
        bin(&cache)
            .args(["run", "--agent", "noop", "--tasks", "contacts.create", "--quiet", "--no-report", "--out"])
            .arg(&folder)
            .args(extra)
            .output()
            .unwrap()
    };
    assert!(noop(&[]).status.success());
    let out = noop(&["--resume", "--max-steps", "5", "--stop-on-repetition"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("max_steps: - → 5") && err.contains("stop_on_repetition: - → true"), "{err}");
    assert!(noop(&["--resume"]).status.success(), "the same settings resume");
    let _ = std::fs::remove_dir_all(folder);
}
