//! Every probe against the mock model server with scripted answers: scores equal the values
//! worked out by hand below (SPHINX's reading and the strict one, original and repaired), and
//! the generated grounding set is large, spread over the apps, and scored right by an oracle.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use phonebench_agents::llm::{ModelHandle, ModelSection};
use phonebench_model::mock::{MockReply, MockServer, last_user_text};
use phonebench_model::{ChatModel, Endpoint, OpenAiClient, RetryPolicy};
use phonebench_probe::ask::{AskSettings, ProbeResult, ask};
use phonebench_probe::item::{ItemBody, Mode, ProbeItem, ProbeKind};
use phonebench_probe::score::{Figure, figures};
use phonebench_probe::{Parsing, ProbeConfig, ProbeRunOptions, run_probe};
use serde_json::json;

fn handle(url: &str) -> ModelHandle {
    let mut endpoint = Endpoint::new(url, "mock");
    endpoint.retry = RetryPolicy { max_retries: 0, base_delay_ms: 1, max_delay_ms: 1 };
    let client: Arc<dyn ChatModel> = Arc::new(OpenAiClient::new(endpoint).unwrap());
    ModelHandle::new(client, &ModelSection::default())
}

const SPHINX: AskSettings = AskSettings { parsing: Parsing::Sphinx, repair: true };
const STRICT: AskSettings = AskSettings { parsing: Parsing::Strict, repair: true };

async fn ask_all(url: &str, items: &[ProbeItem], modes: &[Mode], settings: AskSettings) -> Vec<ProbeResult> {
    let model = handle(url);
    let mut out = Vec::new();
    for item in items {
        for &mode in modes {
            let (result, _) = ask(&model, item.probe, item, mode, settings).await;
            assert_eq!(result.infrastructure_error, None, "{}", result.key);
            out.push(result);
        }
    }
    out
}

/// The figure `measure` of `mode`: (n, original, repaired).
fn figure(figures: &[Figure], mode: Mode, measure: &str) -> (u32, Option<f64>, Option<f64>) {
    let f = figures
        .iter()
        .find(|f| f.mode == mode && f.measure == measure)
        .unwrap_or_else(|| panic!("no figure {measure} in {figures:#?}"));
    (f.n, f.original, f.repaired)
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

fn knowledge_fixture(dir: &Path) {
    let questions = json!([
        {"question": "Which app lists my contacts?", "options": {"A": "Alpha", "B": "Beta", "C": "Gamma", "D": "Delta"},
         "ground_truth": "B", "question_type": "app_level", "app_name": ["Contacts"], "app_cateory": "Communication", "author": "t"},
        {"question": "I want three of them. Which option?", "options": {"A": "One", "B": "Two", "C": "Three", "D": "Four"},
         "ground_truth": "C", "question_type": "intention_level", "app_name": ["Counter", "Count"], "app_cateory": null, "author": "t"},
        {"question": "no options here", "ground_truth": "A", "question_type": "app_level", "app_name": ["X"]}
    ]);
    std::fs::write(dir.join("questions.json"), questions.to_string()).unwrap();
}

/// Scripted answers: each prompt is recognised by what it contains.
fn knowledge_answer(prompt: &str) -> &'static str {
    let table: [(&str, &str); 12] = [
        // Repair calls first (they quote the answer they repair).
        ("Which option does this answer choose?", "C"),
        ("Here is an answer to a yes-or-no question:\n\nNo\n", "F"),
        ("Here is an answer to a yes-or-no question:\n\nT \n", "T"),
        ("Statement: Alpha\n", "F"),
        ("Statement: Beta\n", "T"),
        ("Statement: Gamma\n", "T "),
        ("Statement: Delta\n", "F"),
        ("Statement: One\n", "F"),
        ("Statement: Two\n", "No"),
        ("Statement: Three\n", "T"),
        ("Statement: Four\n", "T"),
        ("lists my contacts", "B"),
    ];
    table.iter().find(|(k, _)| prompt.contains(k)).map_or("c", |(_, v)| v)
}

