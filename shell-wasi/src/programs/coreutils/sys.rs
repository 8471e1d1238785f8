//! The machine as the sandbox presents it: `uname`, `hostname`, `nproc`,
//! `df` (one tmpfs) and `du` (`-s -h -a -c -d`). Sizes come from the
//! files' block counts where the platform has them, else whole 4 KiB
//! blocks as ext4 and tmpfs would allocate.

use std::fs;
use std::path::Path;

use super::Process;
use super::args::{HasArg, Spec};
use crate::errors::strerror;
use crate::programs::quoting::single_quote;
use crate::programs::size::human;

/// What `uname` and `hostname` report.
pub(crate) const HOSTNAME: &str = "sandbox";
const KERNEL: &str = "Linux";
const RELEASE: &str = "6.1.0";
const VERSION: &str = "#1 SMP PREEMPT_DYNAMIC";
const MACHINE: &str = "x86_64";
const OS: &str = "GNU/Linux";

/// CPUs the sandbox offers (one component runs on one thread).
const CPUS: u32 = 1;

/// The sandbox's filesystem as `df` shows it: 1 GiB of tmpfs.
const FS_BLOCKS_KIB: u64 = 1024 * 1024;

pub(crate) fn uname(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "asnrvmpio",
        long: &[
            ("all", 'a', HasArg::No),
            ("kernel-name", 's', HasArg::No),
            ("nodename", 'n', HasArg::No),
            ("kernel-release", 'r', HasArg::No),
            ("kernel-version", 'v', HasArg::No),
            ("machine", 'm', HasArg::No),
            ("processor", 'p', HasArg::No),
            ("hardware-platform", 'i', HasArg::No),
            ("operating-system", 'o', HasArg::No),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    if let Some(extra) = args.operands.first() {
        return super::usage(p, &format!("extra operand {}", p.quote(extra)), 1);
    }
    let all = args.has('a');
    let fields = [
        ('s', KERNEL),
        ('n', HOSTNAME),
        ('r', RELEASE),
        ('v', VERSION),
        ('m', MACHINE),
        ('p', MACHINE),
        ('i', MACHINE),
        ('o', OS),
    ];
    let any = fields.iter().any(|(k, _)| args.has(*k));
    let chosen: Vec<&str> = fields
        .iter()
        .filter(|(k, _)| {
            if all {
                // `-a` omits unknown processor and platform; ours are known.
                true
            } else if any {
                args.has(*k)
            } else {
                *k == 's'
            }
        })
        .filter(|(k, _)| !(all && (*k == 'p' || *k == 'i')))
        .map(|(_, v)| *v)
        .collect();
    p.out(format!("{}\n", chosen.join(" ")).as_bytes());
    0
}

pub(crate) fn hostname(p: &mut Process<'_>, argv: &[String]) -> i32 {
    if argv.len() > 1 && !argv.iter().skip(1).all(|a| a.starts_with('-')) {
        p.error("you must be root to change the host name");
        return 1;
    }
    let shown = if argv.iter().any(|a| a == "-i" || a == "-I") {
        "127.0.0.1"
    } else {
        HOSTNAME
    };
    p.out(format!("{shown}\n").as_bytes());
    0
}

pub(crate) fn nproc(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "",
        long: &[("all", 'a', HasArg::No), ("ignore", 'i', HasArg::Yes)],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let ignore: u32 = args.value('i').and_then(|v| v.parse().ok()).unwrap_or(0);
    p.out(format!("{}\n", CPUS.saturating_sub(ignore).max(1)).as_bytes());
    0
}

/// `df -i`: files (inodes) of the sandbox's quota.
fn df_inodes(p: &mut Process<'_>, total: u64, used: u64) -> i32 {
    let free = total - used;
    let pct = if total == 0 {
        "-".to_string()
    } else {
        format!("{}%", (used * 100).div_ceil(total))
    };
    let (t, u, f) = (total.to_string(), used.to_string(), free.to_string());
    let w = |min: usize, label: &str, v: &str| min.max(label.len()).max(v.len());
    let (tw, uw, fw) = (w(6, "Inodes", &t), w(5, "IUsed", &u), w(5, "IFree", &f));
    let out = format!(
        "{:<14} {:>tw$} {:>uw$} {:>fw$} IUse% Mounted on\n{:<14} {t:>tw$} {u:>uw$} {f:>fw$} {pct:>5} /\n",
        "Filesystem", "Inodes", "IUsed", "IFree", "tmpfs"
    );
    p.out(out.as_bytes());
    0
}

pub(crate) fn df(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "ahHiklPTt:x:B:",
        long: &[
            ("all", 'a', HasArg::No),
            ("human-readable", 'h', HasArg::No),
            ("si", 'H', HasArg::No),
            ("inodes", 'i', HasArg::No),
            ("local", 'l', HasArg::No),
            ("portability", 'P', HasArg::No),
            ("print-type", 'T', HasArg::No),
            ("output", 'O', HasArg::Optional),
            ("total", 'c', HasArg::No),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    for name in &args.operands {
        if let Err(e) = fs::metadata(p.resolve(name)) {
            p.error(&format!("{}: {}", name, strerror(&e)));
            return 1;
        }
    }
    // The sandbox's quota is its disk: what the host says, else a guess.
    let (total, used) = match p.host.disk_usage() {
        Some((_, _, used_files, max_files)) if args.has('i') => {
            (max_files, used_files.min(max_files))
        }
        Some((used_bytes, max_bytes, _, _)) => {
            let total = max_bytes / 1024;
            (total, used_bytes.div_ceil(1024).min(total))
        }
        None => (
            FS_BLOCKS_KIB,
            usage_kib(&p.resolve("/tmp")).min(FS_BLOCKS_KIB),
        ),
    };
    if args.has('i') {
        return df_inodes(p, total, used);
    }
    let avail = total - used;
    let pct = (used * 100).div_ceil(total.max(1));
    let typed = args.has('T');
    let (size_h, used_h, avail_h) = if args.has('h') {
        (human(total * 1024), human(used * 1024), human(avail * 1024))
    } else {
        (total.to_string(), used.to_string(), avail.to_string())
    };
    let human_sizes = args.has('h');
    let size_label = if human_sizes { "Size" } else { "1K-blocks" };
    let avail_label = if human_sizes { "Avail" } else { "Available" };
    let pct = format!("{pct}%");
    // GNU's columns: each as wide as its header or widest value, with
    // the minimums GNU uses for each.
    let width = |min: usize, label: &str, value: &str| min.max(label.len()).max(value.len());
    let (size_w, used_w, avail_w) = (
        width(if human_sizes { 5 } else { 9 }, size_label, &size_h),
        width(5, "Used", &used_h),
        width(5, avail_label, &avail_h),
    );
    let (fs_col, type_head, type_val) = if typed {
        (14, " Type  ", " tmpfs ")
    } else {
        (14, " ", " ")
    };
    let out = format!(
        "{:<fs_col$}{type_head}{size_label:>size_w$} {:>used_w$} {avail_label:>avail_w$} Use% Mounted on\n\
         {:<fs_col$}{type_val}{size_h:>size_w$} {used_h:>used_w$} {avail_h:>avail_w$} {pct:>4} /\n",
        "Filesystem", "Used", "tmpfs"
    );
    p.out(out.as_bytes());
    0
}

/// Kibibytes a file occupies on disk.
#[cfg(unix)]
fn blocks_kib(meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::blocks(meta).div_ceil(2)
}

#[cfg(not(unix))]
fn blocks_kib(meta: &fs::Metadata) -> u64 {
    if meta.is_dir() {
        4
    } else if meta.file_type().is_symlink() {
        0
    } else {
        meta.len().div_ceil(4096) * 4
    }
}

/// Total KiB under `path`, without following links.
fn usage_kib(path: &Path) -> u64 {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return 0;
    };
    let mut total = blocks_kib(&meta);
    if meta.is_dir()
        && let Ok(rd) = fs::read_dir(path)
    {
        for entry in rd.filter_map(Result::ok) {
            total += usage_kib(&entry.path());
        }
    }
    total
}

/// `du`'s settings.
struct DuOptions {
    all: bool,
    human: bool,
    max_depth: Option<usize>,
    bytes: bool,
}

pub(crate) fn du(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "ahsckmbd:xLPHD",
        long: &[
            ("all", 'a', HasArg::No),
            ("human-readable", 'h', HasArg::No),
            ("summarize", 's', HasArg::No),
            ("total", 'c', HasArg::No),
            ("max-depth", 'd', HasArg::Yes),
            ("apparent-size", 'A', HasArg::No),
            ("bytes", 'b', HasArg::No),
            ("one-file-system", 'x', HasArg::No),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let max_depth = if args.has('s') {
        Some(0)
    } else {
        match args.value('d') {
            None => None,
            Some(v) => match v.parse() {
                Ok(d) => Some(d),
                Err(_) => {
                    p.error(&format!("invalid maximum depth {}", p.quote(v)));
                    return 1;
                }
            },
        }
    };
    if args.has('s') && args.has('a') {
        return super::usage(p, "cannot both summarize and show all entries", 1);
    }
    let opts = DuOptions {
        all: args.has('a'),
        human: args.has('h'),
        max_depth,
        bytes: args.has('b'),
    };
    let mut names = args.operands.clone();
    if names.is_empty() {
        names.push(".".to_string());
    }
    let mut status = 0;
    let mut grand = 0;
    let mut out = String::new();
    for name in &names {
        let path = p.resolve(name);
        if let Err(e) = fs::symlink_metadata(&path) {
            p.out(out.as_bytes());
            out.clear();
            p.error(&format!(
                "cannot access {}: {}",
                single_quote(name),
                strerror(&e)
            ));
            status = 1;
            continue;
        }
        grand += walk(&path, name, 0, &opts, &mut out);
    }
    if args.has('c') {
        out.push_str(&format!("{}\ttotal\n", show_size(grand, &opts)));
    }
    p.out(out.as_bytes());
    status
}

fn show_size(kib_or_bytes: u64, opts: &DuOptions) -> String {
    if opts.human {
        let bytes = if opts.bytes {
            kib_or_bytes
        } else {
            kib_or_bytes * 1024
        };
        if bytes == 0 {
            "0".to_string()
        } else {
            human(bytes)
        }
    } else {
        kib_or_bytes.to_string()
    }
}

/// Prints entries below `path` (post-order, as du does) and returns its total.
fn walk(path: &Path, shown: &str, depth: usize, opts: &DuOptions, out: &mut String) -> u64 {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return 0;
    };
    let own = if opts.bytes {
        meta.len()
    } else {
        blocks_kib(&meta)
    };
    let visible = opts.max_depth.is_none_or(|m| depth <= m);
    if !meta.is_dir() {
        if visible && (opts.all || depth == 0) {
            out.push_str(&format!("{}\t{shown}\n", show_size(own, opts)));
        }
        return own;
    }
    let mut total = own;
    let mut children: Vec<String> = fs::read_dir(path)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    children.sort();
    for child in children {
        let child_shown = format!("{}/{child}", shown.trim_end_matches('/'));
        total += walk(&path.join(&child), &child_shown, depth + 1, opts, out);
    }
    if visible {
        out.push_str(&format!("{}\t{shown}\n", show_size(total, opts)));
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        assert_eq!(human(12 * 1024), "12K");
        assert_eq!(human(8 * 1024), "8.0K");
        assert_eq!(human(1536), "1.5K");
    }
}
