//! The `ephemeral` command line: argument parsing and dispatch. Each
//! subcommand is its own module; errors end as one plain line on stderr.

mod bench;
mod demo;
mod doctor;
mod download;
mod exec;
mod keys;
mod mcp;
mod precompile;
mod run;
mod samples;
mod serve;
mod timeline_view;

pub use bench::memory::pss_of_tree;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit status for a usage or set-up error of `ephemeral` itself.
pub const EXIT_USAGE: u8 = 2;

#[derive(Parser)]
#[command(
    name = "ephemeral",
    version,
    about = "Self-hostable WebAssembly-first sandboxes for AI agents"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show a sandbox at work: the seed run's shell steps, live.
    Demo(demo::DemoArgs),
    /// Run shell commands in a fresh sandbox (no model) and print their output.
    Exec(exec::ExecArgs),
    /// What this host supports: KVM and its kind, namespaces, seccomp, cgroups.
    Doctor,
    /// How fast this host serves sandboxes, for each isolation it offers.
    Bench(bench::BenchArgs),
    /// Serve the HTTP API.
    Serve(serve::ServeArgs),
    /// An MCP server over stdio: tools that run in one sandbox per session.
    Mcp(mcp::McpArgs),
    /// Post a run request (JSON file) to $EPHEMERAL_URL and follow its timeline.
    Run(run::RunArgs),
    /// Member keys of organisations.
    #[command(subcommand)]
    Keys(keys::KeysCommand),
    /// Organisations' balances and rules.
    #[command(subcommand)]
    Orgs(keys::OrgsCommand),
    /// Compile the sandbox programs ahead for a portable CPU (release builds).
    Precompile(precompile::PrecompileArgs),
    /// Published samples: finished runs anyone can open at /samples/{id}.
    #[command(subcommand)]
    Samples(samples::SamplesCommand),
    /// (internal) A run's worker process, started by the server in its jail.
    #[command(hide = true)]
    Worker {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// A usage error in one line, as the README promises: clap's message
/// without its usage block and tips, and where to look for more.
fn usage_error_line(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let message: Vec<&str> = rendered
        .lines()
        .take_while(|l| !l.starts_with("Usage:"))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("tip:"))
        .collect();
    let message = message.join(" ");
    let message = message.strip_prefix("error: ").unwrap_or(&message);
    format!("ephemeral: {message} (see `ephemeral --help`)")
}

/// The `ephemeral` command: parses the arguments and runs the subcommand; the
/// exit code says how it went.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            eprintln!("{}", usage_error_line(&e));
            return ExitCode::from(EXIT_USAGE);
        }
        Err(e) => {
            // --help and --version: clap's own text, on stdout.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    init_tracing(matches!(cli.command, Command::Serve(_)));
    let result = match cli.command {
        Command::Demo(args) => demo::run(args),
        Command::Exec(args) => exec::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Doctor => doctor::run(),
        Command::Bench(args) => bench::run(args),
        Command::Run(args) => run::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Keys(command) => keys::keys(command),
        Command::Orgs(command) => keys::orgs(command),
        Command::Samples(command) => samples::run(command),
        Command::Precompile(args) => precompile::run(args),
        Command::Worker { args } => worker(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ephemeral: {e:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// The worker: jails itself and serves one run over the descriptor the
/// server gave it. Its failures reach the server as a frame, not here.
fn worker(args: &[String]) -> anyhow::Result<ExitCode> {
    let args = ephemeral_worker::WorkerArgs::parse(args).map_err(anyhow::Error::msg)?;
    ephemeral_worker::run(args)?;
    Ok(ExitCode::SUCCESS)
}

/// Logs go to stderr, quiet unless `RUST_LOG` asks.
/// `serve` logs what it does by default; the other commands stay quiet
/// unless `RUST_LOG` asks.
fn init_tracing(server: bool) {
    let default = if server { "info" } else { "error" };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
