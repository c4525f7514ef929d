//! Probe items: what a probe asks a model, with the answer it expects.
//!
//! Items are plain data, made deterministically (SPHINX's files read in file order; generated
//! items from seeded reference playthroughs), each with an id that stays the same between
//! runs, so results resume by id and exports can be compared across tools.

use std::sync::Arc;

use phonebench_pixels::ScreenImage;
use phonebench_uitree::{Bounds, UiTree};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The four probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    /// Multiple-choice and binary questions: goal understanding and app knowledge.
    Knowledge,
    /// Is the goal complete on this screen, after these actions? (planning: stop or go on).
    Completion,
    /// One screen and one step-level instruction: the right element.
    Grounding,
    /// The same step asked with the whole trajectory and with the screen alone: format errors
    /// and accuracy side by side.
    Instructions,
}

impl ProbeKind {
    /// Every probe, in the order they are reported.
    pub const ALL: [ProbeKind; 4] =
        [ProbeKind::Knowledge, ProbeKind::Completion, ProbeKind::Grounding, ProbeKind::Instructions];

    /// The probe's name on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::Knowledge => "knowledge",
            ProbeKind::Completion => "completion",
            ProbeKind::Grounding => "grounding",
            ProbeKind::Instructions => "instructions",
        }
    }

    /// Parses a probe name.
    pub fn parse(name: &str) -> Option<ProbeKind> {
        ProbeKind::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The modes a probe can be asked in, the default ones first ([`ProbeKind::default_modes`]).
    pub fn modes(self) -> &'static [Mode] {
        match self {
            ProbeKind::Knowledge => &[Mode::Text],
            ProbeKind::Completion => &[Mode::Tree, Mode::Action, Mode::Image],
            ProbeKind::Grounding => &[Mode::Text, Mode::Som, Mode::Coords],
            ProbeKind::Instructions => &[Mode::Full, Mode::Focused],
        }
    }

    /// The modes asked when none are named: those a text-only model can answer.
    pub fn default_modes(self) -> &'static [Mode] {
        match self {
            ProbeKind::Knowledge => &[Mode::Text],
            ProbeKind::Completion => &[Mode::Tree, Mode::Action],
            ProbeKind::Grounding => &[Mode::Text],
            ProbeKind::Instructions => &[Mode::Full, Mode::Focused],
        }
    }
}

/// How an item is put to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Text only (knowledge questions; grounding over SPHINX's indexed tree).
    Text,
    /// Completion: history and SPHINX's plain tree of the screen (SPHINX `tree`/`all`).
    Tree,
    /// Completion: the history of actions only (SPHINX `tree`/`action`).
    Action,
    /// Completion: history and the screenshot (SPHINX `image`/`all`).
    Image,
    /// Grounding: the screenshot with SPHINX's set-of-marks (SPHINX `annotated_image`).
    Som,
    /// Grounding: the plain screenshot, answered with coordinates.
    Coords,
    /// Instructions: goal, every earlier action and the screen (the agent's view).
    Full,
    /// Instructions: the step's own instruction and the screen only.
    Focused,
}

impl Mode {
    /// The mode's name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Text => "text",
            Mode::Tree => "tree",
            Mode::Action => "action",
            Mode::Image => "image",
            Mode::Som => "som",
            Mode::Coords => "coords",
            Mode::Full => "full",
            Mode::Focused => "focused",
        }
    }

    /// Parses a mode name.
    pub fn parse(name: &str) -> Option<Mode> {
        [
            Mode::Text,
            Mode::Tree,
            Mode::Action,
            Mode::Image,
            Mode::Som,
            Mode::Coords,
            Mode::Full,
            Mode::Focused,
        ]
        .into_iter()
        .find(|m| m.name() == name)
    }

    /// Whether the mode sends a screenshot.
    pub fn needs_image(self) -> bool {
        matches!(self, Mode::Image | Mode::Som | Mode::Coords)
    }
}

/// Where items come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataSource {
    /// SPHINX's files (`questions.json`, `lowlevel_tasks.json`, `groundtruth/`).
    Sphinx,
    /// Generated from our apps and tasks (reference playthroughs on the simulated phone).
    Generated,
}

