//! The renderer: a UI tree plus one [`Paint`] per node to an RGBA pixmap.
//!
//! Windows are drawn bottom layer first and each window's nodes in document order, so parents
//! lie under their children, as Android draws. Everything drawn for a node is clipped to the
//! node's bounds in the tree (its visible part), which is what makes the pixels agree with the
//! tree: a tap at a pixel lands on the node drawn there. The one deliberate exception is the
//! scrim behind a dialog, which belongs to the dialog's window, as Android's dim does.

use phonebench_text::TextStyle;
use phonebench_uitree::{Node, NodeId, UiTree};
use tiny_skia::{
    Color, FillRule, GradientStop, IntRect, LinearGradient, Mask, Path, PathBuilder, Pixmap, Point, Rect,
    SpreadMode, Stroke, Transform,
};

use crate::PixelsError;
use crate::icons;
use crate::paint::{Align, Frame, Paint, Role, TextLook, Tone};
use crate::text::{TextAlign, TextRun, draw_text, text_size};
use crate::theme::{Rgba, Theme};

/// Line height multiple of all text (the layout measures with the same).
pub const LINE_HEIGHT: f32 = 1.2;

/// Room an icon takes before a text, in dp (24 dp icon + 8 dp gap); layout reserves the same.
pub const ICON_WITH_TEXT_DP: f32 = 32.0;

/// Width of a switch's track at the end of its row, in dp; layout reserves the same.
pub const SWITCH_DP: f32 = 52.0;

/// Room a check box or radio button takes before its text, in dp; layout reserves the same.
pub const CHECK_DP: f32 = 40.0;

/// Renders `tree` with `paints[i]` for the node with id `i` into a `width`×`height` pixmap.
pub fn render(
    tree: &UiTree,
    paints: &[Paint],
    width: u32,
    height: u32,
    theme: &Theme,
) -> Result<Pixmap, PixelsError> {
    if paints.len() != tree.len() {
        return Err(PixelsError::PaintCount { nodes: tree.len(), paints: paints.len() });
    }
    let mut pixmap = Pixmap::new(width, height).ok_or(PixelsError::Size { width, height })?;
    let screen = IntRect::from_xywh(0, 0, width, height).ok_or(PixelsError::Size { width, height })?;
    let mut painter =
        Painter { pixmap: &mut pixmap, theme, mask: None, masked: false, screen, avatar_key: None };
    // What shows where no window draws.
    painter.pixmap.fill(color(theme.surface));
    for id in drawing_order(tree) {
        // Paints come from app layouts or are guessed from hostile dumps: whatever they hold,
        // nothing that reaches tiny-skia may be non-finite, negative where a size is meant, or
        // so large that its arithmetic overflows.
        let paint = paints[id.get()].sanitized();
        painter.avatar_key = (paint.role == Role::Avatar).then(|| avatar_key(tree, id));
        painter.node(tree.node(id), &paint);
    }
    Ok(pixmap)
}

/// Renders a tree that has no paints (a real device's dump): each node's look is guessed from
/// its class by [`Paint::infer`].
pub fn render_inferred(
    tree: &UiTree,
    width: u32,
    height: u32,
    density: f32,
    theme: &Theme,
) -> Result<Pixmap, PixelsError> {
    let paints: Vec<Paint> = tree.iter().map(|(_, node)| Paint::infer(node, density)).collect();
    render(tree, &paints, width, height, theme)
}

/// Nodes an avatar's colour search looks at, at most (a list row has a handful).
const AVATAR_KEY_SCAN: usize = 256;

/// What an avatar's colour is picked from: the name beside it (the first text after it in its
/// parent, as in a list row or a contact header), else its own text or description, so people
/// who share an initial still get different colours.
///
/// Each search looks at most [`AVATAR_KEY_SCAN`] nodes, so a screen of nested avatars without text
/// is not quadratic.
fn avatar_key(tree: &UiTree, id: NodeId) -> String {
    let label = |n: &Node| if n.text.is_empty() { n.content_desc.clone() } else { n.text.clone() };
    let beside = tree.parent(id).and_then(|parent| {
        // The parent's subtree after the avatar's own: one contiguous id range.
        let after = id.0.saturating_add(tree.dfs(id).len() as u32);
        tree.dfs(parent)
            .skip(after.saturating_sub(parent.0) as usize)
            .take(AVATAR_KEY_SCAN)
            .map(|d| tree.node(d))
            .find(|n| !n.text.is_empty())
    });
    beside
        .or_else(|| {
            tree.dfs(id)
                .take(AVATAR_KEY_SCAN)
                .map(|d| tree.node(d))
                .find(|n| !n.text.is_empty() || !n.content_desc.is_empty())
        })
        .map(label)
        .unwrap_or_default()
}

