//! A run's microVM: a Linux guest whose init is the worker, speaking the
//! worker protocol over its virtio console, made ready by restoring a
//! template's snapshot.
//!
//! - [`WorkerGuest`]: the guest — our kernel, an initramfs of the static
//!   worker and its precompiled components, the command line that makes
//!   the worker the guest's init.
//! - [`make_template`]: boots it once until the worker's first frame (its
//!   Ready), stops it there and snapshots it, keeping that frame as the
//!   snapshot's replay.
//! - [`prepare`] then [`Prepared::run`]: one run — a VM restored from the
//!   template (made before a jailed VMM locks itself), the replayed
//!   Ready handed to the client, then bytes moved both ways between the
//!   client's stream and the guest until the guest resets (the worker's
//!   end), the client hangs up, or the deadline. This module never decodes
//!   the protocol: it moves frames it does not read.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::devices::virtio::VirtioConsole;
use crate::initramfs::{self, Entry};
use crate::kvm::Kvm;
use crate::linux::{
    DEFAULT_CMDLINE, GuestEnd, LinuxError, LinuxGuest, LinuxSnapshot, LinuxVm, cmdline_with_channel,
};
use crate::watchdog::StopSignal;

/// Guest RAM of a run's microVM unless told otherwise: the worker, the
/// engine, a sandbox's memory cap and its tmpfs.
pub const DEFAULT_MEMORY_MIB: usize = 1024;
/// A frame's length prefix (the worker protocol's, `[u32 LE length]`).
const LENGTH_PREFIX: usize = 4;
/// The longest first frame accepted from a template's guest.
const MAX_FIRST_FRAME: usize = 64 << 10;

