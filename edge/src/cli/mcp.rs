//! `ephemeral mcp [--isolation kvm|jail|wasm] [--url URL [--key KEY]]`: an
//! MCP server over stdio whose tools run in one sandbox per session — on
//! this machine, or on a server's API with `--url`. Logs go to stderr:
//! stdout is the protocol's.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow};
use clap::Args;
use ephemeral_mcp::{About, SandboxFactory};
use ephemeral_runtime::{Limits, Runtime};

use super::exec::Isolation;
use crate::config::WorkersConfig;
use crate::mcp::{Local, Remote};
use crate::sandbox::{Choice, choose};

#[derive(Args)]
pub struct McpArgs {
    /// Isolation of local sandboxes; the strongest this host supports by default.
    #[arg(long, value_enum, conflicts_with = "url")]
    isolation: Option<Isolation>,
    /// A server to run the sandboxes on (its `/v1/sandboxes`), instead of this machine.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// The server's member key (default $EPHEMERAL_API_KEY).
    #[arg(long, value_name = "KEY", requires = "url")]
    key: Option<String>,
    /// A session's sandbox ends after this long without a tool call.
    #[arg(long, value_name = "SECONDS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    idle_timeout_seconds: u64,
    /// Budget of each remote sandbox, in micro-dollars.
    #[arg(
        long,
        value_name = "MICROS",
        default_value_t = 100_000,
        requires = "url"
    )]
    max_cost_micros: i64,
}

pub fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let idle = Duration::from_secs(args.idle_timeout_seconds);
    tokio.block_on(async {
        let (factory, about) = match &args.url {
            Some(url) => remote(&args, url).await?,
            None => local(&args).await?,
        };
        ephemeral_mcp::serve_stdio(factory, about, idle)
            .await
            .context("the MCP session failed")
    })?;
    Ok(ExitCode::SUCCESS)
}

async fn local(args: &McpArgs) -> anyhow::Result<(Arc<dyn SandboxFactory>, About)> {
    let runtime = tokio::task::spawn_blocking(|| {
        Runtime::new(crate::install::Layout::detect().runtime_config())
    })
    .await?
    .context("cannot start the sandbox runtime")?;
    let choice = Choice {
        wanted: args.isolation.map(Into::into),
        minimum: crate::isolation::Isolation::Wasm,
        workers: WorkersConfig {
            pool_size: 0,
            ..WorkersConfig::default()
        },
    };
    let source = choose(&choice, &runtime)
        .await
        .map_err(|e| anyhow!("{e}"))?;
    let about = crate::mcp::about(&runtime, source.isolation().timeline_name());
    let limits = Limits {
        sandbox_timeout: Duration::from_secs(86_400),
        ..Limits::default()
    };
    Ok((Arc::new(Local { source, limits }), about))
}

async fn remote(args: &McpArgs, url: &str) -> anyhow::Result<(Arc<dyn SandboxFactory>, About)> {
    let key = match &args.key {
        Some(key) => key.clone(),
        None => std::env::var("EPHEMERAL_API_KEY")
            .context("give --key or set EPHEMERAL_API_KEY to a member key")?,
    };
    let remote = Remote::new(url, &key, args.max_cost_micros, args.idle_timeout_seconds);
    let about = remote_about(&remote).await;
    Ok((Arc::new(remote), about))
}

/// What the server's `GET /v1/runtime` says, as the tools describe it
/// (whatever it could not say left out).
async fn remote_about(remote: &Remote) -> About {
    let runtime: serde_json::Value = match remote
        .client
        .get(format!("{}/v1/runtime", remote.base))
        .bearer_auth(&remote.key)
        .send()
        .await
    {
        Ok(r) if r.status().is_success() => r.json().await.unwrap_or_default(),
        _ => serde_json::Value::Null,
    };
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    About {
        isolation: runtime["isolation"]
            .as_str()
            .unwrap_or("unknown")
            .to_string(),
        shell_programs: strings(&runtime["shell"]["programs"]),
        python_version: runtime["python"]["version"].as_str().map(str::to_string),
        python_packages: runtime["python"]["packages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| {
                Some((
                    p["name"].as_str()?.to_string(),
                    p["version"].as_str()?.to_string(),
                ))
            })
            .collect(),
        node_version: runtime["node"]["version"].as_str().map(str::to_string),
    }
}