/// The node ids of `tree` in the order [`render`] draws them.
pub fn drawing_order(tree: &UiTree) -> Vec<NodeId> {
    let mut windows: Vec<usize> = (0..tree.windows().len()).collect();
    windows.sort_by_key(|&w| tree.windows()[w].layer);
    windows.into_iter().flat_map(|w| tree.dfs(tree.windows()[w].root)).collect()
}

struct Painter<'a> {
    pixmap: &'a mut Pixmap,
    theme: &'a Theme,
    /// Clip mask for nodes drawn partly out of view, allocated on first use and reused.
    mask: Option<Mask>,
    /// Whether the current node is clipped by `mask`.
    masked: bool,
    screen: IntRect,
    /// The text an avatar's colour is picked from (its own or its first descendant's).
    avatar_key: Option<String>,
}

fn color(c: Rgba) -> Color {
    Color::from_rgba8(c[0], c[1], c[2], c[3])
}

fn with_alpha(c: Rgba, alpha: f32) -> Rgba {
    [c[0], c[1], c[2], (f32::from(c[3]) * alpha).round() as u8]
}

fn rect(f: Frame) -> Option<Rect> {
    Rect::from_xywh(f.x, f.y, f.w, f.h)
}

/// A rectangle with corners of radius `r` (clamped to half the shorter side).
fn round_rect(f: Frame, r: f32) -> Option<Path> {
    let r = r.min(f.w / 2.0).min(f.h / 2.0).max(0.0);
    if r <= 0.0 {
        return rect(f).map(PathBuilder::from_rect);
    }
    // Cubic approximation of a quarter circle.
    let k = r * 0.552_284_8;
    let (x0, y0, x1, y1) = (f.x, f.y, f.right(), f.bottom());
    let mut pb = PathBuilder::new();
    pb.move_to(x0 + r, y0);
    pb.line_to(x1 - r, y0);
    pb.cubic_to(x1 - r + k, y0, x1, y0 + r - k, x1, y0 + r);
    pb.line_to(x1, y1 - r);
    pb.cubic_to(x1, y1 - r + k, x1 - r + k, y1, x1 - r, y1);
    pb.line_to(x0 + r, y1);
    pb.cubic_to(x0 + r - k, y1, x0, y1 - r + k, x0, y1 - r);
    pb.line_to(x0, y0 + r);
    pb.cubic_to(x0, y0 + r - k, x0 + r - k, y0, x0 + r, y0);
    pb.close();
    pb.finish()
}

fn circle(cx: f32, cy: f32, r: f32) -> Option<Path> {
    PathBuilder::from_circle(cx, cy, r.max(0.1))
}

/// The square of side `size` centred in `f`.
fn centered_square(f: Frame, size: f32) -> Frame {
    let (cx, cy) = f.center();
    Frame::new(cx - size / 2.0, cy - size / 2.0, size, size)
}

