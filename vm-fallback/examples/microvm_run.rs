//! Runs shell commands in a microVM through the worker protocol, as a run
//! would: the worker (static, musl) is the guest's init, its components
//! precompiled for a portable CPU; frames go through the virtio console.
//!
//! ```text
//! microvm_run VMLINUX WORKER CACHE_DIR PROGRAMS_DIR TIMEOUT_S -- 'CMD' [-- 'CMD']…
//! microvm_run vmm VMM SNAPSHOT_DIR RUNS TIMEOUT_S -- 'CMD' [-- 'CMD']…
//! microvm_run pool VMM SNAPSHOT_DIR RUNS TIMEOUT_S -- 'CMD' [-- 'CMD']…
//! ```
//!
//! The first form boots a microVM in this process and prints each
//! command's output and exit, then the VM's end; exits 0 when every
//! command ran and the VM ended by itself.
//!
//! The second form is the host's side of runs served by the VMM process
//! from a template's snapshot (`ephemeral-vmm template`): RUNS times,
//! `VMM serve --snapshot SNAPSHOT_DIR --timeout TIMEOUT_S` is started with
//! one end of a socket pair as descriptor 3 — as the server starts a
//! jailed worker — and driven through the worker protocol: the replayed
//! Ready, then Start (with the run's own entropy, clock and id), the
//! commands, Destroy. Each run is framed by `==> vmm I` and `<== vmm I:
//! exit CODE`.
//!
//! The third form is the server's own machinery: a `WorkerPool` whose
//! program is `VMM serve --snapshot SNAPSHOT_DIR --jail`, spawned into
//! fresh namespaces and a cgroup like any jailed worker (root and cgroups
//! needed); each run takes a ready VMM from the pool, starts it (the pool
//! sends the guest identity), runs the commands with `WorkerHandle::exec`
//! and destroys it. Framed by `==> pool I` / `<== pool I: exit CODE`.

use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ephemeral_vm::Kvm;
use ephemeral_vm::devices::virtio::VirtioConsole;
use ephemeral_vm::linux::{GuestEnd, LinuxVm};
use ephemeral_vm::microvm::{self, WorkerGuest};
use ephemeral_worker::protocol::{self, FromWorker, ToWorker, WireLimits};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let (fixed, rest) = args.split_at(split);
    let commands: Vec<String> = rest
        .split(|w| w == "--")
        .filter(|g| !g.is_empty())
        .map(|g| g.join(" "))
        .collect();
    if let [mode, vmm, snapshot, runs, timeout] = fixed
        && (mode == "vmm" || mode == "pool")
    {
        let runs: u32 = runs.parse().unwrap_or(1);
        let timeout = Duration::from_secs(timeout.parse().unwrap_or(120));
        let failed = match mode.as_str() {
            "vmm" => (1..=runs)
                .filter(|&i| !vmm_run(vmm, snapshot, i, &commands, timeout))
                .count(),
            _ => pool_runs(vmm, snapshot, runs, &commands, timeout),
        };
        std::process::exit(i32::from(failed > 0));
    }
    let [kernel, worker, cache, programs, timeout] = fixed else {
        eprintln!(
            "usage: microvm_run VMLINUX WORKER CACHE_DIR PROGRAMS_DIR TIMEOUT_S -- 'CMD'…\n       microvm_run vmm VMM SNAPSHOT_DIR RUNS TIMEOUT_S -- 'CMD'…"
        );
        std::process::exit(2);
    };
    let timeout = Duration::from_secs(timeout.parse().unwrap_or(120));
    let disk = std::env::var_os("EPHEMERAL_GUEST_DISK").map(std::path::PathBuf::from);
    let guest = WorkerGuest {
        kernel: kernel.into(),
        worker: worker.into(),
        cache_dir: cache.into(),
        programs_dir: programs.into(),
        memory_mib: microvm::DEFAULT_MEMORY_MIB,
    }
    // `EPHEMERAL_GUEST_DISK=PATH`: programs with files of their own (the
    // scientific python) go on a read-only disk made there.
    .guest(match &disk {
        Some(path) => microvm::Disk::Make(path),
        None => microvm::Disk::None,
    })
    .expect("the guest");
    let kvm = Kvm::open().expect("/dev/kvm");
    let started = Instant::now();
    let (mut pipe_read, pipe_write) = std::io::pipe().expect("pipe");
    let mut vm = LinuxVm::new(&kvm, &guest, Box::new(pipe_write)).expect("the microVM");
    println!("--- microVM built in {} ms", started.elapsed().as_millis());
    let (done_tx, done_rx) = mpsc::channel();
    let channel = vm.channel();
    std::thread::spawn(move || {
        let ok = wait_ready(&mut pipe_read, started)
            && drive(
                &Guest::Channel(channel),
                pipe_read,
                &commands,
                "run_microvm_lab",
            );
        let _ = done_tx.send(ok);
    });
    let end = vm.run_until(started + timeout).expect("the vCPU runs");
    let ok = done_rx
        .recv_timeout(Duration::from_secs(1))
        .unwrap_or(false);
    let console = vm.console();
    if end != GuestEnd::Reset || !ok {
        eprintln!("{console}");
    }
    for line in console
        .lines()
        .filter(|l| l.starts_with("ephemeral-worker:"))
    {
        println!("--- guest console: {line}");
    }
    println!("--- {end:?} after {} ms", started.elapsed().as_millis());
    std::process::exit(if ok && end == GuestEnd::Reset { 0 } else { 1 });
}

