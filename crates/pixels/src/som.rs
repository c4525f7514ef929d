//! Set-of-marks: boxes and index labels over a screenshot, numbered exactly as the text
//! observation the agent got numbers its elements (`Observation::targets`).

use std::str::FromStr;

use phonebench_observe::sphinx::sphinx_actions;
use phonebench_text::TextStyle;
use phonebench_uitree::{NodeId, UiTree};
use tiny_skia::{Color, IntRect, PathBuilder, Pixmap, Rect, Stroke, Transform};

use crate::text::{TextAlign, TextRun, draw_text, text_size};
use crate::theme::Rgba;

/// Which benchmark's marks to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SomStyle {
    /// AndroidWorld's M3A: a green box per element, its index in black on a white box at the
    /// top-left corner.
    AndroidWorld,
    /// SPHINX's `annotated_image`: a box coloured by the element's first action (click red,
    /// swipe green, text blue, longclick purple), one label per action in that action's
    /// colour, parents drawn over children, and a legend.
    Sphinx,
}

impl SomStyle {
    /// The style's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SomStyle::AndroidWorld => "androidworld",
            SomStyle::Sphinx => "sphinx",
        }
    }
}

impl FromStr for SomStyle {
    type Err = String;

    fn from_str(s: &str) -> Result<SomStyle, String> {
        match s {
            "androidworld" => Ok(SomStyle::AndroidWorld),
            "sphinx" => Ok(SomStyle::Sphinx),
            other => Err(format!("`{other}` is not a set-of-marks style (androidworld, sphinx)")),
        }
    }
}

const GREEN: Rgba = [0, 255, 0, 255];

/// Marks drawn at most: elements past this index get none. Real screens have a few hundred
/// elements; thousands of overlapping marks are unreadable anyway, and each costs a text layout,
/// so a hostile tree with a million elements would take minutes.
pub const MAX_MARKS: usize = 4096;

/// SPHINX's action colours, in the order a box takes its colour from.
const SPHINX_COLOURS: [(&str, Rgba); 4] = [
    ("click", [255, 0, 0, 255]),
    ("swipe", [0, 255, 0, 255]),
    ("text", [0, 0, 255, 255]),
    ("longclick", [128, 0, 128, 255]),
];

fn colour_of(action: &str) -> Rgba {
    SPHINX_COLOURS.iter().find(|(a, _)| *a == action).map(|c| c.1).unwrap_or([255, 0, 0, 255])
}

/// Draws the marks for `targets` (element `i` is `targets[i]`) over `pixmap`, which holds the
/// screenshot of `tree`: the first [`MAX_MARKS`] elements.
pub fn draw_marks(pixmap: &mut Pixmap, tree: &UiTree, targets: &[NodeId], style: SomStyle) {
    let Some(screen) = IntRect::from_xywh(0, 0, pixmap.width(), pixmap.height()) else { return };
    // Marks scale with the screen as AndroidWorld's `iso_scale` does (1 at 1080 px wide).
    let scale = (pixmap.width() as f32 / 1080.0).max(0.5);
    // Geometry is clamped to a screen-sized margin around the pixmap before it reaches tiny-skia:
    // dump bounds can be anywhere in i32, and what lies beyond the margin stays off screen
    // either way (labels are far smaller than the margin).
    let reach = (pixmap.width() + pixmap.height()) as f32 + 4096.0;
    let at = |v: f32| v.clamp(-reach, 2.0 * reach);
    match style {
        SomStyle::AndroidWorld => {
            for (index, &id) in targets.iter().enumerate().take(MAX_MARKS) {
                let Some(node) = tree.get(id) else { continue };
                let b = node.bounds;
                if b.is_empty() {
                    continue;
                }
                let [l, t, r, bottom] = [b.left, b.top, b.right, b.bottom].map(|v| at(v as f32));
                stroke_box(pixmap, l, t, r, bottom, GREEN, 2.0 * scale);
                let label = Rect::from_xywh(l, t, 35.0 * scale, 25.0 * scale);
                fill_rect(pixmap, label, [255, 255, 255, 255]);
                if let Some(label) = label {
                    let text = index.to_string();
                    label_text(pixmap, &text, label, [0, 0, 0, 255], 18.0 * scale, screen);
                }
            }
        }
        SomStyle::Sphinx => {
            // Post-order: a parent after (over) its children. Targets are numbered in BFS
            // order, so sort by the tree's post-order position.
            let mut order: Vec<(usize, usize)> = Vec::with_capacity(targets.len().min(MAX_MARKS));
            let post = post_order_positions(tree);
            for (index, &id) in targets.iter().enumerate().take(MAX_MARKS) {
                if let Some(&pos) = post.get(id.get()) {
                    order.push((pos, index));
                }
            }
            order.sort_unstable();
            for (_, index) in order {
                let id = targets[index];
                let Some(node) = tree.get(id) else { continue };
                let b = node.bounds;
                let actions = sphinx_actions(node);
                if b.is_empty() || actions.is_empty() {
                    continue;
                }
                let first = SPHINX_COLOURS.iter().find(|(a, _)| actions.contains(a)).map(|c| c.1);
                let [l, t, r, bottom] = [b.left, b.top, b.right, b.bottom].map(|v| at(v as f32));
                stroke_box(pixmap, l, t, r, bottom, first.unwrap_or(GREEN), 2.0 * scale);
                let n = actions.len() as i64;
                let cy = (i64::from(b.top) + i64::from(b.bottom)) / 2;
                let text = index.to_string();
                let size = 26.0 * scale;
                for (k, action) in actions.iter().enumerate() {
                    let k = k as i64;
                    // SPHINX: label k of n at x = (x1(k+1) + x2(n-k)) // (n+1) + 5, baseline centre + 5.
                    let x =
                        (i64::from(b.left) * (k + 1) + i64::from(b.right) * (n - k)).div_euclid(n + 1) + 5;
                    let run = run(&text, size, [255, 255, 255, 255]);
                    let w = text_size(&run, f32::MAX).width + 6.0 * scale;
                    let h = size * 1.2;
                    let top = at((cy + 5) as f32 - h);
                    let bg = Rect::from_xywh(at(x as f32 - 3.0 * scale), top, w, h);
                    let c = colour_of(action);
                    fill_rect(pixmap, bg, [c[0], c[1], c[2], 179]);
                    if let Some(bg) = bg {
                        label_text(pixmap, &text, bg, [255, 255, 255, 255], size, screen);
                    }
                }
            }
            legend(pixmap, scale, screen);
        }
    }
}

