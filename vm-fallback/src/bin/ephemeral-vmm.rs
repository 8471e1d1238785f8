//! `ephemeral-vmm`: the microVM's VMM process.
//!
//! ```text
//! ephemeral-vmm template --kernel VMLINUX --worker WORKER --cache DIR --programs DIR
//!                        --out SNAPSHOT_DIR [--disk-image IMAGE] [--memory-mib N] [--timeout S]
//! ephemeral-vmm serve --snapshot SNAPSHOT_DIR [--jail] [--fd N] [--timeout S]
//! ephemeral-vmm disk --cache DIR --programs DIR --out IMAGE
//! ephemeral-vmm probe
//! ```
//!
//! `template` boots the worker's guest once, snapshots it at the worker's
//! Ready and writes the snapshot; programs with files of their own go on
//! a read-only disk made in the snapshot's folder (by e2fsprogs' mke2fs),
//! or on the disk `--disk-image` names, made before by
//! `WorkerGuest::make_disk` (with its manifest, `IMAGE.list`) — which
//! `disk` makes ahead, on a machine with e2fsprogs, for a release to ship.
//! `serve` is one run: a microVM restored
//! from that snapshot, the worker protocol carried unchanged between the
//! stream on descriptor N (3) and the guest — the host drives it as it
//! drives a jailed worker, and starts it the same way: `serve` takes (and
//! ignores what it has no use for of) a worker's options, `--tmpfs-bytes`,
//! `--max-threads`, `--max-open-files`, `--bind`. With `--jail` (a process
//! the server spawned into its own namespaces) it jails itself and locks
//! itself under the VMM's seccomp list (`src/jail.rs`) before the guest
//! runs. `probe` installs that list in this process and shows a guest
//! still runs and what is refused.
//!
//! Exit codes: 0 the run ended (the worker finished, or the host hung
//! up), 1 an error (one line on stderr), 2 bad usage, 3 the deadline, 4
//! the guest crashed.

use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use ephemeral_vm::Kvm;
use ephemeral_vm::linux::{LinuxSnapshot, default_kernel};
use ephemeral_vm::microvm::{self, DEFAULT_MEMORY_MIB, Disk, ServeEnd, WorkerGuest};

const USAGE: &str = "\
usage: ephemeral-vmm template --kernel VMLINUX --worker WORKER --cache DIR --programs DIR
                              --out SNAPSHOT_DIR [--disk-image IMAGE] [--memory-mib N] [--timeout S]
       ephemeral-vmm serve --snapshot SNAPSHOT_DIR [--jail] [--fd N] [--timeout S]
       ephemeral-vmm disk --cache DIR --programs DIR --out IMAGE
       ephemeral-vmm probe";

/// The jailed VMM's root: it holds nothing.
const JAIL_TMPFS_BYTES: u64 = 1 << 20;
/// A template's boot, unless told otherwise.
const TEMPLATE_TIMEOUT: Duration = Duration::from_secs(300);
/// A served run's whole life, unless told otherwise: the host's own
/// deadlines come first.
const SERVE_TIMEOUT: Duration = Duration::from_secs(3600);

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.split_first() {
        Some((command, rest)) if command == "template" => template(rest),
        Some((command, rest)) if command == "serve" => serve(rest),
        Some((command, rest)) if command == "disk" => disk(rest),
        Some((command, _)) if command == "probe" => probe(),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("ephemeral-vmm: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// `--flag value` pairs; the flags in `switches` stand alone (value "").
fn options<'a>(args: &'a [String], switches: &[&str]) -> Result<Vec<(&'a str, &'a str)>> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if !flag.starts_with("--") {
            bail!("unexpected {flag:?}\n{USAGE}");
        }
        if switches.contains(&flag.as_str()) {
            out.push((flag.as_str(), ""));
            continue;
        }
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        out.push((flag.as_str(), value.as_str()));
    }
    Ok(out)
}

fn seconds(value: &str) -> Result<Duration> {
    Ok(Duration::from_secs(value.parse().with_context(|| {
        format!("{value:?} is not a number of seconds")
    })?))
}