#[tokio::test]
async fn knowledge_scores_match_hand_computed_values_with_sphinx_and_strict_reading() {
    let dir = tempdir("knowledge");
    knowledge_fixture(&dir);
    let loaded = phonebench_probe::sphinx_data::knowledge(&dir).unwrap();
    assert_eq!(loaded.items.len(), 2);
    assert_eq!(loaded.skipped.len(), 1, "{:?}", loaded.skipped);
    assert!(loaded.skipped[0].contains("entry 2"), "{:?}", loaded.skipped);
    let server =
        MockServer::start(|req: &serde_json::Value| MockReply::text(knowledge_answer(&last_user_text(req))))
            .await
            .unwrap();
    let results = ask_all(&server.base_url(), &loaded.items, &[Mode::Text], SPHINX).await;
    // SPHINX, question 1 (app_level, B): MCQ `B` right; BQs Alpha F right, Beta T right, Gamma
    // `T ` not an answer (repaired to T: wrong, F expected), Delta F right → 4/5, repaired 4/5.
    // Question 2 (intention_level, C): MCQ `c` not an answer (repaired to C: right); One F right,
    // Two `No` not an answer (repaired to F: right), Three T right, Four T wrong → 2/5, repaired 4/5.
    let f = figures(&results);
    assert_eq!(figure(&f, Mode::Text, "accuracy:app_level"), (5, Some(0.8), Some(0.8)));
    let (n, original, repaired) = figure(&f, Mode::Text, "accuracy:intention_level");
    assert_eq!(n, 5);
    assert!(close(original, 0.4) && close(repaired, 0.8), "{original:?} {repaired:?}");
    assert_eq!(figure(&f, Mode::Text, "mcq:intention_level"), (1, Some(0.0), Some(1.0)));
    assert_eq!(figure(&f, Mode::Text, "bq:app_level"), (4, Some(0.75), Some(0.75)));
    assert_eq!(figure(&f, Mode::Text, "bq:intention_level"), (4, Some(0.5), Some(0.75)));
    assert_eq!(results.iter().map(|r| r.repairs).sum::<u32>(), 3);
    assert_eq!(results.iter().map(|r| r.format_errors).sum::<u32>(), 3);
    // The prompts are SPHINX's: a missing category prints as Python's None.
    let prompts: Vec<String> = server.requests().iter().map(last_user_text).collect();
    assert!(
        prompts.iter().any(|p| p.starts_with("Given the app name Counter in the category 'None', answer"))
    );

    // Strict: `T ` reads as T (wrong, and not repaired); `c` and `No` still need repair.
    let strict = ask_all(&server.base_url(), &loaded.items, &[Mode::Text], STRICT).await;
    let f = figures(&strict);
    assert_eq!(figure(&f, Mode::Text, "accuracy:app_level"), (5, Some(0.8), Some(0.8)));
    assert_eq!(strict.iter().map(|r| r.repairs).sum::<u32>(), 2);

    // The profile reads the repaired accuracies.
    let p = phonebench_probe::profile("mock", &results, &[]);
    assert!(close(p.values[0], 0.8) && close(p.values[1], 0.8), "{:?}", p.values);
    assert_eq!(p.values[5..], [None, None, None]);
}

/// A uiautomator dump: a button `Add`, an edit field, and a clickable row with a text inside.
const SCREEN: &str = r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0">
<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.x" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][768,1280]">
<node index="0" text="Add" resource-id="com.x:id/add" class="android.widget.Button" package="com.x" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][100,100]" />
<node index="1" text="" resource-id="com.x:id/title" class="android.widget.EditText" package="com.x" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,200][500,300]" />
<node index="2" text="" resource-id="com.x:id/row" class="android.widget.LinearLayout" package="com.x" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,400][768,500]">
<node index="0" text="Milk" resource-id="com.x:id/name" class="android.widget.TextView" package="com.x" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[10,410][200,490]" />
</node>
</node>
</hierarchy>"#;

fn element(bounds: &str) -> serde_json::Value {
    json!({"bounds": bounds, "class": "android.widget.Button", "text": "", "resource-id": "", "content-desc": ""})
}

fn grounding_fixture(dir: &Path) {
    std::fs::create_dir_all(dir.join("lowlevel_tasks")).unwrap();
    for id in [11, 12, 13, 14, 15, 16] {
        std::fs::write(dir.join(format!("lowlevel_tasks/{id}.xml")), SCREEN).unwrap();
    }
    // One screenshot (a plain grey screen of the dump's size).
    let mut pixmap = phonebench_pixels::Pixmap::new(768, 1280).unwrap();
    pixmap.fill(tiny_skia::Color::from_rgba8(200, 200, 200, 255));
    std::fs::write(dir.join("lowlevel_tasks/11.png"), phonebench_pixels::encode_png(&pixmap).unwrap())
        .unwrap();
    let tasks = json!([
        {"id": 11, "app": "x", "instruction": "Tap Add.", "groundtruth": {"type": "click", "element": element("[0,0][100,100]")}},
        {"id": 12, "app": "x", "instruction": "Type hello.", "groundtruth": {"type": "input", "message": "hello", "element": element("[0,200][500,300]")}},
        {"id": 13, "app": "x", "instruction": "Open the Milk row.", "groundtruth": {"type": "click", "element": element("[0,400][768,500]")}},
        {"id": 14, "app": "x", "instruction": "Go back now.", "groundtruth": {"type": "back", "element": null}},
        {"id": 15, "app": "x", "instruction": "Press Add again.", "groundtruth": {"type": "click", "element": element("[0,0][100,100]")}},
        {"id": 2, "app": "x", "instruction": "screen missing", "groundtruth": {"type": "back", "element": null}},
        {"id": 16, "app": "x", "instruction": "bad", "groundtruth": {"type": "fly", "element": null}},
        {"id": 11, "app": "x", "instruction": "the same id again", "groundtruth": {"type": "back", "element": null}}
    ]);
    std::fs::write(dir.join("lowlevel_tasks.json"), tasks.to_string()).unwrap();
}

