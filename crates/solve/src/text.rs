//! Text the search types and answers, and the goal's words it steers by.
//!
//! Typed and answered text comes from the task's parameters that the goal shows (every scalar,
//! and every field of a table, whose text appears in the goal: a hidden parameter, such as an
//! expected answer, is never used), the goal (quoted strings, numbers), and what the episode learnt (`ask_user` replies,
//! MCP results: quoted strings and words with digits); answers also from the screen. Never from
//! the reference.

use std::collections::BTreeSet;

use phonebench_env::Trajectory;
use phonebench_tasks::TaskInstance;
use phonebench_uitree::UiTree;
use serde_json::Value;

/// Words too common to steer by.
const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "from", "that", "this", "then", "than", "what", "which", "when", "where",
    "who", "how", "into", "onto", "your", "you", "are", "was", "were", "has", "have", "had", "its", "it's",
    "all", "any", "our", "out", "not", "but", "can", "will", "just", "about", "there", "their", "them",
    "they", "his", "her", "she", "him", "one", "use", "using", "make", "sure", "app", "please", "tell",
    "give", "answer",
];

/// Lower-case words of `text` (letters and digits, at least three characters, or any number),
/// stop words left out.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| {
            (w.chars().count() >= 3 || w.chars().all(|c| c.is_ascii_digit()))
                && !STOP_WORDS.contains(&w.as_str())
        })
        .collect()
}

/// A text the search may type or answer, with the words naming what it is (the parameter and
/// field names, or the question it answered), to match a field's id and hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextCandidate {
    /// The text.
    pub text: String,
    /// What it is: words of its parameter and field names.
    pub key: Vec<String>,
}

/// The goal's words (and the parameters'), which actions on elements that show them favour.
#[derive(Debug, Clone, Default)]
pub struct GoalWords {
    /// Words of the goal and the parameter values.
    pub words: BTreeSet<String>,
    /// The static text candidates (parameters, then the goal's quoted strings and numbers).
    pub candidates: Vec<TextCandidate>,
    /// The digits of the goal's numbers.
    pub digits: BTreeSet<char>,
}

impl GoalWords {
    /// The goal's words and text candidates of `instance`.
    pub fn of(instance: &TaskInstance) -> GoalWords {
        let mut words: BTreeSet<String> = words(&instance.goal).into_iter().collect();
        let mut candidates = Vec::new();
        // Only what the agent is told: a parameter the goal does not show (an expected answer,
        // an id) is hidden from agents, and so from the oracle.
        let goal = instance.goal.to_lowercase();
        let shown = |c: &TextCandidate| goal.contains(&c.text.to_lowercase());
        for (name, value) in &instance.params {
            let key = self::words(name);
            match value {
                Value::Object(fields) => {
                    for (field, v) in fields {
                        let mut k = key.clone();
                        k.extend(self::words(field));
                        push_value(&mut candidates, v, k);
                    }
                }
                v => push_value(&mut candidates, v, key),
            }
        }
        candidates.retain(shown);
        for c in &candidates {
            words.extend(self::words(&c.text));
        }
        for q in quoted(&instance.goal) {
            push(&mut candidates, q, Vec::new());
        }
        for n in numbers(&instance.goal) {
            push(&mut candidates, n, Vec::new());
        }
        // Zero pads keypad entries (`1`, `2`, `00` for 12 minutes).
        let digits = instance.goal.chars().filter(char::is_ascii_digit).chain(std::iter::once('0')).collect();
        GoalWords { words, candidates, digits }
    }

    /// How many of the goal's words the screen shows (texts and content descriptions).
    pub fn on_screen(&self, tree: &UiTree) -> usize {
        let mut shown = BTreeSet::new();
        for (_, node) in tree.iter() {
            for w in words(&node.text).into_iter().chain(words(&node.content_desc)) {
                if self.words.contains(&w) {
                    shown.insert(w);
                }
            }
        }
        shown.len()
    }

    /// Whether `label` is a keypad key for the goal's numbers: one or two digits, each a digit of
    /// a number in the goal (`4` and `5` for "45 minutes").
    pub fn digit_key(&self, label: &str) -> bool {
        let label = label.trim();
        !label.is_empty()
            && label.len() <= 2
            && label.chars().all(|c| c.is_ascii_digit() && self.digits.contains(&c))
    }

    /// Whether any of `words` is one of the goal's.
    pub fn matches(&self, words: &[String]) -> bool {
        words.iter().any(|w| self.words.contains(w))
    }
}

fn push_value(out: &mut Vec<TextCandidate>, value: &Value, key: Vec<String>) {
    match value {
        Value::String(s) => push(out, s.clone(), key),
        Value::Number(n) => push(out, n.to_string(), key),
        _ => {}
    }
}

fn push(out: &mut Vec<TextCandidate>, text: String, key: Vec<String>) {
    let text = text.trim().to_string();
    if text.is_empty() || text.chars().count() > 200 || out.iter().any(|c| c.text == text) {
        return;
    }
    out.push(TextCandidate { text, key });
}

/// Strings between quotes (`"…"`, `“…”`, `'…'` when it does not look like an apostrophe).
pub fn quoted(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [('"', '"'), ('“', '”'), ('\'', '\'')] {
        let mut rest = text;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            let inner = &after[..end];
            let apostrophe = open == '\''
                && (rest[..start].chars().last().is_some_and(char::is_alphanumeric)
                    || inner.contains(' ') && inner.len() > 60);
            if !apostrophe && !inner.trim().is_empty() {
                out.push(inner.to_string());
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    out
}

/// Numbers and times in `text` (`42`, `7:30`, `3.5`), trailing punctuation cut.
pub fn numbers(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
        .map(|w| w.trim_end_matches(['.', '!', '?', ';']))
        .filter(|w| {
            !w.is_empty()
                && w.chars().next().is_some_and(|c| c.is_ascii_digit())
                && w.chars().all(|c| c.is_ascii_digit() || c == ':' || c == '.' || c == '-' || c == '/')
        })
        .map(str::to_string)
        .collect()
}

/// Text the episode learnt: from each `ask_user` reply and MCP result, its quoted strings, its
/// words with digits, and the whole reply when it is short.
pub fn dynamic_candidates(trajectory: &Trajectory) -> Vec<TextCandidate> {
    let mut out = Vec::new();
    let replies = trajectory
        .exchanges
        .iter()
        .filter(|x| x.fact.is_some())
        .map(|x| (&x.answer, &x.question))
        .chain(trajectory.mcp_calls.iter().filter(|c| !c.is_error).map(|c| (&c.result, &c.tool)));
    for (reply, about) in replies {
        let key = words(about);
        for q in quoted(reply) {
            push(&mut out, q, key.clone());
        }
        for w in reply.split_whitespace() {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric());
            if w.chars().any(|c| c.is_ascii_digit()) {
                push(&mut out, w.to_string(), key.clone());
            }
        }
        if reply.chars().count() <= 40 {
            push(&mut out, reply.trim_end_matches('.').to_string(), key.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_numbers_and_words() {
        assert_eq!(quoted(r#"Rename it to "Groceries" and 'Work'; don't"#), vec!["Groceries", "Work"]);
        assert_eq!(numbers("Set an alarm at 7:30, call (206) 555-0181."), vec!["7:30", "206", "555-0181"]);
        assert_eq!(words("Add the new contact: Nadia"), vec!["add", "new", "contact", "nadia"]);
    }
}
