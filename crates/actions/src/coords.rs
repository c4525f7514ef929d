//! Coordinate models: end-to-end GUI models that answer with screen points, not element indexes.
//!
//! Every published convention is a [`CoordSyntax`] (how the model writes an action) and a
//! [`CoordSpace`] (where its numbers live); [`CoordConvention::PRESETS`] names them. The parser
//! takes the model's whole answer (thoughts, `<think>` blocks, markdown fences and all), finds
//! the action, and maps every point into *our screen's* pixels:
//!
//! | preset | syntax | space | source |
//! |---|---|---|---|
//! | `qwen2.5-vl` | tool call | `smart_resize` pixels, factor 28, 3136–12845056 px | QwenLM/Qwen2.5-VL `cookbooks/mobile_agent.ipynb` |
//! | `ui-tars-1.5` | UI-TARS | `smart_resize` pixels, factor 28, 78400–12845056 px | bytedance/UI-TARS `codes/ui_tars/action_parser.py` |
//! | `ui-tars` | UI-TARS | 0–1000 grid | bytedance/UI-TARS `README_v1.md` |
//! | `qwen3-vl` | tool call | 0–999 grid | QwenLM/Qwen3-VL `cookbooks/mobile_agent.ipynb` |
//! | `gui-owl` | tool call | `smart_resize` pixels, factor 28, 3136–10035200 px | X-PLUG/MobileAgent `Mobile-Agent-v3/cookbook` |
//! | `gui-owl-1.5` | tool call | 0–1000 grid | X-PLUG/MobileAgent `Mobile-Agent-v3.5/README.md` |
//! | `doubao` | UI-TARS | 0–1000 grid | bytedance/UI-TARS-desktop `packages/ui-tars/action-parser` |
//! | `ui-ins` | tool call | `smart_resize` pixels, factor 28, 3136–8847360 px | Tongyi-MAI/MobileWorld `agents/grounding/uiins.py` |
//!
//! Mapping back is `x / extent_w * screen_w` (extent: the resized width, the grid maximum, or
//! the screen width), rounded half to even as Python's `round`, then **clamped into the screen**:
//! a point a little past the space's edge (`1000` on a 0–999 grid; up to 10% past it) lands on
//! the last pixel instead of failing. A negative, non-finite or non-numeric coordinate, or one
//! far past the edge, is a [`ParseError`].
//!
//! Reading follows the upstream parsers, with these decisions where they are ambiguous or buggy:
//! - **UI-TARS syntax** (`Thought: …\nAction: click(start_box='(x,y)')`): the action is the last
//!   `Action:` section (as `text.split("Action: ")[-1]`), but an `Action:` inside a quoted
//!   argument (`type(content='Action: wait()')`) is not a section start (as UI-TARS-desktop). A
//!   bare call without `Action:` is accepted (as UI-TARS-desktop). Arguments are Python string
//!   literals; `''` means absent (upstream skips empty values). Boxes are `(x,y)`, `(x1,y1,x2,y2)`
//!   (its centre), `[…]`, `<point>x y</point>`, `<bbox>x1 y1 x2 y2</bbox>`, optionally wrapped in
//!   `<|box_start|>…<|box_end|>`. `point=`/`start_point=` are `start_box=`, `end_point=` is
//!   `end_box=` — by argument name, never by rewriting the text (upstream's textual replace also
//!   rewrote typed content). `type(content='it's')` with an unescaped quote is read up to the
//!   final `')`, as upstream. Several actions in one answer are an error: the canonical action is
//!   one step (upstream would run them all).
//! - **Tool-call syntax** (`<tool_call>{"name": "mobile_use", "arguments": {…}}</tool_call>`):
//!   the **first** block after any `<think>`/`<thinking>` section, as every upstream parser does
//!   (Qwen cookbooks split on the first `<tool_call>`, MobileWorld too, GUI-Owl's `parse_tags` uses
//!   the first match). A missing `</tool_call>` and text after the JSON object inside the block are
//!   tolerated (MobileWorld and GUI-Owl's splitting do); bare JSON without the tags is accepted as
//!   GUI-Owl's AndroidWorld agent accepts it. The JSON must be real JSON (single-quoted Python
//!   dicts are rejected, as `json.loads` rejects them); `arguments` may be an object or a string
//!   holding one (GUI-Owl). A tool other than `mobile_use`/`grounding` is an MCP call, as
//!   MobileWorld's Qwen3-VL agent treats it.
//! - Vocabulary (see `docs/actions.md` for the full table): `scroll(point, direction)` reveals
//!   content in `direction` ("Show more information on the `direction` side") and is a canonical
//!   `scroll`; `scroll(start_box, end_box)` (UI-TARS v1 mobile) and `swipe(coordinate,
//!   coordinate2)` are finger motions, canonical `swipe` between points; `drag` is a canonical
//!   `drag`. `type` presses Enter only when UI-TARS content ends with `\n` (the prompt's "use \n at
//!   the end of content to submit"); Qwen's `type` never does. `finished(content='…')` with
//!   content is an `answer` (our runner ends the episode on an answer, as MobileWorld's does, and
//!   the content is kept); without content a `finish` complete. `terminate` `success`/`failure`
//!   (or absent: complete, as upstream) is `finish` complete/infeasible. `wait()` is 5 s (the
//!   UI-TARS prompt says so); Qwen's `wait` takes `time` seconds. `call_user`/`ask_user`/`interact`
//!   are `ask_user` (text empty when the model gives none).

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use crate::action::{Action, Direction, FinishStatus, Key, Point, Swipe, Target};
use crate::error::{ParseError, quote};

/// Syntax name of UI-TARS style answers, in error messages.
const UI_TARS: &str = "UI-TARS";
/// Syntax name of `<tool_call>` answers, in error messages.
const TOOL_CALL: &str = "tool-call";
/// Syntax name of grounding replies, in error messages.
const GROUNDING: &str = "grounding";

/// Where a model's numbers live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoordSpace {
    /// Our screen's pixels, as they are.
    Screen,
    /// Pixels of the screenshot after Qwen's [`smart_resize`] with these parameters: the model
    /// saw a `resized_w × resized_h` image, so `x` maps to `x / resized_w * screen_w`.
    Resized {
        /// Both sides become multiples of this (28 = patch 14 × merge 2 for Qwen2/2.5-VL).
        factor: u32,
        /// Lower bound on the resized image's pixel count.
        min_pixels: u64,
        /// Upper bound on the resized image's pixel count.
        max_pixels: u64,
    },
    /// A relative grid `0..=max` on both axes whatever the screen's shape: `x` maps to
    /// `x / max * screen_w` (1000 for UI-TARS v1, Doubao and GUI-Owl 1.5; 999 for Qwen3-VL).
    Normalized {
        /// The grid's largest value (the screen's far edge).
        max: u32,
    },
}

impl CoordSpace {
    /// The space's extent `(width, height)` for a `screen_w × screen_h` screen: a coordinate
    /// `x` is `x / width` of the way across. Fails where the space cannot describe the screen
    /// (an empty screen, a `max` of 0, a screen `smart_resize` rejects).
    pub fn extent(&self, screen_w: u32, screen_h: u32) -> Result<(f64, f64), String> {
        if screen_w == 0 || screen_h == 0 {
            return Err(format!("the screen {screen_w}x{screen_h} is empty"));
        }
        match *self {
            CoordSpace::Screen => Ok((f64::from(screen_w), f64::from(screen_h))),
            CoordSpace::Normalized { max } => {
                if max == 0 {
                    Err("a normalized grid needs a maximum above 0".to_string())
                } else {
                    Ok((f64::from(max), f64::from(max)))
                }
            }
            CoordSpace::Resized { factor, min_pixels, max_pixels } => {
                let (h, w) = smart_resize(screen_h, screen_w, factor, min_pixels, max_pixels)
                    .map_err(|e| format!("the screen {screen_w}x{screen_h} cannot be smart-resized: {e}"))?;
                Ok((f64::from(w), f64::from(h)))
            }
        }
    }
}

impl fmt::Display for CoordSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoordSpace::Screen => f.write_str("screen pixels"),
            CoordSpace::Resized { factor, min_pixels, max_pixels } => write!(
                f,
                "pixels of the smart_resize'd screenshot (factor {factor}, {min_pixels}..={max_pixels} px)"
            ),
            CoordSpace::Normalized { max } => write!(f, "a 0..={max} grid"),
        }
    }
}

/// How a model writes actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoordSyntax {
    /// UI-TARS and Doubao: `Thought: …\nAction: click(start_box='(x,y)')`, or with
    /// `point='<point>x y</point>'`; the last `Action:` section is the action.
    UiTars,
    /// Qwen-VL function calling: `<tool_call>{"name": "mobile_use", "arguments": {"action":
    /// "click", "coordinate": [x, y]}}</tool_call>`; the first block is the action.
    ToolCall,
    /// A `<tool_call>` tag or a leading `{` means [`CoordSyntax::ToolCall`], anything else
    /// [`CoordSyntax::UiTars`].
    Auto,
}

/// A named published convention: how the model writes actions and where its numbers live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CoordConvention {
    /// How the model writes actions.
    pub syntax: CoordSyntax,
    /// Where its coordinates live.
    pub space: CoordSpace,
}

