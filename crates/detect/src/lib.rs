//! `phonebench-detect`: UI elements from a screenshot's pixels only, for devices that expose no
//! accessibility tree (UINavBench's observation: id, label, text, box, clickability).
//!
//! - [`Detector`]: the pluggable interface; [`ClassicDetector`] is the default, a UIED-style
//!   classical detector (edges → connected components → shapes, icons, images) merged with OCR
//!   text from an [`Ocr`] engine ([`TesseractOcr`] runs the `tesseract` CLI), with layout
//!   heuristics (list rows), on-screen keyboard filtering and a clickability rule.
//! - [`to_tree`] turns elements into a flat [`phonebench_uitree::UiTree`]; [`element_list`]
//!   writes UINavBench's element list text for prompts.
//! - [`eval`]: ground truth from a UI tree and the scores of a detection against it.
//!
//! The algorithm and the score definitions are in `docs/detect.md`.

mod classic;
pub mod eval;
mod ocr;

use std::fmt::Write as _;

use phonebench_uitree::{Bounds, Node, TreeBuilder, UiTree, WindowKind};

pub use classic::{ClassicDetector, ClassicOptions};
pub use ocr::{Ocr, TesseractOcr, Word, group_lines};

/// What an element is, with UINavBench's labels (and ours).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElementKind {
    /// A small pictogram (often a button without text).
    Icon,
    /// Text that is not part of a control.
    Label,
    /// A control with a shape (filled or outlined), usually with text.
    Button,
    /// A text input field.
    TextField,
    /// A picture: a large region of varied pixels.
    Image,
    /// A region holding other elements: a card, a list row, a panel.
    Container,
}

impl ElementKind {
    /// Every kind, in a fixed order.
    pub const ALL: [ElementKind; 6] = [
        ElementKind::Icon,
        ElementKind::Label,
        ElementKind::Button,
        ElementKind::TextField,
        ElementKind::Image,
        ElementKind::Container,
    ];

    /// The label as UINavBench writes it (`Icon`, `Label`, `Button`, `TextField`, `Image`,
    /// `Container`).
    pub fn as_str(self) -> &'static str {
        match self {
            ElementKind::Icon => "Icon",
            ElementKind::Label => "Label",
            ElementKind::Button => "Button",
            ElementKind::TextField => "TextField",
            ElementKind::Image => "Image",
            ElementKind::Container => "Container",
        }
    }

    /// The Android class [`to_tree`] gives an element of this kind.
    pub fn class(self, clickable: bool) -> &'static str {
        match self {
            ElementKind::Icon if clickable => "android.widget.ImageButton",
            ElementKind::Icon | ElementKind::Image => "android.widget.ImageView",
            ElementKind::Label => "android.widget.TextView",
            ElementKind::Button => "android.widget.Button",
            ElementKind::TextField => "android.widget.EditText",
            ElementKind::Container => "android.view.ViewGroup",
        }
    }
}

impl std::fmt::Display for ElementKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One detected element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    /// Its number in the list (0, 1, 2, … in reading order).
    pub id: usize,
    /// What it is.
    pub kind: ElementKind,
    /// The text read in it (empty when none).
    pub text: String,
    /// `[x0, y0, x1, y1]` in pixels, right and bottom exclusive.
    pub bounds: [i32; 4],
    /// Predicted clickability (`docs/detect.md`, "Clickability").
    pub clickable: bool,
}

/// A screenshot: `width × height` pixels, RGBA, row by row (alpha is ignored).
#[derive(Debug, Clone, Copy)]
pub struct Image<'a> {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes.
    pub rgba: &'a [u8],
}

/// The largest image side the detectors accept.
pub const MAX_SIDE: u32 = 16_384;

impl Image<'_> {
    /// Checks the size against the buffer.
    pub fn check(&self) -> Result<(), DetectError> {
        if self.width == 0 || self.height == 0 || self.width > MAX_SIDE || self.height > MAX_SIDE {
            return Err(DetectError::BadImage(format!(
                "{}x{} pixels (each side must be 1 to {MAX_SIDE})",
                self.width, self.height
            )));
        }
        let want = self.width as usize * self.height as usize * 4;
        if self.rgba.len() != want {
            return Err(DetectError::BadImage(format!(
                "{}x{} RGBA needs {want} bytes, got {}",
                self.width,
                self.height,
                self.rgba.len()
            )));
        }
        Ok(())
    }
}

/// Why a detection failed.
#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    /// The image's size and buffer disagree, or it is empty or too large.
    #[error("bad image: {0}")]
    BadImage(String),
    /// The OCR program is not installed.
    #[error("`{0}` not found: install Tesseract (apt-get install tesseract-ocr tesseract-ocr-eng)")]
    OcrMissing(String),
    /// The OCR program failed, timed out or wrote something unreadable.
    #[error("OCR: {0}")]
    Ocr(String),
}

/// Finds UI elements in a screenshot. Implementations must be deterministic (the same pixels
/// give the same elements) and must not panic on any image.
pub trait Detector: Send + Sync {
    /// The elements of `image`, numbered 0.. in reading order.
    fn detect(&self, image: Image<'_>) -> Result<Vec<Element>, DetectError>;
    /// A short name for reports.
    fn name(&self) -> &str;
}

/// The package [`to_tree`] gives its nodes.
pub const PIXELS_PACKAGE: &str = "pixels.detected";

/// A flat UI tree of detected elements, for pixel-only devices: one application window whose
/// root covers the screen and has one child per element (class from [`ElementKind::class`]),
/// in element order, so an observation's element `i` is the tree's `i + 1`-th node.
pub fn to_tree(elements: &[Element], width: u32, height: u32) -> UiTree {
    let w = i32::try_from(width).unwrap_or(i32::MAX);
    let h = i32::try_from(height).unwrap_or(i32::MAX);
    let mut builder = TreeBuilder::new();
    let root = Node::new(
        "android.widget.FrameLayout",
        PIXELS_PACKAGE,
        Bounds { left: 0, top: 0, right: w, bottom: h },
    );
    // A builder fed in document order cannot fail; a failure leaves the tree shorter, never panics.
    if builder.open_window(root, WindowKind::Application, 0).is_ok() {
        for e in elements {
            let [x0, y0, x1, y1] = e.bounds;
            let mut node = Node::new(
                e.kind.class(e.clickable),
                PIXELS_PACKAGE,
                Bounds { left: x0, top: y0, right: x1, bottom: y1 },
            );
            node.text = e.text.clone();
            node.clickable = e.clickable;
            node.focusable = e.clickable || e.kind == ElementKind::TextField;
            node.editable = Some(e.kind == ElementKind::TextField);
            node.index = i32::try_from(e.id).unwrap_or(i32::MAX);
            let _ = builder.leaf(node);
        }
        let _ = builder.close();
    }
    builder.finish().unwrap_or_default()
}

/// UINavBench's element list, one element per line:
/// `[3] Button "Save" [x0, y0, x1, y1] clickable` (`text` omitted when empty, `not clickable`
/// otherwise).
pub fn element_list(elements: &[Element]) -> String {
    let mut out = String::new();
    for e in elements {
        let [x0, y0, x1, y1] = e.bounds;
        let _ = write!(out, "[{}] {}", e.id, e.kind);
        if !e.text.is_empty() {
            let _ = write!(out, " \"{}\"", e.text.replace('\\', "\\\\").replace('"', "\\\""));
        }
        let click = if e.clickable { "clickable" } else { "not clickable" };
        let _ = writeln!(out, " [{x0}, {y0}, {x1}, {y1}] {click}");
    }
    out
}
