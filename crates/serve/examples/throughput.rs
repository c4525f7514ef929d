//! In-process steps per second: the environment server's workload without the protocol, to set
//! beside `python/benchmarks/ws_throughput.py` (the gap is what HTTP/WebSocket and JSON cost).
//!
//! Each of N concurrent sessions loops over the starter suite's tasks: reset to the task, then
//! replay its expert actions (recorded once beforehand), exactly what the Python benchmark sends.
//!
//! ```sh
//! cargo run --release -p phonebench-serve --example throughput -- [SESSIONS] [SECONDS]
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use phonebench_actions::Action;
use phonebench_agents::ReferenceAgent;
use phonebench_env::EpisodeOptions;
use phonebench_phone::Catalog;
use phonebench_serve::{Acted, PhoneServerConfig, PhoneSession, prepare_task};
use phonebench_tasks::Suite;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let sessions: usize = args.next().map_or(Ok(32), |a| a.parse())?;
    let seconds: f64 = args.next().map_or(Ok(10.0), |a| a.parse())?;
    let config = PhoneServerConfig {
        catalog: Catalog::load_dir(&repo().join("apps"))?,
        suite: Arc::new(Suite::load(&repo().join("suites/starter")).map_err(|e| format!("{e:?}"))?),
        mcp: Arc::default(),
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(async move {
        // The expert's actions of every task, recorded once (as the Python benchmark does).
        let mut scripts: Vec<(String, Vec<Action>)> = Vec::new();
        let seed = config.suite.manifest.seed;
        for spec in &config.suite.tasks {
            let prepared = prepare_task(&config, &spec.id, seed, 0, EpisodeOptions::default(), None).await?;
            let mut expert = ReferenceAgent::new(prepared.task().reference.clone());
            let mut session = PhoneSession::default();
            session.install(prepared).await;
            let mut actions = Vec::new();
            while let Some(tree) = session.episode().map(|e| e.tree().clone()) {
                let action = expert.decide(&tree);
                actions.push(action.clone());
                if !matches!(session.act(String::new(), Ok(action)).await, Acted::Going { .. }) {
                    break;
                }
            }
            scripts.push((spec.id.clone(), actions));
        }
        let scripts = Arc::new(scripts);
        let (steps, resets) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let deadline = Instant::now() + Duration::from_secs_f64(seconds);
        let started = Instant::now();
        let mut set = tokio::task::JoinSet::new();
        for s in 0..sessions {
            let (config, scripts, steps, resets) = (config.clone(), scripts.clone(), steps.clone(), resets.clone());
            set.spawn(async move {
                let mut i = s;
                while Instant::now() < deadline {
                    let (task, actions) = &scripts[i % scripts.len()];
                    i += 1;
                    let Ok(prepared) = prepare_task(&config, task, seed, 0, EpisodeOptions::default(), None).await
                    else {
                        continue;
                    };
                    let mut session = PhoneSession::default();
                    session.install(prepared).await;
                    resets.fetch_add(1, Ordering::Relaxed);
                    for action in actions {
                        let raw = serde_json::to_string(action).unwrap_or_default();
                        session.act(raw, Ok(action.clone())).await;
                        steps.fetch_add(1, Ordering::Relaxed);
                    }
                    // Sessions take turns, as on a server's worker threads.
                    tokio::task::yield_now().await;
                }
            });
        }
        while set.join_next().await.is_some() {}
        let elapsed = started.elapsed().as_secs_f64();
        let (steps, resets) = (steps.load(Ordering::Relaxed), resets.load(Ordering::Relaxed));
        println!(
            "{{\"mode\":\"in-process\",\"sessions\":{sessions},\"seconds\":{elapsed:.1},\"steps\":{steps},\"resets\":{resets},\"steps_per_s\":{:.0},\"resets_per_s\":{:.1},\"threads\":{}}}",
            steps as f64 / elapsed,
            resets as f64 / elapsed,
            std::thread::available_parallelism().map_or(1, |n| n.get())
        );
        Ok::<_, Box<dyn std::error::Error>>(())
    })
}
