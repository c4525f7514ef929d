//! Drawing text: the layout that [`phonebench_text::measure`] measured, rasterized with the embedded
//! fonts and blended into a [`tiny_skia::Pixmap`].
//!
//! Text is laid out on the process-wide [`Fonts`] (so it wraps exactly where layout measured it),
//! glyph images come from one process-wide `cosmic_text::SwashCache`, and coverage is blended
//! straight into the pixmap's premultiplied RGBA bytes (source-over), which is far faster than a
//! tiny-skia fill per glyph pixel. Every step is deterministic: the same call writes the same bytes.

use std::sync::{LazyLock, Mutex, MutexGuard, OnceLock, PoisonError};

use phonebench_text::cosmic_text::skrifa::MetadataProvider as _;
use phonebench_text::cosmic_text::skrifa::instance::{LocationRef, Size};
use phonebench_text::cosmic_text::{self, CacheKey, LayoutGlyph, SwashCache, SwashContent, SwashImage};
use phonebench_text::{FontWeight, Fonts, TextSize, TextStyle};
use tiny_skia::{IntRect, Pixmap, Rect};

/// How text sits horizontally in its box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TextAlign {
    /// At the start of the line: the left for left-to-right text, the right for right-to-left
    /// text (Android's `gravity="start"`, the default).
    #[default]
    Start,
    /// Centred in the box.
    Center,
    /// At the end of the line: the right for left-to-right text, the left for right-to-left text.
    End,
}

/// One text to draw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextRun<'a> {
    /// The text; `\n` starts a new line.
    pub text: &'a str,
    /// Size, weight and line height, as given to [`phonebench_text::measure`] (layout uses a line
    /// height of 1.2).
    pub style: TextStyle,
    /// Lines beyond this many are not drawn, and the last drawn line then ends with "…" (Android's
    /// `maxLines` with `ellipsize="end"`). `None`: every line.
    pub max_lines: Option<u32>,
    /// Straight (non-premultiplied) RGBA.
    pub color: [u8; 4],
    /// Where each line sits horizontally in the box.
    pub align: TextAlign,
}

/// Draws `run` wrapped at `rect.width()` (rounded exactly as [`phonebench_text::measure`] rounds
/// `max_width`) with its first line's top at `rect.y()`, and each line aligned within `rect`;
/// pixels outside `clip` (screen-space integer rect) are never written.
///
/// Line `i`'s top is at `rect.y() + i × line height` (line height = `size_px × line_height`, as
/// measured), and every line's baseline sits where Roboto's ascent and descent, centred in the line,
/// put it, whichever fallback faces the line also uses. Ink is not clipped to `rect`: glyphs that
/// overhang it (a word wider than the box, a tall accent with a line height below 1.2) are drawn,
/// so pass the view's bounds intersected with its parents' clip as `clip` to crop them.
///
/// When `max_lines` cuts the text, the last drawn line keeps as many of its glyphs as fit with "…"
/// after them in `rect`'s (rounded) width, dropping trailing spaces. A right-to-left last line is
/// only truncated, without "…".
pub fn draw_text(pixmap: &mut Pixmap, run: &TextRun, rect: Rect, clip: IntRect) {
    draw_text_weight(pixmap, run, run.style.weight(), rect, clip);
}

/// [`draw_text`] at an explicit weight (e.g. [`FontWeight::Medium`] for a button label), which
/// replaces `run.style.bold`; measure it with [`text_size_weight`].
pub fn draw_text_weight(pixmap: &mut Pixmap, run: &TextRun, weight: FontWeight, rect: Rect, clip: IntRect) {
    let Some(clip) =
        clip.intersect(&IntRect::from_xywh(0, 0, pixmap.width(), pixmap.height()).unwrap_or(clip))
    else {
        return;
    };
    if run.color[3] == 0 || run.text.is_empty() {
        return;
    }
    let mut fonts = Fonts::lock_shared();
    let glyphs = place_glyphs(&mut fonts, run, weight, rect, clip);
    if glyphs.is_empty() {
        return;
    }
    // Lock order: the fonts, then the glyph images (nothing takes them the other way round).
    let mut images = lock_images();
    if images.image_cache.len() + glyphs.len() > MAX_CACHED_IMAGES {
        images.image_cache.clear();
    }
    for glyph in &glyphs {
        images.get_image(fonts.font_system(), glyph.key);
    }
    // Rasterizing needed the font system; blending does not, so measurements on other threads can
    // go on meanwhile.
    drop(fonts);
    let width = pixmap.width() as usize;
    let data = pixmap.data_mut();
    for glyph in &glyphs {
        if let Some(Some(image)) = images.image_cache.get(&glyph.key) {
            blend(data, width, clip, image, glyph.x, glyph.y, run.color);
        }
    }
}

