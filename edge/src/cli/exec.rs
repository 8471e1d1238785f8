//! `ephemeral exec [--isolation kvm|jail|wasm] [--timeout S] -- 'COMMAND' [-- 'COMMAND' …]`
//!
//! One fresh sandbox, the commands run one after another in it (state
//! carries over, as between an agent's calls), output streamed to the
//! terminal, and the last command's exit status passed through.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use ephemeral_runtime::{Limits, Runtime, RuntimeConfig, Stream};

#[derive(Args)]
pub struct ExecArgs {
    /// Isolation to run with; the strongest this host supports by default.
    #[arg(long, value_enum)]
    isolation: Option<Isolation>,
    /// Wall-time limit of each command, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    timeout: u64,
    /// Memory cap of a command, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 512, value_parser = clap::value_parser!(u64).range(16..=1024))]
    memory_mib: u64,
    /// The commands: `-- 'cmd one' -- 'cmd two'`. Words between two `--`
    /// are joined with spaces into one command.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    words: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Isolation {
    Kvm,
    Jail,
    Wasm,
}

pub fn run(args: ExecArgs) -> anyhow::Result<ExitCode> {
    match args.isolation {
        Some(Isolation::Kvm) => bail!(
            "isolation kvm is not available yet: this build has no microVM layer (use --isolation wasm)"
        ),
        Some(Isolation::Jail) => bail!(
            "isolation jail is not available yet: this build has no jailed worker (use --isolation wasm)"
        ),
        Some(Isolation::Wasm) => {}
        None => {
            eprintln!("ephemeral: isolation wasm (in-process; the strongest this build offers)")
        }
    }
    let commands = split_commands(&args.words);
    if commands.is_empty() {
        bail!("no command given: ephemeral exec -- 'COMMAND'");
    }
    let runtime =
        Runtime::new(RuntimeConfig::default()).context("cannot start the sandbox runtime")?;
    let timeout = Duration::from_secs(args.timeout);
    let limits = Limits {
        command_timeout: timeout,
        // Each command gets its full time, however many there are.
        sandbox_timeout: timeout * u32::try_from(commands.len()).unwrap_or(u32::MAX),
        memory_bytes: usize::try_from(args.memory_mib << 20).unwrap_or(usize::MAX),
        ..Limits::default()
    };
    let mut sandbox = runtime.sandbox().limits(limits).build()?;
    let mut status = 0;
    for command in &commands {
        let outcome = sandbox.exec(command, write_to_terminal)?;
        if let Some(limit) = outcome.limit {
            eprintln!("ephemeral: limit hit: {limit}");
        }
        status = outcome.exit_code;
    }
    sandbox.destroy();
    Ok(ExitCode::from(u8::try_from(status & 0xff).unwrap_or(1)))
}

/// Splits the words after the first `--` at each further `--`.
fn split_commands(words: &[String]) -> Vec<String> {
    words
        .split(|w| w == "--")
        .filter(|group| !group.is_empty())
        .map(|group| group.join(" "))
        .collect()
}

fn write_to_terminal(stream: Stream, data: &[u8]) {
    // A closed terminal (`| head`) is not worth failing the sandbox for.
    let _ = match stream {
        Stream::Stdout => {
            let mut out = std::io::stdout().lock();
            out.write_all(data).and_then(|_| out.flush())
        }
        Stream::Stderr => std::io::stderr().lock().write_all(data),
    };
}

#[cfg(test)]
mod tests {
    use super::split_commands;

    #[test]
    fn commands_split_at_double_dash() {
        let words: Vec<String> = ["cd /tmp", "--", "echo", "hi", "--", "--"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(split_commands(&words), vec!["cd /tmp", "echo hi"]);
    }
}
