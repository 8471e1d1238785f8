//! Caps hit from inside a jailed worker: the sandbox's own memory cap
//! (reported as `memory` by the runtime), the worker's cgroup cap when host
//! memory runs away (the worker is OOM-killed and the cause named), and the
//! other workers carry on.

mod support;

use std::time::Duration;

use ephemeral_runtime::{LimitHit, Limits};
use support::{config, run, run_for, worker, worker_with};

#[tokio::test(flavor = "multi_thread")]
async fn a_component_past_its_memory_cap_is_stopped_as_memory() {
    let limits = Limits {
        memory_bytes: 64 << 20,
        ..Limits::default()
    };
    let worker = worker_with(&config(), limits).await;
    let bomb = "python3 -c 'x = []\nwhile True: x.append(bytearray(1 << 20))'";
    let ran = run(&worker, bomb).await;
    let exit = ran.exit.clone().expect("the command ended");
    assert_eq!(exit.limit, Some(LimitHit::Memory), "{ran:?}");
    // The sandbox is still usable afterwards.
    assert_eq!(run(&worker, "echo ok").await.stdout, "ok\n");
    worker.destroy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_past_its_cgroup_cap_is_killed_and_the_cause_named() {
    let mut config = config();
    config.memory_overhead_bytes = 256 << 20;
    let limits = Limits {
        memory_bytes: 64 << 20,
        // Files live in the worker's memory: let them outgrow the cgroup.
        disk_bytes: 4 << 30,
        ..Limits::default()
    };
    let worker = worker_with(&config, limits).await;
    let bystander = worker_with(&support::config(), Limits::default()).await;
    let worker_pid = worker.pid().expect("a worker process");
    let cgroups = worker.cgroup_paths().to_vec();
    let ran = run_for(
        &worker,
        "python3 -c \"
chunk = b'x' * (1 << 20)
with open('big', 'wb') as f:
    for _ in range(1024):
        f.write(chunk)
\"",
        Duration::from_secs(60),
    )
    .await;
    let failure = tokio::time::timeout(Duration::from_secs(10), worker.failed())
        .await
        .expect("the failure is reported");
    assert_eq!(failure.cause, "memory", "{failure:?} {ran:?}");
    assert!(failure.message.contains("320 MiB"), "{}", failure.message);
    assert!(ran.failed.is_some(), "the command was failed: {ran:?}");
    // The process and its cgroup are gone; the other worker is unaffected.
    support::assert_gone(worker_pid, &cgroups).await;
    assert_eq!(
        run(&bystander, "echo unaffected").await.stdout,
        "unaffected\n"
    );
    bystander.destroy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_9_of_a_worker_mid_command_fails_it_and_leaves_nothing() {
    let worker = worker().await;
    let pid = worker.pid().expect("a worker process");
    let cgroups = worker.cgroup_paths().to_vec();
    let mut events = worker.exec("sleep 30", Duration::from_secs(60));
    tokio::time::sleep(Duration::from_millis(300)).await;
    // SAFETY: signalling the worker this test made.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let mut failed = None;
    while let Some(event) = events.recv().await {
        if let ephemeral_worker::ExecEvent::Failed(why) = event {
            failed = Some(why);
        }
    }
    let failed = failed.expect("the command failed");
    assert!(failed.contains("signal 9"), "{failed}");
    assert_eq!(worker.failed().await.cause, "worker_crashed");
    support::assert_gone(pid, &cgroups).await;
    worker.destroy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn destroy_mid_command_kills_at_once() {
    let worker = worker().await;
    let pid = worker.pid().expect("a worker process");
    let _events = worker.exec("sleep 30", Duration::from_secs(60));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = std::time::Instant::now();
    worker.destroy().await;
    // Killed, not waited for: the command would run 30 s (a generous
    // bound, explained: a loaded host may be slow to reap).
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_that_stops_answering_is_declared_hung_and_killed() {
    let worker = worker().await;
    let pid = worker.pid().expect("a worker process");
    let cgroups = worker.cgroup_paths().to_vec();
    let events = worker.exec("sleep 5", Duration::from_secs(1));
    // SAFETY: stopping the worker this test made.
    unsafe { libc::kill(pid as i32, libc::SIGSTOP) };
    let failure = tokio::time::timeout(Duration::from_secs(20), worker.failed())
        .await
        .expect("the hang is noticed");
    assert_eq!(failure.cause, "worker_hung", "{failure:?}");
    drop(events);
    support::assert_gone(pid, &cgroups).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_flood_stops_at_the_quota_and_the_worker_carries_on() {
    let limits = Limits {
        disk_files: 500,
        ..Limits::default()
    };
    let worker = worker_with(&config(), limits).await;
    let ran = run(
        &worker,
        "i=0; while :; do i=$((i+1)); : > f$i || break; done; echo $i",
    )
    .await;
    let exit = ran.exit.clone().expect("ended");
    assert_eq!(exit.limit, Some(LimitHit::DiskFiles), "{ran:?}");
    assert_eq!(run(&worker, "echo ok").await.stdout, "ok\n");
    worker.destroy().await;
}
