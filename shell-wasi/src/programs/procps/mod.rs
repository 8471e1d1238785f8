//! Programs of Debian's procps that make sense in a sandbox with one
//! process: `free` and `uptime`, from the sandbox's own `/proc` (its
//! memory cap is all the memory it has; it booted when it was made).
//! `ps`, `top`, `kill -l`'s friends that would list real processes are
//! absent rather than invented.

mod free;
mod uptime;

use super::{Process, Table};

/// This family's programs, sorted by name.
pub(crate) const TABLE: Table = &[("free", free::free), ("uptime", uptime::uptime)];

/// procps answers a bad option or any operand with its usage, on stderr.
fn bad_usage(p: &Process<'_>, msg: Option<&str>, help: &str) -> i32 {
    if let Some(msg) = msg {
        p.error(msg);
    }
    p.io.err(help.as_bytes());
    1
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
    fn table_is_sorted() {
        assert!(TABLE.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn meminfo_fields_are_bytes() {
        let f = kib_fields("MemTotal:  524288 kB\nbogus\nSwapTotal: 0 kB\n");
        assert_eq!(
            f,
            vec![("MemTotal".into(), 512 << 20), ("SwapTotal".into(), 0)]
        );
    }
}
