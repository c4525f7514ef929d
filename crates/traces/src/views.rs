//! Screens from element lists: DroidBot's view lists (its `states/*.json` and LlamaTouch's
//! `.vh` files share the format) and outlines (elements without geometry).

use std::collections::HashSet;

use phonebench_uitree::{Bounds, Node, TreeBuilder, UiTree, read_xml};
use serde_json::Value;

use crate::limits::MAX_VIEWS;

/// Width of the screen outlines are laid out on (a 1080×2400 phone, AndroidWorld's Pixel 6).
pub const OUTLINE_WIDTH: i32 = 1080;
/// Height of one outline row.
pub const OUTLINE_ROW: i32 = 132;
/// Where the first outline row starts (below a status bar's worth of space).
pub const OUTLINE_TOP: i32 = 84;

fn str_field<'a>(view: &'a Value, names: &[&str]) -> &'a str {
    names.iter().find_map(|n| view.get(*n).and_then(Value::as_str)).unwrap_or("")
}

fn bool_field(view: &Value, names: &[&str]) -> bool {
    names.iter().find_map(|n| view.get(*n).and_then(Value::as_bool)).unwrap_or(false)
}

/// Bounds as DroidBot writes them (`[[l, t], [r, b]]`) or as a uiautomator string.
pub fn parse_bounds(value: Option<&Value>) -> Option<Bounds> {
    match value? {
        Value::Array(points) if points.len() == 2 => {
            let xy = |p: &Value| -> Option<(i32, i32)> {
                let a = p.as_array()?;
                let x = i32::try_from(a.first()?.as_i64()?).ok()?;
                let y = i32::try_from(a.get(1)?.as_i64()?).ok()?;
                Some((x, y))
            };
            let (l, t) = xy(&points[0])?;
            let (r, b) = xy(&points[1])?;
            Some(Bounds::new(l, t, r, b))
        }
        Value::String(s) => Bounds::parse(s).ok(),
        _ => None,
    }
}

/// One DroidBot view (a JSON object) as a node.
pub fn view_node(view: &Value) -> Node {
    let mut node = Node::new(
        str_field(view, &["class"]),
        str_field(view, &["package"]),
        parse_bounds(view.get("bounds")).unwrap_or_default(),
    );
    node.text = str_field(view, &["text"]).to_string();
    node.resource_id = str_field(view, &["resource_id", "resource-id"]).to_string();
    node.content_desc = str_field(view, &["content_description", "content-desc"]).to_string();
    node.checkable = bool_field(view, &["checkable"]);
    node.checked = bool_field(view, &["checked"]);
    node.clickable = bool_field(view, &["clickable"]);
    node.enabled = view.get("enabled").and_then(Value::as_bool).unwrap_or(true);
    node.focusable = bool_field(view, &["focusable"]);
    node.focused = bool_field(view, &["focused"]);
    node.scrollable = bool_field(view, &["scrollable"]);
    node.long_clickable = bool_field(view, &["long_clickable", "long-clickable"]);
    node.password = bool_field(view, &["is_password", "password"]);
    node.selected = bool_field(view, &["selected"]);
    node.editable = view.get("editable").and_then(Value::as_bool);
    if let Some(visible) = view.get("visible").and_then(Value::as_bool) {
        node.visible_to_user = Some(visible);
    }
    node
}

