//! Interop with a server we did not write: the MCP project's reference server
//! `@modelcontextprotocol/server-everything` (npm, installed by tools/test.sh into tools/npm),
//! over stdio and over streamable HTTP. Fails, never skips, when node or the package is missing.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use phonebench_mcp::{McpConfig, McpSession, Transport};
use serde_json::{Map, Value, json};

/// The installed server's entry point.
fn everything() -> PathBuf {
    let npm = std::env::var_os("PHONEBENCH_NPM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tools/npm"));
    let entry = npm.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        entry.is_file(),
        "{} is missing: tools/test.sh installs it (or run `npm ci --prefix tools/npm`)",
        entry.display()
    );
    entry
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

async fn exercise(session: &mut McpSession) {
    let names: Vec<&str> = session.tools().iter().map(|t| t.name.as_str()).collect();
    for expected in ["everything_echo", "everything_get-sum", "everything_get-tiny-image"] {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }
    let sum = session.tools().iter().find(|t| t.name == "everything_get-sum").unwrap();
    assert_eq!(sum.input_schema["type"], "object", "the schema comes through as the server sent it");
    let r = session.call("everything_get-sum", &args(json!({"a": 5, "b": 7}))).await;
    assert!(!r.is_error, "{r:?}");
    assert!(r.text.contains("12"), "{}", r.text);
    let echo = session.call("everything_echo", &args(json!({"message": "héllo ✓"}))).await;
    assert!(echo.text.contains("héllo ✓"), "{}", echo.text);
    let image = session.call("everything_get-tiny-image", &Map::new()).await;
    assert!(image.text.contains("[image: image/png"), "{}", image.text);
    // The server validates arguments itself: a bad call is an error the agent reads, not a failure.
    let bad = session.call("everything_get-sum", &args(json!({"a": "five"}))).await;
    assert!(bad.is_error && bad.failure.is_none(), "{bad:?}");
}

#[tokio::test]
async fn lists_and_calls_tools_over_stdio() {
    let mut config = McpConfig::default();
    config.servers.insert(
        "everything".into(),
        Transport::Stdio {
            command: "node".into(),
            args: vec![everything().display().to_string(), "stdio".into()],
            env: Default::default(),
            cwd: None,
        },
    );
    let mut session =
        McpSession::connect(&["everything".to_string()], &[], &config).await.expect("connects over stdio");
    exercise(&mut session).await;
    session.close().await;
}

#[tokio::test]
async fn lists_and_calls_tools_over_streamable_http() {
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let mut server = tokio::process::Command::new("node")
        .arg(everything())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node starts");
    // Wait (bounded) until the server accepts connections.
    let mut up = false;
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(up, "server-everything did not listen on port {port}");
    let mut config = McpConfig::default();
    config.servers.insert(
        "everything".into(),
        Transport::Http { url: format!("http://127.0.0.1:{port}/mcp"), bearer_token_env: None },
    );
    let mut session =
        McpSession::connect(&["everything".to_string()], &[], &config).await.expect("connects over HTTP");
    exercise(&mut session).await;
    session.close().await;
    let _ = server.kill().await;
}