/// `smart_resize` parameters of Qwen2.5-VL's processor (`preprocessor_config.json` and
/// `qwen_vl_utils`: `MIN_PIXELS = 4*28*28`, `MAX_PIXELS = 16384*28*28`).
const QWEN25_RESIZED: CoordSpace =
    CoordSpace::Resized { factor: 28, min_pixels: 4 * 28 * 28, max_pixels: 16384 * 28 * 28 };

impl CoordConvention {
    /// Every named convention, with the published source of its syntax and space (see the
    /// module documentation and `docs/actions.md`).
    pub const PRESETS: &'static [(&'static str, CoordConvention)] = &[
        // QwenLM/Qwen2.5-VL cookbooks/mobile_agent.ipynb: smart_resize with the processor's
        // min_pixels/max_pixels; the prompt tells the model the resized resolution.
        ("qwen2.5-vl", CoordConvention { syntax: CoordSyntax::ToolCall, space: QWEN25_RESIZED }),
        // bytedance/UI-TARS codes/ui_tars/action_parser.py: MIN_PIXELS = 100*28*28,
        // MAX_PIXELS = 16384*28*28, coordinates divided by the smart_resize'd size.
        (
            "ui-tars-1.5",
            CoordConvention {
                syntax: CoordSyntax::UiTars,
                space: CoordSpace::Resized {
                    factor: 28,
                    min_pixels: 100 * 28 * 28,
                    max_pixels: 16384 * 28 * 28,
                },
            },
        ),
        // bytedance/UI-TARS README_v1.md "Coordinate Mapping": divide by 1000.
        (
            "ui-tars",
            CoordConvention { syntax: CoordSyntax::UiTars, space: CoordSpace::Normalized { max: 1000 } },
        ),
        // QwenLM/Qwen3-VL cookbooks/mobile_agent.ipynb: "The screen's resolution is 999x999",
        // rescale_coordinates divides by 999 (as MobileWorld's SCALE_FACTOR = 999).
        (
            "qwen3-vl",
            CoordConvention { syntax: CoordSyntax::ToolCall, space: CoordSpace::Normalized { max: 999 } },
        ),
        // X-PLUG/MobileAgent Mobile-Agent-v3/cookbook/end2end_usage.ipynb: MIN_PIXELS=3136,
        // MAX_PIXELS=10035200, factor 28; README: GUI-Owl outputs absolute coordinates.
        (
            "gui-owl",
            CoordConvention {
                syntax: CoordSyntax::ToolCall,
                space: CoordSpace::Resized { factor: 28, min_pixels: 3136, max_pixels: 10_035_200 },
            },
        ),
        // X-PLUG/MobileAgent Mobile-Agent-v3.5/README.md: "GUI-Owl 1.5 outputs relative
        // coordinates (0–1000) by default"; mobile_use/run_gui_owl_1_5_for_mobile.py divides by 1000.
        (
            "gui-owl-1.5",
            CoordConvention { syntax: CoordSyntax::ToolCall, space: CoordSpace::Normalized { max: 1000 } },
        ),
        // Syntax: bytedance/UI-TARS codes/ui_tars/prompt.py MOBILE_USE_DOUBAO; space:
        // bytedance/UI-TARS-desktop action-parser divides Doubao answers by factors [1000, 1000]
        // (only UI-TARS-1.5 is smart_resize'd).
        (
            "doubao",
            CoordConvention { syntax: CoordSyntax::UiTars, space: CoordSpace::Normalized { max: 1000 } },
        ),
        // Tongyi-MAI/MobileWorld agents/grounding/uiins.py: smart_resize factor 28, min 3136,
        // max 4096*2160 (MobileWorld then uses the numbers as screen pixels without mapping
        // back; we map back).
        (
            "ui-ins",
            CoordConvention {
                syntax: CoordSyntax::ToolCall,
                space: CoordSpace::Resized { factor: 28, min_pixels: 3136, max_pixels: 4096 * 2160 },
            },
        ),
    ];

    /// The preset named `name` (case-insensitive), or a message listing the presets.
    pub fn preset(name: &str) -> Result<CoordConvention, String> {
        let wanted = name.trim().to_ascii_lowercase();
        Self::PRESETS.iter().find(|(n, _)| *n == wanted).map(|(_, c)| *c).ok_or_else(|| {
            let names: Vec<&str> = Self::PRESETS.iter().map(|(n, _)| *n).collect();
            format!("unknown coordinate convention `{}`; expected one of {}", name.trim(), names.join(", "))
        })
    }
}

impl FromStr for CoordConvention {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CoordConvention::preset(s)
    }
}

/// Qwen's `smart_resize` (`qwen_vl_utils.vision_process`, identical in UI-TARS's
/// `action_parser.py`): the `(height, width)` the model's image is resized to, both multiples
/// of `factor`, about `min_pixels..=max_pixels` pixels, aspect ratio kept as closely as possible.
///
/// Arithmetic matches Python's exactly: `round` is half to even, true division and `sqrt` are
/// IEEE doubles. Errors where upstream raises: an aspect ratio above 200 (`ValueError`), an
/// empty side (`ZeroDivisionError`), `max_pixels < min_pixels` (Qwen3's `assert`), `factor` 0;
/// and, where upstream returns a zero side that the image resize then rejects, here too.
pub fn smart_resize(
    height: u32,
    width: u32,
    factor: u32,
    min_pixels: u64,
    max_pixels: u64,
) -> Result<(u32, u32), String> {
    if height == 0 || width == 0 {
        return Err(format!("an image side is 0 ({height}x{width} height x width)"));
    }
    if factor == 0 {
        return Err("the resize factor is 0".to_string());
    }
    if max_pixels < min_pixels {
        return Err(format!("max_pixels {max_pixels} is below min_pixels {min_pixels}"));
    }
    let (h, w, f) = (f64::from(height), f64::from(width), f64::from(factor));
    let ratio = h.max(w) / h.min(w);
    if ratio > 200.0 {
        return Err(format!("absolute aspect ratio must be smaller than 200, got {ratio:?}"));
    }
    let round_by = |n: f64| (n / f).round_ties_even() * f;
    let floor_by = |n: f64| (n / f).floor() * f;
    let ceil_by = |n: f64| (n / f).ceil() * f;
    let mut h_bar = f.max(round_by(h));
    let mut w_bar = f.max(round_by(w));
    // Products of integers below 2^53 are exact in f64, as in Python.
    let area = h * w;
    if h_bar * w_bar > max_pixels as f64 {
        let beta = (area / max_pixels as f64).sqrt();
        h_bar = floor_by(h / beta);
        w_bar = floor_by(w / beta);
    } else if h_bar * w_bar < min_pixels as f64 {
        let beta = (min_pixels as f64 / area).sqrt();
        h_bar = ceil_by(h * beta);
        w_bar = ceil_by(w * beta);
    }
    let side = |v: f64, what: &str| -> Result<u32, String> {
        if v < 1.0 {
            Err(format!(
                "the resized {what} is 0 (max_pixels {max_pixels} is too small for {height}x{width})"
            ))
        } else if v > f64::from(u32::MAX) {
            Err(format!("the resized {what} {v} does not fit in 32 bits"))
        } else {
            Ok(v as u32)
        }
    };
    Ok((side(h_bar, "height")?, side(w_bar, "width")?))
}

/// How far past a space's extent a coordinate may go and still be clamped onto the screen.
const OFF_SCALE: f64 = 1.1;

/// Maps a model's `(x, y)` in `space` to a point on a `screen_w × screen_h` screen: scaled by
/// the space's [extent](CoordSpace::extent), rounded half to even, clamped into the screen (a
/// point a little past the space's far edge lands on the last pixel; one more than 10% past it is
/// an error). A negative or non-finite
/// coordinate, or a space that cannot describe the screen, is an error.
pub fn to_screen(space: &CoordSpace, x: f64, y: f64, screen_w: u32, screen_h: u32) -> Result<Point, String> {
    for (axis, v) in [("x", x), ("y", y)] {
        if !v.is_finite() {
            return Err(format!("coordinate {axis} is not a finite number"));
        }
        if v < 0.0 {
            return Err(format!("coordinate {axis} is negative ({v})"));
        }
    }
    let (extent_w, extent_h) = space.extent(screen_w, screen_h)?;
    // A little past the far edge is a model rounding (1000 on a 0..=999 grid) and is clamped;
    // far past it is not a point on this screen at all.
    if x > extent_w * OFF_SCALE || y > extent_h * OFF_SCALE {
        return Err(format!(
            "coordinate ({x}, {y}) is far outside the model's {extent_w}x{extent_h} space ({space})"
        ));
    }
    let map = |v: f64, extent: f64, screen: u32| -> i32 {
        let last = f64::from(screen - 1);
        let scaled = if extent == f64::from(screen) { v } else { v / extent * f64::from(screen) };
        // Clamped into 0..=screen-1 < 2^32, so the cast is exact (u32 screens may exceed i32).
        scaled.round_ties_even().clamp(0.0, last.min(f64::from(i32::MAX))) as i32
    };
    Ok(Point::new(map(x, extent_w, screen_w), map(y, extent_h, screen_h)))
}

