//! Boots the outer VM under QEMU (TCG, `-cpu max`: an AMD CPU with SVM and
//! nested paging), reads its serial console line by line, and ends it: on
//! the exit marker, on the deadline, or when we are interrupted. QEMU runs
//! in a process group of its own, which is killed whole, and dies with us
//! (`PR_SET_PDEATHSIG`) if we die first.
//!
//! The outer VM's own userspace beats on a second serial port (a file
//! here) every few seconds whatever the command does. When the beat stops
//! for [`STALL_AFTER`], the outer VM as a whole has stopped — QEMU's
//! emulation froze, which no command of ours can do to the outer kernel's
//! userspace short of a kernel bug — and the run ends as
//! [`Ending::Stalled`] with where QEMU's CPU stood (its monitor's `info
//! registers`), instead of waiting out the deadline.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::ensure::Qemu;
use crate::initramfs::marker;
use crate::step;

/// Memory of the outer VM, in MiB: room for the kernel, the initramfs (the
/// scientific python's files are over 500 MB, and a disk image of them is
/// made inside) and the command's own guests. Untouched memory costs the
/// host nothing.
const MEMORY_MIB: u32 = 6144;

/// How many of the last console lines to show when the lab fails.
const TAIL_LINES: usize = 40;
/// How often the outer VM's userspace beats (see the init script), and
/// how long without a beat means the whole outer VM has stopped: many
/// beats, so a host busy with other work does not look like a freeze.
pub const BEAT_SECS: u32 = 5;
pub const STALL_AFTER: Duration = Duration::from_secs(180);

/// Set by SIGINT/SIGTERM; the watch loop checks it.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// What to boot.
#[derive(Debug, Clone)]
pub struct Boot {
    pub qemu: Qemu,
    pub kernel: PathBuf,
    pub initrd: PathBuf,
    pub timeout: Duration,
    /// Show the kernel's console lines (on stderr) as they come.
    pub verbose: bool,
    /// The file the outer VM's heartbeat port writes to, and QEMU's
    /// monitor socket (both made by QEMU).
    pub beat: PathBuf,
    pub monitor: PathBuf,
}

/// How a lab run went, with its timings.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub ending: Ending,
    /// From starting QEMU to `/init`'s first line.
    pub to_init: Option<Duration>,
    /// The guest's uptime when `/init` started, in seconds.
    pub guest_init_uptime: Option<f64>,
    /// Guest seconds spent loading the KVM modules.
    pub modules_secs: Option<f64>,
    /// `kvm_amd`'s `npt` parameter: nested paging on (`Y`) or off.
    pub npt: Option<String>,
    /// Guest seconds the command ran.
    pub command_secs: Option<f64>,
    /// From starting QEMU to the end.
    pub total: Duration,
    /// The last console lines that were not the command's, for reports.
    pub boot_tail: Vec<String>,
}

/// Why the run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The command ran and exited with this code.
    Exited(i32),
    /// The guest said the lab could not get ready.
    LabFailed(String),
    /// QEMU quit (or closed its console) before the command finished.
    QemuQuit(String),
    /// The deadline passed first.
    TimedOut,
    /// The outer VM stopped beating: QEMU froze (with where its CPU was).
    Stalled(String),
    /// We got SIGINT or SIGTERM.
    Interrupted,
}

/// Where the run is, from the console's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Booting,
    Command,
}

/// The QEMU command line for `boot`.
pub fn command(boot: &Boot) -> Command {
    let append = if boot.verbose {
        "console=ttyS0 panic=-1 loglevel=7"
    } else {
        "console=ttyS0 panic=-1 quiet loglevel=3"
    };
    let mut cmd = boot.qemu.command();
    cmd.args(["-accel", "tcg", "-cpu", "max", "-M", "q35", "-smp", "1"])
        .args(["-m", &MEMORY_MIB.to_string()])
        .args(["-nographic", "-no-reboot", "-nic", "none"])
        .arg("-kernel")
        .arg(&boot.kernel)
        .arg("-initrd")
        .arg(&boot.initrd)
        .args(["-append", append])
        // COM1 is the console; COM2 the heartbeat. Named both: QEMU makes
        // no default serial port once one is named.
        .args(["-serial", "stdio"])
        .arg("-serial")
        .arg(format!("file:{}", boot.beat.display()))
        .arg("-monitor")
        .arg(format!(
            "unix:{},server=on,wait=off",
            boot.monitor.display()
        ));
    cmd
}

