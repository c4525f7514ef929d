//! Probe items generated from our own apps and tasks.
//!
//! Every task's reference is played on the simulated phone (instance 0 of the suite's seed, no
//! disturbances). The phone knows the truth of every screen it draws, so each playthrough
//! gives, without anyone writing answers:
//! - **grounding** items: every reference step that acts on an element is a step-level
//!   instruction (`Click "Save".`) whose right target is the element of SPHINX's index table
//!   under the reference's touch; `Go back.` and `Press enter.` too;
//! - **completion** items: every prefix of the playthrough, labelled by the task's own criteria
//!   evaluated as if the agent stopped there (YES from the step the goal is reached);
//! - **knowledge** items: for each app, which screen holds a control and what tapping a control
//!   opens (app knowledge, from the transitions the playthroughs recorded), and for each
//!   single-app task, which app its goal needs (goal understanding).
//!
//! Deterministic: tasks in id order, options shuffled by a generator seeded from the item id,
//! items of one kind interleaved app by app so that `--limit N` takes a spread of apps. Items
//! that would repeat one already made (same app, screen, instruction and target) are left out.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use phonebench_actions::{Action, FinishStatus, Key, Target};
use phonebench_agents::ReferenceAgent;
use phonebench_env::episode::DeviceOpener;
use phonebench_env::{Episode, EpisodeOptions};
use phonebench_eval::{EvalContext, Semantics, evaluate};
use phonebench_observe::ObservationFormat;
use phonebench_observe::sphinx::sphinx_element;
use phonebench_phone::Catalog;
use phonebench_tasks::{Category, TaskInstance, TaskSpec};
use phonebench_uitree::{NodeId, UiTree};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

use crate::item::{
    CompletionItem, DataSource, ExpectedAction, ImageSource, ItemBody, ProbeItem, ProbeKind, Question,
    Screen, StepItem,
};

/// App-knowledge questions kept per app and question kind (the first ones met).
pub const QUESTIONS_PER_APP: usize = 12;

/// Items generated from a suite, by probe, with what was left out and why.
#[derive(Debug, Default)]
pub struct Generated {
    /// Knowledge questions.
    pub knowledge: Vec<ProbeItem>,
    /// Completion judgments.
    pub completion: Vec<ProbeItem>,
    /// Grounding steps (also the instruction-following probe's steps).
    pub grounding: Vec<ProbeItem>,
    /// One line per task left out.
    pub skipped: Vec<String>,
}

/// One screen of a playthrough and the reference's action on it.
struct Played {
    tree: Arc<UiTree>,
    image: Option<ImageSource>,
    /// SPHINX's index table of the screen.
    targets: Vec<NodeId>,
    app: Option<String>,
    activity: String,
    /// The criteria hold if the agent stops here.
    complete: bool,
    /// The reference's action on this screen.
    action: Action,
}

/// Plays `inst`'s reference, recording every screen before each action: on the simulated phone,
/// or on a device opened by `device`.
fn play(
    catalog: &Catalog,
    inst: &TaskInstance,
    device: Option<&DeviceOpener>,
) -> Result<Vec<Played>, String> {
    let options = EpisodeOptions { format: ObservationFormat::SphinxTree, ..EpisodeOptions::default() };
    let mut episode = match device {
        Some(open) => {
            let device = open().map_err(|e| e.to_string())?;
            Episode::start_on_device(device, catalog, inst, options).map_err(|e| e.to_string())?
        }
        None => Episode::start(catalog, inst, options).map_err(|e| e.to_string())?,
    };
    let mut agent = ReferenceAgent::new(inst.reference.clone());
    let ctx = EvalContext { semantics: Semantics::AnyMatch, sql_params: inst.sql_params.clone() };
    let mut played = Vec::new();
    // The reference never takes more turns than the budget; the bound only guards the loop.
    for _ in 0..=inst.max_steps {
        let tree = episode.tree().clone();
        let targets = episode.observation().targets.clone();
        let image = episode.screen_image().ok().map(ImageSource::Drawn);
        let stopped = episode.stopped_here().map_err(|e| e.to_string())?;
        let complete = evaluate(&inst.criteria, &stopped, &ctx).success;
        let screen = stopped.screens.last().ok_or("no screen recorded")?;
        let (app, activity) = (screen.app.clone(), screen.activity.clone());
        let action = agent.decide(&tree);
        if let Some(why) = &agent.failure {
            return Err(format!("the reference failed: {why}"));
        }
        let ends = matches!(action, Action::Finish { .. } | Action::Answer { .. });
        played.push(Played { tree, image, targets, app, activity, complete, action: action.clone() });
        if ends {
            return Ok(played);
        }
        let feedback = episode.step(String::new(), Ok(action)).map_err(|e| e.to_string())?;
        if feedback.done {
            return Err("the episode ended before the reference did".into());
        }
    }
    Err("the reference did not finish within the step budget".into())
}

