//! Reflexion (Shinn et al. 2023, noahshinn/reflexion) around an acting loop (SPHINX ReAct, T3A or
//! M3A): after a trial fails, a critic call reads the trial and writes a short lesson ("plan");
//! the next trial — a fresh reset of the phone — carries the last three lessons in its prompt, as
//! Reflexion's ALFWorld runs carry their memory.
//!
//! Whether a trial failed is the task's own verdict (Reflexion uses the environment's binary
//! reward the same way), so this agent's success rate is "success within k trials", reported
//! with every trial recorded.

use phonebench_actions::{Syntax, print_action};
use phonebench_model::Message;
use serde_json::json;

use super::androidworld::AndroidWorldAgent;
use super::sphinx::SphinxReact;
use super::{ConfigError, ModelAgentSpec, ModelHandle, Templates};
use crate::{Agent, AgentError, AgentInput, AgentOutput, BoxFuture, CallRecord, TrialReport};

/// The acting loop inside.
#[derive(Debug)]
enum Inner {
    Sphinx(SphinxReact),
    AndroidWorld(AndroidWorldAgent),
}

/// A Reflexion agent.
#[derive(Debug)]
pub struct Reflexion {
    name: String,
    inner: Inner,
    templates: std::sync::Arc<Templates>,
    model: ModelHandle,
    trials: usize,
    lessons: Vec<String>,
}

impl Reflexion {
    /// An agent for one episode (all its trials).
    pub fn new(spec: &ModelAgentSpec) -> Result<Reflexion, ConfigError> {
        let config = &spec.config;
        config.prompt("critic")?;
        let inner = match config.option_str("inner")?.unwrap_or("sphinx-react") {
            "sphinx-react" => Inner::Sphinx(SphinxReact::new(spec)?),
            "t3a" | "m3a" => Inner::AndroidWorld(AndroidWorldAgent::new(spec)?),
            other => {
                return Err(ConfigError {
                    origin: config.origin.clone(),
                    message: format!("unknown inner design `{other}` (sphinx-react, t3a, m3a)"),
                });
            }
        };
        let trials = config.option_usize("trials")?.unwrap_or(3);
        if trials == 0 {
            return Err(ConfigError {
                origin: config.origin.clone(),
                message: "`trials` must be at least 1".into(),
            });
        }
        Ok(Reflexion {
            name: config.name.clone(),
            inner,
            templates: spec.templates.clone(),
            model: spec.models.main.clone(),
            trials,
            lessons: Vec::new(),
        })
    }

    fn inner(&mut self) -> &mut dyn Agent {
        match &mut self.inner {
            Inner::Sphinx(a) => a,
            Inner::AndroidWorld(a) => a,
        }
    }

    async fn critic(&mut self, report: &TrialReport) -> Result<Vec<CallRecord>, AgentError> {
        let prompt = self.templates.render(
            "critic",
            &json!({
                "goal": report.goal,
                "trajectory": trajectory_text(report),
                "trial": report.trial,
                "outcome": if report.success { "succeeded" } else { "failed" },
                "previous_lessons": self.lessons,
            }),
        )?;
        let (response, record) = self.model.call("critic", vec![Message::user(prompt)]).await?;
        self.lessons.push(super::clip(response.text().trim()));
        match &mut self.inner {
            Inner::Sphinx(a) => {
                a.reset();
                a.lessons = self.lessons.clone();
            }
            Inner::AndroidWorld(a) => {
                a.reset();
                a.lessons = self.lessons.clone();
            }
        }
        Ok(vec![record])
    }
}

/// A trial as the critic reads it: one numbered line per turn, the action (SPHINX syntax where
/// it can be written so, canonical JSON otherwise) and what the environment answered.
pub fn trajectory_text(report: &TrialReport) -> String {
    let mut out = String::new();
    for (i, turn) in report.turns.iter().enumerate() {
        let action = match &turn.action {
            Some(a) => print_action(a, Syntax::Sphinx)
                .or_else(|_| print_action(a, Syntax::Canonical))
                .unwrap_or_else(|_| a.kind().to_string()),
            None => format!("(output not an action: {})", phonebench_model::truncate(turn.raw.trim(), 120)),
        };
        out.push_str(&format!("{}. {action}", i + 1));
        if let Some(feedback) = &turn.feedback {
            out.push_str(&format!(" -> {}", phonebench_model::truncate(feedback, 200)));
        }
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str("(no actions)\n");
    }
    out
}

impl Agent for Reflexion {
    fn name(&self) -> &str {
        &self.name
    }

    fn act<'a>(&'a mut self, input: &'a AgentInput) -> BoxFuture<'a, Result<AgentOutput, AgentError>> {
        self.inner().act(input)
    }

    fn trials(&self) -> usize {
        self.trials
    }

    fn reflect<'a>(
        &'a mut self,
        report: &'a TrialReport,
    ) -> BoxFuture<'a, Result<Vec<CallRecord>, AgentError>> {
        Box::pin(self.critic(report))
    }

    fn repairs(&self) -> bool {
        match &self.inner {
            Inner::Sphinx(a) => a.repairs(),
            Inner::AndroidWorld(a) => a.repairs(),
        }
    }
}
