//! Layout: views to rectangles, with taffy's flexbox and text measured by `phonebench-text`.
//!
//! Android's LinearLayout maps onto flexbox: orientation is the flex direction, `weight` is
//! flex-grow from a zero basis, and children do not shrink along a vertical axis (a column
//! overflows; its scroll container clips). Scroll containers shrink to fit the space they are
//! given (Android measures them AT_MOST) and lay their children out at full height.

use phonebench_pixels::{CHECK_DP, ICON_WITH_TEXT_DP, LINE_HEIGHT, SWITCH_DP};
use phonebench_text::{TextStyle, measure};
use taffy::prelude::*;

use crate::view::{Align, Axis, Dim, Kind, View};

/// A rectangle in px.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Rect {
    /// Left edge.
    pub x: f32,
    /// Top edge.
    pub y: f32,
    /// Width.
    pub w: f32,
    /// Height.
    pub h: f32,
}

/// A laid-out view tree, flattened in pre-order.
#[derive(Debug)]
pub struct LaidOut<'a> {
    /// The views, pre-order.
    pub views: Vec<&'a View>,
    /// Parent of each view (`None` for the root).
    pub parents: Vec<Option<usize>>,
    /// Absolute rectangle of each view, before any scrolling or clipping.
    pub rects: Vec<Rect>,
    /// For scroll containers: how far the content can scroll (content height − viewport height).
    pub max_scroll: Vec<f32>,
}

/// Text is measured with the line height screenshots draw with (`phonebench_pixels::LINE_HEIGHT`).
fn text_style(view: &View) -> Option<(TextStyle, Option<u32>)> {
    view.look.map(|l| (TextStyle { size_px: l.size_px, bold: l.bold, line_height: LINE_HEIGHT }, l.max_lines))
}

/// The string a view's size follows (a text field's hint while it is empty).
fn measured_text(view: &View) -> &str {
    match (view.kind, view.text.is_empty(), &view.hint) {
        (Kind::Edit, true, Some(hint)) => hint,
        _ => &view.text,
    }
}

/// Room taken by the control drawn beside a toggle's or radio button's text.
fn control_width(view: &View, density: f32) -> f32 {
    match (view.kind, view.class.ends_with("Switch")) {
        (Kind::Toggle, true) => SWITCH_DP * density,
        (Kind::Toggle | Kind::Radio, _) => CHECK_DP * density,
        // A text view with an icon (an extended FAB, a button with an icon): the screenshot draws
        // a 24 dp icon and an 8 dp gap before the text.
        (Kind::Text, _) if view.icon.is_some() && !view.text.is_empty() => ICON_WITH_TEXT_DP * density,
        _ => 0.0,
    }
}

fn dimension(d: Dim) -> Dimension {
    match d {
        Dim::Wrap => Dimension::auto(),
        Dim::Match => Dimension::percent(1.0),
        Dim::Px(px) => Dimension::length(px),
        Dim::Fraction(f) => Dimension::percent(f),
    }
}

fn align_items(a: Align) -> AlignItems {
    match a {
        Align::Start => AlignItems::FLEX_START,
        Align::Center => AlignItems::CENTER,
        Align::End => AlignItems::FLEX_END,
        Align::Stretch => AlignItems::STRETCH,
    }
}

fn justify(a: Align) -> JustifyContent {
    match a {
        Align::Start => JustifyContent::FLEX_START,
        Align::Center => JustifyContent::CENTER,
        Align::End => JustifyContent::FLEX_END,
        Align::Stretch => JustifyContent::SPACE_BETWEEN,
    }
}

fn lp(px: f32) -> LengthPercentage {
    LengthPercentage::length(px)
}

