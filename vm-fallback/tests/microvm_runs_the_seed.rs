//! A run's commands in a microVM, end to end, under the lab's AMD SVM: the
//! worker (static, musl) is the guest's init, its shell and python3
//! precompiled on this host for a portable CPU; the worker protocol goes,
//! unchanged, over the virtio console.
//!
//! `ephemeral-vmm template` boots a template microVM to its worker's Ready
//! and writes its snapshot; then each run is an `ephemeral-vmm serve`
//! process restoring it, driven over a socket on its descriptor 3 exactly
//! as the server drives a jailed worker. In each of two runs the seed's
//! four commands — `pwd; whoami`, curl with no network, the python primes
//! script, a file in `/tmp` — give the seed's answers; the guest took the
//! host's clock with `Start`; the lab host's files are not there; the VM
//! ends by itself. The two runs draw different random bytes (the same
//! memory, reseeded by `Start`). A run that loops forever is ended at its
//! deadline, its VMM exits 3 and its VM is gone. Last, the server's own
//! machinery: a worker pool whose program is `ephemeral-vmm serve --jail`
//! spawns the VMM into its own namespaces and cgroup (v2 here), where it
//! jails itself and locks itself under its seccomp list; a run taken from
//! the pool runs commands and its VMM is gone after destroy.

mod support;

use support::{build_musl, file, guest_components, kernel, lab, section, stripped};

#[test]
fn the_seed_commands_run_in_a_microvm_through_the_worker_protocol() {
    let kernel = kernel();
    let built = build_musl(&[
        "-p",
        "ephemeral-worker",
        "--bin",
        "ephemeral-worker",
        "-p",
        "ephemeral-vm",
        "--bin",
        "ephemeral-vmm",
        "--example",
        "microvm_run",
    ]);
    let worker = stripped(&built.join("ephemeral-worker"));
    let vmm = stripped(&built.join("ephemeral-vmm"));
    let runner = stripped(&built.join("examples/microvm_run"));
    let mut files = vec![
        file(&kernel, "/vmlinux"),
        file(&worker, "/worker"),
        file(&vmm, "/ephemeral-vmm"),
        file(&runner, "/microvm_run"),
    ];
    for (host, guest) in guest_components() {
        files.push(file(&host, &guest));
    }
    // The seed's four commands, then what the checks below need.
    let seed = r#"-- 'pwd; whoami' -- 'command -v curl && curl -sS -m 8 https://example.com' -- "printf '%s\n' '#!/usr/bin/env python3' 'primes = []' 'n = 2' 'while len(primes) < 15:' '    if all(n % p for p in primes):' '        primes.append(n)' '    n += 1' 'print(*primes)' > primes.py && chmod +x primes.py && ./primes.py" -- "printf 'sandbox proof\n' > /tmp/proof.txt && ls -l /tmp/proof.txt" -- 'ls /; cat /etc/passwd; echo $?' -- 'date -u +year=%Y' -- "printf entropy=; python3 -c 'import os; print(os.urandom(16).hex())'" -- 'cat /host-secret.txt; echo secret-status=$?' -- 'echo hi'"#;
    let script = format!(
        r#"echo "lab host secret" > /host-secret.txt
echo "==> boot"
/microvm_run /vmlinux /worker /gcache /gprog 300 {seed} 2>&1
echo "<== boot: exit $?"
echo "==> seed"
/ephemeral-vmm template --kernel /vmlinux --worker /worker --cache /gcache --programs /gprog --out /snapshot &&
/microvm_run vmm /ephemeral-vmm /snapshot 2 300 {seed} 2>&1
echo "<== seed: exit $?"
echo "==> loop"
/microvm_run vmm /ephemeral-vmm /snapshot 1 15 -- 'while true; do true; done' 2>&1
echo "<== loop: exit $?"
echo "==> jailed"
# The jail's pivot_root refuses a root on the initramfs, and user
# namespaces refuse a chrooted caller: the jailed part gets a tmpfs moved
# over / (as switch_root does), as a server's root is a real filesystem.
mkdir -p /jr && mount -t tmpfs -o size=64m jr /jr && cd /jr &&
mkdir -p proc sys dev tmp snapshot && mount -t proc proc proc && mount -t sysfs sys sys &&
mount -t cgroup2 none sys/fs/cgroup && mount -t devtmpfs dev dev && mount -o bind /snapshot snapshot &&
cp /ephemeral-vmm /microvm_run . && mount -o move /jr / &&
chroot . /microvm_run pool /ephemeral-vmm /snapshot 1 120 -- 'pwd; whoami' -- 'echo hi' 2>&1
echo "<== jailed: exit $?"
"#
    );
    let out = lab(&files, &script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // A microVM booted for the run: the seed's answers; its kernel has no
    // networking at all (`CONFIG_NET=n`: not even the socket call).
    let boot = section(&stdout, "boot");
    check_seed_run(&boot);
    let no_socket = "--- guest console: ephemeral-worker: guest network: \
                     socket(AF_INET): Function not implemented (os error 38)";
    assert!(boot.contains(&no_socket), "{boot:?}");
    assert!(
        boot.iter().any(|l| l.starts_with("--- Reset after")),
        "{boot:?}"
    );

    let seed = section(&stdout, "seed").join("\n");
    assert!(
        seed.contains("template ready: booted to the worker's Ready in"),
        "{seed}"
    );
    assert!(seed.ends_with("<== seed: exit 0"), "{seed}");
    let first = section(&seed, "vmm 1");
    let second = section(&seed, "vmm 2");
    check_seed_run(&first);
    check_seed_run(&second);
    let entropy = |run: &[&str]| {
        run.iter()
            .find_map(|l| l.strip_prefix("entropy="))
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("no entropy line in {run:?}"))
    };
    assert_eq!(entropy(&first).len(), 32);
    assert_ne!(
        entropy(&first),
        entropy(&second),
        "two runs restored from one snapshot drew the same random bytes"
    );

    let looping = section(&stdout, "loop").join("\n");
    let looped = section(&looping, "vmm 1");
    assert!(
        looped
            .iter()
            .any(|l| l.starts_with("--- VMM exited exit status: 3 after")),
        "{looped:?}"
    );
    assert_eq!(looped.last(), Some(&"<== vmm 1: exit 1"), "{looped:?}");
    // The VMM said the deadline ended it; its process is gone (waited for).
    assert!(
        looping.contains("ephemeral-vmm: microVM ready from the snapshot in")
            && looping.contains("Deadline after"),
        "{looping}"
    );

    let jailed = section(&stdout, "jailed").join("\n");
    let pooled = section(&jailed, "pool 1");
    let has = |line: &str| pooled.iter().any(|l| l.contains(line));
    assert!(has("--- pool handed out a jailed VMM"), "{pooled:?}");
    assert!(has("--- VMM Seccomp: 2"), "{pooled:?}");
    assert!(has("--- VMM NoNewPrivs: 1"), "{pooled:?}");
    assert!(has("--- VMM CapEff: 0000000000000000"), "{pooled:?}");
    for ns in ["net", "mnt", "pid", "user"] {
        assert!(
            has(&format!("--- VMM {ns} namespace is its own: true")),
            "{pooled:?}"
        );
    }
    assert!(
        pooled.contains(&"worker") && pooled.contains(&"hi"),
        "{pooled:?}"
    );
    assert!(!has("--- failed"), "{pooled:?}");
    assert!(has("--- destroyed; VMM process gone: true"), "{pooled:?}");
    assert_eq!(pooled.last(), Some(&"<== pool 1: exit 0"), "{pooled:?}");
}

