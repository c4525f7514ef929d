//! The simulated phone: app packages running in-process, with the system UI around them.
//!
//! [`Phone`] is the environment every task, agent and training run uses: create it with a
//! [`Catalog`] of apps and a seed, [`Phone::observe`] in any observation format,
//! [`Phone::apply`] an action, read an app's database ([`Phone::query`]), list
//! [`Phone::events`], and [`Phone::reset`] to the state it was created in.
//!
//! Determinism: nothing reads the host clock or OS randomness. Time is a virtual clock that
//! starts at [`CLOCK_START_MS`] and advances by [`MS_PER_ACTION`] per action (a `wait` by its
//! duration); randomness (SQLite's `random()`, battery level) comes from a ChaCha8 generator
//! seeded by the phone's seed. The same seed and actions give byte-identical observations.

mod cursor;
pub mod data;
pub mod display;
pub mod disturb;
mod intents;
pub mod layout;
pub mod markup;
mod phone;
mod pickers;
mod render;
pub mod shared;
mod snapshot;
mod steps;
pub mod system;
mod timeline;
pub mod view;

pub use display::Display;
pub use disturb::{Dismissal, Disturbances, dismissal};
pub use markup::{MAX_LAYOUT_DEPTH, MAX_LAYOUT_VIEWS};
pub use phone::{AppEvent, Foreground, MAX_FIELD_CHARS, Outcome, Phone, PhoneConfig, PhoneError};
pub use phonebench_apps::{CLOCK_START_MS, Catalog};
pub use snapshot::PhoneSnapshot;
pub use timeline::{MAX_FIRINGS_PER_STEP, MAX_NOTIFICATIONS, MAX_SCHEDULED, PostedNotification};

/// Virtual milliseconds each action takes.
pub const MS_PER_ACTION: i64 = 1_000;

/// The longest one `wait` lets pass (a day): waiting for an alarm is fine, a year is a typo.
pub const MAX_WAIT_MS: i64 = 86_400_000;

/// Virtual milliseconds a toast stays on screen (Android's `LENGTH_SHORT`).
pub const TOAST_MS: i64 = 2_000;