fn style_of(view: &View, parent: Option<&View>, stacked: bool) -> Style {
    let s = &view.style;
    let mut style = Style {
        display: Display::Flex,
        flex_direction: match s.axis {
            Axis::Horizontal => FlexDirection::Row,
            Axis::Vertical | Axis::Stack => FlexDirection::Column,
        },
        size: Size { width: dimension(s.width), height: dimension(s.height) },
        padding: taffy::Rect {
            left: lp(s.padding.left),
            right: lp(s.padding.right),
            top: lp(s.padding.top),
            bottom: lp(s.padding.bottom),
        },
        margin: taffy::Rect {
            left: LengthPercentageAuto::length(s.margin.left),
            right: LengthPercentageAuto::length(s.margin.right),
            top: LengthPercentageAuto::length(s.margin.top),
            bottom: LengthPercentageAuto::length(s.margin.bottom),
        },
        align_items: align_items(s.align),
        justify_content: justify(s.justify),
        gap: match s.axis {
            Axis::Horizontal => Size { width: lp(s.gap), height: lp(0.0) },
            _ => Size { width: lp(0.0), height: lp(s.gap) },
        },
        flex_grow: s.weight,
        ..Style::default()
    };
    if s.min_height > 0.0 {
        style.min_size.height = LengthPercentageAuto::length(s.min_height);
    }
    if s.weight > 0.0 {
        // Android measures weighted children from zero and never lets content push siblings out.
        style.flex_basis = Dimension::length(0.0);
        match parent.map(|p| p.style.axis) {
            Some(Axis::Horizontal) => style.min_size.width = LengthPercentageAuto::length(0.0),
            _ if s.min_height == 0.0 => style.min_size.height = LengthPercentageAuto::length(0.0),
            _ => {}
        }
    }
    let parent_axis = parent.map(|p| p.style.axis);
    // `match` across the parent's axis is a stretch, so margins are kept inside the parent
    // (a percentage of 100% plus a margin would overflow it).
    match parent_axis {
        Some(Axis::Vertical) if s.width == Dim::Match => {
            style.size.width = Dimension::auto();
            style.align_self = Some(AlignItems::STRETCH);
        }
        Some(Axis::Horizontal) if s.height == Dim::Match => {
            style.size.height = Dimension::auto();
            style.align_self = Some(AlignItems::STRETCH);
        }
        _ => {}
    }
    let parent_scrolls = parent.is_some_and(|p| p.kind == Kind::Scroll);
    style.flex_shrink = if parent_scrolls {
        0.0
    } else if view.kind == Kind::Scroll || s.weight > 0.0 || parent_axis == Some(Axis::Horizontal) {
        1.0
    } else {
        0.0
    };
    if view.kind == Kind::Scroll {
        style.overflow = taffy::Point { x: taffy::Overflow::Visible, y: taffy::Overflow::Scroll };
        style.scrollbar_width = 0.0;
        style.min_size.height = LengthPercentageAuto::length(0.0);
    }
    if parent_axis == Some(Axis::Horizontal) && view.shows_text() {
        // Text in a row may wrap instead of pushing its siblings off screen.
        style.min_size.width = LengthPercentageAuto::length(0.0);
    }
    if stacked {
        style.position = Position::Absolute;
    }
    style
}

/// A text view's size for the space layout offers it.
fn measure_view(
    view: &View,
    density: f32,
    known: Size<Option<f32>>,
    available: Size<AvailableSpace>,
) -> Size<f32> {
    let extra = control_width(view, density);
    let max_width = known.width.or(match available.width {
        AvailableSpace::Definite(w) => Some(w),
        _ => None,
    });
    let size = match text_style(view) {
        Some((style, lines)) => {
            let text = measured_text(view);
            if text.is_empty() && extra > 0.0 {
                phonebench_text::TextSize { width: 0.0, height: 0.0, lines: 0 }
            } else {
                // A text field grows to four lines, as a multi-line EditText does by default.
                let lines = if view.kind == Kind::Edit {
                    lines.or(Some(if view.password { 1 } else { 4 }))
                } else {
                    lines
                };
                measure(text, &style, max_width.map(|w| (w - extra).max(1.0)), lines)
            }
        }
        None => phonebench_text::TextSize { width: 0.0, height: 0.0, lines: 0 },
    };
    let width = size.width.ceil() + extra;
    let height = if extra > 0.0 { size.height.ceil().max(32.0 * density) } else { size.height.ceil() };
    Size { width: known.width.unwrap_or(width), height: known.height.unwrap_or(height) }
}

/// Lays `root` out in `area` (the window's content rectangle). With `fill`, the root takes the
/// whole area (an app's screen); without, it takes its own size within it (a dialog).
pub fn layout(root: &View, area: Rect, fill: bool, density: f32) -> Result<LaidOut<'_>, String> {
    layout_kept(root, area, fill, density, None).map(|(laid, _)| laid)
}

