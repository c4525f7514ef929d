//! Every model-driven agent end to end against the in-repository mock model server: the mock
//! plays a competent model (it reads the prompt it is sent and answers in the agent's own
//! format), the agent solves a starter task on the simulated phone, and the requests on the wire
//! are checked — texts, message shapes, and images that must be decodable PNGs of the very
//! screen the agent was on (compared byte for byte with the screenshots the run saves).

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use phonebench_actions::Action;
use phonebench_actions::coords::CoordSpace;
use phonebench_agents::llm::judge::{JUDGE_TEMPLATE, Judge};
use phonebench_agents::llm::user::{DEFAULT_PERSONA, ModelUser, USER_TEMPLATE};
use phonebench_agents::llm::{AgentConfig, ModelAgentSpec, ModelHandle, ModelSection, Models};
use phonebench_model::mock::{MockReply, MockServer, all_text, image_urls, last_user_text, system_text};
use phonebench_model::{ChatModel, Endpoint, OpenAiClient, RetryPolicy, decode_data_url};
use phonebench_phone::{CLOCK_START_MS, Catalog, Phone, PhoneConfig};
use phonebench_runner::results::{EpisodeResult, ResultsDb, StepResult};
use phonebench_runner::{AgentChoice, Limits, RunOptions, RunOutcome, run_suite};
use phonebench_tasks::Suite;
use serde_json::Value;

const TASK: &str = "settings.screen_timeout";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn catalog() -> Catalog {
    Catalog::load_dir(&repo().join("apps")).expect("the apps load")
}

fn suite() -> Suite {
    Suite::load(&repo().join("suites/starter")).expect("the starter suite loads")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-model-agents-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn handle(url: &str, section: &ModelSection, model: &str) -> ModelHandle {
    let mut endpoint = Endpoint::new(url, model);
    endpoint.retry = RetryPolicy { max_retries: 1, base_delay_ms: 10, max_delay_ms: 20 };
    let client: Arc<dyn ChatModel> = Arc::new(OpenAiClient::new(endpoint).expect("client"));
    ModelHandle::new(client, section)
}

fn spec(agent: &str, options: &[&str], url: &str) -> AgentChoice {
    let mut config = AgentConfig::builtin(agent).expect("built-in agent");
    for o in options {
        config.set_option(o).expect("option");
    }
    let main = handle(url, &config.model, "mock-actor");
    let grounding = config.grounding.as_ref().map(|g| handle(url, g, "mock-grounder"));
    AgentChoice::Model(Arc::new(
        ModelAgentSpec::new(config, Models { main, grounding }).expect("valid config"),
    ))
}

fn options(agent: AgentChoice, tasks: &str, out: &Path) -> RunOptions {
    RunOptions {
        tasks: Some(tasks.into()),
        limits: Limits { max_steps: Some(12), ..Limits::default() },
        save_screenshots: true,
        ..RunOptions::new("starter", agent, out)
    }
}

fn run(options: &RunOptions) -> RunOutcome {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    rt.block_on(run_suite(&catalog(), &suite(), options)).expect("the run completes")
}

fn steps(out: &Path, key: &str) -> Vec<StepResult> {
    ResultsDb::open_existing(out).expect("results").steps(key).expect("steps")
}

/// Where each label of the task's screens is, in screen pixels (1080×2400): "Display" on the
/// Settings main screen, "Screen timeout" on Display, and every choice of the timeout dialog.
fn label_points() -> HashMap<String, (i32, i32)> {
    let mut phone = Phone::new(
        catalog(),
        PhoneConfig { seed: 0, clock_start_ms: CLOCK_START_MS, ..PhoneConfig::default() },
    )
    .expect("phone");
    phone.apply(&Action::OpenApp { app: "settings".into() }).expect("settings opens");
    let mut points = HashMap::new();
    let find = |phone: &mut Phone, text: &str| -> (i32, i32) {
        let tree = phone.tree().expect("tree");
        let id = tree
            .iter()
            .filter(|(_, n)| n.text == text && !n.bounds.is_empty())
            .map(|(id, _)| id)
            .last()
            .unwrap_or_else(|| panic!("no `{text}` on screen"));
        tree.node(id).bounds.center()
    };
    for label in ["Display", "Screen timeout"] {
        let p = find(&mut phone, label);
        points.insert(label.to_string(), p);
        phone
            .apply(&Action::Tap {
                target: phonebench_actions::Target::Point(phonebench_actions::Point::new(p.0, p.1)),
            })
            .expect("tap");
    }
    for choice in
        ["15 seconds", "30 seconds", "1 minute", "2 minutes", "5 minutes", "10 minutes", "30 minutes"]
    {
        points.insert(choice.to_string(), find(&mut phone, choice));
    }
    points
}

/// The duration the goal asks for.
fn wanted(text: &str) -> String {
    let at = text.find("turn off after ").expect("the goal is in the prompt") + "turn off after ".len();
    let rest = &text[at..];
    rest[..rest.find(" of inactivity").expect("goal end")].to_string()
}

/// The element index SPHINX's tree text gives the clickable view around `text`: the line that
/// shows it, or its nearest indexed ancestor (indentation is one tab per depth).
fn sphinx_index(observation: &str, text: &str) -> Option<u32> {
    let lines: Vec<&str> = observation.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains(&format!("text: {text},")) || l.contains(&format!("text: {text})")))?;
    let depth = |l: &str| l.chars().take_while(|c| *c == '\t').count();
    let index = |l: &str| {
        let t = l.trim_start_matches('\t');
        t.strip_prefix('[').and_then(|r| r.split(']').next()).and_then(|n| n.parse().ok())
    };
    if let Some(i) = index(lines[at]) {
        return Some(i);
    }
    let mut d = depth(lines[at]);
    for l in lines[..at].iter().rev() {
        if depth(l) < d {
            if let Some(i) = index(l) {
                return Some(i);
            }
            d = depth(l);
        }
    }
    None
}

