//! Reading a model's answers: SPHINX's rules (the default, quirks included) or strict ones.
//!
//! SPHINX's rules, as its scripts apply them:
//! - knowledge (`extractor.py`): the answer counts only when the raw text *is* one option
//!   character (`A`…`D`) or `T`/`F`: `"A."`, `"a"` or `"A\n"` are not answers and go to repair;
//! - completion (`run_complete.py`): on the lower-cased text, when both `yes` and `no` occur as
//!   substrings the later one wins, one alone decides, neither means NO. Substrings, so `not`,
//!   `know` and `nothing` say no, `yesterday` says yes;
//! - grounding (`run_lowlevel.py`): the action is the last ```` ``` ```` block
//!   (`split('```')[-2]`), parsed by SPHINX's index parser (text after the match ignored, greedy
//!   messages, `press [home]` restarts).
//!
//! Strict rules ([`Parsing::Strict`]) read only what an answer unambiguously says and call
//! everything else unparseable (a format error, scored wrong, never guessed):
//! - knowledge: the answer trimmed of white space is exactly one option character;
//! - completion: `yes` or `no` as whole words (any case), exactly one of the two in the answer;
//! - grounding: the action is the block after the prompt's phrase "In summary, the next action
//!   I will perform is"; `press [home]` presses Home.

use phonebench_agents::llm::parse::{last_fenced_block, sphinx_action_text};
use serde::{Deserialize, Serialize};

/// Which reading of answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Parsing {
    /// SPHINX's rules, quirks included.
    #[default]
    Sphinx,
    /// Only unambiguous answers count.
    Strict,
}

impl Parsing {
    /// The name stored with results.
    pub fn name(self) -> &'static str {
        match self {
            Parsing::Sphinx => "sphinx",
            Parsing::Strict => "strict",
        }
    }
}

/// The option an answer names, if it is well-formed: one of `letters` (`A`…`D`, or `T`/`F`).
pub fn option(answer: &str, letters: &[&str], parsing: Parsing) -> Option<String> {
    let answer = match parsing {
        Parsing::Sphinx => answer,
        Parsing::Strict => answer.trim(),
    };
    letters.iter().find(|l| **l == answer).map(|l| l.to_string())
}

/// A repair call's reply read as an option: the first option character standing alone, in
/// either case (the repair prompt asks for nothing else; a reply without one leaves the answer
/// wrong).
pub fn repaired_option(reply: &str, letters: &[&str]) -> Option<String> {
    reply
        .split(|c: char| !c.is_ascii_alphanumeric())
        .map(str::to_ascii_uppercase)
        .find(|word| letters.contains(&word.as_str()))
}

/// Whether a completion answer says the goal is complete. SPHINX's rule never fails (neither
/// word means NO); the strict rule fails on an answer that does not say exactly one of them.
pub fn yes_no(answer: &str, parsing: Parsing) -> Result<bool, String> {
    let lower = answer.to_lowercase();
    match parsing {
        Parsing::Sphinx => {
            let (yes, no) = (lower.rfind("yes"), lower.rfind("no"));
            Ok(match (yes, no) {
                (Some(y), Some(n)) => y > n,
                (Some(_), None) => true,
                _ => false,
            })
        }
        Parsing::Strict => {
            let words: Vec<&str> =
                lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
            let yes = words.contains(&"yes");
            let no = words.contains(&"no");
            match (yes, no) {
                (true, false) => Ok(true),
                (false, true) => Ok(false),
                (true, true) => Err("the answer says both YES and NO".into()),
                (false, false) => Err("the answer says neither YES nor NO".into()),
            }
        }
    }
}

/// The action text of a grounding answer, or why there is none.
pub fn action_text(answer: &str, parsing: Parsing) -> Result<String, String> {
    match parsing {
        Parsing::Sphinx => last_fenced_block(answer)
            .map(str::to_string)
            .ok_or_else(|| "no ``` fenced block in the answer (SPHINX reads the last one)".to_string()),
        Parsing::Strict => {
            if !answer.contains(phonebench_agents::llm::parse::SPHINX_SUMMARY_PHRASE) {
                return Err(format!(
                    "the answer lacks the phrase \"{}\" the prompt asks for",
                    phonebench_agents::llm::parse::SPHINX_SUMMARY_PHRASE
                ));
            }
            sphinx_action_text(answer)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ABCD: [&str; 4] = ["A", "B", "C", "D"];

    #[test]
    fn sphinx_options_are_the_raw_text_exactly() {
        assert_eq!(option("B", &ABCD, Parsing::Sphinx).as_deref(), Some("B"));
        assert_eq!(option("B\n", &ABCD, Parsing::Sphinx), None);
        assert_eq!(option("b", &ABCD, Parsing::Sphinx), None);
        assert_eq!(option("B.", &ABCD, Parsing::Sphinx), None);
        assert_eq!(option(" B\n", &ABCD, Parsing::Strict).as_deref(), Some("B"));
        assert_eq!(option("B.", &ABCD, Parsing::Strict), None);
    }

    #[test]
    fn repair_replies_give_the_first_standalone_letter() {
        assert_eq!(repaired_option("The answer is: C.", &ABCD).as_deref(), Some("C"));
        assert_eq!(repaired_option("I cannot tell", &ABCD), None);
        assert_eq!(repaired_option("**T**", &["T", "F"]).as_deref(), Some("T"));
        assert_eq!(repaired_option("t", &["T", "F"]).as_deref(), Some("T"));
    }

    #[test]
    fn sphinx_yes_no_keeps_its_quirks() {
        assert_eq!(yes_no("YES", Parsing::Sphinx), Ok(true));
        assert_eq!(yes_no("No, not yet", Parsing::Sphinx), Ok(false));
        // The later word wins.
        assert_eq!(yes_no("No... wait, yes", Parsing::Sphinx), Ok(true));
        assert_eq!(yes_no("Yes? No.", Parsing::Sphinx), Ok(false));
        // Substrings: "know" says no, "yesterday" says yes; neither is NO.
        assert_eq!(yes_no("Yes, I know", Parsing::Sphinx), Ok(false));
        assert_eq!(yes_no("done yesterday", Parsing::Sphinx), Ok(true));
        assert_eq!(yes_no("Finished.", Parsing::Sphinx), Ok(false));
    }

    #[test]
    fn strict_yes_no_reads_whole_words_and_refuses_ambiguity() {
        assert_eq!(yes_no("Yes, I know", Parsing::Strict), Ok(true));
        assert_eq!(yes_no("**NO**", Parsing::Strict), Ok(false));
        assert!(yes_no("No... wait, yes", Parsing::Strict).is_err());
        assert!(yes_no("Finished.", Parsing::Strict).is_err());
    }

    #[test]
    fn grounding_reads_the_last_block_or_the_summary_phrase() {
        let answer = "I could ```click [1]``` but In summary, the next action I will perform is ```click [2]``` then ```press [back]```";
        assert_eq!(action_text(answer, Parsing::Sphinx).as_deref(), Ok("press [back]"));
        assert_eq!(action_text(answer, Parsing::Strict).as_deref(), Ok("click [2]"));
        assert!(action_text("click [3]", Parsing::Sphinx).is_err());
        assert!(action_text("```click [3]```", Parsing::Strict).is_err());
    }
}
