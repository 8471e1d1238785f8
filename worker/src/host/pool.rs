//! A few workers made ahead of time — jailed, engine warm, shell loaded —
//! so a run gets one without waiting for a process to start. Each is handed
//! out once and never comes back; a background task makes the next.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;

use super::WorkerConfig;
use super::handle::{IdleWorker, StartError};

/// Pause after a failed spawn before the pool tries again.
const RETRY_AFTER: Duration = Duration::from_secs(1);

pub struct WorkerPool {
    config: WorkerConfig,
    size: usize,
    ready: Mutex<Vec<IdleWorker>>,
    wanted: Arc<Notify>,
    /// The last spawn error, for health reports.
    last_error: Mutex<Option<String>>,
}

impl WorkerPool {
    /// A pool that keeps `size` workers ready (0: every run spawns its
    /// own). Must be called inside a tokio runtime.
    pub fn start(config: WorkerConfig, size: usize) -> Arc<WorkerPool> {
        let pool = Arc::new(WorkerPool {
            config,
            size,
            ready: Mutex::new(Vec::new()),
            wanted: Arc::new(Notify::new()),
            last_error: Mutex::new(None),
        });
        if size > 0 {
            tokio::spawn(refill(Arc::downgrade(&pool)));
        }
        pool
    }

    pub fn config(&self) -> &WorkerConfig {
        &self.config
    }

    /// A ready worker: from the pool if one is waiting, else a new one.
    pub async fn take(&self) -> Result<IdleWorker, StartError> {
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
                None => return IdleWorker::spawn(&self.config).await,
            }
        }
    }

    /// Workers the pool keeps ready.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Workers ready right now.
    pub fn ready(&self) -> usize {
        self.lock().len()
    }

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
        let config = p.config.clone();
        drop(p);
        let spawned = IdleWorker::spawn(&config).await;
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
