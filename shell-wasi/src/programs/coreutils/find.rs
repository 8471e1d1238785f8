//! `find [PATH]... [EXPRESSION]`: tests (`-name -iname -path -ipath -type
//! -size -mtime -mmin -newer -newermt -perm -empty -true -false`), actions (`-print
//! -print0 -printf -delete -exec ... ; -exec ... + -prune -quit`),
//! operators (`! -not -a -and -o -or ( )`) and the global
//! `-maxdepth -mindepth -depth`. Entries are visited in name order, so
//! output is stable (GNU uses the directory's own order).

use std::fs;
use std::time::SystemTime;

use super::Process;
use crate::errors::strerror;
use crate::interp::pattern_matches;
use crate::programs::timefmt;

/// A numeric comparison: `+N`, `-N` or `N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    More(u64),
    Less(u64),
    Exactly(u64),
}

impl Cmp {
    fn parse(text: &str) -> Option<Self> {
        if let Some(n) = text.strip_prefix('+') {
            n.parse().ok().map(Self::More)
        } else if let Some(n) = text.strip_prefix('-') {
            n.parse().ok().map(Self::Less)
        } else {
            text.parse().ok().map(Self::Exactly)
        }
    }

    fn matches(self, value: u64) -> bool {
        match self {
            Self::More(n) => value > n,
            Self::Less(n) => value < n,
            Self::Exactly(n) => value == n,
        }
    }
}

/// A node of the expression tree.
#[derive(Debug, Clone)]
enum Expr {
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    True,
    False,
    Name(String, bool),
    Path(String, bool),
    Type(Vec<char>),
    Size(Cmp, u64),
    Mtime(Cmp, u64),
    Newer(SystemTime),
    /// `-perm`: the bits, and how they must match.
    Perm(u32, PermMatch),
    Empty,
    Print,
    Print0,
    Printf(String),
    Delete,
    Prune,
    Quit,
    /// `-exec`: the command, and whether it batches (`+`).
    Exec(Vec<String>, bool),
}

/// `-perm MODE` (exactly), `-perm -MODE` (all of), `-perm /MODE` (any of).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PermMatch {
    Exact,
    All,
    Any,
}

/// Global options and state of one run.
struct Walk {
    max_depth: Option<usize>,
    min_depth: usize,
    depth_first: bool,
    quit: bool,
    status: i32,
    batch: Vec<String>,
    now: i64,
    out: Vec<u8>,
}

/// One visited entry.
struct Entry<'a> {
    path: &'a str,
    name: &'a str,
    depth: usize,
    start: &'a str,
    meta: &'a fs::Metadata,
}

pub(crate) fn find(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = argv.get(1..).unwrap_or_default();
    let split = args
        .iter()
        .position(|a| (a.starts_with('-') && a.len() > 1) || a == "(" || a == "!")
        .unwrap_or(args.len());
    let mut starts: Vec<String> = args.get(..split).unwrap_or_default().to_vec();
    if starts.is_empty() {
        starts.push(".".to_string());
    }
    let tokens = args.get(split..).unwrap_or_default();
    let mut walk = Walk {
        max_depth: None,
        min_depth: 0,
        depth_first: false,
        quit: false,
        status: 0,
        batch: Vec::new(),
        now: timefmt::epoch_secs(SystemTime::now()),
        out: Vec::new(),
    };
    let mut parser = Parser {
        tokens,
        pos: 0,
        p,
        walk: &mut walk,
        has_action: false,
    };
    let expr = if tokens.is_empty() {
        Expr::True
    } else {
        match parser.parse_or() {
            Ok(e) => e,
            Err(msg) => {
                p.error(&msg);
                return 1;
            }
        }
    };
    if let Some(extra) = parser.tokens.get(parser.pos) {
        let msg = if extra == ")" {
            "invalid expression; you have too many ')'".to_string()
        } else {
            format!("paths must precede expression: `{extra}'")
        };
        p.error(&msg);
        return 1;
    }
    let has_action = parser.has_action;
    let expr = if has_action {
        expr
    } else {
        Expr::And(Box::new(expr), Box::new(Expr::Print))
    };
    for start in &starts {
        if walk.quit {
            break;
        }
        let path = p.resolve(start);
        match fs::symlink_metadata(&path) {
            Ok(meta) => visit(p, &mut walk, &expr, start, start, 0, &meta),
            Err(e) => {
                flush(p, &mut walk);
                p.error(&format!("{}: {}", p.quote(start), strerror(&e)));
                walk.status = 1;
            }
        }
    }
    flush(p, &mut walk);
    run_batches(p, &mut walk, &expr);
    walk.status
}

