//! A person at the terminal: sees the goal and the observation on stderr, types one action per
//! line on stdin in any syntax `phonebench parse-action` accepts.

use std::io::{BufRead, Write};

use phonebench_actions::{Syntax, parse_action};

use crate::{Agent, AgentError, AgentInput, AgentOutput, BoxFuture};

/// Reads actions from stdin.
#[derive(Debug, Clone, Default)]
pub struct HumanAgent;

impl Agent for HumanAgent {
    fn name(&self) -> &str {
        "human"
    }

    fn act<'a>(&'a mut self, input: &'a AgentInput) -> BoxFuture<'a, Result<AgentOutput, AgentError>> {
        let prompt = format!(
            "\n=== step {}/{} — goal: {}\n{}\n{}> ",
            input.step + 1,
            input.max_steps,
            input.goal,
            input.observation.text,
            input
                .history
                .last()
                .and_then(|t| t.feedback.as_deref())
                .map(|f| format!("({f})\n"))
                .unwrap_or_default()
        );
        Box::pin(async move {
            // stdin blocks: read it off the async workers.
            let line = tokio::task::spawn_blocking(move || {
                let mut err = std::io::stderr();
                let _ = err.write_all(prompt.as_bytes());
                let _ = err.flush();
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line).map(|n| (n, line))
            })
            .await
            .map_err(|e| AgentError(format!("terminal reader failed: {e}")))?
            .map_err(|e| AgentError(format!("cannot read stdin: {e}")))?;
            let (n, text) = line;
            if n == 0 {
                return Err(AgentError("stdin closed".into()));
            }
            let text = text.trim().to_string();
            let action = parse_action(&text, Syntax::Auto).map_err(|e| e.to_string());
            Ok(AgentOutput::new(text, action))
        })
    }
}
