//! Episodes on the simulated phone: a [`phonebench_tasks::TaskInstance`] set up on a fresh
//! [`phonebench_phone::Phone`], advanced one agent turn at a time, recorded as a [`Trajectory`]
//! (every screen's tree, every action with the node it hit, events, `ask_user` exchanges with the
//! [`SimulatedUser`], MCP calls, each app's database before and after).

pub mod episode;
pub mod trajectory;
pub mod user;

pub use episode::{
    EnvError, Episode, EpisodeOptions, EpisodeSnapshot, FormatErrorPolicy, McpReply, StepFeedback, TurnInput,
};
pub use trajectory::{
    DatabasePair, EpisodeEnd, EventRecord, Exchange, McpCallRecord, ScreenRecord, StepRecord, Trajectory,
    action_direction, sphinx_type,
};
pub use user::{REFUSAL, SimulatedUser};
