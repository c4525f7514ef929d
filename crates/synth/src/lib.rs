//! Synthesis from recorded traces (the second half of the PhoneWorld pipeline):
//!
//! - [`app`]: an app package rebuilt from an analysis (`phonebench synthesize-app`);
//! - [`fidelity`]: how close the rebuilt app is to the recording, measured on the simulated
//!   phone (transitions reproduced, structural similarity of screens);
//! - [`tasks`]: a task suite grounded in a package's content, state and graph, with references
//!   found by searching the app on the simulated phone (`phonebench synthesize-tasks`).
//!
//! Invariants: generation is deterministic (same input, same files); recorded text reaches
//! packages only as SQL string literals and escaped XML, never as template or SQL source.

pub mod app;
pub mod fidelity;
pub mod tasks;

pub use app::{AppOptions, SynthApp, synthesize_app};

/// A TOML basic string.
pub(crate) fn toml_str(s: &str) -> String {
    phonebench_tasks::toml_string(s)
}

/// Lower-case ASCII letters and digits of `text`, other runs as one `_`, at most `max` long:
/// names for screens and task ids.
pub(crate) fn slug(text: &str, max: usize) -> String {
    let mut s = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('_') && !s.is_empty() {
            s.push('_');
        }
        if s.len() >= max {
            break;
        }
    }
    s.trim_end_matches('_').to_string()
}

/// Why synthesis failed.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    /// The input cannot give what was asked.
    #[error("{0}")]
    Input(String),
    /// Writing failed.
    #[error("{0}")]
    Io(String),
    /// The generated package does not load or play.
    #[error("the generated app does not load: {0}")]
    Load(String),
}
