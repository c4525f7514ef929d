//! Writing a UI tree as a classic `uiautomator dump` document.

use crate::escape::escape_attribute_into;
use crate::node::NodeId;
use crate::tree::UiTree;

/// The XML declaration exactly as `uiautomator dump` writes it.
pub const XML_DECLARATION: &str = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>";

/// Writes the tree in the classic `uiautomator dump` format: the declaration, one
/// `<hierarchy rotation="…">`, nested `<node …>` elements with the attributes in uiautomator's
/// order (see [`Node::attributes`](crate::Node::attributes)), leaves self-closed as `<node … />`,
/// all on one line.
///
/// Reading the output back gives an equal tree for any tree read from XML. A tree built in code
/// round-trips too, except for characters XML 1.0 cannot carry (control characters other than
/// tab/newline/CR), which are written as U+FFFD.
pub fn write_xml(tree: &UiTree) -> String {
    // Attributes average ~25 bytes of markup plus their values; 400 bytes per node avoids most
    // reallocations on real screens.
    let mut out = String::with_capacity(128 + tree.len() * 400);
    out.push_str(XML_DECLARATION);
    out.push_str("<hierarchy rotation=\"");
    out.push_str(&tree.rotation.to_string());
    out.push('"');
    for (name, value) in &tree.hierarchy_extra {
        push_attribute(&mut out, name, value);
    }
    out.push('>');
    // Iterative, not recursive: a hostile dump can nest deeper than the stack allows.
    let mut open: Vec<NodeId> = Vec::new();
    for (id, node) in tree.iter() {
        while let Some(&top) = open.last() {
            if tree.is_in_subtree(top, id) {
                break;
            }
            out.push_str("</node>");
            open.pop();
        }
        out.push_str("<node");
        for (name, value) in node.attributes() {
            push_attribute(&mut out, name, &value);
        }
        if tree.is_leaf(id) {
            out.push_str(" />");
        } else {
            out.push('>');
            open.push(id);
        }
    }
    for _ in open {
        out.push_str("</node>");
    }
    out.push_str("</hierarchy>");
    out
}

fn push_attribute(out: &mut String, name: &str, value: &str) {
    out.push(' ');
    out.push_str(name);
    out.push_str("=\"");
    escape_attribute_into(out, value);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Bounds, Node, TreeBuilder, read_xml};

    #[test]
    fn writes_classic_form() {
        let mut b = TreeBuilder::new();
        b.open(Node::new("android.widget.FrameLayout", "p", Bounds::new(0, 0, 10, 10))).unwrap();
        let mut leaf = Node::new("android.widget.TextView", "p", Bounds::new(0, 0, 5, 5));
        leaf.text = "a \"b\" & <c>\n".into();
        b.leaf(leaf).unwrap();
        b.close().unwrap();
        let t = b.finish().unwrap();
        let xml = write_xml(&t);
        assert!(xml.starts_with("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node index=\"0\" text=\"\""));
        assert!(xml.contains("text=\"a &quot;b&quot; &amp; &lt;c&gt;&#10;\""));
        assert!(xml.contains("bounds=\"[0,0][5,5]\" /></node></hierarchy>"));
        assert_eq!(read_xml(&xml).unwrap(), t);
    }

    #[test]
    fn empty_tree_writes_empty_hierarchy() {
        let xml = write_xml(&UiTree::default());
        assert!(xml.ends_with("<hierarchy rotation=\"0\"></hierarchy>"));
        assert!(read_xml(&xml).unwrap().is_empty());
    }
}
