//! The worker as a microVM's init (PID 1 of the guest): mounts what it
//! needs, opens its channel (`/dev/hvc0`, in raw mode), warms its engine,
//! and serves the run exactly as a jailed worker does, over the same
//! protocol. When the run is over — or anything fails — it reboots, which
//! the VMM takes as the VM's end; an init never simply exits (the kernel
//! would panic).

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::Path;

use crate::entry::{WorkerArgs, WorkerError, start};

/// The channel when none is named.
const DEFAULT_CHANNEL: &str = "/dev/hvc0";
/// The guest's `/tmp`: size-capped (the sandbox's files live in its own
/// in-memory filesystem, under its own limits).
const TMP_OPTIONS: &str = "size=16m,nr_inodes=1024,mode=1777";
/// The read-only disk of large shared files (the scientific python), when
/// the VMM gives the guest one, and where it goes: the initramfs links
/// into it (`ephemeral_vm::microvm::DISK_MOUNT`).
const DISK_DEVICE: &str = "/dev/vda";
const DISK_MOUNT: &str = "/disk";

pub(crate) fn run(args: &WorkerArgs) -> Result<(), WorkerError> {
    let nosuid = libc::MS_NOSUID | libc::MS_NOEXEC;
    for (source, target, flags, options) in [
        ("proc", "/proc", nosuid | libc::MS_NODEV, None),
        ("devtmpfs", "/dev", nosuid, None),
        ("tmpfs", "/tmp", nosuid | libc::MS_NODEV, Some(TMP_OPTIONS)),
    ] {
        if let Err(e) = mount(source, target, source, flags, options) {
            eprintln!("ephemeral-worker: cannot mount {source} at {target}: {e}");
        }
    }
    mount_disk();
    report_network();
    let path = args
        .channel
        .clone()
        .unwrap_or_else(|| DEFAULT_CHANNEL.into());
    let channel = open_raw(&path)?;
    let runtime = start(args)?;
    crate::guest::serve(runtime, channel.try_clone()?, channel, true)?;
    Ok(())
}

/// The channel with the tty's line discipline out of the way: no echo, no
/// line editing, no newline translation — bytes in, bytes out.
fn open_raw(path: &Path) -> std::io::Result<File> {
    let file = OpenOptions::new().read(true).write(true).open(path)?;
    // SAFETY: termios is plain data, filled by tcgetattr before use.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(file.as_raw_fd(), &mut t) == 0 {
            libc::cfmakeraw(&mut t);
            libc::tcsetattr(file.as_raw_fd(), libc::TCSANOW, &t);
        }
    }
    Ok(file)
}

/// Mounts the read-only disk, if there is one; says so either way on the
/// console (a program on it then fails to load, with the reason).
fn mount_disk() {
    if !Path::new(DISK_DEVICE).exists() {
        return;
    }
    let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
    match mount(DISK_DEVICE, DISK_MOUNT, "ext2", flags, None) {
        Ok(()) => eprintln!("ephemeral-worker: {DISK_DEVICE} mounted read-only at {DISK_MOUNT}"),
        Err(e) => eprintln!("ephemeral-worker: cannot mount {DISK_DEVICE} at {DISK_MOUNT}: {e}"),
    }
}

fn mount(
    source: &str,
    target: &str,
    fstype: &str,
    flags: libc::c_ulong,
    options: Option<&str>,
) -> std::io::Result<()> {
    let c = |s: &str| CString::new(s).unwrap_or_default();
    let (source, target, fstype) = (c(source), c(target), c(fstype));
    let options = options.map(c);
    let data = options
        .as_ref()
        .map_or(std::ptr::null(), |o| o.as_ptr().cast());
    // SAFETY: NUL-terminated strings that outlive the call.
    let done = unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            flags,
            data,
        )
    };
    match done {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// The guest kernel is built without networking (`CONFIG_NET=n`): not a
/// device, not a socket family. Says so on the console as the kernel
/// answers, for the record (and the lab's tests).
fn report_network() {
    // SAFETY: socket with integer arguments; closed below if it worked.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
    let answer = if fd >= 0 {
        // SAFETY: a descriptor we just got.
        unsafe { libc::close(fd) };
        "an IPv4 socket was created".to_string()
    } else {
        std::io::Error::last_os_error().to_string()
    };
    eprintln!("ephemeral-worker: guest network: socket(AF_INET): {answer}");
}

/// Ends the VM: the guest kernel reboots through the i8042, which the VMM
/// reads as "done".
pub(crate) fn reboot() -> ! {
    // SAFETY: the last thing init does.
    unsafe {
        libc::sync();
        libc::reboot(libc::RB_AUTOBOOT);
    }
    loop {
        std::thread::park();
    }
}

/// `RNDADDENTROPY` and `RNDRESEEDCRNG` (include/uapi/linux/random.h).
const RNDADDENTROPY: libc::c_ulong = 0x4008_5203;
const RNDRESEEDCRNG: libc::c_ulong = 0x5207;
/// Entropy the host must send: enough to reseed a CRNG (256 bits) and
/// not more than a frame should carry.
const MIN_ENTROPY: usize = 32;
const MAX_ENTROPY: usize = 512;

/// Takes on what the host says this guest is: its clock (a VM has no
/// trustworthy one of its own after a boot or a restore), fresh entropy
/// credited to the kernel's pool and a reseed of its CRNG (a restored
/// snapshot would otherwise repeat its random numbers), and its run id as
/// hostname.
pub(crate) fn adopt(identity: &crate::protocol::GuestIdentity) -> Result<(), String> {
    let n = identity.entropy.len();
    if !(MIN_ENTROPY..=MAX_ENTROPY).contains(&n) {
        return Err(format!(
            "{n} bytes of entropy; {MIN_ENTROPY} to {MAX_ENTROPY} expected"
        ));
    }
    let now = libc::timespec {
        tv_sec: (identity.unix_time_ns / 1_000_000_000) as _,
        tv_nsec: (identity.unix_time_ns % 1_000_000_000) as _,
    };
    // SAFETY: a valid timespec for the duration of the call.
    if unsafe { libc::clock_settime(libc::CLOCK_REALTIME, &now) } != 0 {
        return Err(format!(
            "set the clock: {}",
            std::io::Error::last_os_error()
        ));
    }
    add_entropy(&identity.entropy).map_err(|e| format!("add entropy: {e}"))?;
    let name = identity.run_id.as_bytes();
    let name = &name[..name.len().min(64)];
    // SAFETY: the pointer and length describe a live byte string.
    unsafe { libc::sethostname(name.as_ptr().cast(), name.len()) };
    Ok(())
}

fn add_entropy(bytes: &[u8]) -> std::io::Result<()> {
    let random = OpenOptions::new().write(true).open("/dev/urandom")?;
    // struct rand_pool_info { int entropy_count; int buf_size; __u32 buf[]; }
    let mut info = Vec::with_capacity(8 + bytes.len());
    info.extend_from_slice(&((bytes.len() * 8) as i32).to_ne_bytes());
    info.extend_from_slice(&(bytes.len() as i32).to_ne_bytes());
    info.extend_from_slice(bytes);
    // SAFETY: `info` is a rand_pool_info of the size it declares.
    if unsafe { libc::ioctl(random.as_raw_fd(), RNDADDENTROPY as _, info.as_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: an ioctl without argument on our descriptor.
    if unsafe { libc::ioctl(random.as_raw_fd(), RNDRESEEDCRNG as _) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
