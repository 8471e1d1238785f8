//! A few workers made ahead of time — jailed, engine warm, shell loaded —
//! so a run gets one without waiting for a process to start. Each is handed
//! out once and never comes back; a background task makes the next.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{Notify, Semaphore};

use super::WorkerConfig;
use super::idle::{IdleWorker, StartError};

/// Pause after a failed spawn before the pool tries again.
const RETRY_AFTER: Duration = Duration::from_secs(1);

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
                None if slot.is_some() => return IdleWorker::spawn(&self.config).await,
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
        let (config, spawning) = (p.config.clone(), p.spawning.clone());
        drop(p);
        let Ok(slot) = spawning.acquire_owned().await else {
            return;
        };
        let spawned = IdleWorker::spawn(&config).await;
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
