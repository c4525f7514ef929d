//! SPHINX accessibility text: the indented tree (`sphinx-tree`) and the simplified list
//! (`sphinx-list`), following the upstream rules (PKU-ASE-RISE/Sphinx, `infra/hierarchy.py`):
//!
//! - top-level windows whose package is `com.android.systemui` are dropped;
//! - a node is interactable when it is visible to the user and has an action: an
//!   `android.widget.EditText` (exactly that class) is typed into (`text`), other nodes get
//!   `click` when clickable or checkable and `longclick` when long-clickable; any node gets
//!   `swipe` when scrollable;
//! - interactable nodes are numbered `[i]` breadth-first within each kept window, windows in
//!   dump order, so `[i]` names the same widget in both formats;
//! - a node prints as `a View (content-desc: …, resource-id: …, text: …, class: …)` with only
//!   the non-empty parts (values stripped, resource id shortened to the part after `/`), or
//!   `a View` when no part is left; interactable nodes add ` to click`, ` to click or longclick`,
//!   ` to click, longclick or swipe`, ` to text`…;
//! - the tree prints every node depth-first, one tab per depth starting at 0 for window roots,
//!   each line ending in a newline (upstream's `dump_widget_tree`); because numbering is
//!   breadth-first, the `[i]` are not monotonic in the tree; deviation: indentation stops growing
//!   at [`MAX_INDENT_DEPTH`] tabs, so a hostile deep tree cannot make the text quadratic;
//! - the list prints only the interactable nodes, `[i] …` in index order, joined by newlines
//!   with none after the last (upstream's `observe()` in `text` mode).
//!
//! Text is printed as it is, newlines included, as upstream does.

use std::fmt;

use phonebench_uitree::{Node, NodeId, UiTree};

use crate::limit::{MAX_INDENT_DEPTH, Sink};

/// The package whose top-level windows SPHINX drops (status and navigation bars).
pub const SYSTEM_UI_PACKAGE: &str = "com.android.systemui";

/// The actions SPHINX offers on a node, in the order its suffix lists them.
pub fn sphinx_actions(node: &Node) -> Vec<&'static str> {
    if !node.is_visible() {
        return Vec::new();
    }
    let mut actions = Vec::with_capacity(3);
    // Upstream checks the exact class name: subclasses (AutoCompleteTextView…) are clicked.
    if node.class == "android.widget.EditText" {
        actions.push("text");
    } else {
        if node.clickable || node.checkable {
            actions.push("click");
        }
        if node.long_clickable {
            actions.push("longclick");
        }
    }
    if node.scrollable {
        actions.push("swipe");
    }
    actions
}

/// `a View (content-desc: …, resource-id: …, text: …, class: …)`.
pub fn sphinx_element(node: &Node) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = write_sphinx_element(&mut out, node);
    out
}

/// [`sphinx_element`] written to `out`.
pub fn write_sphinx_element(out: &mut dyn fmt::Write, node: &Node) -> fmt::Result {
    let parts = [
        ("content-desc", node.content_desc.trim()),
        ("resource-id", node.short_resource_id().trim()),
        ("text", node.text.trim()),
        ("class", node.class.trim()),
    ];
    out.write_str("a View")?;
    let mut first = true;
    for (k, v) in parts.iter().filter(|(_, v)| !v.is_empty()) {
        out.write_str(if first { " (" } else { ", " })?;
        first = false;
        out.write_str(k)?;
        out.write_str(": ")?;
        out.write_str(v)?;
    }
    if !first {
        out.write_char(')')?;
    }
    Ok(())
}

/// `a View (…) to click, longclick or swipe`: the element plus its action suffix.
pub fn sphinx_widget(node: &Node, actions: &[&str]) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = write_sphinx_widget(&mut out, node, actions);
    out
}

/// [`sphinx_widget`] written to `out`.
pub fn write_sphinx_widget(out: &mut dyn fmt::Write, node: &Node, actions: &[&str]) -> fmt::Result {
    write_sphinx_element(out, node)?;
    match actions {
        [] => Ok(()),
        [only] => write!(out, " to {only}"),
        [init @ .., last] => write!(out, " to {} or {last}", init.join(", ")),
    }
}

/// The windows SPHINX shows: every top-level window except system UI, in dump order.
fn kept_windows(tree: &UiTree) -> impl Iterator<Item = NodeId> + '_ {
    tree.windows().iter().map(|w| w.root).filter(|root| tree.node(*root).package != SYSTEM_UI_PACKAGE)
}

/// The SPHINX index table: interactable nodes, breadth-first per kept window.
pub fn sphinx_index_table(tree: &UiTree) -> Vec<NodeId> {
    kept_windows(tree)
        .flat_map(|root| tree.bfs(root))
        .filter(|&id| !sphinx_actions(tree.node(id)).is_empty())
        .collect()
}

