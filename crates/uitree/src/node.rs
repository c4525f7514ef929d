//! One UI node: the attributes uiautomator reports for an accessibility node.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::bounds::{Bounds, BoundsError};
use crate::extra::ExtraAttributes;

/// Position of a node in its [`UiTree`](crate::UiTree): nodes are stored in document order
/// (depth-first pre-order, windows one after another), so `NodeId(0)` is the first window's root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The position as a `usize`, for indexing.
    pub fn get(self) -> usize {
        self.0 as usize
    }
}

/// The attributes of one node, named as in a uiautomator dump.
///
/// The sixteen classic attributes are always present (a dump that omits one reads as its default);
/// the newer ones (`visible-to-user`, `drawing-order`, `hint`, `display-id`) are `Option` so a
/// classic dump writes back without them. Anything else is kept verbatim in [`Node::extra`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// `index`: position among the parent's children as the dumping tool numbered it.
    pub index: i32,
    /// `text`.
    pub text: String,
    /// `resource-id`, e.g. `com.android.settings:id/title`.
    pub resource_id: String,
    /// `class`, e.g. `android.widget.TextView`.
    pub class: String,
    /// `package`.
    pub package: String,
    /// `content-desc`.
    pub content_desc: String,
    /// `checkable`.
    pub checkable: bool,
    /// `checked`.
    pub checked: bool,
    /// `clickable`.
    pub clickable: bool,
    /// `enabled`.
    pub enabled: bool,
    /// `focusable`.
    pub focusable: bool,
    /// `focused`.
    pub focused: bool,
    /// `scrollable`.
    pub scrollable: bool,
    /// `long-clickable`.
    pub long_clickable: bool,
    /// `password`.
    pub password: bool,
    /// `selected`.
    pub selected: bool,
    /// `bounds`.
    pub bounds: Bounds,
    /// `visible-to-user` (uiautomator2 dumps); `None` when the dump does not say (treated as visible).
    pub visible_to_user: Option<bool>,
    /// `drawing-order` among siblings (uiautomator2 dumps); higher is drawn later, on top.
    pub drawing_order: Option<i32>,
    /// `hint` text of an editable field (uiautomator2 dumps).
    pub hint: Option<String>,
    /// `display-id` (uiautomator2 dumps).
    pub display_id: Option<i32>,
    /// `editable`, where the source knows it (the simulated phone does; uiautomator does not).
    pub editable: Option<bool>,
    /// `NAF="true"`: uiautomator's "not accessibility friendly" mark (clickable, no text or
    /// description).
    pub naf: bool,
    /// Every other attribute, in document order, verbatim (e.g. Appium's `displayed`).
    pub extra: ExtraAttributes,
}

impl Default for Node {
    fn default() -> Self {
        Node {
            index: 0,
            text: String::new(),
            resource_id: String::new(),
            class: String::new(),
            package: String::new(),
            content_desc: String::new(),
            checkable: false,
            checked: false,
            clickable: false,
            // Views are enabled unless something says otherwise.
            enabled: true,
            focusable: false,
            focused: false,
            scrollable: false,
            long_clickable: false,
            password: false,
            selected: false,
            bounds: Bounds::default(),
            visible_to_user: None,
            drawing_order: None,
            hint: None,
            display_id: None,
            editable: None,
            naf: false,
            extra: ExtraAttributes::new(),
        }
    }
}

/// An attribute value that does not fit the attribute.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttributeError {
    /// A boolean attribute that is neither `true` nor `false`.
    #[error("attribute `{name}` must be true or false, got `{value}`")]
    NotBool {
        /// Attribute name.
        name: String,
        /// The value found (first 80 characters).
        value: String,
    },
    /// An integer attribute that is not an integer.
    #[error("attribute `{name}` must be an integer, got `{value}`")]
    NotInteger {
        /// Attribute name.
        name: String,
        /// The value found (first 80 characters).
        value: String,
    },
    /// A malformed `bounds`.
    #[error(transparent)]
    Bounds(#[from] BoundsError),
}

/// The classic attribute names, in the order `uiautomator dump` writes them (`NAF` goes first).
pub const CLASSIC_ATTRIBUTES: [&str; 17] = [
    "index",
    "text",
    "resource-id",
    "class",
    "package",
    "content-desc",
    "checkable",
    "checked",
    "clickable",
    "enabled",
    "focusable",
    "focused",
    "scrollable",
    "long-clickable",
    "password",
    "selected",
    "bounds",
];

