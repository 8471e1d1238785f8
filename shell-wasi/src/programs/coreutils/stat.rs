//! `stat [-L] [-c FORMAT | --printf FORMAT] FILE...` and its default
//! report. Owner and group are always `worker` (1000); permission bits
//! come from the host. Device and inode numbers are the platform's where
//! it has them.

use std::fs;
use std::time::SystemTime;

use super::Process;
use super::args::{HasArg, Spec};
use crate::errors::strerror;
use crate::host::{S_IFDIR, S_IFLNK, S_IFMT, S_IFREG};
use crate::programs::ident::{UID, user_name};
use crate::programs::ls::mode_string;
use crate::programs::quoting::single_quote;
use crate::programs::timefmt;

/// What one file's line is made from.
struct Info {
    name: String,
    mode: u32,
    uid: u32,
    size: u64,
    blocks: u64,
    nlink: u64,
    inode: u64,
    dev: u64,
    atime: SystemTime,
    mtime: SystemTime,
    ctime: SystemTime,
    link_target: Option<String>,
}

pub(crate) fn stat(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "Lfc:t",
        long: &[
            ("dereference", 'L', HasArg::No),
            ("file-system", 'f', HasArg::No),
            ("format", 'c', HasArg::Yes),
            ("printf", 'P', HasArg::Yes),
            ("terse", 't', HasArg::No),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    if args.operands.is_empty() {
        return super::usage(p, "missing operand", 1);
    }
    let follow = args.has('L');
    let mut status = 0;
    for name in &args.operands {
        let info = match gather(p, name, follow) {
            Ok(i) => i,
            Err(e) => {
                p.error(&format!(
                    "cannot statx {}: {}",
                    single_quote(name),
                    strerror(&e)
                ));
                status = 1;
                continue;
            }
        };
        let text = if let Some(f) = args.value('c') {
            format!("{}\n", render(f, &info))
        } else if let Some(f) = args.value('P') {
            render(&unescape(f), &info)
        } else if args.has('t') {
            format!(
                "{}\n",
                render("%n %s %b %f %u %g %D %i %h %t %T %X %Y %Z %W %o", &info)
            )
        } else {
            default_report(&info)
        };
        if !p.out(text.as_bytes()) {
            return status;
        }
    }
    status
}

fn gather(p: &Process<'_>, name: &str, follow: bool) -> std::io::Result<Info> {
    let path = p.resolve(name);
    let meta = if follow {
        fs::metadata(&path)?
    } else {
        fs::symlink_metadata(&path)?
    };
    let is_link = meta.file_type().is_symlink();
    let kind = if is_link {
        S_IFLNK
    } else if meta.is_dir() {
        S_IFDIR
    } else {
        S_IFREG
    };
    let host_mode = p.host.get_mode(&p.host_path(name), follow).ok();
    let perms = if is_link {
        0o777
    } else {
        host_mode.map_or(if meta.is_dir() { 0o755 } else { 0o644 }, |m| m & 0o7777)
    };
    // Devices are only told apart by the host (WASI calls them files).
    let kind = match host_mode {
        Some(m) if !is_link && m & S_IFMT == crate::host::S_IFCHR => crate::host::S_IFCHR,
        _ => kind,
    };
    let uid = p.host.get_owner(&p.host_path(name), follow).unwrap_or(UID);
    let (blocks, nlink, inode, dev) = platform(&meta);
    let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    Ok(Info {
        name: name.to_string(),
        mode: kind | perms,
        uid,
        size: meta.len(),
        blocks,
        nlink,
        inode,
        dev,
        atime: meta.accessed().unwrap_or(mtime),
        mtime,
        ctime: mtime,
        link_target: if is_link {
            fs::read_link(&path)
                .ok()
                .map(|t| t.to_string_lossy().into_owned())
        } else {
            None
        },
    })
}

#[cfg(unix)]
fn platform(meta: &fs::Metadata) -> (u64, u64, u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.blocks(), meta.nlink(), meta.ino(), meta.dev())
}

#[cfg(not(unix))]
fn platform(meta: &fs::Metadata) -> (u64, u64, u64, u64) {
    let blocks = if meta.is_dir() {
        8
    } else {
        meta.len().div_ceil(4096) * 8
    };
    (blocks, if meta.is_dir() { 2 } else { 1 }, 0, 0)
}

fn file_type(info: &Info) -> &'static str {
    match info.mode & S_IFMT {
        S_IFDIR => "directory",
        S_IFLNK => "symbolic link",
        crate::host::S_IFCHR => "character special file",
        _ if info.size == 0 => "regular empty file",
        _ => "regular file",
    }
}