/// A handle on a screen's taffy tree kept after its layout, so that the next layout of the
/// same screen recomputes only what changed: taffy keeps every node's results until the node (or
/// one below it) is marked dirty, and the results it keeps are the ones it would compute again,
/// so a kept layout gives the same rectangles as a fresh one.
///
/// The tree itself stays in the thread that made it (`KEPT_PER_THREAD` at most, the oldest
/// forgotten first): taffy's `Style` holds a tagged pointer (`CompactLength`) and is not `Send`,
/// while a phone moves between threads. A handle used on another thread, or after its tree was
/// forgotten, finds nothing, and the layout is made afresh.
#[derive(Debug, Clone)]
pub struct KeptLayout {
    token: u64,
}

/// A kept taffy tree (see [`KeptLayout`]).
struct KeptTree {
    tree: TaffyTree<usize>,
    /// The node of each view, in the pre-order of the view tree the layout was made for.
    ids: Vec<NodeId>,
    density: f32,
}

/// Kept trees per thread: enough for the screens of the phones one thread steps in turn.
const KEPT_PER_THREAD: usize = 64;

static NEXT_KEPT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

thread_local! {
    static KEPT: std::cell::RefCell<std::collections::VecDeque<(u64, KeptTree)>> =
        const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
}

impl KeptLayout {
    /// A handle to no kept tree (tokens count up from 1 and never reach it): a layout given it
    /// starts afresh.
    pub fn none() -> KeptLayout {
        KeptLayout { token: u64::MAX }
    }
}

/// Takes the tree `handle` names out of this thread's store, if it is there.
fn take_kept(handle: &KeptLayout) -> Option<KeptTree> {
    KEPT.with(|kept| {
        let mut kept = kept.try_borrow_mut().ok()?;
        let at = kept.iter().position(|(token, _)| *token == handle.token)?;
        kept.remove(at).map(|(_, tree)| tree)
    })
}

/// Keeps `tree` in this thread's store and returns its handle.
fn keep(tree: KeptTree) -> KeptLayout {
    let token = NEXT_KEPT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    KEPT.with(|kept| {
        if let Ok(mut kept) = kept.try_borrow_mut() {
            while kept.len() >= KEPT_PER_THREAD {
                kept.pop_front();
            }
            kept.push_back((token, tree));
        }
    });
    KeptLayout { token }
}

/// A view tree flattened in pre-order: each view's parent, whether it is a stacked
/// (FrameLayout overlay) child, and its children.
struct Flat<'a> {
    views: Vec<&'a View>,
    parents: Vec<Option<usize>>,
    stacked: Vec<bool>,
    children: Vec<Vec<usize>>,
    /// Views in each one's subtree, itself included (a subtree is a contiguous range).
    sizes: Vec<usize>,
}

fn flatten(root: &View) -> Flat<'_> {
    let mut views: Vec<&View> = Vec::new();
    let mut parents: Vec<Option<usize>> = Vec::new();
    let mut stacked: Vec<bool> = Vec::new();
    let mut stack: Vec<(&View, Option<usize>, bool)> = vec![(root, None, false)];
    while let Some((view, parent, is_stacked)) = stack.pop() {
        let index = views.len();
        views.push(view);
        parents.push(parent);
        stacked.push(is_stacked);
        let stack_children = view.style.axis == Axis::Stack;
        for (i, child) in view.children.iter().enumerate().rev() {
            stack.push((child, Some(index), stack_children && i > 0));
        }
    }
    let mut children = vec![Vec::new(); views.len()];
    for (i, parent) in parents.iter().enumerate() {
        if let Some(p) = parent {
            children[*p].push(i);
        }
    }
    let mut sizes = vec![1usize; views.len()];
    for i in (1..views.len()).rev() {
        if let Some(p) = parents[i] {
            sizes[p] += sizes[i];
        }
    }
    Flat { views, parents, stacked, children, sizes }
}

/// Whether taffy measures the view (text, or a control beside its text).
fn measured(view: &View) -> bool {
    view.shows_text() || matches!(view.kind, Kind::Toggle | Kind::Radio)
}

/// Whether two views measure alike: everything [`measure_view`] reads.
fn same_measure(a: &View, b: &View) -> bool {
    a.kind == b.kind
        && a.look == b.look
        && a.text == b.text
        && a.hint == b.hint
        && a.password == b.password
        && a.icon.is_some() == b.icon.is_some()
        && a.class.ends_with("Switch") == b.class.ends_with("Switch")
}

