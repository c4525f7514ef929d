//! Opt-in: a few episodes end to end against a real llama.cpp `llama-server` with a real (tiny)
//! model. Run `tools/llama-server.sh` once (it builds the server and fetches the weights into
//! $PHONEBENCH_CACHE/llama), then `cargo test -p phonebench --test real_llm -- --ignored`.
//! Without the server or the model the test fails and says how to get them.
//!
//! The model (gemma-3-270m, a base model) cannot follow instructions, so the agent's config
//! passes llama.cpp's `grammar` field to force SPHINX's action format: the test checks the
//! plumbing on a real server (request shape, tokens, timings, parsing, episodes, results), not
//! the model's skill.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CONFIG: &str = r#"
name = "sphinx-react-gbnf"
design = "sphinx-react"
description = "SPHINX ReAct with llama.cpp's grammar forcing the action format"

[model]
temperature = 0.0
max_tokens = 48

[model.extra]
grammar = '''
root ::= "In summary, the next action I will perform is ```" action "```"
action ::= "click [" num "]" | "press [back]" | "press [stop]" | "swipe [" num "] [" dir "]"
num ::= [0-9] | [1-9] [0-9]
dir ::= "up" | "down"
'''

[prompts]
action = "builtin:sphinx-react/prompt.j2"
repair = "builtin:sphinx-react/repair.j2"
repair_system = "builtin:sphinx-react/repair_system.j2"
"#;

fn cache() -> PathBuf {
    std::env::var_os("PHONEBENCH_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/phonebench")))
        .expect("PHONEBENCH_CACHE or HOME")
}

fn found(var: &str, default: PathBuf) -> PathBuf {
    let path = std::env::var_os(var).map(PathBuf::from).unwrap_or(default);
    assert!(
        path.is_file(),
        "{} not found (set {var}, or run tools/llama-server.sh to build llama-server and fetch the model)",
        path.display()
    );
    path
}

/// Whether the server answers `GET /v1/models` with 200 (it answers 503 while loading).
fn ready(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    if stream.write_all(b"GET /v1/models HTTP/1.0\r\nHost: localhost\r\n\r\n").is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.ends_with(b"200")
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
#[ignore = "needs llama-server and a GGUF model: run tools/llama-server.sh, then --ignored"]
fn sphinx_react_runs_episodes_against_a_real_llama_server() {
    let binary = found("PHONEBENCH_LLAMA_SERVER", cache().join("llama/llama-server"));
    let model = found("PHONEBENCH_LLAMA_MODEL", cache().join("llama/gemma-3-270m-q4_k_m.gguf"));
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let server = Server(
        Command::new(&binary)
            .arg("-m")
            .arg(&model)
            .args([
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "-t",
                "2",
                "-c",
                "8192",
                "-np",
                "1",
                "--jinja",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("llama-server starts"),
    );
    let url = format!("http://127.0.0.1:{port}/v1");
    let started = Instant::now();
    while !ready(port) {
        assert!(started.elapsed() < Duration::from_secs(120), "llama-server did not come up");
        std::thread::sleep(Duration::from_millis(250));
    }

    let dir = std::env::temp_dir().join(format!("phonebench-real-llm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("agent.toml"), CONFIG).unwrap();
    let out = dir.join("out");
    let output = Command::new(env!("CARGO_BIN_EXE_phonebench"))
        .env("PHONEBENCH_CACHE", dir.join("cache"))
        .args(["run", "--suite", "starter", "--tasks", "settings.screen_timeout", "--instances", "2"])
        .args([
            "--max-steps",
            "3",
            "--cache",
            "off",
            "--quiet",
            "--save-screenshots",
            "--model",
            "gemma-3-270m",
        ])
        .args(["--base-url", &url, "--agent-config"])
        .arg(dir.join("agent.toml"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let episodes = common::episodes(&out);
    assert_eq!(episodes.len(), 2);
    for e in &episodes {
        assert!(e["infrastructure_error"].is_null(), "{e}");
        assert_eq!(e["format_errors"], 0, "the grammar keeps every answer parseable: {e}");
        assert!(e["usage"]["prompt_tokens"].as_u64().unwrap() > 500, "a real prompt was counted: {e}");
        assert!(e["model_calls"].as_u64().unwrap() >= 1);
    }
    assert!(out.join("report/index.html").is_file());
    drop(server);
    let _ = std::fs::remove_dir_all(dir);
}