const PHRASE: &str = "In summary, the next action I will perform is ";

fn grounding_answer(system: &str, prompt: &str) -> String {
    if system.contains("fixing an output") {
        // The fixer: right for the row, nothing usable otherwise.
        return if prompt.contains("click [2]") {
            "```click [2]```".into()
        } else {
            "I cannot fix this.".into()
        };
    }
    let task = prompt.rsplit("Task: ").next().unwrap_or_default();
    if prompt.contains("coordination (x,y)") {
        // Coordinates: inside the Add button for "Tap Add.", outside for anything else.
        return if task.trim() == "Tap Add." {
            format!("{PHRASE}```click [50,50]```")
        } else {
            format!("{PHRASE}```click [700,50]```")
        };
    }
    match task.trim() {
        "Tap Add." => format!("The button is 0. {PHRASE}```click [0]```"),
        "Type hello." => "```text [1] [hello world]```".into(),
        "Open the Milk row." => "I would click [2] here.".into(),
        "Go back now." => format!("{PHRASE}```press [back]```"),
        _ => format!("{PHRASE}```click [7]```"),
    }
}

#[tokio::test]
async fn grounding_scores_match_hand_computed_values_with_repair_and_strict_reading() {
    let dir = tempdir("grounding");
    grounding_fixture(&dir);
    let loaded = phonebench_probe::sphinx_data::grounding(&dir).unwrap();
    assert_eq!(loaded.items.len(), 5);
    assert_eq!(loaded.skipped.len(), 3, "{:?}", loaded.skipped);
    assert!(loaded.skipped.iter().any(|s| s.contains("1 tasks have no screen")));
    assert!(loaded.skipped.iter().any(|s| s.contains("id 11 comes twice")), "{:?}", loaded.skipped);
    // The oracle's index of the row is 2 (index table: Add, the field, the row).
    let ItemBody::Step(row) = &loaded.items[2].body else { panic!() };
    assert_eq!(row.expected.index, Some(2));
    let server = MockServer::start(|req: &serde_json::Value| {
        MockReply::text(grounding_answer(&phonebench_model::mock::system_text(req), &last_user_text(req)))
    })
    .await
    .unwrap();
    let results = ask_all(&server.base_url(), &loaded.items, &[Mode::Text], SPHINX).await;
    // SPHINX: Add right; the text is wrong (not a format error); the row answer has no fenced
    // block (repaired: right); back right; index 7 is no widget (repair gives nothing: press
    // [none], wrong) → 2/5 original, 3/5 repaired; clicks 1/3 and 2/3.
    let f = figures(&results);
    assert_eq!(figure(&f, Mode::Text, "accuracy"), (5, Some(0.4), Some(0.6)));
    let (n, original, repaired) = figure(&f, Mode::Text, "accuracy:click");
    assert_eq!(n, 3);
    assert!(close(original, 1.0 / 3.0) && close(repaired, 2.0 / 3.0));
    assert_eq!(figure(&f, Mode::Text, "format_errors"), (5, Some(0.4), None));
    // SoM and coordinates need a screenshot: only the item with a PNG is asked in them. The
    // set-of-marks image differs from the plain one; a point inside the target is right.
    let with_png: Vec<ProbeItem> =
        loaded.items.iter().filter(|i| phonebench_probe::ask::askable(i, Mode::Som)).cloned().collect();
    assert_eq!(with_png.len(), 1);
    let pictures = ask_all(&server.base_url(), &with_png, &[Mode::Som, Mode::Coords], SPHINX).await;
    let f = figures(&pictures);
    assert_eq!(figure(&f, Mode::Som, "accuracy"), (1, Some(1.0), Some(1.0)));
    assert_eq!(figure(&f, Mode::Coords, "accuracy"), (1, Some(1.0), Some(1.0)));
    let images: Vec<Vec<String>> =
        server.requests().iter().map(phonebench_model::mock::image_urls).filter(|i| !i.is_empty()).collect();
    assert_eq!(images.len(), 2);
    assert_ne!(images[0], images[1], "the set-of-marks picture is not the plain one");
    // The prompt is run_lowlevel.py's: the indexed tree, then the task.
    let prompts: Vec<String> = server.requests().iter().map(last_user_text).collect();
    assert!(prompts.iter().any(|p| p.contains(
        "Observation: a View (class: android.widget.FrameLayout)\n\t[0] a View (resource-id: add, text: Add, class: android.widget.Button) to click\n"
    )));

    // Strict: answers without the summary phrase are format errors. Add right; text, row and
    // the bad index go to repair (the row is fixed); back right → 2/5 original, 3/5 repaired.
    let strict = ask_all(&server.base_url(), &loaded.items, &[Mode::Text], STRICT).await;
    let f = figures(&strict);
    assert_eq!(figure(&f, Mode::Text, "accuracy"), (5, Some(0.4), Some(0.6)));
    assert_eq!(figure(&f, Mode::Text, "format_errors"), (5, Some(0.6), None));
}

