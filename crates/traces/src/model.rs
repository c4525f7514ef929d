//! The one trace model every reader produces: screens as [`UiTree`]s, steps between them with
//! the action and the element it acted on, screenshots where the source has them.

use std::fmt;

use phonebench_actions::Action;
use phonebench_uitree::{Bounds, Node, UiTree};
use serde::{Deserialize, Serialize};

/// The recorded-trace formats `phonebench ingest` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// DroidBot output: `utg.js`, `states/state_*.json`, `events/event_*.json` (also AutoDroid's
    /// and DroidTask's raw exploration runs, which are DroidBot's).
    Droidbot,
    /// DroidTask / AutoDroid YAML: task records and exploration UTGs (`records:` of `State`,
    /// `Choice`, `Input`, `state_str`, `new_state_str`).
    Droidtask,
    /// LlamaTouch trace folders: `i.xml`, `i.vh`, `i.png`, `i.activity`, `eventStructs.txt`.
    Llamatouch,
    /// Android-in-the-Wild episodes as Android-in-the-Zoo JSON (one list of steps per file).
    Aitw,
    /// SPHINX ground-truth trajectory folders (`i.xml`, `meta.json`, `activities.json`).
    Sphinx,
    /// phonebench's own run folders (`results.sqlite`).
    Phonebench,
}

impl TraceFormat {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [TraceFormat; 6] = [
        TraceFormat::Droidbot,
        TraceFormat::Droidtask,
        TraceFormat::Llamatouch,
        TraceFormat::Aitw,
        TraceFormat::Sphinx,
        TraceFormat::Phonebench,
    ];

    /// The name used on the command line and in traces.db.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Droidbot => "droidbot",
            TraceFormat::Droidtask => "droidtask",
            TraceFormat::Llamatouch => "llamatouch",
            TraceFormat::Aitw => "aitw",
            TraceFormat::Sphinx => "sphinx",
            TraceFormat::Phonebench => "phonebench",
        }
    }

    /// The format named `name` (as [`TraceFormat::name`] prints it).
    pub fn from_name(name: &str) -> Option<TraceFormat> {
        TraceFormat::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Formats whose screen keys are content hashes shared across files (DroidBot's `state_str`,
    /// which DroidTask's YAML repeats): equal keys are the same screen in every trace of the
    /// family, so the analysis merges them before it compares structure.
    pub fn key_family(self) -> Option<&'static str> {
        match self {
            TraceFormat::Droidbot | TraceFormat::Droidtask => Some("droidbot-state"),
            _ => None,
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a trace's steps relate to each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceKind {
    /// A user's (or agent's) episode toward one goal: consecutive steps, usually an instruction.
    Episode,
    /// An exploration log (DroidBot): steps in time order, with restarts between them.
    Exploration,
    /// Only a graph's edges (a UTG): one step per recorded transition, in the file's order.
    Graph,
}

impl TraceKind {
    /// The name stored in traces.db.
    pub fn name(self) -> &'static str {
        match self {
            TraceKind::Episode => "episode",
            TraceKind::Exploration => "exploration",
            TraceKind::Graph => "graph",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<TraceKind> {
        [TraceKind::Episode, TraceKind::Exploration, TraceKind::Graph].into_iter().find(|k| k.name() == name)
    }
}

/// How much of a screen the source recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Detail {
    /// Only the elements actions touched (DroidBot events carry their view; the state file may
    /// be missing): real bounds, most of the screen unknown.
    Partial,
    /// A list of elements without geometry (DroidTask's simplified HTML, a UTG node's text and
    /// id lists, OCR boxes): bounds are laid out by the reader (one row per element) so that the
    /// screen can be drawn, and say nothing about the real layout.
    Outline,
    /// The whole view hierarchy with real bounds (a uiautomator dump or a view list).
    Full,
}

impl Detail {
    /// The name stored in traces.db.
    pub fn name(self) -> &'static str {
        match self {
            Detail::Partial => "partial",
            Detail::Outline => "outline",
            Detail::Full => "full",
        }
    }

    /// The detail named `name`.
    pub fn from_name(name: &str) -> Option<Detail> {
        [Detail::Partial, Detail::Outline, Detail::Full].into_iter().find(|d| d.name() == name)
    }
}

/// A screenshot's encoded bytes, as the source stored them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screenshot {
    /// `image/png` or `image/jpeg`.
    pub mime: String,
    /// The file's bytes (at most [`crate::limits::MAX_SCREENSHOT_BYTES`]).
    pub bytes: Vec<u8>,
}

/// One recorded screen.
#[derive(Debug, Clone)]
pub struct TraceScreen {
    /// The source's own name for it (`state_str`, step number, file stem).
    pub key: String,
    /// The foreground app's package, when the source says.
    pub package: Option<String>,
    /// The foreground activity, when the source says (`.MainActivity` or `pkg/.MainActivity`).
    pub activity: Option<String>,
    /// The screen's elements.
    pub tree: UiTree,
    /// How much of the screen `tree` holds.
    pub detail: Detail,
    /// The screenshot, when the source has one.
    pub screenshot: Option<Screenshot>,
}

