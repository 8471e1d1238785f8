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
    let _ = writeln!(out, "ephemeral-guest: done");
    let _ = out.flush();
    // SAFETY: syncing and rebooting is the last thing init does.
    unsafe {
        libc::sync();
        libc::reboot(libc::RB_AUTOBOOT);
    }
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
