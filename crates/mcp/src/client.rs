//! The MCP client an episode uses: [`McpSession::connect`] starts or reaches every server a task
//! names (built-in ones in-process, others as child processes over stdio or over streamable
//! HTTP), lists their tools under `server_tool` names, and routes calls with a time limit,
//! truncating long results and turning every way a server can fail into a [`CallOutcome`] the
//! agent can read.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use phonebench_actions::McpTool;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, ResourceContents};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ServiceExt, serve_server};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::offline;
use crate::serve::OfflineHandler;

/// Why an MCP server could not be used at all (an infrastructure failure when it happens at the
/// start of an episode: the agent did nothing yet).
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// A task or configuration names a server nobody defined.
    #[error(
        "no MCP server `{0}`: the built-in ones are geo, weather, finance, tracker; others are defined in the MCP configuration"
    )]
    UnknownServer(String),
    /// Starting or reaching the server failed.
    #[error("MCP server `{server}`: {message}")]
    Connect {
        /// The server.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// The configuration file is wrong.
    #[error("{0}")]
    Config(String),
}

/// How to reach one server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
#[serde(try_from = "RawTransport")]
pub enum Transport {
    /// A child process speaking MCP over stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Extra environment variables.
        #[serde(default)]
        env: BTreeMap<String, String>,
        /// Working directory.
        #[serde(default)]
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint, e.g. `http://127.0.0.1:3001/mcp`.
        url: String,
        /// The environment variable holding a bearer token, if the server wants one.
        #[serde(default)]
        bearer_token_env: Option<String>,
    },
    /// A built-in offline server (`geo`, `weather`, `finance`, `tracker`) in-process.
    Builtin {
        /// Which one.
        builtin: String,
        /// Its seed (weather varies with it).
        #[serde(default)]
        seed: u64,
    },
}

/// A `[servers.NAME]` table as written: one of `command`, `url` or `builtin` decides the
/// transport, and the other keys must belong to it (so a typo is named, not a vague mismatch).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTransport {
    command: Option<String>,
    #[serde(default)]
    args: Option<Vec<String>>,
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    #[serde(default)]
    cwd: Option<PathBuf>,
    url: Option<String>,
    bearer_token_env: Option<String>,
    builtin: Option<String>,
    seed: Option<u64>,
}

impl TryFrom<RawTransport> for Transport {
    type Error = String;

    fn try_from(r: RawTransport) -> Result<Transport, String> {
        let stray = |allowed: &str, keys: &[(&str, bool)]| {
            keys.iter()
                .find(|(_, set)| *set)
                .map(|(k, _)| Err(format!("`{k}` does not go with {allowed}")))
                .unwrap_or(Ok(()))
        };
        match (r.command, r.url, r.builtin) {
            (Some(command), None, None) => {
                stray(
                    "`command` (a stdio server)",
                    &[("bearer_token_env", r.bearer_token_env.is_some()), ("seed", r.seed.is_some())],
                )?;
                Ok(Transport::Stdio {
                    command,
                    args: r.args.unwrap_or_default(),
                    env: r.env.unwrap_or_default(),
                    cwd: r.cwd,
                })
            }
            (None, Some(url), None) => {
                stray(
                    "`url` (a streamable HTTP server)",
                    &[
                        ("args", r.args.is_some()),
                        ("env", r.env.is_some()),
                        ("cwd", r.cwd.is_some()),
                        ("seed", r.seed.is_some()),
                    ],
                )?;
                Ok(Transport::Http { url, bearer_token_env: r.bearer_token_env })
            }
            (None, None, Some(builtin)) => {
                stray(
                    "`builtin`",
                    &[
                        ("args", r.args.is_some()),
                        ("env", r.env.is_some()),
                        ("cwd", r.cwd.is_some()),
                        ("bearer_token_env", r.bearer_token_env.is_some()),
                    ],
                )?;
                Ok(Transport::Builtin { builtin, seed: r.seed.unwrap_or(0) })
            }
            (None, None, None) => {
                Err("a server needs `command` (stdio), `url` (streamable HTTP) or `builtin`".into())
            }
            _ => Err("a server has one of `command`, `url` or `builtin`, not several".into()),
        }
    }
}