fn flush(p: &Process<'_>, walk: &mut Walk) {
    if !walk.out.is_empty() {
        super::write_all(p, &walk.out);
        walk.out.clear();
    }
}

/// Runs `-exec ... +` commands with everything collected.
fn run_batches(p: &Process<'_>, walk: &mut Walk, expr: &Expr) {
    let mut cmds = Vec::new();
    collect_batches(expr, &mut cmds);
    for cmd in cmds {
        if walk.batch.is_empty() {
            break;
        }
        let mut argv: Vec<String> = Vec::new();
        for word in &cmd {
            if word == "{}" {
                argv.extend(walk.batch.iter().cloned());
            } else {
                argv.push(word.clone());
            }
        }
        match super::run_child(p, &argv, None) {
            Some(0) => {}
            Some(_) => walk.status = 1,
            None => {
                p.error(&format!(
                    "{}: No such file or directory",
                    p.quote(cmd.first().map_or("", String::as_str))
                ));
                walk.status = 1;
            }
        }
    }
}

fn collect_batches(expr: &Expr, out: &mut Vec<Vec<String>>) {
    match expr {
        Expr::And(a, b) | Expr::Or(a, b) => {
            collect_batches(a, out);
            collect_batches(b, out);
        }
        Expr::Not(a) => collect_batches(a, out),
        Expr::Exec(cmd, true) => out.push(cmd.clone()),
        _ => {}
    }
}

fn visit(
    p: &Process<'_>,
    walk: &mut Walk,
    expr: &Expr,
    path: &str,
    start: &str,
    depth: usize,
    meta: &fs::Metadata,
) {
    let name = if depth == 0 {
        path.to_string()
    } else {
        super::paths::base_name(path)
    };
    let in_range = depth >= walk.min_depth;
    let mut prune = false;
    if !walk.depth_first && in_range {
        let entry = Entry {
            path,
            name: &name,
            depth,
            start,
            meta,
        };
        eval(p, walk, expr, &entry, &mut prune);
    }
    if walk.quit {
        return;
    }
    if meta.is_dir() && !prune && walk.max_depth.is_none_or(|m| depth < m) {
        match fs::read_dir(p.resolve(path)) {
            Ok(rd) => {
                let mut names: Vec<String> = rd
                    .filter_map(Result::ok)
                    .filter_map(|e| e.file_name().into_string().ok())
                    .collect();
                names.sort();
                for child in names {
                    if walk.quit {
                        return;
                    }
                    let child_path = if path.ends_with('/') {
                        format!("{path}{child}")
                    } else {
                        format!("{path}/{child}")
                    };
                    if let Ok(m) = fs::symlink_metadata(p.resolve(&child_path)) {
                        visit(p, walk, expr, &child_path, start, depth + 1, &m);
                    }
                }
            }
            Err(e) => {
                flush(p, walk);
                p.error(&format!("{}: {}", p.quote(path), strerror(&e)));
                walk.status = 1;
            }
        }
    }
    if walk.depth_first && in_range && !walk.quit {
        let entry = Entry {
            path,
            name: &name,
            depth,
            start,
            meta,
        };
        eval(p, walk, expr, &entry, &mut prune);
    }
}

