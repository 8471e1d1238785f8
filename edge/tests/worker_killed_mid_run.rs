//! A run's jailed worker killed with SIGKILL under it: the run ends
//! `failed` with the cause named, settled, its worker reaped and its cgroup
//! removed, while the server and another run carry on. Its own test
//! binary, so the only workers this process has are this test's.

mod support;

use std::time::Duration;

use support::{Backend, TestServer, get_json, post_run, script, wait_run};

/// This process's children that are workers (not the fork server they are
/// copied from, which lives as long as the server).
fn worker_pids() -> Vec<u32> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let ppid = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest.split_whitespace().nth(1));
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            // A fork server's cgroup is `f<server pid>-<n>`, a worker's `w…`.
            let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
            ppid == Some(Some(me.as_str()))
                && String::from_utf8_lossy(&cmdline).contains("\0worker\0")
                && !cgroup.contains("/ephemeral/f")
        })
        .collect()
}

fn worker_cgroups() -> Vec<std::path::PathBuf> {
    let prefix = format!("w{}-", std::process::id());
    ["memory", "pids", "cpu", ""]
        .iter()
        .map(|c| {
            std::path::Path::new("/sys/fs/cgroup")
                .join(c)
                .join("ephemeral")
        })
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flat_map(|entries| entries.filter_map(Result::ok))
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_killed_under_its_run_fails_it_settled_and_clean() {
    // No pool: the only worker is the run's.
    let server = TestServer::start_with(Backend::Sqlite, |c| c.workers.pool_size = 0).await;
    let key = server.org("acme", 1_000_000).await;
    let (_, _, created) = post_run(
        &server.base,
        &key,
        &script("echo started\nsleep 60", 50_000),
        None,
    )
    .await;
    let id = created["id"].as_str().unwrap().to_string();
    let pid = loop {
        if let [pid] = worker_pids()[..] {
            let (_, run) = get_json(&server.base, &key, &format!("/v1/runs/{id}")).await;
            if run.to_string().contains("started") {
                break pid;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // Another run, in its own worker, must not notice.
    let (_, _, other) = post_run(
        &server.base,
        &key,
        &script("sleep 1\necho fine", 50_000),
        None,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    // SAFETY: signalling a worker this test's server made.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };

    let run = wait_run(&server.base, &key, &id).await;
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["error"]["code"], "sandbox_failed");
    let message = run["error"]["message"].as_str().unwrap();
    assert!(message.contains("signal 9"), "{message}");
    let cost = &run["cost"];
    assert_eq!(
        cost["charged_micros"].as_i64().unwrap() + cost["released_micros"].as_i64().unwrap(),
        cost["reserved_micros"].as_i64().unwrap()
    );
    assert_eq!(
        run["timeline"].as_array().unwrap().last().unwrap()["type"],
        "worker.destroyed"
    );

    let other = wait_run(&server.base, &key, other["id"].as_str().unwrap()).await;
    assert_eq!(other["status"], "succeeded", "{other}");
    assert!(
        worker_pids().is_empty(),
        "workers left: {:?}",
        worker_pids()
    );
    assert!(
        worker_cgroups().is_empty(),
        "cgroups left: {:?}",
        worker_cgroups()
    );
    server.stop().await;
}