/// What to do when a server fails during an episode (crashes, hangs past the call timeout,
/// answers with something that is not MCP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailurePolicy {
    /// The agent is told the call failed and why, and the episode goes on (MobileWorld's
    /// behaviour: the error text is the tool's result).
    #[default]
    Feedback,
    /// The episode ends as an infrastructure failure (reported apart, retried on resume).
    Infrastructure,
}

/// The MCP part of a run: server definitions beyond the built-in ones and the limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// Servers by name; a name here overrides a built-in server of that name.
    #[serde(default)]
    pub servers: BTreeMap<String, Transport>,
    /// The longest one call may take, in seconds.
    #[serde(default = "default_call_timeout")]
    pub call_timeout_s: f64,
    /// The longest starting a server (and listing its tools) may take, in seconds.
    #[serde(default = "default_connect_timeout")]
    pub connect_timeout_s: f64,
    /// Results longer than this many characters are cut, and the cut is said.
    #[serde(default = "default_result_chars")]
    pub max_result_chars: usize,
    /// What a server failure mid-episode does.
    #[serde(default)]
    pub on_server_failure: FailurePolicy,
}

fn default_call_timeout() -> f64 {
    30.0
}
fn default_connect_timeout() -> f64 {
    30.0
}
fn default_result_chars() -> usize {
    4000
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            servers: BTreeMap::new(),
            call_timeout_s: default_call_timeout(),
            connect_timeout_s: default_connect_timeout(),
            max_result_chars: default_result_chars(),
            on_server_failure: FailurePolicy::Feedback,
        }
    }
}

impl McpConfig {
    /// Reads a TOML configuration (`[servers.NAME]` tables and the limits).
    pub fn from_toml(text: &str, origin: &str) -> Result<McpConfig, McpError> {
        let config: McpConfig = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| text[..s.start.min(text.len())].lines().count().max(1));
            McpError::Config(match line {
                Some(l) => format!("{origin}:{l}: {}", e.message()),
                None => format!("{origin}: {}", e.message()),
            })
        })?;
        config.check().map_err(|m| McpError::Config(format!("{origin}: {m}")))?;
        Ok(config)
    }

    /// Checks the limits.
    pub fn check(&self) -> Result<(), String> {
        for (what, v) in
            [("call_timeout_s", self.call_timeout_s), ("connect_timeout_s", self.connect_timeout_s)]
        {
            if !(v.is_finite() && v > 0.0 && v <= 3600.0) {
                return Err(format!("`{what}` must be more than 0 and at most 3600 seconds"));
            }
        }
        if self.max_result_chars < 100 {
            return Err("`max_result_chars` must be at least 100".into());
        }
        for (name, t) in &self.servers {
            if !valid_server_name(name) {
                return Err(format!("server name `{name}`: letters, digits and `-` only"));
            }
            if let Transport::Builtin { builtin, .. } = t
                && !offline::BUILTIN_SERVERS.contains(&builtin.as_str())
            {
                return Err(format!("server `{name}`: `{builtin}` is not a built-in server"));
            }
        }
        Ok(())
    }

    /// The configuration as recorded with a run's results (to refuse resuming under another
    /// one): everything but the values of stdio servers' `env`, which may be secrets (API keys)
    /// and must not land in a results file; their names are kept.
    pub fn fingerprint(&self) -> String {
        let mut shown = self.clone();
        for t in shown.servers.values_mut() {
            if let Transport::Stdio { env, .. } = t {
                for v in env.values_mut() {
                    *v = "(not recorded)".into();
                }
            }
        }
        serde_json::to_string(&shown).unwrap_or_default()
    }

    /// How `name` is reached: the configuration's definition, else the built-in server.
    pub fn transport(&self, name: &str) -> Result<Transport, McpError> {
        if let Some(t) = self.servers.get(name) {
            return Ok(t.clone());
        }
        if offline::BUILTIN_SERVERS.contains(&name) {
            return Ok(Transport::Builtin { builtin: name.to_string(), seed: 0 });
        }
        Err(McpError::UnknownServer(name.to_string()))
    }

    fn call_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.call_timeout_s)
    }

    fn connect_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.connect_timeout_s)
    }
}