#[derive(Debug, thiserror::Error)]
pub enum MicrovmError {
    #[error(transparent)]
    Linux(#[from] LinuxError),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the guest's initramfs: {0}")]
    Initramfs(String),
    #[error("the guest's disk: {0}")]
    Disk(String),
    #[error("the template guest did not get ready: {0}")]
    NotReady(String),
    #[error("the client's stream: {0}")]
    Stream(#[source] std::io::Error),
}

/// What a run's microVM is made of.
#[derive(Debug, Clone)]
pub struct WorkerGuest {
    /// The guest kernel (`vmlinux`), see `linux::default_kernel`.
    pub kernel: PathBuf,
    /// The worker, a static (musl) executable: the guest's init.
    pub worker: PathBuf,
    /// Components precompiled for the guest's worker (portable CPU).
    pub cache_dir: PathBuf,
    /// The programs folder (python3.wasm…).
    pub programs_dir: PathBuf,
    pub memory_mib: usize,
}

impl WorkerGuest {
    /// The bootable guest: `/init` is the worker, `/cache` and `/programs`
    /// what it loads. Programs with read-only files of their own (the
    /// scientific python) and their compiled entries go on a read-only
    /// disk made at `disk` (`/dev/vda`, mounted at [`DISK_MOUNT`] by the
    /// worker), linked from `/programs` and `/cache`; without `disk` they
    /// are left out.
    pub fn guest(&self, disk: Option<&Path>) -> Result<LinuxGuest, MicrovmError> {
        let layout = Layout::of(self, disk.is_some())?;
        let disk = match disk {
            Some(path) if !layout.on_disk.is_empty() => {
                layout.make_disk(path)?;
                Some(path.to_path_buf())
            }
            _ => None,
        };
        let init = read(&self.worker)?;
        let initramfs = initramfs::build(&init, &layout.in_ram)
            .map_err(|e| MicrovmError::Initramfs(e.to_string()))?;
        Ok(LinuxGuest {
            kernel: self.kernel.clone(),
            initramfs,
            cmdline: format!(
                "{} -- --guest-init --portable --bind /cache=cache --bind /programs=programs",
                cmdline_with_channel(DEFAULT_CMDLINE)
            ),
            memory_mib: self.memory_mib,
            disk,
        })
    }
}

/// Where the worker mounts the guest's read-only disk, if it has one.
pub const DISK_MOUNT: &str = "/disk";

fn read(path: &Path) -> Result<Vec<u8>, MicrovmError> {
    std::fs::read(path).map_err(|source| MicrovmError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Where each of a guest's files goes: into its initramfs (RAM, part of
/// the template's memory), or onto its read-only disk (shared by every VM
/// from the host's file), linked from where the worker looks.
struct Layout {
    in_ram: Vec<Entry>,
    /// `(host path, path on the disk)`.
    on_disk: Vec<(PathBuf, String)>,
}

impl Layout {
    fn of(guest: &WorkerGuest, with_disk: bool) -> Result<Layout, MicrovmError> {
        let mut layout = Layout {
            in_ram: Vec::new(),
            on_disk: Vec::new(),
        };
        let rooted = programs_with_roots(&guest.programs_dir)?;
        for (dir, into) in [
            (&guest.cache_dir, "cache"),
            (&guest.programs_dir, "programs"),
        ] {
            layout.in_ram.push(Entry::Dir { path: into.into() });
            for entry in read_dir(dir)? {
                let name = entry.file_name().to_string_lossy().into_owned();
                let owner = match into {
                    "cache" => cache_entry_program(&name),
                    _ => name.split('.').next(),
                };
                let big = owner.is_some_and(|p| rooted.iter().any(|r| r == p));
                if big && with_disk {
                    let on_disk = format!("{into}/{name}");
                    layout.in_ram.push(Entry::Symlink {
                        path: on_disk.clone(),
                        target: format!("{DISK_MOUNT}/{on_disk}"),
                    });
                    layout.on_disk.push((entry.path(), on_disk));
                } else if !big && entry.path().is_file() {
                    layout.in_ram.push(Entry::File {
                        path: format!("{into}/{name}"),
                        mode: 0o644,
                        data: read(&entry.path())?,
                        mtime: initramfs::mtime_seconds(&entry.path()),
                    });
                }
            }
        }
        if !layout.on_disk.is_empty() {
            layout.in_ram.push(Entry::Dir {
                path: DISK_MOUNT.trim_start_matches('/').into(),
            });
        }
        Ok(layout)
    }

    /// Lays the disk's files out (hard links where the host allows) and
    /// makes the image at `path`.
    fn make_disk(&self, path: &Path) -> Result<(), MicrovmError> {
        let staging = path.with_extension("staging");
        let _ = std::fs::remove_dir_all(&staging);
        for (from, to) in &self.on_disk {
            link_tree(from, &staging.join(to))?;
        }
        let made = crate::disk_image::build(&staging, path);
        let _ = std::fs::remove_dir_all(&staging);
        made.map_err(|e| MicrovmError::Disk(e.to_string()))?;
        Ok(())
    }
}

fn read_dir(dir: &Path) -> Result<Vec<std::fs::DirEntry>, MicrovmError> {
    let entries = std::fs::read_dir(dir).map_err(|source| MicrovmError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    Ok(entries)
}

/// The programs of `dir` with read-only files of their own (`NAME.wasm`
/// beside `NAME.root/`, the scientific python).
fn programs_with_roots(dir: &Path) -> Result<Vec<String>, MicrovmError> {
    Ok(read_dir(dir)?
        .into_iter()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "wasm") && p.with_extension("root").is_dir())
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_owned()))
        .collect())
}

/// The program a cache entry (`NAME-HASH.cwasm`, 32 hex digits) is of.
fn cache_entry_program(file: &str) -> Option<&str> {
    let (name, hash) = file.strip_suffix(".cwasm")?.rsplit_once('-')?;
    (hash.len() == 32 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then_some(name)
}

/// `to` as a copy of `from` (a file, or a folder and all it holds), made
/// of hard links where the host allows, copies (times kept) elsewhere.
fn link_tree(from: &Path, to: &Path) -> Result<(), MicrovmError> {
    let error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| MicrovmError::Read { path, source }
    };
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(error(parent))?;
    }
    if from.is_dir() {
        std::fs::create_dir_all(to).map_err(error(to))?;
        for entry in read_dir(from)? {
            link_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        return Ok(());
    }
    if std::fs::hard_link(from, to).is_ok() {
        return Ok(());
    }
    std::fs::copy(from, to).map_err(error(to))?;
    let modified = std::fs::metadata(from)
        .and_then(|m| m.modified())
        .map_err(error(from))?;
    std::fs::File::options()
        .write(true)
        .open(to)
        .and_then(|f| f.set_modified(modified))
        .map_err(error(to))
}

/// What making a template took.
#[derive(Debug, Clone, Copy)]
pub struct TemplateTimes {
    /// From the VM's creation to the worker's first frame.
    pub boot: Duration,
    /// Stopping and snapshotting.
    pub snapshot: Duration,
}

/// Boots `guest` until its worker's first frame, stops it there and
/// snapshots it; the frame is the snapshot's replay. The template VM is
/// destroyed.
pub fn make_template(
    kvm: &Kvm,
    guest: &LinuxGuest,
    timeout: Duration,
) -> Result<(LinuxSnapshot, TemplateTimes), MicrovmError> {
    let started = Instant::now();
    let (mut from_guest, to_host) = std::io::pipe().map_err(MicrovmError::Stream)?;
    let mut vm = LinuxVm::new(kvm, guest, Box::new(to_host))?;
    let stop = StopSignal::new();
    let remote = stop.clone();
    let reader = std::thread::spawn(move || {
        let frame = read_first_frame(&mut from_guest);
        remote.stop();
        frame
    });
    let end = vm.run_until_stopped(started + timeout, &stop)?;
    let boot = started.elapsed();
    if end != GuestEnd::Stopped {
        // The reader waits on a pipe whose writer is the VM's: drop it.
        let console = vm.console();
        let vcpu = vm.vcpu_report(Some(&guest.kernel));
        drop(vm);
        let _ = reader.join();
        return Err(MicrovmError::NotReady(format!(
            "{end:?} after {} ms; {vcpu}; its console's last lines: {}",
            boot.as_millis(),
            tail(&console, 5)
        )));
    }
    let frame = reader
        .join()
        .map_err(|_| MicrovmError::NotReady("the reader panicked".into()))?
        .map_err(|e| MicrovmError::NotReady(format!("its first frame: {e}")))?;
    let t = Instant::now();
    let mut snapshot = vm.snapshot()?;
    snapshot.set_replay(frame);
    let snapshot_took = t.elapsed();
    Ok((
        snapshot,
        TemplateTimes {
            boot,
            snapshot: snapshot_took,
        },
    ))
}

fn read_first_frame(from: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut frame = vec![0u8; LENGTH_PREFIX];
    from.read_exact(&mut frame)?;
    let len = u32::from_le_bytes([frame[0], frame[1], frame[2], frame[3]]) as usize;
    if len > MAX_FIRST_FRAME {
        return Err(std::io::Error::other(format!(
            "a {len}-byte first frame is not a Ready"
        )));
    }
    frame.resize(LENGTH_PREFIX + len, 0);
    from.read_exact(&mut frame[LENGTH_PREFIX..])?;
    Ok(frame)
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join(" | ")
}

/// How a served run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServeEnd {
    /// The guest reset: the worker finished (after `Destroy`).
    Finished,
    /// The client closed its stream; the VM was stopped.
    ClientGone,
    /// The deadline passed with the guest still running.
    Deadline,
    /// The guest crashed.
    Crashed(String),
}