/// One run served by a VMM process, driven over a socket as the server
/// drives a worker. True when every command ran and the VMM exited 0.
fn vmm_run(vmm: &str, snapshot: &str, index: u32, commands: &[String], timeout: Duration) -> bool {
    println!("==> vmm {index}");
    let started = Instant::now();
    let (host, guest) = UnixStream::pair().expect("socketpair");
    let guest_fd = guest.as_raw_fd();
    let mut command = std::process::Command::new(vmm);
    command.args(["serve", "--snapshot", snapshot, "--timeout"]);
    command.arg(timeout.as_secs().to_string());
    // SAFETY: between fork and exec only dup2, which is async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            if libc::dup2(guest_fd, 3) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().expect("start the VMM");
    drop(guest);
    let mut from = host.try_clone().expect("socket");
    // Kept open until the VMM exits: the guest ends the run itself (it
    // resets after Destroyed), not the host hanging up.
    let to = Guest::Socket(host);
    let ok = wait_ready(&mut from, started) && {
        print_memory(child.id(), "after Ready");
        drive(&to, from, commands, &format!("run_vmm_{index}"))
    };
    print_memory(child.id(), "after the commands");
    let status = child.wait().expect("wait for the VMM");
    drop(to);
    println!(
        "--- VMM exited {status} after {} ms",
        started.elapsed().as_millis()
    );
    let ok = ok && status.success();
    println!("<== vmm {index}: exit {}", i32::from(!ok));
    ok
}

/// RUNS runs through a pool of jailed VMM processes, as the server makes
/// them. Returns how many failed.
fn pool_runs(
    vmm: &str,
    snapshot: &str,
    runs: u32,
    commands: &[String],
    timeout: Duration,
) -> usize {
    use ephemeral_worker::{ExecEvent, WorkerConfig, WorkerPool};
    let args = ["serve", "--snapshot", snapshot, "--jail", "--timeout"]
        .iter()
        .map(|a| a.to_string())
        .chain([timeout.as_secs().to_string()])
        .collect();
    let mut config = match WorkerConfig::detect(vmm.into(), args, "/-".into(), "/-".into()) {
        Ok(c) => c,
        Err(why) => {
            println!("--- cannot jail VMMs here: {why}");
            return runs as usize;
        }
    };
    config.microvm = true;
    // The guest's RAM is the VMM's memory: what the guest writes is
    // copied from the snapshot into the VMM's cgroup.
    config.memory_overhead_bytes = 2 << 30;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio");
    rt.block_on(async move {
        let pool = WorkerPool::start(config, 1);
        let mut failed = 0;
        for index in 1..=runs {
            println!("==> pool {index}");
            let t = Instant::now();
            let ok = match pool.take().await {
                Err(e) => {
                    println!("--- no VMM from the pool: {e}");
                    false
                }
                Ok(idle) => {
                    let pid = idle.pid().unwrap_or_default();
                    println!(
                        "--- pool handed out a jailed VMM (pid {pid}) in {:.1} ms",
                        t.elapsed().as_secs_f64() * 1e3
                    );
                    print_jail(pid);
                    match idle.start(Default::default(), Vec::new()).await {
                        Err(e) => {
                            println!("--- Start refused: {e}");
                            false
                        }
                        Ok(worker) => {
                            println!("--- started in {} ms", t.elapsed().as_millis());
                            let mut ok = true;
                            for command in commands {
                                println!("$ {command}");
                                let mut events = worker.exec(command, timeout);
                                while let Some(event) = events.recv().await {
                                    match event {
                                        ExecEvent::Output(_, data) => {
                                            print!("{}", String::from_utf8_lossy(&data))
                                        }
                                        ExecEvent::Exit(o) => println!("--- exit {}", o.exit_code),
                                        ExecEvent::Failed(why) => {
                                            println!("--- failed: {why}");
                                            ok = false;
                                        }
                                    }
                                }
                            }
                            worker.destroy().await;
                            let gone = !std::path::Path::new(&format!("/proc/{pid}")).exists();
                            println!("--- destroyed; VMM process gone: {gone}");
                            ok && gone
                        }
                    }
                }
            };
            failed += usize::from(!ok);
            println!("<== pool {index}: exit {}", i32::from(!ok));
        }
        failed
    })
}

