//! `phonebench serve`: the environment server (HTTP + WebSocket, OpenEnv-shaped).

use std::time::Duration;

use anyhow::Result;

use crate::mcp::bind;
use crate::suite::{McpArgs, runtime};

/// `phonebench serve`.
#[derive(clap::Args, Debug, Clone)]
pub struct ServeArgs {
    /// Address to listen on. Loopback by default; any other address needs --token-env.
    #[arg(long, default_value = "127.0.0.1:8000")]
    bind: String,
    /// The suite whose tasks `/reset` plays.
    #[arg(long, default_value = "starter")]
    suite: String,
    /// App packages folder (default: $PHONEBENCH_APPS, ./apps, or the repository's apps/).
    #[arg(long)]
    apps: Option<std::path::PathBuf>,
    /// Bearer token every request but /health must carry, read from this environment variable
    /// (never from the command line, where other users could read it); required for any
    /// address other than loopback.
    #[arg(long)]
    token_env: Option<String>,
    /// Most sessions alive at once (HTTP sessions and WebSocket connections together).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..))]
    max_sessions: u64,
    /// A session unused for this many seconds ends and frees its place.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    idle_timeout: u64,
    /// Largest request body or WebSocket message, in bytes.
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1024..))]
    max_request_bytes: u64,
    /// Stop when standard input closes: a parent process that started the server with a pipe
    /// on its stdin takes the server with it however it ends (even `kill -9`).
    #[arg(long)]
    exit_with_stdin: bool,
    /// Every session's screen size, `WxH` or `WxH@DPI` (768x1280 is SPHINX's).
    #[arg(long, default_value = "1080x2400")]
    size: String,
    #[command(flatten)]
    mcp: McpArgs,
}

/// Serves until the process is stopped (or, with `--exit-with-stdin`, stdin closes).
pub fn serve(args: ServeArgs) -> Result<()> {
    if args.exit_with_stdin {
        // A plain thread: reading stdin blocks, and the end of it ends the process.
        std::thread::spawn(|| {
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            // Not eprintln!: the parent may be gone with the read end of stderr, and a panic on
            // the broken pipe would end this thread instead of the process.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "phonebench serve: stdin closed, stopping");
            std::process::exit(0);
        });
    }
    let config = crate::mcp::phone_config(&args.suite, args.apps.clone(), &args.mcp)?;
    runtime()?.block_on(async {
        let (listener, token) = bind(&args.bind, args.token_env.as_deref()).await?;
        let addr = listener.local_addr()?;
        let limits = phonebench_serve::env_server::EnvServerLimits {
            max_sessions: usize::try_from(args.max_sessions).unwrap_or(usize::MAX),
            idle: Duration::from_secs(args.idle_timeout),
            max_request_bytes: usize::try_from(args.max_request_bytes).unwrap_or(usize::MAX),
            token,
            loopback: addr.ip().is_loopback(),
            display: args.size.parse().map_err(|e: String| anyhow::anyhow!("--size: {e}"))?,
        };
        // The line clients wait for (the Python package reads the address from it).
        eprintln!(
            "phonebench serve: listening on http://{addr} (suite {}, at most {} sessions)",
            config.suite.manifest.name, limits.max_sessions
        );
        phonebench_serve::env_server::serve(listener, config, limits).await?;
        Ok(())
    })
}
