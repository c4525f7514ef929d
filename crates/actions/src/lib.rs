//! Phone actions: the canonical [`Action`] type and the syntaxes agents write it in.
//!
//! - [`action`]: the canonical types (their serde form is the canonical JSON syntax).
//! - [`sphinx`]: SPHINX's `click [3]` / `text [3] [hi]` / `press [back]` syntax, with its quirks.
//! - [`json_action`]: AndroidWorld / MobileWorld `{"action_type": …}` JSON.
//! - [`canonical`]: canonical JSON parsing and printing.
//! - [`coords`]: coordinate models (UI-TARS, Qwen-VL, GUI-Owl, Doubao) answering with screen
//!   points in their own coordinate spaces, mapped into the screen's pixels.
//! - [`syntax`]: choosing a syntax (or detecting it), parse options, dispatching.
//!
//! Every parser returns an [`Action`] or a [`ParseError`] naming the problem, and never panics,
//! whatever the input. Every printer returns the text or a [`PrintError`] saying why the syntax
//! cannot express the action; parsing printed text gives the action back.

pub mod action;
pub mod canonical;
pub mod coords;
pub mod error;
pub mod json_action;
pub mod sphinx;
pub mod syntax;

pub use action::{Action, Direction, FinishStatus, Key, McpTool, Point, Swipe, Target};
pub use coords::{
    CoordConvention, CoordSpace, CoordSyntax, parse_coord_action, parse_grounding_point, smart_resize,
    to_screen,
};
pub use error::{ParseError, PrintError};
pub use syntax::{ParseOptions, SphinxMode, Syntax, parse_action, parse_action_with, print_action};