/// The position of each node in the index table, for the depth-first printer.
fn index_of(tree: &UiTree, table: &[NodeId]) -> Vec<Option<u32>> {
    let mut index = vec![None; tree.len()];
    for (i, id) in table.iter().enumerate() {
        index[id.get()] = Some(i as u32);
    }
    index
}

/// Renders the `sphinx-tree` text for `tree` given its index table, whole (see
/// [`crate::render`] for the bounded form).
pub fn render_sphinx_tree(tree: &UiTree, table: &[NodeId]) -> String {
    let mut text = String::with_capacity(tree.len().saturating_mul(80));
    let mut push = |s: &str| text.push_str(s);
    write_sphinx_tree(&mut Sink::new(&mut push, usize::MAX), tree, table);
    text
}

/// Writes the `sphinx-tree` lines through `sink` until one does not fit.
pub(crate) fn write_sphinx_tree(sink: &mut Sink<'_>, tree: &UiTree, table: &[NodeId]) {
    let index = index_of(tree, table);
    for root in kept_windows(tree) {
        let root_depth = tree.depth(root);
        for id in tree.dfs(root) {
            let node = tree.node(id);
            let depth = (tree.depth(id).saturating_sub(root_depth) as usize).min(MAX_INDENT_DEPTH);
            let fits = sink.unit(0, |out| {
                for _ in 0..depth {
                    out.write_char('\t')?;
                }
                match index[id.get()] {
                    Some(i) => {
                        write!(out, "[{i}] ")?;
                        write_sphinx_widget(out, node, &sphinx_actions(node))?;
                    }
                    None => write_sphinx_element(out, node)?,
                }
                out.write_char('\n')
            });
            if !fits {
                return;
            }
        }
    }
}

/// Renders the `sphinx-list` text: interactable widgets only, in index order, whole (see
/// [`crate::render`] for the bounded form).
pub fn render_sphinx_list(tree: &UiTree, table: &[NodeId]) -> String {
    let mut text = String::new();
    let mut push = |s: &str| text.push_str(s);
    write_sphinx_list(&mut Sink::new(&mut push, usize::MAX), tree, table);
    text
}

/// Writes the `sphinx-list` lines through `sink` until one does not fit.
pub(crate) fn write_sphinx_list(sink: &mut Sink<'_>, tree: &UiTree, table: &[NodeId]) {
    for (i, &id) in table.iter().enumerate() {
        let node = tree.node(id);
        let fits = sink.unit(0, |out| {
            // Lines are joined by newlines, with none after the last.
            if i > 0 {
                out.write_char('\n')?;
            }
            write!(out, "[{i}] ")?;
            write_sphinx_widget(out, node, &sphinx_actions(node))
        });
        if !fits {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phonebench_uitree::Bounds;

    fn node(class: &str) -> Node {
        Node::new(class, "p", Bounds::new(0, 0, 10, 10))
    }

    #[test]
    fn element_string_shows_only_non_empty_parts_in_order() {
        let mut n = node("android.widget.Button");
        n.resource_id = "com.x:id/buttonCalculate".into();
        n.text = " Calculate ".into();
        n.content_desc = "  ".into();
        assert_eq!(
            sphinx_element(&n),
            "a View (resource-id: buttonCalculate, text: Calculate, class: android.widget.Button)"
        );
        n.content_desc = "Go".into();
        assert!(sphinx_element(&n).starts_with("a View (content-desc: Go, resource-id:"));
        assert_eq!(sphinx_element(&Node::default()), "a View");
    }

    #[test]
    fn action_suffixes() {
        let mut n = node("android.view.View");
        assert_eq!(sphinx_widget(&n, &sphinx_actions(&n)), "a View (class: android.view.View)");
        n.checkable = true;
        assert_eq!(sphinx_actions(&n), ["click"]);
        n.long_clickable = true;
        assert!(sphinx_widget(&n, &sphinx_actions(&n)).ends_with(" to click or longclick"));
        n.scrollable = true;
        assert!(sphinx_widget(&n, &sphinx_actions(&n)).ends_with(" to click, longclick or swipe"));
        n.visible_to_user = Some(false);
        assert!(sphinx_actions(&n).is_empty());
        let mut e = node("android.widget.EditText");
        e.clickable = true;
        e.long_clickable = true;
        assert_eq!(sphinx_actions(&e), ["text"]);
        e.scrollable = true;
        assert_eq!(
            sphinx_widget(&e, &sphinx_actions(&e)),
            "a View (class: android.widget.EditText) to text or swipe"
        );
        let mut auto = node("android.widget.AutoCompleteTextView");
        auto.clickable = true;
        assert_eq!(sphinx_actions(&auto), ["click"]);
        let mut s = node("android.widget.ScrollView");
        s.scrollable = true;
        assert_eq!(
            sphinx_widget(&s, &sphinx_actions(&s)),
            "a View (class: android.widget.ScrollView) to swipe"
        );
    }
}
