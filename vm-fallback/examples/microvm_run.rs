//! Runs shell commands in a microVM through the worker protocol, as a run
//! would: the worker (static, musl) is the guest's init, its components
//! precompiled for a portable CPU; frames go through the virtio console.
//!
//! `microvm_run VMLINUX WORKER CACHE_DIR PROGRAMS_DIR TIMEOUT_S [restores=N] -- 'CMD' [-- 'CMD']…`
//! prints each command's output and exit, then the VM's end. Exits 0 when
//! every command ran and the VM ended by itself.
//!
//! With `restores=N` the VM booted is a template: when its worker is
//! ready it is stopped and snapshotted, and the commands run N times, each
//! time in a new microVM restored from the snapshot (given its own
//! entropy, clock and run id with `Start`), TIMEOUT_S each; each run's
//! output is framed by `==> restored I` and `<== restored I: exit CODE`.

use std::io::Read;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ephemeral_vm::devices::virtio::VirtioConsole;
use ephemeral_vm::initramfs::{self, Entry};
use ephemeral_vm::linux::{
    DEFAULT_CMDLINE, GuestEnd, LinuxGuest, LinuxSnapshot, LinuxVm, cmdline_with_channel,
};
use ephemeral_vm::{Kvm, StopSignal};
use ephemeral_worker::protocol::{self, FromWorker, GuestIdentity, ToWorker, WireLimits};

/// How long the template may take to boot to its worker's Ready.
const TEMPLATE_BOOT: Duration = Duration::from_secs(300);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let (fixed, rest) = args.split_at(split);
    let (fixed, restores) = match fixed {
        [head @ .., last] if last.starts_with("restores=") => {
            (head, last["restores=".len()..].parse::<u32>().ok())
        }
        _ => (fixed, None),
    };
    let [kernel, worker, cache, programs, timeout] = fixed else {
        eprintln!(
            "usage: microvm_run VMLINUX WORKER CACHE_DIR PROGRAMS_DIR TIMEOUT_S [restores=N] -- 'CMD'…"
        );
        std::process::exit(2);
    };
    let commands: Vec<String> = rest
        .split(|w| w == "--")
        .filter(|g| !g.is_empty())
        .map(|g| g.join(" "))
        .collect();
    let timeout = Duration::from_secs(timeout.parse().unwrap_or(120));
    let started = Instant::now();
    let guest = LinuxGuest {
        kernel: kernel.into(),
        initramfs: guest_initramfs(worker, cache, programs),
        cmdline: format!(
            "{} -- --guest-init --portable --bind /cache=cache --bind /programs=programs",
            cmdline_with_channel(DEFAULT_CMDLINE)
        ),
        memory_mib: 1024,
    };
    let (pipe_read, pipe_write) = std::io::pipe().expect("pipe");
    let kvm = Kvm::open().expect("/dev/kvm");
    let mut vm = LinuxVm::new(&kvm, &guest, Box::new(pipe_write)).expect("the microVM");
    println!("--- microVM built in {} ms", started.elapsed().as_millis());
    if let Some(restores) = restores {
        let snapshot = template(vm, pipe_read, started);
        let failed = (1..=restores)
            .filter(|&i| !restored_run(&kvm, &snapshot, i, &commands, timeout))
            .count();
        std::process::exit(i32::from(failed > 0));
    }
    let (done_tx, done_rx) = mpsc::channel();
    let channel = vm.channel();
    let mut pipe_read = pipe_read;
    std::thread::spawn(move || {
        let ok = wait_ready(&mut pipe_read, started)
            && drive(channel, pipe_read, &commands, "run_microvm_lab");
        let _ = done_tx.send(ok);
    });
    let end = vm.run_until(started + timeout).expect("the vCPU runs");
    let ok = done_rx
        .recv_timeout(Duration::from_secs(1))
        .unwrap_or(false);
    if end != GuestEnd::Reset || !ok {
        eprintln!("{}", vm.console());
    }
    println!("--- {end:?} after {} ms", started.elapsed().as_millis());
    std::process::exit(if ok && end == GuestEnd::Reset { 0 } else { 1 });
}

/// Boots the template to its worker's Ready, stops it there and takes its
/// snapshot; the template VM is then destroyed.
fn template(mut vm: LinuxVm, mut from: std::io::PipeReader, started: Instant) -> LinuxSnapshot {
    let stop = StopSignal::new();
    let remote = stop.clone();
    let waiter = std::thread::spawn(move || {
        let ready = wait_ready(&mut from, started);
        remote.stop();
        ready
    });
    let end = vm
        .run_until_stopped(started + TEMPLATE_BOOT, &stop)
        .expect("the template's vCPU runs");
    if end != GuestEnd::Stopped || !waiter.join().unwrap_or(false) {
        eprintln!("{}", vm.console());
        println!("--- the template did not get ready: {end:?}");
        std::process::exit(1);
    }
    let t = Instant::now();
    let snapshot = vm.snapshot().expect("the snapshot");
    let (size, stored) = snapshot.memory();
    println!(
        "--- template snapshot taken in {} ms ({} of {} MiB stored)",
        t.elapsed().as_millis(),
        stored >> 20,
        size >> 20
    );
    snapshot
}

