//! Layout XML (what a screen template renders) to [`View`]s.
//!
//! Every attribute is checked: an unknown one, or a value of the wrong shape, is an error naming
//! the element and its line in the rendered output, because a silently ignored typo in a layout
//! would change what agents see.

use std::collections::BTreeMap;

use phonebench_pixels::{Role, Tone};

use crate::view::{Align, Axis, Dim, Edges, Handler, Kind, Pager, TextLook, View};

/// Tag → (Android class, kind, axis for containers).
const TAGS: &[(&str, &str, Kind, Axis)] = &[
    ("LinearLayout", "android.widget.LinearLayout", Kind::Group, Axis::Vertical),
    ("FrameLayout", "android.widget.FrameLayout", Kind::Group, Axis::Stack),
    ("ViewGroup", "android.view.ViewGroup", Kind::Group, Axis::Vertical),
    ("Toolbar", "androidx.appcompat.widget.Toolbar", Kind::Group, Axis::Horizontal),
    ("ScrollView", "android.widget.ScrollView", Kind::Scroll, Axis::Vertical),
    ("RecyclerView", "androidx.recyclerview.widget.RecyclerView", Kind::Scroll, Axis::Vertical),
    ("TextView", "android.widget.TextView", Kind::Text, Axis::Vertical),
    ("Button", "android.widget.Button", Kind::Text, Axis::Vertical),
    ("ImageButton", "android.widget.ImageButton", Kind::Image, Axis::Vertical),
    ("ImageView", "android.widget.ImageView", Kind::Image, Axis::Vertical),
    ("EditText", "android.widget.EditText", Kind::Edit, Axis::Vertical),
    ("Switch", "android.widget.Switch", Kind::Toggle, Axis::Vertical),
    ("CheckBox", "android.widget.CheckBox", Kind::Toggle, Axis::Vertical),
    ("RadioButton", "android.widget.RadioButton", Kind::Radio, Axis::Vertical),
    ("SeekBar", "android.widget.SeekBar", Kind::Seek, Axis::Vertical),
    ("View", "android.view.View", Kind::Group, Axis::Vertical),
    ("Gap", "android.view.View", Kind::Group, Axis::Vertical),
    // Pages side by side, one shown at a time (`page` the first shown); swiping turns pages.
    ("ViewPager", "androidx.viewpager2.widget.ViewPager2", Kind::Group, Axis::Stack),
];

/// Why rendered layout XML is not a valid layout: what is wrong, and the line of the rendered
/// output it is on (when known), so the caller can quote that line and find the template's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct LayoutError {
    /// 1-based line of the rendered output.
    pub line: Option<usize>,
    /// What is wrong there.
    pub message: String,
}

impl LayoutError {
    fn at(line: usize, message: String) -> LayoutError {
        LayoutError { line: Some(line), message }
    }

    fn whole(message: &str) -> LayoutError {
        LayoutError { line: None, message: message.to_string() }
    }
}

/// The deepest a screen's layout may nest. Real screens are under 30 deep; layout and drawing
/// walk the view tree recursively, and this keeps them well inside a 2 MiB thread stack.
pub const MAX_LAYOUT_DEPTH: usize = 64;

/// The most views one screen's layout may hold (a list is capped at 10,000 rows by the SQL
/// sandbox; this bounds what a template can emit without queries).
pub const MAX_LAYOUT_VIEWS: usize = 20_000;

/// Parses rendered layout XML into a view tree. `package` prefixes plain ids; `density` (px per
/// dp) turns the layout's dp into the px the views hold.
///
/// A layout deeper than [`MAX_LAYOUT_DEPTH`] or with more than [`MAX_LAYOUT_VIEWS`] views is an
/// error, found before anything recursive runs.
pub fn parse_layout(xml: &str, package: &str, density: f32) -> Result<View, LayoutError> {
    parse_layout_in(xml, package, density, &BTreeMap::new())
}

/// [`parse_layout`] for a package whose `assets/` pictures (file name → key) `src="asset:NAME"`
/// and `icon="asset:NAME"` may name.
pub fn parse_layout_in(
    xml: &str,
    package: &str,
    density: f32,
    assets: &BTreeMap<String, String>,
) -> Result<View, LayoutError> {
    parse_layout_ranged(xml, package, density, assets).map(|parsed| parsed.root)
}

