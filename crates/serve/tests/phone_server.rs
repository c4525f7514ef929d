//! The phone's MCP tools called directly (the transports are tested with real clients in
//! `crates/cli/tests/mcp_interop.rs`): set-of-marks numbered as `tap` reads them, a failed
//! start that leaves the episode as it was, the run's failure policy, task tools whose errors
//! are errors, `ask_user`, and the session limit.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use phonebench_mcp::{FailurePolicy, McpConfig, Transport};
use phonebench_phone::Catalog;
use phonebench_serve::{PhoneServer, PhoneServerConfig, SessionLimit};
use phonebench_tasks::Suite;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn server(mcp: McpConfig) -> PhoneServer {
    PhoneServer::new(PhoneServerConfig {
        catalog: Catalog::load_dir(&repo().join("apps")).unwrap(),
        suite: Arc::new(Suite::load(&repo().join("suites/starter")).unwrap()),
        mcp: Arc::new(mcp),
    })
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| if let ContentBlock::Text(t) = c { Some(t.text.clone()) } else { None })
        .collect()
}

fn is_error(r: &CallToolResult) -> bool {
    r.is_error == Some(true)
}

fn broken(policy: FailurePolicy) -> McpConfig {
    let script = repo().join("crates/mcp/tests/fixtures/broken_server.py");
    let mut config = McpConfig { on_server_failure: policy, call_timeout_s: 2.0, ..McpConfig::default() };
    config.servers.insert(
        "finance".into(),
        Transport::Stdio {
            command: "python3".into(),
            args: vec![script.display().to_string()],
            env: Default::default(),
            cwd: None,
        },
    );
    config
}

#[tokio::test]
async fn set_of_marks_are_numbered_as_the_episode_observation() {
    for format in ["sphinx-tree", "androidworld"] {
        let s = server(McpConfig::default());
        s.call("start_task", &args(json!({"task_id": "settings.flight_mode", "format": format})))
            .await
            .unwrap();
        let shot = s.call("screenshot", &args(json!({"som": true}))).await.unwrap();
        let Some(ContentBlock::Image(image)) = shot.content.first() else { panic!("an image") };
        let png = base64::engine::general_purpose::STANDARD.decode(&image.data).unwrap();
        // Drawn again from the episode's own observation (the indexes `tap` resolves), in the
        // style of its format: the same bytes.
        let catalog = Catalog::load_dir(&repo().join("apps")).unwrap();
        let suite = Suite::load(&repo().join("suites/starter")).unwrap();
        let spec = suite.tasks.iter().find(|t| t.id == "settings.flight_mode").unwrap();
        let task = phonebench_runner::instantiate(&catalog, spec, 0, 0).unwrap();
        let options =
            phonebench_env::EpisodeOptions { format: format.parse().unwrap(), ..Default::default() };
        let mut episode = phonebench_env::Episode::start(&catalog, &task, options).unwrap();
        let mut pixmap = episode.screen_image().unwrap().pixmap().unwrap().clone();
        let style = if format == "sphinx-tree" {
            phonebench_pixels::SomStyle::Sphinx
        } else {
            phonebench_pixels::SomStyle::AndroidWorld
        };
        let tree = episode.tree().clone();
        phonebench_pixels::draw_marks(&mut pixmap, &tree, &episode.observation().targets, style);
        assert_eq!(png, phonebench_pixels::encode_png(&pixmap).unwrap(), "{format}");
    }
}

#[tokio::test]
async fn a_start_that_fails_leaves_the_current_episode_as_it_was() {
    let mut config = McpConfig::default();
    config.servers.insert(
        "geo".into(),
        Transport::Stdio {
            command: "/nonexistent/geo".into(),
            args: vec![],
            env: Default::default(),
            cwd: None,
        },
    );
    let s = server(config);
    s.call("start_task", &args(json!({"task_id": "mcp.convert_and_text"}))).await.unwrap();
    let failed = s.call("start_task", &args(json!({"task_id": "mcp.geo_dinner_email"}))).await.unwrap();
    assert!(is_error(&failed) && text(&failed).contains("the current episode goes on"), "{}", text(&failed));
    assert!(text(&s.call("get_goal", &Map::new()).await.unwrap()).contains("finance tool"));
    let tools = text(&s.call("task_tools", &Map::new()).await.unwrap());
    assert!(tools.contains("finance_convert"), "{tools}");
    let call = s
        .call(
            "call_task_tool",
            &args(json!({"tool": "finance_convert", "arguments": {"amount": 1, "from": "USD", "to": "EUR"}})),
        )
        .await
        .unwrap();
    assert!(!is_error(&call) && text(&call).contains("0.92"), "{}", text(&call));
}