/// Parses a coordinate model's whole answer into one canonical [`Action`], its points mapped
/// into the `screen_w × screen_h` screen. See the module documentation for what is accepted.
pub fn parse_coord_action(
    text: &str,
    convention: &CoordConvention,
    screen_w: u32,
    screen_h: u32,
) -> Result<Action, ParseError> {
    if text.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    let body = after_reasoning(text);
    let syntax = match convention.syntax {
        CoordSyntax::Auto => {
            if body.contains("<tool_call>") || strip_fences(body).starts_with('{') {
                CoordSyntax::ToolCall
            } else {
                CoordSyntax::UiTars
            }
        }
        other => other,
    };
    let screen = Screen { space: convention.space, width: screen_w, height: screen_h };
    match syntax {
        CoordSyntax::ToolCall => parse_tool_call(body, &screen),
        _ => parse_ui_tars(body, &screen),
    }
}

/// Parses a grounding model's reply (MobileWorld's UI-Ins executor: `<tool_call>{"name":
/// "grounding", "arguments": {"action": "click", "coordinate": [x, y]}}</tool_call>`) into a
/// screen point: the first `[x, y]` of two non-negative integers anywhere in the text, as
/// upstream's `re.findall(r"\[(\d+),(\d+)\]")[0]`, but with blanks allowed around the numbers
/// (upstream's pattern misses `[x, y]` with a space, which its own prompt shows, and then taps
/// at (-1, -1)).
pub fn parse_grounding_point(
    text: &str,
    space: &CoordSpace,
    screen_w: u32,
    screen_h: u32,
) -> Result<Point, ParseError> {
    if text.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    let (x, y) = first_bracket_pair(text).ok_or_else(|| {
        ParseError::invalid(
            GROUNDING,
            format!(
                "found no `[x, y]` point (two non-negative integers in brackets) in {}",
                quote(text.trim())
            ),
        )
    })?;
    to_screen(space, x, y, screen_w, screen_h).map_err(|e| ParseError::invalid(GROUNDING, e))
}

// --- shared helpers ------------------------------------------------------------------------------

/// The screen and the model's space, to map points.
struct Screen {
    space: CoordSpace,
    width: u32,
    height: u32,
}

impl Screen {
    fn point(&self, syntax: &'static str, (x, y): (f64, f64)) -> Result<Point, ParseError> {
        to_screen(&self.space, x, y, self.width, self.height).map_err(|e| ParseError::invalid(syntax, e))
    }
}

/// The text after the last `</think>` or `</thinking>`: reasoning may quote actions.
fn after_reasoning(text: &str) -> &str {
    let mut rest = text;
    for tag in ["</think>", "</thinking>"] {
        if let Some(i) = rest.rfind(tag) {
            rest = &rest[i + tag.len()..];
        }
    }
    rest
}

/// Trims, and drops a markdown fence line at the start and a fence at the end.
fn strip_fences(text: &str) -> &str {
    let mut t = text.trim();
    if t.starts_with("```") {
        t = t.find('\n').map_or("", |i| &t[i + 1..]).trim();
    }
    if let Some(s) = t.strip_suffix("```") {
        t = s.trim();
    }
    t
}

/// A non-negative decimal number (`12`, `12.5`, `.5`), the only coordinate form accepted.
fn parse_number(text: &str) -> Result<f64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("a coordinate is empty".to_string());
    }
    if t.starts_with('-') {
        return Err(format!("coordinate `{t}` is negative"));
    }
    let digits_dot = t.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let dots = t.bytes().filter(|&b| b == b'.').count();
    if !digits_dot || dots > 1 || t == "." {
        return Err(format!("coordinate `{}` is not a number", t.escape_debug()));
    }
    t.parse::<f64>().map_err(|_| format!("coordinate `{t}` is not a number"))
}

/// `[x1, y1]` → the point; `[x1, y1, x2, y2]` → the box's centre.
fn centre_of(numbers: &[f64]) -> Result<(f64, f64), String> {
    match *numbers {
        [x, y] => Ok((x, y)),
        [x1, y1, x2, y2] => Ok(((x1 + x2) / 2.0, (y1 + y2) / 2.0)),
        _ => Err(format!("a point has 2 numbers (or a box 4), got {}", numbers.len())),
    }
}

/// The first `[x, y]` with two non-negative integers (blanks allowed inside).
fn first_bracket_pair(text: &str) -> Option<(f64, f64)> {
    text.match_indices('[').find_map(|(i, _)| {
        let inner = &text[i + 1..];
        let close = inner.find(']')?;
        let (a, b) = inner[..close].split_once(',')?;
        let int = |s: &str| {
            let s = s.trim();
            (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())).then(|| s.parse::<f64>().ok()).flatten()
        };
        Some((int(a)?, int(b)?))
    })
}

// --- UI-TARS syntax ------------------------------------------------------------------------------

/// A Python-style call `name(key='value', …)`.
struct Call {
    name: String,
    args: Vec<(String, String)>,
}

impl Call {
    /// The first non-empty argument named one of `names` (upstream skips `''` values).
    fn arg(&self, names: &[&str]) -> Option<&str> {
        self.args.iter().find(|(k, v)| names.contains(&k.as_str()) && !v.is_empty()).map(|(_, v)| v.as_str())
    }
}

/// UI-TARS action names, for messages.
const UI_TARS_ACTIONS: &str = "click, left_double, long_press, type, scroll, drag, hotkey, \
     press_home, press_back, open_app, wait, finished, call_user";

fn ui_tars_error(message: impl Into<String>) -> ParseError {
    ParseError::invalid(UI_TARS, message)
}

/// Where an `Action:` marker's content starts, for every marker not inside a call's quoted
/// arguments.
fn action_markers(text: &str) -> Vec<usize> {
    let mut markers = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let next = ["Action:", "Action："]
            .iter()
            .filter_map(|m| text[pos..].find(m).map(|i| (pos + i, m.len())))
            .min_by_key(|(i, _)| *i);
        let Some((at, len)) = next else { break };
        let content = at + len;
        markers.push(content);
        // Skip a well-formed call so markers quoted in its arguments do not count.
        pos = content + parse_call(&text[content..]).map_or(0, |(_, used)| used);
    }
    markers
}

fn is_identifier_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

/// Whether `text` (after blanks) starts like `name(`.
fn looks_like_call(text: &str) -> bool {
    let t = text.trim_start();
    let ident_len = t.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(t.len());
    ident_len > 0 && t.starts_with(is_identifier_start) && t[ident_len..].trim_start().starts_with('(')
}

/// Parses `name(key='value', …)` at the start of `text` (after blanks): the call and the bytes
/// used. Values are Python string literals in single or double quotes.
fn parse_call(text: &str) -> Result<(Call, usize), String> {
    let start = text.len() - text.trim_start().len();
    let s = &text[start..];
    let name_len = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
    if name_len == 0 || !s.starts_with(is_identifier_start) {
        return Err(format!("expected an action like `click(point='<point>x y</point>')`, got {}", quote(s)));
    }
    let name = s[..name_len].to_string();
    let mut i = name_len + (s[name_len..].len() - s[name_len..].trim_start().len());
    if !s[i..].starts_with('(') {
        return Err(format!("`{name}` is not followed by `(`"));
    }
    i += 1;
    let mut args = Vec::new();
    loop {
        i += s[i..].len() - s[i..].trim_start().len();
        if s[i..].starts_with(')') {
            return Ok((Call { name, args }, start + i + 1));
        }
        if s[i..].is_empty() {
            return Err(format!("`{name}(` is not closed with `)`"));
        }
        let key_len = s[i..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len() - i);
        if key_len == 0 || !s[i..].starts_with(is_identifier_start) {
            return Err(format!(
                "`{name}` arguments must be named, like `point='…'`; got {}",
                quote(&s[i..])
            ));
        }
        let key = s[i..i + key_len].to_string();
        i += key_len;
        i += s[i..].len() - s[i..].trim_start().len();
        if !s[i..].starts_with('=') {
            return Err(format!("argument `{key}` of `{name}` has no `=value`"));
        }
        i += 1;
        i += s[i..].len() - s[i..].trim_start().len();
        let (value, used) =
            parse_string_literal(&s[i..]).map_err(|e| format!("argument `{key}` of `{name}`: {e}"))?;
        i += used;
        args.push((key, value));
        i += s[i..].len() - s[i..].trim_start().len();
        if s[i..].starts_with(',') {
            i += 1;
        } else if !s[i..].starts_with(')') {
            return Err(format!(
                "after argument `{}` of `{name}` expected `,` or `)`, got {}",
                args.last().map_or("", |(k, _)| k.as_str()),
                quote(&s[i..])
            ));
        }
    }
}

/// Parses a Python string literal at the start of `text`: its value and the bytes used.
fn parse_string_literal(text: &str) -> Result<(String, usize), String> {
    let mut chars = text.char_indices();
    let quote_char = match chars.next() {
        Some((_, c @ ('\'' | '"'))) => c,
        _ => return Err(format!("expected a quoted string, got {}", quote(text))),
    };
    let mut escaped = false;
    for (i, c) in chars {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == quote_char {
            return Ok((unescape(&text[1..i]), i + 1));
        }
    }
    Err(format!("the string {} is not closed", quote(text)))
}