/// Where an action touches, when it touches a point.
fn touched(action: &Action) -> Option<(i32, i32)> {
    match action.primary_target()? {
        Target::Point(p) => Some((p.x, p.y)),
        _ => None,
    }
}

fn area(tree: &UiTree, id: NodeId) -> i64 {
    let b = tree.node(id).bounds;
    b.width().saturating_mul(b.height())
}

/// The smallest element of the index table whose bounds hold the point.
fn element_at(tree: &UiTree, targets: &[NodeId], (x, y): (i32, i32)) -> Option<usize> {
    targets
        .iter()
        .enumerate()
        .filter(|(_, id)| tree.node(**id).bounds.contains_inclusive(x, y))
        .min_by_key(|(_, id)| area(tree, **id))
        .map(|(i, _)| i)
}

/// What a person would call the control at a point: the text or description of the node
/// there, else of the first node inside the element that has one, else its hint, else its
/// resource id in words.
fn label(tree: &UiTree, element: NodeId, point: (i32, i32)) -> Option<String> {
    let own = |id: NodeId| {
        let n = tree.node(id);
        [n.text.trim(), n.content_desc.trim()].into_iter().find(|s| !s.is_empty()).map(str::to_string)
    };
    if let Some(text) = tree.hit_test(point.0, point.1).and_then(own) {
        return Some(text);
    }
    if let Some(text) = tree.dfs(element).find_map(own) {
        return Some(text);
    }
    let node = tree.node(element);
    if let Some(hint) = node.hint.as_deref().map(str::trim).filter(|h| !h.is_empty()) {
        return Some(hint.to_string());
    }
    let id = node.resource_id.rsplit('/').next().unwrap_or_default();
    (!id.is_empty()).then(|| id.replace('_', " "))
}

/// A one-line label: white space collapsed, at most 60 characters.
fn short(text: &str) -> String {
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match words.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &words[..cut]),
        None => words,
    }
}

/// An action on `tree` described as SPHINX's history lists actions.
fn describe(catalog: &Catalog, tree: &UiTree, action: &Action) -> String {
    let element = || {
        touched(action)
            .and_then(|(x, y)| tree.hit_test(x, y))
            .map(|n| sphinx_element(tree.node(n)))
            .unwrap_or_else(|| "a View".to_string())
    };
    let app_name = |app: &str| catalog.get(app).map_or_else(|| app.to_string(), |p| p.manifest.name.clone());
    crate::sphinx_data::describe_action(action, element, app_name)
}

fn no_element(kind: &str) -> ExpectedAction {
    ExpectedAction { kind: kind.to_string(), bounds: None, text: None, index: None }
}

