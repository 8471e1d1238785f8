//! `ls` with the flags agents use: `-l -a -A -1 -d -h -r -t -S -X -R -n
//! -g -o -G -s -p -F`, `--time-style` (`full-iso`, `long-iso`, `iso`,
//! `+FORMAT`), `--full-time`, `--sort`, `--color=WHEN` (never colored).
//!
//! Output is never a terminal in the sandbox, so plain `ls` prints one
//! name per line and names are not quoted, as GNU ls does into a pipe.
//! Owner and group are always `worker`; mode bits come from the host.

use std::fs;
use std::path::Path;

use super::Process;
use super::ident::UID;
use super::quoting::single_quote;
use super::timefmt;
use crate::errors::strerror;
use crate::host::{S_IFDIR, S_IFLNK, S_IFMT, S_IFREG};
use crate::programs::size::human;

/// Which flags are on.
#[derive(Debug, Default, Clone, Copy)]
struct Options {
    long: bool,
    all: bool,
    almost_all: bool,
    directory: bool,
    human: bool,
    reverse: bool,
    by_time: bool,
    by_size: bool,
    recursive: bool,
    numeric: bool,
    by_extension: bool,
    /// `-g` hides the owner, `-o`/`-G` the group.
    no_owner: bool,
    no_group: bool,
    /// `-s`: allocated size before each name.
    blocks: bool,
    /// `-p`: `/`; `--file-type`: also `@`; `-F`: also `*`.
    indicator: Indicator,
    time_style: TimeStyle,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Indicator {
    #[default]
    None,
    Slash,
    FileType,
    Classify,
}

/// `--time-style`; the format of `+FORMAT` lives in `time_format`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum TimeStyle {
    #[default]
    Locale,
    FullIso,
    LongIso,
    Iso,
    Format,
}

