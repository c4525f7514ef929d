//! A results folder of hand-made episodes, shared by the unit tests and the Chromium test
//! (which includes this file with `#[path]`).
//!
//! Figures of the scored episodes (the tests assert them):
//! - `contacts.add#0` (completion): success, ACP 1, 5 steps for a reference of 4, 1 format
//!   error, 1 repetition;
//! - `messages.hostile#0` (ask_user): failure, ACP 1/3, 4 steps (reference 3), 2 questions, 1 MCP
//!   call, 2 repetitions; hostile text in goal, answer, observation, raw output, feedback, tag;
//! - `settings.wifi#0` (ask_user): success, ACP 1, 2 steps (reference 2), 1 question;
//! - `settings.broken#0` (mcp): infrastructure failure, counted apart.
//!
//! So SR 2/3, ACP 7/9, SPL (0.8 + 0 + 1)/3, avg steps 11/3, avg queries 1, UIQ (0 + 1)/2,
//! MCP 1/3, format-error rate 1/11, repetition rate 3/8.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use phonebench_runner::results::{CriterionResult, EpisodeResult, ResultsDb, RunConfig, StepResult, Usage};

/// Text that breaks out of a `<pre>` and runs script if it is not escaped.
pub const HOSTILE: &str = "</pre><script>alert(1)</script>";

/// An empty folder unique to this process and `name`.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-report-{}-{name}", std::process::id()));
    // A leftover from an earlier run with the same pid would hold stale results.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// Removes a test's folder once the test has passed (a failing test keeps it for inspection).
pub fn cleanup(dir: &std::path::Path) {
    let _ = std::fs::remove_dir_all(dir);
}

/// A failed episode with nothing in it.
pub fn episode(key: &str, category: &str) -> EpisodeResult {
    let (task_id, instance) = key.split_once('#').unwrap_or((key, "0"));
    EpisodeResult {
        key: key.to_string(),
        task_id: task_id.to_string(),
        instance: instance.parse().unwrap_or(0),
        seed: 42,
        category: category.to_string(),
        tags: BTreeMap::new(),
        goal: String::new(),
        agent: "scripted".to_string(),
        success: false,
        acp: 0.0,
        steps: 0,
        reference_steps: 0,
        queries: 0,
        mcp_calls: 0,
        format_errors: 0,
        repetitions: 0,
        end: "finished".to_string(),
        infrastructure_error: None,
        answer: None,
        criteria: Vec::new(),
        usage: Usage::default(),
    }
}

fn step(n: u32, observation: &str, raw: &str, action: Option<serde_json::Value>) -> StepResult {
    StepResult {
        step: n,
        app: Some("messages".to_string()),
        activity: "ConversationList".to_string(),
        observation: observation.to_string(),
        raw: raw.to_string(),
        action,
        point: None,
        hit: None,
        feedback: None,
        format_error: None,
        rejected: None,
    }
}

fn criterion(label: &str, passed: bool, step: Option<usize>, detail: &str) -> CriterionResult {
    CriterionResult {
        label: label.to_string(),
        passed,
        step,
        detail: detail.to_string(),
        children: Vec::new(),
    }
}

fn tag(e: &mut EpisodeResult, axis: &str, value: &str) {
    e.tags.entry(axis.to_string()).or_default().push(value.to_string());
}

/// The config the fixture's results were run with.
pub fn config() -> RunConfig {
    RunConfig {
        suite: "smoke".to_string(),
        agent: "scripted".to_string(),
        seed: 7,
        instances: 1,
        tasks: None,
        format: "sphinx-tree".to_string(),
    }
}