/// Server names become tool-name prefixes, which OpenAI-style function names restrict.
pub fn valid_server_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 32 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// The name an agent calls a server's tool by: `server_tool`, with every character outside
/// `[A-Za-z0-9_-]` made `_` (function-calling APIs accept only those).
pub fn exposed_name(server: &str, tool: &str) -> String {
    let clean: String =
        tool.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    format!("{}_{clean}", server.replace('-', "_"))
}

/// What one call gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutcome {
    /// The text the agent gets: the result's content as text (cut to the configured length, the
    /// cut said), or what went wrong.
    pub text: String,
    /// The call did not succeed: the tool reported an error, the call was refused (unknown tool,
    /// bad arguments), or the server failed.
    pub is_error: bool,
    /// The text was cut.
    pub truncated: bool,
    /// The server itself failed (crashed, hung, spoke something other than MCP): not the
    /// agent's doing.
    pub failure: Option<String>,
    /// Wall time of the call (never part of a trajectory's deterministic record).
    pub latency: Duration,
}

struct Connected {
    name: String,
    service: Option<RunningService<RoleClient, ()>>,
    /// Set once the server has stopped: later calls fail at once with this.
    stopped: Option<String>,
}

struct ToolRoute {
    server: usize,
    remote: String,
}

/// The servers of one episode, connected.
pub struct McpSession {
    servers: Vec<Connected>,
    tools: Vec<McpTool>,
    routes: BTreeMap<String, ToolRoute>,
    config: McpConfig,
}

impl std::fmt::Debug for McpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSession").field("tools", &self.routes.keys().collect::<Vec<_>>()).finish()
    }
}

async fn start(name: &str, transport: &Transport) -> Result<RunningService<RoleClient, ()>, String> {
    match transport {
        Transport::Builtin { builtin, seed } => {
            let server =
                offline::builtin(builtin, *seed).ok_or_else(|| format!("`{builtin}` is not built in"))?;
            let (client_side, server_side) = tokio::io::duplex(1 << 16);
            let handler = OfflineHandler::new(server);
            tokio::spawn(async move {
                if let Ok(running) = serve_server(handler, server_side).await {
                    let _ = running.waiting().await;
                }
            });
            ().serve(client_side).await.map_err(|e| e.to_string())
        }
        Transport::Stdio { command, args, env, cwd } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args).envs(env).kill_on_drop(true);
            if let Some(dir) = cwd {
                cmd.current_dir(dir);
            }
            // Servers log banners to stderr; it is not ours to print.
            let (process, _stderr) = TokioChildProcess::builder(cmd)
                .stderr(std::process::Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot start `{command}`: {e}"))?;
            ().serve(process).await.map_err(|e| e.to_string())
        }
        Transport::Http { url, bearer_token_env } => {
            // reqwest is built without a default TLS provider; ours must be in place first.
            phonebench_model::install_crypto_provider();
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            if let Some(var) = bearer_token_env {
                let token = std::env::var(var)
                    .map_err(|_| format!("server `{name}` needs a token in ${var}, which is not set"))?;
                config.auth_header = Some(token);
            }
            let transport = StreamableHttpClientTransport::from_config(config);
            ().serve(transport).await.map_err(|e| e.to_string())
        }
    }
}