thread_local! {
    /// The `+FORMAT` of `--time-style` (old files; recent after a newline).
    static TIME_FORMAT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// One line of a listing.
#[derive(Debug, Clone)]
struct Entry {
    /// What is printed.
    name: String,
    /// The path as the process sees it.
    path: String,
    mode: u32,
    /// The owner (and group: the same number).
    uid: u32,
    nlink: u64,
    size: u64,
    blocks_kib: u64,
    mtime: i64,
    mtime_nanos: u32,
    link_target: Option<String>,
}

pub(crate) fn ls(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let (flags, mut operands) = super::parse_flags(argv.get(1..).unwrap_or_default());
    let opts = match parse_options(p, &flags) {
        Ok(o) => o,
        Err(status) => return status,
    };
    if operands.is_empty() {
        operands.push(".".to_string());
    }
    let mut status = 0;
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    // GNU follows a symlink given on the command line only when it would
    // list a folder's contents: not with -l, -d (or -F), unless NAME/.
    let follow_operands = !(opts.long
        || opts.directory
        || matches!(opts.indicator, Indicator::FileType | Indicator::Classify));
    for name in &operands {
        let follow = follow_operands || name.ends_with('/');
        match stat(p, name, name, follow) {
            Ok(entry) if entry.mode & S_IFMT == S_IFDIR && !opts.directory => dirs.push(entry),
            Ok(entry) => files.push(entry),
            Err(msg) => {
                p.error(&format!("cannot access {}: {msg}", single_quote(name)));
                status = 2;
            }
        }
    }
    let mut out = String::new();
    sort(&mut files, opts);
    sort(&mut dirs, opts);
    if !files.is_empty() {
        render(&files, opts, &mut out);
    }
    let show_headers = operands.len() > 1 || opts.recursive;
    for (i, dir) in dirs.iter().enumerate() {
        if i > 0 || !files.is_empty() {
            out.push('\n');
        }
        status = status.max(list_dir(p, dir, opts, show_headers, &mut out));
    }
    p.out(out.as_bytes());
    status
}

fn parse_options(p: &Process<'_>, flags: &[String]) -> Result<Options, i32> {
    let mut o = Options::default();
    // GNU's argmatch report: the value, then each group of synonyms.
    let bad_arg = |option: &str, value: &str, valid: &[&[&str]]| {
        p.error(&format!(
            "invalid argument {} for {}",
            p.quote(value),
            p.quote(&format!("--{option}"))
        ));
        p.io.err_line("Valid arguments are:");
        for group in valid {
            let names: Vec<String> = group.iter().map(|n| p.quote(n)).collect();
            p.io.err_line(&format!("  - {}", names.join(", ")));
        }
        p.try_help("ls");
        Err(1)
    };
    let mut bad_time_style = None;
    for flag in flags {
        let (name, value) = match flag.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (flag.as_str(), None),
        };
        match (name, value) {
            ("l" | "--format=long", _) => o.long = true,
            ("a" | "--all", None) => o.all = true,
            ("A" | "--almost-all", None) => o.almost_all = true,
            ("d" | "--directory", None) => o.directory = true,
            ("h" | "--human-readable", None) => o.human = true,
            ("r" | "--reverse", None) => o.reverse = true,
            ("t", _) => o.by_time = true,
            ("S", _) => o.by_size = true,
            ("X", _) => o.by_extension = true,
            ("U" | "f", _) => {}
            ("--sort", Some(v)) => match v {
                "time" => o.by_time = true,
                "size" => o.by_size = true,
                "extension" => o.by_extension = true,
                "none" | "version" | "width" => {}
                _ => {
                    return bad_arg(
                        "sort",
                        v,
                        &[
                            &["none"],
                            &["time"],
                            &["size"],
                            &["extension"],
                            &["version"],
                            &["width"],
                        ],
                    );
                }
            },
            ("R" | "--recursive", None) => o.recursive = true,
            ("n" | "--numeric-uid-gid", None) => {
                o.numeric = true;
                o.long = true;
            }
            ("g", _) => {
                o.long = true;
                o.no_owner = true;
            }
            ("o", _) => {
                o.long = true;
                o.no_group = true;
            }
            ("G" | "--no-group", None) => o.no_group = true,
            ("s" | "--size", None) => o.blocks = true,
            ("p", _) => o.indicator = o.indicator.max_with(Indicator::Slash),
            ("--file-type", None) => o.indicator = o.indicator.max_with(Indicator::FileType),
            ("F" | "--classify", _) => o.indicator = Indicator::Classify,
            ("--indicator-style", Some(v)) => {
                o.indicator = match v {
                    "none" => Indicator::None,
                    "slash" => Indicator::Slash,
                    "file-type" => Indicator::FileType,
                    "classify" => Indicator::Classify,
                    _ => {
                        return bad_arg(
                            "indicator-style",
                            v,
                            &[&["none"], &["slash"], &["file-type"], &["classify"]],
                        );
                    }
                }
            }
            ("--full-time", None) => {
                o.long = true;
                o.time_style = TimeStyle::FullIso;
            }
            ("--time-style", Some(v)) => {
                let style = v.strip_prefix("posix-").unwrap_or(v);
                o.time_style = match style {
                    "full-iso" => TimeStyle::FullIso,
                    "long-iso" => TimeStyle::LongIso,
                    "iso" => TimeStyle::Iso,
                    "locale" => TimeStyle::Locale,
                    f if f.starts_with('+') => {
                        TIME_FORMAT
                            .with(|t| *t.borrow_mut() = f.get(1..).unwrap_or("").to_string());
                        TimeStyle::Format
                    }
                    _ => {
                        bad_time_style = Some(v.to_string());
                        TimeStyle::Locale
                    }
                };
            }
            (
                "1"
                | "C"
                | "x"
                | "m"
                | "--color"
                | "--colour"
                | "N"
                | "--literal"
                | "b"
                | "Q"
                | "q"
                | "--group-directories-first",
                None,
            ) => {}
            ("--color" | "--colour", Some(v)) => match v {
                "never" | "no" | "none" | "auto" | "tty" | "if-tty" | "always" | "yes"
                | "force" => {}
                _ => {
                    return bad_arg(
                        "color",
                        v,
                        &[
                            &["always", "yes", "force"],
                            &["never", "no", "none"],
                            &["auto", "tty", "if-tty"],
                        ],
                    );
                }
            },
            (other, _) if other.starts_with("--") => {
                p.error(&format!("unrecognized option '{flag}'"));
                p.try_help("ls");
                return Err(2);
            }
            (other, _) => {
                p.error(&format!("invalid option -- '{other}'"));
                p.try_help("ls");
                return Err(2);
            }
        }
    }
    if let Some(v) = bad_time_style.filter(|_| o.long) {
        // Only a long listing shows times, so only it checks the style.
        p.error(&format!(
            "invalid argument {} for {}",
            p.quote(&v),
            p.quote("time style")
        ));
        p.io.err_line("Valid arguments are:");
        for style in ["full-iso", "long-iso", "iso", "locale"] {
            p.io.err_line(&format!("  - [posix-]{style}"));
        }
        p.io.err_line("  - +FORMAT (e.g., +%H:%M) for a 'date'-style format");
        p.try_help("ls");
        return Err(2);
    }
    Ok(o)
}

