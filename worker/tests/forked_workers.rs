//! Workers copied from a fork server: each as confined as a spawned one
//! (its own PID, user, IPC and UTS namespaces, no capability, seccomp, a
//! host uid of its own, its own cgroup), sharing with its siblings neither
//! randomness nor identity; deadlines and timers work in a copy; a copy killed
//! mid-command fails only its run; a fork server that dies is replaced.

mod support;

use std::collections::HashSet;
use std::time::Duration;

use ephemeral_runtime::Limits;
use ephemeral_worker::host::{Command, ForkServer};
use ephemeral_worker::jail::FORK_UID_BASE;
use ephemeral_worker::{ExecEvent, IdleWorker, WorkerHandle, WorkerPool};
use support::{config, run, run_for, status};

async fn copy(server: &ForkServer) -> WorkerHandle {
    let idle = IdleWorker::fork(server, &config())
        .await
        .expect("a copy of the fork server");
    idle.start(Limits::default(), Vec::new())
        .await
        .expect("start the run")
}

fn uids(pid: u32) -> Vec<u32> {
    status(pid)["Uid"]
        .split_whitespace()
        .map(|u| u.parse().unwrap())
        .collect()
}

fn namespace(pid: u32, ns: &str) -> String {
    std::fs::read_link(format!("/proc/{pid}/ns/{ns}"))
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn copies_are_confined_and_share_nothing_with_their_siblings() {
    let server = ForkServer::start(&config()).await.expect("a fork server");
    let copies = [
        copy(&server).await,
        copy(&server).await,
        copy(&server).await,
    ];
    let pids: Vec<u32> = copies.iter().map(|c| c.pid().unwrap()).collect();
    // Each is a child of this process (so it is reaped and its end read
    // here), confined as a spawned worker is.
    for &pid in &pids {
        let s = status(pid);
        assert_eq!(s["PPid"], std::process::id().to_string(), "{pid}");
        assert_eq!(s["Seccomp"], "2");
        assert_eq!(s["NoNewPrivs"], "1");
        for cap in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
            assert_eq!(s[cap], "0000000000000000", "{cap} of {pid}");
        }
        assert_eq!(s["NSpid"].split_whitespace().last(), Some("1"), "PID 1");
        for ns in ["user", "mnt", "pid", "net", "ipc", "uts", "cgroup"] {
            let ours = std::fs::read_link(format!("/proc/self/ns/{ns}")).unwrap();
            assert_ne!(ours.to_string_lossy(), namespace(pid, ns), "{ns} shared");
        }
        assert!(
            uids(pid).iter().all(|&u| u >= FORK_UID_BASE),
            "{:?}",
            uids(pid)
        );
    }
    // No identity shared between siblings: pid, uid, user, PID, IPC and
    // UTS namespaces, cgroup. (Their network namespace is the fork
    // server's: no interface up, and no copy may bind, listen or connect.)
    let distinct = |values: Vec<String>, what: &str| {
        let set: HashSet<&String> = values.iter().collect();
        assert_eq!(set.len(), values.len(), "{what} shared: {values:?}");
    };
    distinct(
        pids.iter().map(|p| format!("{:?}", uids(*p))).collect(),
        "uid",
    );
    for ns in ["user", "pid", "ipc", "uts"] {
        distinct(pids.iter().map(|p| namespace(*p, ns)).collect(), ns);
    }
    distinct(
        pids.iter()
            .map(|p| std::fs::read_to_string(format!("/proc/{p}/cgroup")).unwrap())
            .collect(),
        "cgroup",
    );
    // No randomness shared: the kernel's bytes, python's seeded generator,
    // a fresh temporary name.
    let draw = "head -c 16 /dev/urandom | od -An -tx1; \
                python3 -c 'import random, uuid; print(random.getrandbits(64), uuid.uuid4())'; \
                mktemp";
    let mut draws = Vec::new();
    for c in &copies {
        let ran = run(c, draw).await;
        assert_eq!(ran.exit.as_ref().map(|e| e.exit_code), Some(0), "{ran:?}");
        draws.push(ran.stdout);
    }
    for (i, a) in draws.iter().enumerate() {
        for b in &draws[i + 1..] {
            for (x, y) in a.lines().zip(b.lines()) {
                assert_ne!(x, y, "two copies drew the same: {a:?} / {b:?}");
            }
        }
    }
    // The sandbox inside works as in a spawned worker, stdin and wasi's
    // streams (its I/O runtime, started before the copy locked itself)
    // included.
    let ran = run(&copies[0], "echo hi && whoami && python3 -c 'print(6*7)'").await;
    assert_eq!(ran.stdout, "hi\nworker\n42\n", "{ran:?}");
    let mut events = copies[1].run(Command {
        command: "cat; python3 -c 'import sys; print(sys.stdin.read() or \"empty\")'".into(),
        timeout: Duration::from_secs(30),
        stdin: b"piped in\n".to_vec(),
        env: Vec::new(),
    });
    let mut out = String::new();
    while let Some(event) = events.recv().await {
        match event {
            ExecEvent::Output(_, d) => out.push_str(&String::from_utf8_lossy(&d)),
            ExecEvent::Failed(why) => panic!("{why}"),
            ExecEvent::Exit(_) => {}
        }
    }
    assert_eq!(out, "piped in\nempty\n");
    for c in copies {
        c.destroy().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn deadlines_fire_in_a_copy() {
    let server = ForkServer::start(&config()).await.expect("a fork server");
    let worker = copy(&server).await;
    let ran = run_for(
        &worker,
        "while true; do :; done",
        Duration::from_millis(300),
    )
    .await;
    let exit = ran.exit.expect("the loop was stopped");
    assert_eq!(exit.exit_code, 124, "{exit:?}");
    // Timers (wasi's I/O runtime, started by the copy itself) run too.
    let ran = run_for(&worker, "sleep 5", Duration::from_secs(1)).await;
    assert_eq!(ran.exit.map(|e| e.exit_code), Some(124), "{:?}", ran.failed);
    assert_eq!(
        run(&worker, "sleep 0.2; echo after").await.stdout,
        "after\n"
    );
    worker.destroy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_copy_killed_mid_command_fails_only_its_run() {
    let server = ForkServer::start(&config()).await.expect("a fork server");
    let victim = copy(&server).await;
    let bystander = copy(&server).await;
    let pid = victim.pid().unwrap();
    let cgroups = victim.cgroup_paths().to_vec();
    let mut events = victim.exec("sleep 30", Duration::from_secs(60));
    tokio::time::sleep(Duration::from_millis(300)).await;
    // SAFETY: signalling a copy this test made.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let mut failed = None;
    while let Some(event) = events.recv().await {
        if let ExecEvent::Failed(why) = event {
            failed = Some(why);
        }
    }
    assert!(failed.expect("the command failed").contains("signal 9"));
    assert_eq!(victim.failed().await.cause, "worker_crashed");
    support::assert_gone(pid, &cgroups).await;
    assert_eq!(run(&bystander, "echo fine").await.stdout, "fine\n");
    // The server makes more.
    let next = copy(&server).await;
    assert_eq!(run(&next, "echo next").await.stdout, "next\n");
    for w in [victim, bystander, next] {
        w.destroy().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_pool_forks_and_replaces_a_fork_server_that_died() {
    let pool = WorkerPool::start(config(), 1);
    let first = pool.take().await.expect("a worker");
    let server = match pool.fork_server() {
        Some(Ok(pid)) => pid,
        other => panic!("the pool does not fork: {other:?}"),
    };
    assert_eq!(
        status(first.pid().unwrap())["PPid"],
        std::process::id().to_string()
    );
    // SAFETY: killing the fork server this test's pool made.
    unsafe { libc::kill(server as i32, libc::SIGKILL) };
    // The copy already made is unaffected.
    let worker = first.start(Limits::default(), Vec::new()).await.unwrap();
    assert_eq!(run(&worker, "echo alive").await.stdout, "alive\n");
    worker.destroy().await;
    // Workers keep coming, from a new fork server.
    let mut replaced = None;
    for _ in 0..50 {
        let next = pool.take().await.expect("a worker after the kill");
        let worker = next.start(Limits::default(), Vec::new()).await.unwrap();
        assert_eq!(run(&worker, "echo again").await.stdout, "again\n");
        worker.destroy().await;
        if let Some(Ok(pid)) = pool.fork_server()
            && pid != server
        {
            replaced = Some(pid);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(replaced.is_some(), "no new fork server");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_copy_past_its_cgroup_cap_is_killed_and_the_cause_named() {
    let mut config = config();
    config.memory_overhead_bytes = 256 << 20;
    let server = ForkServer::start(&config).await.expect("a fork server");
    let limits = Limits {
        memory_bytes: 64 << 20,
        // Files live in the worker's memory: let them outgrow the cgroup.
        disk_bytes: 4 << 30,
        ..Limits::default()
    };
    let idle = IdleWorker::fork(&server, &config).await.expect("a copy");
    let worker = idle.start(limits, Vec::new()).await.expect("start");
    let pid = worker.pid().unwrap();
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
    support::assert_gone(pid, &cgroups).await;
    // The fork server and its other copies are unaffected.
    let next = copy(&server).await;
    assert_eq!(run(&next, "echo unaffected").await.stdout, "unaffected\n");
    next.destroy().await;
    worker.destroy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn many_copies_alive_each_have_their_own_thread_limit() {
    // The kernel charges the threads of every copy's user namespace to the
    // one uid that owns them all: with the server's own limit (64) they
    // would share 64 threads, and copies past it could start none.
    let server = ForkServer::start(&config()).await.expect("a fork server");
    let mut copies = Vec::new();
    for _ in 0..24 {
        copies.push(copy(&server).await);
    }
    // Each starts threads (wasi's I/O runtime for its timer, a process).
    for c in &copies {
        let ran = run(c, "sleep 0.05; echo ok | cat").await;
        assert_eq!(ran.stdout, "ok\n", "{ran:?}");
    }
    for c in copies {
        c.destroy().await;
    }
}