fn template(args: &[String]) -> Result<u8> {
    let mut guest = WorkerGuest {
        kernel: default_kernel(),
        worker: PathBuf::new(),
        cache_dir: PathBuf::new(),
        programs_dir: PathBuf::new(),
        memory_mib: DEFAULT_MEMORY_MIB,
    };
    let mut out = None;
    let mut disk_image = None;
    let mut timeout = TEMPLATE_TIMEOUT;
    for (flag, value) in options(args, &[])? {
        match flag {
            "--kernel" => guest.kernel = value.into(),
            "--worker" => guest.worker = value.into(),
            "--cache" => guest.cache_dir = value.into(),
            "--programs" => guest.programs_dir = value.into(),
            "--out" => out = Some(PathBuf::from(value)),
            "--disk-image" => disk_image = Some(PathBuf::from(value)),
            "--memory-mib" => guest.memory_mib = value.parse().context("--memory-mib")?,
            "--timeout" => timeout = seconds(value)?,
            other => bail!("unknown option {other}\n{USAGE}"),
        }
    }
    let out = out.context("--out SNAPSHOT_DIR is required")?;
    for (what, path) in [("--worker", &guest.worker), ("--cache", &guest.cache_dir)] {
        if path.as_os_str().is_empty() {
            bail!("{what} is required\n{USAGE}");
        }
    }
    let kvm = Kvm::open().context("/dev/kvm")?;
    // Programs with files of their own go on the template's read-only
    // disk, kept in its folder beside the snapshot that names it.
    std::fs::create_dir_all(&out).with_context(|| out.display().to_string())?;
    let out = out
        .canonicalize()
        .with_context(|| out.display().to_string())?;
    let guest = match &disk_image {
        Some(image) => guest.guest(Disk::Made(image))?,
        None => guest.guest(Disk::Make(&out.join("disk")))?,
    };
    eprintln!("ephemeral-vmm: booting the template ({})", kvm.kind());
    let (snapshot, times) = microvm::make_template(&kvm, &guest, timeout)?;
    for line in &times.worker_said {
        eprintln!("ephemeral-vmm: guest: {line}");
    }
    let t = Instant::now();
    snapshot.save(&out)?;
    let (size, stored) = snapshot.memory();
    println!(
        "template ready: booted to the worker's Ready in {} ms, snapshot {} ms, written in {} ms ({} of {} MiB stored) to {}",
        times.boot.as_millis(),
        times.snapshot.as_millis(),
        t.elapsed().as_millis(),
        stored >> 20,
        size >> 20,
        out.display()
    );
    Ok(0)
}

fn serve(args: &[String]) -> Result<u8> {
    let started = Instant::now();
    let mut dir = None;
    let mut fd: RawFd = 3;
    let mut timeout = SERVE_TIMEOUT;
    let mut jail = false;
    let mut tmpfs_bytes = JAIL_TMPFS_BYTES;
    for (flag, value) in options(args, &["--jail"])? {
        match flag {
            "--snapshot" => dir = Some(PathBuf::from(value)),
            "--fd" => fd = value.parse().context("--fd")?,
            "--timeout" => timeout = seconds(value)?,
            "--jail" => jail = true,
            "--tmpfs-bytes" => tmpfs_bytes = value.parse().context("--tmpfs-bytes")?,
            // A worker's options the VMM has no use for: its limits are
            // its own (`jail.rs`), and it binds nothing.
            "--max-threads" | "--max-open-files" | "--bind" => {}
            other => bail!("unknown option {other}\n{USAGE}"),
        }
    }
    let dir = dir.context("--snapshot SNAPSHOT_DIR is required")?;
    // The only files this process opens: before the jail.
    let snapshot = LinuxSnapshot::load(&dir)?;
    let kvm = Kvm::open().context("/dev/kvm")?;
    if jail {
        ephemeral_vm::jail::enter(tmpfs_bytes).context("the VMM's jail")?;
    }
    // SAFETY: the host handed us this descriptor, open, for us alone
    // (`--fd`); nothing else in this process uses that number.
    let stream = unsafe { UnixStream::from_raw_fd(fd) };
    let prepared = microvm::prepare(&kvm, &snapshot, stream)?;
    drop(snapshot);
    if jail {
        ephemeral_vm::jail::lock().context("locking the VMM")?;
    }
    let served = prepared.run(started + timeout)?;
    eprintln!(
        "ephemeral-vmm: microVM ready from the snapshot in {:.2} ms; {:?} after {} ms",
        served.ready.as_secs_f64() * 1e3,
        served.end,
        started.elapsed().as_millis()
    );
    Ok(match served.end {
        ServeEnd::Finished | ServeEnd::ClientGone => 0,
        ServeEnd::Deadline => 3,
        ServeEnd::Crashed(why) => {
            eprintln!(
                "ephemeral-vmm: the guest crashed: {why}; console: {}",
                served.console_tail
            );
            4
        }
    })
}

