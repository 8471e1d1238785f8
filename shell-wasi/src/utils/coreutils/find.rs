//! `find [PATH]... [EXPRESSION]`: tests (`-name -iname -path -ipath -type
//! -size -mtime -mmin -newer -empty -true -false`), actions (`-print
//! -print0 -printf -delete -exec ... ; -exec ... + -prune -quit`),
//! operators (`! -not -a -and -o -or ( )`) and the global
//! `-maxdepth -mindepth -depth`. Entries are visited in name order, so
//! output is stable (GNU uses the directory's own order).

use std::fs;
use std::time::SystemTime;

use super::Process;
use crate::errors::strerror;
use crate::interp::pattern_matches;
use crate::utils::timefmt;

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
            walk.out.extend_from_slice(text.as_bytes());
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

/// `-printf` directives: `%p %f %h %P %s %d %m %y %t` and escapes.
fn printf(p: &Process<'_>, fmt: &str, e: &Entry<'_>) -> String {
    let mut out = String::new();
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('0') => out.push('\0'),
                Some('\\') => out.push('\\'),
                Some(o) => {
                    out.push('\\');
                    out.push(o);
                }
                None => out.push('\\'),
            },
            '%' => match chars.next() {
                Some('p') => out.push_str(e.path),
                Some('f') => out.push_str(e.name),
                Some('h') => out.push_str(&super::paths::dir_name(e.path)),
                Some('P') => out.push_str(
                    e.path
                        .strip_prefix(e.start)
                        .map_or(e.path, |r| r.trim_start_matches('/')),
                ),
                Some('s') => out.push_str(&e.meta.len().to_string()),
                Some('d') => out.push_str(&e.depth.to_string()),
                Some('m') => {
                    let mode = p
                        .host
                        .get_mode(&p.host_path(e.path), false)
                        .unwrap_or(0o644);
                    out.push_str(&format!("{:o}", mode & 0o7777));
                }
                Some('y') => out.push(if e.meta.file_type().is_symlink() {
                    'l'
                } else if e.meta.is_dir() {
                    'd'
                } else {
                    'f'
                }),
                Some('T') | Some('t') => {
                    let _ = chars.clone().next();
                    let secs = e.meta.modified().map(timefmt::epoch_secs).unwrap_or(0);
                    out.push_str(&secs.to_string());
                }
                Some('%') => out.push('%'),
                Some(o) => {
                    out.push('%');
                    out.push(o);
                }
                None => out.push('%'),
            },
            c => out.push(c),
        }
    }
    out
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
                Expr::Printf(self.arg(t)?)
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
