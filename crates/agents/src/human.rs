//! A person at the terminal: sees the goal and the observation on stderr, types one action per
//! line on stdin in any syntax `phonebench parse-action` accepts. The end of stdin (Ctrl-D, or
//! the end of a piped script) means the person stopped: the agent finishes the episode, and
//! [`HumanAgent::stdin_closed`] tells the runner to start no other.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use phonebench_actions::{Action, FinishStatus, Syntax, parse_action};

/// Set once stdin has ended. Process-wide, as stdin is: every human agent reads the same one.
static STDIN_CLOSED: AtomicBool = AtomicBool::new(false);

/// What the agent "says" on the turn where stdin ended (stored as the step's raw output).
pub const STDIN_CLOSED_TEXT: &str = "(stdin closed: the person stopped)";

use crate::{Agent, AgentError, AgentInput, AgentOutput, BoxFuture};

/// Reads actions from stdin.
#[derive(Debug, Clone, Default)]
pub struct HumanAgent;

impl HumanAgent {
    /// Whether stdin has ended in this process (the person stopped): a run starts no further
    /// episode with a human agent after that.
    pub fn stdin_closed() -> bool {
        STDIN_CLOSED.load(Ordering::SeqCst)
    }
}

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
                // The person stopped. That is the agent's own decision, so it ends the episode
                // as the agent's finish and the episode is scored (as the phone stands, which
                // normally fails the task); an error would make it an unscored infrastructure
                // failure. `Infeasible`: the person gave up rather than claimed success.
                STDIN_CLOSED.store(true, Ordering::SeqCst);
                return Ok(AgentOutput::new(
                    STDIN_CLOSED_TEXT.to_string(),
                    Ok(Action::Finish { status: FinishStatus::Infeasible, reason: None }),
                ));
            }
            let text = text.trim().to_string();
            let action = parse_action(&text, Syntax::Auto).map_err(|e| e.to_string());
            Ok(AgentOutput::new(text, action))
        })
    }
}
