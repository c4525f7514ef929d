//! Recorded GUI traces into one model, stored and analysed: the first half of the PhoneWorld
//! pipeline (the second, synthesis, is `phonebench-synth`).
//!
//! - [`model`]: the trace model (screens as `UiTree`s, steps with actions and targets);
//! - [`read`]: one reader per format, each reporting bad files and going on;
//! - [`store`]: the traces database (`traces.db`);
//! - [`views`]: screens from DroidBot view lists and from outlines (elements without geometry);
//! - [`limits`]: how readers touch files (never through links, never past a size).
//!
//! Invariants: no reader panics or stops a batch on bad input; a trace's steps only name screens
//! of the same trace; what is read is deterministic (files sorted by name).

pub mod analyze;
pub mod html;
pub mod limits;
pub mod model;
pub mod read;
pub mod store;
pub mod views;

pub use analyze::{Analysis, Edge, Page, PageType, Priority, analyze};
pub use model::{
    Detail, ElementRef, Ingested, Problem, Screenshot, Trace, TraceFormat, TraceKind, TraceScreen, TraceStep,
};
pub use read::ingest;
pub use store::{StoreError, TraceDb};
