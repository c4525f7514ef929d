//! Reading uiautomator XML in the dialects found on real devices.
//!
//! Dialects handled (all through one streaming pass with quick-xml):
//! - classic `uiautomator dump`: one `<hierarchy rotation>` with nested `<node …>` elements,
//!   usually one window root; `NAF="true"` first on some nodes; often all on one line;
//! - python-uiautomator2 `dump_hierarchy`: several window roots (status bar, navigation bar,
//!   keyboard, floating views) in no stacking order, with `visible-to-user`, `drawing-order`,
//!   `hint` and `display-id`, pretty-printed;
//! - Appium page source: elements named after their class (`<android.widget.TextView …>`), a
//!   `<hierarchy>` with `index`, `class`, `width` and `height`, and many extra attributes.
//!
//! Tolerated: any attribute order, unknown attributes (kept verbatim), missing attributes
//! (defaults), zero-area and negative bounds, roots not at the origin, text or junk before the
//! document and after `</hierarchy>` (`adb shell uiautomator dump /dev/tty` appends a status
//! line), a byte-order mark, comments and processing instructions, surrogate-pair character
//! references and stray `&` (see `escape.rs`), and a bare `<node>` root without `<hierarchy>`.
//! Errors carry line and column.

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use crate::escape::unescape_attribute;
use crate::node::Node;
use crate::tree::{BuildError, TreeBuilder, UiTree};

/// Why a document could not be read as a UI tree, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct XmlError {
    /// 1-based line of the offending markup.
    pub line: usize,
    /// 1-based column (in characters) of the offending markup.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

fn position(text: &str, byte_offset: usize) -> (usize, usize) {
    let mut offset = byte_offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

fn error_at(text: &str, byte_offset: usize, message: impl Into<String>) -> XmlError {
    let (line, column) = position(text, byte_offset);
    XmlError { line, column, message: message.into() }
}

/// Reads a UI tree from raw bytes: UTF-8 (with or without a byte-order mark).
pub fn read_xml_bytes(bytes: &[u8]) -> Result<UiTree, XmlError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => read_xml(text),
        Err(e) => {
            let valid = &bytes[..e.valid_up_to()];
            // The prefix is valid UTF-8 by construction, so this cannot fail.
            let prefix = std::str::from_utf8(valid).unwrap_or("");
            let (line, column) = position(prefix, prefix.len());
            Err(XmlError {
                line,
                column,
                message: format!("not UTF-8: invalid byte at offset {}", e.valid_up_to()),
            })
        }
    }
}

/// Reads a UI tree from a uiautomator / uiautomator2 / Appium XML document.
pub fn read_xml(text: &str) -> Result<UiTree, XmlError> {
    let body = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let bom = text.len() - body.len();
    let mut reader = Reader::from_str(body);
    // Element names are checked against their end tags; text content is ignored anyway.
    reader.config_mut().check_end_names = true;

    let mut builder = TreeBuilder::new();
    let mut hierarchy_open = false;
    let mut hierarchy_closed = false;
    let mut seen_any_element = false;

    loop {
        let start = reader.buffer_position() as usize + bom;
        let event = reader.read_event().map_err(|e| {
            let at = reader.error_position() as usize + bom;
            error_at(text, at, format!("malformed XML: {e}"))
        })?;
        // `<x/>` is an element with no children: a leaf node, or a whole (empty) hierarchy.
        let self_closing = matches!(event, Event::Empty(_));
        match event {
            Event::Start(e) | Event::Empty(e) if hierarchy_closed => {
                let name = e.name().as_ref().to_string();
                return Err(error_at(text, start, format!("element <{name}> after </hierarchy>")));
            }
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == "hierarchy" && !hierarchy_open => {
                if seen_any_element {
                    return Err(error_at(text, start, "<hierarchy> inside another element"));
                }
                read_hierarchy_attributes(&e, &mut builder, text, start)?;
                hierarchy_open = !self_closing;
                hierarchy_closed = self_closing;
                seen_any_element = true;
            }
            Event::Start(e) | Event::Empty(e) => {
                seen_any_element = true;
                let node = read_node(&e, text, start)?;
                let built = if self_closing { builder.leaf(node) } else { builder.open(node) };
                built.map_err(|err| build_error(text, start, err))?;
            }
            Event::End(e) => {
                if hierarchy_open && builder.open_depth() == 0 && e.name().as_ref() == "hierarchy" {
                    hierarchy_open = false;
                    hierarchy_closed = true;
                } else {
                    builder.close().map_err(|err| build_error(text, start, err))?;
                }
            }
            Event::Eof => break,
            // Text (including junk around the document), comments, declarations, doctype,
            // CDATA and processing instructions carry nothing for the tree.
            _ => {}
        }
    }
    if !seen_any_element {
        return Err(error_at(text, 0, "no <hierarchy> or <node> element: not a UI dump"));
    }
    let open = builder.open_depth() + usize::from(hierarchy_open);
    if open > 0 {
        return Err(error_at(
            text,
            text.len(),
            format!("unexpected end of document with {open} element(s) still open (truncated dump?)"),
        ));
    }
    builder.finish().map_err(|err| build_error(text, text.len(), err))
}