/// Makes the template's read-only disk of the programs with files of
/// their own ahead of time (`template --disk-image` takes it).
fn disk(args: &[String]) -> Result<u8> {
    let mut guest = WorkerGuest {
        kernel: default_kernel(),
        worker: PathBuf::new(),
        cache_dir: PathBuf::new(),
        programs_dir: PathBuf::new(),
        memory_mib: DEFAULT_MEMORY_MIB,
    };
    let mut out = None;
    for (flag, value) in options(args, &[])? {
        match flag {
            "--cache" => guest.cache_dir = value.into(),
            "--programs" => guest.programs_dir = value.into(),
            "--out" => out = Some(PathBuf::from(value)),
            other => bail!("unknown option {other}\n{USAGE}"),
        }
    }
    let out = out.context("--out IMAGE is required")?;
    for (what, path) in [
        ("--cache", &guest.cache_dir),
        ("--programs", &guest.programs_dir),
    ] {
        if path.as_os_str().is_empty() {
            bail!("{what} is required\n{USAGE}");
        }
    }
    if guest.make_disk(&out)? {
        println!("disk made: {}", out.display());
    } else {
        println!("no program needs a disk: none made");
    }
    Ok(0)
}

/// Installs the VMM's seccomp list in this process, runs the self-test's
/// guest under it, then tries what a compromised VMM would: each must be
/// refused. Prints one line each; exits 0 when all went as they should.
fn probe() -> Result<u8> {
    let kvm = Kvm::open().context("/dev/kvm")?;
    // SAFETY: prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        bail!("no_new_privs: {}", std::io::Error::last_os_error());
    }
    ephemeral_vm::jail::allow_list()?
        .install()
        .context("installing the VMM's seccomp list")?;
    let mut ok = true;
    let guest = run_probe_guest(&kvm);
    println!("guest under the VMM's seccomp list: {guest:?}");
    ok &= guest.is_ok();
    let attempts: [Attempt; 5] = [
        ("open", try_open),
        ("socket", try_socket),
        ("execve", try_execve),
        ("ptrace", try_ptrace),
        ("ioctl TCGETS", try_tty_ioctl),
    ];
    for (name, attempt) in attempts {
        let rc = attempt();
        let errno = std::io::Error::last_os_error().raw_os_error();
        let refused = rc == -1 && errno == Some(libc::ENOSYS);
        println!(
            "{name}: {}",
            if refused {
                "refused (ENOSYS)"
            } else {
                "ALLOWED"
            }
        );
        ok &= refused;
    }
    Ok(u8::from(!ok))
}

/// The self-test's guest, on a VM made under the seccomp list.
fn run_probe_guest(kvm: &Kvm) -> Result<u64> {
    use ephemeral_vm::{Exit, Flow, RunEnd, Vm, VmConfig, selftest};
    let vm = Vm::new(kvm, VmConfig::default())?;
    let entry = vm.load_program(&selftest::GUEST)?;
    let mut vcpu = vm.create_vcpu(0)?;
    vcpu.enter_long_mode(entry)?;
    let report = vcpu.run_until(
        Instant::now() + Duration::from_secs(5),
        &mut ephemeral_vm::OpenBus,
        |exit| match exit {
            Exit::IoOut { port, .. } if *port == selftest::DONE_PORT => Flow::Stop,
            _ => Flow::Continue,
        },
    )?;
    match report.end {
        RunEnd::Exit(Exit::IoOut { port, .. }) if port == selftest::DONE_PORT => Ok(report.exits),
        other => bail!("the guest did not finish: {other:?}"),
    }
}

/// A named system call to try, returning its raw result.
type Attempt = (&'static str, fn() -> i64);

// What a compromised VMM would try first; each a raw system call with
// valid or null pointers, expected to be refused before it does anything.
const PROBE_PATH: &std::ffi::CStr = c"/etc/hostname";

fn try_open() -> i64 {
    // SAFETY: see above.
    unsafe { libc::open(PROBE_PATH.as_ptr(), libc::O_RDONLY) }.into()
}

fn try_socket() -> i64 {
    // SAFETY: see above.
    unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) }.into()
}

fn try_execve() -> i64 {
    // SAFETY: see above.
    unsafe { libc::execve(PROBE_PATH.as_ptr(), std::ptr::null(), std::ptr::null()) }.into()
}

fn try_ptrace() -> i64 {
    // SAFETY: see above.
    unsafe { libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) }
}

fn try_tty_ioctl() -> i64 {
    // SAFETY: see above.
    unsafe { libc::ioctl(0, libc::TCGETS, std::ptr::null_mut::<u8>()) }.into()
}