impl Painter<'_> {
    /// The launcher's wallpaper inside `f`: one gradient over the whole screen, so the
    /// launcher, status bar and navigation bar windows that show it join seamlessly.
    fn wallpaper(&mut self, f: Frame) {
        let (top, bottom) = self.theme.wallpaper;
        let h = self.pixmap.height() as f32;
        let shader = LinearGradient::new(
            Point::from_xy(0.0, 0.0),
            Point::from_xy(0.0, h),
            vec![GradientStop::new(0.0, color(top)), GradientStop::new(1.0, color(bottom))],
            SpreadMode::Pad,
            Transform::identity(),
        );
        let (Some(shader), Some(r)) = (shader, rect(f)) else { return };
        let paint = tiny_skia::Paint { shader, anti_alias: false, ..Default::default() };
        let mask = if self.masked { self.mask.as_ref() } else { None };
        self.pixmap.fill_rect(r, &paint, Transform::identity(), mask);
    }

    /// Sets up clipping for a node and returns its visible bounds, or `None` when nothing of it
    /// is on screen. A node whose whole frame is visible needs no mask.
    fn begin(&mut self, node: &Node, paint: &Paint) -> Option<IntRect> {
        let b = node.bounds;
        let bounds = IntRect::from_ltrb(b.left, b.top, b.right, b.bottom)?.intersect(&self.screen)?;
        let f = paint.frame;
        let inside = f.x >= bounds.x() as f32
            && f.y >= bounds.y() as f32
            && f.right() <= bounds.right() as f32
            && f.bottom() <= bounds.bottom() as f32;
        self.masked = !inside;
        if self.masked {
            let (w, h) = (self.pixmap.width(), self.pixmap.height());
            let mask = match self.mask.take() {
                Some(mut m) => {
                    m.clear();
                    Some(m)
                }
                None => Mask::new(w, h),
            };
            self.mask = mask.map(|mut m| {
                m.fill_path(
                    &PathBuilder::from_rect(bounds.to_rect()),
                    FillRule::Winding,
                    false,
                    Transform::identity(),
                );
                m
            });
        }
        Some(bounds)
    }

    fn fill(&mut self, path: Option<Path>, c: Rgba) {
        let Some(path) = path else { return };
        let mut paint = tiny_skia::Paint::default();
        paint.set_color(color(c));
        paint.anti_alias = true;
        let mask = if self.masked { self.mask.as_ref() } else { None };
        self.pixmap.fill_path(&path, &paint, FillRule::Winding, Transform::identity(), mask);
    }

    fn stroke(&mut self, path: Option<Path>, c: Rgba, width: f32) {
        let Some(path) = path else { return };
        // tiny-skia asserts a non-negative width.
        if !(width.is_finite() && width > 0.0) {
            return;
        }
        let mut paint = tiny_skia::Paint::default();
        paint.set_color(color(c));
        paint.anti_alias = true;
        let stroke = Stroke { width, ..Stroke::default() };
        let mask = if self.masked { self.mask.as_ref() } else { None };
        self.pixmap.stroke_path(&path, &paint, &stroke, Transform::identity(), mask);
    }

    /// A stroke that stays inside `f`: the path is inset by half the line width.
    fn outline(&mut self, f: Frame, r: f32, c: Rgba, width: f32) {
        let half = width / 2.0;
        self.stroke(round_rect(f.inset(half), (r - half).max(0.0)), c, width);
    }

    fn icon(&mut self, name: &str, square: Frame, c: Rgba) {
        let mask = if self.masked { self.mask.as_ref() } else { None };
        if name.starts_with(crate::assets::ASSET) {
            // A package's own icon: its shape in the ink, like the vendored ones.
            crate::assets::draw_icon(self.pixmap, name, (square.x, square.y, square.w), color(c), mask);
            return;
        }
        icons::draw(self.pixmap, name, square.x, square.y, square.w, color(c), mask);
    }

    fn text(&mut self, text: &str, paint: &Paint, area: Frame, c: Rgba, clip: IntRect, valign_center: bool) {
        let Some(look) = paint.text else { return };
        if text.is_empty() || area.w <= 0.0 {
            return;
        }
        let run = text_run(text, &look, c, look.align);
        let size = text_size(&run, area.w);
        let y = if valign_center && size.height < area.h {
            area.y + (area.h - size.height) / 2.0
        } else {
            area.y
        };
        if let Some(r) = Rect::from_xywh(area.x, y, area.w, size.height.max(1.0)) {
            draw_text(self.pixmap, &run, r, clip);
        }
    }

    /// Like [`Painter::text`] (centred vertically) with the horizontal alignment overridden.
    fn text_aligned(&mut self, text: &str, paint: &Paint, area: Frame, c: Rgba, clip: IntRect, align: Align) {
        let look = paint.text.map(|l| TextLook { align, ..l });
        let p = Paint { text: look, ..paint.clone() };
        self.text(text, &p, area, c, clip, true);
    }

    fn tone(&self, tone: Tone) -> Rgba {
        match tone {
            Tone::Normal => self.theme.on_surface,
            Tone::Secondary => self.theme.on_surface_variant,
            Tone::Primary => self.theme.primary,
            Tone::Error => self.theme.error,
        }
    }

    /// Draws one node: its role's shapes, then its icon, then its text.
    fn node(&mut self, node: &Node, paint: &Paint) {
        let Some(clip) = self.begin(node, paint) else { return };
        let t = *self.theme;
        let d = paint.density.max(0.5);
        let f = paint.frame;
        let c = paint.content;
        let fade = |rgba: Rgba| if node.enabled { rgba } else { with_alpha(rgba, 0.38) };
        // The text's colour unless the role decides it.
        let mut ink = self.tone(paint.text.map(|l| l.tone).unwrap_or_default());
        let mut icon_ink = t.on_surface_variant;
        let mut text = node.text.as_str();
        let mut center_text = true;
        if let Some(bg) = paint.bg {
            self.fill(round_rect(f, 12.0 * d), t.swatch(bg).0);
        }
        if let Some(on) = paint.on
            && matches!(paint.text.map(|l| l.tone).unwrap_or_default(), Tone::Normal | Tone::Secondary)
        {
            ink = t.swatch(on).1;
            icon_ink = ink;
        }
        match paint.role {
            Role::Plain | Role::AppBar => {}
            Role::Wallpaper => self.wallpaper(f),
            Role::Surface | Role::StatusBar | Role::NavBar => {
                self.fill(rect(f).map(PathBuilder::from_rect), t.surface)
            }
            Role::Card => self.fill(round_rect(f, 12.0 * d), t.surface_container),
            Role::TonalBox => self.fill(round_rect(f, 16.0 * d), t.secondary_container),
            Role::Avatar => {
                let key = self.avatar_key.clone().unwrap_or_default();
                let side = f.w.min(f.h);
                let (cx, cy) = f.center();
                self.fill(circle(cx, cy, side / 2.0), t.avatar(&key));
                ink = t.on_avatar();
                icon_ink = t.on_avatar();
                if text.is_empty()
                    && paint.icon.is_none()
                    && self.avatar_key.as_deref() == Some(node.content_desc.as_str())
                {
                    // A picture-less account avatar: the person glyph.
                    self.icon("person", centered_square(f, side * 0.6), t.on_avatar());
                }
            }
            Role::Fab => {
                self.fill(round_rect(f, 16.0 * d), t.primary_container);
                ink = t.on_primary_container;
                icon_ink = t.on_primary_container;
            }
            Role::FilledButton => {
                self.fill(
                    round_rect(f, f.h / 2.0),
                    if node.enabled { t.primary } else { with_alpha(t.on_surface, 0.12) },
                );
                ink = fade(if node.enabled { t.on_primary } else { t.on_surface });
                icon_ink = ink;
            }
            Role::TonalButton => {
                self.fill(round_rect(f, f.h / 2.0), t.secondary_container);
                ink = fade(t.on_secondary_container);
                icon_ink = ink;
            }
            Role::OutlinedButton => {
                self.outline(f, f.h / 2.0, fade(t.outline), d.max(1.0));
                ink = fade(t.primary);
                icon_ink = ink;
            }
            Role::TextButton => {
                ink = fade(t.primary);
                icon_ink = ink;
            }
            Role::Chip => {
                if node.selected || node.checked {
                    self.fill(round_rect(f, 8.0 * d), t.secondary_container);
                    ink = t.on_secondary_container;
                } else {
                    self.outline(f, 8.0 * d, t.outline_variant, d.max(1.0));
                    ink = t.on_surface_variant;
                }
                icon_ink = ink;
            }
            Role::Field => {
                // Rounded top corners, square bottom ones (a filled text field).
                self.fill(round_rect(f, 4.0 * d), t.surface_container_high);
                let lower = Frame::new(f.x, f.y + f.h / 2.0, f.w, f.h / 2.0);
                self.fill(rect(lower).map(PathBuilder::from_rect), t.surface_container_high);
                let line = if node.focused { 2.0 * d } else { d.max(1.0) };
                let line_ink = if node.focused { t.primary } else { t.on_surface_variant };
                self.fill(
                    rect(Frame::new(f.x, f.bottom() - line, f.w, line)).map(PathBuilder::from_rect),
                    line_ink,
                );
            }
            Role::SearchBar => {
                self.fill(round_rect(f, f.h / 2.0), t.surface_container_high);
            }
            Role::Switch => self.switch(node, paint),
            Role::CheckBox => self.check_box(node, paint),
            Role::Radio => self.radio(node, paint),
            Role::Seek => self.seek(node, paint),
            Role::IconButton if paint.icon.is_none() => {
                // An image button with no icon shows its picture: a swatch coloured by its
                // description (a colour option, an app's image).
                let side = f.w.min(f.h) - 8.0 * d;
                let (cx, cy) = f.center();
                let key = if node.content_desc.is_empty() { &node.resource_id } else { &node.content_desc };
                self.fill(circle(cx, cy, side / 2.0), t.avatar(key));
                if node.selected {
                    self.stroke(circle(cx, cy, side / 2.0 + 2.0 * d), t.primary, 2.0 * d);
                }
            }
            Role::IconButton => {
                if node.selected {
                    let side = f.w.min(f.h) - 8.0 * d;
                    let (cx, cy) = f.center();
                    self.fill(circle(cx, cy, side / 2.0), t.secondary_container);
                    icon_ink = t.on_secondary_container;
                }
            }
            Role::Image => {
                if paint.icon.is_none() {
                    self.fill(round_rect(f, 8.0 * d), t.surface_container_high);
                    let side = f.w.min(f.h) * 0.5;
                    self.icon("image", centered_square(f, side), t.on_surface_variant);
                }
            }
            Role::Divider => self.fill(rect(f).map(PathBuilder::from_rect), t.outline_variant),
            Role::BubbleIn => self.fill(round_rect(f, 18.0 * d), t.surface_container_high),
            Role::BubbleOut => {
                self.fill(round_rect(f, 18.0 * d), t.primary_container);
                ink = t.on_primary_container;
            }
            Role::Tab => {
                if node.selected {
                    ink = t.primary;
                    let w = (f.w * 0.5).max(24.0 * d);
                    let bar = Frame::new(f.x + (f.w - w) / 2.0, f.bottom() - 3.0 * d, w, 3.0 * d);
                    self.fill(round_rect(bar, 1.5 * d), t.primary);
                } else {
                    ink = t.on_surface_variant;
                }
            }
            Role::Badge => {
                self.fill(round_rect(f, f.h / 2.0), t.error);
                ink = t.on_error;
            }
            Role::Battery => self.battery(node, paint),
            Role::Keyboard => self.fill(rect(f).map(PathBuilder::from_rect), t.keyboard),
            Role::Key => {
                text = "";
                self.key(node, paint, clip);
            }
            Role::Dialog => {
                // The scrim dims everything under the dialog's window.
                // It covers the whole screen, so it is drawn without the node's clip.
                let mut scrim = tiny_skia::Paint::default();
                scrim.set_color(color([0, 0, 0, 82]));
                self.pixmap.fill_rect(self.screen.to_rect(), &scrim, Transform::identity(), None);
                self.fill(round_rect(f, 28.0 * d), t.surface_container_high);
            }
            Role::Menu => {
                self.fill(round_rect(f, 4.0 * d), t.surface_container);
                self.outline(f, 4.0 * d, t.outline_variant, d.max(1.0));
            }
            Role::Toast => {
                self.fill(round_rect(f, (f.h / 2.0).min(24.0 * d)), t.inverse_surface);
                ink = t.inverse_on_surface;
            }
            Role::LauncherIcon => {
                let side = 56.0 * d;
                let (cx, _) = f.center();
                let top = f.y + 4.0 * d;
                self.fill(circle(cx, top + side / 2.0, side / 2.0), t.primary_container);
                if let Some(icon) = &paint.icon {
                    let s = 30.0 * d;
                    self.icon(
                        icon,
                        Frame::new(cx - s / 2.0, top + (side - s) / 2.0, s, s),
                        t.on_primary_container,
                    );
                }
                center_text = false;
            }
            Role::OverviewCard => {
                self.fill(round_rect(f, 16.0 * d), t.surface_container_high);
                center_text = false;
            }
        }

        // A picture fills the frame (clipped like everything else); it replaces the icon.
        if let Some(key) = paint.image.as_deref().and_then(|s| s.strip_prefix(crate::picture::PLACEHOLDER)) {
            let mask = if self.masked { self.mask.as_ref() } else { None };
            crate::picture::draw_placeholder(self.pixmap, key, f, mask);
        } else if let Some(key) = paint.image.as_deref().filter(|s| s.starts_with(crate::assets::ASSET)) {
            let mask = if self.masked { self.mask.as_ref() } else { None };
            if !crate::assets::draw(self.pixmap, key, f, mask) {
                // A picture this process never loaded (a tree from elsewhere): a grey frame.
                self.fill(round_rect(f, 8.0 * d), t.surface_container_high);
            }
        } else if let Some(icon) = &paint.icon
            && !matches!(paint.role, Role::LauncherIcon)
        {
            let side = if paint.role == Role::Avatar {
                (c.w.min(c.h) * 0.6).max(1.0)
            } else if paint.role == Role::Image {
                // Small images are icons at full size; large ones (a header) show a smaller glyph.
                let box_side = c.w.min(c.h);
                if box_side <= 40.0 * d { box_side } else { (box_side * 0.6).max(40.0 * d) }.max(1.0)
            } else {
                (24.0 * d).min(c.w).min(c.h)
            };
            if text.is_empty() {
                self.icon(icon, centered_square(c, side), fade(icon_ink));
            }
        }

        // Text, or a text field's hint; an icon beside text sits before it (extended FAB, chip,
        // button), the pair centred where the text would be.
        let mut area = c;
        if let Some(icon) = paint.icon.as_deref()
            && !text.is_empty()
            && !matches!(paint.role, Role::LauncherIcon)
        {
            let shift = ICON_WITH_TEXT_DP * d;
            let side = (24.0 * d).min(c.h);
            let mut start = c.x;
            area = Frame::new(c.x + shift, c.y, (c.w - shift).max(0.0), c.h);
            if let Some(look) = paint.text.filter(|l| l.align == Align::Center) {
                let run = text_run(text, &look, ink, Align::Start);
                let width = text_size(&run, area.w.max(1.0)).width;
                start = c.x + ((c.w - shift - width) / 2.0).max(0.0);
                area = Frame::new(start + shift, c.y, (c.right() - start - shift).max(0.0), c.h);
                self.text_aligned(text, paint, area, fade(ink), clip, Align::Start);
                text = "";
            }
            self.icon(icon, Frame::new(start, c.y + (c.h - side) / 2.0, side, side), fade(icon_ink));
        }
        // A text field drawn as anything (`style="plain"` in a toolbar) still shows its hint.
        let editable =
            matches!(paint.role, Role::Field | Role::SearchBar) || node.class.ends_with("EditText");
        if editable && text.is_empty() {
            if let Some(hint) = node.hint.as_deref() {
                self.text(hint, paint, area, t.on_surface_variant, clip, true);
            }
        } else {
            // A filled text field keeps its label once it holds text: the hint floats, small,
            // to the top of the field, and the text sits below it (Material's floating label).
            if matches!(paint.role, Role::Field)
                && !text.is_empty()
                && let Some(hint) = node.hint.as_deref().filter(|h| !h.is_empty())
                && let Some(look) = paint.text
                && f.h >= look.size_px * LINE_HEIGHT * 1.75
            {
                let small =
                    TextLook { size_px: look.size_px * 0.75, bold: false, max_lines: Some(1), ..look };
                let label = Paint { text: Some(small), ..paint.clone() };
                let top = f.y + 6.0 * d;
                let label_area = Frame::new(area.x, top, area.w, small.size_px * LINE_HEIGHT);
                let label_ink = if node.focused { t.primary } else { t.on_surface_variant };
                self.text(hint, &label, label_area, fade(label_ink), clip, false);
                let below = label_area.bottom() - 2.0 * d;
                let shift = (below - (area.y + (area.h - look.size_px * LINE_HEIGHT) / 2.0)).max(0.0);
                area = Frame::new(area.x, area.y + shift, area.w, (area.h - shift).max(0.0));
            }
            self.text(text, paint, area, fade(ink), clip, center_text);
        }
        if editable && node.focused {
            self.caret(text, paint, area);
        }
    }

    /// The blinking caret of a focused text field, drawn (always on) after the last character.
    fn caret(&mut self, text: &str, paint: &Paint, area: Frame) {
        let Some(look) = paint.text else { return };
        let d = paint.density;
        let line = look.size_px * LINE_HEIGHT;
        let run = text_run(text, &look, self.theme.primary, Align::Start);
        let size = text_size(&run, area.w);
        let lines = size.lines.max(1) as f32;
        let height = if text.is_empty() { line } else { size.height.max(line) };
        let top = area.y + ((area.h - height) / 2.0).max(0.0) + (lines - 1.0) * line;
        // The end of the last line: measure it alone.
        let last = last_line(text, area.w, &run);
        let x = (area.x + last).min(area.right() - 2.0 * d);
        let caret = Frame::new(x + d, top + line * 0.1, 2.0 * d, line * 0.8);
        self.fill(rect(caret).map(PathBuilder::from_rect), self.theme.primary);
    }

    fn switch(&mut self, node: &Node, paint: &Paint) {
        let t = *self.theme;
        let d = paint.density;
        let f = paint.frame;
        let (w, h) = ((SWITCH_DP * d).min(f.w), (32.0 * d).min(f.h));
        let x = paint.content.right().min(f.right() - w).max(f.x);
        let track = Frame::new(x, f.y + (f.h - h) / 2.0, w, h);
        let cy = track.y + h / 2.0;
        if node.checked {
            self.fill(
                round_rect(track, h / 2.0),
                if node.enabled { t.primary } else { with_alpha(t.on_surface, 0.12) },
            );
            self.fill(
                circle(track.right() - h / 2.0, cy, 12.0 * d),
                if node.enabled { t.on_primary } else { t.surface },
            );
            self.icon(
                "check",
                centered_square(Frame::new(track.right() - h, track.y, h, h), 16.0 * d),
                t.primary,
            );
        } else {
            self.fill(round_rect(track, h / 2.0), t.surface_container_high);
            self.outline(
                track,
                h / 2.0,
                with_alpha(t.outline, if node.enabled { 1.0 } else { 0.38 }),
                2.0 * d,
            );
            self.fill(
                circle(track.x + h / 2.0, cy, 8.0 * d),
                with_alpha(t.outline, if node.enabled { 1.0 } else { 0.38 }),
            );
        }
    }

    fn check_box(&mut self, node: &Node, paint: &Paint) {
        let t = *self.theme;
        let d = paint.density;
        let f = paint.frame;
        let control = Frame::new(f.x, f.y, (paint.content.x - f.x).max(CHECK_DP * d).min(f.w), f.h);
        let bx = centered_square(control, 18.0 * d);
        let on = if node.enabled { t.primary } else { with_alpha(t.on_surface, 0.38) };
        if node.checked {
            self.fill(round_rect(bx, 2.0 * d), on);
            self.icon("check", bx.inset(-d), t.on_primary);
        } else {
            self.outline(
                bx,
                2.0 * d,
                if node.enabled { t.on_surface_variant } else { with_alpha(t.on_surface, 0.38) },
                2.0 * d,
            );
        }
    }

    fn radio(&mut self, node: &Node, paint: &Paint) {
        let t = *self.theme;
        let d = paint.density;
        let f = paint.frame;
        // The control sits in the room before the text.
        let area = Frame::new((paint.content.x - CHECK_DP * d).max(f.x), f.y, CHECK_DP * d, f.h);
        let (cx, cy) = area.center();
        let ring = if node.checked { t.primary } else { t.on_surface_variant };
        let ring = if node.enabled { ring } else { with_alpha(t.on_surface, 0.38) };
        self.stroke(circle(cx, cy, 9.0 * d), ring, 2.0 * d);
        if node.checked {
            self.fill(circle(cx, cy, 5.0 * d), ring);
        }
    }

    fn seek(&mut self, node: &Node, paint: &Paint) {
        let t = *self.theme;
        let d = paint.density;
        let f = paint.frame;
        let thumb = 10.0 * d;
        let (x0, x1) = (f.x + thumb, f.right() - thumb);
        let cy = f.y + f.h / 2.0;
        let at = x0 + (x1 - x0) * paint.value.clamp(0.0, 1.0);
        let track = 4.0 * d;
        let active = if node.enabled { t.primary } else { with_alpha(t.on_surface, 0.38) };
        self.fill(
            round_rect(Frame::new(x0, cy - track / 2.0, (at - x0).max(0.0), track), track / 2.0),
            active,
        );
        self.fill(
            round_rect(Frame::new(at, cy - track / 2.0, (x1 - at).max(0.0), track), track / 2.0),
            t.secondary_container,
        );
        self.fill(circle(at, cy, thumb), active);
    }

    fn battery(&mut self, node: &Node, paint: &Paint) {
        let t = *self.theme;
        let d = paint.density;
        let f = paint.frame;
        // A horizontal gauge: body, terminal, and the level from the description's percentage.
        let level = node
            .content_desc
            .split(|ch: char| !ch.is_ascii_digit())
            .find_map(|p| p.parse::<u32>().ok())
            .unwrap_or(100)
            .min(100) as f32
            / 100.0;
        let body = Frame::new(f.x + 2.0 * d, f.y + (f.h - 11.0 * d) / 2.0, f.w - 6.0 * d, 11.0 * d);
        self.outline(body, 2.5 * d, t.on_surface, 1.2 * d);
        let tip = Frame::new(body.right() + 0.5 * d, body.y + 3.5 * d, 1.5 * d, 4.0 * d);
        self.fill(round_rect(tip, 0.7 * d), t.on_surface);
        let inner = body.inset(2.2 * d);
        self.fill(round_rect(Frame { w: inner.w * level, ..inner }, 1.0 * d), t.on_surface);
    }

    fn key(&mut self, node: &Node, paint: &Paint, clip: IntRect) {
        let t = *self.theme;
        let d = paint.density;
        let f = paint.frame;
        let cap = Frame::new(f.x + 3.0 * d, f.y + 5.0 * d, f.w - 6.0 * d, f.h - 10.0 * d);
        let label = node.content_desc.as_str();
        let special = match label {
            "Shift" => Some("shift"),
            "Delete" => Some("backspace"),
            "Enter" => Some("keyboard_return"),
            _ => None,
        };
        let fill = match label {
            "Enter" => t.primary_container,
            "Shift" | "Delete" | "," | "." | "?123" | "ABC" => t.surface_container_high,
            _ => t.key,
        };
        self.fill(round_rect(cap, 6.0 * d), fill);
        let on = if label == "Enter" { t.on_primary_container } else { t.on_surface };
        if let Some(icon) = special {
            self.icon(icon, centered_square(cap, 22.0 * d), on);
        } else if label != "Space" && !label.is_empty() {
            // Layer switches (`?123`, `ABC`) and `.com` are words: smaller than a letter.
            let size = if label.chars().count() > 2 { 15.0 } else { 22.0 };
            let look = crate::paint::TextLook {
                size_px: size * d,
                bold: false,
                max_lines: Some(1),
                tone: Tone::Normal,
                align: Align::Center,
            };
            let p = Paint { text: Some(look), ..paint.clone() };
            self.text(label, &p, cap, on, clip, true);
        }
    }
}

