//! The model judge (UINavBench's model-judge validator): a model reads the goal, the agent's
//! answer and the final screens and says whether the task was accomplished, with a reason.
//!
//! It is never part of the deterministic score: results report it in its own column.

use std::sync::Arc;

use phonebench_model::{CallRecord, Message};
use phonebench_pixels::ScreenImage;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::parse::balanced_object;
use super::{ModelHandle, Templates};
use crate::AgentError;

/// The built-in judge prompt.
pub const JUDGE_TEMPLATE: &str = include_str!("../../../../agents/judge/judge.j2");

/// What the judge said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeVerdict {
    /// `Some(true)` pass, `Some(false)` fail, `None` when the judge's answer had no verdict.
    pub passed: Option<bool>,
    /// The judge's reason (or why its answer was unusable).
    pub reason: String,
}

/// What the judge is shown.
#[derive(Debug, Clone)]
pub struct JudgeInput {
    /// The goal.
    pub goal: String,
    /// The agent's answer, if it gave one.
    pub answer: Option<String>,
    /// The final screens as text, oldest first.
    pub screens: Vec<String>,
    /// A task-specific question for the judge.
    pub question: Option<String>,
    /// The final screenshot, sent when given.
    pub screenshot: Option<ScreenImage>,
}

/// A model judge.
#[derive(Debug, Clone)]
pub struct Judge {
    templates: Arc<Templates>,
    model: ModelHandle,
}

impl Judge {
    /// What decides its answers (model, sampling, prompt), for a run's configuration.
    pub fn fingerprint(&self) -> String {
        let value = serde_json::json!([self.model.sampling, self.templates.source_digest(), ""]);
        let key = phonebench_model::request_key(&value);
        format!("{} {}", self.model.model.model(), &key[..12])
    }

    /// The same, for the episode named `episode` (its calls are cached under it).
    pub fn scoped(&self, episode: &str) -> Judge {
        Judge { model: self.model.scoped(episode), ..self.clone() }
    }

    /// A judge using `model` and a prompt template (`JUDGE_TEMPLATE` by default).
    pub fn new(model: ModelHandle, template: &str) -> Result<Judge, super::ConfigError> {
        Ok(Judge {
            templates: Arc::new(Templates::from_sources("judge prompt", [("judge", "judge.j2", template)])?),
            model,
        })
    }

    /// Asks the judge. A server failure is an error (infrastructure); an answer without a
    /// verdict is a verdict of `None`.
    pub async fn judge(&self, input: &JudgeInput) -> Result<(JudgeVerdict, CallRecord), AgentError> {
        let prompt = self.templates.render(
            "judge",
            &json!({"goal": input.goal, "answer": input.answer.as_deref().map(super::clip), "screens": input.screens, "question": input.question}),
        )?;
        let mut message = Message::user(prompt);
        if let Some(image) = &input.screenshot {
            let png = image.png().map_err(|e| AgentError(format!("judge screenshot: {e}")))?;
            let (w, h) = image.size();
            message = message
                .with_image(phonebench_model::data_url("image/png", &png), format!("final screen ({w}x{h})"));
        }
        let (response, record) = self.model.call("judge", vec![message]).await?;
        Ok((read_verdict(&response.text()), record))
    }
}

/// Reads `{"verdict": "pass"|"fail", "reason": "..."}` from a judge's answer; tolerates prose
/// around it, a `true`/`false` verdict, and a bare PASS/FAIL word when there is no JSON.
pub fn read_verdict(answer: &str) -> JudgeVerdict {
    let word = |s: &str| match s.trim().to_ascii_lowercase().as_str() {
        "pass" | "passed" | "success" | "yes" | "true" => Some(true),
        "fail" | "failed" | "failure" | "no" | "false" => Some(false),
        _ => None,
    };
    if let Some(object) = balanced_object(answer)
        && let Ok(Value::Object(map)) = serde_json::from_str::<Value>(object)
    {
        let passed = match map.get("verdict") {
            Some(Value::String(s)) => word(s),
            Some(Value::Bool(b)) => Some(*b),
            _ => None,
        };
        let reason = map.get("reason").and_then(Value::as_str).unwrap_or_default().to_string();
        if passed.is_some() {
            return JudgeVerdict { passed, reason };
        }
    }
    let words: Vec<Option<bool>> = answer
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .map(|w| match w {
            "PASS" => Some(true),
            "FAIL" => Some(false),
            _ => None,
        })
        .filter(Option::is_some)
        .collect();
    match words.as_slice() {
        [only] => JudgeVerdict { passed: *only, reason: phonebench_model::truncate(answer.trim(), 300) },
        _ => JudgeVerdict {
            passed: None,
            reason: format!(
                "the judge's answer has no verdict: {}",
                phonebench_model::truncate(answer.trim(), 200)
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_read_from_json_or_a_lone_word() {
        assert_eq!(
            read_verdict("Sure. {\"verdict\": \"PASS\", \"reason\": \"the contact is shown\"}"),
            JudgeVerdict { passed: Some(true), reason: "the contact is shown".into() }
        );
        assert_eq!(read_verdict("{\"verdict\": false, \"reason\": \"no\"}").passed, Some(false));
        assert_eq!(read_verdict("Verdict: FAIL because nothing was saved").passed, Some(false));
        assert_eq!(
            read_verdict("PASS or FAIL? hard to say").passed,
            None,
            "two verdict words are no verdict"
        );
        let none = read_verdict("I cannot tell.");
        assert_eq!(none.passed, None);
        assert!(none.reason.contains("no verdict"));
    }
}