/// The style of view `i` of `flat`; the root's is sized by the area.
fn node_style(flat: &Flat<'_>, i: usize, area: Rect, fill: bool) -> Style {
    let parent = flat.parents[i].map(|p| flat.views[p]);
    let mut style = style_of(flat.views[i], parent, flat.stacked[i]);
    if i == 0 {
        if fill {
            style.size = Size { width: Dimension::length(area.w), height: Dimension::length(area.h) };
        } else {
            style.max_size = Size {
                width: LengthPercentageAuto::length(area.w),
                height: LengthPercentageAuto::length(area.h),
            };
        }
    }
    style
}

/// Adds the subtree of view `top` of `flat` to `tree` as new nodes, filling `ids` for it.
fn build_subtree(
    tree: &mut TaffyTree<usize>,
    flat: &Flat<'_>,
    top: usize,
    area: Rect,
    fill: bool,
    ids: &mut [Option<NodeId>],
) -> Result<NodeId, String> {
    let err = |e: taffy::TaffyError| format!("layout: {e}");
    for i in top..top + flat.sizes[top] {
        let style = node_style(flat, i, area, fill);
        let id =
            if measured(flat.views[i]) { tree.new_leaf_with_context(style, i) } else { tree.new_leaf(style) }
                .map_err(err)?;
        ids[i] = Some(id);
        if i != top
            && let Some(parent) = flat.parents[i].and_then(|p| ids[p])
        {
            tree.add_child(parent, id).map_err(err)?;
        }
    }
    ids[top].ok_or_else(|| "layout: a subtree without a root".to_string())
}

/// Brings a kept tree made for `old` up to date with `new`: views are paired by position (the
/// root with the root, then the children of a pair in order); a pair whose style or measured
/// content differs is marked dirty, children beyond the shorter list are removed or added.
fn update_kept(
    tree: &mut TaffyTree<usize>,
    old: &Flat<'_>,
    old_ids: &[NodeId],
    new: &Flat<'_>,
    area: Rect,
    fill: bool,
) -> Result<Vec<NodeId>, String> {
    let err = |e: taffy::TaffyError| format!("layout: {e}");
    let mut ids: Vec<Option<NodeId>> = vec![None; new.views.len()];
    let mut pairs = vec![(0usize, 0usize)];
    while let Some((n, o)) = pairs.pop() {
        let id = old_ids[o];
        ids[n] = Some(id);
        let style = node_style(new, n, area, fill);
        if *tree.style(id).map_err(err)? != style {
            tree.set_style(id, style).map_err(err)?;
        }
        let (view, was) = (new.views[n], old.views[o]);
        if measured(view) != tree.get_node_context(id).is_some() {
            tree.set_node_context(id, measured(view).then_some(n)).map_err(err)?;
        } else if let Some(context) = tree.get_node_context_mut(id) {
            *context = n;
            if !same_measure(view, was) {
                tree.mark_dirty(id).map_err(err)?;
            }
        }
        let (nc, oc) = (&new.children[n], &old.children[o]);
        let common = nc.len().min(oc.len());
        for j in 0..common {
            pairs.push((nc[j], oc[j]));
        }
        for &gone in &oc[common..] {
            // The subtree's top first (it leaves its parent, which is marked dirty), then the rest.
            for &node in &old_ids[gone..gone + old.sizes[gone]] {
                tree.remove(node).map_err(err)?;
            }
        }
        for &added in &nc[common..] {
            let child = build_subtree(tree, new, added, area, fill, &mut ids)?;
            tree.add_child(id, child).map_err(err)?;
        }
    }
    ids.into_iter().map(|id| id.ok_or_else(|| "layout: a view without a node".to_string())).collect()
}

