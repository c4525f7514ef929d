//! Observations: what an agent is shown of a screen, and how its action targets map back.
//!
//! [`render`] turns a [`UiTree`] into an [`Observation`] in one of the [`ObservationFormat`]s.
//! Every observation carries its index table ([`Observation::targets`]): element index `i` in
//! the text means node `targets[i]`. [`Observation::resolve_target`] maps an action's target
//! back to a node: an index through the table, a point by hit-testing the tree.
//!
//! Every observation is bounded: its text is at most [`MAX_OBSERVATION_BYTES`] (or the limit given
//! to [`render_with_limit`]), cut at a whole line or element, and [`Observation::truncated`] says
//! when it was cut. Rendering is linear in the text's size whatever the tree (see `limit.rs`).

pub mod androidworld;
pub mod elements;
mod limit;
pub mod sphinx;

use std::fmt;
use std::str::FromStr;

use phonebench_actions::{Action, Target};
use phonebench_uitree::{NodeId, UiTree, write_xml_limited};

pub use limit::{MAX_INDENT_DEPTH, MAX_OBSERVATION_BYTES};

use crate::limit::Sink;

/// The text formats an observation can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ObservationFormat {
    /// The uiautomator XML itself (classic dump format). Index `i` is the `i`-th node in document
    /// order.
    Uiautomator,
    /// SPHINX's indented accessibility tree (`tree` mode).
    SphinxTree,
    /// SPHINX's simplified list of interactable widgets (`text` mode).
    SphinxList,
    /// AndroidWorld T3A's `UI element i: UIElement(...)` lines.
    AndroidWorld,
    /// UINavBench-style detected elements as JSON (id, type, text, box, clickable).
    Elements,
}

impl ObservationFormat {
    /// Every format, in the order the CLI lists them.
    pub const ALL: [ObservationFormat; 5] = [
        ObservationFormat::Uiautomator,
        ObservationFormat::SphinxTree,
        ObservationFormat::SphinxList,
        ObservationFormat::AndroidWorld,
        ObservationFormat::Elements,
    ];

    /// The format's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ObservationFormat::Uiautomator => "uiautomator",
            ObservationFormat::SphinxTree => "sphinx-tree",
            ObservationFormat::SphinxList => "sphinx-list",
            ObservationFormat::AndroidWorld => "androidworld",
            ObservationFormat::Elements => "elements",
        }
    }
}

