//! MCP for phonebench.
//!
//! - [`client`]: [`McpSession`], the client an episode uses to reach the servers its task names
//!   (built-in ones in-process, others over stdio or streamable HTTP), with time limits,
//!   truncation and failures turned into text the agent reads.
//! - [`offline`]: the offline tool servers shipped with phonebench (`geo`, `weather`, `finance`,
//!   `tracker`), deterministic and seeded, their content tied to the apps' seeds.
//! - [`serve`]: any offline server as an rmcp server.

pub mod client;
pub mod offline;
pub mod serve;

pub use client::{CallOutcome, FailurePolicy, McpConfig, McpError, McpSession, Transport, exposed_name};
pub use offline::{BUILTIN_SERVERS, OfflineServer, ToolDef, ToolError, builtin};
pub use serve::OfflineHandler;