/// [`layout`], keeping the taffy tree: with `previous` (the view tree an earlier layout of the
/// same screen was made for, and what it kept), only the nodes that differ are laid out anew.
pub fn layout_kept<'a>(
    root: &'a View,
    area: Rect,
    fill: bool,
    density: f32,
    previous: Option<(&View, KeptLayout)>,
) -> Result<(LaidOut<'a>, KeptLayout), String> {
    let err = |e: taffy::TaffyError| format!("layout: {e}");
    let flat = flatten(root);
    let kept = previous.and_then(|(old_root, handle)| Some((old_root, take_kept(&handle)?)));
    let (mut tree, ids) = match kept {
        Some((old_root, kept)) if kept.density == density => {
            let old = flatten(old_root);
            if old.views.len() == kept.ids.len() {
                let mut tree = kept.tree;
                let ids = update_kept(&mut tree, &old, &kept.ids, &flat, area, fill)?;
                (tree, ids)
            } else {
                fresh_tree(&flat, area, fill)?
            }
        }
        _ => fresh_tree(&flat, area, fill)?,
    };
    let Flat { views, parents, stacked, .. } = flat;
    let root_id = ids[0];
    let available =
        Size { width: AvailableSpace::Definite(area.w), height: AvailableSpace::Definite(area.h) };
    tree.compute_layout_with_measure(root_id, available, |inputs, _node, context, style| {
        let index = context.map(|c| *c);
        taffy::compute_leaf_layout(
            inputs,
            style,
            |_, _| 0.0,
            |known, available| match index {
                Some(index) => measure_view(views[index], density, known, available),
                None => Size::ZERO,
            },
        )
    })
    .map_err(err)?;

    let mut rects = vec![Rect::default(); views.len()];
    let mut max_scroll = vec![0.0f32; views.len()];
    for i in 0..views.len() {
        let l = tree.layout(ids[i]).map_err(err)?;
        let (px, py) = match parents[i] {
            Some(p) => (rects[p].x, rects[p].y),
            None => (area.x, area.y),
        };
        let mut rect = Rect { x: px + l.location.x, y: py + l.location.y, w: l.size.width, h: l.size.height };
        if stacked[i]
            && let Some(p) = parents[i]
        {
            // FrameLayout gravity: place the overlay child against the parent's padding box.
            let parent = views[p];
            let pr = rects[p];
            let pad = parent.style.padding;
            let m = views[i].style.margin;
            let (gh, gv) = views[i].style.gravity;
            rect.x = match gh {
                Align::End => pr.x + pr.w - pad.right - m.right - rect.w,
                Align::Center => pr.x + (pr.w - rect.w) / 2.0,
                _ => pr.x + pad.left + m.left,
            };
            rect.y = match gv {
                Align::End => pr.y + pr.h - pad.bottom - m.bottom - rect.h,
                Align::Center => pr.y + (pr.h - rect.h) / 2.0,
                _ => pr.y + pad.top + m.top,
            };
        }
        rects[i] = rect;
        if views[i].kind == Kind::Scroll {
            // Content height: the lowest child edge plus the container's bottom padding.
            let mut content = 0.0f32;
            for child in tree.children(ids[i]).map_err(err)? {
                let c = tree.layout(child).map_err(err)?;
                content = content.max(c.location.y + c.size.height + c.margin.bottom);
            }
            content += l.padding.bottom;
            max_scroll[i] = (content - l.size.height).max(0.0).round();
        }
    }
    Ok((LaidOut { views, parents, rects, max_scroll }, keep(KeptTree { tree, ids, density })))
}

/// A new taffy tree for `flat`.
fn fresh_tree(flat: &Flat<'_>, area: Rect, fill: bool) -> Result<(TaffyTree<usize>, Vec<NodeId>), String> {
    let mut tree: TaffyTree<usize> = TaffyTree::with_capacity(flat.views.len());
    let mut ids = vec![None; flat.views.len()];
    build_subtree(&mut tree, flat, 0, area, fill, &mut ids)?;
    let ids: Result<Vec<NodeId>, String> =
        ids.into_iter().map(|id| id.ok_or_else(|| "layout: a view without a node".to_string())).collect();
    Ok((tree, ids?))
}

/// The owned part of a layout (everything but the view references), kept between renders of a
/// screen whose content did not change.
#[derive(Debug, Clone)]
pub struct Boxes {
    parents: Vec<Option<usize>>,
    rects: Vec<Rect>,
    max_scroll: Vec<f32>,
}

impl<'a> LaidOut<'a> {
    /// The owned part, to keep.
    pub fn boxes(&self) -> Boxes {
        Boxes {
            parents: self.parents.clone(),
            rects: self.rects.clone(),
            max_scroll: self.max_scroll.clone(),
        }
    }