impl McpSession {
    /// Connects to `servers` (names resolved through `config`) and lists their tools. `only`,
    /// when not empty, keeps just those exposed tool names (each must exist).
    pub async fn connect(
        servers: &[String],
        only: &[String],
        config: &McpConfig,
    ) -> Result<McpSession, McpError> {
        let mut session = McpSession {
            servers: Vec::new(),
            tools: Vec::new(),
            routes: BTreeMap::new(),
            config: config.clone(),
        };
        for (i, name) in servers.iter().enumerate() {
            if servers[..i].contains(name) {
                return Err(McpError::Config(format!("MCP server `{name}` is named twice")));
            }
            let transport = config.transport(name)?;
            let connect = |message: String| McpError::Connect { server: name.clone(), message };
            let service = tokio::time::timeout(config.connect_timeout(), start(name, &transport))
                .await
                .map_err(|_| connect(format!("did not start within {} s", config.connect_timeout_s)))?
                .map_err(connect)?;
            let listed = tokio::time::timeout(config.connect_timeout(), service.list_all_tools())
                .await
                .map_err(|_| {
                    connect(format!("did not list its tools within {} s", config.connect_timeout_s))
                })?
                .map_err(|e| connect(format!("listing tools: {e}")))?;
            let index = session.servers.len();
            for tool in listed {
                let exposed = exposed_name(name, &tool.name);
                if !only.is_empty() && !only.contains(&exposed) {
                    continue;
                }
                if session.routes.contains_key(&exposed) {
                    return Err(connect(format!("two tools would both be called `{exposed}`")));
                }
                session.tools.push(McpTool {
                    name: exposed.clone(),
                    description: tool.description.as_deref().unwrap_or("").to_string(),
                    input_schema: Value::Object((*tool.input_schema).clone()),
                });
                session.routes.insert(exposed, ToolRoute { server: index, remote: tool.name.to_string() });
            }
            session.servers.push(Connected { name: name.clone(), service: Some(service), stopped: None });
        }
        if let Some(missing) = only.iter().find(|t| !session.routes.contains_key(*t)) {
            let offered: Vec<&String> = session.routes.keys().collect();
            return Err(McpError::Config(format!(
                "the task offers MCP tool `{missing}`, which none of its servers has (they have: {offered:?})"
            )));
        }
        Ok(session)
    }

    /// The tools offered, in server order then the server's own order.
    pub fn tools(&self) -> &[McpTool] {
        &self.tools
    }

    /// Calls the tool the agent named. Never fails: every problem is an outcome the agent reads.
    pub async fn call(&mut self, tool: &str, arguments: &Map<String, Value>) -> CallOutcome {
        let started = Instant::now();
        let refuse = |text: String| CallOutcome {
            text,
            is_error: true,
            truncated: false,
            failure: None,
            latency: started.elapsed(),
        };
        let Some(route) = self.routes.get(tool) else {
            let names: Vec<&String> = self.routes.keys().collect();
            return refuse(if names.is_empty() {
                format!("error: no MCP tool `{tool}`: this task offers no MCP tools")
            } else {
                format!(
                    "error: no MCP tool `{tool}` (tools: {})",
                    names.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                )
            });
        };
        let remote = route.remote.clone();
        let server = &mut self.servers[route.server];
        let fail = |message: String, started: Instant| CallOutcome {
            text: format!("error: the MCP server failed: {message}"),
            is_error: true,
            truncated: false,
            failure: Some(message),
            latency: started.elapsed(),
        };
        if let Some(why) = &server.stopped {
            return fail(why.clone(), started);
        }
        let Some(service) = server.service.as_ref() else {
            return fail(format!("server `{}` is not connected", server.name), started);
        };
        let params = CallToolRequestParams::new(remote).with_arguments(arguments.clone());
        let timeout = self.config.call_timeout();
        let outcome = tokio::time::timeout(timeout, service.call_tool(params)).await;
        match outcome {
            Err(_) => fail(
                format!("`{}` did not answer within {} s", server.name, self.config.call_timeout_s),
                started,
            ),
            Ok(Ok(result)) => {
                let (text, truncated) = truncate(result_text(&result), self.config.max_result_chars);
                let is_error = result.is_error == Some(true);
                CallOutcome {
                    text: if is_error { format!("error: {text}") } else { text },
                    is_error,
                    truncated,
                    failure: None,
                    latency: started.elapsed(),
                }
            }
            // A JSON-RPC error answer: the server refused the call (unknown tool, bad
            // arguments, its own failure to serve it). The agent reads it; the server lives on.
            Ok(Err(ServiceError::McpError(e))) => {
                let (text, _) =
                    truncate(format!("error {}: {}", e.code.0, e.message), self.config.max_result_chars);
                CallOutcome {
                    text,
                    is_error: true,
                    truncated: false,
                    failure: None,
                    latency: started.elapsed(),
                }
            }
            Ok(Err(e)) => {
                let message = format!("`{}`: {e}", server.name);
                if matches!(e, ServiceError::TransportClosed | ServiceError::TransportSend(_))
                    || service.is_closed()
                {
                    server.stopped = Some(format!("`{}` has stopped ({e})", server.name));
                }
                fail(message, started)
            }
        }
    }