/// The size the text takes at that width (delegates to [`phonebench_text::measure`] with the run's
/// `max_lines`), for vertical centring by the caller.
pub fn text_size(run: &TextRun, width: f32) -> TextSize {
    text_size_weight(run, run.style.weight(), width)
}

/// [`text_size`] at an explicit weight, as [`draw_text_weight`] draws it.
pub fn text_size_weight(run: &TextRun, weight: FontWeight, width: f32) -> TextSize {
    phonebench_text::measure_weight(run.text, &run.style, weight, Some(width), run.max_lines)
}

/// Past this many glyph images the cache starts over (a few kB each at phone sizes: tens of MB at
/// most). A screen uses a few hundred; a whole benchmark run's texts at 4 subpixel offsets, a few
/// sizes and weights stay well below.
const MAX_CACHED_IMAGES: usize = 16_384;

/// The process-wide glyph images, shared by every thread like [`Fonts::shared`].
static IMAGES: LazyLock<Mutex<SwashCache>> = LazyLock::new(|| Mutex::new(SwashCache::new()));

/// Poison-tolerant: the cache holds only finished glyph images.
fn lock_images() -> MutexGuard<'static, SwashCache> {
    IMAGES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A glyph image to blend: its cache key and the pixel position of its origin (baseline, pen
/// position), as `cosmic_text::PhysicalGlyph` gives them.
struct PlacedGlyph {
    key: CacheKey,
    x: i32,
    y: i32,
}

/// Glyph origins farther than this from the origin are never placed (whatever the clip): beyond it
/// cosmic-text's integer pixel positions overflow, and no screen is that large.
const MAX_GLYPH_COORDINATE: f32 = (1 << 24) as f32;

/// Lays `run` out and places every shown glyph that can reach `clip` on the screen.
fn place_glyphs(
    fonts: &mut Fonts,
    run: &TextRun,
    weight: FontWeight,
    rect: Rect,
    clip: IntRect,
) -> Vec<PlacedGlyph> {
    let style = &run.style;
    let cap = run.max_lines.unwrap_or(u32::MAX) as usize;
    let Some(line_px) = line_px(style) else { return Vec::new() };
    if cap == 0 {
        return Vec::new();
    }
    let Some(buffer) = fonts.layout_weight(run.text, style, weight, Some(rect.width())) else {
        return Vec::new();
    };
    let size = sanitized_size(style);
    // The width the buffer wrapped at, as `measure` rounds it.
    let wrap_width = rect.width().round().max(0.0);
    let (ascent, descent) = roboto_ascent_descent(weight);
    let baseline = (line_px - (ascent + descent) * size) / 2.0 + ascent * size;

    // A glyph's image lies within a few ems of its origin: origins farther than this outside the
    // clip draw nothing, and are skipped (a hostile text can be far off screen or very long).
    let reach = 4.0 * size + line_px;
    let near = |v: f32, lo: i32, hi: i32| {
        v.is_finite() && v.abs() < MAX_GLYPH_COORDINATE && v > lo as f32 - reach && v < hi as f32 + reach
    };
    let runs: Vec<_> = buffer.layout_runs().collect();
    let shown = runs.len().min(cap);
    let cut = runs.len() > shown;
    let mut placed = Vec::new();
    // Only the last shown line of a cut text needs owned (ellipsized) glyphs.
    let mut ellipsized: Vec<LayoutGlyph>;
    for (i, line) in runs.iter().take(shown).enumerate() {
        let mut glyphs: &[LayoutGlyph] = line.glyphs;
        let mut line_w = line.line_w;
        if cut && i + 1 == shown && !line.rtl {
            let (owned, w) = ellipsize(fonts, line.text, line.glyphs, style, weight, wrap_width);
            ellipsized = owned;
            glyphs = &ellipsized;
            line_w = w;
        }
        // Where cosmic-text put the line's left edge: 0 for left-to-right, flush right otherwise.
        let left = if line.rtl { wrap_width - line_w } else { 0.0 };
        let box_w = rect.width();
        let target = match (run.align, line.rtl) {
            (TextAlign::Start, false) | (TextAlign::End, true) => 0.0,
            (TextAlign::Start, true) | (TextAlign::End, false) => box_w - line_w,
            (TextAlign::Center, _) => (box_w - line_w) / 2.0,
        };
        let x = rect.x() + target - left;
        let y = rect.y() + i as f32 * line_px + baseline;
        if !near(y, clip.top(), clip.bottom()) {
            continue;
        }
        for glyph in glyphs {
            if !near(x + glyph.x, clip.left(), clip.right()) || !near(y + glyph.y, clip.top(), clip.bottom())
            {
                continue;
            }
            let physical = glyph.physical((x, y), 1.0);
            placed.push(PlacedGlyph { key: physical.cache_key, x: physical.x, y: physical.y });
        }
    }
    placed
}

/// The glyphs of a cut text's last shown line, left to right, that fit in `width` with "…" after
/// them, then the "…"; and the width they take. Trailing whitespace before the "…" is dropped.
fn ellipsize(
    fonts: &mut Fonts,
    text: &str,
    glyphs: &[LayoutGlyph],
    style: &TextStyle,
    weight: FontWeight,
    width: f32,
) -> (Vec<LayoutGlyph>, f32) {
    let Some(ellipsis) = fonts.layout_weight("…", style, weight, None) else {
        return (glyphs.to_vec(), glyphs.iter().map(|g| g.x + g.w).fold(0.0, f32::max));
    };
    let mut dots: Vec<LayoutGlyph> = Vec::new();
    let mut dots_w = 0.0;
    if let Some(line) = ellipsis.layout_runs().next() {
        dots = line.glyphs.to_vec();
        dots_w = line.line_w;
    }
    let fit = glyphs.iter().take_while(|g| g.x + g.w <= width - dots_w).count();
    let mut kept = &glyphs[..fit];
    while let Some((last, rest)) = kept.split_last() {
        if !text.get(last.start..last.end).is_some_and(|s| s.chars().all(char::is_whitespace)) {
            break;
        }
        kept = rest;
    }
    let end = kept.last().map_or(0.0, |g| g.x + g.w);
    let mut out = kept.to_vec();
    out.extend(dots.into_iter().map(|mut g| {
        g.x += end;
        g
    }));
    (out, end + dots_w)
}

/// The font size `measure` uses: positive and finite, clamped to `MAX_SIZE_PX`; else 0.
fn sanitized_size(style: &TextStyle) -> f32 {
    if style.size_px.is_finite() && style.size_px > 0.0 {
        style.size_px.min(phonebench_text::MAX_SIZE_PX)
    } else {
        0.0
    }
}

/// The line height in pixels that `measure` uses, or `None` when nothing is laid out (no usable
/// size). A line height multiple that is not positive and finite gives 0: lines overlap, as
/// measured.
fn line_px(style: &TextStyle) -> Option<f32> {
    let size = sanitized_size(style);
    if size <= 0.0 {
        return None;
    }
    let multiple = if style.line_height.is_finite() && style.line_height > 0.0 {
        style.line_height.min(phonebench_text::MAX_SIZE_PX)
    } else {
        0.0
    };
    Some(size * multiple)
}

/// Roboto's ascent and descent at `weight` (positive, in ems), which place every line's baseline:
/// as on Android, a line's fallback glyphs (CJK, symbols) sit on the primary font's baseline.
fn roboto_ascent_descent(weight: FontWeight) -> (f32, f32) {
    static METRICS: OnceLock<[(f32, f32); 3]> = OnceLock::new();
    let metrics = METRICS.get_or_init(|| {
        [phonebench_text::REGULAR_TTF, phonebench_text::MEDIUM_TTF, phonebench_text::BOLD_TTF].map(|ttf| {
            cosmic_text::skrifa::FontRef::new(ttf)
                .ok()
                .map(|font| font.metrics(Size::unscaled(), LocationRef::default()))
                .filter(|m| m.units_per_em > 0)
                .map_or((1900.0 / 2048.0, 500.0 / 2048.0), |m| {
                    let em = f32::from(m.units_per_em);
                    (m.ascent / em, -m.descent / em)
                })
        })
    });
    match weight {
        FontWeight::Regular => metrics[0],
        FontWeight::Medium => metrics[1],
        FontWeight::Bold => metrics[2],
    }
}

/// `x / 255` rounded, for `x <= 255 × 255`.
#[inline]
fn div255(x: u32) -> u32 {
    let x = x + 128;
    (x + (x >> 8)) >> 8
}

/// Blends one glyph image, tinted with straight-alpha `color`, into premultiplied RGBA `data`
/// (`width` pixels a row) with source-over, writing only inside `clip` (already within the data).
/// The image's top-left is at (`x + left`, `y - top`).
fn blend(data: &mut [u8], width: usize, clip: IntRect, image: &SwashImage, x: i32, y: i32, color: [u8; 4]) {
    let p = image.placement;
    let (w, h) = (p.width as i32, p.height as i32);
    let (gx, gy) = (x.saturating_add(p.left), y.saturating_sub(p.top));
    let x0 = gx.max(clip.left());
    let x1 = gx.saturating_add(w).min(clip.right());
    let y0 = gy.max(clip.top());
    let y1 = gy.saturating_add(h).min(clip.bottom());
    if x0 >= x1 || y0 >= y1 {
        return;
    }
    let [r, g, b, a] = color.map(u32::from);
    match image.content {
        SwashContent::Mask => {
            for row in y0..y1 {
                let src = &image.data[((row - gy) * w + (x0 - gx)) as usize..][..(x1 - x0) as usize];
                let start = (row as usize * width + x0 as usize) * 4;
                let dst = &mut data[start..start + src.len() * 4];
                for (&coverage, px) in src.iter().zip(dst.chunks_exact_mut(4)) {
                    if coverage == 0 {
                        continue;
                    }
                    let alpha = div255(u32::from(coverage) * a);
                    over(px, [div255(r * alpha), div255(g * alpha), div255(b * alpha), alpha]);
                }
            }
        }
        // Color glyphs (none of the embedded faces has them) keep their colors, faded by the run's
        // alpha; their data is straight RGBA.
        SwashContent::Color => {
            for row in y0..y1 {
                let offset = (((row - gy) * w + (x0 - gx)) * 4) as usize;
                let src = &image.data[offset..offset + (x1 - x0) as usize * 4];
                let start = (row as usize * width + x0 as usize) * 4;
                let dst = &mut data[start..start + src.len()];
                for (s, px) in src.chunks_exact(4).zip(dst.chunks_exact_mut(4)) {
                    let alpha = div255(u32::from(s[3]) * a);
                    if alpha == 0 {
                        continue;
                    }
                    let [sr, sg, sb] = [s[0], s[1], s[2]].map(|c| div255(u32::from(c) * alpha));
                    over(px, [sr, sg, sb, alpha]);
                }
            }
        }
        // Only produced when asked for subpixel rendering, which cosmic-text does not do.
        SwashContent::SubpixelMask => {}
    }
}

/// Source-over of premultiplied `src` onto premultiplied pixel `px`.
#[inline]
fn over(px: &mut [u8], src: [u32; 4]) {
    let keep = 255 - src[3];
    if keep == 0 {
        px.copy_from_slice(&src.map(|c| c as u8));
        return;
    }
    for (d, s) in px.iter_mut().zip(src) {
        *d = (s + div255(u32::from(*d) * keep)) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 16 sp at density 2.625.
    const BODY: TextStyle = TextStyle { size_px: 42.0, bold: false, line_height: 1.2 };
    const BLACK: [u8; 4] = [0, 0, 0, 255];
    const LONG: &str = "The quick brown fox jumps over the lazy dog and keeps running across the field";

    fn run(text: &str) -> TextRun<'_> {
        TextRun { text, style: BODY, max_lines: None, color: BLACK, align: TextAlign::Start }
    }

    fn canvas() -> Pixmap {
        Pixmap::new(800, 400).expect("a valid size")
    }

    fn full(pixmap: &Pixmap) -> IntRect {
        IntRect::from_xywh(0, 0, pixmap.width(), pixmap.height()).expect("a valid rect")
    }

    fn rect(x: f32, y: f32, w: f32, h: f32) -> Rect {
        Rect::from_xywh(x, y, w, h).expect("a valid rect")
    }

    /// The bounding box (left, top, right, bottom; exclusive) of the non-transparent pixels.
    fn ink(pixmap: &Pixmap) -> Option<(u32, u32, u32, u32)> {
        let mut bbox: Option<(u32, u32, u32, u32)> = None;
        for (i, px) in pixmap.data().chunks_exact(4).enumerate() {
            if px[3] != 0 {
                let (x, y) = (i as u32 % pixmap.width(), i as u32 / pixmap.width());
                bbox = Some(match bbox {
                    None => (x, y, x + 1, y + 1),
                    Some((l, t, r, b)) => (l.min(x), t.min(y), r.max(x + 1), b.max(y + 1)),
                });
            }
        }
        bbox
    }

    /// The summed alpha of all pixels.
    fn ink_amount(pixmap: &Pixmap) -> u64 {
        pixmap.data().chunks_exact(4).map(|px| u64::from(px[3])).sum()
    }

    fn draw(run: &TextRun, rect: Rect) -> Pixmap {
        let mut pixmap = canvas();
        let clip = full(&pixmap);
        draw_text(&mut pixmap, run, rect, clip);
        pixmap
    }

    #[test]
    fn hello_draws_only_inside_its_box() {
        let hello = run("Hello");
        let size = text_size(&hello, 1000.0);
        let bounds = rect(100.0, 50.0, size.width.ceil(), size.height);
        let pixmap = draw(&hello, bounds);
        let (l, t, r, b) = ink(&pixmap).expect("Hello draws ink");
        assert!(
            l >= 100 && t >= 50 && r <= 100 + size.width.ceil() as u32 && b <= 50 + 51,
            "{l} {t} {r} {b}"
        );
        // The ink fills the box: cap height and descender-less text, left edge near the start.
        assert!(l <= 104 && r >= 100 + size.width as u32 - 4, "{l} {r} {size:?}");
        assert!(b - t >= 28, "{t} {b}");
        // Black ink, premultiplied: colour channels never exceed alpha.
        for px in pixmap.data().chunks_exact(4) {
            assert!(px[0] == 0 && px[1] == 0 && px[2] == 0, "{px:?}");
        }
    }

    #[test]
    fn clip_is_respected() {
        let hello = run("Hello world");
        let bounds = rect(100.0, 50.0, 400.0, 60.0);
        let unclipped = ink(&draw(&hello, bounds)).expect("ink");
        let clip = IntRect::from_xywh(100, 50, 100, 30).expect("a valid rect");
        let mut pixmap = canvas();
        draw_text(&mut pixmap, &hello, bounds, clip);
        let (l, t, r, b) = ink(&pixmap).expect("some ink within the clip");
        assert!(l >= 100 && t >= 50 && r <= 200 && b <= 80, "{l} {t} {r} {b}");
        assert!(unclipped.2 > 200 && unclipped.3 > 80, "{unclipped:?}");
        // A clip outside the pixmap or off the text draws nothing and does not panic.
        for clip in [IntRect::from_xywh(-50, -50, 20, 20), IntRect::from_xywh(790, 390, 100, 100)] {
            let mut pixmap = canvas();
            draw_text(&mut pixmap, &hello, bounds, clip.expect("a valid rect"));
            assert_eq!(ink(&pixmap), None);
        }
        // Text partly off the pixmap is cut at its edges.
        let mut pixmap = canvas();
        let clip = IntRect::from_xywh(-100, -100, 2000, 2000).expect("a valid rect");
        draw_text(&mut pixmap, &hello, rect(-60.0, -20.0, 900.0, 60.0), clip);
        assert!(ink(&pixmap).is_some());
    }

    #[test]
    fn center_and_end_alignment() {
        let mut centred = run("Settings");
        centred.align = TextAlign::Center;
        let bounds = rect(0.0, 0.0, 800.0, 60.0);
        let (l, _, r, _) = ink(&draw(&centred, bounds)).expect("ink");
        let (left_margin, right_margin) = (l as i32, 800 - r as i32);
        assert!((left_margin - right_margin).abs() <= 2, "{left_margin} {right_margin}");

        let mut end = centred;
        end.align = TextAlign::End;
        let (_, _, r, _) = ink(&draw(&end, rect(0.0, 0.0, 700.0, 60.0))).expect("ink");
        assert!((695..=700).contains(&r), "{r}");

        // Each wrapped line is centred on its own.
        let mut lines = run("Short\nA much longer second line");
        lines.align = TextAlign::Center;
        let pixmap = draw(&lines, bounds);
        let first = pixmap.clone_rect(IntRect::from_xywh(0, 0, 800, 50).expect("rect")).expect("crop");
        let (l, _, r, _) = ink(&first).expect("ink");
        assert!(((l as i32) - (800 - r as i32)).abs() <= 2, "{l} {r}");
    }

    #[test]
    fn max_lines_cuts_and_ellipsizes() {
        let mut one = run(LONG);
        one.max_lines = Some(1);
        let bounds = rect(0.0, 0.0, 500.0, 300.0);
        let (_, t, r, b) = ink(&draw(&one, bounds)).expect("ink");
        assert!(t < 50 && b <= 51, "{t} {b}");
        assert!(r <= 500, "{r}");
        let all = ink(&draw(&run(LONG), bounds)).expect("ink");
        assert!(all.3 > 150, "{all:?}");

        // The cut line is its words then "…", as if that were the whole text.
        let mut fonts = Fonts::new();
        let buffer = fonts.layout("The quick brown fox jumps", &BODY, Some(420.0)).expect("layout");
        let first_line: Vec<_> = buffer.layout_runs().map(|r| r.glyphs.len()).collect();
        assert!(first_line.len() == 2, "{first_line:?}");
        let mut cut = run("The quick brown fox jumps");
        cut.max_lines = Some(1);
        let expected = run("The quick brown fox…");
        let bounds = rect(10.0, 10.0, 420.0, 60.0);
        assert_eq!(draw(&cut, bounds).data(), draw(&expected, bounds).data());

        // A hard line break cut away gets "…" too; zero lines draw nothing.
        let mut inbox = run("Inbox\nsecond line");
        inbox.max_lines = Some(1);
        let wide = rect(0.0, 0.0, 600.0, 60.0);
        assert_eq!(draw(&inbox, wide).data(), draw(&run("Inbox…"), wide).data());
        inbox.max_lines = Some(0);
        assert_eq!(ink(&draw(&inbox, wide)), None);

        // Not cut: no "…".
        let mut fits = run("Inbox");
        fits.max_lines = Some(1);
        assert_eq!(draw(&fits, wide).data(), draw(&run("Inbox"), wide).data());
    }

    #[test]
    fn a_word_longer_than_the_line_is_cut_with_an_ellipsis_that_fits() {
        let mut word = run("Supercalifragilisticexpialidocious");
        word.max_lines = Some(1);
        let (l, _, r, _) = ink(&draw(&word, rect(0.0, 0.0, 200.0, 60.0))).expect("ink");
        assert!(l < 10 && r <= 200 && r > 150, "{l} {r}");
    }

    #[test]
    fn bold_draws_more_ink_than_regular() {
        let bounds = rect(0.0, 0.0, 800.0, 60.0);
        let regular = ink_amount(&draw(&run("Wi-Fi & network"), bounds));
        let mut bold = run("Wi-Fi & network");
        bold.style.bold = true;
        let bold = ink_amount(&draw(&bold, bounds));
        let mut pixmap = canvas();
        let clip = full(&pixmap);
        draw_text_weight(&mut pixmap, &run("Wi-Fi & network"), FontWeight::Medium, bounds, clip);
        let medium = ink_amount(&pixmap);
        assert!(regular < medium && medium < bold, "{regular} {medium} {bold}");
        assert!(bold as f64 > regular as f64 * 1.2, "{regular} {bold}");
    }

    #[test]
    fn cjk_draws_ink_from_the_fallback_face() {
        let text = run("你好");
        let size = text_size(&text, 800.0);
        assert_eq!(size.width, 84.0);
        let pixmap = draw(&text, rect(0.0, 0.0, 800.0, 60.0));
        let (l, t, r, b) = ink(&pixmap).expect("CJK draws ink");
        assert!(r - l > 70 && b - t > 30, "{l} {t} {r} {b}");
        // Far more ink than two empty missing-glyph boxes would leave.
        let boxes = ink_amount(&draw(&run("\u{FFFF}\u{FFFF}"), rect(0.0, 0.0, 800.0, 60.0)));
        assert!(ink_amount(&pixmap) > 2 * boxes, "{} {boxes}", ink_amount(&pixmap));
        // Symbols from DejaVu Sans draw too.
        assert!(ink(&draw(&run("✓ →"), rect(0.0, 0.0, 800.0, 60.0))).is_some());
    }

    #[test]
    fn baselines_match_between_latin_and_fallback_lines() {
        // "H" alone and "H" followed by an ideograph: the H's pixels are the same.
        let bounds = rect(0.0, 0.0, 800.0, 60.0);
        let crop = IntRect::from_xywh(0, 0, 28, 60).expect("rect");
        let alone = draw(&run("H"), bounds).clone_rect(crop).expect("crop");
        let mixed = draw(&run("H你"), bounds).clone_rect(crop).expect("crop");
        assert_eq!(alone.data(), mixed.data());
    }

    #[test]
    fn lines_stack_at_the_line_height() {
        let two = run("Hello\nHello");
        let pixmap = draw(&two, rect(0.0, 10.0, 800.0, 200.0));
        let one = draw(&run("Hello"), rect(0.0, 10.0, 800.0, 200.0));
        let (_, t1, _, b1) = ink(&one).expect("ink");
        let (_, t2, _, b2) = ink(&pixmap).expect("ink");
        assert_eq!(t1, t2);
        // 42 × 1.2 = 50.4 px lower, truncated to whole pixels.
        assert!((b2 - b1).abs_diff(50) <= 1, "{b1} {b2}");
    }

    #[test]
    fn identical_calls_give_identical_bytes() {
        let mut text = run("Alice Müller · Émile 你好 ✓ — are we still on for lunch tomorrow?");
        text.max_lines = Some(2);
        text.color = [30, 120, 200, 180];
        text.align = TextAlign::Center;
        let bounds = rect(13.3, 7.6, 455.5, 200.0);
        let first = draw(&text, bounds);
        for _ in 0..3 {
            assert_eq!(draw(&text, bounds).data(), first.data());
        }
        // Also when other texts filled the glyph cache in between.
        draw(&run("Some other text at another size"), bounds);
        assert_eq!(draw(&text, bounds).data(), first.data());
    }

    #[test]
    fn blending_is_source_over_in_premultiplied_rgba() {
        // Opaque white on opaque dark blue: fully covered pixels become white, partly covered ones
        // lie between, every pixel stays opaque.
        let mut pixmap = canvas();
        pixmap.fill(tiny_skia::Color::from_rgba8(10, 20, 60, 255));
        let mut white = run("Hello");
        white.color = [255, 255, 255, 255];
        let clip = full(&pixmap);
        draw_text(&mut pixmap, &white, rect(0.0, 0.0, 800.0, 60.0), clip);
        let pixels: Vec<&[u8]> = pixmap.data().chunks_exact(4).collect();
        assert!(pixels.iter().all(|px| px[3] == 255));
        assert!(pixels.iter().any(|px| px == &[255, 255, 255, 255]));
        assert!(pixels.iter().any(|px| px[0] > 10 && px[0] < 255 && px[2] > 60 && px[2] < 255));
        // Half-transparent red on transparent: premultiplied, so colour never exceeds alpha.
        let mut pixmap = canvas();
        let mut red = run("Hello");
        red.color = [255, 0, 0, 128];
        draw_text(&mut pixmap, &red, rect(0.0, 0.0, 800.0, 60.0), clip);
        let max_alpha = pixmap.data().chunks_exact(4).map(|px| px[3]).max();
        assert_eq!(max_alpha, Some(128));
        assert!(pixmap.data().chunks_exact(4).all(|px| px[0] == px[3] && px[1] == 0 && px[2] == 0));
    }

    #[test]
    fn unusable_input_draws_nothing_without_panicking() {
        let bounds = rect(0.0, 0.0, 100.0, 60.0);
        for style in [
            TextStyle { size_px: 0.0, ..BODY },
            TextStyle { size_px: f32::NAN, ..BODY },
            TextStyle { size_px: -3.0, ..BODY },
        ] {
            let text = TextRun { style, ..run("Hello") };
            assert_eq!(ink(&draw(&text, bounds)), None);
        }
        let transparent = TextRun { color: [0, 0, 0, 0], ..run("Hello") };
        assert_eq!(ink(&draw(&transparent, bounds)), None);
        assert_eq!(ink(&draw(&run(""), bounds)), None);
        // Huge text and a zero-width box do not panic.
        let huge = TextRun { style: TextStyle { size_px: 5000.0, ..BODY }, ..run("W") };
        draw(&huge, rect(0.0, 0.0, 800.0, 400.0));
        draw(&run("Hello world"), Rect::from_xywh(10.0, 10.0, 0.0, 0.0).unwrap_or(bounds));
    }
}
