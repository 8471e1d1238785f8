//! The worker alone, without the edge: what a microVM runs as its init and
//! what this crate's tests start. `ephemeral worker` is the same program.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = match ephemeral_worker::WorkerArgs::parse(&args) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("ephemeral-worker: {e}");
            return ExitCode::from(2);
        }
    };
    match ephemeral_worker::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ephemeral-worker: {e}");
            ExitCode::FAILURE
        }
    }
}