/// What the kernel says of a jailed VMM: its seccomp mode, no_new_privs,
/// uid, and whether its namespaces are ours.
fn print_jail(pid: u32) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    for key in ["Uid:", "NoNewPrivs:", "Seccomp:", "CapEff:", "CapBnd:"] {
        if let Some(line) = status.lines().find(|l| l.starts_with(key)) {
            println!(
                "--- VMM {}",
                line.split_whitespace().collect::<Vec<_>>().join(" ")
            );
        }
    }
    for ns in ["net", "mnt", "pid", "user"] {
        let theirs = std::fs::read_link(format!("/proc/{pid}/ns/{ns}")).ok();
        let ours = std::fs::read_link(format!("/proc/self/ns/{ns}")).ok();
        println!(
            "--- VMM {ns} namespace is its own: {}",
            theirs.is_some() && theirs != ours
        );
    }
}

/// The VMM process's resident memory from `/proc/PID/status`: file pages
/// (the snapshot's memory file — shmem when it lives on a tmpfs — and the
/// binary, shared with every VMM restored from it) and anonymous pages
/// (its own: the guest's writes, copied on write, and the VMM's heap).
fn print_memory(pid: u32, when: &str) {
    let status = match std::fs::read_to_string(format!("/proc/{pid}/status")) {
        Ok(s) => s,
        Err(e) => {
            println!("--- VMM memory {when}: unknown ({e})");
            return;
        }
    };
    let kib = |key: &str| -> u64 {
        status
            .lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            .unwrap_or(0)
    };
    println!(
        "--- VMM memory {when}: RSS {} MiB = {} MiB its own (anonymous) + {} MiB shared (snapshot and binary)",
        kib("VmRSS:") >> 10,
        kib("RssAnon:") >> 10,
        (kib("RssFile:") + kib("RssShmem:")) >> 10
    );
}

/// Where frames to the guest go: straight into its virtio console (a VM
/// in this process), or a VMM process's socket.
enum Guest {
    Channel(VirtioConsole),
    Socket(UnixStream),
}

/// Waits for the worker's Ready.
fn wait_ready(from: &mut impl Read, started: Instant) -> bool {
    match receive(from) {
        Some(FromWorker::Ready { version, .. }) => {
            println!(
                "--- worker ready after {} ms (protocol v{version})",
                started.elapsed().as_millis()
            );
            true
        }
        other => {
            println!("--- no Ready from the guest: {other:?}");
            false
        }
    }
}

fn send(guest: &Guest, message: &ToWorker) {
    let frame = protocol::encode(message).expect("encode");
    match guest {
        Guest::Channel(channel) => {
            let mut sent = 0;
            while sent < frame.len() {
                let n = channel.push(&frame[sent..]);
                sent += n;
                if n == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
        Guest::Socket(socket) => {
            let _ = std::io::Write::write_all(&mut &*socket, &frame);
        }
    }
}

fn receive(from: &mut impl Read) -> Option<FromWorker> {
    ephemeral_worker::channel::read_frame(from, &mut Vec::new()).ok()
}

/// Start → each Exec (output as it comes, then its exit) → Destroy. True
/// when all went as the protocol says.
fn drive(guest: &Guest, mut from: impl Read, commands: &[String], run_id: &str) -> bool {
    // `EPHEMERAL_COMMAND_TIMEOUT_S`: each command's limit (60 s), for the
    // lab's slow first touches of a big program.
    let command_ms = std::env::var("EPHEMERAL_COMMAND_TIMEOUT_S")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map_or(60_000, |s| s * 1000);
    let limits = WireLimits {
        command_timeout_ms: command_ms,
        sandbox_timeout_ms: command_ms * 5,
        memory_bytes: 512 << 20,
        output_bytes: 1 << 20,
        disk_bytes: 16 << 20,
        disk_files: 1000,
    };
    send(
        guest,
        &ToWorker::Start {
            limits,
            guest: Some(ephemeral_worker::host::guest_identity(run_id).expect("host entropy")),
        },
    );
    if !matches!(receive(&mut from), Some(FromWorker::Started)) {
        return false;
    }
    for (i, command) in commands.iter().enumerate() {
        let t = Instant::now();
        println!("$ {command}");
        send(
            guest,
            &ToWorker::Exec {
                id: i as u32 + 1,
                command: command.clone(),
                timeout_ms: command_ms,
                stdin: Vec::new(),
                env: Vec::new(),
            },
        );
        loop {
            match receive(&mut from) {
                Some(FromWorker::Output { data, .. }) => {
                    print!("{}", String::from_utf8_lossy(&data))
                }
                Some(FromWorker::Exit { exit, .. }) => {
                    println!(
                        "--- exit {} in {} ms",
                        exit.exit_code,
                        t.elapsed().as_millis()
                    );
                    break;
                }
                other => {
                    println!("--- unexpected: {other:?}");
                    return false;
                }
            }
        }
    }
    send(guest, &ToWorker::Destroy);
    matches!(receive(&mut from), Some(FromWorker::Destroyed { .. }))
}
