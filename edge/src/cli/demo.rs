//! `ephemeral demo`: starts a server on embedded defaults, sends the seed
//! run (SEED.md) over HTTP and shows its live timeline in the page's lanes.
//!
//! Until the agent exists, the run uses the built-in `ephemeral/script`
//! model: the commands the seed run's agent sent are the prompt's lines,
//! so a new user sees in one command what a run is: budget reserved, a
//! sandbox where `whoami` is `worker` in a scratch folder with no network,
//! and the charge and release at the end.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use ephemeral_runtime::{Runtime, RuntimeConfig};

use super::keys::defaults;
use super::timeline_view::{Follow, follow_run};
use crate::config::Config;
use crate::ids::{key_hash, new_member_key};
use crate::server::Server;
use crate::store::Store;

/// The seed run's shell commands, in order.
pub const SEED_COMMANDS: &[&str] = &[
    "pwd; whoami",
    "command -v curl && curl -sS -m 8 https://example.com",
    "printf '%s\\n' '#!/usr/bin/env python3' 'primes = []' 'n = 2' 'while len(primes) < 15:' \
     '    if all(n % p for p in primes):' '        primes.append(n)' '    n += 1' \
     'print(*primes)' > primes.py && chmod +x primes.py && ./primes.py",
    "printf 'sandbox proof\\n' > /tmp/proof.txt && ls -l /tmp/proof.txt",
];

pub fn run() -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    rt.block_on(serve_and_follow())
}

/// A server on embedded defaults (loopback, a temporary data folder), an
/// organisation with a key, the seed run posted over HTTP and its
/// timeline followed live, as `ephemeral run` would.
async fn serve_and_follow() -> anyhow::Result<ExitCode> {
    let data = tempfile::tempdir().context("cannot create a temporary data folder")?;
    let config = Config {
        listen: "127.0.0.1:0".parse()?,
        data_dir: data.path().to_path_buf(),
        default_model: "ephemeral/script".into(),
        ..Config::default()
    };
    let key = new_member_key();
    let store = Store::open(None, &config.sqlite_path()).await?;
    store
        .create_key("demo", &key_hash(&key), &defaults(&config))
        .await?;
    drop(store);
    warm_python().await;
    let server = Server::start(config).await?;
    let base = format!("http://{}", server.local_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(async move {
        let _ = stopped.await;
    }));
    say(&format!(
        "server on {base} (isolation wasm, SQLite in a temporary folder)"
    ));
    say(
        "no model provider is configured: the seed run's shell steps run as a script (model ephemeral/script)",
    );
    let request = serde_json::json!({
        "prompt": SEED_COMMANDS.join("\n"),
        "model": "ephemeral/script",
        "shell": true,
        "web": false,
        "timeout_seconds": 120,
        "max_cost_micros": 40_000,
    });
    let follow = Follow {
        base,
        key,
        json: false,
        connect_timeout: std::time::Duration::from_secs(5),
    };
    let succeeded = follow_run(&follow, request.to_string()).await;
    let _ = stop.send(());
    let _ = serving.await;
    Ok(if succeeded? {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// python3 is compiled for this machine the first time (seconds), then
/// loaded from the cache: say so rather than stall silently.
async fn warm_python() {
    let warmed = tokio::task::spawn_blocking(|| {
        let runtime = Runtime::new(RuntimeConfig::default()).ok()?;
        if !runtime.program_names().iter().any(|p| p == "python3") {
            return Some(Err(
                "python3 is not built here: run `./dev demo` to build it".to_string(),
            ));
        }
        say("loading python3 (compiled once for this machine, then cached)");
        Some(
            runtime
                .program("python3")
                .map(|_| ())
                .map_err(|e| format!("python3 unavailable: {e}")),
        )
    })
    .await;
    if let Ok(Some(Err(message))) = warmed {
        say(&message);
    }
}

fn say(text: &str) {
    let _ = writeln!(std::io::stdout().lock(), "ephemeral demo: {text}");
}
