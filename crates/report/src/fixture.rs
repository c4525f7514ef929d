//! A results folder of hand-made episodes, shared by the unit tests and the Chromium test
//! (which includes this file with `#[path]`).
//!
//! Figures of the scored episodes (the tests assert them):
//! - `contacts.add#0` (completion): success, ACP 1, 5 steps for a reference of 4, 1 format
//!   error (step 1's output was repaired: original score failure, ACP 0), 1 repetition; steps 0
//!   and 1 have real screenshots ([`SCREEN`]-sized PNGs of [`SHOT_COLOURS`], in a folder whose
//!   name needs URL encoding), step 0 touches [`TOUCH`]; 3 model calls;
//! - `messages.hostile#0` (ask_user): failure, ACP 1/3, 4 steps (reference 3), 2 questions, 1 MCP
//!   call, 2 repetitions; hostile text in goal, answer, observation, raw output, feedback, tag,
//!   model calls (prompt, image labels, reasoning, response, tool call), judge verdict and the
//!   screenshot path; other steps store screenshot paths that must not be shown (`..`, absolute,
//!   backslash, missing file); judged fail;
//! - `settings.wifi#0` (ask_user): success, ACP 1, 2 steps (reference 2), 1 question; two
//!   trials (the first failed), judged pass;
//! - `settings.broken#0` (mcp): infrastructure failure, counted apart.
//!
//! So SR 2/3, ACP 7/9, SPL (0.8 + 0 + 1)/3, avg steps 11/3, avg queries 1, UIQ (0 + 1)/2,
//! MCP 1/3, format-error rate 1/11, repetition rate 3/8; SR-orig 0/1, judge SR 1/2.
//!
//! [`build_plain_results`] writes the same episodes as a scripted agent or an older version of
//! the runner would: no calls, screenshots, trials, judges, repairs or accounting.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use phonebench_model::{CallRecord, PromptMessage, TokenUsage, ToolCall};
use phonebench_runner::results::{
    Accounting, CriterionResult, EpisodeResult, JudgeResult, ResultsDb, RunConfig, Score, StepResult,
    TrialResult, Usage,
};

/// Text that breaks out of a `<pre>` and runs script if it is not escaped.
pub const HOSTILE: &str = "</pre><script>alert(1)</script>";

/// The fixture's screen size in pixels (a tiny phone: the PNGs stay small).
pub const SCREEN: (u32, u32) = (108, 240);
/// The solid colours of `contacts.add#0`'s two screenshots (steps 0 and 1): colours the report's
/// own styles never use, so a browser's capture of the page shows them only if the PNGs loaded.
pub const SHOT_COLOURS: [[u8; 3]; 2] = [[255, 200, 0], [0, 170, 220]];
/// Where step 0 of `contacts.add#0` touches: a quarter across, three quarters down.
pub const TOUCH: (i32, i32) = (27, 180);
/// The folder of `contacts.add#0`'s screenshots: a space, a `#` and a non-ASCII letter, all of
/// which must be percent-encoded in the page's URLs.
pub const SHOTS_DIR: &str = "screenshots/contacts add#0 ü";
/// The page of `contacts.add#0`.
pub const SHOTS_PAGE: &str = "contacts.add_0.html";
/// `messages.hostile#0`'s step 0 screenshot: a real file whose path is the hostile string.
pub fn hostile_shot() -> String {
    format!("screenshots/{HOSTILE}.png")
}
/// Its colour.
pub const HOSTILE_COLOUR: [u8; 3] = [120, 40, 200];

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
        agent: "scripted".to_string(),
        end: "finished".to_string(),
        ..EpisodeResult::default()
    }
}

fn step(n: u32, observation: &str, raw: &str, action: Option<serde_json::Value>) -> StepResult {
    StepResult {
        step: n,
        app: Some("messages".to_string()),
        activity: "ConversationList".to_string(),
        observation: observation.to_string(),
        observation_truncated: false,
        raw: raw.to_string(),
        action,
        point: None,
        hit: None,
        feedback: None,
        format_error: None,
        rejected: None,
        trial: 0,
        repaired_from: None,
        calls: Vec::new(),
        screenshot: None,
        screen_size: None,
        mcp: None,
    }
}

fn criterion(label: &str, passed: bool, step: Option<usize>, detail: &str) -> CriterionResult {
    CriterionResult {
        label: label.to_string(),
        passed,
        guard: false,
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
        ..RunConfig::default()
    }
}

/// Writes a solid-colour RGB PNG of `size` at `path` (folders created).
pub fn write_png(path: &Path, size: (u32, u32), rgb: [u8; 3]) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create screenshot folder");
    let file = std::fs::File::create(path).expect("create png");
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), size.0, size.1);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let pixels: Vec<u8> = (0..size.0 * size.1).flat_map(|_| rgb).collect();
    encoder.write_header().and_then(|mut w| w.write_image_data(&pixels)).expect("write png");
}

