//! `phonebench mcp-server` driven by an MCP client we did not write: the official TypeScript
//! SDK's `Client` (npm `@modelcontextprotocol/sdk`, installed by tools/test.sh into tools/npm),
//! over stdio and over streamable HTTP. The client script (tools/npm/phone_client.mjs) lists the
//! tools, plays settings.flight_mode to success by reading screens and tapping labels, reads the
//! verdict, sends bad arguments and an unknown tool, and calls an MCP task's own tool.
//! Fails, never skips, when node or the package is missing.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn npm_dir() -> PathBuf {
    let dir = std::env::var_os("PHONEBENCH_NPM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tools/npm"));
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk/package.json").is_file(),
        "the MCP TypeScript SDK is not installed in {}: tools/test.sh installs it (or `npm ci --prefix tools/npm`)",
        dir.display()
    );
    dir
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the client script and returns its report.
fn client(args: &[&str]) -> serde_json::Value {
    let dir = npm_dir();
    let output = Command::new("node")
        .arg(dir.join("phone_client.mjs"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "client failed: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("client report {stdout:?}: {e}"))
}

fn check(report: &serde_json::Value) {
    let tools: Vec<&str> = report["tools"].as_array().unwrap().iter().filter_map(|t| t.as_str()).collect();
    for expected in [
        "start_task",
        "observe",
        "screenshot",
        "tap",
        "type_text",
        "scroll",
        "press_key",
        "open_app",
        "finish",
        "get_verdict",
    ] {
        assert!(tools.contains(&expected), "{expected} in {tools:?}");
    }
    assert_eq!(report["schemas_are_objects"], true);
    assert_eq!(report["listed_flight_mode"], true);
    assert_eq!(report["goal_shown"], true);
    assert_eq!(report["screenshot"], serde_json::json!(["image:image/png:true"]));
    assert_eq!(report["finished_says_over"], true);
    assert_eq!(report["success"], true, "the task was played to success: {report}");
    assert_eq!(report["acp"], 1.0);
    assert_eq!(report["bad_arguments"], "error -32602", "bad arguments are an MCP invalid-params error");
    assert_eq!(report["unknown_tool"], "error -32602");
    assert!(report["acting_after_the_end"].as_str().unwrap().contains("the episode is over"), "{report}");
    assert_eq!(
        report["task_tools"],
        serde_json::json!(["finance_quote", "finance_search_symbols", "finance_convert", "finance_rates"])
    );
    assert_eq!(report["task_tool_result"], true);
}

#[test]
fn the_typescript_sdk_client_plays_a_task_over_stdio() {
    let report = client(&["stdio", env!("CARGO_BIN_EXE_phonebench"), "mcp-server"]);
    check(&report);
}

/// Starts `phonebench mcp-server --http` on a free loopback port; returns it and its URL.
fn http_server(extra: &[&str], env: &[(&str, &str)]) -> (std::process::Child, Option<String>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_phonebench"))
        .args(["mcp-server", "--http"])
        .args(extra)
        .envs(env.iter().copied())
        .current_dir(repo())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let mut first = String::new();
    let stderr = child.stderr.take().unwrap();
    BufReader::new(stderr).read_line(&mut first).unwrap();
    let url = first.split_whitespace().find(|w| w.starts_with("http://")).map(str::to_string);
    (child, url, first)
}

#[test]
fn the_typescript_sdk_client_plays_a_task_over_streamable_http() {
    let (mut server, url, line) = http_server(&["127.0.0.1:0"], &[]);
    let url = url.unwrap_or_else(|| panic!("no URL in {line:?}"));
    let report = client(&["http", &url]);
    let _ = server.kill();
    check(&report);
}

#[test]
fn serving_beyond_loopback_needs_a_token_and_checks_it() {
    let (mut refused, _, line) = http_server(&["0.0.0.0:0"], &[]);
    let status = refused.wait().unwrap();
    assert!(!status.success());
    assert!(line.contains("needs a bearer token"), "{line}");

    let (mut server, url, line) =
        http_server(&["0.0.0.0:0", "--token-env", "PB_TEST_TOKEN"], &[("PB_TEST_TOKEN", "s3cret")]);
    let url = url.unwrap_or_else(|| panic!("no URL in {line:?}"));
    let port = url.rsplit(':').next().unwrap().trim_end_matches("/mcp").to_string();
    let post = |auth: Option<&str>| {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).unwrap();
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let auth = auth.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
        write!(
            s,
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        answer.lines().next().unwrap_or_default().to_string()
    };
    assert!(post(None).contains("401"), "no token");
    assert!(post(Some("wrong")).contains("401"), "wrong token");
    assert!(post(Some("s3cret")).contains("200"), "right token: {}", post(Some("s3cret")));
    let _ = server.kill();
}

/// A suite whose task names a server that only the run's `--mcp-config` defines: the reference
/// server over stdio. `validate` and `run` reach it, the reference passes, the summary and the
/// report show the MCP figures.
#[test]
fn a_run_configuration_names_servers_beyond_the_built_in_ones() {
    let dir = std::env::temp_dir().join(format!("phonebench-mcp-config-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("suite/tasks")).unwrap();
    std::fs::write(dir.join("suite/suite.toml"), "name = \"mcp-config\"\n").unwrap();
    std::fs::write(
        dir.join("suite/tasks/echo.toml"),
        r#"id = "echo.then_contacts"
category = "mcp"
goal = "Echo the word {{ w }} with the echo tool, then open Contacts."
apps = ["contacts"]
mcp_servers = ["everything"]
mcp_tools = ["everything_echo"]
reference = ['mcp everything_echo {"message": "{{ w }}"}', 'open contacts']

[params.w]
pool = ["tangerine", "marmalade"]

[[criteria]]
mcp = { tool = "everything_echo", result = { contains = "{{ w }}" }, ok = true }

[[criteria]]
screen = { app = "contacts" }
"#,
    )
    .unwrap();
    let entry = npm_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    std::fs::write(
        dir.join("mcp.toml"),
        format!(
            "call_timeout_s = 20\n[servers.everything]\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n",
            entry.display().to_string()
        ),
    )
    .unwrap();
    let phonebench = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_phonebench"))
            .args(args)
            .env("PHONEBENCH_CACHE", dir.join("cache"))
            .current_dir(repo())
            .output()
            .expect("runs");
        let text =
            format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        (output.status.success(), text)
    };
    let suite = dir.join("suite").display().to_string();
    let config = dir.join("mcp.toml").display().to_string();
    // Without the configuration the server is unknown, and validation says so.
    let (ok, text) = phonebench(&["validate", "--suite", &suite]);
    assert!(!ok && text.contains("no MCP server `everything`"), "{text}");
    let (ok, text) = phonebench(&["validate", "--suite", &suite, "--mcp-config", &config]);
    assert!(ok, "{text}");
    let out = dir.join("out").display().to_string();
    let (ok, text) = phonebench(&[
        "run",
        "--suite",
        &suite,
        "--mcp-config",
        &config,
        "--instances",
        "2",
        "--quiet",
        "--out",
        &out,
    ]);
    assert!(ok, "{text}");
    assert!(text.contains("MCP-err"), "the summary has the MCP figures: {text}");
    let episodes = std::fs::read_to_string(dir.join("out/episodes.jsonl")).unwrap();
    for line in episodes.lines() {
        let e: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!((e["success"].as_bool(), e["mcp_calls"].as_u64()), (Some(true), Some(1)), "{line}");
    }
    let index = std::fs::read_to_string(dir.join("out/report/index.html")).unwrap();
    assert!(index.contains("MCP call errors") && index.contains(">MCP errors<"), "the report has them too");
    let page = std::fs::read_dir(dir.join("out/report/episodes")).unwrap().next().unwrap().unwrap().path();
    let page = std::fs::read_to_string(page).unwrap();
    assert!(page.contains("everything_echo"), "the episode page shows the call");
    // Resuming with another configuration is refused: it shapes the episodes.
    std::fs::write(dir.join("other.toml"), "call_timeout_s = 5\n").unwrap();
    let other = dir.join("other.toml").display().to_string();
    let (ok, text) = phonebench(&[
        "run",
        "--suite",
        &suite,
        "--mcp-config",
        &other,
        "--instances",
        "2",
        "--quiet",
        "--resume",
        "--out",
        &out,
    ]);
    assert!(!ok && text.contains("mcp"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An `initialize` POST to `port`; the status line of the answer.
fn initialize(port: u16) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    answer.lines().next().unwrap_or_default().to_string()
}

#[test]
fn http_sessions_beyond_the_limit_are_refused() {
    let (mut server, url, line) = http_server(&["127.0.0.1:0", "--max-sessions", "2"], &[]);
    let url = url.unwrap_or_else(|| panic!("no URL in {line:?}"));
    let port: u16 = url.trim_end_matches("/mcp").rsplit(':').next().unwrap().parse().unwrap();
    assert!(initialize(port).contains("200"));
    assert!(initialize(port).contains("200"));
    assert!(initialize(port).contains("500"), "a third phone is refused");
    let _ = server.kill();
}

/// The Python SDK's client (PyPI `mcp`, installed by tools/test.sh into tools/py/.venv) plays
/// the same task through `phonebench mcp-server`, over stdio and over streamable HTTP.
#[test]
fn the_python_sdk_client_plays_a_task_over_stdio_and_http() {
    let python = phonebench_testkit::venv_python();
    let play = |args: &[&str]| {
        let output = Command::new(&python)
            .arg(repo().join("tools/py/phone_client.py"))
            .args(args)
            .current_dir(repo())
            .output()
            .expect("python runs");
        let stdout = String::from_utf8_lossy(&output.stdout).to_string();
        assert!(
            output.status.success(),
            "client failed: {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
        assert_eq!(report["success"], true, "{report}");
        assert_eq!(report["goal_shown"], true, "{report}");
        assert_eq!(report["screenshot"], serde_json::json!(["image:image/png"]), "{report}");
        assert!(report["tools"].as_array().unwrap().iter().any(|t| t == "start_task"), "{report}");
    };
    play(&["stdio", env!("CARGO_BIN_EXE_phonebench"), "mcp-server"]);
    let (mut server, url, line) = http_server(&["127.0.0.1:0"], &[]);
    let url = url.unwrap_or_else(|| panic!("no URL in {line:?}"));
    play(&["http", &url]);
    let _ = server.kill();
}

/// `phonebench mcp-tools serve` puts a built-in server on stdio and on HTTP, and `mcp-tools
/// call` reaches it there through a configuration, with the same answer as in-process.
#[test]
fn built_in_servers_serve_over_stdio_and_http() {
    let dir = std::env::temp_dir().join(format!("phonebench-mcp-serve-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let bin = env!("CARGO_BIN_EXE_phonebench");
    let mut http = Command::new(bin)
        .args(["mcp-tools", "serve", "weather", "--http", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(http.stderr.take().unwrap()).read_line(&mut first).unwrap();
    let url =
        first.split_whitespace().find(|w| w.starts_with("http://")).unwrap_or_else(|| panic!("{first}"));
    std::fs::write(
        dir.join("mcp.toml"),
        format!("[servers.w]\nurl = {url:?}\n[servers.f]\ncommand = {bin:?}\nargs = [\"mcp-tools\", \"serve\", \"finance\"]\n"),
    )
    .unwrap();
    let config = dir.join("mcp.toml").display().to_string();
    let call = |server: &str, tool: &str, arguments: &str, extra: &[&str]| {
        let output = Command::new(bin)
            .args(["mcp-tools", "call", server, tool, arguments])
            .args(extra)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).to_string()
    };
    let forecast = r#"{"city": "Lisbon", "date": "2026-03-14"}"#;
    assert_eq!(
        call("w", "forecast", forecast, &["--mcp-config", &config]),
        call("weather", "forecast", forecast, &[])
    );
    let convert = r#"{"amount": 120, "from": "EUR", "to": "USD"}"#;
    let over_stdio = call("f", "convert", convert, &["--mcp-config", &config]);
    assert!(over_stdio.contains("\"result\": 130.43"), "{over_stdio}");
    let _ = http.kill();
    let _ = http.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