    /// A layout made earlier for `root` (the same view tree) from its kept boxes.
    pub fn from_boxes(root: &'a View, boxes: &Boxes) -> LaidOut<'a> {
        let mut views = Vec::with_capacity(boxes.rects.len());
        let mut stack = vec![root];
        while let Some(view) = stack.pop() {
            views.push(view);
            stack.extend(view.children.iter().rev());
        }
        LaidOut {
            views,
            parents: boxes.parents.clone(),
            rects: boxes.rects.clone(),
            max_scroll: boxes.max_scroll.clone(),
        }
    }
}

impl LaidOut<'_> {
    /// Moves every rectangle by `(dx, dy)` (to centre a dialog, anchor a menu).
    pub fn translate(&mut self, dx: f32, dy: f32) {
        for r in &mut self.rects {
            r.x += dx;
            r.y += dy;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markup::parse_layout;

    const D: f32 = 2.625;

    fn dp(v: f32) -> f32 {
        v * D
    }

    fn lay(xml: &str) -> (View, Vec<Rect>, Vec<f32>) {
        let view = parse_layout(xml, "p", D).unwrap();
        let out = layout(&view, Rect { x: 0.0, y: 84.0, w: 1080.0, h: 2190.0 }, true, D).unwrap();
        let rects = out.rects.clone();
        let max = out.max_scroll.clone();
        (view, rects, max)
    }

    /// A screen of `rows` list rows; `seed` varies texts (some long enough to wrap), sizes,
    /// weights, kinds and the children of each row.
    fn variant(rows: usize, seed: usize) -> String {
        let mut xml = String::from(
            "<LinearLayout><Toolbar><TextView text=\"Inbox\" size=\"20\"/></Toolbar><RecyclerView>",
        );
        for r in 0..rows {
            let k = (r * 7 + seed * 13) % 11;
            let text =
                if k == 3 { "long words ".repeat(12 + seed % 5) } else { format!("Row {r} v{}", seed % 3) };
            let star =
                if k.is_multiple_of(2) { "<ImageButton icon=\"star\"/>" } else { "<Switch text=\"On\"/>" };
            let extra = if k == 5 { "<TextView text=\"Has attachment\" size=\"12\"/>" } else { "" };
            let height = if k == 7 { " height=\"96\"" } else { "" };
            xml.push_str(&format!(
                "<LinearLayout orientation=\"horizontal\" padding=\"10 16\" gap=\"{}\"{height}><TextView text=\"{text}\" weight=\"1\" lines=\"{}\"/>{extra}{star}</LinearLayout>",
                8 + k % 3,
                1 + k % 3
            ));
        }
        xml.push_str(
            "</RecyclerView><EditText id=\"f\" hint=\"Search\"/><Button text=\"OK\"/></LinearLayout>",
        );
        xml
    }

    #[test]
    fn a_kept_layout_gives_the_rectangles_a_fresh_one_does() {
        let area = Rect { x: 0.0, y: 84.0, w: 1080.0, h: 2190.0 };
        let mut previous: Option<(View, KeptLayout)> = None;
        // Rows change, appear and go; texts wrap and stop wrapping; the area shrinks (a keyboard).
        let steps = [(30, 0), (30, 1), (30, 1), (28, 2), (33, 3), (0, 4), (12, 5), (12, 6), (40, 7), (40, 8)];
        for (n, (rows, seed)) in steps.into_iter().enumerate() {
            let view = parse_layout(&variant(rows, seed), "p", D).unwrap();
            let area = if n % 3 == 2 { Rect { h: 1300.0, ..area } } else { area };
            let fresh = layout(&view, area, true, D).unwrap();
            let (expected, expected_scroll) = (fresh.rects.clone(), fresh.max_scroll.clone());
            let kept_input = previous.take();
            let (laid, kept) =
                layout_kept(&view, area, true, D, kept_input.as_ref().map(|(v, k)| (v, k.clone()))).unwrap();
            assert_eq!(laid.rects, expected, "step {n}: rows {rows}, seed {seed}");
            assert_eq!(laid.max_scroll, expected_scroll, "step {n}");
            assert_eq!(laid.parents, fresh.parents, "step {n}");
            drop(laid);
            previous = Some((view, kept));
        }
    }

    #[test]
    fn a_kept_layout_measures_again_the_text_that_changed() {
        let area = Rect { x: 0.0, y: 84.0, w: 1080.0, h: 2190.0 };
        let screen = |long_row: Option<usize>| {
            let rows: String = (0..20)
                .map(|r| {
                    let text = if Some(r) == long_row { "wrapping words ".repeat(10) } else { format!("Row {r}") };
                    format!("<LinearLayout orientation=\"horizontal\"><TextView text=\"{text}\" weight=\"1\"/><ImageButton icon=\"star\"/></LinearLayout>")
                })
                .collect();
            parse_layout(&format!("<LinearLayout><RecyclerView>{rows}</RecyclerView></LinearLayout>"), "p", D)
                .unwrap()
        };
        let mut previous: Option<(View, KeptLayout)> = None;
        for long_row in [None, Some(5), Some(5), Some(6), None] {
            let view = screen(long_row);
            let fresh = layout(&view, area, true, D).unwrap().rects;
            let (laid, kept) =
                layout_kept(&view, area, true, D, previous.as_ref().map(|(v, k)| (v, k.clone()))).unwrap();
            assert_eq!(laid.rects, fresh, "long row {long_row:?}");
            drop(laid);
            previous = Some((view, kept));
        }
    }

    #[test]
    fn toolbar_list_and_weight() {
        let mut rows = String::new();
        for i in 0..40 {
            rows.push_str(&format!("<TextView text=\"Row {i}\" height=\"72\"/>"));
        }
        let (_, rects, max) = lay(&format!(
            "<LinearLayout><Toolbar><TextView text=\"Title\" size=\"20\"/></Toolbar><RecyclerView>{rows}</RecyclerView><Button text=\"OK\"/></LinearLayout>"
        ));
        // Toolbar: 56 dp at the top of the area.
        assert_eq!(rects[1], Rect { x: 0.0, y: 84.0, w: 1080.0, h: 147.0 });
        // The list fills what the toolbar and the button leave; its rows keep their height.
        let list = rects[3];
        let button = *rects.last().unwrap();
        assert_eq!(list.y, 84.0 + 147.0);
        assert_eq!(list.y + list.h, button.y);
        assert_eq!(button.y + button.h, 84.0 + 2190.0);
        assert_eq!(rects[4].h, 189.0);
        assert_eq!(max[3], 40.0 * 189.0 - list.h);
    }

    #[test]
    fn text_wraps_in_rows_and_grows_the_row() {
        let long = "word ".repeat(60);
        let (_, rects, _) = lay(&format!(
            "<LinearLayout><LinearLayout orientation=\"horizontal\"><ImageView/><TextView text=\"{long}\" weight=\"1\"/></LinearLayout></LinearLayout>"
        ));
        let text = rects[3];
        assert!(text.x >= dp(40.0) - 1.0);
        assert!(text.x + text.w <= 1080.0 + 0.5, "{text:?}");
        assert!(text.h > 3.0 * 42.0, "wrapped text is several lines high: {text:?}");
        assert_eq!(rects[1].h, text.h);
    }

    #[test]
    fn weighted_text_in_a_row_leaves_room_for_its_siblings() {
        let long = "x".repeat(300);
        let (_, rects, _) = lay(&format!(
            "<LinearLayout><LinearLayout orientation=\"horizontal\"><TextView text=\"{long}\" lines=\"1\" weight=\"1\"/><TextView text=\"9:41\"/></LinearLayout></LinearLayout>"
        ));
        let time = rects[3];
        assert!(time.w > 0.0 && time.x + time.w <= 1080.0 + 0.5, "{time:?}");
    }

    #[test]
    fn match_width_keeps_margins_inside_the_parent() {
        let (_, rects, _) =
            lay("<LinearLayout><TextView text=\"a\" width=\"match\" margin=\"0 16\"/></LinearLayout>");
        assert_eq!(rects[1].x, dp(16.0).round());
        assert_eq!(rects[1].x + rects[1].w, 1080.0 - dp(16.0).round());
    }

    #[test]
    fn frame_layout_places_overlays_by_gravity() {
        let (_, rects, _) = lay(
            "<FrameLayout width=\"match\" height=\"match\"><LinearLayout height=\"match\"/><ImageButton gravity=\"bottom|end\" margin=\"16\"/></FrameLayout>",
        );
        let fab = rects[2];
        assert_eq!(fab.x + fab.w, 1080.0 - dp(16.0));
        assert_eq!(fab.y + fab.h, 84.0 + 2190.0 - dp(16.0));
    }
}
