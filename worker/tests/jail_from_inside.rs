//! Trying to break out from inside a jailed worker: each probe attempts a
//! raw system call the jail must refuse, from the worker's own process.

mod support;

use ephemeral_worker::protocol::Probe;
use support::worker;

async fn refused(worker: &ephemeral_worker::WorkerHandle, probe: Probe) {
    let (refused, detail) = worker.probe(probe.clone()).await.expect("probe answered");
    assert!(refused, "{probe:?} was not refused: {detail}");
}

#[tokio::test(flavor = "multi_thread")]
async fn escapes_are_refused() {
    let worker = worker().await;
    let host = std::process::id();
    let secret = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(secret.path(), "host secret").unwrap();
    for probe in [
        Probe::InetSocket,
        Probe::Inet6Socket,
        Probe::ConnectUnix,
        Probe::Ptrace { pid: host },
        Probe::Ptrace { pid: 1 },
        Probe::Kill { pid: host },
        Probe::Kill { pid: 1 + host },
        Probe::Mount,
        Probe::OpenHostPath {
            path: "/etc/passwd".into(),
        },
        Probe::OpenHostPath {
            path: secret.path().to_string_lossy().into_owned(),
        },
        Probe::OpenHostPath {
            path: format!("/proc/{host}/environ"),
        },
        Probe::WriteRoot,
        Probe::Unshare,
        Probe::ForbiddenSyscalls,
        Probe::Fork,
    ] {
        refused(&worker, probe).await;
    }
    worker.destroy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_cannot_reach_another_runs_worker() {
    let (a, b) = tokio::join!(worker(), worker());
    let other = b.pid().expect("a worker process");
    refused(&a, Probe::Kill { pid: other }).await;
    refused(&a, Probe::Ptrace { pid: other }).await;
    refused(
        &a,
        Probe::OpenHostPath {
            path: format!("/proc/{other}/mem"),
        },
    )
    .await;
    a.destroy().await;
    b.destroy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thread_flood_stops_at_the_cap() {
    let worker = worker().await;
    let (refused, detail) = worker.probe(Probe::ThreadFlood).await.unwrap();
    assert!(refused, "threads were not capped: {detail}");
    let started: usize = detail.split_whitespace().next().unwrap().parse().unwrap();
    assert!(started < 64, "{detail}");
    // The worker is still fine afterwards.
    let ran = support::run(&worker, "echo still here").await;
    assert_eq!(ran.stdout, "still here\n");
    worker.destroy().await;
}