/// Boots, streams the command's output lines to `on_line`, and ends QEMU.
pub fn run(boot: &Boot, on_line: &mut dyn FnMut(&str)) -> Result<Outcome> {
    // SAFETY: the handler only stores to an atomic, which is
    // async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    let mut cmd = command(boot);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: prctl is async-signal-safe and touches no memory of ours.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    step(format!(
        "qemu: booting (TCG, -cpu max with SVM, {MEMORY_MIB} MiB, no network; timeout {} s)",
        boot.timeout.as_secs()
    ));
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", boot.qemu.binary.display()))?;
    let lines = console_lines(&mut child);
    let stderr = collect_stderr(&mut child);
    let mut watch = Watch::new(start, boot.verbose);
    let mut beat = Beat::new(&boot.beat);
    let deadline = start + boot.timeout;
    let ending = loop {
        if INTERRUPTED.load(Ordering::SeqCst) {
            break Ending::Interrupted;
        }
        let now = Instant::now();
        if now >= deadline {
            break Ending::TimedOut;
        }
        if watch.outcome.to_init.is_some() && beat.silent_for() >= STALL_AFTER {
            break Ending::Stalled(registers(&boot.monitor));
        }
        let wait = (deadline - now).min(Duration::from_millis(100));
        match lines.recv_timeout(wait) {
            Ok(line) => {
                if let Some(ending) = watch.line(&line, on_line) {
                    break ending;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
                let errors = stderr.join().unwrap_or_default();
                let errors = errors.trim();
                break Ending::QemuQuit(if errors.is_empty() {
                    format!("QEMU exited ({status}) before the command finished")
                } else {
                    format!("QEMU exited ({status}): {errors}")
                });
            }
        }
    };
    kill_group(&mut child);
    Ok(Outcome {
        ending,
        total: start.elapsed(),
        ..watch.outcome
    })
}

/// The heartbeat file's growth.
struct Beat<'a> {
    path: &'a std::path::Path,
    len: u64,
    at: Instant,
}

impl<'a> Beat<'a> {
    fn new(path: &'a std::path::Path) -> Beat<'a> {
        Beat {
            path,
            len: 0,
            at: Instant::now(),
        }
    }

    /// How long the file has not grown.
    fn silent_for(&mut self) -> Duration {
        let len = std::fs::metadata(self.path).map_or(0, |m| m.len());
        if len != self.len {
            (self.len, self.at) = (len, Instant::now());
        }
        self.at.elapsed()
    }
}

/// Where QEMU's (only) CPU stands, from its monitor's `info registers`:
/// the instruction pointer, flags and control registers, in one line.
fn registers(monitor: &std::path::Path) -> String {
    let ask = || -> std::io::Result<String> {
        let mut socket = std::os::unix::net::UnixStream::connect(monitor)?;
        socket.set_read_timeout(Some(Duration::from_millis(500)))?;
        socket.write_all(b"info registers\n")?;
        let mut text = Vec::new();
        let mut buf = [0u8; 4096];
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until {
            match socket.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => text.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(e) => return Err(e),
            }
        }
        Ok(String::from_utf8_lossy(&text).into_owned())
    };
    let lines = match ask() {
        Ok(text) => text
            .lines()
            .map(str::trim)
            .filter(|l| {
                ["RIP=", "CS =", "CR0=", "EFER="]
                    .iter()
                    .any(|k| l.starts_with(k))
            })
            .collect::<Vec<_>>()
            .join("; "),
        Err(e) => return format!("(QEMU's monitor did not answer: {e})"),
    };
    match lines.is_empty() {
        true => "(QEMU's monitor did not answer)".into(),
        false => lines,
    }
}

/// Kills QEMU's whole process group and reaps QEMU.
fn kill_group(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: a plain kill(2) on the group QEMU leads (process_group(0)).
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The console, one line at a time (lossy UTF-8, `\r` dropped), from a
/// reader thread; the channel closes when QEMU closes its stdout.
fn console_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().expect("stdout is piped");
    thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let text = String::from_utf8_lossy(&buf);
                    let line = text.trim_end_matches(['\n', '\r']).replace('\r', "");
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    rx
}

