//! The server, assembled in one place: the store (migrated, with runs a
//! crash left in flight settled), the sandbox runtime and the sandboxes
//! this host gives, the timeline hub, the background tasks (heartbeat,
//! retention purge), and the HTTP API, served until a shutdown signal;
//! then in-flight runs get a grace period to finish, are cancelled if they
//! do not, and are settled before exit. Nothing below this file imports
//! it: the parts share [`Edge`] (`state.rs`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ephemeral_runtime::Runtime;

use crate::install::Layout;
use tokio::net::TcpListener;
use tokio::sync::watch;

pub use crate::state::Edge;

use crate::broker::Broker;
use crate::config::Config;
use crate::in_flight::InFlight;
use crate::isolation::Isolation;
use crate::listener::{self, ConnectionLimits};
use crate::metrics::Metrics;
use crate::ratelimit::RateLimiter;
use crate::sandbox::{Choice, ChooseError, choose};
use crate::store::StoreError;
use crate::timeline::Hub;
use crate::{api, mcp, recovery, retention};

/// Time runs get to settle after being cancelled at the end of the grace period.
const CANCEL_SETTLE: Duration = Duration::from_secs(10);
/// How long connections may take to close once runs are settled and
/// streams ended, before the server stops without them.
const CONNECTIONS_GRACE: Duration = Duration::from_secs(2);

/// Why the server could not start or serve.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The store could not be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The sandbox runtime could not be made.
    #[error("cannot start the sandbox runtime: {0}")]
    Runtime(String),
    /// The `listen` address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
    /// The isolation asked for is not available here, or the best is below
    /// `min_isolation`.
    #[error(transparent)]
    Sandboxes(#[from] ChooseError),
    /// Another I/O failure.
    #[error("server error: {0}")]
    Io(#[from] std::io::Error),
}

/// A server ready to serve.
pub struct Server {
    edge: Arc<Edge>,
    listener: TcpListener,
}

impl Server {
    /// Opens the store, makes the runtime, picks the isolation, binds `listen`
    /// and recovers this node's runs left unfinished; [`Server::serve`] then
    /// serves.
    pub async fn start(config: Config) -> Result<Server, ServerError> {
        let store =
            crate::store::open(config.database_url.as_deref(), &config.sqlite_path()).await?;
        let runtime =
            tokio::task::spawn_blocking(|| Runtime::new(Layout::detect().runtime_config()))
                .await
                .map_err(|e| ServerError::Runtime(e.to_string()))?
                .map_err(|e| ServerError::Runtime(e.to_string()))?;
        let choice = Choice {
            wanted: config.isolation,
            minimum: config.min_isolation,
            workers: config.workers.clone(),
        };
        let sandboxes = choose(&choice, &runtime).await?;
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| ServerError::Listen {
                    addr: config.listen,
                    source,
                })?;
        let node_id = node_id(&config, store.kind(), listener.local_addr()?);
        let edge = Arc::new(Edge {
            rate: RateLimiter::new(config.limits.runs_per_minute),
            broker: Arc::new(Broker::for_config(&config)),
            config,
            store,
            hub: Arc::new(Hub::default()),
            runtime,
            sandboxes,
            in_flight: InFlight::default(),
            sessions: Default::default(),
            node_id,
            metrics: Metrics::new(),
            runtime_description: tokio::sync::OnceCell::new(),
        });
        recovery::recover_own(&edge).await;
        match edge.isolation() {
            Isolation::Wasm => tracing::warn!(
                "isolation wasm: sandboxes run inside the server process (development only)"
            ),
            Isolation::Jail => {
                tracing::info!("isolation jail+wasm: one jailed worker process per run")
            }
            Isolation::Kvm => tracing::info!("isolation kvm+wasm: one microVM per run"),
        }
        Ok(Server { edge, listener })
    }

    /// The address it listens on (the real port when `listen` asked for port
    /// 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or_else(|_| self.edge.config.listen)
    }

    /// The shared state, for the CLI and tests.
    pub fn edge(&self) -> Arc<Edge> {
        self.edge.clone()
    }

    /// Serves until `shutdown` resolves, then drains runs and returns.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        let edge = self.edge;
        let background = [
            tokio::spawn(recovery::heartbeat_loop(edge.clone())),
            tokio::spawn(retention::purge_loop(edge.clone())),
        ];
        let (stop_tx, stop_rx) = watch::channel(false);
        let drain_edge = edge.clone();
        let signal = async move {
            shutdown.await;
            let in_flight = &drain_edge.in_flight;
            in_flight.start_draining();
            let grace = Duration::from_secs(drain_edge.config.shutdown_grace_seconds);
            tracing::info!(runs = in_flight.len(), "shutting down: letting runs finish");
            if !in_flight.drain(grace).await {
                tracing::warn!("grace period over: cancelling the runs still in flight");
                in_flight.cancel_all();
                in_flight.drain(CANCEL_SETTLE).await;
            }
            in_flight.end_streams();
            let _ = stop_tx.send(true);
        };
        let mut stop = stop_rx.clone();
        let app = api::router(edge.clone()).merge(mcp_router(&edge));
        let limits = &edge.config.limits;
        let limits = ConnectionLimits {
            total: limits.connections,
            per_peer: limits.connections_per_peer,
            header_read_timeout: Duration::from_secs(limits.header_read_timeout_seconds.max(1)),
            write_stall: Duration::from_secs(limits.write_stall_seconds.max(1)),
        };
        let stopping = async move {
            signal.await;
            let _ = stop.wait_for(|v| *v).await;
        };
        // Streams end when the drain is over; a reader that does not read
        // cannot even take its last bytes, so connections get a short while
        // and are then left behind with the process (finding D3).
        listener::serve(self.listener, app, limits, stopping, CONNECTIONS_GRACE).await;
        for task in background {
            task.abort();
        }
        Ok(())
    }
}

fn node_id(config: &Config, store_kind: &str, addr: SocketAddr) -> String {
    if let Some(id) = &config.node_id {
        return id.clone();
    }
    match store_kind {
        // One file, one node: the id only has to be stable.
        "sqlite" => "local".to_string(),
        _ => {
            let host = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
            format!("{}:{}", host.trim(), addr.port())
        }
    }
}

/// Resolves on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

/// `/mcp`: MCP sessions over streamable HTTP, each on a sandbox session of
/// the key's organisation.
fn mcp_router(edge: &Arc<Edge>) -> axum::Router {
    let about = mcp::about(&edge.runtime, edge.isolation().timeline_name());
    let factory = Arc::new(mcp::Hosted { edge: edge.clone() });
    let idle = std::time::Duration::from_secs(edge.config.mcp.idle_timeout_seconds.max(1));
    ephemeral_mcp::http_router(factory, about, idle)
}
