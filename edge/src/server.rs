//! The server, assembled in one place: the store (migrated, with runs a
//! crash left in flight settled), the sandbox runtime, the timeline hub,
//! the background tasks (heartbeat, retention purge), and the HTTP API,
//! served until a shutdown signal; then in-flight runs get a grace period
//! to finish, are cancelled if they do not, and are settled before exit.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ephemeral_runtime::{Runtime, RuntimeConfig};
use ephemeral_worker::WorkerPool;
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};

use crate::broker::Broker;
use crate::config::Config;
use crate::isolation::Isolation;
use crate::listener::{self, ConnectionLimits};
use crate::metrics::Metrics;
use crate::ratelimit::RateLimiter;
use crate::sandbox_host::{Sandboxes, jail_config};
use crate::store::{Store, StoreError};
use crate::timeline::Hub;
use crate::{api, recovery, retention};

/// Time runs get to settle after being cancelled at the end of the grace period.
const CANCEL_SETTLE: Duration = Duration::from_secs(10);
/// How long connections may take to close once runs are settled and
/// streams ended, before the server stops without them.
const CONNECTIONS_GRACE: Duration = Duration::from_secs(2);

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot start the sandbox runtime: {0}")]
    Runtime(String),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("this host offers isolation {offered}, below the required minimum {required}: {why}")]
    Isolation {
        offered: &'static str,
        required: &'static str,
        why: String,
    },
    #[error("isolation {0} is not available here: {1}")]
    Unavailable(&'static str, String),
    #[error("server error: {0}")]
    Io(#[from] std::io::Error),
}

/// What every request handler and run task shares.
pub struct Edge {
    pub config: Config,
    pub store: Arc<Store>,
    pub hub: Hub,
    pub runtime: Arc<Runtime>,
    /// Where runs' sandboxes come from (jailed workers, or in-process).
    pub sandboxes: Sandboxes,
    pub node_id: String,
    pub isolation: Isolation,
    pub metrics: Metrics,
    pub rate: RateLimiter,
    pub broker: Arc<Broker>,
    /// `GET /v1/runtime`'s answer, worked out on its first call.
    pub runtime_description: tokio::sync::OnceCell<serde_json::Value>,
    cancels: Mutex<HashMap<String, watch::Sender<bool>>>,
    draining: AtomicBool,
    idle: Notify,
    /// Set when the drain is over: open event streams end then, so that no
    /// reader keeps the process alive after its runs settled (finding D3).
    streams_end: watch::Sender<bool>,
}

impl Edge {
    /// Registers a run in flight; its cancel signal.
    pub fn register_run(&self, run_id: &str) -> watch::Receiver<bool> {
        let (tx, rx) = watch::channel(false);
        self.lock_cancels().insert(run_id.to_string(), tx);
        self.metrics.run_started();
        rx
    }

    pub fn forget_run(&self, run_id: &str) {
        self.hub.close(run_id);
        let empty = {
            let mut cancels = self.lock_cancels();
            cancels.remove(run_id);
            cancels.is_empty()
        };
        self.metrics.run_forgotten();
        if empty {
            self.idle.notify_waiters();
        }
    }

    /// Cancels a run hosted here; `false` when it is not.
    pub fn cancel_local(&self, run_id: &str) -> bool {
        match self.lock_cancels().get(run_id) {
            Some(tx) => {
                tx.send_replace(true);
                true
            }
            None => false,
        }
    }

    /// Resolves when event streams must end (the server is stopping).
    pub fn streams_ending(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut end = self.streams_end.subscribe();
        async move {
            let _ = end.wait_for(|v| *v).await;
        }
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    pub fn runs_in_flight(&self) -> usize {
        self.lock_cancels().len()
    }

    fn lock_cancels(&self) -> std::sync::MutexGuard<'_, HashMap<String, watch::Sender<bool>>> {
        self.cancels.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until no run is in flight, or `limit` passes.
    async fn drain(&self, limit: Duration) -> bool {
        let wait = async {
            loop {
                let idle = self.idle.notified();
                if self.runs_in_flight() == 0 {
                    return;
                }
                idle.await;
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }
}

/// The strongest isolation this host offers (or the one the config
/// names), checked against the required minimum. `kvm` is not built yet.
async fn choose_sandboxes(
    config: &Config,
    runtime: &Arc<Runtime>,
) -> Result<Sandboxes, ServerError> {
    let wanted = config.isolation;
    let mut no_kvm = String::new();
    if matches!(wanted, None | Some(Isolation::Kvm)) {
        match kvm_pool(config, runtime).await? {
            Ok(pool) => return Ok(Sandboxes::Jailed(pool)),
            Err(why)
                if wanted == Some(Isolation::Kvm) || config.min_isolation == Isolation::Kvm =>
            {
                return Err(ServerError::Unavailable(
                    Isolation::Kvm.timeline_name(),
                    why,
                ));
            }
            Err(why) => {
                tracing::info!(why = %why, "no microVMs on this host");
                no_kvm = why;
            }
        }
    }
    let jail = if wanted == Some(Isolation::Wasm) {
        Err("the configuration asks for isolation wasm".to_string())
    } else {
        jail_config(runtime, config.workers.binary.clone())
    };
    let sandboxes = match jail {
        Ok(mut workers) => {
            workers.memory_overhead_bytes = config.workers.memory_overhead_mib << 20;
            workers.max_tasks = config.workers.max_tasks;
            workers.cpu_millis = config.workers.cpu_millis;
            // Workers may not write the cache: every program is compiled
            // into it first.
            let warm = runtime.clone();
            tokio::task::spawn_blocking(move || warm.warm_cache())
                .await
                .map_err(|e| ServerError::Runtime(e.to_string()))?
                .map_err(|e| ServerError::Runtime(e.to_string()))?;
            Sandboxes::Jailed(WorkerPool::start(workers, config.workers.pool_size))
        }
        Err(why) if wanted == Some(Isolation::Jail) => {
            return Err(ServerError::Unavailable(
                Isolation::Jail.timeline_name(),
                why,
            ));
        }
        Err(why) => {
            if config.min_isolation > Isolation::Wasm {
                return Err(ServerError::Isolation {
                    offered: Isolation::Wasm.timeline_name(),
                    required: config.min_isolation.timeline_name(),
                    why,
                });
            }
            if wanted.is_none() {
                tracing::warn!(why = %why, "no jailed workers on this host");
            }
            Sandboxes::InProcess(runtime.clone())
        }
    };
    if sandboxes.isolation() < config.min_isolation {
        return Err(ServerError::Isolation {
            offered: sandboxes.isolation().timeline_name(),
            required: config.min_isolation.timeline_name(),
            why: match no_kvm.is_empty() {
                true => crate::isolation::kvm_unavailable_reason(),
                false => no_kvm,
            },
        });
    }
    Ok(sandboxes)
}

/// A pool of jailed VMMs serving microVMs, or why this host has none. The
/// outer error is the server's own failure (a task that died).
async fn kvm_pool(
    config: &Config,
    runtime: &Arc<Runtime>,
) -> Result<Result<Arc<WorkerPool>, String>, ServerError> {
    let runtime = runtime.clone();
    let made = tokio::task::spawn_blocking(move || crate::microvm_host::kvm_config(&runtime))
        .await
        .map_err(|e| ServerError::Runtime(e.to_string()))?;
    Ok(made.map(|mut workers| {
        workers.max_tasks = config.workers.max_tasks;
        workers.cpu_millis = config.workers.cpu_millis;
        WorkerPool::start(workers, config.workers.pool_size)
    }))
}

/// A server ready to serve.
pub struct Server {
    edge: Arc<Edge>,
    listener: TcpListener,
}

impl Server {
    pub async fn start(config: Config) -> Result<Server, ServerError> {
        let store = Store::open(config.database_url.as_deref(), &config.sqlite_path()).await?;
        let runtime = tokio::task::spawn_blocking(|| Runtime::new(RuntimeConfig::default()))
            .await
            .map_err(|e| ServerError::Runtime(e.to_string()))?
            .map_err(|e| ServerError::Runtime(e.to_string()))?;
        let sandboxes = choose_sandboxes(&config, &runtime).await?;
        let isolation = sandboxes.isolation();
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| ServerError::Listen {
                    addr: config.listen,
                    source,
                })?;
        let node_id = node_id(&config, &store, listener.local_addr()?);
        let edge = Arc::new(Edge {
            rate: RateLimiter::new(config.limits.runs_per_minute),
            broker: Arc::new(Broker::for_config(&config)),
            config,
            store: Arc::new(store),
            hub: Hub::default(),
            runtime,
            sandboxes,
            node_id,
            isolation,
            metrics: Metrics::new(),
            runtime_description: tokio::sync::OnceCell::new(),
            cancels: Mutex::new(HashMap::new()),
            draining: AtomicBool::new(false),
            idle: Notify::new(),
            streams_end: watch::channel(false).0,
        });
        recovery::recover_own(&edge).await;
        match &edge.sandboxes {
            Sandboxes::InProcess(_) => tracing::warn!(
                "isolation wasm: sandboxes run inside the server process (development only)"
            ),
            Sandboxes::Jailed(pool) => tracing::info!(
                pool_size = pool.size(),
                "isolation jail+wasm: one jailed worker process per run"
            ),
        }
        Ok(Server { edge, listener })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or_else(|_| self.edge.config.listen)
    }

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
            drain_edge.draining.store(true, Ordering::SeqCst);
            let grace = Duration::from_secs(drain_edge.config.shutdown_grace_seconds);
            tracing::info!(
                runs = drain_edge.runs_in_flight(),
                "shutting down: letting runs finish"
            );
            if !drain_edge.drain(grace).await {
                tracing::warn!("grace period over: cancelling the runs still in flight");
                for id in drain_edge.lock_cancels().keys() {
                    tracing::info!(run_id = %id, "cancelling");
                }
                for tx in drain_edge.lock_cancels().values() {
                    tx.send_replace(true);
                }
                drain_edge.drain(CANCEL_SETTLE).await;
            }
            drain_edge.streams_end.send_replace(true);
            let _ = stop_tx.send(true);
        };
        let mut stop = stop_rx.clone();
        let app = api::router(edge.clone());
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

fn node_id(config: &Config, store: &Store, addr: SocketAddr) -> String {
    if let Some(id) = &config.node_id {
        return id.clone();
    }
    match store {
        // One file, one node: the id only has to be stable.
        Store::Sqlite(_) => "local".to_string(),
        Store::Postgres(_) => {
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