/// The grounding item of one step (instruction and expected action), or why there is none.
fn step_item(screen: &Played) -> Result<(String, ExpectedAction), &'static str> {
    let tree = &screen.tree;
    let target = |point| {
        element_at(tree, &screen.targets, point).ok_or("no element of SPHINX's index table under the touch")
    };
    let labelled = |point| -> Result<(usize, String), &'static str> {
        let index = target(point)?;
        let element = screen.targets[index];
        let label =
            label(tree, element, point).ok_or("the touched element has no text, description or id")?;
        // An instruction naming text that is also elsewhere on the screen (two "T" day buttons,
        // a search field echoing the query) has more than one right answer: left out.
        let inside: BTreeSet<NodeId> = tree.dfs(element).collect();
        let same = |text: &str| text.trim().to_lowercase() == label.trim().to_lowercase();
        let elsewhere =
            tree.iter().any(|(id, n)| !inside.contains(&id) && (same(&n.text) || same(&n.content_desc)));
        if elsewhere {
            return Err("the control's label is also elsewhere on the screen");
        }
        Ok((index, short(&label)))
    };
    let expect = |kind: &str, index: usize, text: Option<String>| ExpectedAction {
        kind: kind.to_string(),
        bounds: Some(tree.node(screen.targets[index]).bounds),
        text,
        index: Some(index),
    };
    let point = touched(&screen.action);
    match &screen.action {
        Action::Tap { .. } | Action::DoubleTap { .. } => {
            let (index, label) = labelled(point.ok_or("no point")?)?;
            Ok((format!("Click \"{label}\"."), expect("click", index, None)))
        }
        Action::LongPress { .. } => {
            let (index, label) = labelled(point.ok_or("no point")?)?;
            Ok((format!("Long click \"{label}\"."), expect("longclick", index, None)))
        }
        Action::Type { text, .. } => {
            let point = point.ok_or("typing without a target")?;
            let index = target(point)?;
            let node = tree.node(screen.targets[index]);
            // The field's name: its hint, description or id, never its current text (content),
            // and words, not a sample value (a hint of "0" names nothing).
            let id = node.resource_id.rsplit('/').next().unwrap_or_default().replace('_', " ");
            let field = [node.hint.clone().unwrap_or_default(), node.content_desc.clone(), id]
                .into_iter()
                .find(|name| name.chars().filter(|c| c.is_alphabetic()).count() >= 2)
                .ok_or("the field has no hint, description or id in words")?;
            let instruction = format!("Type \"{text}\" into the \"{}\" field.", short(&field));
            Ok((instruction, expect("input", index, Some(text.clone()))))
        }
        Action::Scroll { direction, .. } => {
            let index = match point {
                Some(point) => target(point)?,
                // The main list: the largest scrollable element.
                None => screen
                    .targets
                    .iter()
                    .enumerate()
                    .filter(|(_, id)| tree.node(**id).scrollable)
                    .max_by_key(|(_, id)| area(tree, **id))
                    .map(|(i, _)| i)
                    .ok_or("no scrollable element in the index table")?,
            };
            Ok((format!("Scroll {} to see more.", direction.as_str()), expect("swipe", index, None)))
        }
        Action::Key { key: Key::Back } => Ok(("Go back.".to_string(), no_element("back"))),
        Action::Key { key: Key::Enter } => Ok(("Press enter.".to_string(), no_element("enter"))),
        _ => Err("not an action SPHINX's grounding asks for"),
    }
}