impl DataSource {
    /// The source's name.
    pub fn name(self) -> &'static str {
        match self {
            DataSource::Sphinx => "sphinx",
            DataSource::Generated => "generated",
        }
    }
}

/// A screen as an item shows it: the tree, and the screenshot where there is one.
#[derive(Debug, Clone)]
pub struct Screen {
    /// The UI tree.
    pub tree: Arc<UiTree>,
    /// The picture, where there is one.
    pub image: Option<ImageSource>,
}

/// Where a screen's picture comes from. Neither form holds pixels until a prompt needs them,
/// and nothing drawn is kept afterwards: thousands of items stay small.
#[derive(Debug, Clone)]
pub enum ImageSource {
    /// The simulated phone's screen (tree and paints, drawn on demand).
    Drawn(ScreenImage),
    /// A captured PNG file (SPHINX's data), read when a prompt needs it.
    File(std::path::PathBuf),
}

/// The most pixels a captured screenshot may have (a 4096×4096 frame; phones have under 5 M):
/// a small file claiming more is refused before it is decoded.
pub const MAX_SCREENSHOT_PIXELS: u64 = 4096 * 4096;

impl ImageSource {
    /// The picture's pixels, freshly drawn or decoded (never kept here). A captured file that
    /// is not a PNG, is larger than the data files read, or claims more than
    /// [`MAX_SCREENSHOT_PIXELS`] is refused with the reason.
    pub fn pixmap(&self) -> Result<phonebench_pixels::Pixmap, String> {
        match self {
            ImageSource::Drawn(image) => image.to_pixmap().map_err(|e| e.to_string()),
            ImageSource::File(path) => {
                let why =
                    |e: &dyn std::fmt::Display| format!("cannot read the screenshot {}: {e}", path.display());
                let meta = std::fs::symlink_metadata(path).map_err(|e| why(&e))?;
                if !meta.is_file() || meta.len() > crate::sphinx_data::MAX_DATA_FILE_BYTES {
                    return Err(why(&"not a regular file within the size read"));
                }
                let bytes = std::fs::read(path).map_err(|e| why(&e))?;
                // The size from the IHDR chunk, before any decoder allocates for it.
                if bytes.len() >= 24 && &bytes[12..16] == b"IHDR" {
                    let w = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
                    let h = u32::from_be_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]);
                    if u64::from(w) * u64::from(h) > MAX_SCREENSHOT_PIXELS {
                        return Err(why(&format!(
                            "{w}×{h} pixels, more than the {MAX_SCREENSHOT_PIXELS} read"
                        )));
                    }
                }
                let image = ScreenImage::from_png(Arc::from(bytes)).map_err(|e| why(&e))?;
                let (w, h) = image.size();
                if u64::from(w) * u64::from(h) > MAX_SCREENSHOT_PIXELS {
                    return Err(why(&format!("{w}×{h} pixels, more than the {MAX_SCREENSHOT_PIXELS} read")));
                }
                image.to_pixmap().map_err(|e| why(&e))
            }
        }
    }
}

/// One probe item.
#[derive(Debug, Clone)]
pub struct ProbeItem {
    /// Stable id, unique within its probe (`sphinx:q17`, `gen:contacts_add#0:3`).
    pub id: String,
    /// Its probe.
    pub probe: ProbeKind,
    /// Where it comes from.
    pub source: DataSource,
    /// The app it is about (an app id, or SPHINX's app name).
    pub app: Option<String>,
    /// What is asked.
    pub body: ItemBody,
}

/// What an item asks.
#[derive(Debug, Clone)]
pub enum ItemBody {
    /// A knowledge question.
    Question(Question),
    /// A completion judgment.
    Completion(CompletionItem),
    /// A grounding item (also the instruction-following probe's step).
    Step(StepItem),
}

/// A multiple-choice question, asked once as such (MCQ) and once per option as a binary
/// question (BQ), as SPHINX does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// `app_level` (app knowledge) or `intention_level` (goal understanding).
    pub question_type: String,
    /// The app named in the prompt.
    pub app_name: String,
    /// The app's category as the prompt prints it (SPHINX prints `None` when there is none).
    pub category: Option<String>,
    /// The question.
    pub question: String,
    /// The options, `(letter, text)`, A to D.
    pub options: Vec<(String, String)>,
    /// The right letter.
    pub answer: String,
}

