//! `free` as procps-ng 4.0.2 prints it, from `/proc/meminfo`.

use std::time::Duration;

use super::Process;
use crate::programs::coreutils::args::Parsed;
use crate::programs::coreutils::args::{HasArg, Spec};

/// The memory figures `free` shows, in bytes.
#[derive(Debug, Default, Clone, Copy)]
struct Memory {
    total: u64,
    free: u64,
    available: u64,
    shared: u64,
    buffers: u64,
    cache: u64,
    swap_total: u64,
    swap_free: u64,
}

impl Memory {
    fn from_meminfo(text: &str) -> Memory {
        let mut m = Memory::default();
        for (key, bytes) in super::kib_fields(text) {
            match key.as_str() {
                "MemTotal" => m.total = bytes,
                "MemFree" => m.free = bytes,
                "MemAvailable" => m.available = bytes,
                "Shmem" => m.shared = bytes,
                "Buffers" => m.buffers = bytes,
                "Cached" | "SReclaimable" => m.cache += bytes,
                "SwapTotal" => m.swap_total = bytes,
                "SwapFree" => m.swap_free = bytes,
                _ => {}
            }
        }
        m
    }

    /// procps 4: what is not available is used.
    fn used(&self) -> u64 {
        self.total.saturating_sub(self.available)
    }
}

/// How a figure is written.
#[derive(Debug, Clone, Copy)]
enum Scale {
    /// Divided by this many bytes (`-b` 1, `-k` 1024, `--mega` 10^6, …).
    Fixed(u64),
    /// `-h`: the shortest unit, powers of 1024 (or 1000 with `--si`).
    Human { si: bool },
}

pub(crate) fn free(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "bkmghltwvVc:s:",
        long: &[
            ("bytes", 'b', HasArg::No),
            ("kibi", 'k', HasArg::No),
            ("mebi", 'm', HasArg::No),
            ("gibi", 'g', HasArg::No),
            ("tebi", 'T', HasArg::No),
            ("pebi", 'P', HasArg::No),
            ("kilo", '1', HasArg::No),
            ("mega", '2', HasArg::No),
            ("giga", '3', HasArg::No),
            ("tera", '4', HasArg::No),
            ("peta", '5', HasArg::No),
            ("human", 'h', HasArg::No),
            ("si", 'S', HasArg::No),
            ("lohi", 'l', HasArg::No),
            ("total", 't', HasArg::No),
            ("wide", 'w', HasArg::No),
            ("count", 'c', HasArg::Yes),
            ("seconds", 's', HasArg::Yes),
            ("committed", 'v', HasArg::No),
            ("help", 'H', HasArg::No),
            ("version", 'V', HasArg::No),
        ],
    };
    let args = match super::parse_command_line(p, &spec, argv, &IDENTITY) {
        Ok(args) => args,
        Err(status) => return status,
    };
    let Some((times, every)) = repeats(p, &args) else {
        return 1;
    };
    let si = args.has('S');
    let base = if si { 1000 } else { 1024 };
    let scale = args
        .opts
        .iter()
        .rev()
        .find_map(|o| match o.key {
            'b' => Some(Scale::Fixed(1)),
            'k' => Some(Scale::Fixed(base)),
            'm' => Some(Scale::Fixed(base.pow(2))),
            'g' => Some(Scale::Fixed(base.pow(3))),
            'T' => Some(Scale::Fixed(base.pow(4))),
            'P' => Some(Scale::Fixed(base.pow(5))),
            '1' => Some(Scale::Fixed(1000)),
            '2' => Some(Scale::Fixed(1000u64.pow(2))),
            '3' => Some(Scale::Fixed(1000u64.pow(3))),
            '4' => Some(Scale::Fixed(1000u64.pow(4))),
            '5' => Some(Scale::Fixed(1000u64.pow(5))),
            'h' => Some(Scale::Human { si }),
            _ => None,
        })
        .unwrap_or(Scale::Fixed(base));
    for n in 0..times {
        if n > 0 {
            std::thread::sleep(every);
        }
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let m = Memory::from_meminfo(&meminfo);
        let mut table = render(&m, scale, args.has('w'), args.has('l'), args.has('t'));
        if args.has('v') {
            // Nothing is committed beyond the cap: the cap is the limit.
            table += &row(
                "Comm:",
                &[
                    figure(m.total, scale),
                    figure(0, scale),
                    figure(m.total, scale),
                ],
            );
        }
        if times > 1 {
            table.push('\n');
        }
        if !p.out(table.as_bytes()) {
            break;
        }
    }
    0
}