impl Indicator {
    fn max_with(self, other: Indicator) -> Indicator {
        let rank = |i: Indicator| match i {
            Indicator::None => 0,
            Indicator::Slash => 1,
            Indicator::FileType => 2,
            Indicator::Classify => 3,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }

    /// The character shown after a name of this mode.
    fn suffix(self, mode: u32) -> &'static str {
        match (self, mode & S_IFMT) {
            (Indicator::None, _) => "",
            (_, S_IFDIR) => "/",
            (Indicator::Slash, _) => "",
            (_, S_IFLNK) => "@",
            (Indicator::Classify, S_IFREG) if mode & 0o111 != 0 => "*",
            _ => "",
        }
    }
}

/// The date column in the chosen `--time-style`.
fn date_column(e: &Entry, style: TimeStyle, now: i64) -> String {
    use super::coreutils::date::format_time;
    let recent = e.mtime > now - 31_556_952 / 2 && e.mtime <= now;
    match style {
        TimeStyle::Locale => timefmt::ls_date(e.mtime, now),
        TimeStyle::FullIso => format_time("%Y-%m-%d %H:%M:%S.%N %z", e.mtime, e.mtime_nanos),
        TimeStyle::LongIso => format_time("%Y-%m-%d %H:%M", e.mtime, 0),
        TimeStyle::Iso if recent => format_time("%m-%d %H:%M", e.mtime, 0),
        TimeStyle::Iso => format_time("%Y-%m-%d ", e.mtime, 0),
        TimeStyle::Format => TIME_FORMAT.with(|f| {
            let f = f.borrow();
            let chosen = match f.split_once('\n') {
                Some((_, recent_format)) if recent => recent_format,
                Some((old, _)) => old,
                None => f.as_str(),
            };
            format_time(chosen, e.mtime, e.mtime_nanos)
        }),
    }
}

/// Lists one folder (and, with `-R`, its subfolders after it).
fn list_dir(p: &Process<'_>, dir: &Entry, opts: Options, header: bool, out: &mut String) -> i32 {
    if header {
        out.push_str(&format!("{}:\n", dir.name));
    }
    let read = match fs::read_dir(p.resolve(&dir.path)) {
        Ok(r) => r,
        Err(e) => {
            p.error(&format!(
                "cannot open directory {}: {}",
                single_quote(&dir.name),
                strerror(&e)
            ));
            return 2;
        }
    };
    let mut names: Vec<String> = read
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    if opts.all {
        names.push(".".to_string());
        names.push("..".to_string());
    }
    let hidden_ok = opts.all || opts.almost_all;
    let mut entries: Vec<Entry> = names
        .into_iter()
        .filter(|n| hidden_ok || !n.starts_with('.'))
        .filter_map(|n| {
            let path = format!("{}/{n}", dir.path.trim_end_matches('/'));
            stat(p, &n, &path, false).ok()
        })
        .collect();
    sort(&mut entries, opts);
    if opts.long || opts.blocks {
        let total: u64 = entries.iter().map(|e| e.blocks_kib).sum();
        let total = if opts.human {
            human(total * 1024)
        } else {
            total.to_string()
        };
        out.push_str(&format!("total {total}\n"));
    }
    render(&entries, opts, out);
    let mut status = 0;
    if opts.recursive {
        for sub in entries
            .iter()
            .filter(|e| e.mode & S_IFMT == S_IFDIR && e.name != "." && e.name != "..")
        {
            out.push('\n');
            let mut sub = sub.clone();
            sub.name = sub.path.clone();
            status = status.max(list_dir(p, &sub, opts, true, out));
        }
    }
    status
}