/// A model call with a two-message prompt (system, then user with one image label).
pub fn call(purpose: &str, user: &str, image: &str, response: &str) -> CallRecord {
    CallRecord {
        purpose: purpose.to_string(),
        model: "mock-vision-1".to_string(),
        prompt: vec![
            PromptMessage {
                role: "system".to_string(),
                text: "You operate an Android phone. Answer with one action.".to_string(),
                images: Vec::new(),
            },
            PromptMessage {
                role: "user".to_string(),
                text: user.to_string(),
                images: vec![image.to_string()],
            },
        ],
        response: response.to_string(),
        reasoning: None,
        tool_calls: Vec::new(),
        usage: TokenUsage { prompt_tokens: 400, completion_tokens: 20 },
        cached: false,
        latency_ms: 1_250,
        cost_usd: Some(0.0005),
    }
}

/// Writes the fixture's results into a fresh folder named after `name` and returns it.
pub fn build_results(name: &str) -> PathBuf {
    build(name, true)
}

/// The same episodes without anything a model-driven agent or a newer runner adds: the results of
/// a scripted agent, or of an older version of the runner.
pub fn build_plain_results(name: &str) -> PathBuf {
    build(name, false)
}

/// Drops what older results folders and scripted agents do not have.
fn strip(e: &mut EpisodeResult, steps: &mut Vec<StepResult>) {
    (e.model_calls, e.cost_usd, e.repairs, e.original) = (0, None, 0, None);
    e.judge.clear();
    e.trials.clear();
    // Older folders have one trial's rows only.
    steps.retain(|s| s.trial == 0);
    for s in steps {
        s.calls.clear();
        (s.screenshot, s.screen_size, s.repaired_from) = (None, None, None);
    }
}

