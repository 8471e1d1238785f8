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

pub(crate) fn run(args: &WorkerArgs) -> Result<(), WorkerError> {
    mount("proc", "/proc", "proc");
    mount("devtmpfs", "/dev", "devtmpfs");
    mount("tmpfs", "/tmp", "tmpfs");
    let path = args
        .channel
        .clone()
        .unwrap_or_else(|| DEFAULT_CHANNEL.into());
    let channel = open_raw(&path)?;
    let runtime = start(args)?;
    crate::guest::serve(runtime, channel.try_clone()?, channel)?;
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

fn mount(source: &str, target: &str, fstype: &str) {
    let c = |s: &str| CString::new(s).unwrap_or_default();
    let (source, target, fstype) = (c(source), c(target), c(fstype));
    // SAFETY: NUL-terminated strings that outlive the call.
    unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
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