/// Python's string escapes that models use (`\\`, `\'`, `\"`, `\n`, `\t`, `\r`); other
/// backslashes stay, as Python keeps unknown escapes.
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(q @ ('\\' | '\'' | '"')) => out.push(q),
            Some('\n') => {}
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// `type(content='…')` whose content has an unescaped quote (`it's`): upstream reads the content
/// up to the final `')` of the action, so do we.
fn lenient_type_call(action: &str) -> Option<Call> {
    let rest = action.trim_start().strip_prefix("type")?.trim_start().strip_prefix('(')?.trim_start();
    let rest = rest.strip_prefix("content")?.trim_start().strip_prefix('=')?.trim_start();
    let q = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let inner = rest[1..].strip_suffix(')')?.trim_end().strip_suffix(q)?;
    Some(Call { name: "type".into(), args: vec![("content".into(), unescape(inner))] })
}

fn parse_ui_tars(body: &str, screen: &Screen) -> Result<Action, ParseError> {
    let text = body.replace("[EOS]", "");
    let markers = action_markers(&text);
    let section = match markers.last() {
        Some(&at) => &text[at..],
        None if looks_like_call(strip_fences(&text)) => strip_fences(&text),
        None => {
            return Err(ui_tars_error(format!(
                "no `Action:` line in the answer (expected `Thought: …\\nAction: click(…)`), got {}",
                quote(text.trim())
            )));
        }
    };
    let action = strip_fences(section);
    let call = match parse_call(action) {
        Ok((call, used)) => {
            let rest = action[used..].trim();
            if rest.is_empty() {
                call
            } else if looks_like_call(rest) {
                return Err(ui_tars_error(format!(
                    "the answer has more than one action (`{}` then {}); give one action per turn",
                    call.name,
                    quote(rest)
                )));
            } else if let Some(call) = (call.name == "type").then(|| lenient_type_call(action)).flatten() {
                call
            } else {
                return Err(ui_tars_error(format!("unexpected text after the action: {}", quote(rest))));
            }
        }
        Err(e) => lenient_type_call(action).ok_or_else(|| ui_tars_error(e))?,
    };
    ui_tars_action(&call, screen)
}

/// A UI-TARS box or point argument: `(x,y)`, `(x1,y1,x2,y2)`, `[…]`, `<point>x y</point>`,
/// `<bbox>x1 y1 x2 y2</bbox>`, optionally in `<|box_start|>…<|box_end|>`.
fn parse_box(value: &str) -> Result<(f64, f64), String> {
    let v = value.replace("<|box_start|>", "").replace("<|box_end|>", "");
    let v = v.trim();
    let tagged = ["point", "bbox"].iter().find_map(|tag| {
        v.strip_prefix(&format!("<{tag}>")).and_then(|r| r.strip_suffix(&format!("</{tag}>")))
    });
    let numbers: Vec<f64> = match tagged {
        Some(inner) => inner.split_whitespace().map(parse_number).collect::<Result<_, _>>()?,
        None => {
            let stripped: String = v.chars().filter(|c| !matches!(c, '(' | ')' | '[' | ']')).collect();
            stripped.split(',').map(parse_number).collect::<Result<_, _>>()?
        }
    };
    centre_of(&numbers).map_err(|e| format!("{e} in {}", quote(value)))
}

fn ui_tars_action(call: &Call, screen: &Screen) -> Result<Action, ParseError> {
    let name = call.name.as_str();
    let point = |names: &[&str], what: &str| -> Result<Option<Point>, ParseError> {
        match call.arg(names) {
            None => Ok(None),
            Some(v) => {
                let xy = parse_box(v).map_err(|e| ui_tars_error(format!("`{name}` {what}: {e}")))?;
                screen.point(UI_TARS, xy).map(Some)
            }
        }
    };
    let start = || point(&["start_box", "point", "start_point"], "point");
    let end = || point(&["end_box", "end_point"], "end point");
    let needs_start = || -> Result<Target, ParseError> {
        let point = start()?.ok_or_else(|| {
            ui_tars_error(format!("`{name}` needs a point: `{name}(point='<point>x y</point>')`"))
        })?;
        Ok(Target::Point(point))
    };
    let text_arg = |names: &[&str]| call.arg(names).map(str::to_string);
    let action = match name {
        "click" | "left_single" => Action::Tap { target: needs_start()? },
        "left_double" => Action::DoubleTap { target: needs_start()? },
        "long_press" => Action::LongPress { target: needs_start()? },
        "type" => {
            let content = text_arg(&["content"]).unwrap_or_default();
            let text = content.trim_end_matches('\n');
            Action::Type {
                text: text.to_string(),
                target: None,
                clear: false,
                enter: text.len() != content.len(),
            }
        }
        "scroll" => match (start()?, end()?) {
            (Some(from), Some(to)) => Action::Swipe(Swipe::Between { from, to }),
            (None, Some(_)) => return Err(ui_tars_error("`scroll` has an end point but no start point")),
            (start, None) => {
                let direction = match call.arg(&["direction"]).map(|d| d.trim().to_ascii_lowercase()) {
                    Some(d) if d == "up" => Direction::Up,
                    Some(d) if d == "down" => Direction::Down,
                    Some(d) if d == "left" => Direction::Left,
                    Some(d) if d == "right" => Direction::Right,
                    Some(d) => {
                        return Err(ui_tars_error(format!(
                            "`scroll` direction `{d}` is not one of up, down, left, right"
                        )));
                    }
                    None => {
                        return Err(ui_tars_error("`scroll` needs `direction` (up, down, left or right)"));
                    }
                };
                Action::Scroll { direction, target: start.map(Target::Point) }
            }
        },
        "drag" => match (start()?, end()?) {
            (Some(from), Some(to)) => Action::Drag { from: Target::Point(from), to: Target::Point(to) },
            _ => {
                return Err(ui_tars_error(
                    "`drag` needs `start_point='<point>x1 y1</point>'` and `end_point='<point>x2 y2</point>'`",
                ));
            }
        },
        "hotkey" | "press" => {
            let key = call
                .arg(&["key", "hotkey", "press"])
                .ok_or_else(|| ui_tars_error(format!("`{name}` needs `key`")))?;
            Action::Key { key: hotkey(key).map_err(ui_tars_error)? }
        }
        "press_home" => Action::Key { key: Key::Home },
        "press_back" => Action::Key { key: Key::Back },
        "open_app" => match text_arg(&["app_name"]) {
            Some(app) if !app.trim().is_empty() => Action::OpenApp { app },
            _ => return Err(ui_tars_error("`open_app` needs a non-empty `app_name`")),
        },
        "wait" => Action::Wait { ms: Some(5000) },
        "finished" => match text_arg(&["content"]) {
            Some(content) if !content.trim().is_empty() => Action::Answer { text: content },
            _ => Action::Finish { status: FinishStatus::Complete, reason: None },
        },
        "call_user" => Action::AskUser { text: text_arg(&["content"]).unwrap_or_default() },
        "right_single" | "hover" | "left_click_drag" | "select" => {
            return Err(ui_tars_error(format!(
                "`{name}` is a desktop action with no touch equivalent on a phone"
            )));
        }
        other => {
            return Err(ui_tars_error(format!(
                "unknown action `{other}`; expected one of {UI_TARS_ACTIONS}"
            )));
        }
    };
    Ok(action)
}

/// A UI-TARS `hotkey` as one phone key (`enter`, `back`, `home`, … or `KEYCODE_*`).
fn hotkey(text: &str) -> Result<Key, String> {
    let t = text.trim();
    if t.split_whitespace().count() > 1 {
        return Err(format!("key combination `{t}` has no phone equivalent; press one key"));
    }
    match t.to_ascii_lowercase().as_str() {
        "return" => Ok(Key::Enter),
        "esc" => Ok(Key::Escape),
        _ => Key::parse(t),
    }
}

// --- tool-call syntax ----------------------------------------------------------------------------

/// A `mobile_use` `key`: "adb's `keyevent` syntax" (the schema's examples are `volume_up`,
/// `power`, `camera`, `clear`): a canonical key name, or any other bare name as `KEYCODE_<NAME>`.
fn adb_key(text: &str) -> Result<Key, String> {
    Key::parse(text).or_else(|e| {
        let t = text.trim();
        let bare = !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if bare { Key::parse(&format!("KEYCODE_{}", t.to_ascii_uppercase())) } else { Err(e) }
    })
}

/// `mobile_use` actions, for messages.
const MOBILE_USE_ACTIONS: &str =
    "click, long_press, swipe, type, key, system_button, open, wait, answer, ask_user, terminate";

fn tool_error(message: impl Into<String>) -> ParseError {
    ParseError::invalid(TOOL_CALL, message)
}

