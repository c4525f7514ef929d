//! Fonts and text measurement for the simulated phone.
//!
//! The layout engine needs realistic text bounds (a `TextView`'s width and height at 1080x2400), and
//! the screenshot renderer needs to draw the very same text. Both go through [`Fonts`], which holds a
//! `cosmic_text::FontSystem` that knows only the embedded faces: system fonts are never read, so
//! every machine measures and draws identically.
//!
//! The faces are Android's: Roboto Regular, Medium and Bold for text; characters Roboto lacks fall
//! back, in a fixed order, to Droid Sans Fallback (Chinese, Japanese, Korean) and then to DejaVu Sans
//! Regular and Bold (symbols such as arrows and check marks, Hebrew, Arabic, Armenian, Georgian).
//!
//! [`measure`] is the entry point for layout: it is thread-safe (one process-wide [`Fonts`] behind a
//! mutex) and memoized (one process-wide cache), because every phone measures the same strings on
//! every step.

mod cache;
mod fonts;

pub use cosmic_text;
pub use fonts::Fonts;

/// The family name of the embedded text faces, as [`cosmic_text::Family::Name`] expects it.
pub const FAMILY: &str = "Roboto";

/// The family name of the CJK fallback face ([`CJK_FALLBACK_TTF`]).
pub const CJK_FALLBACK_FAMILY: &str = "Droid Sans Fallback";

/// The family name of the symbol fallback faces ([`SYMBOLS_REGULAR_TTF`], [`SYMBOLS_BOLD_TTF`]).
pub const SYMBOLS_FALLBACK_FAMILY: &str = "DejaVu Sans";

/// Roboto Regular 2.138 (Debian `fonts-roboto-unhinted`), embedded so that no system font is read.
pub const REGULAR_TTF: &[u8] = include_bytes!("../fonts/Roboto-Regular.ttf");

/// Roboto Medium 2.138 (Debian `fonts-roboto-unhinted`): Android's buttons, titles and tabs.
pub const MEDIUM_TTF: &[u8] = include_bytes!("../fonts/Roboto-Medium.ttf");

/// Roboto Bold 2.138 (Debian `fonts-roboto-unhinted`), embedded so that no system font is read.
pub const BOLD_TTF: &[u8] = include_bytes!("../fonts/Roboto-Bold.ttf");

/// Droid Sans Fallback (Debian `fonts-droid-fallback`): Android's CJK fallback, for the Chinese
/// ideographs, Japanese kana and Korean Hangul that Roboto lacks. It has one weight, used for all.
pub const CJK_FALLBACK_TTF: &[u8] = include_bytes!("../fonts/DroidSansFallback.ttf");

/// DejaVu Sans Regular 2.37 (Debian `fonts-dejavu-core`): the last fallback, for symbols (arrows,
/// check marks, stars, box drawing, some monochrome emoji) and scripts Roboto lacks.
pub const SYMBOLS_REGULAR_TTF: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

/// DejaVu Sans Bold 2.37 (Debian `fonts-dejavu-core`): [`SYMBOLS_REGULAR_TTF`] for bold text.
pub const SYMBOLS_BOLD_TTF: &[u8] = include_bytes!("../fonts/DejaVuSans-Bold.ttf");

/// Noto Color Emoji 2.042 (Debian `fonts-noto-color-emoji`): emoji, in colour (CBDT bitmaps that
/// swash scales), for every weight; the last fallback, so it only draws what no other face has.
pub const EMOJI_TTF: &[u8] = include_bytes!("../fonts/NotoColorEmoji.ttf");

/// Font sizes above this many pixels are clamped to it: a phone screen is 2400 px tall, and the
/// clamp keeps line heights finite whatever a caller passes.
pub const MAX_SIZE_PX: f32 = 10_000.0;

/// What to measure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextStyle {
    /// Font size in pixels (Android's `textSize` in sp times the density, e.g. 16 sp × 2.625 = 42).
    /// Not a positive finite number: the text measures as nothing (all zero).
    pub size_px: f32,
    /// Roboto Bold instead of Regular (Medium is reached through [`measure_weight`] and
    /// [`Fonts::layout_weight`]).
    pub bold: bool,
    /// Line height as a multiple of `size_px` (e.g. 1.2). Negative or not finite: treated as 0.
    pub line_height: f32,
}

impl TextStyle {
    /// The weight this style draws with: [`FontWeight::Bold`] when `bold`, else
    /// [`FontWeight::Regular`].
    pub fn weight(&self) -> FontWeight {
        if self.bold { FontWeight::Bold } else { FontWeight::Regular }
    }
}

/// The weights of the embedded Roboto faces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FontWeight {
    /// Roboto Regular (400): body text.
    #[default]
    Regular,
    /// Roboto Medium (500): Android's buttons, app bar titles, tabs (`textFontWeight` 500,
    /// `fontFamily="sans-serif-medium"`).
    Medium,
    /// Roboto Bold (700): `textStyle="bold"`.
    Bold,
}

impl FontWeight {
    /// The CSS / OpenType weight number: 400, 500 or 700.
    pub fn number(self) -> u16 {
        match self {
            FontWeight::Regular => 400,
            FontWeight::Medium => 500,
            FontWeight::Bold => 700,
        }
    }
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
/// - Characters Roboto lacks come from the embedded fallback faces (CJK from Droid Sans Fallback,
///   symbols from DejaVu Sans); those none of them has (most emoji) measure as Roboto's
///   missing-glyph box. Nothing falls back to system fonts.
///
/// Thread-safe, deterministic and memoized process-wide; never panics.
pub fn measure(text: &str, style: &TextStyle, max_width: Option<f32>, max_lines: Option<u32>) -> TextSize {
    measure_weight(text, style, style.weight(), max_width, max_lines)
}

/// [`measure`] with an explicit weight, e.g. [`FontWeight::Medium`] for a button label; `weight`
/// replaces `style.bold`.
pub fn measure_weight(
    text: &str,
    style: &TextStyle,
    weight: FontWeight,
    max_width: Option<f32>,
    max_lines: Option<u32>,
) -> TextSize {
    let request = Request::new(style, weight, max_width, max_lines);
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
    weight: FontWeight,
    /// `f32::to_bits` of the line-height multiple, after sanitizing.
    line_height_bits: u32,
    /// Whole pixels.
    max_width: Option<u32>,
    max_lines: Option<u32>,
}

impl Request {
    pub(crate) fn new(
        style: &TextStyle,
        weight: FontWeight,
        max_width: Option<f32>,
        max_lines: Option<u32>,
    ) -> Self {
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
            weight,
            line_height_bits: line_height.to_bits(),
            max_width,
            max_lines,
        }
    }

    pub(crate) fn size_px(&self) -> f32 {
        f32::from_bits(self.size_bits)
    }

    pub(crate) fn weight(&self) -> FontWeight {
        self.weight
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