fn build_error(text: &str, at: usize, err: BuildError) -> XmlError {
    error_at(text, at, err.to_string())
}

fn read_hierarchy_attributes(
    e: &BytesStart<'_>,
    builder: &mut TreeBuilder,
    text: &str,
    start: usize,
) -> Result<(), XmlError> {
    for attr in e.attributes() {
        let attr =
            attr.map_err(|err| error_at(text, start, format!("bad attribute on <hierarchy>: {err}")))?;
        let name = attr.key.as_ref();
        check_name("attribute", name, text, start)?;
        let raw = attr.value;
        let value = unescape_attribute(&raw);
        if name == "rotation" {
            let rotation = value.trim().parse::<i32>().map_err(|_| {
                error_at(text, start, format!("<hierarchy> rotation must be an integer, got `{value}`"))
            })?;
            builder.rotation(rotation);
        } else {
            builder.hierarchy_attribute(name, &value);
        }
    }
    Ok(())
}

/// True for a well-formed XML name. quick-xml does not check names, and a name becomes a class
/// (Appium tags) or is written back (unknown attributes), so a broken one must be refused here.
fn is_xml_name(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else { return false };
    let start_ok = |c: char| c.is_alphabetic() || c == '_' || c == ':';
    start_ok(first) && chars.all(|c| start_ok(c) || c.is_alphanumeric() || c == '-' || c == '.')
}

fn check_name(kind: &str, name: &str, text: &str, start: usize) -> Result<(), XmlError> {
    if is_xml_name(name) {
        Ok(())
    } else {
        let shown: String = name.chars().take(40).collect();
        Err(error_at(text, start, format!("invalid {kind} name `{}`", shown.escape_debug())))
    }
}