#[tokio::test]
async fn task_tool_errors_are_errors_and_the_failure_policy_holds() {
    let s = server(broken(FailurePolicy::Feedback));
    s.call("start_task", &args(json!({"task_id": "mcp.convert_and_text"}))).await.unwrap();
    let unknown = s.call("call_task_tool", &args(json!({"tool": "finance_nope"}))).await.unwrap();
    assert!(is_error(&unknown), "{}", text(&unknown));
    let crash = s.call("call_task_tool", &args(json!({"tool": "finance_crash"}))).await.unwrap();
    assert!(is_error(&crash) && text(&crash).contains("the MCP server failed"), "{}", text(&crash));
    // Feedback: the episode goes on.
    assert!(!is_error(&s.call("observe", &Map::new()).await.unwrap()));

    let s = server(broken(FailurePolicy::Infrastructure));
    s.call("start_task", &args(json!({"task_id": "mcp.convert_and_text"}))).await.unwrap();
    let crash = s.call("call_task_tool", &args(json!({"tool": "finance_crash"}))).await.unwrap();
    assert!(is_error(&crash) && text(&crash).contains("ended unscored"), "{}", text(&crash));
    let verdict = s.call("get_verdict", &Map::new()).await.unwrap();
    assert!(is_error(&verdict) && text(&verdict).contains("ended unscored"), "{}", text(&verdict));
    assert!(text(&s.call("tap", &args(json!({"index": 0}))).await.unwrap()).contains("ended unscored"));
}

#[tokio::test]
async fn arguments_are_checked_before_anything_else() {
    let s = server(McpConfig::default());
    for (tool, a) in [
        ("tap", json!({"index": 1, "x": 1})),
        ("finish", json!({"answer": "3", "infeasible": true})),
        ("wait", json!({"seconds": 1_000_000})),
        ("start_task", json!({"task_id": "settings.flight_mode", "seed": -5})),
        ("start_task", json!({"task_id": "settings.flight_mode", "instance": 4_294_967_296u64})),
    ] {
        let e = s.call(tool, &args(a.clone())).await.unwrap_err();
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS, "{tool} {a}");
    }
}

#[tokio::test]
async fn the_user_can_be_asked() {
    let s = server(McpConfig::default());
    s.call("start_task", &args(json!({"task_id": "ask.change_pin"}))).await.unwrap();
    let reply = s.call("ask_user", &args(json!({"question": "What is the current PIN?"}))).await.unwrap();
    assert!(!is_error(&reply) && !text(&reply).is_empty(), "{}", text(&reply));
}

#[test]
fn sessions_are_limited_and_freed() {
    let limit = SessionLimit::new(2);
    let a = limit.take().unwrap();
    let b = limit.take().unwrap();
    assert!(limit.take().is_none());
    drop(a);
    assert_eq!(limit.live(), 1);
    assert!(limit.take().is_some());
    drop(b);
}

#[tokio::test]
async fn a_free_phone_has_no_task_and_no_verdict() {
    let s = server(McpConfig::default());
    let start = text(&s.call("start_phone", &args(json!({"app": "contacts"}))).await.unwrap());
    assert!(start.contains("A free phone") && start.contains("contacts"), "{start}");
    let after = s.call("press_key", &args(json!({"key": "home"}))).await.unwrap();
    assert!(!is_error(&after), "{}", text(&after));
    let end = text(&s.call("finish", &Map::new()).await.unwrap());
    assert!(end.contains("no verdict"), "{end}");
    assert!(text(&s.call("get_verdict", &Map::new()).await.unwrap()).contains("no verdict"));
}