/// A parsed layout and where each view's element lies in the markup: `ranges[i]` is the byte
/// range of the i-th view in pre-order.
#[derive(Debug, Clone)]
pub struct ParsedLayout {
    /// The view tree.
    pub root: View,
    /// Byte range of each view's element, in pre-order.
    pub ranges: Vec<std::ops::Range<usize>>,
}

/// [`parse_layout_in`], keeping where each view came from (for [`reparse_changed`]).
pub fn parse_layout_ranged(
    xml: &str,
    package: &str,
    density: f32,
    assets: &BTreeMap<String, String>,
) -> Result<ParsedLayout, LayoutError> {
    let mut ranges = Vec::new();
    // Elements, their text and attributes are nodes: the parse stops at a few per allowed view.
    let options = roxmltree::ParsingOptions {
        allow_dtd: false,
        nodes_limit: u32::try_from(MAX_LAYOUT_VIEWS * 8).unwrap_or(u32::MAX),
        ..roxmltree::ParsingOptions::default()
    };
    let doc = roxmltree::Document::parse_with_options(xml, options).map_err(|e| {
        if matches!(e, roxmltree::Error::NodesLimitReached) {
            return LayoutError::whole(&format!(
                "the layout has more than {MAX_LAYOUT_VIEWS} views (the limit per screen)"
            ));
        }
        // roxmltree's message already ends with the position ("at 3:7").
        LayoutError::at(e.pos().row as usize, format!("the rendered layout is not XML: {e}"))
    })?;
    let root = doc.root_element();
    // Each entry: a node and, once it is open, the next child element to visit (`Some(None)`:
    // none left, close it).
    let mut stack: Vec<(roxmltree::Node, Option<Option<roxmltree::Node>>)> = Vec::new();
    // Iterative build (templates can nest deeply): `built` collects finished views per depth.
    let mut built: Vec<Vec<View>> = vec![Vec::new()];
    let mut pending: Vec<View> = Vec::new();
    let mut views = 0usize;
    stack.push((root, None));
    while let Some((node, state)) = stack.pop() {
        let next_child = match state {
            Some(next) => next,
            None => {
                views += 1;
                if views > MAX_LAYOUT_VIEWS {
                    return Err(LayoutError::whole(&format!(
                        "the layout has more than {MAX_LAYOUT_VIEWS} views (the limit per screen)"
                    )));
                }
                if pending.len() >= MAX_LAYOUT_DEPTH {
                    return Err(LayoutError::at(
                        doc.text_pos_at(node.range().start).row as usize,
                        format!("the layout nests deeper than {MAX_LAYOUT_DEPTH} views (the limit)"),
                    ));
                }
                let view = element(&doc, node, package, density, assets)?;
                ranges.push(node.range());
                pending.push(view);
                built.push(Vec::new());
                node.children().find(|c| c.is_element())
            }
        };
        if let Some(child) = next_child {
            // Walking siblings, not re-listing the children at every visit, keeps a wide
            // layout linear.
            stack.push((node, Some(child.next_siblings().skip(1).find(|c| c.is_element()))));
            stack.push((child, None));
        } else {
            let children = built.pop().unwrap_or_default();
            let mut view = pending.pop().ok_or(LayoutError::whole("layout nesting is inconsistent"))?;
            if !children.is_empty() && (!matches!(view.kind, Kind::Group | Kind::Scroll) || view.placeholder)
            {
                return Err(LayoutError::at(
                    doc.text_pos_at(node.range().start).row as usize,
                    format!("<{}> cannot have child elements", node.tag_name().name()),
                ));
            }
            view.children = children;
            match built.last_mut() {
                Some(level) => level.push(view),
                None => return Err(LayoutError::whole("layout nesting is inconsistent")),
            }
        }
    }
    let root =
        built.pop().and_then(|mut v| v.pop()).ok_or_else(|| LayoutError::whole("the layout is empty"))?;
    Ok(ParsedLayout { root, ranges })
}

