//! The font system: the embedded faces and the shaping state, shared by measurement and by the
//! screenshot renderer.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use cosmic_text::fontdb::{Database, Source};
use cosmic_text::{Attrs, Buffer, Family, FontSystem, Metrics, Shaping, Weight, Wrap};

use crate::{
    BOLD_TTF, CJK_FALLBACK_TTF, EMOJI_TTF, FAMILY, FontWeight, MEDIUM_TTF, REGULAR_TTF, Request,
    SYMBOLS_BOLD_TTF, SYMBOLS_REGULAR_TTF, TextSize, TextStyle,
};

/// The locale handed to cosmic-text, fixed rather than read from the machine so that
/// locale-dependent choices cannot differ between hosts.
const LOCALE: &str = "en-US";

/// The fallback faces, in the order they are tried: each entry is a font and the weights it is
/// registered under. Loaded after the Roboto faces, so that their `fontdb` IDs follow Roboto's in
/// this order.
///
/// How cosmic-text falls back: it shapes a run with the requested Roboto face, then re-shapes it
/// with further faces, replacing only the clusters still missing, until none is or all faces were
/// tried; clusters that no face has keep Roboto's missing-glyph box. The faces come from the
/// platform's named lists (which name none of ours, except "DejaVu Sans" on Linux), then from every
/// face of the database sorted by distance to the requested weight, then weight, then ID. It only
/// takes faces of exactly the requested weight before that last pass, so every fallback face is
/// registered under each of our three weights (a single-weight face under the others too, drawing
/// its one weight): then, whatever the platform, the first candidates are exactly the requested
/// weight's faces in ID order, i.e. Roboto, DejaVu Sans, Droid Sans Fallback. DejaVu comes before
/// Droid because Linux's list names it first anyway; the two barely overlap (DejaVu has no CJK,
/// Droid almost no symbols), so the order hardly matters for what is drawn.
const FALLBACKS: [(&[u8], &[FontWeight]); 4] = [
    (SYMBOLS_REGULAR_TTF, &[FontWeight::Regular, FontWeight::Medium]),
    (SYMBOLS_BOLD_TTF, &[FontWeight::Bold]),
    (CJK_FALLBACK_TTF, &[FontWeight::Regular, FontWeight::Medium, FontWeight::Bold]),
    // Last, and it has no letters: it draws emoji (and nothing the faces before it have).
    (EMOJI_TTF, &[FontWeight::Regular, FontWeight::Medium, FontWeight::Bold]),
];

/// A `cosmic_text::FontSystem` that knows only the embedded faces: Roboto Regular, Medium and Bold,
/// then Droid Sans Fallback and DejaVu Sans Regular and Bold as fallbacks ([`crate`] docs).
///
/// Measurement uses the process-wide one ([`Fonts::shared`]); the screenshot renderer should lay
/// text out with [`Fonts::layout`] on the same instance, so that it draws exactly what layout
/// measured, and rasterize through [`Fonts::font_system`] with a `cosmic_text::SwashCache`.
pub struct Fonts {
    system: FontSystem,
    /// Reused between measurements to keep their line allocations: measuring is on the step path.
    scratch: Option<Buffer>,
}

impl std::fmt::Debug for Fonts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fonts").field("system", &self.system).finish_non_exhaustive()
    }
}

impl Default for Fonts {
    fn default() -> Self {
        Self::new()
    }
}

impl Fonts {
    /// A fresh font system with only the embedded faces. Loading parses the faces' tables, so
    /// prefer [`Fonts::shared`]; a private one is for code that must not contend for its lock.
    pub fn new() -> Self {
        let mut db = Database::new();
        // `&'static [u8]` behind an `Arc`: fontdb reads the embedded bytes in place, no copy.
        for ttf in [REGULAR_TTF, MEDIUM_TTF, BOLD_TTF] {
            db.load_font_source(Source::Binary(Arc::new(ttf)));
        }
        for (ttf, weights) in FALLBACKS {
            let source = Source::Binary(Arc::new(ttf));
            let ids = db.load_font_source(source);
            let faces: Vec<_> = ids.iter().filter_map(|&id| db.face(id).cloned()).collect();
            for face in faces {
                // The same bytes under the weights the face lacks (fontdb shares the `Arc`).
                for weight in weights.iter().map(|w| w.number()).filter(|&w| w != face.weight.0) {
                    let mut alias = face.clone();
                    alias.weight = cosmic_text::fontdb::Weight(weight);
                    db.push_face_info(alias);
                }
            }
        }
        // Generic families resolve to the embedded face too, whatever a caller asks for.
        db.set_sans_serif_family(FAMILY);
        db.set_serif_family(FAMILY);
        db.set_monospace_family(FAMILY);
        db.set_cursive_family(FAMILY);
        db.set_fantasy_family(FAMILY);
        Self { system: FontSystem::new_with_locale_and_db(LOCALE.to_owned(), db), scratch: None }
    }

