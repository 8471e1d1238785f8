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

/// Why a run's microVM could not be made, restored or served.
#[derive(Debug, thiserror::Error)]
pub enum MicrovmError {
    /// Booting or restoring the guest failed.
    #[error(transparent)]
    Linux(#[from] LinuxError),
    /// A host file could not be read or written.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The initramfs could not be built.
    #[error("the guest's initramfs: {0}")]
    Initramfs(String),
    /// The disk image could not be made, or its manifest is malformed.
    #[error("the guest's disk: {0}")]
    Disk(String),
    /// The template's guest stopped, crashed or sent no first frame.
    #[error("the template guest did not get ready: {0}")]
    NotReady(String),
    /// Reading from or writing to the client's stream failed.
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
    /// Guest RAM, in MiB (default [`DEFAULT_MEMORY_MIB`]).
    pub memory_mib: usize,
}

/// The guest's read-only disk of programs with files of their own.
#[derive(Debug, Clone, Copy)]
pub enum Disk<'a> {
    /// No disk: such programs are left out of the guest.
    None,
    /// Make the disk at this path (see [`WorkerGuest::make_disk`]).
    Make(&'a Path),
    /// A disk made before by [`WorkerGuest::make_disk`] (on another
    /// machine, say), with its manifest beside it.
    Made(&'a Path),
}

impl WorkerGuest {
    /// The bootable guest: `/init` is the worker, `/cache` and `/programs`
    /// what it loads. Programs with read-only files of their own (the
    /// scientific python) and their compiled entries are on the read-only
    /// disk (`/dev/vda`, mounted at [`DISK_MOUNT`] by the worker), linked
    /// from `/programs` and `/cache`.
    pub fn guest(&self, disk: Disk<'_>) -> Result<LinuxGuest, MicrovmError> {
        let (image, on_disk) = match disk {
            Disk::None => (None, Vec::new()),
            Disk::Make(path) => match self.make_disk(path)? {
                true => (Some(path), manifest(path)?),
                false => (None, Vec::new()),
            },
            Disk::Made(path) => (Some(path), manifest(path)?),
        };
        let init = read(&self.worker)?;
        let files = self.in_ram(&on_disk)?;
        let initramfs =
            initramfs::build(&init, &files).map_err(|e| MicrovmError::Initramfs(e.to_string()))?;
        Ok(LinuxGuest {
            kernel: self.kernel.clone(),
            initramfs,
            cmdline: format!(
                "{} -- --guest-init --portable --bind /cache=cache --bind /programs=programs",
                cmdline_with_channel(DEFAULT_CMDLINE)
            ),
            memory_mib: self.memory_mib,
            disk: image.map(Path::to_path_buf),
        })
    }

    /// Makes the read-only disk at `path`: every file of the programs with
    /// files of their own and their compiled entries, laid out as
    /// `programs/…` and `cache/…`, with the manifest of what it holds at
    /// `PATH.list`. `false` (and nothing made) when no program needs one.
    pub fn make_disk(&self, path: &Path) -> Result<bool, MicrovmError> {
        let on_disk = self.split()?.1;
        if on_disk.is_empty() {
            return Ok(false);
        }
        let staging = path.with_extension("staging");
        let _ = std::fs::remove_dir_all(&staging);
        for (from, to) in &on_disk {
            link_tree(from, &staging.join(to))?;
        }
        let made = crate::disk_image::build(&staging, path);
        let _ = std::fs::remove_dir_all(&staging);
        made.map_err(|e| MicrovmError::Disk(e.to_string()))?;
        let list: String = on_disk.iter().map(|(_, to)| format!("{to}\n")).collect();
        let listing = manifest_path(path);
        std::fs::write(&listing, list).map_err(|source| MicrovmError::Read {
            path: listing,
            source,
        })?;
        Ok(true)
    }

    /// The initramfs's files: the cache and programs folders' small files,
    /// and a link for each of `on_disk` (paths on the disk).
    fn in_ram(&self, on_disk: &[String]) -> Result<Vec<Entry>, MicrovmError> {
        let (small, _) = self.split()?;
        let mut entries = vec![
            Entry::Dir {
                path: "cache".into(),
            },
            Entry::Dir {
                path: "programs".into(),
            },
        ];
        let on_the_disk = |to: &str| on_disk.iter().any(|d| d == to);
        for (from, to) in small.iter().filter(|(_, to)| !on_the_disk(to)) {
            entries.push(Entry::File {
                path: to.clone(),
                mode: 0o644,
                data: read(from)?,
                mtime: initramfs::mtime_seconds(from),
            });
        }
        // What is too big for RAM and not on a disk is left out.
        for to in on_disk {
            entries.push(Entry::Symlink {
                path: to.clone(),
                target: format!("{DISK_MOUNT}/{to}"),
            });
        }
        if !on_disk.is_empty() {
            entries.push(Entry::Dir {
                path: DISK_MOUNT.trim_start_matches('/').into(),
            });
        }
        Ok(entries)
    }

    /// The guest's files, `(host path, guest path)`: the small ones (for
    /// the initramfs) and those of programs with files of their own (for
    /// the disk), from the cache and programs folders.
    fn split(&self) -> Result<Files, MicrovmError> {
        let rooted = programs_with_roots(&self.programs_dir)?;
        let (mut small, mut big) = (Vec::new(), Vec::new());
        for (dir, into) in [(&self.cache_dir, "cache"), (&self.programs_dir, "programs")] {
            for entry in read_dir(dir)? {
                let name = entry.file_name().to_string_lossy().into_owned();
                let owner = match into {
                    "cache" => cache_entry_program(&name),
                    _ => name.split('.').next(),
                };
                let to = format!("{into}/{name}");
                if owner.is_some_and(|p| rooted.iter().any(|r| r == p)) {
                    big.push((entry.path(), to));
                } else if entry.path().is_file() {
                    small.push((entry.path(), to));
                }
            }
        }
        Ok((small, big))
    }
}

/// Small files and big ones, `(host path, guest path)`.
type Files = (Vec<(PathBuf, String)>, Vec<(PathBuf, String)>);

/// Where the worker mounts the guest's read-only disk, if it has one.
pub const DISK_MOUNT: &str = "/disk";

/// The manifest of the disk at `path`: the paths it holds, one a line.
fn manifest_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".list");
    PathBuf::from(name)
}

