//! The element list an AndroidWorld T3A agent sees.
//!
//! AndroidWorld (`env/representation_utils.forest_to_ui_elements`, called by the controller with
//! `exclude_invisible_elements=True` and no screen size) keeps, from every window, the nodes that
//! are leaves, have a content description, or are scrollable, and drops invisible ones; an
//! element's index is its position in that list. T3A
//! (`agents/t3a._generate_ui_elements_description_list_full`) then prints one line per element
//! that passes `m3a_utils.validate_ui_element` (visible, and a non-degenerate box overlapping the
//! screen), as `UI element {index}: {repr(UIElement)}` — Python's dataclass repr.
//!
//! Differences we cannot avoid: AndroidWorld reads the accessibility forest, we read a dump, so
//! `is_editable` comes from [`Node::is_editable`] and nodes are taken in document order.
//! Python's `str.isprintable` is approximated (control, separator, format and private-use
//! characters are escaped; unassigned code points are not).

use std::fmt;

use phonebench_uitree::{Bounds, Node, NodeId, UiTree};

use crate::limit::Sink;

/// The AndroidWorld element list: kept nodes in document order, window after window.
pub fn androidworld_index_table(tree: &UiTree) -> Vec<NodeId> {
    tree.iter()
        .filter(|(id, node)| {
            (tree.is_leaf(*id) || !node.content_desc.is_empty() || node.scrollable) && node.is_visible()
        })
        .map(|(id, _)| id)
        .collect()
}

/// `m3a_utils.validate_ui_element`: visible, with a box that is not degenerate and overlaps the
/// screen.
pub fn is_valid_element(node: &Node, screen: &Bounds) -> bool {
    let b = node.bounds;
    node.is_visible()
        && !(b.left >= b.right
            || b.left >= screen.right
            || b.right <= 0
            || b.top >= b.bottom
            || b.top >= screen.bottom
            || b.bottom <= 0)
}

/// Renders the T3A element lines for the given index table, whole (see [`crate::render`] for
/// the bounded form).
pub fn render_androidworld(tree: &UiTree, table: &[NodeId]) -> String {
    let mut text = String::new();
    let mut push = |s: &str| text.push_str(s);
    write_androidworld(&mut Sink::new(&mut push, usize::MAX), tree, table);
    text
}

/// Writes the T3A element lines through `sink` until one does not fit.
pub(crate) fn write_androidworld(sink: &mut Sink<'_>, tree: &UiTree, table: &[NodeId]) {
    let screen = tree.screen_bounds();
    for (index, &id) in table.iter().enumerate() {
        let node = tree.node(id);
        if is_valid_element(node, &screen) {
            // T3A ends every line with a newline, the last one included.
            let fits = sink.unit(0, |out| {
                write!(out, "UI element {index}: ")?;
                write_ui_element_repr(out, node)?;
                out.write_char('\n')
            });
            if !fits {
                return;
            }
        }
    }
}

/// `repr(UIElement(...))` as Python prints it for an element built from an accessibility node.
pub fn ui_element_repr(node: &Node) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = write_ui_element_repr(&mut out, node);
    out
}

/// [`ui_element_repr`] written to `out`.
pub fn write_ui_element_repr(out: &mut dyn fmt::Write, node: &Node) -> fmt::Result {
    let text_or_none = |out: &mut dyn fmt::Write, s: &str| {
        if s.is_empty() { out.write_str("None") } else { write_py_str_repr(out, s) }
    };
    let b = node.bounds;
    let py_bool = |v: bool| if v { "True" } else { "False" };
    out.write_str("UIElement(text=")?;
    text_or_none(out, &node.text)?;
    out.write_str(", content_description=")?;
    text_or_none(out, &node.content_desc)?;
    out.write_str(", class_name=")?;
    text_or_none(out, &node.class)?;
    write!(
        out,
        ", bbox=None, bbox_pixels=BoundingBox(x_min={}, x_max={}, y_min={}, y_max={}), hint_text=",
        b.left, b.right, b.top, b.bottom
    )?;
    text_or_none(out, node.hint.as_deref().unwrap_or(""))?;
    write!(
        out,
        ", is_checked={}, is_checkable={}, is_clickable={}, is_editable={}, is_enabled={}, \
         is_focused={}, is_focusable={}, is_long_clickable={}, is_scrollable={}, is_selected={}, \
         is_visible={}, package_name=",
        py_bool(node.checked),
        py_bool(node.checkable),
        py_bool(node.clickable),
        py_bool(node.is_editable()),
        py_bool(node.enabled),
        py_bool(node.focused),
        py_bool(node.focusable),
        py_bool(node.long_clickable),
        py_bool(node.scrollable),
        py_bool(node.selected),
        py_bool(node.is_visible()),
    )?;
    text_or_none(out, &node.package)?;
    out.write_str(", resource_name=")?;
    text_or_none(out, &node.resource_id)?;
    out.write_str(", tooltip=None, resource_id=None, metadata=None)")
}