/// Writes the fixture's results into a fresh folder named after `name` and returns it.
pub fn build_results(name: &str) -> PathBuf {
    let dir = temp_dir(name);
    let mut db = ResultsDb::open(&dir).expect("open results");
    db.claim(&config(), false).expect("claim");

    let mut add = episode("contacts.add#0", "completion");
    add.goal = "Add a contact named Ada Lovelace".to_string();
    (add.success, add.acp, add.steps, add.reference_steps, add.format_errors, add.repetitions) =
        (true, 1.0, 5, 4, 1, 1);
    add.usage = Usage { prompt_tokens: 1200, completion_tokens: 80 };
    add.criteria = vec![criterion("contact Ada Lovelace exists", true, Some(4), "")];
    tag(&mut add, "apps", "single");
    let add_steps: Vec<StepResult> = (0..=5)
        .map(|n| {
            let mut s = step(n, &format!("[0] Button \"Add\" (screen {n})"), "click [0]", None);
            if n == 5 {
                s.raw = String::new();
            } else {
                s.action = Some(serde_json::json!({"action": "tap", "target": {"index": 0}}));
            }
            s
        })
        .collect();

    let mut hostile = episode("messages.hostile#0", "ask_user");
    hostile.goal = format!("Reply to Bob with {HOSTILE}");
    hostile.answer = Some(format!("Sent {HOSTILE}"));
    (
        hostile.acp,
        hostile.steps,
        hostile.reference_steps,
        hostile.queries,
        hostile.mcp_calls,
        hostile.repetitions,
    ) = (1.0 / 3.0, 4, 3, 2, 1, 2);
    hostile.end = "answered".to_string();
    hostile.usage = Usage { prompt_tokens: 900, completion_tokens: 60 };
    let mut sent = criterion("a message was sent", false, None, "sent text differs");
    sent.children = vec![
        criterion("tapped Send", true, Some(1), ""),
        criterion("text equals the reply", false, None, &format!("got {HOSTILE}")),
    ];
    hostile.criteria = vec![
        criterion("Messages is open", true, Some(4), ""),
        sent,
        criterion("answer matches", false, None, "expected \"done\""),
    ];
    tag(&mut hostile, "apps", "single");
    tag(&mut hostile, "intent", HOSTILE);
    let mut s0 = step(
        0,
        &format!("[3] TextView {HOSTILE}\n[4] Button \"Send\""),
        &format!("Thought: {HOSTILE}\nAction: click [4]"),
        Some(serde_json::json!({"action": "tap", "target": {"index": 4}})),
    );
    (s0.point, s0.hit, s0.feedback) =
        (Some((540, 1200)), Some("Button \"Send\"".to_string()), Some(format!("toast: {HOSTILE}")));
    let mut s1 = step(1, "[4] Button \"Send\"", "I should now think about it.", None);
    s1.format_error = Some("expected an action, got prose".to_string());
    s1.feedback = Some("Your output could not be parsed as an action".to_string());
    let mut s2 = step(
        2,
        "[4] Button \"Send\"",
        "click [99]",
        Some(serde_json::json!({"action": "tap", "target": {"index": 99}})),
    );
    s2.rejected = Some("no element 99".to_string());
    let mut s3 = step(
        3,
        "[4] Button \"Send\"",
        "ask_user [Which Bob?]",
        Some(serde_json::json!({"action": "ask_user", "text": "Which Bob?"})),
    );
    s3.feedback = Some("Bob Smith".to_string());
    let s4 = step(4, "[4] Button \"Send\" (last)", "", None);
    let hostile_steps = vec![s0, s1, s2, s3, s4];

    let mut wifi = episode("settings.wifi#0", "ask_user");
    wifi.goal = "Turn Wi-Fi on".to_string();
    (wifi.success, wifi.acp, wifi.steps, wifi.reference_steps, wifi.queries) = (true, 1.0, 2, 2, 1);
    wifi.criteria = vec![criterion("Wi-Fi is on", true, Some(1), "")];
    tag(&mut wifi, "apps", "multi");

    let mut broken = episode("settings.broken#0", "mcp");
    broken.goal = "Check the weather through MCP".to_string();
    broken.infrastructure_error = Some("model server unreachable: connection refused".to_string());
    broken.end = "infrastructure".to_string();
    broken.steps = 1;

    db.insert(&add, &add_steps, 1_500).expect("insert");
    db.insert(&hostile, &hostile_steps, 2_250).expect("insert");
    db.insert(&wifi, &[], 800).expect("insert");
    db.insert(&broken, &[], 30_000).expect("insert");
    dir
}