/// One restored run's answers to the seed's commands and the checks after.
fn check_seed_run(run: &[&str]) {
    let has = |line: &str| run.iter().any(|l| l.contains(line));
    assert!(has("--- worker ready after"), "{run:?}");
    if has("ephemeral-vmm:") {
        assert!(has("--- VMM memory after Ready"), "{run:?}");
        assert!(
            has("ephemeral-vmm: microVM ready from the snapshot in"),
            "{run:?}"
        );
        assert!(has("; Finished after"), "{run:?}");
        assert!(has("--- VMM memory after the commands: RSS"), "{run:?}");
        assert!(has("--- VMM exited exit status: 0 after"), "{run:?}");
    }
    assert!(
        run.iter()
            .any(|l| l.starts_with("/tmp/ephemeral-run-") && l.ends_with("/scratch")),
        "{run:?}"
    );
    assert!(run.contains(&"worker"), "{run:?}");
    assert!(
        has("curl: (6) Could not resolve host: example.com"),
        "{run:?}"
    );
    assert!(has("--- exit 6"), "{run:?}");
    assert!(
        run.contains(&"2 3 5 7 11 13 17 19 23 29 31 37 41 43 47"),
        "{run:?}"
    );
    assert!(has("worker worker 14") && has("/tmp/proof.txt"), "{run:?}");
    // The sandbox's own tree (its passwd names the run's scratch folder),
    // not the guest's initramfs, which has no /etc at all.
    assert!(
        has("worker:x:1000:1000:worker:/tmp/ephemeral-run-"),
        "{run:?}"
    );
    // The lab host's file is not in the guest.
    assert!(!has("lab host secret"), "{run:?}");
    assert!(has("secret-status=1"), "{run:?}");
    // The guest took the host's clock: not 1970 (a year this code was
    // written in or after; never today's, so the test holds on any date).
    let year: u32 = run
        .iter()
        .find_map(|l| l.strip_prefix("year="))
        .and_then(|y| y.parse().ok())
        .unwrap_or_else(|| panic!("no year line in {run:?}"));
    assert!(year >= 2026, "{run:?}");
    assert!(run.contains(&"hi"), "{run:?}");
    assert!(
        run.last().is_some_and(|l| l.ends_with(": exit 0")),
        "{run:?}"
    );
}
