//! [`ReplayAgent`]: plays a fixed list of actions, then stops.

use phonebench_actions::{Action, FinishStatus};

use crate::{Agent, AgentError, AgentInput, AgentOutput, BoxFuture};

/// Plays `actions` in order, one per turn, whatever the screen shows; after the last one it
/// finishes (complete) on its own, unless the list's last action already ended the episode (an
/// `answer` or a `finish`). How a solution found elsewhere (`phonebench solve`) is re-played
/// through a normal run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplayAgent {
    actions: Vec<Action>,
    next: usize,
}

impl ReplayAgent {
    /// An agent that plays `actions`.
    pub fn new(actions: Vec<Action>) -> ReplayAgent {
        ReplayAgent { actions, next: 0 }
    }

    /// How many of the actions it has played.
    pub fn played(&self) -> usize {
        self.next
    }

    /// The next action: the list's, then `finish`.
    pub fn decide(&mut self) -> Action {
        match self.actions.get(self.next) {
            Some(action) => {
                self.next += 1;
                action.clone()
            }
            None => Action::Finish { status: FinishStatus::Complete, reason: None },
        }
    }
}

impl Agent for ReplayAgent {
    fn name(&self) -> &str {
        "replay"
    }

    fn act<'a>(&'a mut self, _input: &'a AgentInput) -> BoxFuture<'a, Result<AgentOutput, AgentError>> {
        let action = self.decide();
        Box::pin(async move { Ok(AgentOutput::scripted(action)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phonebench_actions::Key;

    #[test]
    fn plays_the_list_then_finishes() {
        let mut agent = ReplayAgent::new(vec![Action::Key { key: Key::Back }, Action::Wait { ms: None }]);
        assert_eq!(agent.decide(), Action::Key { key: Key::Back });
        assert_eq!(agent.decide(), Action::Wait { ms: None });
        assert_eq!(agent.played(), 2);
        assert_eq!(agent.decide(), Action::Finish { status: FinishStatus::Complete, reason: None });
        assert_eq!(agent.decide(), Action::Finish { status: FinishStatus::Complete, reason: None });
    }
}