/// The AndroidWorld element index (T3A and M3A lines) of the element showing `text`.
fn androidworld_index(elements: &str, text: &str) -> Option<u32> {
    let wanted = [format!("text='{text}'"), format!("\"text\": \"{text}\"")];
    elements
        .lines()
        .filter(|l| wanted.iter().any(|w| l.contains(w.as_str())))
        .filter_map(|l| l.strip_prefix("UI element ")?.split(':').next()?.parse().ok())
        .next_back()
}

/// What a competent model would tap at action call `k` of the task.
fn plan(k: usize, duration: &str) -> Option<String> {
    ["Display", "Screen timeout", duration].get(k).map(|s| s.to_string())
}

/// A model that solves the task in each agent's own format. Action calls are counted per
/// conversation key (the run has one episode at a time, so arrival order is the episode's).
struct Oracle {
    points: HashMap<String, (i32, i32)>,
    calls: Mutex<HashMap<String, usize>>,
    /// SPHINX: answer the first action without fences (to exercise the repair call).
    malformed_first: bool,
    /// `mobile_use` calls as OpenAI `tool_calls` (what vLLM's tool parsers turn the text into).
    native_tools: bool,
}

impl Oracle {
    fn next(&self, key: &str) -> usize {
        let mut calls = self.calls.lock().unwrap();
        let n = calls.entry(key.to_string()).or_insert(0);
        *n += 1;
        *n - 1
    }

