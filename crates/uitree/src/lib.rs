//! The UI tree: one model for simulated and real Android screens.
//!
//! A screen ([`UiTree`]) is a list of [`Window`]s, each a tree of [`Node`]s carrying the
//! uiautomator attributes. Nodes live in one arena in document order, addressed by [`NodeId`].
//! [`read_xml`] reads every uiautomator dialect seen on real devices; [`write_xml`] writes the
//! classic `uiautomator dump` format, and read → write → read gives an equal tree.

mod bounds;
mod escape;
mod extra;
mod node;
mod read;
mod tree;
mod write;

pub use bounds::{Bounds, BoundsError};
pub use extra::ExtraAttributes;
pub use node::{AttributeError, CLASSIC_ATTRIBUTES, Node, NodeId};
pub use read::{XmlError, read_xml, read_xml_bytes};
pub use tree::{Bfs, BuildError, TreeBuilder, UiTree, Window, WindowId, WindowKind, infer_window_kinds};
pub use write::{XML_DECLARATION, XmlWritten, write_xml, write_xml_limited};