fn collect_stderr(child: &mut Child) -> thread::JoinHandle<String> {
    let mut stderr = child.stderr.take().expect("stderr is piped");
    thread::spawn(move || {
        let mut text = String::new();
        let mut bytes = Vec::new();
        if stderr.read_to_end(&mut bytes).is_ok() {
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        text
    })
}

/// Reads console lines: markers move the phase on and give the timings;
/// the command's lines go to the caller; the rest is boot noise.
struct Watch {
    start: Instant,
    verbose: bool,
    phase: Phase,
    tail: VecDeque<String>,
    start_uptime: Option<f64>,
    outcome: Outcome,
}

impl Watch {
    fn new(start: Instant, verbose: bool) -> Self {
        Watch {
            start,
            verbose,
            phase: Phase::Booting,
            tail: VecDeque::new(),
            start_uptime: None,
            outcome: Outcome {
                ending: Ending::TimedOut,
                to_init: None,
                guest_init_uptime: None,
                modules_secs: None,
                npt: None,
                command_secs: None,
                total: Duration::ZERO,
                boot_tail: Vec::new(),
            },
        }
    }

    /// Handles one line; `Some` when the run is over.
    fn line(&mut self, line: &str, on_line: &mut dyn FnMut(&str)) -> Option<Ending> {
        match self.phase {
            Phase::Booting => self.boot_line(line),
            Phase::Command => {
                // The marker may follow output that did not end its line.
                let Some(at) = line.find(marker::EXIT) else {
                    on_line(line);
                    return None;
                };
                if at > 0 {
                    on_line(&line[..at]);
                }
                let mut words = line[at + marker::EXIT.len()..].split_whitespace();
                let code = words.next().and_then(|c| c.parse().ok());
                let uptime = words.next().and_then(|u| u.parse::<f64>().ok());
                self.outcome.command_secs = uptime.zip(self.start_uptime).map(|(end, s)| end - s);
                Some(match code {
                    Some(code) => Ending::Exited(code),
                    None => Ending::LabFailed(format!("unreadable exit marker: {line:?}")),
                })
            }
        }
    }

    fn boot_line(&mut self, line: &str) -> Option<Ending> {
        let after = |m: &str| {
            line.find(m)
                .map(|at| line[at + m.len()..].trim().to_owned())
        };
        if let Some(rest) = after(marker::INIT) {
            let to_init = self.start.elapsed();
            self.outcome.to_init = Some(to_init);
            self.outcome.guest_init_uptime = rest.parse().ok();
            step(format!(
                "guest: /init started {:.1} s after QEMU did (guest uptime {rest} s); loading KVM",
                to_init.as_secs_f64()
            ));
        } else if let Some(rest) = after(marker::MODULES) {
            let mut words = rest.split_whitespace();
            let up = words.next().and_then(|u| u.parse::<f64>().ok());
            self.outcome.modules_secs = up.zip(self.outcome.guest_init_uptime).map(|(u, i)| u - i);
            self.start_uptime = up;
            self.outcome.npt = words
                .find_map(|w| w.strip_prefix("npt="))
                .map(str::to_owned);
            step(format!(
                "guest: kvm_amd loaded in {:.2} s, /dev/kvm ready (nested paging {}); running the command",
                self.outcome.modules_secs.unwrap_or(f64::NAN),
                self.outcome.npt.as_deref().unwrap_or("?")
            ));
        } else if let Some(reason) = after(marker::FAIL) {
            return Some(Ending::LabFailed(reason));
        } else if line.contains(marker::START) {
            self.phase = Phase::Command;
        } else {
            if self.verbose {
                eprintln!("  | {line}");
            }
            if self.tail.len() == TAIL_LINES {
                self.tail.pop_front();
            }
            self.tail.push_back(line.to_owned());
            self.outcome.boot_tail = self.tail.iter().cloned().collect();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(lines: &[&str]) -> (Option<Ending>, Vec<String>, Outcome) {
        let mut w = Watch::new(Instant::now(), false);
        let mut got = Vec::new();
        let mut end = None;
        for line in lines {
            end = w.line(line, &mut |l| got.push(l.to_owned()));
            if end.is_some() {
                break;
            }
        }
        (end, got, w.outcome)
    }

    #[test]
    fn command_output_is_what_lies_between_the_markers() {
        let (end, got, outcome) = feed(&[
            "[    0.000000] Linux version 6.1",
            "EPHEMERAL-LAB-INIT 9.50",
            "EPHEMERAL-LAB-MODULES 10.25 npt=Y",
            "EPHEMERAL-LAB-START",
            "hello",
            "",
            "no newline at the endEPHEMERAL-LAB-EXIT 3 12.75",
            "after",
        ]);
        assert_eq!(end, Some(Ending::Exited(3)));
        assert_eq!(got, ["hello", "", "no newline at the end"]);
        assert_eq!(outcome.guest_init_uptime, Some(9.5));
        assert_eq!(outcome.modules_secs, Some(0.75));
        assert_eq!(outcome.command_secs, Some(2.5));
        assert_eq!(outcome.npt.as_deref(), Some("Y"));
        assert_eq!(outcome.boot_tail, ["[    0.000000] Linux version 6.1"]);
    }

    #[test]
    fn a_failure_marker_ends_the_run_with_its_reason() {
        let (end, got, _) = feed(&[
            "EPHEMERAL-LAB-INIT 9.50",
            "EPHEMERAL-LAB-FAIL no /dev/kvm after loading the KVM modules",
            "EPHEMERAL-LAB-START",
        ]);
        assert_eq!(
            end,
            Some(Ending::LabFailed(
                "no /dev/kvm after loading the KVM modules".into()
            ))
        );
        assert!(got.is_empty());
    }

    #[test]
    fn qemu_gets_tcg_svm_and_no_network() {
        let boot = Boot {
            qemu: Qemu {
                binary: "qemu-system-x86_64".into(),
                ..Qemu::default()
            },
            kernel: "/k".into(),
            initrd: "/i".into(),
            timeout: Duration::from_secs(1),
            verbose: false,
            beat: "/b".into(),
            monitor: "/m".into(),
        };
        let cmd = command(&boot);
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let line = args.join(" ");
        for part in [
            "-accel tcg",
            "-cpu max",
            "-M q35",
            "-smp 1",
            "-nic none",
            "-no-reboot",
            "-serial stdio -serial file:/b",
            "unix:/m,server=on,wait=off",
        ] {
            assert!(line.contains(part), "{part} missing from {line}");
        }
        assert!(!line.contains("netdev"));
    }
}
