//! Many runs asking for a worker at once: the pool makes only a few at a
//! time (more only share the same cores and all start late), every run
//! still gets a ready worker, and none waits its ready timeout out.

mod support;

use std::sync::Arc;
use std::time::Duration;

use ephemeral_worker::host::WorkerPool;
use support::config;

const RUNS: usize = 60;

#[tokio::test(flavor = "multi_thread")]
async fn sixty_runs_at_once_each_get_a_ready_worker_a_few_made_at_a_time() {
    let pool = WorkerPool::start(config(), 1);
    let mut takes = Vec::new();
    for _ in 0..RUNS {
        let pool = pool.clone();
        takes.push(tokio::spawn(async move { pool.take().await }));
    }
    let most = watch_spawning(&pool, &takes).await;
    let mut ready_in = Vec::new();
    for take in takes {
        let worker = take.await.expect("take task").expect("a ready worker");
        ready_in.push(worker.ready_in);
    }
    assert!(
        most <= pool.spawn_slots(),
        "{most} spawning at once, over {}",
        pool.spawn_slots()
    );
    assert!(most >= 1, "the pool made workers");
    let slowest = ready_in.iter().max().copied().unwrap_or_default();
    assert!(
        slowest < config().ready_timeout / 2,
        "a queued worker counts its ready time from its own start: {slowest:?}"
    );
}

/// The most workers seen being made at once while the takes run.
async fn watch_spawning<T>(pool: &Arc<WorkerPool>, takes: &[tokio::task::JoinHandle<T>]) -> usize {
    let mut most = 0;
    while takes.iter().any(|t| !t.is_finished()) {
        most = most.max(pool.spawning());
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    most
}
