//! `answer`: comparing the agent's answer text.

use std::sync::LazyLock;

use phonebench_tasks::criteria::AnswerCheck;
use regex::Regex;

use crate::rules::{Matcher, clip};

/// Case-folded, punctuation and symbols dropped, whitespace collapsed and trimmed.
pub(crate) fn normalize(text: &str) -> String {
    let kept: String = text
        .chars()
        .filter(|c| c.is_alphanumeric() || c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    kept.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A number as people write it: optional sign, thousands separators, decimals.
static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+").expect("a fixed, valid pattern")
});

/// Where an answer is split into items.
static ITEM_SEPARATOR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)[,;\n]|\s+and\s+").expect("a fixed, valid pattern"));

/// The first number in `text`.
pub(crate) fn first_number(text: &str) -> Option<f64> {
    NUMBER.find_iter(text).find_map(|m| m.as_str().replace(',', "").parse().ok())
}

/// The answer's items: split at commas, semicolons, newlines and " and ", normalized, empty ones
/// dropped, sorted and deduplicated.
pub(crate) fn items(text: &str) -> Vec<String> {
    let mut out: Vec<String> = ITEM_SEPARATOR.split(text).map(normalize).filter(|s| !s.is_empty()).collect();
    out.sort();
    out.dedup();
    out
}

/// Evaluates an answer check: `Ok((passed, detail))`, `Err` when it cannot be evaluated.
pub(crate) fn check(
    matcher: &Matcher,
    check: &AnswerCheck,
    answer: Option<&str>,
) -> Result<(bool, String), String> {
    if let AnswerCheck::Regex(pattern) = check {
        matcher.prepare_pattern(pattern)?;
    }
    let Some(answer) = answer else {
        return Ok((false, "the agent gave no answer".into()));
    };
    let shown = format!("answer {:?}", clip(answer));
    let ok = match check {
        AnswerCheck::Exact(expected) => answer.trim() == expected.trim(),
        AnswerCheck::Normalized(expected) => normalize(answer) == normalize(expected),
        AnswerCheck::Contains(expected) => normalize(answer).contains(&normalize(expected)),
        AnswerCheck::Regex(pattern) => matcher.regex_matches(pattern, answer),
        AnswerCheck::Number { value, tolerance } => match first_number(answer) {
            // A hair of slack so that 0.1 + 0.2 style noise never flips a verdict.
            Some(n) => (n - value).abs() <= tolerance.abs() + 1e-9 * value.abs().max(1.0),
            None => return Ok((false, format!("{shown} has no number"))),
        },
        AnswerCheck::Items(expected) => {
            let mut want: Vec<String> =
                expected.iter().map(|s| normalize(s)).filter(|s| !s.is_empty()).collect();
            want.sort();
            want.dedup();
            let got = items(answer);
            if got != want {
                return Ok((false, format!("{shown}: items {got:?}, expected {want:?}")));
            }
            true
        }
    };
    Ok((ok, shown))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_folds_case_drops_punctuation_and_collapses_space() {
        assert_eq!(normalize("  Hello,   World! "), "hello world");
        assert_eq!(normalize("It's $3.50"), "its 350");
    }

    #[test]
    fn first_number_reads_separators_signs_and_decimals() {
        assert_eq!(first_number("about 1,234.5 km"), Some(1234.5));
        assert_eq!(first_number("-3 degrees"), Some(-3.0));
        assert_eq!(first_number("none"), None);
    }

    #[test]
    fn items_split_at_separators_and_and() {
        assert_eq!(items("Milk, eggs and Bread;\nmilk"), vec!["bread", "eggs", "milk"]);
        assert_eq!(items("a, b, and c"), vec!["a", "b", "c"]);
    }
}