/// A title for a screen name (`contact_edit` → `Contact edit`).
fn screen_title(activity: &str) -> String {
    let words = activity.replace(['_', '-'], " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A generator seeded for one item (FNV-1a of its id).
fn rng_for(id: &str) -> ChaCha8Rng {
    let mut hash = phonebench_tasks::Fnv::default();
    hash.eat(id.as_bytes());
    ChaCha8Rng::seed_from_u64(hash.0)
}

/// A four-option question: `right` and three of `others` (distinct), shuffled; the options and
/// the right letter. `None` without three distinct others.
fn four_options(id: &str, right: &str, others: &[String]) -> Option<(Vec<(String, String)>, String)> {
    let mut pool: Vec<&String> = others.iter().filter(|o| o.as_str() != right).collect();
    pool.sort();
    pool.dedup();
    if pool.len() < 3 {
        return None;
    }
    let mut rng = rng_for(id);
    let mut chosen: Vec<String> = vec![right.to_string()];
    for _ in 0..3 {
        let i = (rng.next_u64() % pool.len() as u64) as usize;
        chosen.push(pool.remove(i).clone());
    }
    // Fisher–Yates over the four.
    for i in (1..chosen.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        chosen.swap(i, j);
    }
    let letters = ["A", "B", "C", "D"];
    let answer = letters[chosen.iter().position(|c| c == right)?].to_string();
    Some((letters.iter().map(|l| l.to_string()).zip(chosen).collect(), answer))
}

/// Values interleaved by a key (keys in order, each key's values in the order they came), so
/// that the first N spread over the keys: items over apps.
fn interleave<T>(values: Vec<T>, key: impl Fn(&T) -> String) -> Vec<T> {
    let mut by_key: BTreeMap<String, VecDeque<T>> = BTreeMap::new();
    for value in values {
        by_key.entry(key(&value)).or_default().push_back(value);
    }
    let mut out = Vec::new();
    while !by_key.is_empty() {
        by_key.retain(|_, queue| {
            if let Some(value) = queue.pop_front() {
                out.push(value);
            }
            !queue.is_empty()
        });
    }
    out
}

fn app_of(item: &ProbeItem) -> String {
    item.app.clone().unwrap_or_default()
}

/// What the playthroughs saw of each app, for app-knowledge questions.
#[derive(Default)]
struct AppMap {
    /// Screens seen, by app.
    screens: BTreeMap<String, BTreeSet<String>>,
    /// Controls tapped, by app: (screen, control label) → the screen of the same app it opened.
    controls: BTreeMap<String, BTreeMap<(String, String), Option<String>>>,
    /// Every text and description seen, by app: text → the screens showing it.
    texts: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

/// Whether two names share a word of three letters or more (plural `s` ignored): a control
/// named like the screen it is on or opens gives the answer away.
fn shares_word(a: &str, b: &str) -> bool {
    let words = |s: &str| -> BTreeSet<String> {
        s.to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 3)
            .map(|w| w.strip_suffix('s').unwrap_or(w).to_string())
            .collect()
    };
    !words(a).is_disjoint(&words(b))
}

/// Whether a label can name a control in a question: some letters, not only a number or a
/// sign (`15`, `.`, `OK` name nothing a person could place).
fn nameable(label: &str) -> bool {
    label.chars().filter(|c| c.is_alphabetic()).count() >= 3
}

/// A task's instance and its playthrough, or why there is none.
type Playthrough = Result<(TaskInstance, Vec<Played>), String>;

/// Every task's playthrough (instance 0), in `tasks` order, played on all cores: the tasks are
/// independent, and each playthrough is deterministic wherever it runs. On a device, one at a
/// time.
fn play_all(
    catalog: &Catalog,
    tasks: &[&TaskSpec],
    suite_seed: u64,
    device: Option<&DeviceOpener>,
) -> Vec<Playthrough> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let cores = if device.is_some() {
        1
    } else {
        std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
    };
    let threads = cores.min(tasks.len().max(1));
    let mut slots: Vec<Option<Playthrough>> = (0..tasks.len()).map(|_| None).collect();
    let done: Vec<Vec<(usize, Playthrough)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(task) = tasks.get(i) else { break };
                        let played = phonebench_runner::validate::instantiate(catalog, task, suite_seed, 0)
                            .map_err(|e| e.to_string())
                            .and_then(|inst| play(catalog, &inst, device).map(|played| (inst, played)));
                        mine.push((i, played));
                    }
                    mine
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or_default()).collect()
    });
    for (i, played) in done.into_iter().flatten() {
        slots[i] = Some(played);
    }
    slots.into_iter().map(|s| s.unwrap_or_else(|| Err("its playthrough did not finish".into()))).collect()
}

/// Generates every probe's items from `tasks` (instance 0 of `suite_seed`).
pub fn generate(catalog: &Catalog, tasks: &[&TaskSpec], suite_seed: u64) -> Generated {
    generate_on(catalog, tasks, suite_seed, None)
}

