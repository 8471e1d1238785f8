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
use std::sync::Arc;

use ephemeral_runtime::{Limits, Runtime, RuntimeConfig, Stream};

use crate::config::WorkersConfig;
use crate::sandbox::{
    Choice, ChooseError, ExecEvent, Sandbox, SandboxSource, choose, jailed_from_warm_cache,
};

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

impl From<Isolation> for crate::isolation::Isolation {
    fn from(i: Isolation) -> Self {
        match i {
            Isolation::Kvm => crate::isolation::Isolation::Kvm,
            Isolation::Jail => crate::isolation::Isolation::Jail,
            Isolation::Wasm => crate::isolation::Isolation::Wasm,
        }
    }
}

pub fn run(args: ExecArgs) -> anyhow::Result<ExitCode> {
    let commands = split_commands(&args.words);
    if commands.is_empty() {
        bail!("no command given: ephemeral exec -- 'COMMAND'");
    }
    let config = crate::install::Layout::detect().runtime_config();
    let timeout = Duration::from_secs(args.timeout);
    let limits = Limits {
        command_timeout: timeout,
        // Each command gets its full time, however many there are.
        sandbox_timeout: timeout * u32::try_from(commands.len()).unwrap_or(u32::MAX),
        memory_bytes: usize::try_from(args.memory_mib << 20).unwrap_or(usize::MAX),
        ..Limits::default()
    };
    // The same choice as a server's, with no workers kept waiting and no
    // fork server (one worker is made: a fork server would cost a spawn
    // and a fork).
    let choice = Choice {
        wanted: args.isolation.map(Into::into),
        minimum: crate::isolation::Isolation::Wasm,
        workers: WorkersConfig {
            pool_size: 0,
            fork_server: false,
            ..WorkersConfig::default()
        },
    };
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let status = tokio.block_on(async {
        let sandboxes = match fast_jail(&args, &choice, &config).await {
            Some(sandboxes) => sandboxes,
            None => {
                let runtime = tokio::task::spawn_blocking(move || Runtime::new(config))
                    .await?
                    .context("cannot start the sandbox runtime")?;
                choose(&choice, &runtime).await.map_err(refused)?
            }
        };
        if args.isolation.is_none() && sandboxes.isolation() == crate::isolation::Isolation::Wasm {
            eprintln!("ephemeral: isolation wasm (in-process): no jail here");
        }
        exec_all(sandboxes.as_ref(), limits, &commands).await
    })?;
    Ok(ExitCode::from(u8::try_from(status & 0xff).unwrap_or(1)))
}

/// `jail+wasm` with no runtime in this process, when that is what
/// `choose` would give (jail asked for, or nothing asked for and no
/// hardware KVM here) and the component cache is warm.
async fn fast_jail(
    args: &ExecArgs,
    choice: &Choice,
    config: &RuntimeConfig,
) -> Option<Arc<dyn SandboxSource>> {
    // The KVM self-test and the cache's check are independent: run
    // together, the slower alone is waited for.
    let kvm_is_not_ready = async {
        match args.isolation {
            Some(Isolation::Jail) => true,
            None => tokio::task::spawn_blocking(|| crate::isolation::kvm_ready().is_err())
                .await
                .unwrap_or(false),
            _ => false,
        }
    };
    let wants_jail = matches!(args.isolation, None | Some(Isolation::Jail));
    let jailed = async {
        if wants_jail {
            jailed_from_warm_cache(choice, config).await
        } else {
            None
        }
    };
    match tokio::join!(kvm_is_not_ready, jailed) {
        (true, jailed) => jailed,
        (false, _) => None,
    }
}

/// One line saying why the isolation asked for cannot be had.
fn refused(e: ChooseError) -> anyhow::Error {
    match e {
        ChooseError::Unavailable { isolation, why } => {
            let short = isolation.short_name();
            let instead = match isolation {
                crate::isolation::Isolation::Kvm => " (use --isolation jail)",
                _ => "",
            };
            anyhow!("isolation {short} is not available: {why}{instead}")
        }
        other => anyhow!("{other}"),
    }
}

/// The commands in one fresh sandbox, output to the terminal as it comes;
/// the last command's exit status.
async fn exec_all(
    sandboxes: &dyn SandboxSource,
    limits: Limits,
    commands: &[String],
) -> anyhow::Result<i32> {
    let sandbox = sandboxes.start(limits, Vec::new()).await?;
    let mut status = 0;
    for command in commands {
        match exec_one(sandbox.as_ref(), command, limits.command_timeout).await {
            Ok(code) => status = code,
            Err(e) => {
                sandbox.destroy().await;
                return Err(e);
            }
        }
    }
    sandbox.destroy().await;
    Ok(status)
}

async fn exec_one(sandbox: &dyn Sandbox, command: &str, timeout: Duration) -> anyhow::Result<i32> {
    let mut events = sandbox.exec(command, timeout);
    let mut status = 1;
    while let Some(event) = events.recv().await {
        match event {
            ExecEvent::Output(stream, data) => write_to_terminal(stream, &data),
            ExecEvent::Exit(outcome) => {
                report_limit(outcome.limit);
                status = outcome.exit_code;
            }
            ExecEvent::Failed(why) => bail!("the sandbox failed: {why}"),
        }
    }
    Ok(status)
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