    fn respond(&self, req: &Value) -> MockReply {
        let system = system_text(req);
        let user = last_user_text(req);
        let all = all_text(req);
        let model = req["model"].as_str().unwrap_or_default();
        // SPHINX's repair call: wrap the action the malformed answer named.
        if system.contains("fixing an output") {
            let start = user.find("click [").expect("the malformed answer is quoted");
            let end = start + user[start..].find(']').unwrap() + 1;
            return MockReply::text(format!(
                "In summary, the next action I will perform is ```{}```",
                &user[start..end]
            ));
        }
        if model == "mock-judge" {
            // Passes when the final screen shows the duration the goal asked for.
            let duration = wanted(&all);
            let final_screen = &all[all.find("(final screen)").expect("the final screen")..];
            let verdict = if final_screen.contains(&duration) { "pass" } else { "fail" };
            return MockReply::text(format!(
                "{{\"verdict\": \"{verdict}\", \"reason\": \"checked the final screen\"}}"
            ));
        }
        if all.contains("Summary of this step") {
            return MockReply::text("I tapped the element I meant to; the next screen opened.");
        }
        if all.contains("New plan:") {
            return MockReply::text(
                "Plan: tap Display, then Screen timeout, then the duration; stop only after that.",
            );
        }
        if model == "mock-grounder" {
            let instruction = user.trim();
            let label = instruction.strip_prefix("click ").expect("a click instruction");
            let (x, y) = self.points[label];
            // UI-Ins answers in the pixels of the smart_resize'd screenshot.
            let (w, h) = CoordSpace::Resized { factor: 28, min_pixels: 3136, max_pixels: 4096 * 2160 }
                .extent(1080, 2400)
                .unwrap();
            let (gx, gy) = ((x as f64 * w / 1080.0).round(), (y as f64 * h / 2400.0).round());
            return MockReply::text(format!(
                "<tool_call>\n{{\"name\": \"grounding\", \"arguments\": {{\"action\": \"click\", \"coordinate\": [{gx}, {gy}]}}}}\n</tool_call>"
            ));
        }
        let duration = wanted(&all);
        if all.contains("In summary, the next action I will perform is") {
            // SPHINX ReAct (and Reflexion around it).
            let lessons = all.contains("LESSONS FROM EARLIER ATTEMPTS");
            if all.contains("Reflexion-trial") && !lessons {
                return MockReply::text(
                    "Done already. In summary, the next action I will perform is ```press [stop]```",
                );
            }
            let k = self.next(if lessons { "sphinx-lessons" } else { "sphinx" });
            let observation = &user[user.find("OBSERVATION:\n").expect("tree mode") + 13..];
            return MockReply::text(match plan(k, &duration) {
                None => {
                    "The timeout is set. In summary, the next action I will perform is ```press [stop]```"
                        .into()
                }
                Some(label) => {
                    let i = sphinx_index(observation, &label)
                        .unwrap_or_else(|| panic!("no `{label}` in:\n{observation}"));
                    if k == 0 && self.malformed_first {
                        format!("I will tap it: click [{i}]")
                    } else {
                        format!(
                            "I tap {label}. In summary, the next action I will perform is ```click [{i}]```"
                        )
                    }
                }
            });
        }
        if all.contains("UI element") && all.contains("Action:") {
            // T3A / M3A.
            let k = self.next("androidworld");
            return MockReply::text(match plan(k, &duration) {
                None => "Reason: the timeout is set\nAction: {\"action_type\": \"status\", \"goal_status\": \"complete\"}".into(),
                Some(label) => {
                    let i = androidworld_index(&user, &label).unwrap_or_else(|| panic!("no `{label}` in:\n{user}"));
                    format!("Reason: open {label}\nAction: {{\"action_type\": \"click\", \"index\": {i}}}")
                }
            });
        }
        if system.contains("Android Phone Operator") {
            let k = self.next("planner");
            return MockReply::text(match plan(k, &duration) {
                None => "Thought: done\nAction: {\"action_type\": \"status\", \"goal_status\": \"complete\"}"
                    .into(),
                Some(label) => format!(
                    "Thought: open {label}\nAction: {{\"action_type\": \"click\", \"target\": \"{label}\"}}"
                ),
            });
        }
        if system.contains("mobile_use") {
            let k = self.next("qwen");
            if self.native_tools {
                let (sentence, arguments) = match plan(k, &duration) {
                    None => (
                        "Finish.".to_string(),
                        "{\"action\": \"terminate\", \"status\": \"success\"}".to_string(),
                    ),
                    Some(label) => {
                        let (x, y) = self.points[&label];
                        let (gx, gy) =
                            ((x as f64 / 1080.0 * 999.0).round(), (y as f64 / 2400.0 * 999.0).round());
                        (
                            format!("Tap {label}."),
                            format!("{{\"action\": \"click\", \"coordinate\": [{gx}, {gy}]}}"),
                        )
                    }
                };
                return MockReply::Message(phonebench_model::ChatResponse {
                    content: format!("Thought: go\nAction: \"{sentence}\""),
                    tool_calls: vec![phonebench_model::ToolCall {
                        id: format!("call_{k}"),
                        name: "mobile_use".into(),
                        arguments,
                    }],
                    ..Default::default()
                });
            }
            return MockReply::text(match plan(k, &duration) {
                None => "Thought: done\nAction: \"Finish.\"\n<tool_call>\n{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"terminate\", \"status\": \"success\"}}\n</tool_call>".into(),
                Some(label) => {
                    let (x, y) = self.points[&label];
                    let (gx, gy) = ((x as f64 / 1080.0 * 999.0).round(), (y as f64 / 2400.0 * 999.0).round());
                    format!("Thought: open {label}\nAction: \"Tap {label}.\"\n<tool_call>\n{{\"name\": \"mobile_use\", \"arguments\": {{\"action\": \"click\", \"coordinate\": [{gx}, {gy}]}}}}\n</tool_call>")
                }
            });
        }
        if all.contains("start_box") || all.contains("<point>") {
            let doubao = all.contains("<point>");
            let k = self.next("uitars");
            return MockReply::text(match plan(k, &duration) {
                None => "Thought: done\nAction: finished(content='')".into(),
                Some(label) => {
                    let (x, y) = self.points[&label];
                    if doubao {
                        let (gx, gy) =
                            ((x as f64 / 1080.0 * 1000.0).round(), (y as f64 / 2400.0 * 1000.0).round());
                        format!("Thought: open {label}\nAction: click(point='<point>{gx} {gy}</point>')")
                    } else {
                        // UI-TARS-1.5: pixels of the smart_resize'd image (1092×2408).
                        let (gx, gy) =
                            ((x as f64 * 1092.0 / 1080.0).round(), (y as f64 * 2408.0 / 2400.0).round());
                        format!(
                            "Thought: open {label}\nAction: click(start_box='<|box_start|>({gx},{gy})<|box_end|>')"
                        )
                    }
                }
            });
        }
        MockReply::Status {
            code: 500,
            body: format!("the oracle does not know this prompt:\n{all}"),
            retry_after: None,
        }
    }
}

