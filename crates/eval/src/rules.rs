//! Attribute rules: comparing one value with an [`Op`], and a set of rules with a node or an
//! action (upstream: `key in attrib and attrib[key] == value`, or `value in attrib[key]`).

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;

use phonebench_tasks::{Op, Rules};
use phonebench_uitree::Node;
use regex::Regex;

/// Compares values with operators, compiling each regular expression once per evaluation.
#[derive(Default)]
pub(crate) struct Matcher {
    regexes: RefCell<HashMap<String, Regex>>,
}

impl Matcher {
    /// Compiles the regular expressions of `rules`, so matching never meets a bad one: a bad
    /// expression fails the criterion that holds it, with the reason.
    pub fn prepare(&self, rules: &Rules) -> Result<(), String> {
        for (key, op) in &rules.0 {
            if let Op::Regex(pattern) = op {
                self.prepare_pattern(pattern).map_err(|e| format!("rule on `{key}`: {e}"))?;
            }
        }
        Ok(())
    }

    /// Compiles one pattern.
    pub fn prepare_pattern(&self, pattern: &str) -> Result<(), String> {
        let mut cache = self.regexes.borrow_mut();
        if !cache.contains_key(pattern) {
            let regex =
                Regex::new(pattern).map_err(|e| format!("bad regular expression `{pattern}`: {e}"))?;
            cache.insert(pattern.to_string(), regex);
        }
        Ok(())
    }

    /// Whether a pattern compiled by [`Matcher::prepare_pattern`] matches `value`.
    pub fn regex_matches(&self, pattern: &str, value: &str) -> bool {
        // Unprepared patterns never match; every caller prepares first.
        self.regexes.borrow().get(pattern).is_some_and(|r| r.is_match(value))
    }

    /// Whether `value` satisfies `op`.
    pub fn op_matches(&self, op: &Op, value: &str) -> bool {
        match op {
            Op::Equals(expected) => value == expected,
            Op::Contains(part) => value.contains(part.as_str()),
            Op::Regex(pattern) => self.regex_matches(pattern, value),
        }
    }

    /// Whether every rule holds, looking attributes up with `lookup` (a missing attribute fails
    /// its rule).
    pub fn all_hold<'v>(&self, rules: &[(&str, &Op)], lookup: impl Fn(&str) -> Option<Cow<'v, str>>) -> bool {
        rules.iter().all(|(key, op)| lookup(key).is_some_and(|v| self.op_matches(op, &v)))
    }

    /// Whether every rule holds on a node's attributes.
    pub fn node_matches(&self, rules: &[(&str, &Op)], node: &Node) -> bool {
        rules.iter().all(|(key, op)| node.attribute(key).is_some_and(|v| self.op_matches(op, &v)))
    }
}

/// The rules as `(key, op)` pairs, keeping those `keep` accepts.
pub(crate) fn select(rules: &Rules, keep: impl Fn(&str) -> bool) -> Vec<(&str, &Op)> {
    rules.0.iter().filter(|(k, _)| keep(k)).map(|(k, op)| (k.as_str(), op)).collect()
}

/// `key="value"`, `key~"part"`, `key=/re/`: a rule as written in reports.
pub(crate) fn show_rule(key: &str, op: &Op) -> String {
    match op {
        Op::Equals(v) => format!("{key}={v:?}"),
        Op::Contains(v) => format!("{key}~{v:?}"),
        Op::Regex(v) => format!("{key}=/{v}/"),
    }
}

/// The rules that fail, each with the value found: for details of a failed check.
pub(crate) fn explain_failures<'v>(
    matcher: &Matcher,
    rules: &[(&str, &Op)],
    lookup: impl Fn(&str) -> Option<Cow<'v, str>>,
) -> String {
    let failures: Vec<String> = rules
        .iter()
        .filter_map(|(key, op)| match lookup(key) {
            Some(v) if matcher.op_matches(op, &v) => None,
            Some(v) => Some(format!("{} but {key} is {:?}", show_rule(key, op), clip(&v))),
            None => Some(format!("{} but there is no {key}", show_rule(key, op))),
        })
        .collect();
    failures.join("; ")
}

/// A short description of a node for reports.
pub(crate) fn describe_node(node: &Node) -> String {
    let mut parts = vec![node.short_class().to_string()];
    if !node.resource_id.is_empty() {
        parts.push(format!("id={}", node.resource_id));
    }
    if !node.text.is_empty() {
        parts.push(format!("text={:?}", clip(&node.text)));
    }
    if !node.content_desc.is_empty() {
        parts.push(format!("desc={:?}", clip(&node.content_desc)));
    }
    parts.push(node.bounds.to_string());
    parts.join(" ")
}

/// At most 60 characters, for reports.
pub(crate) fn clip(text: &str) -> String {
    const MAX: usize = 60;
    if text.chars().count() <= MAX {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(MAX).collect();
        s.push('…');
        s
    }
}