/// [`generate`], playing the references on a device opened by `device` (when given) instead of
/// the simulated phone: grounding and completion items then show the device's real screens.
pub fn generate_on(
    catalog: &Catalog,
    tasks: &[&TaskSpec],
    suite_seed: u64,
    device: Option<&DeviceOpener>,
) -> Generated {
    let mut out = Generated::default();
    let mut tasks: Vec<&TaskSpec> = tasks.to_vec();
    tasks.sort_by(|a, b| a.id.cmp(&b.id));
    let mut seen_steps = BTreeSet::new();
    let (mut grounding, mut completion, mut goal_questions) = (Vec::new(), Vec::new(), Vec::new());
    let mut map = AppMap::default();
    let app_name = |id: &str| catalog.get(id).map_or_else(|| id.to_string(), |p| p.manifest.name.clone());
    let app_names: Vec<String> = catalog.apps().iter().map(|p| p.manifest.name.clone()).collect();
    for (task, played) in tasks.iter().zip(play_all(catalog, &tasks, suite_seed, device)) {
        let (inst, played) = match played {
            Ok(p) => p,
            Err(e) => {
                out.skipped.push(format!("{}: {e}", task.id));
                continue;
            }
        };
        let history: Vec<String> = played.iter().map(|p| describe(catalog, &p.tree, &p.action)).collect();
        let key = format!("{}#0", inst.task_id);
        for (k, screen) in played.iter().enumerate() {
            let Some(app) = &screen.app else { continue };
            map.screens.entry(app.clone()).or_default().insert(screen.activity.clone());
            let texts = map.texts.entry(app.clone()).or_default();
            for (_, node) in screen.tree.iter() {
                for text in [&node.text, &node.content_desc] {
                    if !text.trim().is_empty() {
                        texts.entry(short(text)).or_default().insert(screen.activity.clone());
                    }
                }
            }
            let Ok((instruction, expected)) = step_item(screen) else { continue };
            if matches!(screen.action, Action::Tap { .. })
                && let Some(control) =
                    instruction.strip_prefix("Click \"").and_then(|c| c.strip_suffix("\"."))
            {
                let opened = played
                    .get(k + 1)
                    .filter(|n| n.app.as_ref() == Some(app) && n.activity != screen.activity)
                    .map(|n| n.activity.clone());
                let control = control.to_string();
                map.controls
                    .entry(app.clone())
                    .or_default()
                    .entry((screen.activity.clone(), control))
                    .or_insert(opened);
            }
            if !seen_steps.insert((
                app.clone(),
                screen.activity.clone(),
                instruction.clone(),
                expected.bounds.map(|b| b.to_string()),
            )) {
                continue;
            }
            grounding.push(ProbeItem {
                id: format!("gen:{key}:{k:02}"),
                probe: ProbeKind::Grounding,
                source: DataSource::Generated,
                app: Some(app.clone()),
                body: ItemBody::Step(StepItem {
                    instruction,
                    goal: Some(inst.goal.clone()),
                    history: history[..k].to_vec(),
                    screen: Screen { tree: screen.tree.clone(), image: screen.image.clone() },
                    expected,
                }),
            });
        }
        // Completion: tasks that end by finishing, without questions, tool calls or answers
        // the history could not show, whose reference reaches the goal on its last screen.
        let finishes = played.last().is_some_and(|p| {
            p.complete && matches!(p.action, Action::Finish { status: FinishStatus::Complete, .. })
        });
        let silent = !played.iter().any(|p| {
            matches!(p.action, Action::AskUser { .. } | Action::McpCall { .. } | Action::Answer { .. })
        });
        if finishes && silent && inst.category != Category::Retrieval {
            let n = played.len();
            for (k, screen) in played.iter().enumerate() {
                completion.push(ProbeItem {
                    id: format!("gen:{key}:{k:02}"),
                    probe: ProbeKind::Completion,
                    source: DataSource::Generated,
                    app: inst.apps.first().cloned(),
                    body: ItemBody::Completion(CompletionItem {
                        goal: inst.goal.clone(),
                        history: history[..k].to_vec(),
                        screen: Screen { tree: screen.tree.clone(), image: screen.image.clone() },
                        expected: screen.complete,
                        trajectory: key.clone(),
                        last: k + 1 == n,
                    }),
                });
            }
        }
        // Goal understanding: which app a single-app goal needs.
        // A goal that names its app ("... on Mattermost") answers itself: left out.
        // MCP tasks reach beyond their apps through tools, so their app is no answer either.
        if let [app] = inst.apps.as_slice()
            && !inst.goal.to_lowercase().contains(&app_name(app).to_lowercase())
            && inst.category != Category::Mcp
        {
            let id = format!("gen:{key}:app");
            if let Some((options, answer)) = four_options(&id, &app_name(app), &app_names) {
                goal_questions.push(ProbeItem {
                    id,
                    probe: ProbeKind::Knowledge,
                    source: DataSource::Generated,
                    app: Some(app.clone()),
                    body: ItemBody::Question(Question {
                        question_type: "intention_level".into(),
                        app_name: "Android".into(),
                        category: Some("System".into()),
                        question: format!(
                            "I want to do this: \"{}\". Which of the following apps should I use?",
                            inst.goal
                        ),
                        options,
                        answer,
                    }),
                });
            }
        }
    }
    // Both question types alternate, each spread over the apps, so a limit keeps both.
    let mut knowledge = interleave(app_questions(catalog, &map), app_of);
    knowledge.extend(interleave(goal_questions, app_of));
    out.knowledge = interleave(knowledge, |item| item.group());
    out.grounding = interleave(grounding, app_of);
    // Completion items stay together by trajectory (Overall needs whole ones); trajectories are
    // interleaved by app.
    let mut trajectories: Vec<Vec<ProbeItem>> = Vec::new();
    for item in completion {
        let same = |t: &Vec<ProbeItem>| match (t.first().map(|i| &i.body), &item.body) {
            (Some(ItemBody::Completion(a)), ItemBody::Completion(b)) => a.trajectory == b.trajectory,
            _ => false,
        };
        match trajectories.last_mut() {
            Some(t) if same(t) => t.push(item),
            _ => trajectories.push(vec![item]),
        }
    }
    out.completion = interleave(trajectories, |t| t.first().map(app_of).unwrap_or_default())
        .into_iter()
        .flatten()
        .collect();
    out
}