fn completion_fixture(dir: &Path) {
    let trace = dir.join("groundtruth/7/x");
    std::fs::create_dir_all(&trace).unwrap();
    for i in 0..3 {
        std::fs::write(trace.join(format!("{i}.xml")), SCREEN).unwrap();
    }
    let add = json!({"bounds": "[0,0][100,100]", "class": "android.widget.Button", "text": "Add", "resource-id": "com.x:id/add", "content-desc": ""});
    let field = json!({"bounds": "[0,200][500,300]", "class": "android.widget.EditText", "text": "", "resource-id": "com.x:id/title", "content-desc": ""});
    let meta = json!([
        {"type": "click", "element": add},
        {"type": "input", "element": field, "message": "milk"},
        {"type": "stop", "element": null}
    ]);
    std::fs::write(trace.join("meta.json"), meta.to_string()).unwrap();
    std::fs::write(
        trace.join("activities.json"),
        json!([["com.x", "A"], ["com.x", "B"], ["com.x", "C"]]).to_string(),
    )
    .unwrap();
    let tasks = json!([{"id": 7, "description": "add milk to the list", "apps": ["x", "missing"]}]);
    std::fs::write(dir.join("task_info_all.json"), tasks.to_string()).unwrap();
}

#[tokio::test]
async fn instructions_compare_the_full_and_the_focused_context_on_the_same_steps() {
    let dir = tempdir("instructions");
    grounding_fixture(&dir);
    // The first two grounding steps, as steps of a task with a goal and earlier actions.
    let items: Vec<ProbeItem> = phonebench_probe::sphinx_data::grounding(&dir)
        .unwrap()
        .items
        .into_iter()
        .take(2)
        .map(|mut item| {
            item.probe = ProbeKind::Instructions;
            if let ItemBody::Step(step) = &mut item.body {
                step.goal = Some("Add milk to the shopping list".into());
                step.history = vec!["Open the Lists app.".into()];
            }
            item
        })
        .collect();
    let server = MockServer::start(|req: &serde_json::Value| {
        let prompt = last_user_text(req);
        let system = phonebench_model::mock::system_text(req);
        MockReply::text(if system.contains("fixing an output") {
            "```click [0]```".to_string()
        } else if prompt.contains("PREVIOUS ACTIONS:\n- Open the Lists app.") {
            // With the whole trajectory the model forgets the format (repaired to click [0]).
            "I will click [0].".to_string()
        } else {
            format!("{PHRASE}```click [0]```")
        })
    })
    .await
    .unwrap();
    let results = ask_all(&server.base_url(), &items, &[Mode::Full, Mode::Focused], SPHINX).await;
    let f = figures(&results);
    // Step 1 expects click Add (index 0), step 2 typing: full context 0/2 as answered (both format
    // errors), 1/2 repaired; focused 1/2 with no format error.
    assert_eq!(figure(&f, Mode::Full, "accuracy"), (2, Some(0.0), Some(0.5)));
    assert_eq!(figure(&f, Mode::Full, "format_errors"), (2, Some(1.0), None));
    assert_eq!(figure(&f, Mode::Focused, "accuracy"), (2, Some(0.5), Some(0.5)));
    assert_eq!(figure(&f, Mode::Focused, "format_errors"), (2, Some(0.0), None));
    let prompts: Vec<String> = server.requests().iter().map(last_user_text).collect();
    assert!(prompts.iter().any(|p| {
        p.contains("TASK: Add milk to the shopping list\nPREVIOUS ACTIONS:\n- Open the Lists app.")
    }));
}

