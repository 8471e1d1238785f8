//! The `ephemeral` command.

use std::process::ExitCode;

fn main() -> ExitCode {
    ephemeral_edge::cli::main()
}
