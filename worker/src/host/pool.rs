//! A few workers made ahead of time — jailed, engine warm, shell loaded —
//! so a run gets one without waiting for a process to start. Each is handed
//! out once and never comes back; a background task makes the next, as a
//! copy of the pool's fork server where it can (`fork_server.rs`: a
//! `clone` instead of an `execve` and a warm-up), else by spawning.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, Semaphore};

use super::WorkerConfig;
use super::fork_server::ForkServer;
use super::idle::{IdleWorker, StartError};

/// Pause after a failed spawn before the pool tries again.
const RETRY_AFTER: Duration = Duration::from_secs(1);
/// Pause after a fork server failed to start before another is tried
/// (workers are spawned meanwhile).
const FORK_SERVER_RETRY_AFTER: Duration = Duration::from_secs(30);

/// Workers being made at once, per core. Starting a worker is CPU work
/// (jail, engine, shell); hundreds started together only share the same
/// cores and all start late: 400 at once on 2 cores had none ready within
/// the 60 s a worker is given. Queued, each gets its 60 s from its own
/// start, and the first are ready at once.
const SPAWNING_PER_CORE: usize = 2;

/// Jailed workers with their engines warm, kept ready for runs and refilled in
/// the background.
pub struct WorkerPool {
    config: WorkerConfig,
    size: usize,
    ready: Mutex<Vec<IdleWorker>>,
    wanted: Arc<Notify>,
    spawning: Arc<Semaphore>,
    /// The permits `spawning` was made with.
    slots: usize,
    /// The last spawn error, for health reports.
    last_error: Mutex<Option<String>>,
    forks: Arc<Forks>,
}

/// The pool's fork server: started on first need, again after it died.
#[derive(Default)]
struct Forks {
    state: tokio::sync::Mutex<ForkState>,
    /// What health reports say: the server's pid, or why there is none.
    seen: Mutex<Option<Result<u32, String>>>,
}

#[derive(Default)]
struct ForkState {
    server: Option<Arc<ForkServer>>,
    /// After a failed start: not before then.
    not_before: Option<Instant>,
}

impl Forks {
    /// The running fork server, started if need be; `None` when this host
    /// cannot run one now (workers are then spawned).
    async fn server(&self, config: &WorkerConfig) -> Option<Arc<ForkServer>> {
        if !config.fork_server || config.microvm {
            return None;
        }
        let mut state = self.state.lock().await;
        if let Some(server) = &state.server {
            if server.is_alive() {
                return Some(server.clone());
            }
            tracing::warn!("the fork server died; starting another");
            state.server = None;
        }
        if state.not_before.is_some_and(|t| Instant::now() < t) {
            return None;
        }
        match ForkServer::start(config).await {
            Ok(server) => {
                self.note(Ok(server.pid()));
                let server = Arc::new(server);
                state.server = Some(server.clone());
                state.not_before = None;
                Some(server)
            }
            Err(e) => {
                tracing::warn!(error = %e, "no fork server: spawning each worker");
                state.not_before = Some(Instant::now() + FORK_SERVER_RETRY_AFTER);
                self.note(Err(e.to_string()));
                None
            }
        }
    }

    fn note(&self, seen: Result<u32, String>) {
        *self.seen.lock().unwrap_or_else(PoisonError::into_inner) = Some(seen);
    }

    /// A worker: a copy of the fork server, or spawned.
    async fn make(&self, config: &WorkerConfig) -> Result<IdleWorker, StartError> {
        if let Some(server) = self.server(config).await {
            match IdleWorker::fork(&server, config).await {
                Ok(worker) => return Ok(worker),
                Err(e) => tracing::warn!(error = %e, "a fork server's copy failed; spawning"),
            }
        }
        IdleWorker::spawn(config).await
    }
}

impl WorkerPool {
    /// A pool that keeps `size` workers ready (0: every run spawns its
    /// own). Must be called inside a tokio runtime.
    pub fn start(config: WorkerConfig, size: usize) -> Arc<WorkerPool> {
        let slots = std::thread::available_parallelism().map_or(1, |n| n.get()) * SPAWNING_PER_CORE;
        let pool = Arc::new(WorkerPool {
            config,
            size,
            ready: Mutex::new(Vec::new()),
            wanted: Arc::new(Notify::new()),
            spawning: Arc::new(Semaphore::new(slots)),
            slots,
            last_error: Mutex::new(None),
            forks: Arc::new(Forks::default()),
        });
        if size > 0 {
            tokio::spawn(refill(Arc::downgrade(&pool)));
        }
        pool
    }

    /// How its workers are made.
    pub fn config(&self) -> &WorkerConfig {
        &self.config
    }

    /// A ready worker: from the pool if one is waiting, else a new one
    /// (once a spawn slot is free).
    pub async fn take(&self) -> Result<IdleWorker, StartError> {
        let mut slot = None;
        loop {
            let pooled = self.lock().pop();
            self.wanted.notify_one();
            match pooled {
                Some(mut worker) => {
                    if worker.is_alive() {
                        return Ok(worker);
                    }
                    // Died while waiting (killed from outside): try the next.
                }
                None if slot.is_some() => return self.forks.make(&self.config).await,
                // A pooled worker may be ready by the time a slot is free.
                None => slot = Some(self.spawn_slot().await?),
            }
        }
    }

    async fn spawn_slot(&self) -> Result<tokio::sync::OwnedSemaphorePermit, StartError> {
        self.spawning
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| StartError::NotReady("the worker pool is shutting down".into()))
    }

    /// Workers the pool keeps ready.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Workers being made right now (at most [`WorkerPool::spawn_slots`]).
    pub fn spawning(&self) -> usize {
        self.slots.saturating_sub(self.spawning.available_permits())
    }

    /// Workers this host makes at once.
    pub fn spawn_slots(&self) -> usize {
        self.slots
    }

    /// Workers ready right now.
    pub fn ready(&self) -> usize {
        self.lock().len()
    }

    /// The pid of the fork server the pool last started, or why the last
    /// start failed; `None` before the first (or when not wanted).
    pub fn fork_server(&self) -> Option<Result<u32, String>> {
        self.forks
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Why the last spawn failed, if it did: for health reports.
    pub fn last_error(&self) -> Option<String> {
        self.last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<IdleWorker>> {
        self.ready.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Keeps the pool full until it is dropped.
async fn refill(pool: std::sync::Weak<WorkerPool>) {
    loop {
        let Some(p) = pool.upgrade() else { return };
        if p.ready() >= p.size {
            let wanted = p.wanted.clone();
            drop(p);
            wanted.notified().await;
            continue;
        }
        let (config, spawning, forks) = (p.config.clone(), p.spawning.clone(), p.forks.clone());
        drop(p);
        let Ok(slot) = spawning.acquire_owned().await else {
            return;
        };
        let spawned = forks.make(&config).await;
        drop(slot);
        let Some(p) = pool.upgrade() else { return };
        match spawned {
            Ok(worker) => p.lock().push(worker),
            Err(e) => {
                tracing::warn!(error = %e, "cannot make a pooled worker");
                *p.last_error.lock().unwrap_or_else(PoisonError::into_inner) = Some(e.to_string());
                drop(p);
                tokio::time::sleep(RETRY_AFTER).await;
            }
        }
    }
}