#[tokio::test]
async fn completion_scores_follow_sphinx_last_pre_overall_and_its_yes_no_quirks() {
    let dir = tempdir("completion");
    completion_fixture(&dir);
    let loaded = phonebench_probe::sphinx_data::completion(&dir).unwrap();
    assert_eq!(loaded.items.len(), 3, "one item per screen, the stop's included");
    assert_eq!(loaded.skipped.len(), 1, "{:?}", loaded.skipped);
    let server = MockServer::start(|req: &serde_json::Value| {
        let prompt = last_user_text(req);
        let actions = prompt.matches("\n- ").count();
        MockReply::text(match actions {
            0 => "No.",
            // SPHINX: "not" comes after "yes", so NO; strictly, the only whole word is yes.
            1 => "Yes, I know it's not done",
            _ => "YES",
        })
    })
    .await
    .unwrap();
    let results = ask_all(&server.base_url(), &loaded.items, &[Mode::Tree, Mode::Action], SPHINX).await;
    let f = figures(&results);
    for mode in [Mode::Tree, Mode::Action] {
        assert_eq!(figure(&f, mode, "last"), (1, Some(1.0), None));
        assert_eq!(figure(&f, mode, "pre"), (2, Some(1.0), None));
        assert_eq!(figure(&f, mode, "overall"), (1, Some(1.0), None));
    }
    let prompts: Vec<String> = server.requests().iter().map(last_user_text).collect();
    let tree = prompts
        .iter()
        .find(|p| p.contains("Here is the current screen: \n") && p.contains("Type milk"))
        .unwrap();
    assert!(tree.contains("\n- Click on a View (resource-id: add, text: Add, class: android.widget.Button).\n- Type milk on a View (resource-id: title, class: android.widget.EditText).\n"), "{tree}");
    assert!(tree.contains("\n\ta View (class: android.widget.FrameLayout)\n\t\ta View (resource-id: add, text: Add, class: android.widget.Button)\n"), "{tree}");
    assert!(
        prompts
            .iter()
            .any(|p| !p.contains("current screen")
                && p.ends_with("If we have finished, say YES, else say NO."))
    );

    let strict = ask_all(&server.base_url(), &loaded.items, &[Mode::Tree], STRICT).await;
    let f = figures(&strict);
    assert_eq!(figure(&f, Mode::Tree, "pre"), (2, Some(0.5), None));
    assert_eq!(figure(&f, Mode::Tree, "overall"), (1, Some(0.0), None));
    let p = phonebench_probe::profile("mock", &strict, &[]);
    assert!(close(p.values[2], 0.75), "planning is the mean of Last and Pre: {:?}", p.values[2]);
}

#[tokio::test]
async fn a_probe_run_stores_resumes_refuses_other_settings_and_keeps_server_failures_apart() {
    let dir = tempdir("run");
    knowledge_fixture(&dir);
    let items = phonebench_probe::sphinx_data::knowledge(&dir).unwrap().items;
    // The second question's prompts fail until the server is "back up".
    let up = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let server_up = up.clone();
    let server = MockServer::start(move |req: &serde_json::Value| {
        let prompt = last_user_text(req);
        if prompt.contains("three of them") && !server_up.load(std::sync::atomic::Ordering::SeqCst) {
            return MockReply::Status { code: 503, body: "down".into(), retry_after: None };
        }
        MockReply::text(knowledge_answer(&prompt))
    })
    .await
    .unwrap();
    let model = handle(&server.base_url());
    let config = config(ProbeKind::Knowledge, "mock", Mode::Text, &items);
    let out = dir.join("results");
    let options = ProbeRunOptions { concurrency: 2, progress: false, resume: false, fresh: false };
    let mut db = phonebench_runner::ResultsDb::open(&out).unwrap();
    let first = run_probe(&mut db, &items, &config, &model, &options).await.unwrap();
    assert_eq!((first.asked, first.infrastructure_failures), (2, 1));
    let stored = phonebench_probe::run::stored_results(&db).unwrap();
    assert_eq!(figures(&stored)[0].measure, "accuracy:app_level", "the failed item is in no figure");
    assert!(figures(&stored).iter().all(|f| !f.measure.contains("intention")));
    // Without --resume a second run is refused; with it only the failed item is asked again.
    assert!(run_probe(&mut db, &items, &config, &model, &options).await.is_err());
    up.store(true, std::sync::atomic::Ordering::SeqCst);
    let resumed = ProbeRunOptions { resume: true, ..options.clone() };
    let second = run_probe(&mut db, &items, &config, &model, &resumed).await.unwrap();
    assert_eq!((second.asked, second.skipped, second.infrastructure_failures), (1, 1, 0));
    let jsonl = std::fs::read_to_string(out.join("probes.jsonl")).unwrap();
    assert_eq!(jsonl.lines().count(), 2);
    // Other settings never mix with these results.
    let strict = ProbeConfig { settings: STRICT, ..config.clone() };
    let err = run_probe(&mut db, &items, &strict, &model, &resumed).await.unwrap_err();
    assert!(err.to_string().contains("settings"), "{err}");
    // A fresh run of the same settings writes the same bytes.
    let fresh = ProbeRunOptions { fresh: true, ..options };
    run_probe(&mut db, &items, &config, &model, &fresh).await.unwrap();
    assert_eq!(std::fs::read_to_string(out.join("probes.jsonl")).unwrap(), jsonl);
}

