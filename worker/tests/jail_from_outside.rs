//! The jail as the host sees it while a command runs: other namespaces,
//! seccomp on, no_new_privs, no capabilities, an unprivileged uid, cgroup
//! caps in place, a root holding only the read-only binds, and a network
//! with nothing but a loopback that is down.

mod support;

use std::time::Duration;

use support::{config, run, status, worker};

#[tokio::test(flavor = "multi_thread")]
async fn a_running_worker_is_confined() {
    let worker = worker().await;
    let pid = worker.pid().expect("a worker process");
    let busy = worker.exec("sleep 2; echo done", Duration::from_secs(10));
    tokio::time::sleep(Duration::from_millis(300)).await;

    for ns in ["user", "mnt", "pid", "net", "ipc", "uts", "cgroup"] {
        let ours = std::fs::read_link(format!("/proc/self/ns/{ns}")).unwrap();
        let theirs = std::fs::read_link(format!("/proc/{pid}/ns/{ns}")).unwrap();
        assert_ne!(ours, theirs, "{ns} namespace is shared with the host");
    }
    let s = status(pid);
    assert_eq!(s["Seccomp"], "2", "seccomp filter mode");
    assert_eq!(s["NoNewPrivs"], "1");
    for cap in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        assert_eq!(s[cap], "0000000000000000", "{cap}");
    }
    let uid: Vec<u32> = s["Uid"]
        .split_whitespace()
        .map(|u| u.parse().unwrap())
        .collect();
    assert!(
        uid.iter().all(|&u| u >= 100_000),
        "uids {uid:?} are not a worker's own"
    );
    // PID 1 of its own namespace.
    assert_eq!(
        s["NSpid"].split_whitespace().last(),
        Some("1"),
        "NSpid {}",
        s["NSpid"]
    );

    let root: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/root"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for name in &root {
        assert!(
            ["cache", "programs", "worker"].contains(&name.as_str()),
            "{name} in the root"
        );
    }
    let mounts = std::fs::read_to_string(format!("/proc/{pid}/mounts")).unwrap();
    for line in mounts.lines() {
        let options = line.split_whitespace().nth(3).unwrap();
        assert!(
            options.split(',').any(|o| o == "ro"),
            "writable mount: {line}"
        );
    }

    let links = std::fs::read_to_string(format!("/proc/{pid}/net/dev")).unwrap();
    let names: Vec<&str> = links
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next())
        .map(str::trim)
        .collect();
    assert_eq!(names, ["lo"], "network interfaces");
    let route = std::fs::read_to_string(format!("/proc/{pid}/net/route")).unwrap();
    assert_eq!(route.lines().skip(1).count(), 0, "routes: {route}");
    // A loopback that was never brought up has no address, not even ::1.
    let inet6 = std::fs::read_to_string(format!("/proc/{pid}/net/if_inet6")).unwrap();
    assert_eq!(inet6, "", "loopback is up");

    let cgroups = worker.cgroup_paths().to_vec();
    let read = |file: &str| -> Option<String> {
        cgroups
            .iter()
            .map(|d| d.join(file))
            .find(|p| p.exists())
            .map(|p| std::fs::read_to_string(p).unwrap().trim().to_string())
    };
    let expected_memory =
        (ephemeral_runtime::Limits::default().memory_bytes as u64) + config().memory_overhead_bytes;
    let memory = read("memory.limit_in_bytes")
        .or_else(|| read("memory.max"))
        .unwrap();
    assert_eq!(memory, expected_memory.to_string());
    assert_eq!(read("pids.max").unwrap(), config().max_tasks.to_string());
    let procs = read("cgroup.procs").unwrap();
    assert!(
        procs.lines().any(|p| p == pid.to_string()),
        "worker not in its cgroup"
    );

    let mut busy = busy;
    let mut out = Vec::new();
    while let Some(e) = busy.recv().await {
        if let ephemeral_worker::ExecEvent::Output(_, d) = e {
            out.extend(d);
        }
    }
    assert_eq!(String::from_utf8_lossy(&out), "done\n");
    worker.destroy().await;
    support::assert_gone(pid, &cgroups).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sandbox_inside_still_works() {
    let worker = worker().await;
    let ran = run(&worker, "echo hi; whoami; python3 -c 'print(6*7)'").await;
    assert_eq!(ran.stdout, "hi\nworker\n42\n", "stderr: {}", ran.stderr);
    assert_eq!(ran.exit.unwrap().exit_code, 0);
    worker.destroy().await;
}