fn eval(p: &Process<'_>, walk: &mut Walk, expr: &Expr, e: &Entry<'_>, prune: &mut bool) -> bool {
    match expr {
        Expr::And(a, b) => eval(p, walk, a, e, prune) && eval(p, walk, b, e, prune),
        Expr::Or(a, b) => eval(p, walk, a, e, prune) || eval(p, walk, b, e, prune),
        Expr::Not(a) => !eval(p, walk, a, e, prune),
        Expr::True => true,
        Expr::False => false,
        Expr::Name(pat, fold) => {
            let name = e.name.trim_end_matches('/');
            let name = if name.is_empty() { "/" } else { name };
            if *fold {
                pattern_matches(&pat.to_lowercase(), &name.to_lowercase())
            } else {
                pattern_matches(pat, name)
            }
        }
        Expr::Path(pat, fold) => {
            if *fold {
                pattern_matches(&pat.to_lowercase(), &e.path.to_lowercase())
            } else {
                pattern_matches(pat, e.path)
            }
        }
        Expr::Type(kinds) => {
            let ft = e.meta.file_type();
            let kind = if ft.is_symlink() {
                'l'
            } else if ft.is_dir() {
                'd'
            } else {
                'f'
            };
            kinds.contains(&kind)
        }
        Expr::Size(cmp, unit) => {
            let size = e.meta.len();
            cmp.matches(size.div_ceil((*unit).max(1)))
        }
        Expr::Mtime(cmp, unit) => {
            let mtime = e.meta.modified().map(timefmt::epoch_secs).unwrap_or(0);
            let age = (walk.now - mtime).max(0).unsigned_abs();
            cmp.matches(age / unit.max(&1))
        }
        Expr::Newer(t) => e.meta.modified().is_ok_and(|m| m > *t),
        Expr::Perm(bits, how) => {
            let mode = p
                .host
                .get_mode(&p.host_path(e.path), false)
                .unwrap_or(if e.meta.is_dir() { 0o755 } else { 0o644 })
                & 0o7777;
            match how {
                PermMatch::Exact => mode == *bits,
                PermMatch::All => mode & bits == *bits,
                PermMatch::Any => *bits == 0 || mode & bits != 0,
            }
        }
        Expr::Empty => {
            if e.meta.is_dir() {
                fs::read_dir(p.resolve(e.path)).is_ok_and(|mut rd| rd.next().is_none())
            } else {
                e.meta.is_file() && e.meta.len() == 0
            }
        }
        Expr::Print => {
            walk.out.extend_from_slice(e.path.as_bytes());
            walk.out.push(b'\n');
            if walk.out.len() > 64 * 1024 {
                flush(p, walk);
            }
            true
        }
        Expr::Print0 => {
            walk.out.extend_from_slice(e.path.as_bytes());
            walk.out.push(0);
            true
        }
        Expr::Printf(fmt) => {
            let text = printf(p, fmt, e);
            walk.out.extend_from_slice(&text);
            true
        }
        Expr::Delete => {
            let path = p.resolve(e.path);
            let result = if e.meta.is_dir() {
                fs::remove_dir(&path)
            } else {
                fs::remove_file(&path)
            };
            match result {
                Ok(()) => true,
                Err(err) => {
                    if e.depth == 0 && e.path == "." {
                        return true;
                    }
                    flush(p, walk);
                    p.error(&format!(
                        "cannot delete {}: {}",
                        p.quote(e.path),
                        strerror(&err)
                    ));
                    walk.status = 1;
                    false
                }
            }
        }
        Expr::Prune => {
            *prune = true;
            true
        }
        Expr::Quit => {
            walk.quit = true;
            true
        }
        Expr::Exec(cmd, batch) => {
            if *batch {
                walk.batch.push(e.path.to_string());
                return true;
            }
            let argv: Vec<String> = cmd.iter().map(|w| w.replace("{}", e.path)).collect();
            flush(p, walk);
            match super::run_child(p, &argv, None) {
                Some(status) => status == 0,
                None => {
                    p.error(&format!(
                        "{}: No such file or directory",
                        p.quote(cmd.first().map_or("", String::as_str))
                    ));
                    walk.status = 1;
                    false
                }
            }
        }
    }
}