fn parse_tool_call(body: &str, screen: &Screen) -> Result<Action, ParseError> {
    let json = match body.find("<tool_call>") {
        Some(start) => {
            let rest = &body[start + "<tool_call>".len()..];
            rest.find("</tool_call>").map_or(rest, |end| &rest[..end])
        }
        None => {
            let bare = strip_fences(body);
            if !bare.starts_with('{') {
                return Err(tool_error(format!(
                    "no `<tool_call>{{\"name\": …, \"arguments\": …}}</tool_call>` block in {}",
                    quote(body.trim())
                )));
            }
            bare
        }
    };
    let json = json.trim();
    let value = serde_json::Deserializer::from_str(json)
        .into_iter::<Value>()
        .next()
        .ok_or_else(|| tool_error("the `<tool_call>` block is empty"))?
        .map_err(|e| tool_error(format!("the tool call is not valid JSON ({e}): {}", quote(json))))?;
    let Value::Object(call) = value else {
        return Err(tool_error(format!("the tool call must be a JSON object, got {}", quote(json))));
    };
    let name = match call.get("name") {
        Some(Value::String(n)) if !n.trim().is_empty() => n.as_str(),
        Some(Value::String(_)) | None => return Err(tool_error("the tool call has no `name`")),
        Some(_) => return Err(tool_error("the tool call's `name` must be a string")),
    };
    let arguments = match call.get("arguments") {
        Some(Value::Object(args)) => args.clone(),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(args)) => args,
            _ => return Err(tool_error("`arguments` is a string that does not hold a JSON object")),
        },
        Some(_) => return Err(tool_error("`arguments` must be a JSON object")),
        None => return Err(tool_error(format!("the `{name}` call has no `arguments`"))),
    };
    match name {
        "mobile_use" | "grounding" => mobile_use_action(&arguments, screen),
        tool => Ok(Action::McpCall { tool: tool.to_string(), arguments }),
    }
}

