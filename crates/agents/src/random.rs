//! The seeded random agent: taps, types, scrolls and presses keys at random among what the
//! current observation offers. Same seed and same screens → same actions.

use phonebench_actions::{Action, Direction, Key, Target};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

use crate::{Agent, AgentError, AgentInput, AgentOutput, BoxFuture};

/// Words the random agent types.
const WORDS: [&str; 8] = ["hello", "test", "42", "Ada", "ok", "meeting", "555-0100", "x"];

/// Acts at random; never finishes on its own (the step budget ends it).
#[derive(Debug, Clone)]
pub struct RandomAgent {
    rng: ChaCha8Rng,
}

impl RandomAgent {
    /// A random agent with its own seed.
    pub fn new(seed: u64) -> RandomAgent {
        RandomAgent { rng: ChaCha8Rng::seed_from_u64(seed) }
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.rng.next_u64() % n as u64) as usize }
    }

    /// The next action for an observation with `targets` elements.
    pub fn decide(&mut self, targets: usize) -> Action {
        let roll = self.below(100);
        let pick = |agent: &mut RandomAgent| Target::Index(agent.below(targets) as u32);
        match roll {
            0..=54 if targets > 0 => Action::Tap { target: pick(self) },
            55..=64 if targets > 0 => Action::LongPress { target: pick(self) },
            65..=74 if targets > 0 => {
                let text = WORDS[self.below(WORDS.len())].to_string();
                Action::Type { text, target: Some(pick(self)), clear: false, enter: self.below(4) == 0 }
            }
            75..=89 => {
                let direction =
                    [Direction::Up, Direction::Down, Direction::Left, Direction::Right][self.below(4)];
                Action::Scroll { direction, target: None }
            }
            90..=97 => Action::Key { key: Key::Back },
            _ => Action::Key { key: Key::Home },
        }
    }
}

impl Agent for RandomAgent {
    fn name(&self) -> &str {
        "random"
    }

    fn act<'a>(&'a mut self, input: &'a AgentInput) -> BoxFuture<'a, Result<AgentOutput, AgentError>> {
        let action = self.decide(input.observation.targets.len());
        Box::pin(async move { Ok(AgentOutput::scripted(action)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_actions_and_different_seeds_differ() {
        let run = |seed| {
            let mut a = RandomAgent::new(seed);
            (0..50).map(|_| a.decide(10)).collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }

    #[test]
    fn never_targets_beyond_the_observation() {
        let mut a = RandomAgent::new(7);
        for _ in 0..500 {
            match a.decide(3) {
                Action::Tap { target: Target::Index(i) } | Action::LongPress { target: Target::Index(i) } => {
                    assert!(i < 3)
                }
                Action::Type { target: Some(Target::Index(i)), .. } => assert!(i < 3),
                _ => {}
            }
        }
        // With nothing to touch it still acts (scroll or keys).
        for _ in 0..100 {
            assert!(matches!(a.decide(0), Action::Scroll { .. } | Action::Key { .. }));
        }
    }
}