/// The layout `new_xml` parses to, made from `old` (what `old_xml` parsed to) by parsing again
/// only the innermost element that holds every byte where the two texts differ: an element's
/// views depend on its own markup alone, so the rest is the same. `None` when that element is
/// the root, or when the fragment does not parse or breaks a limit: then a full parse says
/// what is wrong, with the right line.
pub fn reparse_changed(
    old_xml: &str,
    old: ParsedLayout,
    new_xml: &str,
    package: &str,
    density: f32,
    assets: &BTreeMap<String, String>,
) -> Option<ParsedLayout> {
    let (a, b) = (old_xml.as_bytes(), new_xml.as_bytes());
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let room = a.len().min(b.len()) - prefix;
    let suffix = a.iter().rev().zip(b.iter().rev()).take(room).take_while(|(x, y)| x == y).count();
    // The bytes that differ: `old_xml[prefix..old_end]` became `new_xml[prefix..new_end]`.
    let old_end = a.len() - suffix;
    let delta = b.len() as isize - a.len() as isize;
    let shift = |at: usize| usize::try_from(at as isize + delta).ok();
    // The innermost element whose first and last bytes are both outside the change.
    let target = old.ranges.iter().rposition(|r| r.start < prefix && old_end < r.end)?;
    if target == 0 {
        return None;
    }
    let sizes = subtree_sizes(&old.ranges);
    let range = old.ranges[target].clone();
    let fragment = new_xml.get(range.start..shift(range.end)?)?;
    let parsed = parse_layout_ranged(fragment, package, density, assets).ok()?;
    // Where the element sits: the path of child positions from the root, and its ancestors.
    let mut path = Vec::new();
    let mut ancestors = vec![0usize];
    let mut at = 0usize;
    while at != target {
        let mut child = at + 1;
        let mut position = 0usize;
        while target >= child + sizes[child] {
            child += sizes[child];
            position += 1;
        }
        path.push(position);
        at = child;
        if at != target {
            ancestors.push(at);
        }
    }
    let views = old.ranges.len() - sizes[target] + parsed.ranges.len();
    if views > MAX_LAYOUT_VIEWS || path.len() + depth(&parsed.ranges) > MAX_LAYOUT_DEPTH {
        return None;
    }
    // Taken, not copied: the old layout is the caller's to give up (a render keeps only the new).
    let ParsedLayout { mut root, ranges: old_ranges } = old;
    let mut slot = &mut root;
    for position in path {
        slot = slot.children.get_mut(position)?;
    }
    *slot = parsed.root;
    let mut ranges = Vec::with_capacity(views);
    for (i, r) in old_ranges[..target].iter().enumerate() {
        let end = if ancestors.contains(&i) { shift(r.end)? } else { r.end };
        ranges.push(r.start..end);
    }
    ranges.extend(parsed.ranges.iter().map(|r| r.start + range.start..r.end + range.start));
    for r in &old_ranges[target + sizes[target]..] {
        ranges.push(shift(r.start)?..shift(r.end)?);
    }
    Some(ParsedLayout { root, ranges })
}

/// How many views each view's subtree holds (itself included), from pre-order nested ranges.
fn subtree_sizes(ranges: &[std::ops::Range<usize>]) -> Vec<usize> {
    let mut sizes = vec![1usize; ranges.len()];
    let mut open: Vec<usize> = Vec::new();
    for (i, r) in ranges.iter().enumerate() {
        while let Some(&top) = open.last() {
            if r.start < ranges[top].end {
                break;
            }
            open.pop();
        }
        for &o in &open {
            sizes[o] += 1;
        }
        open.push(i);
    }
    sizes
}

/// How deep pre-order nested ranges nest (1 for a single view).
fn depth(ranges: &[std::ops::Range<usize>]) -> usize {
    let mut open: Vec<usize> = Vec::new();
    let mut deepest = 0;
    for r in ranges {
        while open.last().is_some_and(|&end| r.start >= end) {
            open.pop();
        }
        open.push(r.end);
        deepest = deepest.max(open.len());
    }
    deepest
}