    /// The configuration's failure policy.
    pub fn failure_policy(&self) -> FailurePolicy {
        self.config.on_server_failure
    }

    /// Disconnects from every server (child processes are killed).
    pub async fn close(mut self) {
        for s in &mut self.servers {
            if let Some(service) = s.service.take() {
                let _ = tokio::time::timeout(Duration::from_secs(5), service.cancel()).await;
            }
        }
    }
}

/// A result's content as text: text blocks as they are, other blocks described; the structured
/// content when there is nothing else.
pub fn result_text(result: &CallToolResult) -> String {
    let mut parts = Vec::new();
    for block in &result.content {
        parts.push(match block {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(i) => format!("[image: {}, {} bytes of base64]", i.mime_type, i.data.len()),
            ContentBlock::Audio(a) => format!("[audio: {}]", a.mime_type),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    format!("[resource {uri}]\n{text}")
                }
                ResourceContents::BlobResourceContents { uri, .. } => format!("[resource {uri}: binary]"),
                #[allow(unreachable_patterns)]
                _ => "[resource]".to_string(),
            },
            ContentBlock::ResourceLink(l) => format!("[link: {}]", l.uri),
            #[allow(unreachable_patterns)]
            _ => "[content]".to_string(),
        });
    }
    if parts.is_empty()
        && let Some(v) = &result.structured_content
    {
        parts.push(v.to_string());
    }
    parts.join("\n")
}