async fn oracle_server(malformed_first: bool) -> (MockServer, Arc<Oracle>) {
    oracle_with(malformed_first, false).await
}

async fn oracle_with(malformed_first: bool, native_tools: bool) -> (MockServer, Arc<Oracle>) {
    let oracle = Arc::new(Oracle {
        points: label_points(),
        calls: Mutex::new(HashMap::new()),
        malformed_first,
        native_tools,
    });
    let o = oracle.clone();
    let server = MockServer::start(move |req: &Value| o.respond(req)).await.expect("mock starts");
    (server, oracle)
}

fn the_episode(outcome: &RunOutcome) -> &EpisodeResult {
    assert_eq!(outcome.episodes.len(), 1);
    &outcome.episodes[0]
}

/// Decodes an image URL of a request and checks it is the PNG saved for that step.
fn assert_image_is_screen(url: &str, out: &Path, step: &StepResult) {
    let (mime, bytes) = decode_data_url(url).expect("a base64 data URL");
    assert_eq!(mime, "image/png");
    let pixmap = phonebench_pixels::decode_png(&bytes).expect("a decodable PNG");
    assert_eq!((pixmap.width(), pixmap.height()), (1080, 2400));
    let saved = std::fs::read(out.join(step.screenshot.as_ref().expect("screenshots are saved"))).unwrap();
    assert!(bytes == saved, "the image sent is not the screen of step {} (trial {})", step.step, step.trial);
}

