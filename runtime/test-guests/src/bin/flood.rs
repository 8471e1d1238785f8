//! Writes to stdout without end; the sandbox's output cap must stop it.
use std::io::Write;

fn main() {
    let line = [b'y'; 4095];
    let mut out = std::io::stdout().lock();
    loop {
        if out
            .write_all(&line)
            .and_then(|_| out.write_all(b"\n"))
            .is_err()
        {
            eprintln!("flood: stdout closed");
            std::process::exit(141);
        }
    }
}