/// How `text` is drawn with `look`, in `color`, aligned by `align`.
fn text_run<'a>(text: &'a str, look: &TextLook, color: Rgba, align: Align) -> TextRun<'a> {
    TextRun {
        text,
        style: TextStyle { size_px: look.size_px, bold: look.bold, line_height: LINE_HEIGHT },
        max_lines: look.max_lines,
        color,
        align: match align {
            Align::Start => TextAlign::Start,
            Align::Center => TextAlign::Center,
            Align::End => TextAlign::End,
        },
    }
}

/// The width of the last line of `text` wrapped at `width`.
fn last_line(text: &str, width: f32, run: &TextRun) -> f32 {
    let last = text.rsplit('\n').next().unwrap_or("");
    if last.is_empty() {
        return 0.0;
    }
    let one = TextRun { text: last, max_lines: None, ..*run };
    let size = text_size(&one, width);
    if size.lines <= 1 {
        return size.width;
    }
    // Wrapped: find the shortest suffix that still fits on one line (words, from the end).
    let words: Vec<&str> = last.split(' ').collect();
    let mut best = 0.0;
    for start in (0..words.len()).rev() {
        let tail = words[start..].join(" ");
        let s = text_size(&TextRun { text: &tail, ..one }, width);
        if s.lines > 1 {
            break;
        }
        best = s.width;
    }
    best
}