fn bool_str(value: bool) -> &'static str {
    if value { "true" } else { "false" }
}

fn parse_bool(name: &str, value: &str) -> Result<bool, AttributeError> {
    let v = value.trim();
    if v.eq_ignore_ascii_case("true") {
        Ok(true)
    } else if v.eq_ignore_ascii_case("false") {
        Ok(false)
    } else {
        Err(AttributeError::NotBool { name: name.to_string(), value: value.chars().take(80).collect() })
    }
}

fn parse_int(name: &str, value: &str) -> Result<i32, AttributeError> {
    value.trim().parse().map_err(|_| AttributeError::NotInteger {
        name: name.to_string(),
        value: value.chars().take(80).collect(),
    })
}

impl Node {
    /// A node of `class` in `package` covering `bounds`, everything else default.
    pub fn new(class: impl Into<String>, package: impl Into<String>, bounds: Bounds) -> Self {
        Node { class: class.into(), package: package.into(), bounds, ..Node::default() }
    }

    /// False only when the source says the node is not visible to the user.
    pub fn is_visible(&self) -> bool {
        self.visible_to_user != Some(false)
    }

    /// The part of the resource id after the last `/` (`com.x:id/title` → `title`).
    pub fn short_resource_id(&self) -> &str {
        self.resource_id.rsplit('/').next().unwrap_or("")
    }

    /// The part of the class name after the last `.` (`android.widget.TextView` → `TextView`).
    pub fn short_class(&self) -> &str {
        self.class.rsplit('.').next().unwrap_or("")
    }

    /// Whether the node takes typed text: the `editable` attribute when known, otherwise whether
    /// the class is an `EditText` (or a subclass named so, e.g. `AutoCompleteTextView`).
    pub fn is_editable(&self) -> bool {
        self.editable.unwrap_or_else(|| {
            let short = self.short_class();
            short.contains("EditText") || short == "AutoCompleteTextView"
        })
    }