fn assert_solved(e: &EpisodeResult, steps: &[StepResult]) {
    assert!(e.success, "{} did not solve the task: {:#?}", e.agent, e.criteria);
    assert_eq!(e.infrastructure_error, None);
    assert!(e.usage.prompt_tokens > 0 && e.usage.completion_tokens > 0, "tokens are counted: {:?}", e.usage);
    assert!(e.model_calls > 0);
    for s in steps.iter().filter(|s| s.action.is_some()) {
        assert!(!s.raw.is_empty(), "the raw output of step {} is stored", s.step);
        assert!(!s.calls.is_empty(), "step {} records its model calls", s.step);
        assert!(s.calls.iter().all(|c| !c.prompt.is_empty() && c.usage.prompt_tokens > 0));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sphinx_react_solves_a_task_repairs_a_bad_answer_and_scores_both_ways() {
    let (server, _) = oracle_server(true).await;
    let out = tmp("sphinx");
    let opts = options(spec("sphinx-react", &[], &server.base_url()), TASK, &out);
    let outcome = tokio::task::spawn_blocking(move || run(&opts)).await.unwrap();
    let e = the_episode(&outcome);
    let steps = steps(&out, &e.key);
    assert_solved(e, &steps);
    // The first answer had no fences: a repair call rewrote it; SPHINX's "original" episode
    // ended there, unsolved.
    assert_eq!((e.repairs, e.format_errors), (1, 1));
    let original = e.original.expect("repair agents carry the original score");
    assert!(!original.success);
    assert_eq!(steps[0].repaired_from.as_deref().map(|r| r.contains("fenced")), Some(true));
    assert_eq!(steps[0].calls.iter().map(|c| c.purpose.as_str()).collect::<Vec<_>>(), ["action", "repair"]);
    // On the wire: one user message (no system role), the tree observation, the task, the
    // previous action, SPHINX's temperature.
    let requests = server.requests();
    let first = &requests[0];
    assert_eq!(first["messages"].as_array().unwrap().len(), 1);
    assert_eq!(first["messages"][0]["role"], "user");
    let text = first["messages"][0]["content"].as_str().expect("plain text content");
    assert!(text.contains(&format!("OBSERVATION:\n{}", steps[0].observation.trim_end())), "{text}");
    assert!(text.contains(&format!("TASK: {}", e.goal)));
    assert!(text.ends_with("PREVIOUS ACTION: None"), "{text}");
    assert_eq!(first["temperature"], 0.2);
    // The repair call: the fixer's system message, then the malformed answer.
    assert!(system_text(&requests[1]).contains("fixing an output"));
    assert!(last_user_text(&requests[1]).contains("I will tap it: click ["));
    // Later prompts carry SPHINX's description of the previous action.
    assert!(all_text(&requests[2]).contains("PREVIOUS ACTION: Click on a View ("));
    assert!(requests.iter().all(|r| image_urls(r).is_empty()), "tree mode sends no image");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn t3a_and_m3a_solve_a_task_with_summaries_and_m3a_sends_the_screen() {
    for agent in ["t3a", "m3a"] {
        let (server, _) = oracle_server(false).await;
        let out = tmp(agent);
        let opts = options(spec(agent, &[], &server.base_url()), TASK, &out);
        let outcome = tokio::task::spawn_blocking(move || run(&opts)).await.unwrap();
        let e = the_episode(&outcome);
        let steps = steps(&out, &e.key);
        assert_solved(e, &steps);
        assert_eq!(e.format_errors, 0);
        let requests = server.requests();
        let actions: Vec<&Value> =
            requests.iter().filter(|r| !all_text(r).contains("Summary of this step")).collect();
        let summaries: Vec<&Value> =
            requests.iter().filter(|r| all_text(r).contains("Summary of this step")).collect();
        assert_eq!(actions.len(), 4, "{agent}: one action call per step");
        assert_eq!(summaries.len(), 3, "{agent}: a summary for every step but the last");
        // The summaries become the history of later prompts.
        assert!(all_text(actions[1]).contains("Action selected: {\"action_type\": \"click\", \"index\":"));
        assert_eq!(actions[0]["temperature"], 0.0);
        assert_eq!(actions[0]["max_tokens"], 1000);
        if agent == "t3a" {
            assert!(all_text(actions[0]).contains("UI element 0: UIElement("));
            assert!(requests.iter().all(|r| image_urls(r).is_empty()), "T3A is text only");
        } else {
            assert!(all_text(actions[0]).contains("\"is_clickable\": "));
            for (i, request) in actions.iter().enumerate() {
                let images = image_urls(request);
                assert_eq!(images.len(), 2, "M3A sends the raw and the set-of-marks screenshot");
                assert_image_is_screen(&images[0], &out, &steps[i]);
                let (_, marked) = decode_data_url(&images[1]).unwrap();
                assert!(phonebench_pixels::decode_png(&marked).is_ok());
                assert_ne!(decode_data_url(&images[0]).unwrap().1, marked, "the marks change the picture");
            }
            assert!(summaries.iter().all(|r| image_urls(r).len() == 2), "before and after screenshots");
        }
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn reflexion_learns_from_a_failed_trial_and_records_both() {
    let (server, _) = oracle_server(false).await;
    let out = tmp("reflexion");
    // The oracle gives up at once unless the prompt carries lessons (the marker goes in SPHINX's
    // skills, which are part of the prompt).
    let opts = options(
        spec("reflexion", &["skills=[\"Reflexion-trial\"]", "trials=3"], &server.base_url()),
        TASK,
        &out,
    );
    let outcome = tokio::task::spawn_blocking(move || run(&opts)).await.unwrap();
    let e = the_episode(&outcome);
    let steps = steps(&out, &e.key);
    assert_solved(e, &steps);
    assert_eq!(e.trials.len(), 2, "a failed trial, then a successful one");
    assert!(!e.trials[0].success && e.trials[1].success);
    assert_eq!(e.trials[0].steps, 1);
    // The critic's call sits on the first trial's last screen; the second trial starts afresh.
    let critic: Vec<&StepResult> =
        steps.iter().filter(|s| s.calls.iter().any(|c| c.purpose == "critic")).collect();
    assert_eq!(critic.len(), 1);
    assert_eq!(critic[0].trial, 0);
    assert_eq!(steps.iter().filter(|s| s.trial == 1 && s.step == 0).count(), 1);
    let with_lessons =
        server.requests().iter().filter(|r| all_text(r).contains("LESSONS FROM EARLIER ATTEMPTS")).count();
    assert_eq!(with_lessons, 4, "every action prompt of the second trial carries the lesson");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn planner_executor_grounds_described_targets_on_the_screenshot() {
    let (server, _) = oracle_server(false).await;
    let out = tmp("planner");
    let opts = options(spec("planner-executor", &[], &server.base_url()), TASK, &out);
    let outcome = tokio::task::spawn_blocking(move || run(&opts)).await.unwrap();
    let e = the_episode(&outcome);
    let steps = steps(&out, &e.key);
    assert_solved(e, &steps);
    let requests = server.requests();
    let planner: Vec<&Value> = requests.iter().filter(|r| r["model"] == "mock-actor").collect();
    let grounder: Vec<&Value> = requests.iter().filter(|r| r["model"] == "mock-grounder").collect();
    assert_eq!((planner.len(), grounder.len()), (4, 3));
    // The planner's conversation grows: system, screenshot, then reply + screenshot per step,
    // with only the last three screenshots sent.
    let last = planner[3]["messages"].as_array().unwrap();
    assert_eq!(last.len(), 2 + 2 * 3);
    assert_eq!(image_urls(planner[3]).len(), 3);
    assert!(all_text(planner[3]).contains("(Previous turn, screen not shown)"));
    for (i, g) in grounder.iter().enumerate() {
        let messages = g["messages"].as_array().unwrap();
        assert_eq!(messages[0]["role"], "system");
        assert_eq!(messages[1]["content"][0]["type"], "image_url", "image first, then the instruction");
        assert_image_is_screen(&image_urls(g)[0], &out, &steps[i]);
        assert_eq!(g["seed"], 42);
    }
    // Each tap landed where the grounding model pointed (mapped back from the resized image).
    assert!(steps[0].point.is_some() && steps[0].hit.is_some());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn coordinate_agents_solve_the_task_in_three_conventions_text_or_native_tool_calls() {
    for (convention, native_tools) in
        [("qwen3-vl", false), ("qwen3-vl", true), ("ui-tars-1.5", false), ("doubao", false)]
    {
        // `native_tools`: the server returns the call as OpenAI `tool_calls`, not as text.
        let (server, _) = oracle_with(false, native_tools).await;
        let out = tmp(&format!("coords-{convention}-{native_tools}"));
        let option = format!("convention={convention}");
        let opts = options(spec("coords", &[&option], &server.base_url()), TASK, &out);
        let outcome = tokio::task::spawn_blocking(move || run(&opts)).await.unwrap();
        let e = the_episode(&outcome);
        let steps = steps(&out, &e.key);
        assert_solved(e, &steps);
        let requests = server.requests();
        assert_eq!(requests.len(), 4, "{convention}");
        for (i, r) in requests.iter().enumerate() {
            let images = image_urls(r);
            // The current screenshot is the last image of every request.
            assert_image_is_screen(images.last().expect("an image"), &out, &steps[i]);
        }
        if convention == "qwen3-vl" {
            // Stateless: system + one user message; earlier steps as sentences.
            assert_eq!(requests[3]["messages"].as_array().unwrap().len(), 2);
            assert!(all_text(&requests[3]).contains("Step 1: Tap Display.;"), "{}", all_text(&requests[3]));
            assert!(system_text(&requests[0]).contains("999x999"));
        } else {
            // UI-TARS keeps the conversation: earlier replies as assistant turns.
            let messages = requests[3]["messages"].as_array().unwrap();
            assert_eq!(messages.iter().filter(|m| m["role"] == "assistant").count(), 3);
        }
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_judge_reads_the_final_screen_and_is_reported_apart() {
    let (server, _) = oracle_server(false).await;
    let url = server.base_url();
    let out = tmp("judge");
    let mut opts = options(spec("t3a", &[], &url), TASK, &out);
    opts.judge = Some(Arc::new(
        Judge::new(handle(&url, &ModelSection::default(), "mock-judge"), JUDGE_TEMPLATE).unwrap(),
    ));
    let outcome = tokio::task::spawn_blocking(move || run(&opts)).await.unwrap();
    let e = the_episode(&outcome);
    assert!(e.success);
    assert_eq!(e.judge.len(), 1, "the task has one judge check");
    assert_eq!(e.judge[0].passed, Some(true), "{:?}", e.judge);
    assert_eq!(e.judge_passed(), Some(true));
    let judged: Vec<Value> = server.requests().into_iter().filter(|r| r["model"] == "mock-judge").collect();
    assert_eq!(judged.len(), 1);
    let text = all_text(&judged[0]);
    assert!(text.contains(&e.goal) && text.contains("(final screen)"), "{text}");
    assert!(text.contains("Task-specific criterion to check: "), "the task's question is asked");
    // The check asks for the final screenshot too.
    let steps = steps(&out, &e.key);
    assert_image_is_screen(&image_urls(&judged[0])[0], &out, steps.last().unwrap());
    // The judge's call is recorded on the last screen; the deterministic score ignores it.
    assert!(steps.last().unwrap().calls.iter().any(|c| c.purpose == "judge"));
    let summary = phonebench_runner::metrics::summarize(&outcome.episodes);
    assert_eq!((summary.overall.judged, summary.overall.judge_sr), (1, Some(1.0)));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_user_answers_ask_user_from_the_hidden_facts() {
    let asked = Arc::new(Mutex::new(0usize));
    let seen = asked.clone();
    let server = MockServer::start(move |req: &Value| {
        let text = all_text(req);
        if req["model"] == "mock-user" {
            // A user who knows the facts in its prompt answers the question.
            let at = text.find("The password is ").expect("the hidden fact is in the user's prompt");
            return MockReply::text(format!("Sure: {}", text[at..].split([';', '.']).next().unwrap()));
        }
        let mut n = seen.lock().unwrap();
        *n += 1;
        MockReply::text(if *n == 1 {
            "Thought: I need the password.\nAction: {\"action_type\": \"ask_user\", \"text\": \"What is the Wi-Fi password?\"}"
        } else {
            "Thought: giving up\nAction: {\"action_type\": \"status\", \"goal_status\": \"infeasible\"}"
        })
    })
    .await
    .unwrap();
    let url = server.base_url();
    let out = tmp("user");
    let mut opts = options(spec("planner-executor", &[], &url), "ask.wifi_password", &out);
    opts.user = Some(Arc::new(
        ModelUser::new(handle(&url, &ModelSection::default(), "mock-user"), USER_TEMPLATE, DEFAULT_PERSONA)
            .unwrap(),
    ));
    let outcome = tokio::task::spawn_blocking(move || run(&opts)).await.unwrap();
    let e = the_episode(&outcome);
    assert_eq!(e.queries, 1);
    let steps = steps(&out, &e.key);
    let answer = steps[0].feedback.clone().expect("the user's reply is the step's feedback");
    assert!(answer.starts_with("Sure: The password is "), "{answer}");
    assert!(steps[0].calls.iter().any(|c| c.purpose == "user"), "the user's call is recorded");
    let requests = server.requests();
    let user_prompt = requests.iter().find(|r| r["model"] == "mock-user").map(all_text).unwrap();
    assert!(user_prompt.contains("The agent now asks: What is the Wi-Fi password?"), "{user_prompt}");
    assert!(user_prompt.contains(&e.goal));
    // The planner gets the answer as its next user turn (MobileWorld's shape).
    let second = requests.iter().filter(|r| r["model"] == "mock-actor").nth(1).unwrap();
    assert_eq!(last_user_text(second), answer);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn waiting_for_the_model_is_not_the_agents_time_and_a_hung_server_is_infrastructure() {
    // Each answer takes a second; the episode's own time limit is two seconds: three steps wait
    // three seconds for the model, yet the episode runs to its step budget.
    let slow = MockServer::start(|_: &Value| MockReply::Delay {
        ms: 1000,
        then: Box::new(MockReply::text("In summary, the next action I will perform is ```press [back]```")),
    })
    .await
    .unwrap();
    let out = tmp("slow");
    let mut opts = options(spec("sphinx-react", &[], &slow.base_url()), TASK, &out);
    opts.limits =
        Limits { max_steps: Some(3), timeout: std::time::Duration::from_secs(2), ..Limits::default() };
    opts.save_screenshots = false;
    let outcome = tokio::task::spawn_blocking(move || run(&opts)).await.unwrap();
    let e = the_episode(&outcome);
    assert_eq!((e.end.as_str(), e.steps, e.infrastructure_error.as_deref()), ("budget", 3, None));
    slow.stop().await;

    // A server that never answers: the turn limit ends the episode as infrastructure, unscored.
    let hung = MockServer::start(|_: &Value| MockReply::Delay {
        ms: 60_000,
        then: Box::new(MockReply::text("late")),
    })
    .await
    .unwrap();
    let out = tmp("hung");
    let mut opts = options(spec("sphinx-react", &[], &hung.base_url()), TASK, &out);
    opts.limits.turn_timeout = std::time::Duration::from_secs(1);
    let outcome = tokio::task::spawn_blocking(move || run(&opts)).await.unwrap();
    let e = the_episode(&outcome);
    assert_eq!(e.end, "infrastructure");
    assert!(
        e.infrastructure_error.as_deref().unwrap().contains("turn took over 1 s"),
        "{:?}",
        e.infrastructure_error
    );
    let summary = phonebench_runner::metrics::summarize(&outcome.episodes);
    assert_eq!((summary.overall.scored, summary.overall.infrastructure), (0, 1));
    drop(hung);
}

/// A coordinate model on an MCP task: the task's tools are in its prompt (and, with
/// `mcp_as_openai_tools`, in the request's `tools`), its `<tool_call>` to an MCP tool is routed
/// to the built-in finance server, and the next prompt carries the result.
#[tokio::test(flavor = "multi_thread")]
async fn a_coordinate_agent_calls_an_mcp_tool_and_reads_the_result() {
    let server = MockServer::start(|req: &Value| {
        let all = all_text(req);
        if all.contains("Tool call result: <tool_response>") {
            return MockReply::text(
                "Thought: converted\nAction: \"Done.\"\n<tool_call>\n{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"terminate\", \"status\": \"success\"}}\n</tool_call>",
            );
        }
        // "… paid 120 EUR for our share. Use the finance tool to convert it to USD at …"
        let paid: Vec<&str> = all.split("paid ").nth(1).unwrap_or_default().split_whitespace().take(2).collect();
        let to: String = all.split("convert it to ").nth(1).unwrap_or_default().chars().take(3).collect();
        let [amount, from] = paid[..] else {
            return MockReply::Status { code: 500, body: format!("no amount in {all}"), retry_after: None };
        };
        MockReply::text(format!(
            "Thought: convert first\nAction: \"Convert.\"\n<tool_call>\n{{\"name\": \"finance_convert\", \"arguments\": {{\"amount\": {amount}, \"from\": \"{from}\", \"to\": \"{to}\"}}}}\n</tool_call>"
        ))
    })
    .await
    .expect("mock starts");
    let out = tmp("coords-mcp");
    let agent = spec("coords", &["convention=qwen3-vl", "mcp_as_openai_tools=true"], &server.base_url());
    let opts = options(agent, "mcp.convert_and_text", &out);
    let outcome = tokio::task::spawn_blocking(move || run(&opts)).await.unwrap();
    let e = the_episode(&outcome);
    assert_eq!((e.mcp_calls, e.mcp_errors), (1, 0), "{e:?}");
    assert_eq!(e.acp, 0.5, "the lookup criterion holds, the message was never sent");
    let steps = steps(&out, &e.key);
    let call = steps[0].mcp.as_ref().expect("step 0 called a tool");
    assert_eq!(call.tool, "finance_convert");
    assert!(call.result.contains("\"result\":") && !call.is_error, "{call:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let system = system_text(&requests[0]);
    assert!(
        system.contains("\"name\": \"finance_convert\"") && system.contains("fixed reference rates"),
        "{system}"
    );
    let tools: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert_eq!(tools, ["finance_quote", "finance_search_symbols", "finance_convert", "finance_rates"]);
    // The result goes back in the step sentence; upstream's template drops newlines and quotes.
    let echoed = call.result.replace(['\n', '"'], "");
    let second = all_text(&requests[1]);
    assert!(
        second.contains(&format!("Tool call result: <tool_response>{echoed}</tool_response>")),
        "{second}"
    );
    server.stop().await;
}
