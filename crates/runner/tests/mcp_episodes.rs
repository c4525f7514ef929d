//! MCP inside episodes: tool calls reach real servers (in-process built-in ones and a child
//! process), results are recorded the same on every run, and a server that crashes or hangs
//! mid-episode gives the agent an error and the episode goes on, or ends as an infrastructure
//! failure when the run's policy says so.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use phonebench_agents::ReferenceAgent;
use phonebench_env::{EpisodeEnd, EpisodeOptions};
use phonebench_mcp::{FailurePolicy, McpConfig, Transport};
use phonebench_phone::Catalog;
use phonebench_runner::Limits;
use phonebench_runner::episode::{Budget, Extras, Finished, run_trial};
use phonebench_runner::instantiate;
use phonebench_tasks::{Suite, TaskSpec};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

fn broken(policy: FailurePolicy) -> McpConfig {
    let script = repo().join("crates/mcp/tests/fixtures/broken_server.py");
    let mut config = McpConfig { call_timeout_s: 1.0, on_server_failure: policy, ..McpConfig::default() };
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

/// A task that calls a working tool, one that reports an error, one that crashes its server and
/// the working one again, then works the GUI. (Hangs are tested in the MCP crate: the broken
/// server is single-threaded, so after a hang it never answers again.)
const TASK: &str = r#"
id = "mcp.broken"
category = "mcp"
goal = "Call the tools, then open Contacts."
apps = ["contacts"]
mcp_servers = ["broken"]
reference = ['mcp broken_ok {}', 'mcp broken_tool_error {}', 'mcp broken_crash {}', 'mcp broken_ok {}', 'open contacts']

[[criteria]]
mcp = { tool = "broken_crash", ok = false }

[[criteria]]
screen = { app = "contacts" }
"#;

async fn play(config: McpConfig) -> Finished {
    let catalog = Catalog::load_dir(&repo().join("apps")).unwrap();
    let spec = TaskSpec::parse(Path::new("mcp_broken.toml"), TASK).unwrap();
    let task = instantiate(&catalog, &spec, 0, 0).unwrap();
    let mut agent = ReferenceAgent::new(task.reference.clone());
    let extras = Extras { mcp: Arc::new(config), ..Extras::default() };
    let limits = Limits { timeout: Duration::from_secs(60), ..Limits::default() };
    let mut budget = Budget::new(limits.timeout);
    run_trial(&catalog, &task, &mut agent, EpisodeOptions::default(), limits, &extras, 0, &mut budget)
        .await
        .unwrap()
}

#[test]
fn a_failing_server_is_an_error_to_the_agent_and_the_episode_goes_on() {
    let finished = runtime().block_on(play(broken(FailurePolicy::Feedback)));
    let t = &finished.trajectory;
    assert!(matches!(t.end, Some(EpisodeEnd::Finished { .. })), "{:?}", t.end);
    let calls: Vec<(&str, bool, bool)> =
        t.mcp_calls.iter().map(|c| (c.tool.as_str(), c.is_error, c.failure.is_some())).collect();
    assert_eq!(
        calls,
        vec![
            ("broken_ok", false, false),
            ("broken_tool_error", true, false), // the tool's own error: the server is fine
            ("broken_crash", true, true),
            ("broken_ok", true, true), // the crashed server is gone
        ]
    );
    assert!(t.mcp_calls[2].result.starts_with("error: the MCP server failed"), "{}", t.mcp_calls[2].result);
    assert_eq!(
        t.steps[2].feedback.as_deref(),
        Some(t.mcp_calls[2].result.as_str()),
        "the agent reads the error"
    );
    assert_eq!(t.steps.len(), 6, "four calls, open, finish");
    assert!(finished.verdict.success, "{:?}", finished.verdict);
}

#[test]
fn under_the_infrastructure_policy_a_failing_server_ends_the_episode_unscored() {
    let finished = runtime().block_on(play(broken(FailurePolicy::Infrastructure)));
    match &finished.trajectory.end {
        Some(EpisodeEnd::Infrastructure { message }) => assert!(message.starts_with("MCP: "), "{message}"),
        other => panic!("{other:?}"),
    }
    // The calls before the failure are kept; the failed one is not the agent's turn.
    let tools: Vec<&str> = finished.trajectory.mcp_calls.iter().map(|c| c.tool.as_str()).collect();
    assert_eq!(tools, ["broken_ok", "broken_tool_error"]);
}

#[test]
fn every_mcp_task_of_the_starter_suite_records_the_same_calls_on_every_run() {
    let catalog = Catalog::load_dir(&repo().join("apps")).unwrap();
    let suite = Suite::load(&repo().join("suites/starter")).unwrap();
    let tasks: Vec<&TaskSpec> =
        suite.tasks.iter().filter(|t| t.category == phonebench_tasks::Category::Mcp).collect();
    assert!(!tasks.is_empty());
    runtime().block_on(async {
        for spec in tasks {
            let task = instantiate(&catalog, spec, 0, 1).unwrap();
            let mut runs = Vec::new();
            for _ in 0..2 {
                let mut agent = ReferenceAgent::new(task.reference.clone());
                let mut budget = Budget::new(Duration::from_secs(60));
                let f = run_trial(
                    &catalog,
                    &task,
                    &mut agent,
                    EpisodeOptions::default(),
                    Limits::default(),
                    &Extras::default(),
                    0,
                    &mut budget,
                )
                .await
                .unwrap();
                assert!(f.verdict.success, "{}: {:?}", spec.id, f.verdict);
                assert!(!f.trajectory.mcp_calls.is_empty(), "{}", spec.id);
                assert!(
                    f.trajectory.mcp_calls.iter().all(|c| !c.is_error),
                    "{}: {:?}",
                    spec.id,
                    f.trajectory.mcp_calls
                );
                // Everything but the wall-clock latency must be the same.
                let calls: Vec<_> = f
                    .trajectory
                    .mcp_calls
                    .iter()
                    .map(|c| phonebench_env::McpCallRecord { latency_ms: 0, ..c.clone() })
                    .collect();
                runs.push(calls);
            }
            assert_eq!(runs[0], runs[1], "{}", spec.id);
        }
    });
}