fn element(
    doc: &roxmltree::Document,
    node: roxmltree::Node,
    package: &str,
    d: f32,
    assets: &BTreeMap<String, String>,
) -> Result<View, LayoutError> {
    let tag = node.tag_name().name();
    // Only on failure: finding a line scans the text from its start.
    let fail = |m: String| {
        LayoutError::at(doc.text_pos_at(node.range().start).row as usize, format!("<{tag}>: {m}"))
    };
    let (class, kind, axis) = match TAGS.iter().find(|(t, ..)| *t == tag) {
        Some((_, class, kind, axis)) => (class.to_string(), *kind, *axis),
        None if tag.contains('.') => (tag.to_string(), Kind::Group, Axis::Vertical),
        None => {
            let known: Vec<&str> = TAGS.iter().map(|t| t.0).collect();
            return Err(fail(format!(
                "unknown element (use one of {} or a full class name)",
                known.join(", ")
            )));
        }
    };
    let mut view = View::new(&class, kind);
    view.style.axis = axis;
    defaults(&mut view, tag, d);
    view.placeholder = tag == "Gap";
    for attr in node.attributes() {
        let (name, value) = (attr.name(), attr.value());
        if view.placeholder && name != "height" {
            return Err(fail(format!(
                "attribute `{name}`: a Gap takes only `height` (the rows it stands for)"
            )));
        }
        let set = apply_attribute(&mut view, name, value, package, d, assets);
        set.map_err(|m| fail(format!("attribute `{name}`: {m}")))?;
    }
    if view.pager.is_some() && view.id.is_none() {
        return Err(fail("a ViewPager needs an `id` (the page it shows is kept by id)".into()));
    }
    if let Some(look) = &mut view.look
        && let Some(size) = node.attribute("size")
    {
        let sp: f32 = number(size).map_err(|m| fail(format!("attribute `size`: {m}")))?;
        look.size_px = px(d, sp);
    }
    Ok(view)
}

fn defaults(view: &mut View, tag: &str, d: f32) {
    let look = |sp: f32| Some(TextLook { size_px: px(d, sp), bold: false, max_lines: None });
    match tag {
        "TextView" => view.look = look(14.0),
        "ViewPager" => {
            view.pager = Some(Pager::default());
            view.style.width = Dim::Match;
        }
        "Button" => {
            view.look = look(14.0);
            view.clickable = true;
            view.style.min_height = px(d, 48.0);
            view.style.padding =
                Edges { top: px(d, 10.0), bottom: px(d, 10.0), left: px(d, 16.0), right: px(d, 16.0) };
            if let Some(l) = &mut view.look {
                l.bold = true;
            }
        }
        "EditText" => {
            view.look = look(16.0);
            view.style.min_height = px(d, 48.0);
            view.style.padding =
                Edges { top: px(d, 12.0), bottom: px(d, 12.0), left: px(d, 4.0), right: px(d, 4.0) };
        }
        "Switch" | "CheckBox" | "RadioButton" => {
            view.look = look(14.0);
            view.style.min_height = px(d, 32.0);
        }
        "ImageButton" => {
            view.clickable = true;
            view.style.width = Dim::Px(px(d, 48.0));
            view.style.height = Dim::Px(px(d, 48.0));
        }
        "ImageView" => {
            view.style.width = Dim::Px(px(d, 40.0));
            view.style.height = Dim::Px(px(d, 40.0));
        }
        "SeekBar" => {
            view.style.width = Dim::Match;
            view.style.height = Dim::Px(px(d, 48.0));
        }
        "Toolbar" => {
            view.style.width = Dim::Match;
            view.style.height = Dim::Px(px(d, 56.0));
            view.style.align = Align::Center;
            view.style.padding = Edges { left: px(d, 4.0), right: px(d, 4.0), ..Edges::default() };
        }
        _ => {}
    }
}

