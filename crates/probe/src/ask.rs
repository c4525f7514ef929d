//! Asking one item in one mode, and scoring the answers: one [`ProbeResult`].
//!
//! A model server failing is an infrastructure failure (the result says so and is retried on
//! resume); everything the model says is scored, however malformed.

use phonebench_actions::{Action, ParseOptions, SphinxMode, Syntax, Target, parse_action_with};
use phonebench_agents::CallRecord;
use phonebench_agents::llm::ModelHandle;
use phonebench_model::Message;
use phonebench_observe::{ObservationFormat, render};
use phonebench_pixels::SomStyle;
use serde::{Deserialize, Serialize};

use crate::item::{DataSource, ItemBody, Mode, ProbeItem, ProbeKind, Question, StepItem};
use crate::parse::{Parsing, action_text, option, repaired_option, yes_no};
use crate::prompt::{self, GroundingView};

/// How a probe asks and reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskSettings {
    /// SPHINX's reading of answers or the strict one.
    pub parsing: Parsing,
    /// Send malformed answers to a repair call (SPHINX's "repaired" scores).
    pub repair: bool,
}

/// One question put to the model and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// Which question: `mcq`, `bq:A`…`bq:D`, `judge` (completion) or `action`.
    pub ask: String,
    /// The model's answer.
    pub raw: String,
    /// What the answer was read as (`B`, `YES`, `click [3]`), when it was readable.
    pub read: Option<String>,
    /// Why it could not be read (a format error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The right answer, as an answer would read.
    pub expected: String,
    /// The original answer is right.
    pub correct: bool,
    /// The repair call's reply, when the answer went to repair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<String>,
    /// What the repaired answer was read as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_repaired: Option<String>,
    /// Right after repair (equal to `correct` for answers that needed none).
    pub correct_repaired: bool,
}

/// The result of one item in one mode: a line of `probes.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeResult {
    /// `probe/mode/item`: unique in a results folder.
    pub key: String,
    /// The probe.
    pub probe: ProbeKind,
    /// The mode asked in.
    pub mode: Mode,
    /// The item's id.
    pub item: String,
    /// Where the item comes from.
    pub source: DataSource,
    /// The app it is about.
    pub app: Option<String>,
    /// What scores are broken down by ([`ProbeItem::group`]).
    pub group: String,
    /// Completion items: the trajectory (Overall is per trajectory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory: Option<String>,
    /// The answers, in the order asked.
    pub answers: Vec<Answer>,
    /// Scored units (knowledge: 5, the MCQ and four BQs; others: 1).
    pub units: u32,
    /// Units right as answered.
    pub correct: u32,
    /// Units right after repair.
    pub correct_repaired: u32,
    /// Answers that could not be read as asked.
    pub format_errors: u32,
    /// Repair calls made.
    pub repairs: u32,
    /// Set when a model server failed: the item is unscored and retried on resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure_error: Option<String>,
    /// Set when the item's own data could not be put to the model (an unreadable screenshot):
    /// unscored, and not retried (asking again cannot change it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unaskable: Option<String>,
}

impl ProbeResult {
    /// Whether the result counts in figures: neither a server failure nor unaskable.
    pub fn scored(&self) -> bool {
        self.infrastructure_error.is_none() && self.unaskable.is_none()
    }
}

/// Why an item got no answers.
enum Failure {
    /// A model server failed (infrastructure).
    Server(String),
    /// The item's data could not be sent.
    Data(String),
}

impl ProbeResult {
    /// The key of an item in a mode.
    pub fn key_of(probe: ProbeKind, mode: Mode, item: &str) -> String {
        format!("{}/{}/{item}", probe.name(), mode.name())
    }
}

/// Whether `item` can be asked in `mode` (image modes need a screenshot).
pub fn askable(item: &ProbeItem, mode: Mode) -> bool {
    if !mode.needs_image() {
        return true;
    }
    match &item.body {
        ItemBody::Question(_) => false,
        ItemBody::Completion(c) => c.screen.image.is_some(),
        ItemBody::Step(s) => s.screen.image.is_some(),
    }
}

