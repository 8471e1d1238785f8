//! `ls` with the flags agents use: `-l -a -A -1 -d -h -r -t -S -R -n`.
//!
//! Output is never a terminal in the sandbox, so plain `ls` prints one
//! name per line and names are not quoted, as GNU ls does into a pipe.
//! Owner and group are always `worker`; mode bits come from the host.

use std::fs;
use std::path::Path;

use super::Process;
use super::ident::{UID, USER};
use super::quoting::single_quote;
use super::timefmt;
use crate::errors::strerror;
use crate::host::{S_IFDIR, S_IFLNK, S_IFMT, S_IFREG};
use crate::utils::size::human;

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
}

/// One line of a listing.
#[derive(Debug, Clone)]
struct Entry {
    /// What is printed.
    name: String,
    /// The path as the process sees it.
    path: String,
    mode: u32,
    nlink: u64,
    size: u64,
    blocks_kib: u64,
    mtime: i64,
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
    let follow_operands = !(opts.long || opts.directory);
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
    for flag in flags {
        match flag.as_str() {
            "l" => o.long = true,
            "a" | "--all" => o.all = true,
            "A" | "--almost-all" => o.almost_all = true,
            "d" | "--directory" => o.directory = true,
            "h" | "--human-readable" => o.human = true,
            "r" | "--reverse" => o.reverse = true,
            "t" => o.by_time = true,
            "S" => o.by_size = true,
            "R" | "--recursive" => o.recursive = true,
            "n" | "--numeric-uid-gid" => {
                o.numeric = true;
                o.long = true;
            }
            "1" | "C" | "x" | "F" | "G" | "--color" | "--color=never" | "--color=auto" => {}
            other if other.starts_with("--") => {
                p.error(&format!("unrecognized option '{other}'"));
                p.try_help("ls");
                return Err(2);
            }
            other => {
                p.error(&format!("invalid option -- '{other}'"));
                p.try_help("ls");
                return Err(2);
            }
        }
    }
    Ok(o)
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
    if opts.long {
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
    let perms = p
        .host
        .get_mode(&p.host_path(path), !shown_is_link)
        .map_or_else(|_| default_perms(kind), |m| m & 0o7777);
    let size = if shown_is_link {
        lmeta.len()
    } else {
        meta.len()
    };
    let mtime = meta.modified().map(timefmt::epoch_secs).unwrap_or(0);
    Ok(Entry {
        name: name.to_string(),
        path: path.to_string(),
        mode: kind | perms,
        nlink: link_count(&full, &meta),
        size,
        blocks_kib: blocks_kib(&meta, kind),
        mtime,
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
    if !opts.long {
        for e in entries {
            out.push_str(&e.name);
            out.push('\n');
        }
        return;
    }
    let now = timefmt::epoch_secs(std::time::SystemTime::now());
    let owner = if opts.numeric {
        UID.to_string()
    } else {
        USER.to_string()
    };
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
    for (e, size) in entries.iter().zip(&sizes) {
        out.push_str(&format!(
            "{} {:>link_w$} {owner} {owner} {:>size_w$} {} {}",
            mode_string(e.mode),
            e.nlink,
            size,
            timefmt::ls_date(e.mtime, now),
            e.name,
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