/// Metadata of one path. `follow` is for command-line operands, where a
/// link to a folder lists the folder.
fn stat(p: &Process<'_>, name: &str, path: &str, follow: bool) -> Result<Entry, &'static str> {
    let full = p.resolve(path);
    let lmeta = fs::symlink_metadata(&full).map_err(|e| strerror(&e))?;
    let is_link = lmeta.file_type().is_symlink();
    let meta = if follow && is_link {
        fs::metadata(&full).unwrap_or_else(|_| lmeta.clone())
    } else {
        lmeta.clone()
    };
    let shown_is_link = is_link && !(follow && meta.is_dir());
    let kind = if shown_is_link {
        S_IFLNK
    } else if meta.is_dir() {
        S_IFDIR
    } else {
        S_IFREG
    };
    let host_mode = p.host.get_mode(&p.host_path(path), !shown_is_link).ok();
    let perms = host_mode.map_or_else(|| default_perms(kind), |m| m & 0o7777);
    // Devices are only told apart by the host (WASI calls them files).
    let kind = match host_mode {
        Some(m) if m & S_IFMT == crate::host::S_IFCHR => crate::host::S_IFCHR,
        _ => kind,
    };
    let size = if shown_is_link {
        lmeta.len()
    } else {
        meta.len()
    };
    let uid = p
        .host
        .get_owner(&p.host_path(path), !shown_is_link)
        .unwrap_or(UID);
    let modified = meta.modified().ok();
    let mtime = modified.map(timefmt::epoch_secs).unwrap_or(0);
    let mtime_nanos = modified
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.subsec_nanos());
    Ok(Entry {
        name: name.to_string(),
        path: path.to_string(),
        mode: kind | perms,
        uid,
        nlink: link_count(&full, &meta),
        size,
        blocks_kib: blocks_kib(&meta, kind),
        mtime,
        mtime_nanos,
        link_target: if shown_is_link {
            fs::read_link(&full)
                .ok()
                .map(|t| t.to_string_lossy().into_owned())
        } else {
            None
        },
    })
}

fn default_perms(kind: u32) -> u32 {
    match kind {
        S_IFDIR => crate::host::DEFAULT_DIR_MODE,
        S_IFLNK => 0o777,
        _ => crate::host::DEFAULT_FILE_MODE,
    }
}

#[cfg(unix)]
fn link_count(_path: &Path, meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(meta)
}

/// Without st_nlink, count as Linux filesystems do: a folder has one link
/// from its parent, one from `.`, and one from each subfolder's `..`.
#[cfg(not(unix))]
fn link_count(path: &Path, meta: &fs::Metadata) -> u64 {
    if !meta.is_dir() {
        return 1;
    }
    let subdirs = fs::read_dir(path)
        .map(|r| {
            r.filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .count()
        })
        .unwrap_or(0);
    2 + u64::try_from(subdirs).unwrap_or(0)
}

#[cfg(unix)]
fn blocks_kib(meta: &fs::Metadata, _kind: u32) -> u64 {
    std::os::unix::fs::MetadataExt::blocks(meta).div_ceil(2)
}

/// Without st_blocks, what ext4 would use: whole 4 KiB blocks.
#[cfg(not(unix))]
fn blocks_kib(meta: &fs::Metadata, kind: u32) -> u64 {
    match kind {
        S_IFLNK => 0,
        S_IFDIR => 4,
        _ => meta.len().div_ceil(4096) * 4,
    }
}

/// Name order (C locale: bytes), or `-t`/`-S` with name as tie-break.
fn sort(entries: &mut [Entry], opts: Options) {
    entries.sort_by(|a, b| {
        let primary = if opts.by_time {
            b.mtime.cmp(&a.mtime)
        } else if opts.by_size {
            b.size.cmp(&a.size)
        } else if opts.by_extension {
            let ext = |n: &str| match n.rfind('.') {
                Some(i) if i > 0 => n.get(i + 1..).unwrap_or("").to_string(),
                _ => String::new(),
            };
            ext(&a.name).cmp(&ext(&b.name))
        } else {
            std::cmp::Ordering::Equal
        };
        primary.then_with(|| a.name.as_bytes().cmp(b.name.as_bytes()))
    });
    if opts.reverse {
        entries.reverse();
    }
}

