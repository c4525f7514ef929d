//! `phonebench mcp-tools`: the offline MCP servers from the command line: list their tools, call
//! one through the real MCP client, or serve one over stdio or streamable HTTP for another host.

use anyhow::{Context, Result, bail};
use phonebench_mcp::{BUILTIN_SERVERS, McpConfig, McpSession, OfflineHandler, builtin, exposed_name};

use crate::suite::{McpArgs, runtime};

/// `phonebench mcp-tools`.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum McpToolsCommand {
    /// List the tools of servers (default: every built-in one), as agents see them.
    List {
        /// Servers to list (built-in names or names from --mcp-config).
        servers: Vec<String>,
        /// One JSON object per tool (name, description, input_schema).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        mcp: McpArgs,
    },
    /// Call one tool through the MCP client and print what the agent would get. Exits 2 when
    /// the call fails (tool error, bad arguments, server failure).
    Call {
        /// The server (built-in name or one from --mcp-config).
        server: String,
        /// The tool's own name (`route`) or its exposed name (`geo_route`).
        tool: String,
        /// The arguments as a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
        #[command(flatten)]
        mcp: McpArgs,
    },
    /// Serve a built-in server over stdio (default) or streamable HTTP at http://ADDR/mcp.
    Serve {
        /// Which built-in server.
        server: String,
        /// Serve over streamable HTTP on this address (e.g. 127.0.0.1:8931) instead of stdio.
        #[arg(long)]
        http: Option<String>,
        /// Bearer token required from HTTP clients, read from this environment variable;
        /// required for any address other than loopback.
        #[arg(long)]
        token_env: Option<String>,
        /// Seed of the server's generated data (the weather).
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
}

/// Runs a `mcp-tools` command; returns whether it succeeded.
pub fn run(command: McpToolsCommand) -> Result<bool> {
    match command {
        McpToolsCommand::List { servers, json, mcp } => {
            let config = mcp.config()?;
            let servers: Vec<String> = if servers.is_empty() {
                BUILTIN_SERVERS.iter().map(|s| s.to_string()).collect()
            } else {
                servers
            };
            let rt = runtime()?;
            let session = rt.block_on(McpSession::connect(&servers, &[], &config))?;
            for tool in session.tools() {
                if json {
                    out!("{}", serde_json::to_string(tool)?)?;
                } else {
                    out!("{:<28} {}", tool.name, tool.description)?;
                }
            }
            rt.block_on(session.close());
            Ok(true)
        }
        McpToolsCommand::Call { server, tool, arguments, mcp } => {
            let config: McpConfig = mcp.config()?;
            let arguments: serde_json::Map<String, serde_json::Value> = match serde_json::from_str(&arguments)
            {
                Ok(serde_json::Value::Object(map)) => map,
                _ => bail!("the arguments must be a JSON object, e.g. '{{\"city\": \"Lisbon\"}}'"),
            };
            let prefix = exposed_name(&server, "");
            let name = if tool.starts_with(&prefix) { tool } else { exposed_name(&server, &tool) };
            let rt = runtime()?;
            let outcome = rt.block_on(async {
                let mut session = McpSession::connect(std::slice::from_ref(&server), &[], &config).await?;
                let outcome = session.call(&name, &arguments).await;
                session.close().await;
                Ok::<_, anyhow::Error>(outcome)
            })?;
            out!("{}", outcome.text)?;
            Ok(!outcome.is_error)
        }
        McpToolsCommand::Serve { server, http, token_env, seed } => {
            if builtin(&server, seed).is_none() {
                bail!("`{server}` is not a built-in server ({})", BUILTIN_SERVERS.join(", "));
            }
            let factory = move || {
                builtin(&server, seed)
                    .map(OfflineHandler::new)
                    .ok_or_else(|| std::io::Error::other("unknown server"))
            };
            let rt = runtime()?;
            match http {
                None => rt.block_on(phonebench_mcp::serve::serve_stdio(factory()?))?,
                Some(addr) => rt.block_on(async {
                    let (listener, token) = bind(&addr, token_env.as_deref()).await?;
                    eprintln!("serving MCP at http://{}/mcp", listener.local_addr()?);
                    phonebench_mcp::serve::serve_http(factory, listener, token).await?;
                    Ok::<_, anyhow::Error>(())
                })?,
            }
            Ok(true)
        }
    }
}