fn build(name: &str, rich: bool) -> PathBuf {
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
    let mut add_steps: Vec<StepResult> = (0..=5)
        .map(|n| {
            let mut s = step(n, &format!("[0] Button \"Add\" (screen {n})"), "click [0]", None);
            if n == 5 {
                s.raw = String::new();
            } else {
                s.action = Some(serde_json::json!({"action": "tap", "target": {"index": 0}}));
            }
            s.screen_size = Some(SCREEN);
            s
        })
        .collect();
    for (n, colour) in SHOT_COLOURS.iter().enumerate() {
        let path = format!("{SHOTS_DIR}/step-{n:03}.png");
        write_png(&dir.join(&path), SCREEN, *colour);
        add_steps[n].screenshot = Some(path);
    }
    add_steps[0].point = Some(TOUCH);
    add_steps[0].hit = Some("Button text=\"Add\"".to_string());
    let mut first =
        call("action", "Goal: Add a contact named Ada Lovelace\n[0] Button \"Add\"", "screen 0", "click [0]");
    first.reasoning = Some("The Add button opens the new-contact form.".to_string());
    add_steps[0].calls = vec![first];
    add_steps[1].repaired_from = Some("expected an action, got prose".to_string());
    let prose =
        call("action", "[0] Button \"Add\" (screen 1)", "screen 1", "I think the Add button is next.");
    let mut repair =
        call("repair", "Rewrite as one action: I think the Add button is next.", "screen 1", "click [0]");
    (repair.cached, repair.latency_ms, repair.usage) =
        (true, 3, TokenUsage { prompt_tokens: 150, completion_tokens: 5 });
    add_steps[1].calls = vec![prose, repair];
    (add.model_calls, add.cost_usd, add.repairs) = (3, Some(0.0015), 1);
    add.original = Some(Score { success: false, acp: 0.0 });

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
    let mut action = call("action", &format!("Goal: {HOSTILE}"), &format!("screen {HOSTILE}"), &s0.raw);
    action.reasoning = Some(format!("reasoning {HOSTILE}"));
    let mut grounding =
        call(&format!("grounding {HOSTILE}"), "Where is Send?", "crop", &format!("response {HOSTILE}"));
    grounding.model = format!("model {HOSTILE}");
    grounding.tool_calls = vec![ToolCall {
        id: "1".to_string(),
        name: format!("tool {HOSTILE}"),
        arguments: format!("{{\"x\": \"{HOSTILE}\"}}"),
    }];
    grounding.cost_usd = None;
    s0.calls = vec![action, grounding];
    s0.screen_size = Some((1080, 2400));
    s0.screenshot = Some(hostile_shot());
    write_png(&dir.join(hostile_shot()), SCREEN, HOSTILE_COLOUR);
    let mut s1 = step(1, "[4] Button \"Send\"", "I should now think about it.", None);
    s1.format_error = Some("expected an action, got prose".to_string());
    s1.feedback = Some("Your output could not be parsed as an action".to_string());
    s1.screenshot = Some("../../../etc/passwd".to_string());
    let mut s2 = step(
        2,
        "[4] Button \"Send\"",
        "click [99]",
        Some(serde_json::json!({"action": "tap", "target": {"index": 99}})),
    );
    s2.rejected = Some("no element 99".to_string());
    s2.mcp = Some(phonebench_env::McpCallRecord {
        step: 2,
        tool: format!("tool {HOSTILE}"),
        arguments: serde_json::json!({ "q": HOSTILE }).as_object().cloned().unwrap_or_default(),
        result: format!("error: {HOSTILE}"),
        is_error: true,
        truncated: true,
        failure: Some(format!("server {HOSTILE}")),
        latency_ms: 12,
    });
    s2.screenshot = Some("/etc/passwd".to_string());
    let mut s3 = step(
        3,
        "[4] Button \"Send\"",
        "ask_user [Which Bob?]",
        Some(serde_json::json!({"action": "ask_user", "text": "Which Bob?"})),
    );
    s3.feedback = Some("Bob Smith".to_string());
    s3.screenshot = Some("screenshots\\evil.png".to_string());
    let mut s4 = step(4, "[4] Button \"Send\" (last)", "", None);
    s4.screenshot = Some("screenshots/missing.png".to_string());
    s4.calls = vec![call("judge", &format!("Did the agent reply? {HOSTILE}"), "last screen", "FAIL")];
    let hostile_steps = vec![s0, s1, s2, s3, s4];
    hostile.judge = vec![JudgeResult {
        name: format!("judge {HOSTILE}"),
        passed: Some(false),
        reason: format!("reason {HOSTILE}"),
    }];
    (hostile.model_calls, hostile.cost_usd) = (3, None);

    let mut wifi = episode("settings.wifi#0", "ask_user");
    wifi.goal = "Turn Wi-Fi on".to_string();
    (wifi.success, wifi.acp, wifi.steps, wifi.reference_steps, wifi.queries) = (true, 1.0, 2, 2, 1);
    wifi.criteria = vec![criterion("Wi-Fi is on", true, Some(1), "")];
    tag(&mut wifi, "apps", "multi");
    wifi.trials = vec![
        TrialResult { success: false, acp: 0.0, steps: 1, end: "finished".to_string() },
        TrialResult { success: true, acp: 1.0, steps: 2, end: "finished".to_string() },
    ];
    let settings = |trial: u32, n: u32, raw: &str| {
        let mut s = step(n, &format!("[1] Switch \"Wi-Fi\" (trial {trial}, screen {n})"), raw, None);
        (s.trial, s.app, s.activity) = (trial, Some("settings".to_string()), "WifiSettings".to_string());
        if !raw.is_empty() {
            s.action = Some(serde_json::json!({"action": "tap", "target": {"index": 1}}));
            s.calls = vec![call("action", "Turn Wi-Fi on", &format!("screen {n}"), raw)];
        }
        s
    };
    let mut reflected = settings(0, 1, "");
    reflected.calls = vec![call(
        "reflection",
        "The trial failed. Why?",
        "last screen",
        "I tapped the wrong switch first time.",
    )];
    let mut judged = settings(1, 2, "");
    judged.calls = vec![call("judge", "Is Wi-Fi on?", "last screen", "PASS: the toggle reads on")];
    let wifi_steps = vec![
        settings(0, 0, "click [2]"),
        reflected,
        settings(1, 0, "click [1]"),
        settings(1, 1, "finish"),
        judged,
    ];
    wifi.judge = vec![JudgeResult {
        name: "the Wi-Fi toggle reads on".to_string(),
        passed: Some(true),
        reason: "The switch shows On.".to_string(),
    }];
    (wifi.model_calls, wifi.cost_usd) = (5, Some(0.0025));

    let mut broken = episode("settings.broken#0", "mcp");
    broken.goal = "Check the weather through MCP".to_string();
    broken.infrastructure_error = Some("model server unreachable: connection refused".to_string());
    broken.end = "infrastructure".to_string();
    broken.steps = 1;

    let mut episodes = [
        (add, add_steps, 1_500),
        (hostile, hostile_steps, 2_250),
        (wifi, wifi_steps, 800),
        (broken, Vec::new(), 30_000),
    ];
    for (e, steps, wall) in &mut episodes {
        let accounting = if rich {
            Accounting::of_calls(steps.iter().flat_map(|s| &s.calls))
        } else {
            strip(e, steps);
            Accounting::default()
        };
        db.insert(e, steps, &accounting, *wall).expect("insert");
    }
    if !rich {
        let _ = std::fs::remove_dir_all(dir.join("screenshots"));
    }
    dir
}
