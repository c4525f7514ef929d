//! Capability probes beyond pass/fail (SPHINX's, and more): what a success rate hides.
//!
//! - [`item`]: the items (knowledge questions, completion judgments, step-level grounding) and
//!   the modes they are asked in;
//! - [`sphinx_data`]: SPHINX's files as items; [`generate`]: items generated from our apps by
//!   playing every task's reference on the simulated phone (the truth of every screen is known);
//! - [`prompt`]: SPHINX's prompts byte for byte (ours where SPHINX has none);
//! - [`parse`]: SPHINX's answer reading with its quirks, or strict reading;
//! - [`ask`]: one item in one mode → a [`ProbeResult`]; [`run`]: a probe into a results folder
//!   (the runs' `results.sqlite`, the response cache, infrastructure failures apart);
//! - [`score`]: SPHINX's figures; [`profile`]: capability profiles and the radar chart.
//!
//! Invariants: items are deterministic and their ids stable; a model server failing never
//! scores an item, an unreadable answer always does (as a format error); text from data is a
//! value in prompts, never a template.

pub mod ask;
pub mod generate;
pub mod item;
pub mod parse;
pub mod profile;
pub mod prompt;
pub mod run;
pub mod score;
pub mod sphinx_data;

pub use ask::{Answer, AskSettings, ProbeResult};
pub use item::{DataSource, ItemBody, Mode, ProbeItem, ProbeKind};
pub use parse::Parsing;
pub use profile::{DIMENSIONS, Profile, profile, radar_png, radar_svg};
pub use run::{ProbeConfig, ProbeError, ProbeRunOptions, ProbeRunOutcome, run_probe};