    /// The value of an attribute by its uiautomator name, as the dump would print it (`"true"`,
    /// `"[0,0][10,10]"`). Unknown names look in [`Node::extra`]. `None` if the node has no such
    /// attribute.
    pub fn attribute(&self, name: &str) -> Option<Cow<'_, str>> {
        let b = |v: bool| Some(Cow::Borrowed(bool_str(v)));
        match name {
            "index" => Some(Cow::Owned(self.index.to_string())),
            "text" => Some(Cow::Borrowed(&self.text)),
            "resource-id" => Some(Cow::Borrowed(&self.resource_id)),
            "class" => Some(Cow::Borrowed(&self.class)),
            "package" => Some(Cow::Borrowed(&self.package)),
            "content-desc" => Some(Cow::Borrowed(&self.content_desc)),
            "checkable" => b(self.checkable),
            "checked" => b(self.checked),
            "clickable" => b(self.clickable),
            "enabled" => b(self.enabled),
            "focusable" => b(self.focusable),
            "focused" => b(self.focused),
            "scrollable" => b(self.scrollable),
            "long-clickable" => b(self.long_clickable),
            "password" => b(self.password),
            "selected" => b(self.selected),
            "bounds" => Some(Cow::Owned(self.bounds.to_string())),
            "visible-to-user" => self.visible_to_user.and_then(b),
            "drawing-order" => self.drawing_order.map(|v| Cow::Owned(v.to_string())),
            "hint" => self.hint.as_deref().map(Cow::Borrowed),
            "display-id" => self.display_id.map(|v| Cow::Owned(v.to_string())),
            "editable" => self.editable.and_then(b),
            "NAF" => self.naf.then_some(Cow::Borrowed("true")),
            other => self.extra.get(other).map(Cow::Borrowed),
        }
    }

    /// Sets an attribute from its uiautomator name and textual value, as read from a dump.
    /// Unknown names are appended to [`Node::extra`] (a repeated unknown name replaces the value);
    /// either way in constant time on average, so a node with many attributes reads in linear time.
    pub fn set_attribute(&mut self, name: &str, value: &str) -> Result<(), AttributeError> {
        match name {
            "index" => self.index = parse_int(name, value)?,
            "text" => self.text = value.to_string(),
            "resource-id" => self.resource_id = value.to_string(),
            "class" => self.class = value.to_string(),
            "package" => self.package = value.to_string(),
            "content-desc" => self.content_desc = value.to_string(),
            "checkable" => self.checkable = parse_bool(name, value)?,
            "checked" => self.checked = parse_bool(name, value)?,
            "clickable" => self.clickable = parse_bool(name, value)?,
            "enabled" => self.enabled = parse_bool(name, value)?,
            "focusable" => self.focusable = parse_bool(name, value)?,
            "focused" => self.focused = parse_bool(name, value)?,
            "scrollable" => self.scrollable = parse_bool(name, value)?,
            "long-clickable" => self.long_clickable = parse_bool(name, value)?,
            "password" => self.password = parse_bool(name, value)?,
            "selected" => self.selected = parse_bool(name, value)?,
            "bounds" => self.bounds = Bounds::parse(value)?,
            "visible-to-user" => self.visible_to_user = Some(parse_bool(name, value)?),
            "drawing-order" => self.drawing_order = Some(parse_int(name, value)?),
            "hint" => self.hint = Some(value.to_string()),
            "display-id" => self.display_id = Some(parse_int(name, value)?),
            "editable" => self.editable = Some(parse_bool(name, value)?),
            "NAF" => self.naf = parse_bool(name, value)?,
            other => self.extra.set(other, value),
        }
        Ok(())
    }

    /// Every attribute this node has, in the order the classic dump writer emits them:
    /// `NAF` (when set), the sixteen classic ones with `visible-to-user` before `bounds` as
    /// uiautomator2 does, then `drawing-order`, `hint`, `display-id`, `editable`, then extras.
    pub fn attributes(&self) -> Vec<(&str, Cow<'_, str>)> {
        let mut out = Vec::with_capacity(22 + self.extra.len());
        let mut push = |name: &'static str| {
            if let Some(v) = self.attribute(name) {
                out.push((name, v));
            }
        };
        push("NAF");
        for name in &CLASSIC_ATTRIBUTES[..16] {
            push(name);
        }
        push("visible-to-user");
        push("bounds");
        push("drawing-order");
        push("hint");
        push("display-id");
        push("editable");
        for (k, v) in &self.extra {
            out.push((k.as_str(), Cow::Borrowed(v.as_str())));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_read_back_by_name() {
        let mut n = Node::default();
        n.set_attribute("resource-id", "com.x:id/title").unwrap();
        n.set_attribute("checked", "TRUE").unwrap();
        n.set_attribute("bounds", "[1,2][3,4]").unwrap();
        n.set_attribute("displayed", "true").unwrap();
        n.set_attribute("hint", "").unwrap();
        assert_eq!(n.attribute("checked").as_deref(), Some("true"));
        assert_eq!(n.attribute("bounds").as_deref(), Some("[1,2][3,4]"));
        assert_eq!(n.attribute("displayed").as_deref(), Some("true"));
        assert_eq!(n.attribute("hint").as_deref(), Some(""));
        assert_eq!(n.attribute("display-id"), None);
        assert_eq!(n.attribute("nope"), None);
        assert_eq!(n.short_resource_id(), "title");
    }

    #[test]
    fn bad_values_name_the_attribute() {
        let mut n = Node::default();
        let e = n.set_attribute("clickable", "yes").unwrap_err();
        assert_eq!(e.to_string(), "attribute `clickable` must be true or false, got `yes`");
        let e = n.set_attribute("index", "x1").unwrap_err();
        assert!(e.to_string().contains("`index` must be an integer"));
        let e = n.set_attribute("bounds", "[0,0]").unwrap_err();
        assert!(e.to_string().contains("[left,top][right,bottom]"));
    }

    #[test]
    fn attribute_order_matches_uiautomator2() {
        let n = Node {
            naf: true,
            visible_to_user: Some(true),
            drawing_order: Some(1),
            extra: vec![("z".into(), "1".into())].into(),
            ..Node::default()
        };
        let names: Vec<_> = n.attributes().into_iter().map(|(k, _)| k).collect();
        assert_eq!(names[0], "NAF");
        assert_eq!(names[1], "index");
        let vis = names.iter().position(|k| *k == "visible-to-user").unwrap();
        let bounds = names.iter().position(|k| *k == "bounds").unwrap();
        assert_eq!(vis + 1, bounds);
        assert_eq!(names.last(), Some(&"z"));
    }

    #[test]
    fn editable_falls_back_to_class() {
        let mut n = Node::new("android.widget.EditText", "p", Bounds::default());
        assert!(n.is_editable());
        n.editable = Some(false);
        assert!(!n.is_editable());
        assert!(!Node::new("android.widget.TextView", "p", Bounds::default()).is_editable());
    }
}