#[tokio::test]
async fn generated_grounding_is_large_spread_over_apps_and_an_oracle_scores_all_of_it() {
    let root = phonebench_testkit::workspace_root();
    let catalog = phonebench_phone::Catalog::load_dir(&root.join("apps")).unwrap();
    let suite = phonebench_tasks::Suite::load(&root.join("suites/full")).unwrap();
    let tasks: Vec<&phonebench_tasks::TaskSpec> = suite.tasks.iter().collect();
    let generated = phonebench_probe::generate::generate(&catalog, &tasks, suite.manifest.seed);
    let items = &generated.grounding;
    let apps: std::collections::BTreeSet<&str> = items.iter().filter_map(|i| i.app.as_deref()).collect();
    assert!(items.len() >= 1000, "{} grounding items", items.len());
    // Knowledge questions have one right answer each and do not give it away.
    let mut answers: std::collections::BTreeMap<(String, String), String> = Default::default();
    for q in &generated.knowledge {
        let ItemBody::Question(q) = &q.body else { panic!() };
        let right = q.options.iter().find(|(l, _)| *l == q.answer).map(|(_, t)| t.clone()).unwrap();
        let before = answers.insert((q.app_name.clone(), q.question.clone()), right.clone());
        assert!(before.is_none_or(|b| b == right), "{} has two right answers", q.question);
        if q.question_type == "intention_level" {
            assert!(
                !q.question.to_lowercase().contains(&right.to_lowercase()),
                "{} names its answer",
                q.question
            );
        }
    }
    assert!(apps.len() >= 9, "{apps:?}");
    let ids: std::collections::BTreeSet<&str> = items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids.len(), items.len(), "ids are unique");

    // The oracle answers the target's index; a random player a uniformly drawn element of the
    // index table. Chance is, per item, the share of elements whose centre lies in the target.
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let (mut oracle, mut random, mut chance, mut scored) = (0usize, 0usize, 0.0, 0usize);
    for item in items {
        let ItemBody::Step(step) = &item.body else { panic!("{}", item.id) };
        let observation =
            phonebench_observe::render(&step.screen.tree, phonebench_observe::ObservationFormat::SphinxTree);
        let targets = &observation.targets;
        let kind = step.expected.kind.as_str();
        let action = |i: usize| -> phonebench_actions::Action {
            let target = phonebench_actions::Target::Index(i as u32);
            match kind {
                "longclick" => phonebench_actions::Action::LongPress { target },
                "input" => phonebench_actions::Action::Type {
                    text: step.expected.text.clone().unwrap(),
                    target: Some(target),
                    clear: true,
                    enter: false,
                },
                "swipe" => phonebench_actions::Action::Swipe(phonebench_actions::Swipe::Direction {
                    direction: phonebench_actions::Direction::Up,
                    target: Some(target),
                }),
                "back" => phonebench_actions::Action::Key { key: phonebench_actions::Key::Back },
                "enter" => phonebench_actions::Action::Key { key: phonebench_actions::Key::Enter },
                _ => phonebench_actions::Action::Tap { target },
            }
        };
        let score = |i: usize| {
            phonebench_probe::ask::right_action(&action(i), step, targets, &step.screen.tree).unwrap()
        };
        let right = step.expected.index.unwrap_or(0);
        assert!(score(right), "{}: the oracle's answer is wrong", item.id);
        oracle += 1;
        if step.expected.index.is_some() {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            random += usize::from(score((rng % targets.len() as u64) as usize));
            let bounds = step.expected.bounds.unwrap();
            let inside = targets
                .iter()
                .filter(|id| {
                    let (x, y) = step.screen.tree.node(**id).bounds.center();
                    bounds.contains_inclusive(x, y)
                })
                .count();
            chance += inside as f64 / targets.len() as f64;
            scored += 1;
        }
    }
    assert_eq!(oracle, items.len());
    let (random, chance) = (random as f64 / scored as f64, chance / scored as f64);
    eprintln!("{} items over {} apps; random {random:.4}, chance {chance:.4}", items.len(), apps.len());
    assert!(random < 0.25, "random scores {random}");
    assert!((random - chance).abs() < 0.04, "random {random} vs chance {chance}");

    // End to end through the mock server: an oracle model answering the right index for 30
    // items (found by the prompt it is shown) scores 100%, original and repaired.
    let mut answers = std::collections::HashMap::new();
    for item in items.iter().take(30) {
        let ItemBody::Step(step) = &item.body else { panic!() };
        let observation =
            phonebench_observe::render(&step.screen.tree, phonebench_observe::ObservationFormat::SphinxTree);
        let prompt = phonebench_probe::prompt::grounding(
            phonebench_probe::prompt::GroundingView::Tree(&observation.text),
            &step.instruction,
        );
        let i = step.expected.index.unwrap_or(0);
        let action = match step.expected.kind.as_str() {
            "click" => format!("click [{i}]"),
            "longclick" => format!("longclick [{i}]"),
            "input" => format!("text [{i}] [{}]", step.expected.text.clone().unwrap()),
            "swipe" => format!("swipe [{i}] [up]"),
            other => format!("press [{other}]"),
        };
        answers.insert(prompt, format!("{PHRASE}```{action}```"));
    }
    let answers = Arc::new(answers);
    let server = MockServer::start(move |req: &serde_json::Value| {
        MockReply::text(answers.get(&last_user_text(req)).cloned().unwrap_or_default())
    })
    .await
    .unwrap();
    let results = ask_all(&server.base_url(), &items[..30], &[Mode::Text], STRICT).await;
    assert_eq!(figure(&figures(&results), Mode::Text, "accuracy"), (30, Some(1.0), Some(1.0)));
}

