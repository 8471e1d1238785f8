//! `ephemeral-lab`: runs static Linux programs on a real hardware KVM —
//! AMD SVM, emulated by QEMU's TCG — for hosts whose own `/dev/kvm` is not
//! one (PVM). Debian's kernel boots under `qemu-system-x86_64 -accel tcg
//! -cpu max`, loads `kvm_amd` from an initramfs, and runs the command with
//! a real `/dev/kvm`.
//!
//! ```text
//! ephemeral-lab run [--timeout S] [--verbose] [--retry-stalled N] [--file HOST[:GUEST]]...
//!                   (--script FILE [-- ARGS...] | [--] COMMAND [ARGS...])
//! ephemeral-lab vm-tests [--release] [--example NAME]... [--test NAME]...
//!                   [--lib] [--timeout S] [--verbose] [--retry-stalled N] [-- TEST-ARGS...]
//! ```
//!
//! `run` exits with the command's exit code, or [`LAB_FAILED`] with a
//! one-line reason on stderr when the lab itself could not run it.
//! `vm-tests` builds this crate's tests and examples as static musl
//! executables and runs them all in one boot (see `vm_tests.rs`).
//! `vm-fallback/lab/run` and `vm-fallback/lab/vm-tests` wrap these.

mod elf;
mod ensure;
mod initramfs;
mod qemu;
mod vm_tests;

use std::fmt::Display;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use initramfs::{GuestFile, Plan};
use qemu::{Ending, Outcome};

/// Exit code when the lab itself failed rather than the command: no exit
/// marker, timeout, no `/dev/kvm` in the guest, a missing tool.
pub const LAB_FAILED: u8 = 125;

/// Default limit for one whole lab run, boot included.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

const USAGE: &str = "\
usage: ephemeral-lab run [--timeout S] [--verbose] [--retry-stalled N] [--file HOST[:GUEST]]...
                         (--script FILE [-- ARGS...] | [--] COMMAND [ARGS...])
       ephemeral-lab vm-tests [--release] [--lib] [--example NAME]... [--test NAME]...
                         [--timeout S] [--verbose] [--retry-stalled N] [-- TEST-ARGS...]

run: boots Debian's kernel under QEMU TCG (-cpu max: AMD SVM with nested
paging), loads kvm_amd, and runs the static executable COMMAND (or a shell
script) inside with a real /dev/kvm. Prints the command's output; exits
with its exit code, or 125 if the lab itself failed. The outer VM beats on
a second serial port; if it stops beating for 180 s, QEMU has frozen (not
the command): the run fails with where QEMU's CPU stood, or, with
--retry-stalled N, boots again up to N times (each try's output held back
until it ends).

vm-tests: builds ephemeral-vm's tests and examples for
x86_64-unknown-linux-musl and runs them in one lab boot. Without --lib,
--example or --test: the library's unit tests, every integration test
but the lab's own, and the selftest example. TEST-ARGS default to
--test-threads=1.";

/// A progress line on stderr.
pub fn step(message: impl Display) {
    eprintln!("lab: {message}");
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("run") => run_main(&args[1..]),
        Some("vm-tests") => vm_tests::main(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(0)
        }
        _ => {
            eprintln!("{USAGE}");
            Ok(LAB_FAILED)
        }
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("lab: FAILED: {e:#}");
            ExitCode::from(LAB_FAILED)
        }
    }
}

/// Options shared by `run` and `vm-tests`.
#[derive(Debug, Clone)]
pub struct Common {
    pub timeout: Duration,
    pub verbose: bool,
    /// Boots to try again when the outer VM itself stops (QEMU froze: its
    /// userspace stopped beating, see `qemu.rs`); never for anything the
    /// command did. Each try's output is held back until it ends.
    pub retry_stalled: u32,
}

impl Default for Common {
    fn default() -> Self {
        Common {
            timeout: DEFAULT_TIMEOUT,
            verbose: false,
            retry_stalled: 0,
        }
    }
}

