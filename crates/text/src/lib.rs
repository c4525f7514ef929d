//! Fonts and text measurement for the simulated phone.
//!
//! The layout engine needs realistic text bounds (a `TextView`'s width and height at 1080x2400), and
//! a later screenshot renderer needs to draw the very same text. Both go through [`Fonts`], which
//! holds a `cosmic_text::FontSystem` that knows only the two embedded DejaVu Sans faces: system fonts
//! are never read, so every machine measures and draws identically.
//!
//! [`measure`] is the entry point for layout: it is thread-safe (one process-wide [`Fonts`] behind a
//! mutex) and memoized (one process-wide cache), because every phone measures the same strings on
//! every step.

mod cache;
mod fonts;

pub use cosmic_text;
pub use fonts::Fonts;

/// The family name of the embedded fonts, as [`cosmic_text::Family::Name`] expects it.
pub const FAMILY: &str = "DejaVu Sans";

/// DejaVu Sans Regular 2.37 (Debian `fonts-dejavu-core`), embedded so that no system font is read.
pub const REGULAR_TTF: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

/// DejaVu Sans Bold 2.37 (Debian `fonts-dejavu-core`), embedded so that no system font is read.
pub const BOLD_TTF: &[u8] = include_bytes!("../fonts/DejaVuSans-Bold.ttf");

/// Font sizes above this many pixels are clamped to it: a phone screen is 2400 px tall, and the
/// clamp keeps line heights finite whatever a caller passes.
pub const MAX_SIZE_PX: f32 = 10_000.0;

/// What to measure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextStyle {
    /// Font size in pixels (Android's `textSize` in sp times the density, e.g. 16 sp × 2.625 = 42).
    /// Not a positive finite number: the text measures as nothing (all zero).
    pub size_px: f32,
    /// DejaVu Sans Bold instead of Regular.
    pub bold: bool,
    /// Line height as a multiple of `size_px` (e.g. 1.2). Negative or not finite: treated as 0.
    pub line_height: f32,
}

/// The measured extent of a text.
///
/// Values are not rounded: layout decides how to snap them to whole pixels.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TextSize {
    /// Width of the widest shown line, in pixels; never more than the `max_width` it was measured at.
    pub width: f32,
    /// `lines` × line height, in pixels.
    pub height: f32,
    /// Number of shown lines (after wrapping and after the `max_lines` cap).
    pub lines: u32,
}

/// Measures `text` laid out with `style`, wrapping at `max_width` px when given (None = one
/// unbounded line per hard line break), and truncating to at most `max_lines` lines when given
/// (like Android's `maxLines` + `ellipsize`: height is of at most that many lines).
///
/// - Empty text measures as one empty line (width 0, height of one line), as an Android `TextView`
///   with no text still has a line's height.
/// - Hard line breaks (`\n`, `\r\n`, `\r`) start new lines; a trailing one adds an empty line.
/// - Wrapping is at word boundaries, and inside a word only when the word alone does not fit.
/// - `max_width` is rounded to whole pixels before measuring (so that the cache key and the result
///   agree); not finite = unbounded; negative = 0.
/// - `max_lines = Some(0)` shows nothing: all zero.
/// - Characters DejaVu Sans lacks (emoji, CJK) measure as its missing-glyph box; nothing falls back
///   to system fonts.
///
/// Thread-safe, deterministic and memoized process-wide; never panics.
pub fn measure(text: &str, style: &TextStyle, max_width: Option<f32>, max_lines: Option<u32>) -> TextSize {
    let request = Request::new(style, max_width, max_lines);
    if let Some(size) = cache::get(text, &request) {
        return size;
    }
    let size = Fonts::lock_shared().measure_request(text, &request);
    cache::insert(text, request, size);
    size
}

/// Empties [`measure`]'s process-wide cache: for benchmarking cache misses, or to release its memory
/// (at most 100,000 entries and 64 MiB of text; it also empties itself when full).
pub fn clear_cache() {
    cache::clear();
}

/// The measurement parameters after sanitizing, which are also the cache key: two calls that measure
/// the same thing share one entry, and the measurement uses exactly what the key says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Request {
    /// `f32::to_bits` of the font size; 0.0 when the size is unusable.
    size_bits: u32,
    bold: bool,
    /// `f32::to_bits` of the line-height multiple, after sanitizing.
    line_height_bits: u32,
    /// Whole pixels.
    max_width: Option<u32>,
    max_lines: Option<u32>,
}

impl Request {
    pub(crate) fn new(style: &TextStyle, max_width: Option<f32>, max_lines: Option<u32>) -> Self {
        let size = if style.size_px.is_finite() && style.size_px > 0.0 {
            style.size_px.min(MAX_SIZE_PX)
        } else {
            0.0
        };
        let line_height = if style.line_height.is_finite() && style.line_height > 0.0 {
            // The same clamp as the size keeps the line height in pixels finite.
            style.line_height.min(MAX_SIZE_PX)
        } else {
            0.0
        };
        // `as` saturates: negative widths become 0, huge ones u32::MAX (effectively unbounded).
        let max_width = max_width.filter(|w| w.is_finite()).map(|w| w.round() as u32);
        Self {
            size_bits: size.to_bits(),
            bold: style.bold,
            line_height_bits: line_height.to_bits(),
            max_width,
            max_lines,
        }
    }

    pub(crate) fn size_px(&self) -> f32 {
        f32::from_bits(self.size_bits)
    }

    pub(crate) fn bold(&self) -> bool {
        self.bold
    }

    pub(crate) fn line_height(&self) -> f32 {
        f32::from_bits(self.line_height_bits)
    }

    pub(crate) fn max_width(&self) -> Option<f32> {
        self.max_width.map(|w| w as f32)
    }

    pub(crate) fn max_lines(&self) -> Option<u32> {
        self.max_lines
    }
}