fn manifest(path: &Path) -> Result<Vec<String>, MicrovmError> {
    let listing = manifest_path(path);
    let text = std::fs::read_to_string(&listing).map_err(|source| MicrovmError::Read {
        path: listing.clone(),
        source,
    })?;
    let bad = |line: &str| line.contains("..") || line.starts_with('/') || line.is_empty();
    if let Some(line) = text.lines().find(|l| bad(l)) {
        return Err(MicrovmError::Disk(format!(
            "{}: {line:?} is not a path on the disk",
            listing.display()
        )));
    }
    Ok(text.lines().map(str::to_owned).collect())
}

fn read(path: &Path) -> Result<Vec<u8>, MicrovmError> {
    std::fs::read(path).map_err(|source| MicrovmError::Read {
        path: path.to_path_buf(),
        source,
    })
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

/// What making a template took, and what its worker said on the console.
#[derive(Debug, Clone)]
pub struct TemplateTimes {
    /// From the VM's creation to the worker's first frame.
    pub boot: Duration,
    /// Stopping and snapshotting.
    pub snapshot: Duration,
    /// The worker's own console lines (`ephemeral-worker: …`): its mounts,
    /// its disk, its network.
    pub worker_said: Vec<String>,
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
    let worker_said = vm
        .console()
        .lines()
        .filter(|l| l.contains("ephemeral-worker:"))
        .map(str::to_owned)
        .collect();
    Ok((
        snapshot,
        TemplateTimes {
            boot,
            snapshot: snapshot_took,
            worker_said,
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
    /// How the run ended.
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