impl Common {
    /// Takes `--timeout S` or `--verbose` at `args[*i]`; `true` if it did.
    pub fn take(&mut self, args: &[String], i: &mut usize) -> Result<bool> {
        match args[*i].as_str() {
            "--timeout" => {
                let value = args.get(*i + 1).context("--timeout needs seconds")?;
                let secs: f64 = value
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .with_context(|| format!("--timeout {value}: not a number of seconds"))?;
                self.timeout = Duration::from_secs_f64(secs);
                *i += 2;
            }
            "--verbose" | "-v" => {
                self.verbose = true;
                *i += 1;
            }
            "--retry-stalled" => {
                let value = args.get(*i + 1).context("--retry-stalled needs a count")?;
                self.retry_stalled = value
                    .parse()
                    .with_context(|| format!("--retry-stalled {value}: not a count"))?;
                *i += 2;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

fn run_main(args: &[String]) -> Result<u8> {
    let mut common = Common::default();
    let mut files = Vec::new();
    let mut script: Option<PathBuf> = None;
    let mut i = 0;
    while i < args.len() {
        if common.take(args, &mut i)? {
            continue;
        }
        match args[i].as_str() {
            "--file" => {
                let spec = args.get(i + 1).context("--file needs HOST[:GUEST]")?;
                files.push(GuestFile::parse(spec)?);
                i += 2;
            }
            "--script" => {
                let path = args.get(i + 1).context("--script needs a file")?;
                script = Some(PathBuf::from(path));
                i += 2;
            }
            "--" => {
                i += 1;
                break;
            }
            other if other.starts_with('-') => bail!("unknown option {other}\n{USAGE}"),
            _ => break,
        }
    }
    let rest = &args[i..];
    let argv = match script {
        Some(script) => {
            let guest = "/lab/.script.sh".to_owned();
            files.push(GuestFile {
                host: script,
                guest: guest.clone(),
            });
            ["/bin/sh".to_owned(), guest]
                .into_iter()
                .chain(rest.iter().cloned())
                .collect()
        }
        None => {
            let (command, command_args) = rest
                .split_first()
                .context(format!("no command given\n{USAGE}"))?;
            let host = PathBuf::from(command);
            let guest = initramfs::in_lab(&host)?;
            files.push(GuestFile {
                host,
                guest: guest.clone(),
            });
            std::iter::once(guest)
                .chain(command_args.iter().cloned())
                .collect()
        }
    };
    let plan = Plan {
        files,
        argv,
        verbose: common.verbose,
    };
    let outcome = lab(&plan, &common, &mut |line| print_line(line))?;
    finish(&outcome)
}

/// Prints a line of the command's output at once.
pub fn print_line(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// One lab run: fetch what is missing, build the initramfs, boot; boot
/// again (at most `common.retry_stalled` times) if the outer VM stalls,
/// holding each try's lines back until it ends.
pub fn lab(plan: &Plan, common: &Common, on_line: &mut dyn FnMut(&str)) -> Result<Outcome> {
    if common.retry_stalled == 0 {
        return boot_once(plan, common, on_line);
    }
    let started = Instant::now();
    let mut tries = 0;
    loop {
        let mut lines = Vec::new();
        let left = common.timeout.saturating_sub(started.elapsed());
        let this = Common {
            timeout: left,
            ..common.clone()
        };
        let outcome = boot_once(plan, &this, &mut |line| lines.push(line.to_owned()))?;
        if let Ending::Stalled(cpu) = &outcome.ending
            && tries < common.retry_stalled
        {
            tries += 1;
            step(format!(
                "the outer VM stopped (no heartbeat from its userspace for {} s; QEMU's CPU: {cpu}); \
                 QEMU froze, not the command: booting again ({tries} of {})",
                qemu::STALL_AFTER.as_secs(),
                common.retry_stalled
            ));
            continue;
        }
        for line in &lines {
            on_line(line);
        }
        return Ok(outcome);
    }
}

fn boot_once(plan: &Plan, common: &Common, on_line: &mut dyn FnMut(&str)) -> Result<Outcome> {
    let started = Instant::now();
    plan.check()?;
    let kit = ensure::kit()?;
    let dir = ensure::cache_dir().join("runs");
    std::fs::create_dir_all(&dir)?;
    sweep_stale(&dir);
    let initrd = dir.join(format!("initramfs-{}.cpio", std::process::id()));
    let beat = dir.join(format!("beat-{}.log", std::process::id()));
    let monitor = dir.join(format!("monitor-{}.sock", std::process::id()));
    let _cleanup = [
        RemoveOnDrop(initrd.clone()),
        RemoveOnDrop(beat.clone()),
        RemoveOnDrop(monitor.clone()),
    ];
    let _ = std::fs::remove_file(&beat);
    let built = Instant::now();
    initramfs::outer(&kit, plan, &initrd)?;
    let size = std::fs::metadata(&initrd)?.len();
    step(format!(
        "initramfs: {:.1} MiB, {} file(s) of the command's, built in {} ms",
        size as f64 / (1024.0 * 1024.0),
        plan.files.len(),
        built.elapsed().as_millis()
    ));
    let boot = qemu::Boot {
        qemu: kit.qemu.clone(),
        kernel: kit.kernel.clone(),
        initrd: initrd.clone(),
        timeout: common.timeout.saturating_sub(started.elapsed()),
        verbose: common.verbose,
        beat,
        monitor,
    };
    let outcome = qemu::run(&boot, on_line)?;
    report_timings(&outcome, &kit.kernel_package, started.elapsed());
    Ok(outcome)
}

/// Removes what runs that were killed left in `dir`: files named
/// `NAME-PID.EXT` whose process is gone.
fn sweep_stale(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name
            .rsplit_once('-')
            .and_then(|(_, rest)| rest.split('.').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid
            && !std::path::Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Removes a file when dropped.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn report_timings(o: &Outcome, kernel: &str, whole: Duration) {
    let secs = |d: Option<Duration>| d.map_or("?".into(), |d| format!("{:.1} s", d.as_secs_f64()));
    let guest = |s: Option<f64>| s.map_or("?".into(), |s| format!("{s:.2} s"));
    step(format!(
        "timings: to /init {} (guest uptime {}), KVM modules {}, command {}, QEMU {:.1} s, lab total {:.1} s [{kernel}]",
        secs(o.to_init),
        guest(o.guest_init_uptime),
        guest(o.modules_secs),
        guest(o.command_secs),
        o.total.as_secs_f64(),
        whole.as_secs_f64(),
    ));
}

/// The exit code for an outcome: the command's own, or [`LAB_FAILED`] with
/// the reason (and the last console lines) on stderr.
pub fn finish(o: &Outcome) -> Result<u8> {
    let reason = match &o.ending {
        Ending::Exited(code) => return Ok(u8::try_from(*code).unwrap_or(LAB_FAILED)),
        Ending::LabFailed(why) => format!("the guest could not get ready: {why}"),
        Ending::QemuQuit(why) => why.clone(),
        Ending::TimedOut if o.to_init.is_none() => {
            "timed out before /init started (is the kernel booting?)".into()
        }
        Ending::TimedOut => "timed out before the command finished".into(),
        Ending::Stalled(cpu) => format!(
            "the outer VM stopped: no heartbeat from its userspace for {} s (QEMU froze, not the command); QEMU's CPU: {cpu}",
            qemu::STALL_AFTER.as_secs()
        ),
        Ending::Interrupted => {
            step("interrupted; QEMU killed");
            return Ok(130);
        }
    };
    if !o.boot_tail.is_empty() {
        step("last console lines:");
        for line in &o.boot_tail {
            eprintln!("  | {}", printable(line));
        }
    }
    bail!("{reason}")
}

/// `line` without terminal escape sequences and control characters
/// (SeaBIOS clears the screen, for one).
pub fn printable(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI is ESC [ parameters, then a final byte in @..~; other
            // escapes are ESC and one byte.
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
        } else if !c.is_control() || c == '\t' {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_drops_escape_sequences_and_controls() {
        assert_eq!(
            printable("\u{1b}c\u{1b}[?7l\u{1b}[2J\u{1b}[0mSeaBIOS (version 1.16)\r"),
            "SeaBIOS (version 1.16)"
        );
        assert_eq!(printable("plain\ttext"), "plain\ttext");
    }
}