impl fmt::Display for ObservationFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A format name that is not one of [`ObservationFormat::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown observation format `{0}`; expected one of uiautomator, sphinx-tree, sphinx-list, androidworld, elements"
)]
pub struct UnknownFormat(pub String);

impl FromStr for ObservationFormat {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ObservationFormat::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

/// What an agent is shown, with the table its element indexes refer to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// The format of `text`.
    pub format: ObservationFormat,
    /// The rendered text.
    pub text: String,
    /// Index table: element index `i` in `text` is node `targets[i]` of the tree it was rendered
    /// from. Always the whole table, also when `text` was cut short and leaves some elements out.
    pub targets: Vec<NodeId>,
    /// True when `text` was cut short at the size limit ([`MAX_OBSERVATION_BYTES`] unless
    /// [`render_with_limit`] gave another): it then holds the format's lines or elements up to
    /// the first that did not fit, and nothing after it. `uiautomator` text stays well-formed XML
    /// (the open nodes are closed) and `elements` a closed JSON array.
    pub truncated: bool,
}

/// Renders `tree` as an observation in `format`, its text at most [`MAX_OBSERVATION_BYTES`].
pub fn render(tree: &UiTree, format: ObservationFormat) -> Observation {
    render_with_limit(tree, format, MAX_OBSERVATION_BYTES)
}

/// Renders `tree` as an observation in `format`, its text at most `max_bytes` long (beyond a few
/// bytes the format always needs: an empty XML document, `[]`).
pub fn render_with_limit(tree: &UiTree, format: ObservationFormat, max_bytes: usize) -> Observation {
    // About a line per node, so the text grows without copying itself over and over.
    let mut text = String::with_capacity(tree.len().saturating_mul(96).min(max_bytes));
    let written = write_text(tree, format, max_bytes, &mut |chunk| text.push_str(chunk));
    Observation { format, text, targets: written.targets, truncated: written.truncated }
}

/// What [`write_observation`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The index table, as [`Observation::targets`].
    pub targets: Vec<NodeId>,
    /// Whether the text was cut at the limit, as [`Observation::truncated`].
    pub truncated: bool,
    /// Bytes written.
    pub bytes: usize,
}

/// Streams the text of [`render_with_limit`] to `out` as it is produced, without holding it: the
/// same bytes, in pieces of a line or element each.
pub fn write_observation(
    tree: &UiTree,
    format: ObservationFormat,
    max_bytes: usize,
    out: &mut dyn std::io::Write,
) -> std::io::Result<Written> {
    let mut failed: Option<std::io::Error> = None;
    let written = write_text(tree, format, max_bytes, &mut |chunk| {
        // After a failed write nothing more is attempted; the first error is reported.
        if failed.is_none()
            && let Err(e) = out.write_all(chunk.as_bytes())
        {
            failed = Some(e);
        }
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(written),
    }
}

fn write_text(
    tree: &UiTree,
    format: ObservationFormat,
    max_bytes: usize,
    out: &mut dyn FnMut(&str),
) -> Written {
    if format == ObservationFormat::Uiautomator {
        let done = write_xml_limited(tree, max_bytes, out);
        return Written { targets: tree.node_ids().collect(), truncated: !done.complete, bytes: done.bytes };
    }
    let mut sink = Sink::new(out, max_bytes);
    let targets = match format {
        ObservationFormat::Uiautomator => Vec::new(),
        ObservationFormat::SphinxTree => {
            let table = sphinx::sphinx_index_table(tree);
            sphinx::write_sphinx_tree(&mut sink, tree, &table);
            table
        }
        ObservationFormat::SphinxList => {
            let table = sphinx::sphinx_index_table(tree);
            sphinx::write_sphinx_list(&mut sink, tree, &table);
            table
        }
        ObservationFormat::AndroidWorld => {
            let table = androidworld::androidworld_index_table(tree);
            androidworld::write_androidworld(&mut sink, tree, &table);
            table
        }
        ObservationFormat::Elements => {
            let table = elements::elements_index_table(tree);
            elements::write_elements(&mut sink, tree, &table);
            table
        }
    };
    Written { targets, truncated: sink.truncated(), bytes: sink.written() }
}

/// Where an action target lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolvedTarget {
    /// The node hit: the indexed node, or the topmost deepest node under the point (`None` when
    /// the point is on no window).
    pub node: Option<NodeId>,
    /// The screen point a touch goes to: the given point, or the centre of the indexed node.
    pub point: (i32, i32),
}

/// A target that cannot be resolved against an observation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// The index is not in the observation's table.
    #[error("element index {index} is not on this screen ({})", describe_range(*.count))]
    IndexOutOfRange {
        /// The index asked for.
        index: u32,
        /// How many elements the observation has.
        count: usize,
    },
    /// A natural-language description needs a grounding model to become a point.
    #[error("target `{0}` is a description: it needs a grounding model to resolve")]
    NeedsGrounding(String),
}

fn describe_range(count: usize) -> String {
    match count {
        0 => "it has no elements".to_string(),
        1 => "it has 1 element, index 0".to_string(),
        n => format!("it has {n} elements, 0–{}", n - 1),
    }
}

impl Observation {
    /// The node behind element index `index`.
    pub fn node_at(&self, index: u32) -> Option<NodeId> {
        self.targets.get(index as usize).copied()
    }

    /// Resolves a target against this observation and the tree it was rendered from.
    pub fn resolve_target(&self, tree: &UiTree, target: &Target) -> Result<ResolvedTarget, ResolveError> {
        match target {
            Target::Index(index) => {
                let node = self
                    .node_at(*index)
                    .ok_or(ResolveError::IndexOutOfRange { index: *index, count: self.targets.len() })?;
                Ok(ResolvedTarget { node: Some(node), point: tree.node(node).bounds.center() })
            }
            Target::Point(p) => Ok(ResolvedTarget { node: tree.hit_test(p.x, p.y), point: (p.x, p.y) }),
            Target::Description(d) => Err(ResolveError::NeedsGrounding(d.clone())),
        }
    }

    /// Resolves an action's primary target (for a drag, where it starts); `Ok(None)` for actions
    /// without one (keys, typing into the focused field, answers…).
    pub fn resolve(&self, tree: &UiTree, action: &Action) -> Result<Option<ResolvedTarget>, ResolveError> {
        action.primary_target().map(|t| self.resolve_target(tree, t)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phonebench_actions::Point;
    use phonebench_uitree::{Bounds, Node, TreeBuilder};

    fn tree() -> UiTree {
        let mut b = TreeBuilder::new();
        b.open(Node::new("android.widget.FrameLayout", "app", Bounds::new(0, 0, 100, 200))).unwrap();
        let mut button = Node::new("android.widget.Button", "app", Bounds::new(10, 10, 50, 30));
        button.clickable = true;
        button.text = "OK".into();
        b.leaf(button).unwrap();
        b.close().unwrap();
        b.finish().unwrap()
    }

    #[test]
    fn format_names_round_trip() {
        for f in ObservationFormat::ALL {
            assert_eq!(f.name().parse::<ObservationFormat>().unwrap(), f);
        }
        let e = "xml".parse::<ObservationFormat>().unwrap_err();
        assert!(e.to_string().contains("unknown observation format `xml`"));
    }

    #[test]
    fn resolves_index_point_and_description() {
        let t = tree();
        let obs = render(&t, ObservationFormat::SphinxList);
        assert_eq!(obs.text, "[0] a View (text: OK, class: android.widget.Button) to click");
        let r = obs.resolve_target(&t, &Target::Index(0)).unwrap();
        assert_eq!(r, ResolvedTarget { node: Some(NodeId(1)), point: (30, 20) });
        let r = obs.resolve_target(&t, &Target::Point(Point::new(5, 5))).unwrap();
        assert_eq!(r.node, Some(NodeId(0)));
        let r = obs.resolve_target(&t, &Target::Point(Point::new(500, 500))).unwrap();
        assert_eq!(r.node, None);
        let e = obs.resolve_target(&t, &Target::Index(3)).unwrap_err();
        assert_eq!(e.to_string(), "element index 3 is not on this screen (it has 1 element, index 0)");
        assert!(matches!(
            obs.resolve_target(&t, &Target::Description("the OK button".into())),
            Err(ResolveError::NeedsGrounding(_))
        ));
        let tap = Action::Tap { target: Target::Index(0) };
        assert_eq!(obs.resolve(&t, &tap).unwrap().unwrap().node, Some(NodeId(1)));
        assert_eq!(obs.resolve(&t, &Action::Wait { ms: None }).unwrap(), None);
    }

    #[test]
    fn uiautomator_table_is_document_order() {
        let t = tree();
        let obs = render(&t, ObservationFormat::Uiautomator);
        assert_eq!(obs.targets, vec![NodeId(0), NodeId(1)]);
        assert!(obs.text.starts_with("<?xml"));
    }
}