/// `-printf`: GNU's directives (`%p %f %h %P %H %s %d %m %M %y %Y %l
/// %u %g %U %G %n %k %b %i %t %a %c %T@ %TY`…, with flags and widths)
/// and escapes (`\n \t \0 \NNN \c`…).
fn printf(p: &Process<'_>, fmt: &str, e: &Entry<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    let chars: Vec<char> = fmt.chars().collect();
    let mut i = 0;
    let mut buf = [0u8; 4];
    while let Some(&c) = chars.get(i) {
        i += 1;
        match c {
            '\\' => {
                let Some(&n) = chars.get(i) else {
                    out.push(b'\\');
                    break;
                };
                i += 1;
                let byte = match n {
                    'a' => 7,
                    'b' => 8,
                    'f' => 12,
                    'n' => b'\n',
                    'r' => b'\r',
                    't' => b'\t',
                    'v' => 11,
                    '\\' => b'\\',
                    'c' => return out,
                    '0'..='7' => {
                        let mut v = n.to_digit(8).unwrap_or(0);
                        for _ in 0..2 {
                            match chars.get(i).and_then(|d| d.to_digit(8)) {
                                Some(d) => {
                                    v = v * 8 + d;
                                    i += 1;
                                }
                                None => break,
                            }
                        }
                        u8::try_from(v & 0xff).unwrap_or(0)
                    }
                    other => {
                        out.push(b'\\');
                        out.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
                        continue;
                    }
                };
                out.push(byte);
            }
            '%' => {
                let start = i;
                while chars.get(i).is_some_and(|c| "-+ #0".contains(*c)) {
                    i += 1;
                }
                while chars.get(i).is_some_and(char::is_ascii_digit) {
                    i += 1;
                }
                if chars.get(i) == Some(&'.') {
                    i += 1;
                    while chars.get(i).is_some_and(char::is_ascii_digit) {
                        i += 1;
                    }
                }
                let spec: String = chars.get(start..i).unwrap_or_default().iter().collect();
                let Some(&conv) = chars.get(i) else {
                    out.push(b'%');
                    out.extend_from_slice(spec.as_bytes());
                    break;
                };
                i += 1;
                let value = match conv {
                    '%' => Some("%".to_string()),
                    'A' | 'C' | 'T' => {
                        let Some(&k) = chars.get(i) else {
                            out.push(b'%');
                            out.extend_from_slice(spec.as_bytes());
                            out.push(conv as u8);
                            break;
                        };
                        i += 1;
                        Some(time_directive(k, entry_time(e, conv)))
                    }
                    other => directive(p, other, e),
                };
                match value {
                    Some(v) => out.extend_from_slice(pad(&spec, &v, conv).as_bytes()),
                    None => {
                        out.push(b'%');
                        out.extend_from_slice(spec.as_bytes());
                        out.extend_from_slice(conv.encode_utf8(&mut buf).as_bytes());
                    }
                }
            }
            c => out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
        }
    }
    out
}

/// A `-printf` field padded as its `%-10s`-style spec says.
fn pad(spec: &str, value: &str, conv: char) -> String {
    let left = spec.contains('-');
    let zero = spec.contains('0') && !left && "sdkbnUGi".contains(conv);
    let (width, precision) = match spec
        .trim_start_matches(['-', '+', ' ', '#', '0'])
        .split_once('.')
    {
        Some((w, p)) => (w.parse().unwrap_or(0), p.parse::<usize>().ok()),
        None => (
            spec.trim_start_matches(['-', '+', ' ', '#', '0'])
                .parse()
                .unwrap_or(0),
            None,
        ),
    };
    let width: usize = std::cmp::min(width, super::MAX_FIELD_WIDTH);
    let value: String = match precision {
        Some(p) if !"sdkbnUGi".contains(conv) => value.chars().take(p).collect(),
        _ => value.to_string(),
    };
    let len = value.chars().count();
    if len >= width {
        value
    } else if left {
        format!("{value}{}", " ".repeat(width - len))
    } else if zero {
        format!("{}{value}", "0".repeat(width - len))
    } else {
        format!("{}{value}", " ".repeat(width - len))
    }
}

/// The access (`A`), change (`C`) or modification (`T`) time of an entry.
fn entry_time(e: &Entry<'_>, which: char) -> (i64, u32) {
    let t = match which {
        'A' | 'a' => e.meta.accessed(),
        'C' | 'c' => changed(e.meta),
        _ => e.meta.modified(),
    };
    let t = t.unwrap_or(SystemTime::UNIX_EPOCH);
    let nanos = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    (timefmt::epoch_secs(t), nanos)
}