/// One prefix of a reference trajectory: is the goal complete here?
#[derive(Debug, Clone)]
pub struct CompletionItem {
    /// The goal.
    pub goal: String,
    /// The actions taken so far, described as SPHINX describes them (`Click on a View (...).`).
    pub history: Vec<String>,
    /// The screen after them.
    pub screen: Screen,
    /// The right answer: complete (YES) or not.
    pub expected: bool,
    /// The trajectory the item belongs to (SPHINX's Overall is per trajectory).
    pub trajectory: String,
    /// Whether this is the trajectory's last screen (SPHINX's Last vs Pre).
    pub last: bool,
}

/// A step with a known right action: grounding and instruction-following items.
#[derive(Debug, Clone)]
pub struct StepItem {
    /// The step-level instruction (`Tap "Save".`).
    pub instruction: String,
    /// The task's goal (the instruction-following probe's full context).
    pub goal: Option<String>,
    /// Earlier actions of the trajectory, described (the full context).
    pub history: Vec<String>,
    /// The screen.
    pub screen: Screen,
    /// The right action.
    pub expected: ExpectedAction,
}

/// The action a grounding item expects, scored as SPHINX's `run_lowlevel.py` does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpectedAction {
    /// SPHINX's type: `click`, `longclick`, `input`, `swipe`, `back` or `enter`.
    pub kind: String,
    /// The target's bounds: the chosen element's centre must lie inside them (edges included).
    pub bounds: Option<Bounds>,
    /// The text to type, compared exactly.
    pub text: Option<String>,
    /// The target's index in SPHINX's index table of the screen, when it is an element of it.
    pub index: Option<usize>,
}

impl ExpectedAction {
    /// Whether an action type needs a target element.
    pub fn needs_element(kind: &str) -> bool {
        matches!(kind, "click" | "longclick" | "input" | "swipe")
    }
}

impl ProbeItem {
    /// The item as one JSON object for `--export` (screens as uiautomator XML; whether a
    /// screenshot exists is said, the pixels are not inlined).
    pub fn to_json(&self) -> Value {
        let screen_json = |screen: &Screen| {
            json!({
                "xml": phonebench_uitree::write_xml(&screen.tree),
                "has_screenshot": screen.image.is_some(),
            })
        };
        let mut object = json!({
            "id": self.id,
            "probe": self.probe.name(),
            "source": self.source.name(),
            "app": self.app,
        });
        let body = match &self.body {
            ItemBody::Question(q) => json!({
                "question_type": q.question_type,
                "app_name": q.app_name,
                "category": q.category,
                "question": q.question,
                "options": q.options.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect::<serde_json::Map<_, _>>(),
                "ground_truth": q.answer,
            }),
            ItemBody::Completion(c) => json!({
                "goal": c.goal,
                "history": c.history,
                "expected": if c.expected { "YES" } else { "NO" },
                "trajectory": c.trajectory,
                "last": c.last,
                "screen": screen_json(&c.screen),
            }),
            ItemBody::Step(s) => json!({
                "instruction": s.instruction,
                "goal": s.goal,
                "history": s.history,
                "expected": {
                    "type": s.expected.kind,
                    "bounds": s.expected.bounds.map(|b| b.to_string()),
                    "text": s.expected.text,
                    "index": s.expected.index,
                },
                "screen": screen_json(&s.screen),
            }),
        };
        if let (Value::Object(o), Value::Object(b)) = (&mut object, body) {
            o.extend(b);
        }
        object
    }

    /// The group an item's scores are broken down by: the question type, `last`/`pre`, or the
    /// expected action type.
    pub fn group(&self) -> String {
        match &self.body {
            ItemBody::Question(q) => q.question_type.clone(),
            ItemBody::Completion(c) => if c.last { "last" } else { "pre" }.to_string(),
            ItemBody::Step(s) => s.expected.kind.clone(),
        }
    }
}
