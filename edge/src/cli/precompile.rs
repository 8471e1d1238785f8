//! `ephemeral precompile --programs DIR --out DIR`: compiles the shell and
//! every sandbox program ahead of time for a portable x86-64 CPU, the way
//! a release's server and its microVM guests load them, so an installed
//! server compiles nothing at start. `./dev dist` runs it with the very
//! binary it ships.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use ephemeral_runtime::{RuntimeConfig, precompile_for_target};

/// Where from, where to.
#[derive(clap::Args)]
pub struct PrecompileArgs {
    /// The programs folder (`python3.wasm`, `node.wasm`, …).
    #[arg(long, value_name = "DIR")]
    programs: PathBuf,
    /// The folder the compiled components and their index go to.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

pub fn run(args: PrecompileArgs) -> anyhow::Result<ExitCode> {
    if !args.programs.is_dir() {
        anyhow::bail!("no programs folder at {}", args.programs.display());
    }
    let started = std::time::Instant::now();
    eprintln!(
        "ephemeral: compiling the shell and the programs of {} for a portable x86-64 CPU (minutes the first time)",
        args.programs.display()
    );
    let entries = precompile_for_target(
        &RuntimeConfig {
            cache_dir: Some(args.out.clone()),
            programs_dir: Some(args.programs.clone()),
            portable_target: Some(ephemeral_worker::entry::TARGET_TRIPLE.into()),
            ..RuntimeConfig::default()
        },
        true,
    )
    .context("cannot precompile")?;
    for entry in &entries {
        let size = std::fs::metadata(entry).map(|m| m.len()).unwrap_or(0);
        println!("{:>8.1} MB  {}", size as f64 / 1e6, entry.display());
    }
    eprintln!(
        "ephemeral: {} components ready in {:.1} s",
        entries.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