/// Python's `str.isprintable`, approximated without a Unicode category table: control,
/// separator (other than the ASCII space), common format and private-use characters and
/// non-characters are not printable.
fn py_is_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(c,
        '\u{AD}' | '\u{600}'..='\u{605}' | '\u{61C}' | '\u{6DD}' | '\u{70F}' | '\u{180E}'
        | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{206F}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}' | '\u{FFFE}' | '\u{FFFF}'
        | '\u{E000}'..='\u{F8FF}' | '\u{F0000}'..)
}

/// Python's `repr(str)`: single quotes unless the text has `'` and no `"`, with backslash escapes.
pub fn py_str_repr(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    // Writing into a String cannot fail.
    let _ = write_py_str_repr(&mut out, s);
    out
}

/// [`py_str_repr`] written to `out`.
pub fn write_py_str_repr(out: &mut dyn fmt::Write, s: &str) -> fmt::Result {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    out.write_char(quote)?;
    // Runs of characters printed as they are go out in one piece.
    let mut plain_from = 0;
    for (at, c) in s.char_indices() {
        let plain = c != '\\' && c != quote && py_is_printable(c);
        if plain {
            continue;
        }
        out.write_str(&s[plain_from..at])?;
        plain_from = at + c.len_utf8();
        match c {
            '\\' => out.write_str("\\\\")?,
            '\n' => out.write_str("\\n")?,
            '\r' => out.write_str("\\r")?,
            '\t' => out.write_str("\\t")?,
            c if c == quote => {
                out.write_char('\\')?;
                out.write_char(c)?;
            }
            c if (c as u32) < 0x100 => write!(out, "\\x{:02x}", c as u32)?,
            c if (c as u32) < 0x10000 => write!(out, "\\u{:04x}", c as u32)?,
            c => write!(out, "\\U{:08x}", c as u32)?,
        }
    }
    out.write_str(&s[plain_from..])?;
    out.write_char(quote)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_string_repr() {
        assert_eq!(py_str_repr("abc"), "'abc'");
        assert_eq!(py_str_repr("it's"), "\"it's\"");
        assert_eq!(py_str_repr("it's \"x\""), "'it\\'s \"x\"'");
        assert_eq!(py_str_repr("a\nb\\c\t"), "'a\\nb\\\\c\\t'");
        assert_eq!(py_str_repr("\u{1}\u{a0}\u{200b}"), "'\\x01\\xa0\\u200b'");
        assert_eq!(py_str_repr("日本 😀"), "'日本 😀'");
    }

    #[test]
    fn element_repr_matches_the_dataclass_field_order() {
        let mut n = Node::new("android.widget.TextView", "com.x", Bounds::new(1, 2, 3, 4));
        n.text = "Hi".into();
        n.clickable = true;
        let r = ui_element_repr(&n);
        assert!(r.starts_with("UIElement(text='Hi', content_description=None, class_name='android.widget.TextView', bbox=None, bbox_pixels=BoundingBox(x_min=1, x_max=3, y_min=2, y_max=4), hint_text=None, is_checked=False, is_checkable=False, is_clickable=True, is_editable=False, is_enabled=True,"), "{r}");
        assert!(
            r.ends_with(
                "package_name='com.x', resource_name=None, tooltip=None, resource_id=None, metadata=None)"
            ),
            "{r}"
        );
    }

    #[test]
    fn validity_follows_m3a() {
        let screen = Bounds::new(0, 0, 100, 100);
        let ok = Node::new("c", "p", Bounds::new(0, 0, 10, 10));
        assert!(is_valid_element(&ok, &screen));
        for b in [
            Bounds::new(5, 0, 5, 10),
            Bounds::new(100, 0, 110, 10),
            Bounds::new(-10, 0, 0, 10),
            Bounds::new(0, 10, 10, 5),
        ] {
            assert!(!is_valid_element(&Node::new("c", "p", b), &screen), "{b}");
        }
        let mut hidden = ok.clone();
        hidden.visible_to_user = Some(false);
        assert!(!is_valid_element(&hidden, &screen));
    }
}