/// Binds `addr`; a non-loopback address needs a token from `token_env`.
pub async fn bind(addr: &str, token_env: Option<&str>) -> Result<(tokio::net::TcpListener, Option<String>)> {
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("binding {addr}"))?;
    let token = match token_env {
        Some(var) => Some(std::env::var(var).with_context(|| format!("--token-env: ${var} is not set"))?),
        None => None,
    };
    if token.as_deref().is_some_and(str::is_empty) {
        bail!("the bearer token is empty");
    }
    if !listener.local_addr()?.ip().is_loopback() && token.is_none() {
        bail!("serving on {addr}, beyond this machine, needs a bearer token: --token-env VAR");
    }
    Ok((listener, token))
}

/// The suite, apps and MCP configuration a phone server plays.
pub fn phone_config(
    suite: &str,
    apps: Option<std::path::PathBuf>,
    mcp: &McpArgs,
) -> Result<phonebench_serve::PhoneServerConfig> {
    let suite = crate::suite::load_suite(suite)?;
    let catalog = phonebench_phone::Catalog::load_dir(&crate::play::apps_dir(apps))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(phonebench_serve::PhoneServerConfig {
        catalog,
        suite: std::sync::Arc::new(suite),
        mcp: std::sync::Arc::new(mcp.config()?),
    })
}

/// `phonebench mcp-server`.
#[derive(clap::Args, Debug, Clone)]
pub struct McpServerArgs {
    /// The suite whose tasks `start_task` plays.
    #[arg(long, default_value = "starter")]
    suite: String,
    /// App packages folder (default: $PHONEBENCH_APPS, ./apps, or the repository's apps/).
    #[arg(long)]
    apps: Option<std::path::PathBuf>,
    /// Serve over streamable HTTP on this address (e.g. 127.0.0.1:8932) instead of stdio; each
    /// MCP session gets its own phone.
    #[arg(long)]
    http: Option<String>,
    /// Bearer token required from HTTP clients, read from this environment variable; required
    /// for any address other than loopback.
    #[arg(long)]
    token_env: Option<String>,
    /// Most phones alive at once over HTTP (one per MCP session; a session idle for 5 minutes
    /// ends and frees its place).
    #[arg(long, default_value_t = 64)]
    max_sessions: usize,
    #[command(flatten)]
    mcp: McpArgs,
}

/// Serves the phone until the client (stdio) or the process (HTTP) ends.
pub fn serve_phone(args: McpServerArgs) -> Result<()> {
    let config = phone_config(&args.suite, args.apps.clone(), &args.mcp)?;
    let rt = runtime()?;
    match args.http {
        None => {
            rt.block_on(phonebench_mcp::serve::serve_stdio(phonebench_serve::PhoneServer::new(config)))?
        }
        Some(addr) => rt.block_on(async {
            let (listener, token) = bind(&addr, args.token_env.as_deref()).await?;
            eprintln!("serving the phone over MCP at http://{}/mcp", listener.local_addr()?);
            let sessions = phonebench_serve::SessionLimit::new(args.max_sessions.max(1));
            let factory = move || {
                phonebench_serve::PhoneServer::with_ticket(config.clone(), &sessions).ok_or_else(|| {
                    std::io::Error::other(format!(
                        "{} sessions are open, the most allowed (--max-sessions)",
                        sessions.live()
                    ))
                })
            };
            phonebench_mcp::serve::serve_http(factory, listener, token).await?;
            Ok::<_, anyhow::Error>(())
        })?,
    }
    Ok(())
}