/// A DroidBot view list (`[{temp_id, parent, children, class, bounds, ...}]`) as a tree.
///
/// Views are addressed by `temp_id` (their position when absent); roots are views whose
/// `parent` is -1 or names no view. Children come from each view's `children` list, else from
/// the views naming it as `parent`. A view reached twice (a cycle, or two parents) is kept once,
/// where first reached; views reached from no root are dropped. Nothing recurses.
pub fn tree_from_views(views: &[Value]) -> Result<UiTree, String> {
    if views.is_empty() {
        return Err("the view list is empty".into());
    }
    if views.len() > MAX_VIEWS {
        return Err(format!("{} views, over the {MAX_VIEWS}-view limit", views.len()));
    }
    let id_of = |i: usize, v: &Value| -> Option<usize> {
        match v.get("temp_id") {
            Some(id) => id.as_u64().and_then(|id| usize::try_from(id).ok()),
            None => Some(i),
        }
    };
    // temp_id → position in `views`.
    let mut position = vec![usize::MAX; views.len()];
    for (i, v) in views.iter().enumerate() {
        if !v.is_object() {
            return Err(format!("view {i} is not an object"));
        }
        match id_of(i, v) {
            Some(id) if id < views.len() && position[id] == usize::MAX => position[id] = i,
            Some(id) => return Err(format!("view {i} has temp_id {id}, out of range or repeated")),
            None => return Err(format!("view {i} has a temp_id that is not a number")),
        }
    }
    let parent_of = |v: &Value| v.get("parent").and_then(Value::as_i64);
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); views.len()];
    let mut roots = Vec::new();
    for (i, v) in views.iter().enumerate() {
        if let Some(list) = v.get("children").and_then(Value::as_array) {
            for c in list {
                if let Some(c) = c.as_u64().and_then(|c| usize::try_from(c).ok()).filter(|&c| c < views.len())
                {
                    children[i].push(position[c]);
                }
            }
        }
        let parent = parent_of(v)
            .and_then(|p| usize::try_from(p).ok())
            .filter(|&p| p < views.len())
            .map(|p| position[p]);
        match parent {
            None => roots.push(i),
            Some(p) if views[p].get("children").is_none() => children[p].push(i),
            Some(_) => {}
        }
    }
    if roots.is_empty() {
        return Err("no root view (every view names a parent)".into());
    }
    let mut builder = TreeBuilder::new();
    let mut seen = HashSet::new();
    for root in roots {
        if !seen.insert(root) {
            continue;
        }
        // (view, next child to visit)
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        builder.open(view_node(&views[root])).map_err(|e| e.to_string())?;
        while let Some(top) = stack.last_mut() {
            let (view, next) = *top;
            if next < children[view].len() {
                top.1 += 1;
                let child = children[view][next];
                if seen.insert(child) {
                    builder.open(view_node(&views[child])).map_err(|e| e.to_string())?;
                    stack.push((child, 0));
                }
            } else {
                builder.close().map_err(|e| e.to_string())?;
                stack.pop();
            }
        }
    }
    builder.finish().map_err(|e| e.to_string())
}

/// One element of an outline: what the source says about it, without geometry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutlineElement {
    /// Android class.
    pub class: String,
    /// Text.
    pub text: String,
    /// Resource id.
    pub resource_id: String,
    /// Content description.
    pub content_desc: String,
    /// Whether it can be checked, and is.
    pub checkable: bool,
    /// Checked state.
    pub checked: bool,
    /// Whether a tap does something.
    pub clickable: bool,
    /// Whether it takes text.
    pub editable: bool,
}

/// An outline as a tree: a full-screen root (`package`) holding one row per element, laid out
/// top to bottom ([`OUTLINE_ROW`] pixels each) so that the screen can be drawn and tapped.
pub fn tree_from_outline(package: &str, elements: &[OutlineElement]) -> Result<UiTree, String> {
    if elements.len() > MAX_VIEWS {
        return Err(format!("{} elements, over the {MAX_VIEWS}-element limit", elements.len()));
    }
    let height = (OUTLINE_TOP + OUTLINE_ROW * elements.len() as i32).max(2400);
    let mut builder = TreeBuilder::new();
    builder
        .open(Node::new("android.widget.FrameLayout", package, Bounds::new(0, 0, OUTLINE_WIDTH, height)))
        .map_err(|e| e.to_string())?;
    for (i, e) in elements.iter().enumerate() {
        let top = OUTLINE_TOP + OUTLINE_ROW * i as i32;
        let mut node =
            Node::new(e.class.clone(), package, Bounds::new(0, top, OUTLINE_WIDTH, top + OUTLINE_ROW));
        node.index = i as i32;
        node.text = e.text.clone();
        node.resource_id = e.resource_id.clone();
        node.content_desc = e.content_desc.clone();
        node.checkable = e.checkable;
        node.checked = e.checked;
        node.clickable = e.clickable;
        node.focusable = e.clickable || e.editable;
        node.editable = Some(e.editable);
        builder.leaf(node).map_err(|e| e.to_string())?;
    }
    builder.close().map_err(|e| e.to_string())?;
    builder.finish().map_err(|e| e.to_string())
}

/// A uiautomator dump as a tree, refused when it holds more than [`MAX_VIEWS`] nodes.
pub fn tree_from_xml(text: &str) -> Result<UiTree, String> {
    let tree = read_xml(text).map_err(|e| format!("line {}: {}", e.line, e.message))?;
    if tree.len() > MAX_VIEWS {
        return Err(format!("{} nodes, over the {MAX_VIEWS}-node limit", tree.len()));
    }
    Ok(tree)
}