/// Whether `value` is a Java class name (`android.widget.TextView`, `a.Outer$Inner`), what the
/// `class` attribute accepts.
pub fn is_class_name(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 200
        && value.split(['.', '$']).all(|part| {
            let mut chars = part.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// The key of the package picture `asset:NAME` names.
fn asset_key(value: &str, assets: &BTreeMap<String, String>) -> Result<String, String> {
    let name = value.trim().strip_prefix(phonebench_pixels::assets::ASSET).unwrap_or(value).trim();
    assets.get(name).cloned().ok_or_else(|| {
        if assets.is_empty() {
            format!("`{value}`: the package has no `assets/` pictures")
        } else {
            format!(
                "`{value}`: no `assets/{name}` in the package ({})",
                assets.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        }
    })
}

fn apply_attribute(
    view: &mut View,
    name: &str,
    value: &str,
    package: &str,
    d: f32,
    assets: &BTreeMap<String, String>,
) -> Result<(), String> {
    let handler = |v: &str| -> Result<Option<Handler>, String> {
        if v.is_empty() {
            Ok(None)
        } else if phonebench_apps::actions::is_identifier(v) {
            Ok(Some(Handler::App(v.to_string())))
        } else {
            Err(format!("`{v}` is not an action name"))
        }
    };
    match name {
        "id" => {
            if value.is_empty() {
                return Ok(());
            }
            view.resource_id =
                if value.contains(":id/") { value.to_string() } else { format!("{package}:id/{value}") };
            view.id = Some(value.to_string());
        }
        "text" => view.text = value.to_string(),
        // The node's class as agents see it, keeping the tag's behaviour: an app rebuilt from a
        // recording shows `AppCompatTextView` where the real one did.
        "class" => {
            if !is_class_name(value) {
                return Err(format!("`{value}` is not a class name (`android.widget.TextView`)"));
            }
            view.class = value.to_string();
        }
        "desc" => view.desc = value.to_string(),
        "style" => {
            view.role = Some(
                Role::from_style(value.trim())
                    .ok_or_else(|| format!("`{value}` is not a style ({})", Role::STYLE_NAMES.join(", ")))?,
            )
        }
        "icon" => {
            let name = value.trim();
            if name.is_empty() {
                view.icon = None;
            } else if name.starts_with(phonebench_pixels::assets::ASSET) {
                view.icon = Some(asset_key(name, assets)?);
            } else if phonebench_pixels::icons::path(name).is_some() {
                view.icon = Some(name.to_string());
            } else {
                return Err(format!(
                    "`{name}` is not a vendored icon (see crates/pixels/assets/icons/README.md)"
                ));
            }
        }
        "color" => {
            view.tone = Tone::from_name(value.trim()).ok_or_else(|| {
                format!("`{value}` is not a text colour (normal, secondary, primary, error)")
            })?
        }
        "bg" => {
            let name = value.trim();
            view.bg = if name.is_empty() {
                None
            } else {
                Some(phonebench_pixels::Swatch::from_name(name).ok_or_else(|| {
                    format!(
                        "`{name}` is not a background colour ({})",
                        phonebench_pixels::Swatch::NAMES.join(", ")
                    )
                })?)
            };
        }
        "hint" => view.hint = Some(value.to_string()),
        "value" => {
            if view.kind == Kind::Seek {
                view.seek.0 = number::<i64>(value)?;
            } else {
                view.value = Some(value.to_string());
            }
        }
        "scroll" => {
            view.start_at_end = match value.trim() {
                "end" => true,
                "start" => false,
                other => return Err(format!("`{other}` is not `start` or `end`")),
            }
        }
        "max" => view.seek.1 = number::<i64>(value)?.max(1),
        "input" if view.kind == Kind::Edit => {
            view.input = crate::view::InputType::parse(value)?;
            if value.trim() == "password" {
                view.password = true;
            }
        }
        "input" => return Err("only text fields (EditText) take `input`".into()),
        "src" => {
            // A generated picture, or one of the package's `assets/` files.
            match value.strip_prefix(phonebench_pixels::picture::PLACEHOLDER) {
                Some(key) if !key.trim().is_empty() => view.src = Some(value.to_string()),
                Some(_) => return Err("`placeholder:` needs a key (`placeholder:beach-3`)".into()),
                None if value.trim().is_empty() => view.src = None,
                None if value.trim().starts_with(phonebench_pixels::assets::ASSET) => {
                    view.src = Some(asset_key(value, assets)?)
                }
                None => {
                    return Err(format!(
                        "`{value}` is not an image source: use `placeholder:KEY` (a picture generated from KEY) or `asset:FILE` (a picture in the package's assets/)"
                    ));
                }
            }
        }
        "page" if view.pager.is_some() => {
            view.pager = Some(Pager { page: number::<usize>(value)?, pages: 0 });
        }
        "enabled" => view.enabled = boolean(value)?,
        "checked" => view.checked = boolean(value)?,
        "selected" => view.selected = boolean(value)?,
        "password" => view.password = boolean(value)?,
        "clickable" => view.clickable = boolean(value)?,
        "copyable" => view.hooks.copyable = boolean(value)?,
        "focus" => view.focus = boolean(value)?,
        "on-click" => view.hooks.on_click = handler(value)?,
        "on-long-click" => view.hooks.on_long_click = handler(value)?,
        "on-change" => view.hooks.on_change = handler(value)?,
        "on-submit" => view.hooks.on_submit = handler(value)?,
        "orientation" => {
            view.style.axis = match value {
                "vertical" => Axis::Vertical,
                "horizontal" => Axis::Horizontal,
                _ => return Err(format!("`{value}` is not `vertical` or `horizontal`")),
            }
        }
        "width" => view.style.width = dim(value, d)?,
        "height" => view.style.height = dim(value, d)?,
        "weight" => view.style.weight = number::<f32>(value)?.max(0.0),
        "padding" => view.style.padding = edges(value, d)?,
        "margin" => view.style.margin = edges(value, d)?,
        "gap" => view.style.gap = px(d, number(value)?),
        "align" => view.style.align = align(value)?,
        "justify" => view.style.justify = align(value)?,
        "gravity" => {
            let mut gravity = (Align::Start, Align::Start);
            for part in value.split('|') {
                match part.trim() {
                    "top" => gravity.1 = Align::Start,
                    "bottom" => gravity.1 = Align::End,
                    "start" | "left" => gravity.0 = Align::Start,
                    "end" | "right" => gravity.0 = Align::End,
                    "center" => gravity = (Align::Center, Align::Center),
                    "center_horizontal" => gravity.0 = Align::Center,
                    "center_vertical" => gravity.1 = Align::Center,
                    other => {
                        return Err(format!("`{other}` is not a gravity (top, bottom, start, end, center)"));
                    }
                }
            }
            view.style.gravity = gravity;
        }
        "size" => {
            if view.look.is_none() {
                return Err("only text views take a text size".into());
            }
        }
        "bold" => match &mut view.look {
            Some(look) => look.bold = boolean(value)?,
            None => return Err("only text views take `bold`".into()),
        },
        "lines" => match &mut view.look {
            Some(look) => look.max_lines = Some(number::<u32>(value)?.max(1)),
            None => return Err("only text views take `lines`".into()),
        },
        _ => {
            if let Some(arg) = name.strip_prefix("arg-") {
                let arg = arg.replace('-', "_");
                if !phonebench_apps::actions::is_identifier(&arg) {
                    return Err(format!("`{arg}` is not an argument name"));
                }
                view.hooks.args.insert(arg, value.to_string());
            } else {
                return Err("unknown attribute (see docs/app-format.md)".into());
            }
        }
    }
    Ok(())
}

/// `value` dp in px at density `d`.
fn px(d: f32, value: f32) -> f32 {
    value * d
}

fn boolean(value: &str) -> Result<bool, String> {
    match value.trim() {
        "true" | "1" => Ok(true),
        "false" | "0" | "" => Ok(false),
        other => Err(format!("`{other}` is not true or false")),
    }
}

fn number<T: std::str::FromStr>(value: &str) -> Result<T, String> {
    value.trim().parse::<T>().map_err(|_| format!("`{value}` is not a number"))
}

fn dim(value: &str, d: f32) -> Result<Dim, String> {
    match value.trim() {
        "match" | "match_parent" | "fill" => Ok(Dim::Match),
        "wrap" | "wrap_content" | "" => Ok(Dim::Wrap),
        v => {
            if let Some(p) = v.strip_suffix('%') {
                Ok(Dim::Fraction((number::<f32>(p)? / 100.0).clamp(0.0, 1.0)))
            } else {
                Ok(Dim::Px(px(d, number::<f32>(v.strip_suffix("dp").unwrap_or(v))?.max(0.0))))
            }
        }
    }
}

fn edges(value: &str, d: f32) -> Result<Edges, String> {
    let parts =
        value.split_whitespace().map(|p| number::<f32>(p).map(|v| v * d)).collect::<Result<Vec<_>, _>>()?;
    match parts.as_slice() {
        [a] => Ok(Edges { top: *a, right: *a, bottom: *a, left: *a }),
        [v, h] => Ok(Edges { top: *v, right: *h, bottom: *v, left: *h }),
        [t, r, b, l] => Ok(Edges { top: *t, right: *r, bottom: *b, left: *l }),
        _ => Err(format!("`{value}` is not 1, 2 or 4 numbers of dp")),
    }
}

fn align(value: &str) -> Result<Align, String> {
    match value.trim() {
        "start" | "top" | "left" => Ok(Align::Start),
        "center" => Ok(Align::Center),
        "end" | "bottom" | "right" => Ok(Align::End),
        "stretch" | "space-between" => Ok(Align::Stretch),
        other => Err(format!("`{other}` is not start, center, end or stretch")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reparsing_where_the_markup_changed_gives_what_a_full_parse_does() {
        let row = |i: usize, star: bool, text: &str| {
            format!(
                "<LinearLayout id=\"row\" orientation=\"horizontal\"><TextView text=\"{text} {i}\"/><ImageButton id=\"star\" icon=\"{}\"/></LinearLayout>",
                if star { "star_fill" } else { "star" }
            )
        };
        let screen = |rows: &[(bool, &str)]| {
            let body: String = rows.iter().enumerate().map(|(i, (star, text))| row(i, *star, text)).collect();
            format!(
                "<LinearLayout><Toolbar><TextView text=\"Inbox\"/></Toolbar><RecyclerView>{body}</RecyclerView><Button text=\"OK\"/></LinearLayout>"
            )
        };
        let base = vec![(false, "Mail"); 8];
        let mut starred = base.clone();
        starred[3].0 = true;
        let mut renamed = base.clone();
        renamed[6].1 = "Mail with a much longer subject é漢";
        let fewer = base[..5].to_vec();
        let more = [base.clone(), vec![(true, "New")]].concat();
        let old_xml = screen(&base);
        let old = parse_layout_ranged(&old_xml, "p", 2.0, &BTreeMap::new()).unwrap();
        let mut reparsed_any = false;
        for rows in [&starred, &renamed, &fewer, &more] {
            let new_xml = screen(rows);
            let full = parse_layout_ranged(&new_xml, "p", 2.0, &BTreeMap::new()).unwrap();
            if let Some(part) = reparse_changed(&old_xml, old.clone(), &new_xml, "p", 2.0, &BTreeMap::new()) {
                reparsed_any = true;
                assert_eq!(part.root, full.root);
                assert_eq!(part.ranges, full.ranges);
            }
        }
        assert!(reparsed_any, "a change inside one row is reparsed in place");
        // A change that breaks the markup is left to the full parse (which reports it).
        let broken = old_xml.replacen("<TextView text=\"Mail 2\"/>", "<TextView text=\"Mail 2\">", 1);
        assert!(reparse_changed(&old_xml, old.clone(), &broken, "p", 2.0, &BTreeMap::new()).is_none());
        assert!(parse_layout_ranged(&broken, "p", 2.0, &BTreeMap::new()).is_err());
    }

    #[test]
    fn parses_tags_attributes_and_nesting() {
        let v = parse_layout(
            r#"<LinearLayout id="root"><Toolbar><TextView id="title" text="Contacts" size="20" bold="true"/></Toolbar>
            <RecyclerView id="list" weight="1"><TextView text="A" on-click="open" arg-contact-id="7"/></RecyclerView>
            <com.example.Custom/></LinearLayout>"#,
            "com.x",
            2.625,
        )
        .unwrap();
        assert_eq!(v.resource_id, "com.x:id/root");
        assert_eq!(v.children.len(), 3);
        let title = &v.children[0].children[0];
        assert_eq!(title.class, "android.widget.TextView");
        assert_eq!(title.look.unwrap().size_px, 20.0 * 2.625);
        assert!(title.look.unwrap().bold);
        let row = &v.children[1].children[0];
        assert_eq!(row.hooks.on_click, Some(Handler::App("open".into())));
        assert_eq!(row.hooks.args["contact_id"], "7");
        assert_eq!(v.children[2].class, "com.example.Custom");
    }

    #[test]
    fn errors_name_line_element_and_attribute() {
        let e = parse_layout("<LinearLayout>\n<TextView colour=\"red\"/></LinearLayout>", "p", 2.625)
            .unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        let e = e.to_string();
        assert!(e.contains("line 2") && e.contains("TextView") && e.contains("colour"), "{e}");
        let e = parse_layout("<Blob/>", "p", 2.625).unwrap_err().to_string();
        assert!(e.contains("unknown element"), "{e}");
        let e = parse_layout("<TextView><TextView/></TextView>", "p", 2.625).unwrap_err().to_string();
        assert!(e.contains("cannot have child"), "{e}");
        let e = parse_layout("<LinearLayout>", "p", 2.625).unwrap_err().to_string();
        assert!(e.contains("not XML"), "{e}");
        let e = parse_layout("<TextView width=\"wide\"/>", "p", 2.625).unwrap_err().to_string();
        assert!(e.contains("not a number"), "{e}");
    }
}