/// App-knowledge questions: on which screen a control is, and what tapping it opens.
fn app_questions(catalog: &Catalog, map: &AppMap) -> Vec<ProbeItem> {
    let mut questions = Vec::new();
    for (app, controls) in &map.controls {
        let titles: Vec<String> =
            map.screens.get(app).map(|s| s.iter().map(|a| screen_title(a)).collect()).unwrap_or_default();
        let package = catalog.get(app);
        let name = package.map_or_else(|| app.clone(), |p| p.manifest.name.clone());
        let category = package.and_then(|p| p.manifest.category.clone());
        let question = |id: String, text: String, right: &str, others: &[String]| {
            four_options(&id, right, others).map(|(options, answer)| ProbeItem {
                id,
                probe: ProbeKind::Knowledge,
                source: DataSource::Generated,
                app: Some(app.clone()),
                body: ItemBody::Question(Question {
                    question_type: "app_level".into(),
                    app_name: name.clone(),
                    category: category.clone(),
                    question: text,
                    options,
                    answer,
                }),
            })
        };
        let (mut where_made, mut what_made) = (0, 0);
        for (n, ((activity, control), opened)) in controls.iter().enumerate() {
            if !nameable(control) {
                continue;
            }
            let title = screen_title(activity);
            // Only a control seen on this one screen of the app has one right screen.
            let screens_showing = map.texts.get(app).and_then(|t| t.get(control)).map_or(0, BTreeSet::len);
            if where_made < QUESTIONS_PER_APP
                && screens_showing == 1
                && !shares_word(control, &title)
                && let Some(q) = question(
                    format!("gen:{app}:where:{n:03}"),
                    format!("In the {name} app, on which screen is the control \"{control}\"?"),
                    &title,
                    &titles,
                )
            {
                questions.push(q);
                where_made += 1;
            }
            // A control named like the screen it opens ("Home" → Home) answers itself.
            let names_its_screen = opened.as_ref().is_some_and(|o| shares_word(control, &screen_title(o)));
            if let Some(opened) = opened
                && what_made < QUESTIONS_PER_APP
                && !names_its_screen
            {
                let others: Vec<String> = titles
                    .iter()
                    .filter(|t| **t != title)
                    .map(|t| format!("It opens the {t} screen."))
                    .collect();
                if let Some(q) = question(
                    format!("gen:{app}:what:{n:03}"),
                    format!(
                        "In the {name} app, what happens when you tap \"{control}\" on the {title} screen?"
                    ),
                    &format!("It opens the {} screen.", screen_title(opened)),
                    &others,
                ) {
                    questions.push(q);
                    what_made += 1;
                }
            }
        }
    }
    questions
}