/// Asks `item` in `mode` through `model` (scoped to the item, so the cache replays exactly
/// this item's answers) and scores the answers. The calls made are returned beside.
pub async fn ask(
    model: &ModelHandle,
    probe: ProbeKind,
    item: &ProbeItem,
    mode: Mode,
    settings: AskSettings,
) -> (ProbeResult, Vec<CallRecord>) {
    let key = ProbeResult::key_of(probe, mode, &item.id);
    let mut result = ProbeResult {
        key: key.clone(),
        probe,
        mode,
        item: item.id.clone(),
        source: item.source,
        app: item.app.clone(),
        group: item.group(),
        trajectory: match &item.body {
            ItemBody::Completion(c) => Some(c.trajectory.clone()),
            _ => None,
        },
        answers: Vec::new(),
        units: 0,
        correct: 0,
        correct_repaired: 0,
        format_errors: 0,
        repairs: 0,
        infrastructure_error: None,
        unaskable: None,
    };
    let mut asker = Asker { model: model.scoped(&key), calls: Vec::new() };
    let answers = match &item.body {
        ItemBody::Question(q) => asker.knowledge(q, settings).await,
        ItemBody::Completion(c) => asker.completion(c, mode, settings).await,
        ItemBody::Step(s) => asker.step(s, mode, settings).await,
    };
    match answers {
        Ok(answers) => {
            result.units = answers.len() as u32;
            result.correct = answers.iter().filter(|a| a.correct).count() as u32;
            result.correct_repaired = answers.iter().filter(|a| a.correct_repaired).count() as u32;
            result.format_errors = answers.iter().filter(|a| a.read.is_none()).count() as u32;
            result.repairs = answers.iter().filter(|a| a.repair.is_some()).count() as u32;
            result.answers = answers;
        }
        Err(Failure::Server(e)) => result.infrastructure_error = Some(e),
        Err(Failure::Data(e)) => result.unaskable = Some(e),
    }
    (result, asker.calls)
}

struct Asker {
    model: ModelHandle,
    calls: Vec<CallRecord>,
}

const ABCD: [&str; 4] = ["A", "B", "C", "D"];
const TF: [&str; 2] = ["T", "F"];

impl Asker {
    async fn call(&mut self, purpose: &str, messages: Vec<Message>) -> Result<String, Failure> {
        let (response, record) =
            self.model.call(purpose, messages).await.map_err(|e| Failure::Server(e.0))?;
        self.calls.push(record);
        Ok(response.text())
    }

    /// One option answer (MCQ or BQ), repaired when it is not an option.
    async fn choice(
        &mut self,
        ask: String,
        prompt: String,
        letters: &[&str],
        expected: &str,
        settings: AskSettings,
    ) -> Result<Answer, Failure> {
        let raw = self.call(&ask, vec![Message::user(prompt)]).await?;
        let read = option(&raw, letters, settings.parsing);
        let correct = read.as_deref() == Some(expected);
        let mut answer = Answer {
            ask,
            error: read.is_none().then(|| format!("not one of {}", letters.join(", "))),
            read,
            raw,
            expected: expected.to_string(),
            correct,
            repair: None,
            read_repaired: None,
            correct_repaired: correct,
        };
        if answer.read.is_none() && settings.repair {
            let repair_prompt = if letters.len() == 4 {
                prompt::mcq_repair(&answer.raw)
            } else {
                prompt::bq_repair(&answer.raw)
            };
            let reply = self.call("repair", vec![Message::user(repair_prompt)]).await?;
            answer.read_repaired = repaired_option(&reply, letters);
            answer.correct_repaired = answer.read_repaired.as_deref() == Some(expected);
            answer.repair = Some(reply);
        }
        Ok(answer)
    }

    /// SPHINX's five binary items: the MCQ, then one BQ per option (T only at the answer).
    async fn knowledge(&mut self, q: &Question, settings: AskSettings) -> Result<Vec<Answer>, Failure> {
        let mut answers = vec![self.choice("mcq".into(), prompt::mcq(q), &ABCD, &q.answer, settings).await?];
        for (letter, text) in &q.options {
            let expected = if *letter == q.answer { "T" } else { "F" };
            answers.push(
                self.choice(format!("bq:{letter}"), prompt::bq(q, text), &TF, expected, settings).await?,
            );
        }
        Ok(answers)
    }

