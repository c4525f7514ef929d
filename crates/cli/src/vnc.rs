//! `phonebench vnc-server`: the simulated phone served over RFB (VNC), so any VNC client can
//! watch and drive it, and a pixels-only agent built for VNC can be scored on our tasks.

use std::io::Write as _;
use std::net::TcpListener;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use phonebench_env::EpisodeOptions;
use phonebench_serve::vnc::VncPhone;
use phonebench_serve::{PhoneSession, prepare_free, prepare_task};
use phonebench_vnc::VncError;
use phonebench_vnc::server::{ServerOptions, serve_connection};

use crate::suite::{McpArgs, runtime};

/// `phonebench vnc-server`.
#[derive(clap::Args, Debug, Clone)]
pub struct VncServerArgs {
    /// Address to listen on (port 0 takes a free one; the chosen address is the first line on
    /// standard output). Loopback by default; any other address needs a password.
    #[arg(long, default_value = "127.0.0.1:5900")]
    listen: String,
    /// VNC password (VNC Authentication), read from this environment variable (never from the
    /// command line, where other users could read it). RFB keeps only its first 8 characters.
    #[arg(long)]
    password_env: Option<String>,
    /// The suite whose task `--task` names.
    #[arg(long, default_value = "starter")]
    suite: String,
    /// Play this task (the verdict is printed when the client leaves); without it a free phone.
    #[arg(long)]
    task: Option<String>,
    /// Suite seed of the task instance (default the suite's).
    #[arg(long)]
    seed: Option<u64>,
    /// Instance of the task.
    #[arg(long, default_value_t = 0)]
    instance: u32,
    /// App to open first on a free phone.
    #[arg(long, conflicts_with = "task")]
    app: Option<String>,
    /// Step budget (default the task's).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    max_steps: Option<u32>,
    /// Screen size, `WxH` or `WxH@DPI`.
    #[arg(long, default_value = "1080x2400")]
    size: String,
    /// App packages folder (default: $PHONEBENCH_APPS, ./apps, or the repository's apps/).
    #[arg(long)]
    apps: Option<std::path::PathBuf>,
    /// Serve one client, print its episode's verdict and stop; without it every client gets a
    /// new episode of the same task (or a fresh free phone).
    #[arg(long)]
    once: bool,
    /// Print every action a client's input became, as JSON lines.
    #[arg(long)]
    log_actions: bool,
    /// Text a client puts on its clipboard is the episode's answer (which ends it). Off by
    /// default: many viewers send the local clipboard without being asked.
    #[arg(long)]
    clipboard_answer: bool,
    /// A client silent for this many seconds is dropped (its episode ends as if it left).
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    idle_timeout: u64,
    #[command(flatten)]
    mcp: McpArgs,
}

/// Serves until stopped (or, with `--once`, until the first client leaves).
pub fn run(args: &VncServerArgs) -> Result<()> {
    let password = match &args.password_env {
        Some(var) => {
            let value = std::env::var(var).with_context(|| format!("--password-env: `{var}` is not set"))?;
            if value.is_empty() {
                bail!("--password-env: `{var}` is empty");
            }
            Some(value)
        }
        None => None,
    };
    let config = crate::mcp::phone_config(&args.suite, args.apps.clone(), &args.mcp)?;
    let display = args.size.parse().map_err(|e: String| anyhow!("--size: {e}"))?;
    let listener =
        TcpListener::bind(&args.listen).with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() && password.is_none() {
        bail!("listening on {addr}, beyond this machine, needs a password (--password-env)");
    }
    let runtime = Arc::new(runtime()?);
    let options = ServerOptions {
        password,
        idle_timeout: Some(std::time::Duration::from_secs(args.idle_timeout)),
        ..ServerOptions::default()
    };
    let mut out = std::io::stdout().lock();
    // The line clients and tests wait for.
    writeln!(out, "{}", serde_json::json!({ "event": "listening", "address": addr.to_string() }))?;
    out.flush()?;
    loop {
        let episode_options = EpisodeOptions { display, ..EpisodeOptions::default() };
        let prepared = match &args.task {
            Some(task) => runtime.block_on(prepare_task(
                &config,
                task,
                args.seed.unwrap_or(config.suite.manifest.seed),
                args.instance,
                episode_options,
                args.max_steps,
            )),
            None => prepare_free(
                &config,
                args.app.clone(),
                args.seed.unwrap_or(0),
                episode_options,
                args.max_steps,
            ),
        }
        .map_err(|e| anyhow!(e))?;
        let goal = prepared.task().goal.clone();
        let mut session = PhoneSession::default();
        runtime.block_on(session.install(prepared));
        let name = format!("phonebench: {goal}");
        let mut phone = VncPhone::new(session, Arc::clone(&runtime), name)
            .map_err(|e| anyhow!(e))?
            .answer_from_clipboard(args.clipboard_answer);
        // Connections that fail before the handshake ends (a wrong password, garbage, a port
        // scan) never touch the episode: the next one gets it.
        loop {
            let (stream, peer) = listener.accept().context("accepting a VNC client")?;
            let connected =
                serde_json::json!({ "event": "connected", "peer": peer.to_string(), "goal": goal });
            writeln!(out, "{connected}")?;
            out.flush()?;
            // A client that breaks the protocol ends its own connection, never the server.
            let served = serve_connection(stream, &mut phone, &options);
            if let Err(e) = &served {
                writeln!(out, "{}", serde_json::json!({ "event": "client_error", "error": e.to_string() }))?;
                out.flush()?;
            }
            if let Err(VncError::Screen(why)) = served {
                // Our own failure, not the client's: the episode is not scored.
                phone.fail(format!("the VNC server could not show the screen: {why}"));
            }
            if phone.connected() {
                break;
            }
        }
        let verdict = phone.finish();
        if args.log_actions {
            for turn in phone.turns() {
                writeln!(out, "{turn}")?;
            }
        }
        writeln!(out, "{verdict}")?;
        out.flush()?;
        phone.close();
        if args.once {
            return Ok(());
        }
    }
}