/// The status change time (the modification time where there is none).
#[cfg(unix)]
fn changed(meta: &fs::Metadata) -> std::io::Result<SystemTime> {
    use std::os::unix::fs::MetadataExt;
    let secs = meta.ctime();
    let nanos = u32::try_from(meta.ctime_nsec()).unwrap_or(0);
    Ok(timefmt::system_time(secs) + std::time::Duration::from_nanos(u64::from(nanos)))
}

#[cfg(not(unix))]
fn changed(meta: &fs::Metadata) -> std::io::Result<SystemTime> {
    meta.modified()
}

/// One `%Tk` field; GNU shows seconds with ten fraction digits.
fn time_directive(k: char, (secs, nanos): (i64, u32)) -> String {
    use super::date::format_time;
    let frac = format!("{nanos:09}0");
    match k {
        '@' => format!("{secs}.{frac}"),
        'S' => format!("{}.{frac}", format_time("%S", secs, nanos)),
        'T' | 'X' => format!("{}.{frac}", format_time("%H:%M:%S", secs, nanos)),
        '+' => format!("{}.{frac}", format_time("%Y-%m-%d+%H:%M:%S", secs, nanos)),
        k if k.is_ascii_alphabetic() => format_time(&format!("%{k}"), secs, nanos),
        k => format!("%T{k}"),
    }
}

/// `Tue Jan  2 03:04:05.0000000000 2024`, as `%t`, `%a` and `%c` show times.
fn ctime((secs, nanos): (i64, u32)) -> String {
    use super::date::format_time;
    format!(
        "{}.{nanos:09}0 {}",
        format_time("%a %b %e %H:%M:%S", secs, nanos),
        format_time("%Y", secs, nanos)
    )
}

fn file_kind(ft: fs::FileType) -> char {
    if ft.is_symlink() {
        'l'
    } else if ft.is_dir() {
        'd'
    } else {
        'f'
    }
}

/// One `-printf` directive other than a time, or `None` if unknown.
fn directive(p: &Process<'_>, conv: char, e: &Entry<'_>) -> Option<String> {
    let host_path = p.host_path(e.path);
    let mode = || {
        p.host
            .get_mode(&host_path, false)
            .unwrap_or(if e.meta.is_dir() { 0o755 } else { 0o644 })
    };
    let owner = || {
        p.host
            .get_owner(&host_path, false)
            .unwrap_or(crate::programs::ident::UID)
    };
    Some(match conv {
        'p' => e.path.to_string(),
        'f' => e.name.to_string(),
        'h' => {
            let trimmed = e.path.trim_end_matches('/');
            match trimmed.rfind('/') {
                Some(0) => "/".to_string(),
                Some(i) => trimmed.get(..i).unwrap_or("").to_string(),
                None => ".".to_string(),
            }
        }
        'P' => e
            .path
            .strip_prefix(e.start)
            .map_or(e.path, |r| r.trim_start_matches('/'))
            .to_string(),
        'H' => e.start.to_string(),
        's' => e.meta.len().to_string(),
        'd' => e.depth.to_string(),
        'm' => format!("{:o}", mode() & 0o7777),
        'M' => {
            let kind = match file_kind(e.meta.file_type()) {
                'l' => crate::host::S_IFLNK,
                'd' => crate::host::S_IFDIR,
                _ => crate::host::S_IFREG,
            };
            crate::programs::ls::mode_string(kind | (mode() & 0o7777))
        }
        'y' => file_kind(e.meta.file_type()).to_string(),
        'Y' => {
            if e.meta.file_type().is_symlink() {
                match fs::metadata(p.resolve(e.path)) {
                    Ok(m) => file_kind(m.file_type()).to_string(),
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => "N".to_string(),
                    Err(_) => "?".to_string(),
                }
            } else {
                file_kind(e.meta.file_type()).to_string()
            }
        }
        'l' => {
            if e.meta.file_type().is_symlink() {
                fs::read_link(p.resolve(e.path))
                    .map(|t| t.to_string_lossy().into_owned())
                    .unwrap_or_default()
            } else {
                String::new()
            }
        }
        'u' | 'g' => crate::programs::ident::user_name(owner()),
        'U' | 'G' => owner().to_string(),
        'n' => link_count(e.meta).to_string(),
        'i' => inode(e.meta).to_string(),
        'k' => e.meta.len().div_ceil(4096).saturating_mul(4).to_string(),
        'b' => e.meta.len().div_ceil(4096).saturating_mul(8).to_string(),
        't' => ctime(entry_time(e, 'T')),
        'a' => ctime(entry_time(e, 'A')),
        'c' => ctime(entry_time(e, 'C')),
        _ => return None,
    })
}