/// The element a step acted on, as the source describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ElementRef {
    /// Class (`android.widget.TextView`), or its short form when that is all the source says.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub class: String,
    /// Resource id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_id: String,
    /// Text (possibly cut short by the source: see `text_is_prefix`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Whether `text` is only the start of the element's text (DroidBot's edge labels cut it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub text_is_prefix: bool,
    /// Content description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub content_desc: String,
    /// Bounds on the screen, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
}

impl ElementRef {
    /// The element as a node of a recorded tree describes it.
    pub fn of_node(node: &Node) -> ElementRef {
        ElementRef {
            class: node.class.clone(),
            resource_id: node.resource_id.clone(),
            text: node.text.clone(),
            text_is_prefix: false,
            content_desc: node.content_desc.clone(),
            bounds: Some(node.bounds),
        }
    }

    /// A short human label: text, else description, else the id's last part, else the class.
    pub fn label(&self) -> String {
        let short_id = self.resource_id.rsplit('/').next().unwrap_or("");
        let short_class = self.class.rsplit('.').next().unwrap_or("");
        [self.text.trim(), self.content_desc.trim(), short_id, short_class]
            .into_iter()
            .find(|s| !s.is_empty())
            .unwrap_or("")
            .to_string()
    }

    /// Whether nothing identifies the element.
    pub fn is_empty(&self) -> bool {
        self.class.is_empty()
            && self.resource_id.is_empty()
            && self.text.is_empty()
            && self.content_desc.is_empty()
            && self.bounds.is_none()
    }
}

/// One recorded step: on screen `from`, the action, then screen `to`.
#[derive(Debug, Clone)]
pub struct TraceStep {
    /// Index into [`Trace::screens`] of the screen acted on.
    pub from: usize,
    /// Index of the screen that followed, when recorded (the last step of an episode often has
    /// none).
    pub to: Option<usize>,
    /// The action in phonebench's canonical form (taps at recorded points or on described
    /// elements).
    pub action: Action,
    /// The element acted on, when the source says.
    pub target: Option<ElementRef>,
    /// The source's own text for the step (`TouchEvent(...)`, `[Click] ...`), for people.
    pub raw: String,
}

/// One recorded trace: an episode, an exploration run or a graph, with its screens.
#[derive(Debug, Clone)]
pub struct Trace {
    /// The format it was read from.
    pub format: TraceFormat,
    /// A name unique within its source (episode id, folder or file stem).
    pub name: String,
    /// The file or folder it was read from, as given on the command line.
    pub origin: String,
    /// The app under test, when the source says (a UTG's `app_package`).
    pub package: Option<String>,
    /// The instruction of an episode.
    pub instruction: Option<String>,
    /// How the steps relate.
    pub kind: TraceKind,
    /// The distinct screens, referenced by index from `steps`.
    pub screens: Vec<TraceScreen>,
    /// The steps, in the source's order.
    pub steps: Vec<TraceStep>,
}

/// Something wrong with one input file: it (or a part of it) was skipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// The file (or folder).
    pub path: String,
    /// What is wrong, with a line or entry where known.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// What a reader made of its inputs: the traces it could read and a problem per file it could
/// not (or could only partly) read.
#[derive(Debug, Default)]
pub struct Ingested {
    /// The traces read.
    pub traces: Vec<Trace>,
    /// Files skipped or read in part, and why.
    pub problems: Vec<Problem>,
    /// Problems met per file (listed or not).
    per_file: std::collections::HashMap<String, usize>,
}

impl Ingested {
    /// Records a problem with `path`.
    ///
    /// At most [`crate::limits::MAX_PROBLEMS_PER_FILE`] are listed per file; one more line says
    /// that more were left unlisted (a file of a million bad entries is one problem, not a
    /// million).
    pub fn problem(&mut self, path: impl AsRef<std::path::Path>, message: impl Into<String>) {
        let path = path.as_ref().display().to_string();
        let count = self.per_file.entry(path.clone()).or_insert(0);
        *count += 1;
        let max = crate::limits::MAX_PROBLEMS_PER_FILE;
        if *count <= max {
            self.problems.push(Problem { path, message: message.into() });
        } else if *count == max + 1 {
            self.problems.push(Problem {
                path,
                message: format!("more problems in this file are not listed (the first {max} are)"),
            });
        }
    }

    /// How many problems were met, listed or not.
    pub fn problem_count(&self) -> usize {
        self.per_file.values().sum()
    }

    /// Adds everything `other` read.
    pub fn extend(&mut self, other: Ingested) {
        self.traces.extend(other.traces);
        self.problems.extend(other.problems);
        for (path, n) in other.per_file {
            *self.per_file.entry(path).or_insert(0) += n;
        }
    }
}
