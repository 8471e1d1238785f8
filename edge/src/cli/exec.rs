//! `ephemeral exec [--isolation kvm|jail|wasm] [--timeout S] -- 'COMMAND' [-- 'COMMAND' …]`
//!
//! One fresh sandbox, the commands run one after another in it (state
//! carries over, as between an agent's calls), output streamed to the
//! terminal, and the last command's exit status passed through.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use clap::{Args, ValueEnum};
use ephemeral_runtime::{Limits, Runtime, RuntimeConfig, Stream};
use ephemeral_worker::{ExecEvent, IdleWorker};

use crate::sandbox_host::jail_config;

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
pub enum Isolation {
    Kvm,
    Jail,
    Wasm,
}

pub fn run(args: ExecArgs) -> anyhow::Result<ExitCode> {
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
    let isolation = match args.isolation {
        Some(Isolation::Kvm) => Isolation::Kvm,
        Some(Isolation::Jail) => Isolation::Jail,
        Some(Isolation::Wasm) => Isolation::Wasm,
        None => match jail_config(&runtime, None) {
            Ok(_) => Isolation::Jail,
            Err(why) => {
                eprintln!("ephemeral: isolation wasm (in-process): no jail here: {why}");
                Isolation::Wasm
            }
        },
    };
    let status = match isolation {
        Isolation::Kvm => {
            let config = crate::microvm_host::kvm_config(&runtime).map_err(|why| {
                anyhow!("isolation kvm is not available: {why} (use --isolation jail)")
            })?;
            exec_in_worker(config, limits, &commands)?
        }
        Isolation::Jail => {
            let config =
                jail_config(&runtime, None).map_err(|why| anyhow!("isolation jail: {why}"))?;
            runtime
                .warm_cache()
                .context("cannot compile the programs for the worker")?;
            exec_in_worker(config, limits, &commands)?
        }
        Isolation::Wasm => exec_in_process(&runtime, limits, &commands)?,
    };
    Ok(ExitCode::from(u8::try_from(status & 0xff).unwrap_or(1)))
}

fn exec_in_process(
    runtime: &std::sync::Arc<Runtime>,
    limits: Limits,
    commands: &[String],
) -> anyhow::Result<i32> {
    let mut sandbox = runtime.sandbox().limits(limits).build()?;
    let mut status = 0;
    for command in commands {
        let outcome = sandbox.exec(command, write_to_terminal)?;
        report_limit(outcome.limit);
        status = outcome.exit_code;
    }
    sandbox.destroy();
    Ok(status)
}

/// The commands in a jailed worker (or a microVM's VMM) of their own, as
/// a server's run.
fn exec_in_worker(
    config: ephemeral_worker::WorkerConfig,
    limits: Limits,
    commands: &[String],
) -> anyhow::Result<i32> {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    tokio.block_on(async {
        let worker = IdleWorker::spawn(&config).await?;
        let worker = worker.start(limits, Vec::new()).await?;
        let mut status = 0;
        for command in commands {
            let mut events = worker.exec(command, limits.command_timeout);
            while let Some(event) = events.recv().await {
                match event {
                    ExecEvent::Output(stream, data) => write_to_terminal(stream, &data),
                    ExecEvent::Exit(outcome) => {
                        report_limit(outcome.limit);
                        status = outcome.exit_code;
                    }
                    ExecEvent::Failed(why) => {
                        worker.destroy().await;
                        bail!("the sandbox failed: {why}");
                    }
                }
            }
        }
        worker.destroy().await;
        Ok(status)
    })
}

fn report_limit(limit: Option<ephemeral_runtime::LimitHit>) {
    if let Some(limit) = limit {
        eprintln!("ephemeral: limit hit: {}", limit.name());
    }
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