/// What serving a run took.
#[derive(Debug, Clone)]
pub struct Served {
    pub end: ServeEnd,
    /// From the call to the restored vCPU ready to run.
    pub ready: Duration,
    /// The guest console's last lines, for a run that did not finish.
    pub console_tail: String,
}

/// A microVM restored for one run, not yet running: what a jailed VMM
/// builds before it locks itself (see `jail.rs`).
pub struct Prepared {
    vm: LinuxVm,
    stream: UnixStream,
    replay: Vec<u8>,
    ready: Duration,
}

/// Restores a VM from `snapshot` for the run on `stream`. Nothing runs and
/// nothing is sent yet.
pub fn prepare(
    kvm: &Kvm,
    snapshot: &LinuxSnapshot,
    stream: UnixStream,
) -> Result<Prepared, MicrovmError> {
    let to_client = stream.try_clone().map_err(MicrovmError::Stream)?;
    let (vm, report) = LinuxVm::restore(kvm, snapshot, Box::new(to_client))?;
    Ok(Prepared {
        vm,
        stream,
        replay: snapshot.replay().to_vec(),
        ready: report.ready,
    })
}

impl Prepared {
    /// Hands the client the replayed Ready and runs the guest, moving
    /// bytes both ways, until it resets, the client hangs up, or
    /// `deadline`. The VM is destroyed before this returns.
    pub fn run(self, deadline: Instant) -> Result<Served, MicrovmError> {
        let Prepared {
            mut vm,
            stream,
            replay,
            ready,
        } = self;
        (&stream).write_all(&replay).map_err(MicrovmError::Stream)?;
        let stop = StopSignal::new();
        let (gone_tx, gone_rx) = mpsc::channel();
        let forward = {
            let (channel, stop) = (vm.channel(), stop.clone());
            std::thread::Builder::new()
                .name("to-guest".into())
                .spawn(move || {
                    forward_to_guest(stream, &channel);
                    let _ = gone_tx.send(());
                    stop.stop();
                })
                .map_err(MicrovmError::Stream)?
        };
        let end = vm.run_until_stopped(deadline, &stop)?;
        let console = vm.console();
        drop(vm);
        let end = match end {
            GuestEnd::Reset => ServeEnd::Finished,
            GuestEnd::Stopped if gone_rx.try_recv().is_ok() => ServeEnd::ClientGone,
            GuestEnd::Stopped | GuestEnd::Deadline => ServeEnd::Deadline,
            GuestEnd::Crashed(why) => ServeEnd::Crashed(why),
        };
        // The forwarder ends when the client closes; one still waiting on
        // a live client is left to the process's exit.
        if end == ServeEnd::ClientGone {
            let _ = forward.join();
        }
        Ok(Served {
            end,
            ready,
            console_tail: tail(&console, 20),
        })
    }
}

/// Client → guest, in the chunks the client writes, waiting while the
/// guest's receive buffers are full. Returns at the client's EOF or error.
fn forward_to_guest(mut from: UnixStream, channel: &VirtioConsole) {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let mut sent = 0;
        while sent < n {
            let took = channel.push(&buf[sent..n]);
            sent += took;
            if took == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}
