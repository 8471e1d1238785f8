//! Programs of Debian's procps that make sense in a sandbox with one
//! process: `free` and `uptime`, from the sandbox's own `/proc` (its
//! memory cap is all the memory it has; it booted when it was made).
//! `ps`, `top`, `kill -l`'s friends that would list real processes are
//! absent rather than invented.

mod free;
mod uptime;

use super::coreutils::args::{Parsed, Spec};
use super::{Process, Table};

/// This family's programs, sorted by name.
pub(crate) const TABLE: Table = &[("free", free::free), ("uptime", uptime::uptime)];

/// How a procps program answers `--help` and `--version`.
struct Identity {
    name: &'static str,
    help_key: char,
    help: &'static str,
}

/// A procps command line parsed, or `Err(status)` once the program has
/// answered it itself: its usage on stderr for a bad option or any
/// operand, its help, its version.
fn parse_command_line(
    p: &Process<'_>,
    spec: &Spec<'_>,
    argv: &[String],
    id: &Identity,
) -> Result<Parsed, i32> {
    let parsed = match spec.parse(argv.get(1..).unwrap_or_default()) {
        Ok(a) if a.operands.is_empty() => a,
        bad => {
            if let Err(msg) = bad {
                p.error(&msg);
            }
            p.io.err(id.help.as_bytes());
            return Err(1);
        }
    };
    if parsed.has(id.help_key) {
        p.out(id.help.as_bytes());
        return Err(0);
    }
    if parsed.has('V') {
        p.out(format!("{} from procps-ng 4.0.2\n", id.name).as_bytes());
        return Err(0);
    }
    Ok(parsed)
}

/// The `KEY: VALUE kB` lines of a `/proc` file, values in bytes.
fn kib_fields(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|line| {
            let (key, rest) = line.split_once(':')?;
            let kib = rest.split_whitespace().next()?.parse::<u64>().ok()?;
            Some((key.trim().to_string(), kib * 1024))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_fields_are_bytes() {
        let f = kib_fields("MemTotal:  524288 kB\nbogus\nSwapTotal: 0 kB\n");
        assert_eq!(
            f,
            vec![("MemTotal".into(), 512 << 20), ("SwapTotal".into(), 0)]
        );
    }
}