fn read_node(e: &BytesStart<'_>, text: &str, start: usize) -> Result<Node, XmlError> {
    let tag = e.name().as_ref().to_string();
    check_name("element", &tag, text, start)?;
    let mut node = Node::default();
    let mut has_class = false;
    for attr in e.attributes() {
        let attr = attr.map_err(|err| error_at(text, start, format!("bad attribute on <{tag}>: {err}")))?;
        let name = attr.key.as_ref();
        check_name("attribute", name, text, start)?;
        let raw = attr.value;
        let value = unescape_attribute(&raw);
        has_class |= name == "class";
        node.set_attribute(name, &value).map_err(|err| error_at(text, start, format!("<{tag}>: {err}")))?;
    }
    // Appium names elements after their class; uiautomator's <node> always carries `class`.
    if !has_class && tag != "node" {
        node.class = tag;
    }
    Ok(node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::Bounds;

    const CLASSIC: &str = r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="1"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.x" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][720,1280]"><node NAF="true" index="0" text="Tom &amp; Jerry&#10;😀" resource-id="com.x:id/t" class="android.widget.ImageButton" package="com.x" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][0,0]" /></node></hierarchy>"#;

    #[test]
    fn reads_classic_dump() {
        let t = read_xml(CLASSIC).unwrap();
        assert_eq!(t.rotation, 1);
        assert_eq!(t.len(), 2);
        assert_eq!(t.windows().len(), 1);
        let leaf = t.node(crate::NodeId(1));
        assert!(leaf.naf);
        assert!(leaf.clickable);
        assert_eq!(leaf.text, "Tom & Jerry\n😀");
        assert_eq!(leaf.bounds, Bounds::new(0, 0, 0, 0));
        assert_eq!(t.parent(crate::NodeId(1)), Some(crate::NodeId(0)));
    }

    #[test]
    fn tolerates_junk_around_the_document_and_a_bom() {
        let doc = format!("\u{FEFF}{CLASSIC}\nUI hierchary dumped to: /dev/tty\n");
        assert_eq!(read_xml(&doc).unwrap().len(), 2);
    }

    #[test]
    fn reads_appium_class_named_elements() {
        let doc = r#"<hierarchy index="0" class="hierarchy" rotation="0" width="1920" height="957">
          <android.widget.FrameLayout index="0" package="p" bounds="[640,79][1898,957]" displayed="true">
            <android.widget.TextView index="0" package="p" text="Hi" bounds="[700,100][800,150]"/>
          </android.widget.FrameLayout></hierarchy>"#;
        let t = read_xml(doc).unwrap();
        assert_eq!(t.node(crate::NodeId(1)).class, "android.widget.TextView");
        assert_eq!(t.node(crate::NodeId(0)).attribute("displayed").as_deref(), Some("true"));
        assert_eq!(t.screen_bounds(), Bounds::new(0, 0, 1920, 957));
        assert_eq!(t.hierarchy_extra.len(), 4);
    }

    #[test]
    fn reads_bare_node_root() {
        let t = read_xml(r#"<node class="a" bounds="[0,0][1,1]"><node class="b"/></node>"#).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t.windows().len(), 1);
    }

    #[test]
    fn empty_hierarchy_is_an_empty_tree() {
        assert!(read_xml("<hierarchy rotation=\"0\"/>").unwrap().is_empty());
        assert!(read_xml("<hierarchy rotation=\"0\"></hierarchy>").unwrap().is_empty());
    }

    #[test]
    fn errors_name_line_and_problem() {
        let e = read_xml("").unwrap_err();
        assert!(e.message.contains("not a UI dump"), "{e}");
        let e = read_xml("<hierarchy>\n<node bounds=\"[0,0]\"/></hierarchy>").unwrap_err();
        assert_eq!((e.line, e.column), (2, 1));
        assert!(e.message.contains("[left,top][right,bottom]"), "{e}");
        let e = read_xml("<hierarchy>\n  <node clickable=\"maybe\"/></hierarchy>").unwrap_err();
        assert_eq!((e.line, e.column), (2, 3));
        assert!(e.message.contains("`clickable` must be true or false"), "{e}");
        let e = read_xml("<hierarchy><node><node></hierarchy>").unwrap_err();
        assert!(e.message.contains("malformed XML"), "{e}");
        let e = read_xml("<hierarchy><node>").unwrap_err();
        assert!(e.message.contains("still open"), "{e}");
        let e = read_xml("<hierarchy></hierarchy><node/>").unwrap_err();
        assert!(e.message.contains("after </hierarchy>"), "{e}");
        let e = read_xml("<hierarchy><node\u{0}/></hierarchy>").unwrap_err();
        assert!(e.message.contains("invalid element name"), "{e}");
        let e = read_xml("<hierarchy rotation=\"x\"/>").unwrap_err();
        assert!(e.message.contains("rotation must be an integer"), "{e}");
        let e = read_xml("<hierarchy><node a=\"1\" a=\"2\"/></hierarchy>").unwrap_err();
        assert!(e.message.contains("bad attribute"), "{e}");
        let e = read_xml_bytes(b"<hierarchy>\n<node text=\"\xff\"/></hierarchy>").unwrap_err();
        assert!(e.message.contains("not UTF-8"), "{e}");
        assert_eq!(e.line, 2);
    }
}