/// `2024-03-05 14:07:09.123456789 +0000`.
fn full_time(t: SystemTime) -> String {
    let secs = timefmt::epoch_secs(t);
    let nanos = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let c = timefmt::civil_from_secs(secs);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{nanos:09} +0000",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    )
}

fn default_report(info: &Info) -> String {
    let name = match &info.link_target {
        Some(t) => format!("{} -> {}", info.name, t),
        None => info.name.clone(),
    };
    let dev = format!("{},{}", (info.dev >> 8) & 0xfff, info.dev & 0xff);
    format!(
        "  File: {name}\n  Size: {:<10}\tBlocks: {:<10} IO Block: 4096   {}\nDevice: {dev}\tInode: {:<11} Links: {}\nAccess: ({:04o}/{})  Uid: ({:>5}/{:>8})   Gid: ({:>5}/{:>8})\nAccess: {}\nModify: {}\nChange: {}\n Birth: -\n",
        info.size,
        info.blocks,
        file_type(info),
        info.inode,
        info.nlink,
        info.mode & 0o7777,
        mode_string(info.mode),
        info.uid,
        user_name(info.uid),
        info.uid,
        user_name(info.uid),
        full_time(info.atime),
        full_time(info.mtime),
        full_time(info.ctime),
    )
}

/// Expands `%` directives of `-c`/`--printf`.
fn render(format: &str, info: &Info) -> String {
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = String::new();
        while let Some(&f) = chars.peek().filter(|f| "-+ #0123456789.".contains(**f)) {
            spec.push(f);
            chars.next();
        }
        let Some(conv) = chars.next() else {
            out.push('%');
            break;
        };
        let secs = |t: SystemTime| timefmt::epoch_secs(t).to_string();
        let value = match conv {
            'n' => info.name.clone(),
            'N' => match &info.link_target {
                Some(t) => format!("{} -> {}", single_quote(&info.name), single_quote(t)),
                None => single_quote(&info.name),
            },
            's' => info.size.to_string(),
            'a' => format!("{:o}", info.mode & 0o7777),
            'A' => mode_string(info.mode),
            'f' => format!("{:x}", info.mode),
            'F' => file_type(info).to_string(),
            'U' | 'G' => user_name(info.uid),
            'u' | 'g' => info.uid.to_string(),
            'h' => info.nlink.to_string(),
            'i' => info.inode.to_string(),
            'd' => info.dev.to_string(),
            'D' => format!("{:x}", info.dev),
            'b' => info.blocks.to_string(),
            'B' => "512".to_string(),
            'o' => "4096".to_string(),
            't' | 'T' => "0".to_string(),
            'x' => full_time(info.atime),
            'X' => secs(info.atime),
            'y' => full_time(info.mtime),
            'Y' => secs(info.mtime),
            'z' => full_time(info.ctime),
            'Z' => secs(info.ctime),
            'w' => "-".to_string(),
            'W' => "0".to_string(),
            'm' => "/".to_string(),
            '%' => "%".to_string(),
            other => {
                out.push('?');
                let _ = other;
                continue;
            }
        };
        out.push_str(&apply_width(&value, &spec));
    }
    out
}

fn apply_width(value: &str, spec: &str) -> String {
    let left = spec.contains('-');
    let zero = spec.starts_with('0');
    let width: usize = spec
        .trim_start_matches(['-', '0', '+', ' ', '#'])
        .split('.')
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or(0);
    let width = width.min(super::MAX_FIELD_WIDTH);
    let len = value.chars().count();
    if len >= width {
        return value.to_string();
    }
    let fill = width - len;
    if left {
        format!("{value}{}", " ".repeat(fill))
    } else if zero {
        format!("{}{value}", "0".repeat(fill))
    } else {
        format!("{}{value}", " ".repeat(fill))
    }
}

/// `--printf` escapes: `\n`, `\t`, `\\`, `\"`.
fn unescape(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some('"') => out.push('"'),
            Some('0') => out.push('\0'),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_fields() {
        let info = Info {
            name: "f".to_string(),
            mode: S_IFREG | 0o644,
            uid: 1000,
            size: 3,
            blocks: 8,
            nlink: 1,
            inode: 7,
            dev: 0,
            atime: SystemTime::UNIX_EPOCH,
            mtime: SystemTime::UNIX_EPOCH,
            ctime: SystemTime::UNIX_EPOCH,
            link_target: None,
        };
        assert_eq!(
            render("%n %s %a %A %U %u %F", &info),
            "f 3 644 -rw-r--r-- worker 1000 regular file"
        );
        assert_eq!(render("%y", &info), "1970-01-01 00:00:00.000000000 +0000");
        assert_eq!(render("%5s|%-3h|", &info), "    3|1  |");
    }
}