/// Cuts `text` to `max` characters with a last line saying how much was kept.
pub fn truncate(text: String, max: usize) -> (String, bool) {
    let total = text.chars().count();
    if total <= max {
        return (text, false);
    }
    let end = text.char_indices().nth(max).map_or(text.len(), |(i, _)| i);
    let mut kept = text[..end].to_string();
    kept.push_str(&format!("\n[truncated: {max} of {total} characters shown]"));
    (kept, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_truncation() {
        assert_eq!(exposed_name("geo", "route"), "geo_route");
        assert_eq!(exposed_name("my-srv", "get.thing/x"), "my_srv_get_thing_x");
        let (t, cut) = truncate("héllo wörld".repeat(10), 12);
        assert!(cut);
        assert!(t.starts_with("héllo wörldh\n[truncated: 12 of 110 characters shown]"), "{t}");
        assert_eq!(truncate("short".into(), 12), ("short".to_string(), false));
    }

    #[test]
    fn config_errors_have_lines() {
        let e =
            McpConfig::from_toml("call_timeout_s = 5\n[servers.x]\ncommand = 3\n", "mcp.toml").unwrap_err();
        assert!(e.to_string().starts_with("mcp.toml:"), "{e}");
        let e = McpConfig::from_toml("[servers.x]\ncomand = \"node\"\n", "mcp.toml").unwrap_err();
        assert!(e.to_string().contains("unknown field `comand`"), "{e}");
        let e = McpConfig::from_toml("[servers.x]\ncommand = \"node\"\nurl = \"http://h/mcp\"\n", "mcp.toml")
            .unwrap_err();
        assert!(e.to_string().contains("not several"), "{e}");
        let e =
            McpConfig::from_toml("[servers.x]\nurl = \"http://h/mcp\"\nargs = []\n", "mcp.toml").unwrap_err();
        assert!(e.to_string().contains("`args` does not go with `url`"), "{e}");
        let e = McpConfig::from_toml("[servers.x]\n", "mcp.toml").unwrap_err();
        assert!(e.to_string().contains("needs `command`"), "{e}");
        let e = McpConfig::from_toml("call_timeout_s = -1\n", "mcp.toml").unwrap_err();
        assert!(e.to_string().contains("call_timeout_s"), "{e}");
        let c = McpConfig::from_toml(
            "max_result_chars = 500\non_server_failure = \"infrastructure\"\n[servers.everything]\ncommand = \"node\"\nargs = [\"x.js\"]\n[servers.w2]\nbuiltin = \"weather\"\nseed = 4\n[servers.remote]\nurl = \"http://127.0.0.1:1/mcp\"\n",
            "mcp.toml",
        )
        .unwrap();
        assert_eq!(c.on_server_failure, FailurePolicy::Infrastructure);
        assert!(matches!(c.transport("everything").unwrap(), Transport::Stdio { .. }));
        assert!(matches!(c.transport("w2").unwrap(), Transport::Builtin { seed: 4, .. }));
        assert!(matches!(c.transport("remote").unwrap(), Transport::Http { .. }));
        assert!(matches!(c.transport("geo").unwrap(), Transport::Builtin { seed: 0, .. }));
        assert!(matches!(c.transport("nope"), Err(McpError::UnknownServer(_))));
        let secret =
            McpConfig::from_toml("[servers.s]\ncommand = \"x\"\nenv = { API_KEY = \"sk-secret\" }\n", "m")
                .unwrap();
        assert!(!secret.fingerprint().contains("sk-secret") && secret.fingerprint().contains("API_KEY"));
    }

    #[tokio::test]
    async fn builtin_servers_round_trip_over_mcp() {
        let config = McpConfig::default();
        let names = vec!["geo".to_string(), "finance".to_string(), "tracker".to_string()];
        let mut session = McpSession::connect(&names, &[], &config).await.unwrap();
        assert!(session.tools().iter().any(|t| t.name == "geo_route"));
        assert!(session.tools().iter().any(|t| t.name == "tracker_create_issue"));
        let args = |v: Value| v.as_object().cloned().unwrap();
        let r = session
            .call("finance_convert", &args(serde_json::json!({"amount": 120, "from": "EUR", "to": "USD"})))
            .await;
        assert!(!r.is_error, "{r:?}");
        assert!(r.text.contains("\"result\": 130.43"), "{}", r.text);
        let bad = session.call("finance_convert", &args(serde_json::json!({"amount": "lots"}))).await;
        assert!(bad.is_error && bad.failure.is_none(), "{bad:?}");
        assert!(bad.text.contains("missing required argument"), "{}", bad.text);
        let unknown = session.call("geo_teleport", &Map::new()).await;
        assert!(unknown.is_error && unknown.text.contains("geo_route"), "{unknown:?}");
        // State lives per session: a new session has a fresh tracker.
        let c = session
            .call(
                "tracker_create_issue",
                &args(serde_json::json!({"repo": "relecloud/website", "title": "A"})),
            )
            .await;
        assert!(c.text.contains("\"number\": 49"), "{}", c.text);
        session.close().await;
        let mut again = McpSession::connect(&names[2..], &[], &config).await.unwrap();
        let c = again
            .call(
                "tracker_create_issue",
                &args(serde_json::json!({"repo": "relecloud/website", "title": "B"})),
            )
            .await;
        assert!(c.text.contains("\"number\": 49"), "{}", c.text);
        let only = McpSession::connect(&names[..1], &["geo_route".to_string()], &config).await.unwrap();
        assert_eq!(only.tools().len(), 1);
        let missing = McpSession::connect(&names[..1], &["geo_fly".to_string()], &config).await.unwrap_err();
        assert!(missing.to_string().contains("geo_fly"), "{missing}");
    }
}
