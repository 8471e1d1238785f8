//! A minimal init for the microVM's first boots: says it runs, shows what
//! the guest sees (kernel, memory, entropy), then asks for a reboot — the
//! VMM's "done". The worker takes this place as init once it is built for
//! the guest (static, musl).

use std::io::Write;

fn main() {
    let mut out = std::io::stdout();
    let _ = writeln!(
        out,
        "ephemeral-guest: init running as pid {}",
        std::process::id()
    );
    mount("proc", "/proc", "proc");
    for (what, path) in [
        ("kernel", "/proc/version"),
        ("uptime", "/proc/uptime"),
        ("entropy", "/proc/sys/kernel/random/boot_id"),
    ] {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| format!("({e})"));
        let _ = writeln!(out, "ephemeral-guest: {what}: {}", text.trim());
    }
    let mut random = [0u8; 8];
    // SAFETY: getrandom fills the buffer it is given.
    let got = unsafe { libc::getrandom(random.as_mut_ptr().cast(), random.len(), 0) };
    let _ = writeln!(out, "ephemeral-guest: getrandom: {got} bytes {random:02x?}");
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    let echo = cmdline
        .split_whitespace()
        .find_map(|w| w.strip_prefix("ephemeral.echo="))
        .and_then(|n| n.parse::<usize>().ok());
    if cmdline.split_whitespace().any(|w| w == "ephemeral.spin=1") {
        // A guest that never ends: the VMM's deadline must stop it.
        let _ = writeln!(out, "ephemeral-guest: spinning");
        let _ = out.flush();
        loop {
            std::hint::spin_loop();
        }
    }
    if cmdline.split_whitespace().any(|w| w == "ephemeral.disk=1") {
        mount("devtmpfs", "/dev", "devtmpfs");
        let _ = writeln!(out, "ephemeral-guest: disk: {}", read_disk());
    }
    if let Some(bytes) = echo {
        mount("devtmpfs", "/dev", "devtmpfs");
        match echo_channel(bytes) {
            Ok(took) => {
                let _ = writeln!(
                    out,
                    "ephemeral-guest: echoed {bytes} bytes in {} ms",
                    took.as_millis()
                );
            }
            Err(e) => {
                let _ = writeln!(out, "ephemeral-guest: echo failed: {e}");
            }
        }
    }
    let _ = writeln!(out, "ephemeral-guest: done");
    let _ = out.flush();
    // SAFETY: syncing and rebooting is the last thing init does.
    unsafe {
        libc::sync();
        libc::reboot(libc::RB_AUTOBOOT);
    }
}

/// Mounts the read-only disk (`/dev/vda`, ext2) and reads `check.bin` on
/// it: its length and a checksum the host can compare, and what a write
/// on the disk gets.
fn read_disk() -> String {
    let _ = std::fs::create_dir_all("/disk");
    let c = |s: &str| std::ffi::CString::new(s).unwrap_or_default();
    let (dev, dir, fs) = (c("/dev/vda"), c("/disk"), c("ext2"));
    // SAFETY: NUL-terminated strings that outlive the call.
    let mounted = unsafe {
        libc::mount(
            dev.as_ptr(),
            dir.as_ptr(),
            fs.as_ptr(),
            libc::MS_RDONLY,
            std::ptr::null(),
        )
    };
    if mounted != 0 {
        return format!("mount failed: {}", std::io::Error::last_os_error());
    }
    let data = match std::fs::read("/disk/check.bin") {
        Ok(data) => data,
        Err(e) => return format!("check.bin: {e}"),
    };
    let sum = data.iter().fold(0u64, |sum, &b| {
        sum.wrapping_mul(31).wrapping_add(u64::from(b))
    });
    let write = match std::fs::write("/disk/written", b"x") {
        Ok(()) => "a write went through".to_string(),
        Err(e) => format!("a write: {e}"),
    };
    format!("{} bytes, sum {sum:016x}; {write}", data.len())
}

/// Sends back every byte the host sends on the channel, `bytes` in all.
fn echo_channel(bytes: usize) -> std::io::Result<std::time::Duration> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let mut channel = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/hvc0")?;
    // Raw: no echo, no line editing, no newline translation.
    // SAFETY: termios is plain data filled by tcgetattr before use.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(channel.as_raw_fd(), &mut t) == 0 {
            libc::cfmakeraw(&mut t);
            libc::tcsetattr(channel.as_raw_fd(), libc::TCSANOW, &t);
        }
    }
    // Input that arrives before the port is open is dropped by the guest's
    // tty layer: say when it may come (the worker's `Ready` frame will).
    channel.write_all(b"R")?;
    let started = std::time::Instant::now();
    let mut buf = vec![0u8; 64 << 10];
    let mut done = 0;
    while done < bytes {
        let n = channel.read(&mut buf)?;
        if n == 0 {
            break;
        }
        channel.write_all(&buf[..n])?;
        done += n;
    }
    Ok(started.elapsed())
}

fn mount(source: &str, target: &str, fstype: &str) {
    let c = |s: &str| std::ffi::CString::new(s).unwrap_or_default();
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