/// A run of `probe` over SPHINX-sourced `items` in one mode, SPHINX's reading, repair on.
fn config(probe: ProbeKind, model: &str, mode: Mode, items: &[ProbeItem]) -> ProbeConfig {
    ProbeConfig {
        probe,
        model: model.into(),
        data: vec![phonebench_probe::DataSource::Sphinx],
        modes: vec![mode],
        settings: SPHINX,
        limit: None,
        suite: None,
        items: phonebench_probe::run::items_digest(items),
        sampling: String::new(),
    }
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-probe-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn sphinx_data_is_read_only_inside_its_folder() {
    let outside = tempdir("outside");
    std::fs::create_dir_all(outside.join("screens")).unwrap();
    std::fs::write(outside.join("screens/11.xml"), SCREEN).unwrap();
    std::fs::write(outside.join("secret.xml"), SCREEN).unwrap();
    // Grounding: the screens folder is a link out of the data folder.
    let dir = tempdir("linked");
    grounding_fixture(&dir);
    std::fs::remove_dir_all(dir.join("lowlevel_tasks")).unwrap();
    std::os::unix::fs::symlink(outside.join("screens"), dir.join("lowlevel_tasks")).unwrap();
    let loaded = phonebench_probe::sphinx_data::grounding(&dir).unwrap();
    assert!(loaded.items.is_empty());
    assert!(
        loaded.skipped.iter().any(|s| s.contains("not a folder (links are not followed)")),
        "{:?}",
        loaded.skipped
    );
    // Completion: a trajectory whose screen is a link, and one whose folder is a link.
    let dir = tempdir("linked-trace");
    completion_fixture(&dir);
    let trace = dir.join("groundtruth/7/x");
    std::fs::remove_file(trace.join("1.xml")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.xml"), trace.join("1.xml")).unwrap();
    let loaded = phonebench_probe::sphinx_data::completion(&dir).unwrap();
    assert!(loaded.items.is_empty());
    assert!(loaded.skipped.iter().any(|s| s.contains("1.xml: a link")), "{:?}", loaded.skipped);
    std::fs::remove_dir_all(dir.join("groundtruth/7")).unwrap();
    std::fs::create_dir_all(outside.join("7/x")).unwrap();
    std::os::unix::fs::symlink(outside.join("7"), dir.join("groundtruth/7")).unwrap();
    let loaded = phonebench_probe::sphinx_data::completion(&dir).unwrap();
    assert!(loaded.items.is_empty());
    assert!(
        loaded.skipped.iter().any(|s| s.contains("resolves outside the data folder")),
        "{:?}",
        loaded.skipped
    );
    // A FIFO among the screens is refused, never opened (opening it would wait forever); a
    // (task, app) pair listed twice is read once.
    let dir = tempdir("fifo");
    completion_fixture(&dir);
    let tasks = json!([{"id": 7, "description": "add milk", "apps": ["x", "x"]}]);
    std::fs::write(dir.join("task_info_all.json"), tasks.to_string()).unwrap();
    let loaded = phonebench_probe::sphinx_data::completion(&dir).unwrap();
    assert_eq!(loaded.items.len(), 3);
    assert!(loaded.skipped.iter().any(|s| s.contains("comes twice")), "{:?}", loaded.skipped);
    let trace = dir.join("groundtruth/7/x");
    std::fs::remove_file(trace.join("2.xml")).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(trace.join("2.xml")).status().unwrap().success());
    let loaded = phonebench_probe::sphinx_data::completion(&dir).unwrap();
    assert!(loaded.items.is_empty());
    assert!(loaded.skipped.iter().any(|s| s.contains("2.xml: not a regular file")), "{:?}", loaded.skipped);
}

#[tokio::test]
async fn a_broken_screenshot_makes_an_item_unaskable_not_a_server_failure() {
    let dir = tempdir("broken-png");
    grounding_fixture(&dir);
    std::fs::write(dir.join("lowlevel_tasks/11.png"), b"not a png at all").unwrap();
    let items: Vec<ProbeItem> = phonebench_probe::sphinx_data::grounding(&dir)
        .unwrap()
        .items
        .into_iter()
        .filter(|i| phonebench_probe::ask::askable(i, Mode::Som))
        .collect();
    // A PNG claiming 20000×20000 pixels is refused before it is decoded.
    let mut header = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut header, 20_000, 20_000);
        encoder.set_color(png::ColorType::Grayscale);
        let _ = encoder.write_header().unwrap();
    }
    std::fs::write(dir.join("huge.png"), &header).unwrap();
    let huge = phonebench_probe::item::ImageSource::File(dir.join("huge.png")).pixmap().unwrap_err();
    assert!(huge.contains("20000×20000 pixels"), "{huge}");
    let server = MockServer::start(|_: &serde_json::Value| MockReply::text("```click [0]```")).await.unwrap();
    let model = handle(&server.base_url());
    let (result, calls) = ask(&model, ProbeKind::Grounding, &items[0], Mode::Som, SPHINX).await;
    assert!(calls.is_empty(), "nothing was sent");
    assert_eq!(result.infrastructure_error, None);
    assert!(
        result.unaskable.as_deref().is_some_and(|e| e.contains("cannot read the screenshot")),
        "{result:?}"
    );
    assert!(figures(&[result]).is_empty(), "an unaskable item is in no figure");
    // Through a run it counts once, as unavailable, and again so on resume (never as asked).
    let config = config(ProbeKind::Grounding, "mock", Mode::Som, &items);
    let mut db = phonebench_runner::ResultsDb::open(&dir.join("results")).unwrap();
    let options = ProbeRunOptions { concurrency: 1, progress: false, resume: true, fresh: false };
    for _ in 0..2 {
        let outcome = run_probe(&mut db, &items, &config, &model, &options).await.unwrap();
        assert_eq!((outcome.asked, outcome.skipped, outcome.unavailable), (0, 0, 1), "{outcome:?}");
    }
}

