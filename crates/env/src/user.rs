//! The simulated user for `ask_user`: deterministic and rule-based. It answers from the task's
//! hidden facts when the question is about one of them and politely refuses otherwise. It never
//! invents anything.

use phonebench_tasks::Fact;

/// What the user says when a question is about none of the hidden facts.
pub const REFUSAL: &str = "Sorry, I can't help with that. Please go on with the task as you see fit.";

/// The simulated user of one episode.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulatedUser {
    facts: Vec<Fact>,
}

impl SimulatedUser {
    /// A user who knows these facts.
    pub fn new(facts: Vec<Fact>) -> SimulatedUser {
        SimulatedUser { facts }
    }

    /// The reply to `question` and which fact it came from. A question is about a fact when it
    /// mentions one of the fact's keywords as whole words (case-insensitive). Several facts may
    /// match: their answers are joined in the task's order.
    pub fn reply(&self, question: &str) -> (String, Option<usize>) {
        let words = normalize(question);
        let mut answers = Vec::new();
        let mut first = None;
        for (i, fact) in self.facts.iter().enumerate() {
            let about = fact.about.iter().any(|k| {
                let k = normalize(k);
                !k.is_empty() && contains_words(&words, &k)
            });
            if about {
                first.get_or_insert(i);
                answers.push(fact.answer.trim().to_string());
            }
        }
        if answers.is_empty() { (REFUSAL.to_string(), None) } else { (answers.join(" "), first) }
    }
}

fn normalize(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        // A plural asks about the same thing: "numbers" is about "number".
        .map(|w| if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") { &w[..w.len() - 1] } else { w })
        .map(str::to_string)
        .collect()
}

fn contains_words(haystack: &[String], needle: &[String]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user() -> SimulatedUser {
        SimulatedUser::new(vec![
            Fact { about: vec!["phone number".into(), "number".into()], answer: "It's 555-0101.".into() },
            Fact { about: vec!["name".into()], answer: "Her name is Ada.".into() },
        ])
    }

    #[test]
    fn answers_from_the_fact_asked_about() {
        assert_eq!(user().reply("What phone NUMBER should I use?"), ("It's 555-0101.".into(), Some(0)));
        assert_eq!(user().reply("Which name?"), ("Her name is Ada.".into(), Some(1)));
    }

    #[test]
    fn joins_answers_when_a_question_covers_two_facts() {
        assert_eq!(
            user().reply("What is the name and number?"),
            ("It's 555-0101. Her name is Ada.".into(), Some(0))
        );
    }

    #[test]
    fn refuses_unrelated_questions_and_partial_words() {
        assert_eq!(user().reply("Should I hurry?"), (REFUSAL.into(), None));
        // "rename" is not the word "name"; "numbers" is about "number".
        assert_eq!(user().reply("Shall I rename it?"), (REFUSAL.into(), None));
        assert_eq!(user().reply("Which numbers?").1, Some(0));
    }
}