/// `-c N` and `-s N`: how many tables, and the pause between them (`-s`
/// alone repeats until stopped; `-c` alone pauses a second). Bad values
/// get procps' own lines.
fn repeats(p: &Process<'_>, args: &Parsed) -> Option<(u64, Duration)> {
    let every = match args.value('s') {
        None => Duration::from_secs(1),
        Some(text) => match text.trim_start().parse::<f64>() {
            Ok(secs) if secs >= 1e-7 && secs.is_finite() => Duration::from_secs_f64(secs),
            Ok(_) => {
                p.error(&format!("seconds argument `{text}' is not positive number"));
                return None;
            }
            Err(_) => {
                // strtod says EINVAL only when nothing at all was a number.
                let why = if numeric_start(text) {
                    ""
                } else {
                    ": Invalid argument"
                };
                p.error(&format!("seconds argument failed: '{text}'{why}"));
                return None;
            }
        },
    };
    let times = match args.value('c') {
        None if args.has('s') => u64::MAX,
        None => 1,
        Some(text) => match text.trim_start().parse::<i64>() {
            Ok(n) if n >= 1 => n.unsigned_abs(),
            parsed => {
                let out_of_range = parsed.is_ok() || overflows(text);
                let why = if out_of_range {
                    ": Numerical result out of range"
                } else {
                    ""
                };
                p.error(&format!("failed to parse count argument: '{text}'{why}"));
                return None;
            }
        },
    };
    Some((times, every))
}

/// Whether `text` begins as a number does (sign, then a digit or a point).
fn numeric_start(text: &str) -> bool {
    let body = text.trim_start().trim_start_matches(['+', '-']);
    body.starts_with(|c: char| c.is_ascii_digit() || c == '.')
}