#[test]
fn overall_counts_only_trajectories_scored_whole() {
    let r = |item: &str, trajectory: &str, last: bool, right: bool, failed: bool| ProbeResult {
        key: ProbeResult::key_of(ProbeKind::Completion, Mode::Tree, item),
        probe: ProbeKind::Completion,
        mode: Mode::Tree,
        item: item.into(),
        source: phonebench_probe::DataSource::Sphinx,
        app: None,
        group: if last { "last" } else { "pre" }.into(),
        trajectory: Some(trajectory.into()),
        answers: Vec::new(),
        units: 1,
        correct: u32::from(right),
        correct_repaired: u32::from(right),
        format_errors: 0,
        repairs: 0,
        infrastructure_error: failed.then(|| "down".to_string()),
        unaskable: None,
    };
    let results = [
        // a: whole and right. b: its last screen failed on the server. c: cut before its last.
        r("a0", "a", false, true, false),
        r("a1", "a", true, true, false),
        r("b0", "b", false, true, false),
        r("b1", "b", true, false, true),
        r("c0", "c", false, true, false),
    ];
    let f = figures(&results);
    assert_eq!(figure(&f, Mode::Tree, "overall"), (1, Some(1.0), None));
    assert_eq!(figure(&f, Mode::Tree, "pre"), (3, Some(1.0), None));
    assert_eq!(figure(&f, Mode::Tree, "last"), (1, Some(1.0), None));
}

#[tokio::test]
async fn one_results_folder_holds_one_models_probes() {
    let dir = tempdir("two-models");
    knowledge_fixture(&dir);
    let items = phonebench_probe::sphinx_data::knowledge(&dir).unwrap().items;
    let server =
        MockServer::start(|req: &serde_json::Value| MockReply::text(knowledge_answer(&last_user_text(req))))
            .await
            .unwrap();
    let model = handle(&server.base_url());
    let config = |probe, name| config(probe, name, Mode::Text, &items);
    let options = ProbeRunOptions { concurrency: 1, progress: false, resume: false, fresh: false };
    let mut db = phonebench_runner::ResultsDb::open(&dir.join("results")).unwrap();
    run_probe(&mut db, &items, &config(ProbeKind::Knowledge, "a"), &model, &options).await.unwrap();
    let other = ProbeConfig { probe: ProbeKind::Instructions, ..config(ProbeKind::Knowledge, "b") };
    let err = run_probe(&mut db, &[], &other, &model, &options).await.unwrap_err();
    assert!(err.to_string().contains("holds probes of model `a`"), "{err}");
    // A run of another model into the folder is refused too; one of model `a` may join.
    let run = |model: &str| phonebench_runner::RunConfig {
        suite: "starter".into(),
        agent: "sphinx-react".into(),
        model: Some(model.into()),
        ..Default::default()
    };
    let err = db.claim(&run("b"), false).unwrap_err();
    assert!(err.to_string().contains("probe's results of model `a`"), "{err}");
    db.claim(&run("a"), false).unwrap();
}
