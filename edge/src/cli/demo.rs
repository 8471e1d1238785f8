//! `ephemeral demo [--json]`: starts a server in-process on embedded
//! defaults (a temporary data folder, a demo organisation with a balance),
//! sends the SEED.md request with an Idempotency-Key over HTTP, and shows
//! its live timeline in the page's lanes; then publishes the run as a
//! sample and prints the console's pages for it (`--keep` keeps the server
//! up so a person can open them).
//!
//! With no provider configured the run uses `scripted/seed`, the built-in
//! deterministic model (no LLM): it issues the tool calls a capable model
//! would for the seed prompt and answers from their real outputs, through
//! the same agent loop. `EPHEMERAL_MODEL_URL` (+ `EPHEMERAL_MODEL_KEY`)
//! points the default model at a real OpenAI-compatible server instead.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use std::sync::Arc;

use ephemeral_runtime::Runtime;

use super::keys::defaults;
use super::timeline_view::{Follow, follow_run};
use crate::broker::{MODEL_KEY_ENV, MODEL_URL_ENV};
use crate::config::Config;
use crate::ids::{key_hash, new_member_key};
use crate::isolation::Isolation;
use crate::server::Server;

/// The request of SEED.md, as the page sends it.
pub const SEED_REQUEST: &str = r#"{
  "prompt": "This is a sandbox test. Do these steps with the shell and report the real output, never what you expect. 1) Write a small script that prints the first 15 prime numbers, run it and show the output. 2) Run `whoami` and `pwd`. 3) Try to reach the internet with `curl -sS -m 8 https://example.com` (and, if curl is missing, python3 with urllib) and report the exact error. 4) Write a file named /tmp/proof.txt and list it. Reply in Markdown, at most 120 words: one line per step with the result, then one sentence saying whether the network call succeeded.",
  "web": false,
  "shell": true,
  "timeout_seconds": 120,
  "max_cost_micros": 40000
}"#;

#[derive(clap::Args)]
pub struct DemoArgs {
    /// Print the raw events, one JSON object per line.
    #[arg(long)]
    json: bool,
    /// Keep the server up after the run (until Ctrl-C), to open its pages.
    #[arg(long)]
    keep: bool,
    /// Address to serve on (a free port of 127.0.0.1 by default).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    listen: std::net::SocketAddr,
}

pub fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    rt.block_on(serve_and_follow(args))
}

async fn serve_and_follow(args: DemoArgs) -> anyhow::Result<ExitCode> {
    let json = args.json;
    let data = tempfile::tempdir().context("cannot create a temporary data folder")?;
    let real_model = std::env::var(MODEL_URL_ENV).is_ok();
    let config = Config {
        listen: args.listen,
        data_dir: data.path().to_path_buf(),
        default_model: if real_model {
            "openai/gpt-6-luna"
        } else {
            "scripted/seed"
        }
        .into(),
        ..Config::default()
    };
    let org = defaults(&config);
    if !json {
        say("starting a server (python3 is compiled once for this machine, then cached)");
    }
    // The server's own store and runtime: nothing is opened or loaded twice.
    let server = Server::start(config).await?;
    let edge = server.edge();
    let key = new_member_key();
    edge.store.create_key("demo", &key_hash(&key), &org).await?;
    if edge.isolation() == Isolation::Wasm {
        warm_python(edge.runtime.clone()).await;
    }
    let base = format!("http://{}", server.local_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(async move {
        let _ = stopped.await;
    }));
    if !json {
        say(&format!(
            "server on {base} (isolation {}, SQLite in a temporary folder)",
            edge.isolation().timeline_name()
        ));
        say(&model_line(real_model));
    }
    let follow = Follow {
        base: base.clone(),
        key: key.clone(),
        json,
        connect_timeout: std::time::Duration::from_secs(5),
    };
    let followed = follow_run(&follow, SEED_REQUEST.to_string()).await;
    if let Ok(run) = &followed
        && !json
    {
        show_pages(&edge, &base, &run.run_id, &key, args.keep).await;
    }
    if args.keep && followed.is_ok() {
        say("serving until Ctrl-C");
        crate::server::shutdown_signal().await;
    }
    let _ = stop.send(());
    let _ = serving.await;
    Ok(if followed?.succeeded {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Publishes the run as a sample and says where its pages are.
async fn show_pages(edge: &crate::state::Edge, base: &str, run_id: &str, key: &str, keep: bool) {
    match crate::samples::publish(
        edge.store.as_ref(),
        run_id,
        Some("The seed run: a sandbox test"),
    )
    .await
    {
        Ok(sample) => say(&format!(
            "sample (anyone can open it): {base}/samples/{}",
            sample.id
        )),
        Err(e) => say(&format!("the run was not published as a sample: {e}")),
    }
    say(&format!("run page: {base}/runs/{run_id}"));
    if keep {
        // A demo organisation in a temporary folder: its key opens the
        // run page, and goes with the folder.
        say(&format!(
            "member key of the demo organisation (to sign in): {key}"
        ));
    } else {
        say("(--keep keeps the server up to open them)");
    }
}

fn model_line(real_model: bool) -> String {
    if real_model {
        let url = std::env::var(MODEL_URL_ENV).unwrap_or_default();
        format!("model openai/gpt-6-luna at {url} (key from {MODEL_KEY_ENV})")
    } else {
        format!(
            "model scripted/seed: a built-in deterministic model (no LLM) that makes the seed run's tool calls \
             and answers from their real outputs; set {MODEL_URL_ENV} and {MODEL_KEY_ENV} for a real one"
        )
    }
}

/// python3 is compiled for this machine the first time (seconds), then
/// loaded from the cache: say so rather than stall silently.
async fn warm_python(runtime: Arc<Runtime>) {
    let warmed = tokio::task::spawn_blocking(move || {
        if !runtime.program_names().iter().any(|p| p == "python3") {
            return Err("python3 is not built here: run `./dev demo` to build it".to_string());
        }
        runtime
            .program("python3")
            .map(|_| ())
            .map_err(|e| format!("python3 unavailable: {e}"))
    })
    .await;
    if let Ok(Err(message)) = warmed {
        say(&message);
    }
}

fn say(text: &str) {
    let _ = writeln!(std::io::stdout().lock(), "ephemeral demo: {text}");
}
