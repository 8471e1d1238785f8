//! `ephemeral run request.json`: posts the request to `$EPHEMERAL_URL` with
//! `$EPHEMERAL_API_KEY`, follows the run's timeline live (resuming with
//! `Last-Event-ID` if the stream breaks), and exits 0 only if the run
//! succeeded.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;

use super::download;
use super::timeline_view::{Follow, follow_run};

#[derive(Args)]
pub struct RunArgs {
    /// The request body (API.md, POST /v1/runs); `-` reads stdin.
    #[arg(value_name = "REQUEST.json")]
    request: PathBuf,
    /// Print each event as a JSON line instead of the timeline view.
    #[arg(long)]
    json: bool,
    /// Save the files the run's `outputs` collected into DIR (relative
    /// paths as they are, `/tmp/…` under DIR/tmp/…).
    #[arg(long, value_name = "DIR")]
    download: Option<PathBuf>,
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let url = std::env::var("EPHEMERAL_URL")
        .context("set EPHEMERAL_URL to the server's address, e.g. http://127.0.0.1:8080")?;
    let key = std::env::var("EPHEMERAL_API_KEY")
        .context("set EPHEMERAL_API_KEY to a member key (ephemeral keys create --org NAME)")?;
    let body = if args.request.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).context("cannot read the request from stdin")?
    } else {
        std::fs::read_to_string(&args.request)
            .with_context(|| format!("cannot read {}", args.request.display()))?
    };
    if serde_json::from_str::<serde_json::Value>(&body).is_err() {
        bail!("{} is not valid JSON", args.request.display());
    }
    let rt = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let follow = Follow {
        base: url.trim_end_matches('/').to_string(),
        key,
        json: args.json,
        connect_timeout: Duration::from_secs(10),
    };
    let followed = rt.block_on(follow_run(&follow, body))?;
    if let Some(dir) = &args.download {
        let saved = rt.block_on(download::save(&follow, &followed, dir))?;
        if !args.json {
            println!("saved {saved} files into {}", dir.display());
        }
    }
    Ok(if followed.succeeded {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