fn mobile_use_action(args: &Map<String, Value>, screen: &Screen) -> Result<Action, ParseError> {
    let action = match args.get("action") {
        Some(Value::String(a)) => a.as_str(),
        Some(_) => return Err(tool_error("`action` must be a string")),
        None => {
            return Err(tool_error(format!(
                "the arguments have no `action`; expected one of {MOBILE_USE_ACTIONS}"
            )));
        }
    };
    let point = |key: &str| -> Result<Option<Point>, ParseError> {
        let Some(value) = args.get(key).filter(|v| !v.is_null()) else { return Ok(None) };
        let Value::Array(items) = value else {
            return Err(tool_error(format!("`{key}` must be an array [x, y], got {value}")));
        };
        let numbers = items
            .iter()
            .map(|n| match n {
                Value::Number(n) => {
                    n.as_f64().ok_or_else(|| tool_error(format!("`{key}` has a number out of range")))
                }
                other => Err(tool_error(format!("`{key}` must hold numbers, got {other}"))),
            })
            .collect::<Result<Vec<f64>, _>>()?;
        let xy = centre_of(&numbers).map_err(|e| tool_error(format!("`{key}`: {e}")))?;
        screen.point(TOOL_CALL, xy).map(Some)
    };
    let needs = |key: &str| -> Result<Point, ParseError> {
        point(key)?.ok_or_else(|| tool_error(format!("`{action}` needs `{key}`: [x, y]")))
    };
    let string = |key: &str| -> Result<Option<String>, ParseError> {
        match args.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(tool_error(format!("`{key}` must be a string, got {other}"))),
        }
    };
    let needs_text = || string("text")?.ok_or_else(|| tool_error(format!("`{action}` needs `text`")));
    let result = match action {
        // GUI-Owl's agent rewrites `tap` to `click`.
        "click" | "tap" => Action::Tap { target: Target::Point(needs("coordinate")?) },
        "long_press" => Action::LongPress { target: Target::Point(needs("coordinate")?) },
        "swipe" => Action::Swipe(Swipe::Between { from: needs("coordinate")?, to: needs("coordinate2")? }),
        "type" => Action::Type { text: needs_text()?, target: None, clear: false, enter: false },
        "answer" => Action::Answer { text: needs_text()? },
        "ask_user" | "interact" | "call_user" => {
            Action::AskUser { text: string("text")?.unwrap_or_default() }
        }
        "key" => Action::Key { key: adb_key(&needs_text()?).map_err(tool_error)? },
        "open" | "open_app" => match string("text")? {
            Some(app) if !app.trim().is_empty() => Action::OpenApp { app },
            _ => return Err(tool_error(format!("`{action}` needs the app's name in a non-empty `text`"))),
        },
        "system_button" => match string("button")?.as_deref() {
            Some("Back") => Action::Key { key: Key::Back },
            Some("Home") => Action::Key { key: Key::Home },
            Some("Menu") => Action::Key { key: Key::Menu },
            Some("Enter") => Action::Key { key: Key::Enter },
            Some(other) => {
                return Err(tool_error(format!("`button` `{other}` is not one of Back, Home, Menu, Enter")));
            }
            None => return Err(tool_error("`system_button` needs `button` (Back, Home, Menu or Enter)")),
        },
        "wait" => match args.get("time").filter(|v| !v.is_null()) {
            None => Action::Wait { ms: None },
            Some(Value::Number(n)) => match n.as_f64() {
                Some(s) if s.is_finite() && s >= 0.0 => {
                    Action::Wait { ms: Some((s * 1000.0).round() as u64) }
                }
                _ => {
                    return Err(tool_error(format!(
                        "`time` must be a non-negative number of seconds, got {n}"
                    )));
                }
            },
            Some(other) => {
                return Err(tool_error(format!("`time` must be a number of seconds, got {other}")));
            }
        },
        "terminate" => match string("status")?.as_deref() {
            None | Some("success") => Action::Finish { status: FinishStatus::Complete, reason: None },
            Some("failure") => Action::Finish { status: FinishStatus::Infeasible, reason: None },
            Some(other) => return Err(tool_error(format!("`status` `{other}` is not success or failure"))),
        },
        other => {
            return Err(tool_error(format!(
                "unknown action `{other}`; expected one of {MOBILE_USE_ACTIONS}"
            )));
        }
    };
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: u32 = 1080;
    const H: u32 = 2400;

    fn preset(name: &str) -> CoordConvention {
        CoordConvention::preset(name).unwrap()
    }

    fn parse(text: &str, name: &str) -> Result<Action, ParseError> {
        parse_coord_action(text, &preset(name), W, H)
    }

    fn ok(text: &str, name: &str) -> Action {
        parse(text, name).unwrap_or_else(|e| panic!("{text:?} as {name}: {e}"))
    }

    fn err(text: &str, name: &str) -> String {
        match parse(text, name) {
            Ok(a) => panic!("{text:?} as {name} parsed as {a:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn tap(x: i32, y: i32) -> Action {
        Action::Tap { target: Target::Point(Point::new(x, y)) }
    }

    fn pt(x: i32, y: i32) -> Target {
        Target::Point(Point::new(x, y))
    }

    // --- smart_resize against upstream values (computed with qwen_vl_utils' Python) ----------

    #[test]
    fn smart_resize_matches_upstream() {
        let qwen = |h, w| smart_resize(h, w, 28, 3136, 12_845_056).unwrap();
        // Qwen2.5-VL cookbook: a 1080x2400 screenshot is "1092x2408" in the prompt, and a
        // 720x1280 one "728x1288" (QwenLM/Qwen2.5-VL cookbooks/mobile_agent.ipynb outputs).
        assert_eq!(qwen(2400, 1080), (2408, 1092));
        assert_eq!(qwen(1280, 720), (1288, 728));
        // SPHINX's 768x1280: round(1280/28)=46 -> 1288, round(768/28)=27 -> 756.
        assert_eq!(qwen(1280, 768), (1288, 756));
        // Ties round half to even: 1078/28 = 38.5 -> 38, 1106/28 = 39.5 -> 40.
        assert_eq!(qwen(1078, 1106), (1064, 1120));
        // Too big: beta = sqrt(48e6/12845056), floor -> (4116, 3080).
        assert_eq!(qwen(8000, 6000), (4116, 3080));
        assert_eq!(qwen(6000, 8000), (3080, 4116));
        // Too small: up to min_pixels with ceil.
        assert_eq!(qwen(10, 10), (56, 56));
        assert_eq!(qwen(1, 1), (56, 56));
        // Aspect ratio exactly 200 passes; 201 raises upstream's ValueError message.
        assert_eq!(qwen(1, 200), (28, 196));
        assert_eq!(qwen(100, 20000), (112, 19992));
        let e = smart_resize(1, 201, 28, 3136, 12_845_056).unwrap_err();
        assert_eq!(e, "absolute aspect ratio must be smaller than 200, got 201.0");
        // UI-TARS-1.5's min_pixels 100*28*28 and a small max (HF's 1280*28*28).
        assert_eq!(smart_resize(2400, 1080, 28, 78400, 12_845_056).unwrap(), (2408, 1092));
        assert_eq!(smart_resize(5, 1000, 28, 78400, 12_845_056).unwrap(), (28, 3976));
        assert_eq!(smart_resize(2400, 1080, 28, 3136, 1_003_520).unwrap(), (1484, 672));
        assert_eq!(smart_resize(20000, 15000, 28, 3136, 1_003_520).unwrap(), (1148, 840));
        // Errors where upstream raises or would produce an empty image.
        assert!(smart_resize(0, 10, 28, 3136, 12_845_056).unwrap_err().contains("side is 0"));
        assert!(smart_resize(10, 10, 28, 5000, 10).unwrap_err().contains("below min_pixels"));
        assert!(smart_resize(28, 5000, 28, 10, 3136).unwrap_err().contains("resized height is 0"));
        assert!(smart_resize(10, 10, 0, 1, 2).unwrap_err().contains("factor is 0"));
    }

    #[test]
    fn to_screen_scales_rounds_and_clamps() {
        let grid = CoordSpace::Normalized { max: 1000 };
        // UI-TARS README_v1.md: (235, 512) on 1920x1080 is round(451.2), round(552.96) = (451, 553).
        assert_eq!(to_screen(&grid, 235.0, 512.0, 1920, 1080).unwrap(), Point::new(451, 553));
        // The far edge and a little beyond clamp onto the last pixel; far beyond is an error.
        assert_eq!(to_screen(&grid, 1000.0, 1000.0, W, H).unwrap(), Point::new(1079, 2399));
        assert_eq!(to_screen(&grid, 1100.0, 0.0, W, H).unwrap(), Point::new(1079, 0));
        assert!(to_screen(&grid, 5000.0, 0.0, W, H).unwrap_err().contains("far outside"));
        assert!(to_screen(&grid, 0.0, 1e308, W, H).unwrap_err().contains("far outside"));
        assert_eq!(
            to_screen(&CoordSpace::Normalized { max: 999 }, 999.0, 0.0, W, H).unwrap(),
            Point::new(1079, 0)
        );
        assert_eq!(to_screen(&CoordSpace::Screen, 12.5, 13.5, W, H).unwrap(), Point::new(12, 14));
        assert_eq!(to_screen(&QWEN25_RESIZED, 1092.0, 2408.0, W, H).unwrap(), Point::new(1079, 2399));
        assert!(to_screen(&grid, -1.0, 5.0, W, H).unwrap_err().contains("negative"));
        assert!(to_screen(&grid, f64::NAN, 5.0, W, H).unwrap_err().contains("finite"));
        assert!(to_screen(&grid, 1.0, f64::INFINITY, W, H).unwrap_err().contains("finite"));
        assert!(to_screen(&grid, 1.0, 1.0, 0, H).unwrap_err().contains("empty"));
        assert!(to_screen(&CoordSpace::Normalized { max: 0 }, 1.0, 1.0, W, H).is_err());
        assert!(to_screen(&QWEN25_RESIZED, 1.0, 1.0, 1, 300).unwrap_err().contains("aspect ratio"));
    }

    #[test]
    fn presets_are_named_and_listed() {
        assert_eq!(preset("Qwen3-VL").space, CoordSpace::Normalized { max: 999 });
        assert_eq!("doubao".parse::<CoordConvention>().unwrap().syntax, CoordSyntax::UiTars);
        let e = CoordConvention::preset("qwen4").unwrap_err();
        assert!(e.contains("unknown coordinate convention `qwen4`") && e.contains("ui-tars-1.5"), "{e}");
        let names: Vec<&str> = CoordConvention::PRESETS.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "qwen2.5-vl",
                "ui-tars-1.5",
                "ui-tars",
                "qwen3-vl",
                "gui-owl",
                "gui-owl-1.5",
                "doubao",
                "ui-ins"
            ]
        );
    }

    // --- one published example per preset, 1080x2400 -------------------------------------------

    #[test]
    fn qwen25_vl_cookbook_example() {
        // QwenLM/Qwen2.5-VL cookbooks/mobile_agent.ipynb, "English App & Query" output on the
        // 1080x2400 screenshot (resized 1092x2408):
        // x = round(935/1092*1080 = 924.73) = 925, y = round(406/2408*2400 = 404.65) = 405.
        let answer = "\n<tool_call>\n{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"click\", \"coordinate\": [935, 406]}}\n</tool_call>\n";
        assert_eq!(ok(answer, "qwen2.5-vl"), tap(925, 405));
        // The same notebook's 720x1280 example (resized 728x1288):
        // round(639/728*720 = 631.98) = 632, round(1095/1288*1280 = 1088.20) = 1088.
        let answer = "<tool_call>\n{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"click\", \"coordinate\": [639, 1095]}}\n</tool_call>\n";
        assert_eq!(parse_coord_action(answer, &preset("qwen2.5-vl"), 720, 1280).unwrap(), tap(632, 1088));
        // Its prompt's history step: {"name": "mobile_use", "arguments": {"action": "open", "text": "File Manager"}}
        let step = r#"{"name": "mobile_use", "arguments": {"action": "open", "text": "File Manager"}}"#;
        assert_eq!(ok(step, "qwen2.5-vl"), Action::OpenApp { app: "File Manager".into() });
    }

    #[test]
    fn ui_tars_15_examples() {
        // bytedance/UI-TARS README_coordinates.md: "Thought: xxx\nAction: click(start_box='(197,525)')"
        // resized 1092x2408: round(197/1092*1080 = 194.84) = 195, round(525/2408*2400 = 523.26) = 523.
        assert_eq!(ok("Thought: xxx\nAction: click(start_box='(197,525)')", "ui-tars-1.5"), tap(195, 523));
        // bytedance/UI-TARS codes/tests/action_parser_test.py:
        // round(200/1092*1080 = 197.80) = 198, round(300/2408*2400 = 299.00) = 299.
        assert_eq!(
            ok("Thought: test\nAction: click(point='<point>200 300</point>')", "ui-tars-1.5"),
            tap(198, 299)
        );
        // bytedance/UI-TARS README.md usage: round(100/1092*1080 = 98.90) = 99, round(200/2408*2400 = 199.34) = 199.
        assert_eq!(
            ok("Thought: Click the button\nAction: click(start_box='(100,200)')", "ui-tars-1.5"),
            tap(99, 199)
        );
    }

    #[test]
    fn ui_tars_v1_examples() {
        // bytedance/UI-TARS data/training_example.json: round(495/1000*1080 = 534.6) = 535, 30/1000*2400 = 72.
        assert_eq!(
            ok("Action: click(start_box='<|box_start|>(495,30)<|box_end|>')", "ui-tars"),
            tap(535, 72)
        );
        // bytedance/UI-TARS README_v1.md "Coordinate Mapping": (235, 512) on 1920x1080 -> (451, 553).
        let a = parse_coord_action("Action: click(start_box='(235,512)')", &preset("ui-tars"), 1920, 1080)
            .unwrap();
        assert_eq!(a, tap(451, 553));
        // README_v1.md mobile action space: a box (x1,y1,x2,y2) is its centre (500, 500) -> (540, 1200).
        assert_eq!(
            ok("Action: click(start_box='<|box_start|>(400,400,600,600)<|box_end|>')", "ui-tars"),
            tap(540, 1200)
        );
    }

    #[test]
    fn qwen3_vl_cookbook_example() {
        // QwenLM/Qwen3-VL cookbooks/mobile_agent.ipynb, English example output (999 grid):
        // round(447/999*1080 = 483.24) = 483, round(81/999*2400 = 194.59) = 195.
        let answer = "Thought: To search for Musk in X, I need to click on the search bar at the top of the screen. This will allow me to type in the search query.\nAction: \"I tapped on the search bar to begin searching for Musk.\"\n<tool_call>\n{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"click\", \"coordinate\": [447, 81]}}\n</tool_call>\n";
        assert_eq!(ok(answer, "qwen3-vl"), tap(483, 195));
    }

    #[test]
    fn gui_owl_examples() {
        // X-PLUG/MobileAgent Mobile-Agent-v3/android_world_v3/android_world/agents/gui_owl.py
        // (the action it substitutes after an answer):
        let terminate =
            r#"{"name": "mobile_use", "arguments": {"action": "terminate", "status": "success"}}"#;
        assert_eq!(ok(terminate, "gui-owl"), Action::Finish { status: FinishStatus::Complete, reason: None });
        // mobile_agent_utils_new.py's docstring example, "click" at [100, 200] on the resized
        // 1092x2408 image, in the <thinking>/<tool_call>/<conclusion> envelope of
        // Mobile-Agent-v3/cookbook/end2end_usage.ipynb:
        // round(100/1092*1080 = 98.90) = 99, round(200/2408*2400 = 199.34) = 199.
        let answer = "<thinking>\nObservation: the search bar is visible.\n</thinking>\n<tool_call>\n{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"click\", \"coordinate\": [100, 200]}}\n</tool_call>\n<conclusion>\nClicked the search bar\n</conclusion>";
        assert_eq!(ok(answer, "gui-owl"), tap(99, 199));
    }

    #[test]
    fn gui_owl_15_example() {
        // No model output is published; the format is Mobile-Agent-v3.5/mobile_use/utils.py's
        // "1) Action: … 2) A single <tool_call>…</tool_call> block", on a 1000x1000 grid:
        // round(500/1000*1080) = 540, round(250/1000*2400) = 600.
        let answer = "Action: Tap the dark mode switch.\n<tool_call>\n{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"click\", \"coordinate\": [500, 250]}}\n</tool_call>";
        assert_eq!(ok(answer, "gui-owl-1.5"), tap(540, 600));
    }

    #[test]
    fn doubao_examples() {
        // bytedance/UI-TARS-desktop packages/ui-tars/action-parser/test/actionParser.test.ts
        // (a <think> block, then Thought/Action); upstream maps it to [1305.6, 216] on 2560x1440.
        let answer = "<think>\nOkay, let's see. The user wants to search news, but the current search bar has \"hi\" in it. First, I need to clear that.\n</think>\nThought: To search for news, first clear the existing text \"hi\" from the Google search bar by clicking the 'X' icon. Then, type \"news\" into the search bar and press Enter to perform the search. This will display news-related results.\nAction: click(point='<point>510 150</point>')";
        assert_eq!(parse_coord_action(answer, &preset("doubao"), 2560, 1440).unwrap(), tap(1306, 216));
        // On 1080x2400: round(510/1000*1080 = 550.8) = 551, 150/1000*2400 = 360.
        assert_eq!(ok(answer, "doubao"), tap(551, 360));
        // actionParser.ts comment: drag(start_point='<point>458 328</point>', end_point='<point>350 309</point>')
        // round(494.64) = 495, round(787.2) = 787; 350*1.08 = 378, round(741.6) = 742.
        assert_eq!(
            ok(
                "Action: drag(start_point='<point>458 328</point>', end_point='<point>350 309</point>')",
                "doubao"
            ),
            Action::Drag { from: pt(495, 787), to: pt(378, 742) }
        );
    }

    #[test]
    fn ui_ins_grounding_reply() {
        // Tongyi-MAI/MobileWorld agents/grounding/uiins.py system prompt format, resized 1092x2408:
        // round(540/1092*1080 = 534.07) = 534, round(1200/2408*2400 = 1196.01) = 1196.
        let reply = "<tool_call>\n{\"name\": \"grounding\", \"arguments\": {\"action\": \"click\", \"coordinate\": [540, 1200]}}\n</tool_call>";
        let space = preset("ui-ins").space;
        assert_eq!(parse_grounding_point(reply, &space, W, H).unwrap(), Point::new(534, 1196));
        assert_eq!(ok(reply, "ui-ins"), tap(534, 1196));
        // Upstream's regex takes the first [x,y]; blanks are allowed here.
        assert_eq!(
            parse_grounding_point("[10,20] then [30,40]", &CoordSpace::Screen, W, H).unwrap(),
            Point::new(10, 20)
        );
        assert_eq!(
            parse_grounding_point("at [ 7 , 8 ]", &CoordSpace::Screen, W, H).unwrap(),
            Point::new(7, 8)
        );
        let e = parse_grounding_point("click [-5, 10]", &CoordSpace::Screen, W, H).unwrap_err().to_string();
        assert!(e.starts_with("grounding action: found no `[x, y]` point"), "{e}");
        assert_eq!(parse_grounding_point("  ", &CoordSpace::Screen, W, H).unwrap_err(), ParseError::Empty);
    }

    // --- every action of each vocabulary -------------------------------------------------------

    #[test]
    fn ui_tars_vocabulary() {
        let g = "doubao"; // 0-1000: 100 -> 108 px across, 240 px down.
        assert_eq!(ok("Action: click(point='<point>100 100</point>')", g), tap(108, 240));
        assert_eq!(ok("Action: left_single(start_box='(100,100)')", g), tap(108, 240));
        assert_eq!(
            ok("Action: left_double(point='<point>100 100</point>')", g),
            Action::DoubleTap { target: pt(108, 240) }
        );
        assert_eq!(
            ok("Action: long_press(point='<point>100 100</point>')", g),
            Action::LongPress { target: pt(108, 240) }
        );
        // v1 mobile: long_press(start_box=…, time='') — an empty time is absent.
        assert_eq!(
            ok("Action: long_press(start_box='<|box_start|>(100,100)<|box_end|>', time='')", "ui-tars"),
            Action::LongPress { target: pt(108, 240) }
        );
        assert_eq!(
            ok("Action: type(content='hello world')", g),
            Action::Type { text: "hello world".into(), target: None, clear: false, enter: false }
        );
        // "If you want to submit your input, use \"\\n\" at the end of `content`."
        assert_eq!(
            ok(r"Action: type(content='cats\n')", g),
            Action::Type { text: "cats".into(), target: None, clear: false, enter: true }
        );
        assert_eq!(
            ok("Action: type(content='cats\n')", g),
            Action::Type { text: "cats".into(), target: None, clear: false, enter: true }
        );
        assert_eq!(
            ok(r#"Action: type(content='it\'s a \"test\"')"#, g),
            Action::Type { text: "it's a \"test\"".into(), target: None, clear: false, enter: false }
        );
        // Upstream's lenient read of an unescaped quote.
        assert_eq!(
            ok("Action: type(content='it's here')", g),
            Action::Type { text: "it's here".into(), target: None, clear: false, enter: false }
        );
        // UI-TARS-desktop test: `Action:` inside the content is not a section start.
        assert_eq!(
            ok("Thought: Type raw text exactly\nAction: type(content='Action: wait()')", g),
            Action::Type { text: "Action: wait()".into(), target: None, clear: false, enter: false }
        );
        assert_eq!(
            ok("Action: type(content='')", g),
            Action::Type { text: String::new(), target: None, clear: false, enter: false }
        );
        assert_eq!(
            ok("Action: scroll(point='<point>500 500</point>', direction='down')", g),
            Action::Scroll { direction: Direction::Down, target: Some(pt(540, 1200)) }
        );
        assert_eq!(
            ok("Action: scroll(direction='up')", g),
            Action::Scroll { direction: Direction::Up, target: None }
        );
        // v1 mobile: scroll(start_box, end_box) is the finger's motion.
        assert_eq!(
            ok("Action: scroll(start_box='(500,800)', end_box='(500,200)')", "ui-tars"),
            Action::Swipe(Swipe::Between { from: Point::new(540, 1920), to: Point::new(540, 480) })
        );
        assert_eq!(
            ok("Action: drag(start_box='(100,100)', end_box='(500,500)')", g),
            Action::Drag { from: pt(108, 240), to: pt(540, 1200) }
        );
        assert_eq!(ok("Action: hotkey(key='enter')", g), Action::Key { key: Key::Enter });
        assert_eq!(ok("Action: hotkey(key='Return')", g), Action::Key { key: Key::Enter });
        assert_eq!(ok("Action: press_home()", g), Action::Key { key: Key::Home });
        assert_eq!(ok("Action: press_back()", g), Action::Key { key: Key::Back });
        assert_eq!(
            ok("Action: open_app(app_name='Contacts')", g),
            Action::OpenApp { app: "Contacts".into() }
        );
        assert_eq!(ok("Action: wait()", g), Action::Wait { ms: Some(5000) });
        assert_eq!(
            ok("Action: finished()", g),
            Action::Finish { status: FinishStatus::Complete, reason: None }
        );
        assert_eq!(
            ok("Action: finished(content='')", g),
            Action::Finish { status: FinishStatus::Complete, reason: None }
        );
        assert_eq!(
            ok("Action: finished(content='The meeting is at 3 pm.')", g),
            Action::Answer { text: "The meeting is at 3 pm.".into() }
        );
        assert_eq!(ok("Action: call_user()", g), Action::AskUser { text: String::new() });
        // Markdown fences, the fullwidth colon, a bare call, boxes as [..] and <bbox>.
        assert_eq!(ok("```\nThought: go\nAction: click(start_box='[100, 100]')\n```", g), tap(108, 240));
        assert_eq!(
            ok("Thought: go\nAction：click(start_box='<bbox>100 100 100 100</bbox>')", g),
            tap(108, 240)
        );
        assert_eq!(ok("click(start_box=\"(100,100)\")", g), tap(108, 240));
        // The last Action: section wins.
        assert_eq!(
            ok("Action: press_back()\nThought: no, home\nAction: press_home()", g),
            Action::Key { key: Key::Home }
        );
    }

    #[test]
    fn tool_call_vocabulary() {
        let g = "qwen3-vl"; // 0-999: 999 is the far edge.
        let call = |args: &str| {
            format!("<tool_call>\n{{\"name\": \"mobile_use\", \"arguments\": {args}}}\n</tool_call>")
        };
        assert_eq!(ok(&call(r#"{"action": "click", "coordinate": [0, 0]}"#), g), tap(0, 0));
        assert_eq!(ok(&call(r#"{"action": "tap", "coordinate": [0, 0]}"#), g), tap(0, 0));
        assert_eq!(
            ok(&call(r#"{"action": "long_press", "coordinate": [999, 999], "time": 2}"#), g),
            Action::LongPress { target: pt(1079, 2399) }
        );
        // A 4-number coordinate is a box: its centre (MobileWorld's qwen3vl.py).
        assert_eq!(ok(&call(r#"{"action": "click", "coordinate": [0, 0, 999, 999]}"#), g), tap(540, 1200));
        assert_eq!(
            ok(&call(r#"{"action": "swipe", "coordinate": [499.5, 800], "coordinate2": [499.5, 200]}"#), g),
            Action::Swipe(Swipe::Between { from: Point::new(540, 1922), to: Point::new(540, 480) })
        );
        assert_eq!(
            ok(&call(r#"{"action": "type", "text": "hello\n"}"#), g),
            Action::Type { text: "hello\n".into(), target: None, clear: false, enter: false }
        );
        assert_eq!(
            ok(&call(r#"{"action": "answer", "text": "42"}"#), g),
            Action::Answer { text: "42".into() }
        );
        assert_eq!(
            ok(&call(r#"{"action": "ask_user", "text": "Which one?"}"#), g),
            Action::AskUser { text: "Which one?".into() }
        );
        assert_eq!(
            ok(&call(r#"{"action": "interact", "text": "Log in"}"#), g),
            Action::AskUser { text: "Log in".into() }
        );
        assert_eq!(
            ok(&call(r#"{"action": "key", "text": "volume_up"}"#), g),
            Action::Key { key: Key::VolumeUp }
        );
        // The schema's own examples include names that are not canonical keys.
        assert_eq!(
            ok(&call(r#"{"action": "key", "text": "camera"}"#), g),
            Action::Key { key: Key::Other("CAMERA".into()) }
        );
        assert_eq!(
            ok(&call(r#"{"action": "open", "text": "Contacts"}"#), g),
            Action::OpenApp { app: "Contacts".into() }
        );
        for (button, key) in
            [("Back", Key::Back), ("Home", Key::Home), ("Menu", Key::Menu), ("Enter", Key::Enter)]
        {
            let text = call(&format!(r#"{{"action": "system_button", "button": "{button}"}}"#));
            assert_eq!(ok(&text, g), Action::Key { key });
        }
        assert_eq!(ok(&call(r#"{"action": "wait", "time": 1.5}"#), g), Action::Wait { ms: Some(1500) });
        assert_eq!(ok(&call(r#"{"action": "wait"}"#), g), Action::Wait { ms: None });
        assert_eq!(
            ok(&call(r#"{"action": "terminate", "status": "failure"}"#), g),
            Action::Finish { status: FinishStatus::Infeasible, reason: None }
        );
        assert_eq!(
            ok(&call(r#"{"action": "terminate"}"#), g),
            Action::Finish { status: FinishStatus::Complete, reason: None }
        );
        // Another tool is an MCP call (MobileWorld), `arguments` may be a JSON string (GUI-Owl).
        let Action::McpCall { tool, arguments } =
            ok(r#"<tool_call>{"name": "amap_search", "arguments": "{\"q\": \"cafe\"}"}</tool_call>"#, g)
        else {
            panic!()
        };
        assert_eq!((tool.as_str(), arguments.get("q")), ("amap_search", Some(&Value::from("cafe"))));
        // The first block counts; a missing close tag and trailing junk are tolerated.
        assert_eq!(
            ok(
                "<tool_call>{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"click\", \"coordinate\": [0, 0]}}}</tool_call><tool_call>{}</tool_call>",
                g
            ),
            tap(0, 0)
        );
        assert_eq!(
            ok("<tool_call>\n{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"wait\"}}", g),
            Action::Wait { ms: None }
        );
        // A tool call quoted in the reasoning does not count.
        assert_eq!(
            ok(
                "<think>maybe <tool_call>{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"wait\"}}</tool_call></think>\n<tool_call>{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"system_button\", \"button\": \"Back\"}}</tool_call>",
                g
            ),
            Action::Key { key: Key::Back }
        );
    }

    #[test]
    fn auto_detects_the_syntax() {
        let auto = CoordConvention { syntax: CoordSyntax::Auto, space: CoordSpace::Screen };
        let p = |t: &str| parse_coord_action(t, &auto, W, H).unwrap();
        assert_eq!(p("Action: click(start_box='(5,6)')"), tap(5, 6));
        assert_eq!(
            p(r#"{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [5, 6]}}"#),
            tap(5, 6)
        );
        assert_eq!(
            p(
                "Thought: x\nAction: \"tap\"\n<tool_call>{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"click\", \"coordinate\": [5, 6]}}</tool_call>"
            ),
            tap(5, 6)
        );
    }

    // --- malformed answers name the problem ----------------------------------------------------

    #[test]
    fn malformed_ui_tars_answers() {
        let g = "doubao";
        let cases = [
            ("Thought: I will tap the button", "no `Action:` line"),
            ("Action: tap(point='<point>1 2</point>')", "unknown action `tap`"),
            ("Action: click()", "`click` needs a point"),
            ("Action: click(point='<point>1</point>')", "a point has 2 numbers"),
            ("Action: click(point='<point>-1 2</point>')", "coordinate `-1` is negative"),
            ("Action: click(point='<point>nan 2</point>')", "`nan` is not a number"),
            ("Action: click(start_box='(1,2)", "is not closed"),
            ("Action: click(start_box='(abc,2)')", "`abc` is not a number"),
            ("Action: click('(1,2)')", "arguments must be named"),
            ("Action: click(start_box=(1,2))", "expected a quoted string"),
            ("Action: click(start_box='(1,2)') then wait()", "unexpected text after the action"),
            ("Action: click(start_box='(1,2)')\n\npress_back()", "more than one action"),
            ("Action: scroll(point='<point>1 2</point>')", "`scroll` needs `direction`"),
            ("Action: scroll(direction='sideways')", "`sideways` is not one of"),
            ("Action: drag(start_point='<point>1 2</point>')", "`drag` needs"),
            ("Action: hotkey(key='ctrl c')", "key combination `ctrl c`"),
            ("Action: hotkey(key='f13x')", "unknown key"),
            ("Action: open_app(app_name='')", "non-empty `app_name`"),
            ("Action: right_single(point='<point>1 2</point>')", "no touch equivalent"),
            ("Action: click", "not followed by `(`"),
        ];
        for (text, expected) in cases {
            let message = err(text, g);
            assert!(message.starts_with("UI-TARS action: "), "{message}");
            assert!(message.contains(expected), "{text:?}: {message} lacks {expected:?}");
        }
        assert_eq!(parse("   ", g).unwrap_err(), ParseError::Empty);
    }

    #[test]
    fn malformed_tool_calls() {
        let g = "qwen3-vl";
        let call = |args: &str| {
            format!("<tool_call>{{\"name\": \"mobile_use\", \"arguments\": {args}}}</tool_call>")
        };
        let cases = [
            ("Thought: tap it".to_string(), "no `<tool_call>"),
            ("<tool_call></tool_call>".to_string(), "block is empty"),
            ("<tool_call>{'name': 'mobile_use'}</tool_call>".to_string(), "not valid JSON"),
            ("<tool_call>[1]</tool_call>".to_string(), "must be a JSON object"),
            ("<tool_call>{\"arguments\": {}}</tool_call>".to_string(), "has no `name`"),
            ("<tool_call>{\"name\": \"mobile_use\"}</tool_call>".to_string(), "has no `arguments`"),
            (
                "<tool_call>{\"name\": \"mobile_use\", \"arguments\": \"x\"}</tool_call>".to_string(),
                "does not hold a JSON object",
            ),
            (call("{}"), "no `action`"),
            (call(r#"{"action": "fly"}"#), "unknown action `fly`"),
            (call(r#"{"action": "click"}"#), "`click` needs `coordinate`"),
            (call(r#"{"action": "click", "coordinate": "5,6"}"#), "must be an array"),
            (call(r#"{"action": "click", "coordinate": ["5", "6"]}"#), "must hold numbers"),
            (call(r#"{"action": "click", "coordinate": [5]}"#), "a point has 2 numbers"),
            (call(r#"{"action": "click", "coordinate": [-5, 6]}"#), "negative"),
            (call(r#"{"action": "swipe", "coordinate": [5, 6]}"#), "`swipe` needs `coordinate2`"),
            (call(r#"{"action": "type"}"#), "`type` needs `text`"),
            (call(r#"{"action": "type", "text": 5}"#), "`text` must be a string"),
            (call(r#"{"action": "system_button", "button": "back"}"#), "`back` is not one of"),
            (call(r#"{"action": "key", "text": "volume up!"}"#), "unknown key"),
            (call(r#"{"action": "open", "text": " "}"#), "non-empty `text`"),
            (call(r#"{"action": "wait", "time": -1}"#), "non-negative"),
            (call(r#"{"action": "terminate", "status": "done"}"#), "`done` is not success or failure"),
        ];
        for (text, expected) in cases {
            let message = err(&text, g);
            assert!(message.starts_with("tool-call action: "), "{message}");
            assert!(message.contains(expected), "{text:?}: {message} lacks {expected:?}");
        }
    }

    #[test]
    fn the_convention_matters() {
        // The same Qwen3-VL answer read as Qwen2.5-VL's resized pixels lands elsewhere.
        let answer = "<tool_call>\n{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"click\", \"coordinate\": [447, 81]}}\n</tool_call>";
        assert_eq!(ok(answer, "qwen3-vl"), tap(483, 195));
        // round(447/1092*1080 = 442.09) = 442, round(81/2408*2400 = 80.73) = 81.
        assert_eq!(ok(answer, "qwen2.5-vl"), tap(442, 81));
        // UI-TARS-1.5's resized pixels vs Doubao's 0-1000 grid for the same <point>.
        let answer = "Action: click(point='<point>500 500</point>')";
        assert_eq!(ok(answer, "doubao"), tap(540, 1200));
        // round(500/1092*1080 = 494.51) = 495, round(500/2408*2400 = 498.34) = 498.
        assert_eq!(ok(answer, "ui-tars-1.5"), tap(495, 498));
    }
}