    async fn completion(
        &mut self,
        item: &crate::item::CompletionItem,
        mode: Mode,
        settings: AskSettings,
    ) -> Result<Vec<Answer>, Failure> {
        let messages = match mode {
            Mode::Action => vec![
                Message::system(prompt::completion_system(false, false)),
                Message::user(prompt::completion_action(&item.goal, &item.history)),
            ],
            Mode::Image => {
                let url = png_url(&item.screen, None).map_err(Failure::Data)?;
                vec![
                    Message::system(prompt::completion_system(true, true)),
                    Message::user(prompt::completion_image(&item.goal, &item.history))
                        .with_image(url, "screenshot"),
                ]
            }
            _ => vec![
                Message::system(prompt::completion_system(true, false)),
                Message::user(prompt::completion_tree(
                    &item.goal,
                    &item.history,
                    &prompt::plain_tree(&item.screen.tree),
                )),
            ],
        };
        let raw = self.call("judge", messages).await?;
        let expected = if item.expected { "YES" } else { "NO" };
        let read = yes_no(&raw, settings.parsing);
        let correct = read.as_ref().is_ok_and(|done| *done == item.expected);
        Ok(vec![Answer {
            ask: "judge".into(),
            read: read.as_ref().ok().map(|done| if *done { "YES" } else { "NO" }.to_string()),
            error: read.err(),
            raw,
            expected: expected.into(),
            correct,
            repair: None,
            read_repaired: None,
            correct_repaired: correct,
        }])
    }

    async fn step(
        &mut self,
        item: &StepItem,
        mode: Mode,
        settings: AskSettings,
    ) -> Result<Vec<Answer>, Failure> {
        let observation = render(&item.screen.tree, ObservationFormat::SphinxTree);
        let coords = mode == Mode::Coords;
        let messages = match mode {
            Mode::Som => {
                let url = png_url(&item.screen, Some(&observation.targets)).map_err(Failure::Data)?;
                vec![
                    Message::system(prompt::GROUNDING_SYSTEM),
                    Message::user(prompt::grounding(GroundingView::Som, &item.instruction))
                        .with_image(url, "set-of-marks screenshot"),
                ]
            }
            Mode::Coords => {
                let url = png_url(&item.screen, None).map_err(Failure::Data)?;
                let (w, h) = screen_size(item);
                vec![
                    Message::system(prompt::GROUNDING_SYSTEM),
                    Message::user(prompt::grounding(GroundingView::Coords(w, h), &item.instruction))
                        .with_image(url, "screenshot"),
                ]
            }
            Mode::Full => vec![Message::user(prompt::full_context(
                item.goal.as_deref().unwrap_or(&item.instruction),
                &item.history,
                &observation.text,
            ))],
            _ => vec![
                Message::system(prompt::GROUNDING_SYSTEM),
                Message::user(prompt::grounding(GroundingView::Tree(&observation.text), &item.instruction)),
            ],
        };
        let raw = self.call("action", messages).await?;
        let options = ParseOptions {
            sphinx_mode: if coords { SphinxMode::Coordinates } else { SphinxMode::Index },
            sphinx_home_restarts: settings.parsing == Parsing::Sphinx,
            lenient: false,
        };
        let targets = &observation.targets;
        let judged = action_text(&raw, settings.parsing).and_then(|text| {
            let action = parse_action_with(&text, Syntax::Sphinx, &options).map_err(|e| e.to_string())?;
            let right = right_action(&action, item, targets, &item.screen.tree)?;
            Ok((text, right))
        });
        let expected = expected_text(item);
        let mut answer = match judged {
            Ok((text, right)) => Answer {
                ask: "action".into(),
                raw,
                read: Some(text),
                error: None,
                expected,
                correct: right,
                repair: None,
                read_repaired: None,
                correct_repaired: right,
            },
            Err(error) => Answer {
                ask: "action".into(),
                raw,
                read: None,
                error: Some(error),
                expected,
                correct: false,
                repair: None,
                read_repaired: None,
                correct_repaired: false,
            },
        };
        if answer.read.is_none() && settings.repair {
            // SPHINX's fixer: the last fenced block of its reply, `press [none]` without one (or
            // when that does not parse either).
            let reply = self
                .call(
                    "repair",
                    vec![
                        Message::system(prompt::REPAIR_SYSTEM),
                        Message::user(prompt::grounding_repair(&answer.raw, coords)),
                    ],
                )
                .await?;
            let text = phonebench_agents::llm::parse::last_fenced_block(&reply)
                .unwrap_or("press [none]")
                .trim()
                .to_string();
            let right = parse_action_with(&text, Syntax::Sphinx, &options)
                .map_err(|e| e.to_string())
                .and_then(|a| right_action(&a, item, targets, &item.screen.tree))
                .unwrap_or(false);
            answer.read_repaired = Some(text);
            answer.correct_repaired = right;
            answer.repair = Some(reply);
        }
        Ok(vec![answer])
    }
}