/// The legend SPHINX's prompt gives in words, drawn over the status bar (never a target).
fn legend(pixmap: &mut Pixmap, scale: f32, screen: IntRect) {
    let size = 20.0 * scale;
    let y = 4.0 * scale;
    let h = size * 1.2 + 4.0 * scale;
    let widths: Vec<f32> = SPHINX_COLOURS
        .iter()
        .map(|(action, _)| text_size(&run(action, size, [255, 255, 255, 255]), f32::MAX).width + 12.0 * scale)
        .collect();
    // Centred in the status bar, between the clock and the battery.
    let total: f32 = widths.iter().sum::<f32>() + 6.0 * scale * (widths.len() as f32 - 1.0);
    let mut x = ((pixmap.width() as f32 - total) / 2.0).max(0.0);
    for (action, c) in SPHINX_COLOURS {
        let run = run(action, size, [255, 255, 255, 255]);
        let w = text_size(&run, f32::MAX).width + 12.0 * scale;
        let r = Rect::from_xywh(x, y, w, h);
        fill_rect(pixmap, r, c);
        if let Some(r) = r {
            label_text(pixmap, action, r, [255, 255, 255, 255], size, screen);
        }
        x += w + 6.0 * scale;
    }
}

fn post_order_positions(tree: &UiTree) -> Vec<usize> {
    let mut pos = vec![usize::MAX; tree.len()];
    let mut next = 0;
    for window in tree.windows() {
        // Iterative post-order: (node, children visited).
        let mut stack: Vec<(NodeId, bool)> = vec![(window.root, false)];
        while let Some((id, expanded)) = stack.pop() {
            if expanded {
                pos[id.get()] = next;
                next += 1;
            } else {
                stack.push((id, true));
                for &child in tree.children(id).iter().rev() {
                    stack.push((child, false));
                }
            }
        }
    }
    pos
}

fn run(text: &str, size: f32, color: Rgba) -> TextRun<'_> {
    TextRun {
        text,
        style: TextStyle { size_px: size, bold: true, line_height: 1.2 },
        max_lines: Some(1),
        color,
        align: TextAlign::Center,
    }
}

fn label_text(pixmap: &mut Pixmap, text: &str, area: Rect, color: Rgba, size: f32, screen: IntRect) {
    let run = run(text, size, color);
    let h = size * 1.2;
    let y = area.y() + (area.height() - h) / 2.0;
    if let Some(r) = Rect::from_xywh(area.x(), y, area.width(), h) {
        draw_text(pixmap, &run, r, screen);
    }
}

fn fill_rect(pixmap: &mut Pixmap, r: Option<Rect>, c: Rgba) {
    let Some(r) = r else { return };
    let mut paint = tiny_skia::Paint::default();
    paint.set_color(Color::from_rgba8(c[0], c[1], c[2], c[3]));
    pixmap.fill_rect(r, &paint, Transform::identity(), None);
}

fn stroke_box(pixmap: &mut Pixmap, l: f32, t: f32, r: f32, b: f32, c: Rgba, width: f32) {
    let half = width / 2.0;
    let Some(rect) = Rect::from_ltrb(l + half, t + half, r - half, b - half) else {
        return;
    };
    let mut paint = tiny_skia::Paint::default();
    paint.set_color(Color::from_rgba8(c[0], c[1], c[2], c[3]));
    let stroke = Stroke { width, ..Stroke::default() };
    pixmap.stroke_path(&PathBuilder::from_rect(rect), &paint, &stroke, Transform::identity(), None);
}
