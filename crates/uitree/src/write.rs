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
    let mut out = String::with_capacity(128 + tree.len().saturating_mul(400));
    write_xml_limited(tree, usize::MAX, &mut |chunk| out.push_str(chunk));
    out
}

/// How much of a tree [`write_xml_limited`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XmlWritten {
    /// Nodes written: the first `nodes` nodes in document order.
    pub nodes: usize,
    /// Bytes written.
    pub bytes: usize,
    /// Whether everything was written (every `<hierarchy>` attribute and every node).
    pub complete: bool,
}

/// [`write_xml`] streamed to `out` in chunks, stopping before the document would exceed
/// `max_bytes`: `<hierarchy>` attributes, then nodes in document order, are written while the
/// document, with the end tags of the nodes still open, stays within `max_bytes`; then the open
/// nodes are closed. So the output is always well-formed XML (a document-order prefix of the tree)
/// and at most `max_bytes` long, except that the declaration and an empty
/// `<hierarchy rotation="…"></hierarchy>` are always written (under 100 bytes).
///
/// Linear in the output: nothing is built for a node that does not fit beyond what it takes to see
/// that it does not.
pub fn write_xml_limited(tree: &UiTree, max_bytes: usize, out: &mut dyn FnMut(&str)) -> XmlWritten {
    const END_NODE: &str = "</node>";
    const END_HIERARCHY: &str = "</hierarchy>";
    let mut written = 0usize;
    let mut emit = |chunk: &str, written: &mut usize| {
        out(chunk);
        *written = written.saturating_add(chunk.len());
    };
    let mut scratch = String::new();
    scratch.push_str(XML_DECLARATION);
    scratch.push_str("<hierarchy rotation=\"");
    scratch.push_str(&tree.rotation.to_string());
    scratch.push('"');
    emit(&scratch, &mut written);
    // What closing the document takes: `>` and `</hierarchy>`.
    let tail = 1 + END_HIERARCHY.len();
    let fits = |written: usize, more: usize, reserved: usize| {
        written.saturating_add(more).saturating_add(reserved) <= max_bytes
    };
    let mut complete = true;
    for (name, value) in &tree.hierarchy_extra {
        scratch.clear();
        push_attribute(&mut scratch, name, value);
        if !fits(written, scratch.len(), tail) {
            complete = false;
            break;
        }
        emit(&scratch, &mut written);
    }
    emit(">", &mut written);
    let mut nodes = 0;
    // Iterative, not recursive: a hostile dump can nest deeper than the stack allows.
    let mut open: Vec<NodeId> = Vec::new();
    if complete {
        for (id, node) in tree.iter() {
            while let Some(&top) = open.last() {
                if tree.is_in_subtree(top, id) {
                    break;
                }
                emit(END_NODE, &mut written);
                open.pop();
            }
            let leaf = tree.is_leaf(id);
            // Room for this node and every end tag still to come.
            let reserved =
                (open.len() + usize::from(!leaf)).saturating_mul(END_NODE.len()) + END_HIERARCHY.len();
            let room = max_bytes.saturating_sub(written).saturating_sub(reserved);
            scratch.clear();
            scratch.push_str("<node");
            for (name, value) in node.attributes() {
                push_attribute(&mut scratch, name, &value);
                if scratch.len() > room {
                    break;
                }
            }
            scratch.push_str(if leaf { " />" } else { ">" });
            if scratch.len() > room {
                complete = false;
                break;
            }
            emit(&scratch, &mut written);
            nodes += 1;
            if !leaf {
                open.push(id);
            }
        }
    }
    for _ in open {
        emit(END_NODE, &mut written);
    }
    emit(END_HIERARCHY, &mut written);
    XmlWritten { nodes, bytes: written, complete }
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
    fn a_limited_document_is_a_well_formed_prefix() {
        let mut b = TreeBuilder::new();
        b.open(Node::new("Root", "p", Bounds::new(0, 0, 10, 10))).unwrap();
        for i in 0..50 {
            b.open(Node::new(format!("Level{i}"), "p", Bounds::new(0, 0, 10, 10))).unwrap();
        }
        for _ in 0..51 {
            b.close().unwrap();
        }
        let t = b.finish().unwrap();
        let full = write_xml(&t);
        for max in [0, 100, 500, 2_000, 10_000, full.len() - 1, full.len()] {
            let mut out = String::new();
            let done = write_xml_limited(&t, max, &mut |c| out.push_str(c));
            assert_eq!(done.bytes, out.len());
            assert!(out.len() <= max.max(XML_DECLARATION.len() + 40), "{max}: {}", out.len());
            assert_eq!(done.complete, max >= full.len(), "{max}");
            let back = read_xml(&out).unwrap();
            assert_eq!(back.len(), done.nodes);
            if done.complete {
                assert_eq!(out, full);
            }
        }
    }

    #[test]
    fn empty_tree_writes_empty_hierarchy() {
        let xml = write_xml(&UiTree::default());
        assert!(xml.ends_with("<hierarchy rotation=\"0\"></hierarchy>"));
        assert!(read_xml(&xml).unwrap().is_empty());
    }
}