/// SPHINX's `test(action, groundtruth)`: the same type (`input` for typing); for element
/// actions the centre of the chosen element (or the point given) inside the target's bounds,
/// edges included; typed text exactly equal. Swipe directions are not checked. `Err`: the
/// action names an element that is not on the screen (SPHINX's "Cannot find widget", a format
/// error).
pub fn right_action(
    action: &Action,
    item: &StepItem,
    targets: &[phonebench_uitree::NodeId],
    tree: &phonebench_uitree::UiTree,
) -> Result<bool, String> {
    let point = match action.primary_target() {
        Some(Target::Index(i)) => match targets.get(*i as usize) {
            Some(id) => Some(tree.node(*id).bounds.center()),
            None => return Err(format!("Cannot find widget with id {i}")),
        },
        Some(Target::Point(p)) => Some((p.x, p.y)),
        _ => None,
    };
    let kind = phonebench_env::sphinx_type(action);
    let expected = &item.expected;
    if kind != expected.kind {
        return Ok(false);
    }
    if !crate::item::ExpectedAction::needs_element(kind) {
        return Ok(true);
    }
    let (Some((x, y)), Some(bounds)) = (point, expected.bounds) else { return Ok(false) };
    if !bounds.contains_inclusive(x, y) {
        return Ok(false);
    }
    if let Action::Type { text, .. } = action {
        return Ok(expected.text.as_deref() == Some(text.as_str()));
    }
    Ok(true)
}

/// The right answer written as a SPHINX action, for the record (`click [3]`, `press [back]`).
fn expected_text(item: &StepItem) -> String {
    let e = &item.expected;
    let target = match (e.index, e.bounds) {
        (Some(i), _) => i.to_string(),
        (None, Some(b)) => b.to_string(),
        (None, None) => String::new(),
    };
    match e.kind.as_str() {
        "click" => format!("click [{target}]"),
        "longclick" => format!("longclick [{target}]"),
        "input" => format!("text [{target}] [{}]", e.text.as_deref().unwrap_or_default()),
        "swipe" => format!("swipe [{target}] [...]"),
        other => format!("press [{other}]"),
    }
}

fn screen_size(item: &StepItem) -> (u32, u32) {
    match &item.screen.image {
        Some(crate::item::ImageSource::Drawn(image)) => image.size(),
        _ => {
            let b = item.screen.tree.screen_bounds();
            (b.width().max(1) as u32, b.height().max(1) as u32)
        }
    }
}

/// The screen's picture as a PNG data URL, with SPHINX's set-of-marks over `marks` when given.
/// Drawn afresh and dropped after: items keep no pixels.
fn png_url(
    screen: &crate::item::Screen,
    marks: Option<&[phonebench_uitree::NodeId]>,
) -> Result<String, String> {
    let image = screen.image.as_ref().ok_or("this item has no screenshot")?;
    let mut pixmap = image.pixmap()?;
    if let Some(targets) = marks {
        phonebench_pixels::draw_marks(&mut pixmap, &screen.tree, targets, SomStyle::Sphinx);
    }
    let png = phonebench_pixels::encode_png(&pixmap).map_err(|e| e.to_string())?;
    Ok(phonebench_model::data_url("image/png", &png))
}
