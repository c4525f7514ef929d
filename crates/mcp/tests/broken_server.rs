//! A server that crashes, hangs, writes something that is not JSON or answers with the wrong
//! shape mid-session: every call still returns an outcome the agent can read, marked as a server
//! failure, within the call timeout; nothing panics or waits forever.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use phonebench_mcp::{McpConfig, McpSession, Transport};
use serde_json::Map;

fn broken_config(call_timeout_s: f64) -> McpConfig {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/broken_server.py");
    let mut config = McpConfig { call_timeout_s, ..McpConfig::default() };
    config.servers.insert(
        "broken".into(),
        Transport::Stdio {
            command: "python3".into(),
            args: vec![script.display().to_string()],
            env: Default::default(),
            cwd: None,
        },
    );
    config
}

async fn session(config: &McpConfig) -> McpSession {
    McpSession::connect(&["broken".to_string()], &[], config)
        .await
        .expect("the broken server starts and lists its tools")
}

#[tokio::test]
async fn a_tool_error_is_the_agents_to_read_not_a_failure() {
    let config = broken_config(5.0);
    let mut s = session(&config).await;
    assert_eq!(s.tools().len(), 6);
    let ok = s.call("broken_ok", &Map::new()).await;
    assert_eq!((ok.text.as_str(), ok.is_error, ok.failure.is_none()), ("fine", false, true));
    let e = s.call("broken_tool_error", &Map::new()).await;
    assert!(e.is_error && e.failure.is_none(), "{e:?}");
    assert_eq!(e.text, "error: no such city");
    s.close().await;
}

#[tokio::test]
async fn a_crash_fails_this_call_and_every_later_one_at_once() {
    let config = broken_config(5.0);
    let mut s = session(&config).await;
    let crash = s.call("broken_crash", &Map::new()).await;
    assert!(crash.is_error && crash.failure.is_some(), "{crash:?}");
    assert!(crash.text.starts_with("error: the MCP server failed"), "{}", crash.text);
    // A stopped server is not called (nor waited for) again: the call fails with why it stopped.
    let later = s.call("broken_ok", &Map::new()).await;
    assert!(later.failure.as_deref().is_some_and(|f| f.contains("has stopped")), "{later:?}");
    s.close().await;
}

#[tokio::test]
async fn a_hang_ends_at_the_call_timeout() {
    let config = broken_config(1.0);
    let mut s = session(&config).await;
    let hang = s.call("broken_hang", &Map::new()).await;
    assert!(hang.failure.as_deref().is_some_and(|f| f.contains("did not answer within 1 s")), "{hang:?}");
    s.close().await;
}

#[tokio::test]
async fn garbage_and_wrong_shapes_are_failures() {
    let config = broken_config(2.0);
    let mut s = session(&config).await;
    let garbage = s.call("broken_garbage", &Map::new()).await;
    assert!(garbage.is_error && garbage.failure.is_some(), "{garbage:?}");
    let mut s = session(&config).await;
    let shape = s.call("broken_wrong_shape", &Map::new()).await;
    assert!(shape.is_error && shape.failure.is_some(), "{shape:?}");
    s.close().await;
}

#[tokio::test]
async fn a_server_that_does_not_start_is_a_connect_error() {
    let mut config = McpConfig { connect_timeout_s: 5.0, ..McpConfig::default() };
    config.servers.insert(
        "missing".into(),
        Transport::Stdio {
            command: "/nonexistent/mcp-server".into(),
            args: vec![],
            env: Default::default(),
            cwd: None,
        },
    );
    let e = McpSession::connect(&["missing".to_string()], &[], &config).await.unwrap_err();
    assert!(e.to_string().contains("missing"), "{e}");
    let e = McpSession::connect(&["nowhere".to_string()], &[], &config).await.unwrap_err();
    assert!(e.to_string().contains("no MCP server `nowhere`"), "{e}");
}
