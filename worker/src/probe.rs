//! Jail self-checks: the worker attempts, from inside its jail, what the
//! jail must refuse, and reports whether it was refused. Only the host can
//! ask for one (a `Probe` frame); guest code has no way to send frames.
//! Tests use them to try to break the jail from inside; `doctor` could too.

use std::ffi::CString;
use std::io;

use crate::protocol::Probe;

/// Attempts `probe`: `(refused, what happened)`.
pub fn attempt(probe: &Probe) -> (bool, String) {
    match probe {
        Probe::InetSocket => socket(libc::AF_INET, libc::SOCK_STREAM),
        Probe::Inet6Socket => socket(libc::AF_INET6, libc::SOCK_DGRAM),
        Probe::ConnectUnix => connect_unix(),
        // SAFETY: integer arguments only; a refused call changes nothing.
        Probe::Ptrace { pid } => outcome(unsafe {
            libc::ptrace(libc::PTRACE_ATTACH, *pid as libc::pid_t, 0, 0) as libc::c_long
        }),
        // SAFETY: signal 0 only checks whether the pid can be signalled.
        Probe::Kill { pid } => outcome(unsafe { libc::kill(*pid as libc::pid_t, 0) }.into()),
        Probe::Mount => mount(),
        Probe::OpenHostPath { path } => open(path, libc::O_RDONLY),
        Probe::WriteRoot => open("/escape", libc::O_WRONLY | libc::O_CREAT),
        // SAFETY: a flag constant; success would only affect this process.
        Probe::Unshare => outcome(unsafe { libc::unshare(libc::CLONE_NEWUSER) }.into()),
        Probe::ForbiddenSyscalls => forbidden_syscalls(),
        Probe::Fork => fork(),
        Probe::ThreadFlood => thread_flood(),
    }
}

fn outcome(rc: libc::c_long) -> (bool, String) {
    if rc == -1 {
        (true, io::Error::last_os_error().to_string())
    } else {
        (false, format!("succeeded ({rc})"))
    }
}

fn socket(family: libc::c_int, kind: libc::c_int) -> (bool, String) {
    // SAFETY: integer arguments; a returned descriptor is closed below.
    let fd = unsafe { libc::socket(family, kind, 0) };
    if fd >= 0 {
        // SAFETY: `fd` is ours.
        unsafe { libc::close(fd) };
    }
    outcome(fd.into())
}

fn connect_unix() -> (bool, String) {
    // SAFETY: integer arguments.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0) };
    if fd < 0 {
        return outcome(-1);
    }
    let mut refused = Vec::new();
    let mut all = true;
    for path in [
        "/run/systemd/private",
        "/var/run/docker.sock",
        "\0/tmp/.X11-unix/X0",
    ] {
        // SAFETY: sockaddr_un is plain data; zeroed is a valid value.
        let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (dst, src) in addr.sun_path.iter_mut().zip(path.bytes()) {
            *dst = src as libc::c_char;
        }
        let len = std::mem::size_of::<libc::sa_family_t>() + path.len();
        // SAFETY: `addr` is a valid sockaddr_un of `len` meaningful bytes.
        let rc = unsafe {
            libc::connect(
                fd,
                (&addr as *const libc::sockaddr_un).cast(),
                len as libc::socklen_t,
            )
        };
        let (no, detail) = outcome(rc.into());
        all &= no;
        refused.push(format!("{}: {detail}", path.replace('\0', "@")));
    }
    // SAFETY: `fd` is ours.
    unsafe { libc::close(fd) };
    (all, refused.join("; "))
}

fn mount() -> (bool, String) {
    let c = |s: &str| CString::new(s).unwrap_or_default();
    let (none, target, tmpfs) = (c("none"), c("/"), c("tmpfs"));
    // SAFETY: NUL-terminated strings that outlive the call.
    let rc = unsafe {
        libc::mount(
            none.as_ptr(),
            target.as_ptr(),
            tmpfs.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    outcome(rc.into())
}

fn open(path: &str, flags: libc::c_int) -> (bool, String) {
    let Ok(path) = CString::new(path) else {
        return (true, "path holds a NUL byte".into());
    };
    // SAFETY: a NUL-terminated path; a returned descriptor is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), flags, 0o644) };
    if fd >= 0 {
        // SAFETY: `fd` is ours.
        unsafe { libc::close(fd) };
    }
    outcome(fd.into())
}

fn forbidden_syscalls() -> (bool, String) {
    let calls: [(&str, libc::c_long); 8] = [
        ("bpf", libc::SYS_bpf),
        ("perf_event_open", libc::SYS_perf_event_open),
        ("keyctl", libc::SYS_keyctl),
        ("userfaultfd", libc::SYS_userfaultfd),
        ("init_module", libc::SYS_init_module),
        ("reboot", libc::SYS_reboot),
        ("kexec_load", libc::SYS_kexec_load),
        ("setns", libc::SYS_setns),
    ];
    let mut all = true;
    let mut details = Vec::new();
    for (name, nr) in calls {
        // SAFETY: every argument is zero; each call, if it ran, would fail
        // on its arguments, and the filter answers before that.
        let rc = unsafe { libc::syscall(nr, 0, 0, 0, 0, 0) };
        let errno = io::Error::last_os_error().raw_os_error();
        // ENOSYS is the filter's answer; anything else means the call
        // reached the kernel.
        let refused = rc == -1 && errno == Some(libc::ENOSYS);
        all &= refused;
        details.push(format!(
            "{name}: {}",
            if refused {
                "refused"
            } else {
                "reached the kernel"
            }
        ));
    }
    (all, details.join(", "))
}

fn fork() -> (bool, String) {
    // SAFETY: the child only calls `_exit`.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => outcome(-1),
        // SAFETY: in the child: end at once, touching nothing.
        0 => unsafe { libc::_exit(0) },
        child => {
            let mut status = 0;
            // SAFETY: reaps the child just made.
            unsafe { libc::waitpid(child, &mut status, 0) };
            (false, format!("a child process ({child}) was started"))
        }
    }
}

/// How many threads a flood may start before the probe calls it unbounded.
const FLOOD_CEILING: usize = 4096;

fn thread_flood() -> (bool, String) {
    let (release, wait) = std::sync::mpsc::channel::<()>();
    let wait = std::sync::Arc::new(std::sync::Mutex::new(wait));
    let mut handles = Vec::new();
    let mut error = None;
    while handles.len() < FLOOD_CEILING {
        let wait = wait.clone();
        match std::thread::Builder::new()
            .stack_size(64 << 10)
            .spawn(move || {
                let _ = wait.lock().map(|w| w.recv());
            }) {
            Ok(h) => handles.push(h),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let started = handles.len();
    drop(release);
    for h in handles {
        let _ = h.join();
    }
    match error {
        Some(e) => (true, format!("{started} threads, then: {e}")),
        None => (false, format!("{started} threads started")),
    }
}