/// One run in a microVM restored from `snapshot`. True when every command
/// ran and the VM ended by itself.
fn restored_run(
    kvm: &Kvm,
    snapshot: &LinuxSnapshot,
    index: u32,
    commands: &[String],
    timeout: Duration,
) -> bool {
    println!("==> restored {index}");
    let started = Instant::now();
    let (pipe_read, pipe_write) = std::io::pipe().expect("pipe");
    let (mut vm, report) =
        LinuxVm::restore(kvm, snapshot, Box::new(pipe_write)).expect("the restored microVM");
    println!(
        "--- microVM ready from the snapshot in {:.2} ms",
        report.ready.as_secs_f64() * 1e3
    );
    let channel = vm.channel();
    let commands = commands.to_vec();
    let run_id = format!("run_restored_{index}");
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(drive(channel, pipe_read, &commands, &run_id));
    });
    let end = vm.run_until(started + timeout).expect("the vCPU runs");
    if end != GuestEnd::Reset {
        eprintln!("{}", vm.console());
    }
    drop(vm);
    println!(
        "--- {end:?} after {} ms; microVM destroyed",
        started.elapsed().as_millis()
    );
    // A run the deadline ended leaves its driver waiting for a frame that
    // will never come: it is not waited for.
    let ok = end == GuestEnd::Reset
        && done_rx
            .recv_timeout(Duration::from_secs(1))
            .unwrap_or(false);
    println!("<== restored {index}: exit {}", i32::from(!ok));
    ok
}

/// `/init` is the worker; `/cache` and `/programs` what it loads.
fn guest_initramfs(worker: &str, cache: &str, programs: &str) -> Vec<u8> {
    let mut files = vec![
        Entry::Dir {
            path: "cache".into(),
        },
        Entry::Dir {
            path: "programs".into(),
        },
    ];
    for (dir, into) in [(cache, "cache"), (programs, "programs")] {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_file() {
                files.push(Entry::File {
                    path: format!("{into}/{name}"),
                    mode: 0o644,
                    data: std::fs::read(e.path()).expect("read a guest file"),
                });
            }
        }
    }
    let init = std::fs::read(worker).expect("read the worker");
    initramfs::build(&init, &files).expect("the initramfs")
}

fn send(channel: &VirtioConsole, message: &ToWorker) {
    let frame = protocol::encode(message).expect("encode");
    let mut sent = 0;
    while sent < frame.len() {
        let n = channel.push(&frame[sent..]);
        sent += n;
        if n == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn receive(from: &mut impl Read) -> Option<FromWorker> {
    ephemeral_worker::channel::read_frame(from, &mut Vec::new()).ok()
}

/// Waits for the worker's Ready.
fn wait_ready(from: &mut impl Read, started: Instant) -> bool {
    match receive(from) {
        Some(FromWorker::Ready { version, .. }) => {
            println!(
                "--- worker ready in the guest after {} ms (protocol v{version})",
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

/// Start → each Exec (output as it comes, then its exit) → Destroy. True
/// when all went as the protocol says.
fn drive(channel: VirtioConsole, mut from: impl Read, commands: &[String], run_id: &str) -> bool {
    let limits = WireLimits {
        command_timeout_ms: 60_000,
        sandbox_timeout_ms: 300_000,
        memory_bytes: 256 << 20,
        output_bytes: 1 << 20,
        disk_bytes: 16 << 20,
        disk_files: 1000,
    };
    send(
        &channel,
        &ToWorker::Start {
            limits,
            guest: Some(identity(run_id)),
        },
    );
    if !matches!(receive(&mut from), Some(FromWorker::Started)) {
        return false;
    }
    for (i, command) in commands.iter().enumerate() {
        let t = Instant::now();
        println!("$ {command}");
        send(
            &channel,
            &ToWorker::Exec {
                id: i as u32 + 1,
                command: command.clone(),
                timeout_ms: 60_000,
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
    send(&channel, &ToWorker::Destroy);
    matches!(receive(&mut from), Some(FromWorker::Destroyed { .. }))
}

/// The time, fresh entropy from this host, and a run id: what the guest
/// must not guess.
fn identity(run_id: &str) -> GuestIdentity {
    let mut entropy = vec![0u8; 32];
    // SAFETY: getrandom fills the buffer it is given.
    let got = unsafe { libc::getrandom(entropy.as_mut_ptr().cast(), entropy.len(), 0) };
    assert_eq!(got, 32, "getrandom");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    GuestIdentity {
        run_id: run_id.into(),
        unix_time_ns: now.as_nanos() as u64,
        entropy,
    }
}
