//! A model-based simulated user for `ask_user`: a persona who knows the task's hidden facts and
//! answers only from them. The keyword user in `phonebench-env` stays the deterministic default.

use std::sync::Arc;

use phonebench_model::{CallRecord, Message};
use phonebench_tasks::Fact;
use serde_json::json;

use super::{ModelHandle, Templates};
use crate::AgentError;

/// The built-in user prompt.
pub const USER_TEMPLATE: &str = include_str!("../../../../agents/user/user.j2");

/// The persona when none is configured.
pub const DEFAULT_PERSONA: &str =
    "You are the phone's owner, who asked the assistant to do the task. You are busy and answer briefly.";

/// A simulated user driven by a model.
#[derive(Debug, Clone)]
pub struct ModelUser {
    templates: Arc<Templates>,
    model: ModelHandle,
    persona: String,
}

impl ModelUser {
    /// What decides its answers (model, sampling, prompt, persona), for a run's configuration.
    pub fn fingerprint(&self) -> String {
        let value = serde_json::json!([self.model.sampling, self.templates.source_digest(), self.persona]);
        let key = phonebench_model::request_key(&value);
        format!("{} {}", self.model.model.model(), &key[..12])
    }

    /// The same, for the episode named `episode` (its calls are cached under it).
    pub fn scoped(&self, episode: &str) -> ModelUser {
        ModelUser { model: self.model.scoped(episode), ..self.clone() }
    }

    /// A user with `persona`, prompted by `template` (`USER_TEMPLATE` by default).
    pub fn new(model: ModelHandle, template: &str, persona: &str) -> Result<ModelUser, super::ConfigError> {
        Ok(ModelUser {
            templates: Arc::new(Templates::from_sources("user prompt", [("user", "user.j2", template)])?),
            model,
            persona: persona.to_string(),
        })
    }

    /// The user's reply to `question`, given the earlier exchanges `(question, answer)`.
    pub async fn reply(
        &self,
        goal: &str,
        facts: &[Fact],
        question: &str,
        history: &[(String, String)],
    ) -> Result<(String, CallRecord), AgentError> {
        let facts: Vec<serde_json::Value> =
            facts.iter().map(|f| json!({"about": f.about, "answer": f.answer})).collect();
        let history: Vec<serde_json::Value> =
            history.iter().map(|(q, a)| json!({"question": q, "answer": a})).collect();
        let prompt = self.templates.render(
            "user",
            &json!({"goal": goal, "persona": self.persona, "facts": facts, "question": super::clip(question), "history": history}),
        )?;
        let (response, record) = self.model.call("user", vec![Message::user(prompt)]).await?;
        Ok((response.content.trim().to_string(), record))
    }
}
