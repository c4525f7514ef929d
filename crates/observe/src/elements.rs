//! A UINavBench-style detected-element list: what a screen-parsing detector reports.
//!
//! UINavBench gives its agents, besides the screenshot, "a list of UI elements obtained from a
//! detection model. Each element contains an integer id, detected label (e.g. Icon, Label,
//! Button), contained text (if any), bounding box coordinates, and predicted clickability", with
//! single-character keyboard keys removed (special keys such as "enter" and "go" kept). We derive
//! the same list from the tree: every visible, on-screen node a detector would box — leaves that
//! show something, and anything interactive — labelled from its class.

use phonebench_uitree::{Bounds, Node, NodeId, UiTree, WindowKind};
use serde::Serialize;

use crate::limit::Sink;

/// One detected element, as serialized in the observation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DetectedElement {
    /// Index in the list (what actions address).
    pub id: u32,
    /// Detector label: Text, Icon, Button, TextField, Checkbox, Toggle, RadioButton, Slider, Tab,
    /// Picture, ProgressBar, Container or List.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Text shown (text, else content description, else hint).
    pub text: String,
    /// `[left, top, right, bottom]` in device pixels.
    #[serde(rename = "box")]
    pub bounds: [i32; 4],
    /// Whether tapping it does something.
    pub clickable: bool,
}

fn is_interactive(node: &Node) -> bool {
    node.clickable || node.long_clickable || node.checkable || node.scrollable || node.is_editable()
}

fn shown_text(node: &Node) -> &str {
    [node.text.trim(), node.content_desc.trim(), node.hint.as_deref().unwrap_or("").trim()]
        .into_iter()
        .find(|s| !s.is_empty())
        .unwrap_or("")
}

/// The detector label for a node, from its class and role.
pub fn detector_label(tree: &UiTree, id: NodeId) -> &'static str {
    let node = tree.node(id);
    let class = node.short_class();
    let parent_class = tree.parent(id).map(|p| tree.node(p).short_class()).unwrap_or("");
    let has_text = !node.text.trim().is_empty();
    if node.is_editable() {
        "TextField"
    } else if class.contains("Switch") || class.contains("Toggle") {
        "Toggle"
    } else if class.contains("CheckBox") || (class == "CheckedTextView" && node.checkable) {
        "Checkbox"
    } else if class.contains("RadioButton") {
        "RadioButton"
    } else if class.contains("SeekBar") || class.contains("Slider") || class == "RatingBar" {
        "Slider"
    } else if class.contains("Tab") || parent_class.contains("TabLayout") || parent_class == "TabWidget" {
        "Tab"
    } else if class.contains("ProgressBar") {
        "ProgressBar"
    } else if class.contains("Image") || class.contains("FloatingActionButton") {
        // Small or actionable images are icons; large passive ones are pictures.
        let small = node.bounds.width() <= 200 && node.bounds.height() <= 200;
        if (node.clickable || small) && !has_text {
            "Icon"
        } else if has_text {
            "Button"
        } else {
            "Picture"
        }
    } else if class.contains("Button") {
        if has_text { "Button" } else { "Icon" }
    } else if node.scrollable && !tree.is_leaf(id) {
        "List"
    } else if has_text || !node.content_desc.trim().is_empty() {
        if node.clickable && tree.is_leaf(id) { "Button" } else { "Text" }
    } else {
        "Container"
    }
}

/// Which nodes a detector would box, in document order.
pub fn elements_index_table(tree: &UiTree) -> Vec<NodeId> {
    let screen = tree.screen_bounds();
    tree.iter()
        .filter(|&(id, node)| {
            if !node.is_visible() || node.bounds.intersection(&screen).is_none() {
                return false;
            }
            let leaf_shows_something =
                tree.is_leaf(id) && (!shown_text(node).is_empty() || node.class.contains("Image"));
            if !(leaf_shows_something || is_interactive(node)) {
                return false;
            }
            // A container covering its whole window is the window, not an element.
            let window_root = tree.window(tree.window_of(id)).root;
            if !tree.is_leaf(id) && node.bounds == tree.node(window_root).bounds && !node.scrollable {
                return false;
            }
            // UINavBench drops single-character keyboard keys, keeping special keys.
            let on_keyboard = tree.window(tree.window_of(id)).kind == WindowKind::InputMethod;
            !(on_keyboard && shown_text(node).chars().count() == 1)
        })
        .map(|(id, _)| id)
        .collect()
}

/// The detected elements for an index table.
pub fn detected_elements(tree: &UiTree, table: &[NodeId]) -> Vec<DetectedElement> {
    let screen = tree.screen_bounds();
    table.iter().enumerate().map(|(i, &id)| detected_element(tree, &screen, i, id)).collect()
}

