//! Task files and suites (`docs/task-format.md`): parameterized goals with seeded parameters,
//! apps, setup SQL, hidden facts for `ask_user`, a reference solution that addresses elements by
//! resource id or text, taxonomy tags, and success criteria in the one criteria language
//! (`docs/criteria.md`).
//!
//! Every load error names file and line ([`LoadError`]). A [`TaskSpec`] becomes a
//! [`TaskInstance`] (parameters drawn from the instance seed, templates rendered) before an
//! episode runs.

pub mod criteria;
pub mod reference;
pub mod spec;
pub mod sphinx;
pub mod suite;

pub use criteria::{Criterion, CriterionKind, Op, Rules, Scope};
pub use phonebench_apps::error::LoadError;
pub use reference::{RefStep, Selector, SelectorTerm};
pub use spec::{Category, Fact, Fnv, TaskInstance, TaskSpec, instance_seed};
pub use suite::{Suite, check_against_catalog, glob_match, missing_apps};

/// `text` as a TOML basic string (quoted and escaped; control characters, DEL included, as
/// `\uXXXX`): how generated task and package files write text.
pub fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
