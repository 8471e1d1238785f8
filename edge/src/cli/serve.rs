//! `ephemeral serve [--listen ADDR] [--data DIR] [--config FILE]`, and the
//! options `keys` and `orgs` share with it to find the server's data.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::config::Config;
use crate::isolation::Isolation;
use crate::server::{Server, shutdown_signal};
use crate::store::{self, Store};
use std::sync::Arc;

/// Where the server's state is: shared by `serve`, `keys` and `orgs`.
#[derive(Args, Clone)]
pub struct DataArgs {
    /// Folder for the SQLite store (overrides `data_dir` of the config).
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// The server's TOML configuration file.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

impl DataArgs {
    pub fn load(&self) -> anyhow::Result<Config> {
        let mut config = Config::load(self.config.as_deref())?;
        // An operator's scripted models must be readable files.
        crate::models::check_scripts(&config)?;
        if let Some(dir) = &self.data {
            config.data_dir = dir.clone();
        }
        if let Ok(url) = std::env::var("EPHEMERAL_DATABASE_URL") {
            config.database_url = Some(url);
        }
        Ok(config)
    }

    pub async fn open_store(&self) -> anyhow::Result<(Config, Arc<dyn Store>)> {
        let config = self.load()?;
        let store = store::open(config.database_url.as_deref(), &config.sqlite_path())
            .await
            .context("cannot open the store")?;
        Ok((config, store))
    }
}

#[derive(Args)]
pub struct ServeArgs {
    /// Address to listen on (default 127.0.0.1:8080, or `listen` of the config).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Refuse to start below this isolation: wasm, jail or kvm.
    #[arg(long, value_name = "LEVEL", value_parser = parse_isolation)]
    min_isolation: Option<Isolation>,
    /// Use exactly this isolation (default: the strongest this host offers).
    #[arg(long, value_name = "LEVEL", value_parser = parse_isolation)]
    isolation: Option<Isolation>,
    #[command(flatten)]
    data: DataArgs,
}

fn parse_isolation(s: &str) -> Result<Isolation, String> {
    Isolation::parse(s).ok_or_else(|| format!("{s:?} is not an isolation level (wasm, jail, kvm)"))
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let mut config = args.data.load()?;
    if let Some(listen) = args.listen {
        config.listen = listen;
    }
    if let Some(min) = args.min_isolation {
        config.min_isolation = min;
    }
    if args.isolation.is_some() {
        config.isolation = args.isolation;
    }
    let rt = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    rt.block_on(async move {
        let server = Server::start(config).await?;
        eprintln!("ephemeral: listening on http://{}", server.local_addr());
        server.serve(shutdown_signal()).await?;
        eprintln!("ephemeral: stopped");
        Ok(ExitCode::SUCCESS)
    })
}