/// Whether `text` is a whole number too large for a long.
fn overflows(text: &str) -> bool {
    let digits = text.trim_start().trim_start_matches(['+', '-']);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

fn render(m: &Memory, scale: Scale, wide: bool, lohi: bool, total: bool) -> String {
    let cell = |bytes: u64| figure(bytes, scale);
    let mut out = if wide {
        row(
            "",
            &[
                "total",
                "used",
                "free",
                "shared",
                "buffers",
                "cache",
                "available",
            ],
        )
    } else {
        row(
            "",
            &["total", "used", "free", "shared", "buff/cache", "available"],
        )
    };
    let mut mem = vec![cell(m.total), cell(m.used()), cell(m.free), cell(m.shared)];
    if wide {
        mem.extend([cell(m.buffers), cell(m.cache)]);
    } else {
        mem.push(cell(m.buffers + m.cache));
    }
    mem.push(cell(m.available));
    out += &row("Mem:", &mem);
    if lohi {
        // One memory zone: all of it is low memory.
        out += &row("Low:", &[cell(m.total), cell(m.used()), cell(m.free)]);
        out += &row("High:", &[cell(0), cell(0), cell(0)]);
    }
    let swap_used = m.swap_total.saturating_sub(m.swap_free);
    out += &row(
        "Swap:",
        &[cell(m.swap_total), cell(swap_used), cell(m.swap_free)],
    );
    if total {
        out += &row(
            "Total:",
            &[
                cell(m.total + m.swap_total),
                cell(m.used() + swap_used),
                cell(m.free + m.swap_free),
            ],
        );
    }
    out
}

/// A line of the table: its label in 8 columns, then each figure in 11
/// after a space.
fn row<S: AsRef<str>>(label: &str, cells: &[S]) -> String {
    let mut line = format!("{label:<8}");
    for c in cells {
        line.push_str(&format!(" {:>11}", c.as_ref()));
    }
    line.push('\n');
    line
}

fn figure(bytes: u64, scale: Scale) -> String {
    match scale {
        Scale::Fixed(unit) => (bytes / unit.max(1)).to_string(),
        Scale::Human { si } => human(bytes, si),
    }
}

/// procps' scale_size: the first unit whose figure fits in four
/// characters, one decimal if it still fits (`2.3Gi`, `16Gi`, `0B`).
fn human(bytes: u64, si: bool) -> String {
    let base: f64 = if si { 1000.0 } else { 1024.0 };
    let tail = if si { "" } else { "i" };
    if bytes < 1000 {
        return format!("{bytes}B");
    }
    for (power, unit) in ["K", "M", "G", "T", "P", "E"].iter().enumerate() {
        let value = bytes as f64 / base.powi(i32::try_from(power).unwrap_or(0) + 1);
        let decimal = format!("{value:.1}{unit}");
        if decimal.len() <= 4 {
            return format!("{decimal}{tail}");
        }
        let whole = format!("{}{unit}", value as u64);
        if whole.len() <= 4 {
            return format!("{whole}{tail}");
        }
    }
    format!("{bytes}B")
}

const IDENTITY: super::Identity = super::Identity {
    name: "free",
    help_key: 'H',
    help: HELP,
};

const HELP: &str = "
Usage:
 free [options]

Options:
 -b, --bytes         show output in bytes
     --kilo          show output in kilobytes
     --mega          show output in megabytes
     --giga          show output in gigabytes
     --tera          show output in terabytes
     --peta          show output in petabytes
 -k, --kibi          show output in kibibytes
 -m, --mebi          show output in mebibytes
 -g, --gibi          show output in gibibytes
     --tebi          show output in tebibytes
     --pebi          show output in pebibytes
 -h, --human         show human-readable output
     --si            use powers of 1000 not 1024
 -l, --lohi          show detailed low and high memory statistics
 -t, --total         show total for RAM + swap
 -v, --committed     show committed memory and commit limit
 -s N, --seconds N   repeat printing every N seconds
 -c N, --count N     repeat printing N times, then exit
 -w, --wide          wide output

     --help     display this help and exit
 -V, --version  output version information and exit

For more details see free(1).
";

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: Memory = Memory {
        total: 24_683_568 * 1024,
        free: 5_677_712 * 1024,
        available: 22_290_472 * 1024,
        shared: 9_508 * 1024,
        buffers: 0,
        cache: 17_105_456 * 1024,
        swap_total: 0,
        swap_free: 0,
    };

    #[test]
    fn kibibytes_as_procps_prints_them() {
        let want = "               total        used        free      shared  buff/cache   available\n\
                    Mem:        24683568     2393096     5677712        9508    17105456    22290472\n\
                    Swap:              0           0           0\n";
        assert_eq!(render(&HOST, Scale::Fixed(1024), false, false, false), want);
    }

    #[test]
    fn human_figures_take_four_characters() {
        assert_eq!(human(24_683_568 * 1024, false), "23Gi");
        assert_eq!(human(24_683_568 * 1024, true), "25G");
        assert_eq!(human(2_393_096 * 1024, false), "2.3Gi");
        assert_eq!(human(9_508 * 1024, false), "9.3Mi");
        assert_eq!(human(17_105_456 * 1024, false), "16Gi");
        assert_eq!(human(0, false), "0B");
        assert_eq!(human(512 << 20, false), "512Mi");
        assert_eq!(human(512 << 20, true), "536M");
    }
}