/// Element `i` of the list, node `id`.
fn detected_element(tree: &UiTree, screen: &Bounds, i: usize, id: NodeId) -> DetectedElement {
    let node = tree.node(id);
    // Detectors see pixels, so boxes are clipped to the screen.
    let b = node.bounds.intersection(screen).unwrap_or_default();
    DetectedElement {
        id: u32::try_from(i).unwrap_or(u32::MAX),
        kind: detector_label(tree, id),
        text: shown_text(node).to_string(),
        bounds: [b.left, b.top, b.right, b.bottom],
        clickable: node.clickable || node.checkable || node.is_editable(),
    }
}

/// Renders the list as a JSON array with one element per line, whole (see [`crate::render`] for
/// the bounded form).
pub fn render_elements(tree: &UiTree, table: &[NodeId]) -> String {
    let mut text = String::new();
    let mut push = |s: &str| text.push_str(s);
    write_elements(&mut Sink::new(&mut push, usize::MAX), tree, table);
    text
}

/// Writes the JSON array through `sink`, elements while they fit; the array is always closed.
pub(crate) fn write_elements(sink: &mut Sink<'_>, tree: &UiTree, table: &[NodeId]) {
    const CLOSE: &str = "\n]";
    let screen = tree.screen_bounds();
    let mut line = String::new();
    let mut any = false;
    for (i, &id) in table.iter().enumerate() {
        let element = detected_element(tree, &screen, i, id);
        line.clear();
        // Serializing plain strings, integers and booleans cannot fail.
        let Ok(json) = serde_json::to_string(&element) else { continue };
        line.push_str(if any { ",\n" } else { "[\n" });
        line.push_str(&json);
        if !sink.unit(CLOSE.len(), |out| out.write_str(&line)) {
            break;
        }
        any = true;
    }
    sink.reserved(if any { CLOSE } else { "[]" });
}

#[cfg(test)]
mod tests {
    use super::*;
    use phonebench_uitree::{Bounds, TreeBuilder, WindowKind};

    fn n(class: &str, b: Bounds) -> Node {
        Node::new(class, "p", b)
    }

    #[test]
    fn labels_and_filters() {
        let mut b = TreeBuilder::new();
        b.open(n("android.widget.FrameLayout", Bounds::new(0, 0, 1000, 2000))).unwrap();
        let mut title = n("android.widget.TextView", Bounds::new(0, 0, 500, 100));
        title.text = "Inbox".into();
        b.leaf(title).unwrap();
        let mut fab = n("android.widget.ImageButton", Bounds::new(800, 1800, 900, 1900));
        fab.clickable = true;
        fab.content_desc = "Compose".into();
        b.leaf(fab).unwrap();
        let mut sw = n("android.widget.Switch", Bounds::new(0, 200, 100, 300));
        sw.checkable = true;
        b.leaf(sw).unwrap();
        b.leaf(n("android.view.View", Bounds::new(0, 400, 100, 500))).unwrap(); // shows nothing
        let mut off = n("android.widget.TextView", Bounds::new(0, 2100, 100, 2200));
        off.text = "below".into();
        b.leaf(off).unwrap();
        b.close().unwrap();
        b.open_window(n("Keyboard", Bounds::new(0, 1500, 1000, 2000)), WindowKind::InputMethod, 20).unwrap();
        let mut key = n("android.widget.Button", Bounds::new(0, 1500, 100, 1600));
        key.text = "q".into();
        key.clickable = true;
        b.leaf(key).unwrap();
        let mut enter = n("android.widget.Button", Bounds::new(900, 1900, 1000, 2000));
        enter.content_desc = "enter".into();
        enter.clickable = true;
        b.leaf(enter).unwrap();
        b.close().unwrap();
        let t = b.finish().unwrap();
        let table = elements_index_table(&t);
        let els = detected_elements(&t, &table);
        let summary: Vec<(&str, &str)> = els.iter().map(|e| (e.kind, e.text.as_str())).collect();
        assert_eq!(summary, [("Text", "Inbox"), ("Icon", "Compose"), ("Toggle", ""), ("Icon", "enter")]);
        assert!(els[1].clickable && !els[0].clickable);
        assert_eq!(els[1].bounds, [800, 1800, 900, 1900]);
        let json = render_elements(&t, &table);
        assert!(json.starts_with(
            "[\n{\"id\":0,\"type\":\"Text\",\"text\":\"Inbox\",\"box\":[0,0,500,100],\"clickable\":false},\n"
        ));
    }
}