fn render(entries: &[Entry], opts: Options, out: &mut String) {
    let blocks: Vec<String> = entries
        .iter()
        .map(|e| {
            if opts.human {
                human(e.blocks_kib * 1024)
            } else {
                e.blocks_kib.to_string()
            }
        })
        .collect();
    let blocks_w = blocks.iter().map(String::len).max().unwrap_or(0);
    let block_column = |i: usize| match blocks.get(i) {
        Some(b) if opts.blocks => format!("{b:>blocks_w$} "),
        _ => String::new(),
    };
    if !opts.long {
        for (i, e) in entries.iter().enumerate() {
            out.push_str(&block_column(i));
            out.push_str(&e.name);
            out.push_str(opts.indicator.suffix(e.mode));
            out.push('\n');
        }
        return;
    }
    let now = timefmt::epoch_secs(std::time::SystemTime::now());
    let owners: Vec<String> = entries
        .iter()
        .map(|e| {
            if opts.numeric {
                e.uid.to_string()
            } else {
                super::ident::user_name(e.uid)
            }
        })
        .collect();
    let owner_w = owners.iter().map(String::len).max().unwrap_or(0);
    let sizes: Vec<String> = entries
        .iter()
        .map(|e| {
            if opts.human {
                human(e.size)
            } else {
                e.size.to_string()
            }
        })
        .collect();
    let size_w = sizes.iter().map(String::len).max().unwrap_or(0);
    let link_w = entries
        .iter()
        .map(|e| e.nlink.to_string().len())
        .max()
        .unwrap_or(0);
    for (i, ((e, size), owner)) in entries.iter().zip(&sizes).zip(&owners).enumerate() {
        let mut ids = String::new();
        if !opts.no_owner {
            ids.push_str(&format!("{owner:<owner_w$} "));
        }
        if !opts.no_group {
            ids.push_str(&format!("{owner:<owner_w$} "));
        }
        out.push_str(&format!(
            "{}{} {:>link_w$} {ids}{:>size_w$} {} {}{}",
            block_column(i),
            mode_string(e.mode),
            e.nlink,
            size,
            date_column(e, opts.time_style, now),
            e.name,
            if e.link_target.is_some() {
                ""
            } else {
                opts.indicator.suffix(e.mode)
            },
        ));
        if let Some(target) = &e.link_target {
            out.push_str(" -> ");
            out.push_str(target);
        }
        out.push('\n');
    }
}

/// `-rwxr-xr-x`, with setuid/setgid/sticky as s/S and t/T.
pub(crate) fn mode_string(mode: u32) -> String {
    let kind = match mode & S_IFMT {
        S_IFDIR => 'd',
        S_IFLNK => 'l',
        crate::host::S_IFCHR => 'c',
        _ => '-',
    };
    let mut s = String::with_capacity(10);
    s.push(kind);
    let classes = [(6, 0o4000, 's'), (3, 0o2000, 's'), (0, 0o1000, 't')];
    for (shift, special, letter) in classes {
        let bits = (mode >> shift) & 7;
        s.push(if bits & 4 != 0 { 'r' } else { '-' });
        s.push(if bits & 2 != 0 { 'w' } else { '-' });
        let exec = bits & 1 != 0;
        s.push(match (mode & special != 0, exec) {
            (true, true) => letter,
            (true, false) => letter.to_ascii_uppercase(),
            (false, true) => 'x',
            (false, false) => '-',
        });
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_strings() {
        assert_eq!(mode_string(S_IFREG | 0o644), "-rw-r--r--");
        assert_eq!(mode_string(S_IFDIR | 0o755), "drwxr-xr-x");
        assert_eq!(mode_string(S_IFDIR | 0o1777), "drwxrwxrwt");
        assert_eq!(mode_string(S_IFREG | 0o4644), "-rwSr--r--");
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human(14), "14");
        assert_eq!(human(1024), "1.0K");
        assert_eq!(human(1100), "1.1K");
        assert_eq!(human(4096), "4.0K");
        assert_eq!(human(20_000), "20K");
        assert_eq!(human(5 * 1024 * 1024), "5.0M");
    }
}
