//! `ephemeral demo`: the seed run's shell steps in a fresh sandbox, shown
//! as a live timeline.
//!
//! Until the edge server and the agent exist, the demo plays the commands
//! the seed run's agent sent (SEED.md) directly, with no model, so a new
//! user sees in one command what the sandbox is: `worker` in a scratch
//! folder, no network, files that vanish with the sandbox.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use std::sync::{Arc, Mutex, PoisonError};

use ephemeral_runtime::{OutputSink, Runtime, RuntimeConfig, Stream};

/// The seed run's shell commands, in order.
pub const SEED_COMMANDS: &[&str] = &[
    "pwd; whoami",
    "command -v curl && curl -sS -m 8 https://example.com",
    "printf '%s\\n' '#!/usr/bin/env python3' 'primes = []' 'n = 2' 'while len(primes) < 15:' \
     '    if all(n % p for p in primes):' '        primes.append(n)' '    n += 1' \
     'print(*primes)' > primes.py && chmod +x primes.py && ./primes.py",
    "printf 'sandbox proof\\n' > /tmp/proof.txt && ls -l /tmp/proof.txt",
];

pub fn run() -> anyhow::Result<ExitCode> {
    let t0 = Instant::now();
    // A closed stdout (`ephemeral demo | head`) ends the output, not the
    // program with a panic.
    let lane = |name: &str, text: &str| {
        let line = format!("{:>6} ms  {name:<9} {text}", t0.elapsed().as_millis());
        let _ = writeln!(std::io::stdout().lock(), "{line}");
    };
    let runtime = Runtime::new(RuntimeConfig::default())?;
    // python3 is compiled for this machine the first time (seconds), then
    // loaded from the cache: say so rather than stall silently.
    if runtime.program_names().iter().any(|p| p == "python3") {
        lane(
            "runtime",
            "loading python3 (compiled once for this machine, then cached)",
        );
        if let Err(e) = runtime.program("python3") {
            lane("runtime", &format!("python3 unavailable: {e}"));
        }
    } else {
        lane(
            "runtime",
            "python3 is not built here: run `./dev demo` to build it",
        );
    }
    let mut sandbox = runtime.sandbox().build()?;
    lane(
        "sandbox",
        &format!("ready · isolation wasm · {}", sandbox.scratch_dir()),
    );
    lane("worker", "started · shell on · web off");
    for command in SEED_COMMANDS {
        lane("shell", &format!("$ {command}"));
        let printer = LinePrinter::default();
        let outcome = sandbox.exec(command, printer.clone())?;
        printer.finish();
        let limit = outcome
            .limit
            .map(|l| format!(" · limit {l}"))
            .unwrap_or_default();
        lane(
            "shell",
            &format!(
                "exit {} · {} ms{limit}",
                outcome.exit_code,
                outcome.duration.as_millis()
            ),
        );
    }
    let usage = sandbox.destroy();
    lane(
        "sandbox",
        &format!(
            "destroyed · {} commands · lived {} ms",
            usage.commands,
            usage.lifetime.as_millis()
        ),
    );
    Ok(ExitCode::SUCCESS)
}

/// Prints output line by line, indented under its lane, whatever size
/// the chunks arrive in: a line split across two writes is one line.
#[derive(Clone, Default)]
struct LinePrinter(Arc<Mutex<[Vec<u8>; 2]>>);

impl LinePrinter {
    /// Prints what is left of unfinished lines.
    fn finish(&self) {
        let mut partial = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        for (i, stream) in [Stream::Stdout, Stream::Stderr].into_iter().enumerate() {
            let rest = std::mem::take(&mut partial[i]);
            if !rest.is_empty() {
                print_line(stream, &rest);
            }
        }
    }
}

impl OutputSink for LinePrinter {
    fn write(&mut self, stream: Stream, data: &[u8]) {
        let mut partial = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let buf = &mut partial[usize::from(stream == Stream::Stderr)];
        buf.extend_from_slice(data);
        while let Some(end) = buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = buf.drain(..=end).collect();
            print_line(stream, &line[..end]);
        }
    }
}

fn print_line(stream: Stream, line: &[u8]) {
    let marker = if stream == Stream::Stderr { "!" } else { "|" };
    let _ = writeln!(
        std::io::stdout().lock(),
        "{marker:>21} {}",
        String::from_utf8_lossy(line)
    );
}