    /// The process-wide font system, created on first use. Every phone on every thread shares it,
    /// since a `FontSystem` is large and keeps caches worth sharing.
    pub fn shared() -> &'static Mutex<Fonts> {
        static SHARED: OnceLock<Mutex<Fonts>> = OnceLock::new();
        SHARED.get_or_init(|| Mutex::new(Fonts::new()))
    }

    /// Locks [`Fonts::shared`], recovering from a poisoned lock: the font system holds only caches,
    /// so a panic elsewhere while it was locked must not take every later measurement down with it.
    pub fn lock_shared() -> MutexGuard<'static, Fonts> {
        Self::shared().lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The underlying font system, for drawing a [`Fonts::layout`] buffer (`Buffer::draw`).
    pub fn font_system(&mut self) -> &mut FontSystem {
        &mut self.system
    }

    /// The cosmic-text attributes for `style`: the embedded family, regular or bold.
    pub fn attrs(style: &TextStyle) -> Attrs<'static> {
        Self::attrs_weight(style.weight())
    }

    /// The cosmic-text attributes for the embedded family at `weight`.
    pub fn attrs_weight(weight: FontWeight) -> Attrs<'static> {
        Attrs::new().family(Family::Name(FAMILY)).weight(Weight(weight.number()))
    }

    /// Shapes and lays out `text` exactly as [`crate::measure`] does (same sanitizing, same wrapping
    /// at `max_width` rounded to whole pixels). The buffer holds every line: a caller honouring a
    /// `maxLines` draws only the first that many layout runs.
    ///
    /// Returns `None` when there is nothing to lay out: `size_px` is not a positive finite number.
    pub fn layout(&mut self, text: &str, style: &TextStyle, max_width: Option<f32>) -> Option<Buffer> {
        self.layout_weight(text, style, style.weight(), max_width)
    }

    /// [`Fonts::layout`] at an explicit weight (`weight` replaces `style.bold`), as
    /// [`crate::measure_weight`] measures it.
    pub fn layout_weight(
        &mut self,
        text: &str,
        style: &TextStyle,
        weight: FontWeight,
        max_width: Option<f32>,
    ) -> Option<Buffer> {
        let request = Request::new(style, weight, max_width, None);
        let mut buffer = Buffer::new_empty(metrics(&request)?);
        self.fill(&mut buffer, text, &request);
        Some(buffer)
    }

    /// Like [`crate::measure`] but without its cache, on this font system.
    pub fn measure(
        &mut self,
        text: &str,
        style: &TextStyle,
        max_width: Option<f32>,
        max_lines: Option<u32>,
    ) -> TextSize {
        self.measure_request(text, &Request::new(style, style.weight(), max_width, max_lines))
    }

    pub(crate) fn measure_request(&mut self, text: &str, request: &Request) -> TextSize {
        let Some(metrics) = metrics(request) else { return TextSize::default() };
        let cap = request.max_lines().unwrap_or(u32::MAX);
        if cap == 0 {
            return TextSize::default();
        }
        let mut buffer = match self.scratch.take() {
            Some(mut buffer) => {
                buffer.set_metrics(metrics);
                buffer
            }
            None => Buffer::new_empty(metrics),
        };
        self.fill(&mut buffer, text, request);

        let mut lines = 0u32;
        let mut width = 0.0f32;
        for run in buffer.layout_runs() {
            if lines == cap {
                break;
            }
            lines += 1;
            width = width.max(run.line_w);
        }
        self.scratch = Some(buffer);

        // cosmic-text lays out an empty text as one empty line; keep Android's "one line" even if
        // that ever changes.
        let lines = lines.max(1);
        if let Some(max_width) = request.max_width() {
            // A glyph wider than the whole line still gets a line of its own; the view clips it.
            width = width.min(max_width);
        }
        let height = lines as f32 * (request.size_px() * request.line_height());
        TextSize { width, height, lines }
    }

    /// Sets `text` into `buffer` with the request's style and width, and shapes every line.
    fn fill(&mut self, buffer: &mut Buffer, text: &str, request: &Request) {
        // Android breaks at word boundaries and splits a word only when it cannot fit alone.
        buffer.set_wrap(Wrap::WordOrGlyph);
        buffer.set_size(request.max_width(), None);
        buffer.set_text(&shapeable(text), &Self::attrs_weight(request.weight()), Shaping::Advanced, None);
        // No height limit, so this shapes and lays out every line.
        buffer.shape_until_scroll(&mut self.system, false);
    }
}

/// The cosmic-text metrics for a request, or `None` when its size is unusable (zero).
fn metrics(request: &Request) -> Option<Metrics> {
    let size = request.size_px();
    if size <= 0.0 {
        return None;
    }
    let line_px = size * request.line_height();
    // cosmic-text rejects a zero line height; it only affects vertical positions, which
    // measurement computes itself, so the font size stands in.
    Some(Metrics::new(size, if line_px > 0.0 { line_px } else { size }))
}

/// `text` as cosmic-text can shape it. cosmic-text breaks lines only at `\n` and `\r` and shapes
/// each line as one bidirectional paragraph, asserting that it is; a paragraph separator inside
/// a line (U+001C..U+001E, U+0085, U+2029) breaks that and panics on mixed-direction text (RLM,
/// U+001C, "a"). Those become a line break (U+0085 NEXT LINE, U+2029 PARAGRAPH SEPARATOR, which
/// are line ends) or a space (the invisible information separators), one character for one, so
/// character positions (a text field's cursor) stay where they were.
fn shapeable(text: &str) -> std::borrow::Cow<'_, str> {
    let breaks = |c: char| matches!(c, '\u{1C}'..='\u{1E}' | '\u{85}' | '\u{2029}');
    if !text.chars().any(breaks) {
        return std::borrow::Cow::Borrowed(text);
    }
    text.chars()
        .map(|c| match c {
            '\u{85}' | '\u{2029}' => '\n',
            c if breaks(c) => ' ',
            c => c,
        })
        .collect()
}