#[cfg(unix)]
fn inode(meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_meta: &fs::Metadata) -> u64 {
    0
}

#[cfg(unix)]
fn link_count(meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(meta)
}

#[cfg(not(unix))]
fn link_count(meta: &fs::Metadata) -> u64 {
    if meta.is_dir() { 2 } else { 1 }
}

/// A recursive-descent parser over the expression tokens.
struct Parser<'t, 'p, 'w> {
    tokens: &'t [String],
    pos: usize,
    p: &'t Process<'p>,
    walk: &'w mut Walk,
    has_action: bool,
}

impl Parser<'_, '_, '_> {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.pos).map(String::as_str)
    }

    fn next(&mut self) -> Option<String> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn parse_or(&mut self) -> Result<Expr, String> {
        let mut left = self.parse_and()?;
        while matches!(self.peek(), Some("-o" | "-or")) {
            self.pos += 1;
            let right = self.parse_and()?;
            left = Expr::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn parse_and(&mut self) -> Result<Expr, String> {
        let mut left = self.parse_unary()?;
        loop {
            match self.peek() {
                Some("-a" | "-and") => {
                    self.pos += 1;
                }
                Some("-o" | "-or" | ")") | None => break,
                Some(_) => {}
            }
            let right = self.parse_unary()?;
            left = Expr::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn parse_unary(&mut self) -> Result<Expr, String> {
        match self.peek() {
            Some("!" | "-not") => {
                self.pos += 1;
                Ok(Expr::Not(Box::new(self.parse_unary()?)))
            }
            Some("(") => {
                self.pos += 1;
                let inner = self.parse_or()?;
                if self.next().as_deref() != Some(")") {
                    return Err("invalid expression; I was expecting to find a ')' somewhere but did not see one.".to_string());
                }
                Ok(inner)
            }
            Some(_) => self.primary(),
            None => Err("invalid expression".to_string()),
        }
    }

    fn arg(&mut self, name: &str) -> Result<String, String> {
        self.next()
            .ok_or_else(|| format!("missing argument to `{name}'"))
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let token = self.next().unwrap_or_default();
        let t = token.as_str();
        Ok(match t {
            "-name" | "-iname" => Expr::Name(self.arg(t)?, t == "-iname"),
            "-path" | "-wholename" | "-ipath" | "-iwholename" => {
                Expr::Path(self.arg(t)?, t.starts_with("-i"))
            }
            "-type" | "-xtype" => {
                let v = self.arg(t)?;
                let kinds: Vec<char> = v.split(',').filter_map(|k| k.chars().next()).collect();
                if kinds.iter().any(|k| !"fdlbcps".contains(*k)) || v.is_empty() {
                    return Err(format!("Unknown argument to {t}: {v}"));
                }
                Expr::Type(kinds)
            }
            "-size" => {
                let v = self.arg(t)?;
                let (num, unit) = match v.chars().last() {
                    Some('c') => (v.trim_end_matches('c'), 1),
                    Some('w') => (v.trim_end_matches('w'), 2),
                    Some('b') => (v.trim_end_matches('b'), 512),
                    Some('k') => (v.trim_end_matches('k'), 1024),
                    Some('M') => (v.trim_end_matches('M'), 1024 * 1024),
                    Some('G') => (v.trim_end_matches('G'), 1024 * 1024 * 1024),
                    _ => (v.as_str(), 512),
                };
                let cmp = Cmp::parse(num).ok_or_else(|| format!("invalid -size type `{v}'"))?;
                Expr::Size(cmp, unit)
            }
            "-mtime" | "-mmin" | "-atime" | "-amin" | "-ctime" | "-cmin" => {
                let v = self.arg(t)?;
                let cmp =
                    Cmp::parse(&v).ok_or_else(|| format!("invalid argument `{v}' to `{t}'"))?;
                Expr::Mtime(cmp, if t.ends_with("min") { 60 } else { 86_400 })
            }
            "-newer" | "-anewer" | "-cnewer" => {
                let v = self.arg(t)?;
                let time = fs::metadata(self.p.resolve(&v))
                    .and_then(|m| m.modified())
                    .map_err(|e| format!("{}: {}", self.p.quote(&v), strerror(&e)))?;
                Expr::Newer(time)
            }
            "-newermt" => {
                let v = self.arg(t)?;
                let now = SystemTime::now();
                let nanos = now
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| d.subsec_nanos());
                let (secs, ns) = super::datetime::parse(&v, timefmt::epoch_secs(now), nanos)
                    .ok_or_else(|| {
                        format!(
                            "I cannot figure out how to interpret {} as a date or time",
                            self.p.quote(&v)
                        )
                    })?;
                Expr::Newer(
                    timefmt::system_time(secs) + std::time::Duration::from_nanos(u64::from(ns)),
                )
            }
            "-perm" => {
                let v = self.arg(t)?;
                let (how, text) = if let Some(rest) = v.strip_prefix('-') {
                    (PermMatch::All, rest)
                } else if let Some(rest) = v.strip_prefix('/') {
                    (PermMatch::Any, rest)
                } else {
                    (PermMatch::Exact, v.as_str())
                };
                let bits = crate::programs::chmod::absolute_mode(text, false)
                    .ok_or_else(|| format!("invalid mode {}", self.p.quote(&v)))?;
                Expr::Perm(bits & 0o7777, how)
            }
            "-empty" => Expr::Empty,
            "-true" => Expr::True,
            "-false" => Expr::False,
            "-print" => {
                self.has_action = true;
                Expr::Print
            }
            "-print0" => {
                self.has_action = true;
                Expr::Print0
            }
            "-printf" => {
                self.has_action = true;
                let format = self.arg(t)?;
                let mut chars = format.chars();
                while let Some(c) = chars.next() {
                    if c == '\\'
                        && let Some(n) = chars.next()
                        && !"abfnrtv\\c01234567".contains(n)
                    {
                        self.p
                            .error(&format!("warning: unrecognized escape `\\{n}'"));
                    }
                }
                Expr::Printf(format)
            }
            "-ls" | "-fprint" => return Err(format!("{t} is not supported here")),
            "-delete" => {
                self.has_action = true;
                self.walk.depth_first = true;
                Expr::Delete
            }
            "-prune" => Expr::Prune,
            "-quit" => Expr::Quit,
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                self.has_action = true;
                let mut cmd = Vec::new();
                loop {
                    let Some(word) = self.next() else {
                        return Err(format!("missing argument to `{t}'"));
                    };
                    if word == ";" {
                        break Expr::Exec(cmd, false);
                    }
                    if word == "+" && cmd.last().is_some_and(|w: &String| w == "{}") {
                        cmd.pop();
                        cmd.push("{}".to_string());
                        break Expr::Exec(cmd, true);
                    }
                    cmd.push(word);
                }
            }
            "-maxdepth" | "-mindepth" => {
                let v = self.arg(t)?;
                let n: usize = v.parse().map_err(|_| {
                    format!(
                        "Expected a positive decimal integer argument to {t}, but got {}",
                        self.p.quote(&v)
                    )
                })?;
                if t == "-maxdepth" {
                    self.walk.max_depth = Some(n);
                } else {
                    self.walk.min_depth = n;
                }
                Expr::True
            }
            "-depth" | "-d" => {
                self.walk.depth_first = true;
                Expr::True
            }
            "-xdev" | "-mount" | "-follow" | "-noleaf" | "-ignore_readdir_race" => Expr::True,
            "-regex" | "-iregex" => {
                let v = self.arg(t)?;
                // Emacs regex is rare in practice; `.*X.*` style maps to a glob.
                Expr::Path(v.replace(".*", "*"), t == "-iregex")
            }
            other if other.starts_with('-') => return Err(format!("unknown predicate `{other}'")),
            other => return Err(format!("paths must precede expression: `{other}'")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons() {
        assert_eq!(Cmp::parse("+3"), Some(Cmp::More(3)));
        assert!(Cmp::parse("-2").is_some_and(|c| c.matches(1)));
        assert!(Cmp::parse("x").is_none());
    }
}
