//! `diff` (normal, `-u`/`-U N`, `-c`/`-C N`, `-q`, `-i`, `-w`, `-b`, `--label`, folders
//! with `-r`/`-N`/`-x`: "Only in" lines and a `diff …` line per pair) and
//! `cmp` (`-s`). Line matching is `similar`'s Myers diff, which gives the
//! same minimal edit scripts as GNU diff for ordinary inputs.

use std::time::SystemTime;

use similar::{Algorithm, DiffOp};

use super::Process;
use super::args::{HasArg, Spec};
use crate::errors::strerror;
use crate::programs::timefmt;

/// `-u` or `-c` output.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Unified,
    Context,
}

/// Default lines of context for `-u`.
const DEFAULT_CONTEXT: usize = 3;

/// An input: its shown name, lines (with their newlines) and mtime.
struct Side {
    name: String,
    data: Vec<u8>,
    mtime: SystemTime,
}

fn load(p: &Process<'_>, name: &str) -> std::io::Result<Side> {
    if name == "-" {
        return Ok(Side {
            name: name.to_string(),
            data: p.io.stdin.borrow_mut().read_all(),
            mtime: SystemTime::now(),
        });
    }
    let path = p.resolve(name);
    let data = std::fs::read(&path)?;
    let mtime = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH);
    Ok(Side {
        name: name.to_string(),
        data,
        mtime,
    })
}

pub(crate) fn diff(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "uU:cC:qiwbBaNrsx:",
        long: &[
            ("unified", 'U', HasArg::Optional),
            ("context", 'C', HasArg::Optional),
            ("brief", 'q', HasArg::No),
            ("ignore-case", 'i', HasArg::No),
            ("ignore-all-space", 'w', HasArg::No),
            ("ignore-space-change", 'b', HasArg::No),
            ("ignore-blank-lines", 'B', HasArg::No),
            ("text", 'a', HasArg::No),
            ("new-file", 'N', HasArg::No),
            ("recursive", 'r', HasArg::No),
            ("report-identical-files", 's', HasArg::No),
            ("label", 'L', HasArg::Yes),
            ("color", 'K', HasArg::Optional),
            ("exclude", 'x', HasArg::Yes),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 2) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let ops = &args.operands;
    if ops.len() < 2 {
        let msg = match ops.first() {
            None => "missing operand after 'diff'".to_string(),
            Some(a) => format!("missing operand after '{a}'"),
        };
        p.error(&msg);
        p.io.err_line("diff: Try 'diff --help' for more information.");
        return 2;
    }
    if ops.len() > 2 {
        let extra = ops.get(2).cloned().unwrap_or_default();
        p.error(&format!("extra operand '{extra}'"));
        p.io.err_line("diff: Try 'diff --help' for more information.");
        return 2;
    }
    // The last of -u/-U (or -c/-C) gives the lines of context.
    let style_opt = args
        .opts
        .iter()
        .rev()
        .find(|o| matches!(o.key, 'u' | 'U' | 'c' | 'C'));
    let unified_given = args.opts.iter().any(|o| matches!(o.key, 'u' | 'U'));
    let context_given = args.opts.iter().any(|o| matches!(o.key, 'c' | 'C'));
    if unified_given && context_given {
        p.error("conflicting output style options");
        p.io.err_line("diff: Try 'diff --help' for more information.");
        return 2;
    }
    let context = match style_opt {
        None => None,
        Some(o) => {
            let style = if matches!(o.key, 'c' | 'C') {
                Style::Context
            } else {
                Style::Unified
            };
            match o.value.as_deref().map(str::parse::<usize>) {
                None => Some((style, DEFAULT_CONTEXT)),
                Some(Ok(n)) => Some((style, n)),
                Some(Err(_)) => {
                    let v = o.value.clone().unwrap_or_default();
                    p.error(&format!("invalid context length '{v}'"));
                    p.io.err_line("diff: Try 'diff --help' for more information.");
                    return 2;
                }
            }
        }
    };
    let (a_name, b_name) = (
        ops.first().cloned().unwrap_or_default(),
        ops.get(1).cloned().unwrap_or_default(),
    );
    let labels: Vec<String> = args
        .opts
        .iter()
        .filter(|o| o.key == 'L')
        .filter_map(|o| o.value.clone())
        .collect();
    let cfg = Cfg {
        args: &args,
        context,
        header: header_options(argv.get(1..).unwrap_or_default(), ops),
        labels,
        excludes: args.values('x').iter().map(|v| v.to_string()).collect(),
    };
    let is_dir = |name: &str| name != "-" && p.resolve(name).is_dir();
    if is_dir(&a_name) && is_dir(&b_name) {
        return compare_dirs(p, &cfg, &a_name, &b_name, false, false);
    }
    // `diff FILE DIR` compares with DIR/FILE.
    let resolve_dir = |name: &str, other: &str| -> String {
        if is_dir(name) && !is_dir(other) && (other == "-" || p.resolve(other).exists()) {
            join(name, &super::paths::base_name(other))
        } else {
            name.to_string()
        }
    };
    let a_path = resolve_dir(&a_name, &b_name);
    let b_path = resolve_dir(&b_name, &a_name);
    compare_files(p, &cfg, &a_path, &b_path, false)
}

/// What a whole run shares: the options, and the `diff -r …` line shown
/// before each differing pair in folders.
struct Cfg<'a> {
    args: &'a super::args::Parsed,
    context: Option<(Style, usize)>,
    header: String,
    labels: Vec<String>,
    excludes: Vec<String>,
}

/// The options as given (GNU shows them before each pair compared in
/// folders), each quoted when the shell would need it.
fn header_options(args: &[String], operands: &[String]) -> String {
    let mut out = String::from("diff");
    let mut rest: Vec<&String> = operands.iter().collect();
    let mut i = 0;
    let mut after_dashes = false;
    while let Some(arg) = args.get(i) {
        i += 1;
        let is_option = !after_dashes && arg.starts_with('-') && arg != "-";
        if !is_option && let Some(pos) = rest.iter().position(|o| *o == arg) {
            rest.remove(pos);
            continue;
        }
        if arg == "--" {
            after_dashes = true;
        }
        out.push(' ');
        out.push_str(&header_quote(arg));
        let takes_value = if let Some(long) = arg.strip_prefix("--") {
            !long.contains('=')
                && ["label", "exclude", "exclude-from"]
                    .iter()
                    .any(|l| l.starts_with(long) && long.len() > 2)
        } else {
            is_option && !after_dashes && {
                let letters: Vec<char> = arg.chars().skip(1).collect();
                let pos = letters
                    .iter()
                    .position(|c| matches!(c, 'U' | 'C' | 'L' | 'x' | 'X'));
                pos.is_some_and(|p| p + 1 == letters.len())
            }
        };
        if takes_value && let Some(v) = args.get(i) {
            i += 1;
            out.push(' ');
            out.push_str(&header_quote(v));
        }
    }
    out
}

/// GNU's shell quoting of one word (`'--unified=1'`, `'*.o'`).
fn header_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:@%+,^~".contains(c))
    {
        word.to_string()
    } else {
        crate::programs::quoting::single_quote(word)
    }
}

/// `dir/name`, without doubling a slash the folder already ends with.
fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// The sorted names in a folder, without the excluded ones.
fn entries(p: &Process<'_>, cfg: &Cfg<'_>, dir: &str) -> std::io::Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(p.resolve(dir))?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !cfg.excludes.iter().any(|x| glob_match(x, n)))
        .collect();
    names.sort();
    Ok(names)
}

fn glob_match(glob: &str, name: &str) -> bool {
    crate::programs::textproc::glob_match(glob, name)
}

/// Compares two folders (one may be absent under `-N`), name by name.
fn compare_dirs(
    p: &mut Process<'_>,
    cfg: &Cfg<'_>,
    a: &str,
    b: &str,
    a_absent: bool,
    b_absent: bool,
) -> i32 {
    let mut listed = Vec::new();
    for (dir, absent) in [(a, a_absent), (b, b_absent)] {
        if absent {
            listed.push(Vec::new());
            continue;
        }
        match entries(p, cfg, dir) {
            Ok(names) => listed.push(names),
            Err(e) => {
                p.error(&format!("{dir}: {}", strerror(&e)));
                return 2;
            }
        }
    }
    let (a_names, b_names) = (listed.swap_remove(0), listed.swap_remove(0));
    let mut all: Vec<&String> = a_names.iter().chain(b_names.iter()).collect();
    all.sort();
    all.dedup();
    let recursive = cfg.args.has('r');
    let new_file = cfg.args.has('N');
    let mut status = 0;
    for name in all {
        let (in_a, in_b) = (a_names.contains(name), b_names.contains(name));
        let (ap, bp) = (join(a, name), join(b, name));
        let (a_dir, b_dir) = (
            in_a && p.resolve(&ap).is_dir(),
            in_b && p.resolve(&bp).is_dir(),
        );
        let one = if in_a && in_b {
            if a_dir && b_dir {
                if recursive {
                    compare_dirs(p, cfg, &ap, &bp, false, false)
                } else {
                    p.out(format!("Common subdirectories: {ap} and {bp}\n").as_bytes());
                    0
                }
            } else if a_dir || b_dir {
                let kind = |d: bool| if d { "directory" } else { "regular file" };
                p.out(
                    format!(
                        "File {ap} is a {} while file {bp} is a {}\n",
                        kind(a_dir),
                        kind(b_dir)
                    )
                    .as_bytes(),
                );
                1
            } else {
                compare_files(p, cfg, &ap, &bp, true)
            }
        } else if new_file && (!(a_dir || b_dir) || recursive) {
            if a_dir || b_dir {
                compare_dirs(p, cfg, &ap, &bp, !in_a, !in_b)
            } else {
                compare_files(p, cfg, &ap, &bp, true)
            }
        } else {
            let dir = if in_a { a } else { b };
            p.out(format!("Only in {dir}: {name}\n").as_bytes());
            1
        };
        status = status.max(one);
    }
    status
}

/// Compares two files; `in_dir` when they were found in folders (GNU
/// then shows the `diff …` line before their differences).
fn compare_files(
    p: &mut Process<'_>,
    cfg: &Cfg<'_>,
    a_path: &str,
    b_path: &str,
    in_dir: bool,
) -> i32 {
    let args = cfg.args;
    let mut failed = false;
    let mut sides = Vec::new();
    for name in [a_path, b_path] {
        if name != "-" && p.resolve(name).is_dir() {
            sides.push(None);
            continue;
        }
        match load(p, name) {
            Ok(s) => sides.push(Some(s)),
            Err(e) if args.has('N') && e.kind() == std::io::ErrorKind::NotFound => {
                sides.push(Some(Side {
                    name: name.to_string(),
                    data: Vec::new(),
                    mtime: SystemTime::UNIX_EPOCH,
                }))
            }
            Err(e) => {
                p.error(&format!("{name}: {}", strerror(&e)));
                failed = true;
                sides.push(None);
            }
        }
    }
    if failed {
        return 2;
    }
    let (Some(Some(a)), Some(Some(b))) = (sides.first(), sides.get(1)) else {
        return 2;
    };
    let normalize = |line: &[u8]| -> Vec<u8> {
        let mut l = line.to_vec();
        if args.has('i') {
            l = l.to_ascii_lowercase();
        }
        if args.has('w') {
            l.retain(|c| !c.is_ascii_whitespace());
        } else if args.has('b') {
            let mut out = Vec::with_capacity(l.len());
            let mut in_space = false;
            for &c in &l {
                if c.is_ascii_whitespace() && c != b'\n' {
                    in_space = true;
                } else {
                    if in_space && c != b'\n' {
                        out.push(b' ');
                    }
                    in_space = false;
                    out.push(c);
                }
            }
            l = out;
        }
        l
    };
    let a_lines: Vec<&[u8]> = a.data.split_inclusive(|&c| c == b'\n').collect();
    let b_lines: Vec<&[u8]> = b.data.split_inclusive(|&c| c == b'\n').collect();
    let a_keys: Vec<Vec<u8>> = a_lines.iter().map(|l| normalize(l)).collect();
    let b_keys: Vec<Vec<u8>> = b_lines.iter().map(|l| normalize(l)).collect();
    let diff_ops = similar::capture_diff_slices(Algorithm::Myers, &a_keys, &b_keys);
    let differs = diff_ops
        .iter()
        .any(|op| !matches!(op, DiffOp::Equal { .. }));
    if !differs {
        if args.has('s') {
            p.out(format!("Files {} and {} are identical\n", a.name, b.name).as_bytes());
        }
        return 0;
    }
    let shown = |side: &Side, i: usize| {
        cfg.labels
            .get(i)
            .cloned()
            .unwrap_or_else(|| side.name.clone())
    };
    if args.has('q') {
        p.out(format!("Files {} and {} differ\n", shown(a, 0), shown(b, 1)).as_bytes());
        return 1;
    }
    let binary = |d: &[u8]| {
        d.get(..d.len().min(32 * 1024))
            .is_some_and(|h| h.contains(&0))
    };
    if !args.has('a') && (binary(&a.data) || binary(&b.data)) && a.data != b.data {
        let name = |side: &Side, i: usize| {
            cfg.labels
                .get(i)
                .cloned()
                .unwrap_or_else(|| side.name.clone())
        };
        p.out(format!("Binary files {} and {} differ\n", name(a, 0), name(b, 1)).as_bytes());
        return 1;
    }
    let mut out = Vec::new();
    if in_dir {
        out.extend_from_slice(
            format!("{} {} {}\n", cfg.header, shown(a, 0), shown(b, 1)).as_bytes(),
        );
    }
    match cfg.context {
        Some((style, n)) => {
            let labels: Vec<&String> = cfg.labels.iter().collect();
            let header = |side: &Side, label: Option<&&String>| match label {
                Some(l) => (*l).clone(),
                None => format!("{}\t{}", side.name, stamp(side.mtime)),
            };
            let (old_mark, new_mark) = match style {
                Style::Unified => ("---", "+++"),
                Style::Context => ("***", "---"),
            };
            out.extend_from_slice(
                format!(
                    "{old_mark} {}\n{new_mark} {}\n",
                    header(a, labels.first()),
                    header(b, labels.get(1))
                )
                .as_bytes(),
            );
            match style {
                Style::Unified => unified(&diff_ops, &a_lines, &b_lines, n, &mut out),
                Style::Context => context_diff(&diff_ops, &a_lines, &b_lines, n, &mut out),
            }
        }
        None => normal(&diff_ops, &a_lines, &b_lines, &mut out),
    }
    super::write_all(p, &out);
    1
}

/// `2026-11-29 12:30:23.305408957 +0000`.
fn stamp(t: SystemTime) -> String {
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

/// Writes one line with a prefix, noting a missing final newline.
fn emit(out: &mut Vec<u8>, prefix: &[u8], line: &[u8]) {
    out.extend_from_slice(prefix);
    out.extend_from_slice(line);
    if line.last() != Some(&b'\n') {
        out.extend_from_slice(b"\n\\ No newline at end of file\n");
    }
}

/// Merges runs of non-equal ops into change regions:
/// `(old_start, old_end, new_start, new_end)`.
fn regions(ops: &[DiffOp]) -> Vec<(usize, usize, usize, usize)> {
    let mut out: Vec<(usize, usize, usize, usize)> = Vec::new();
    let mut current: Option<(usize, usize, usize, usize)> = None;
    for op in ops {
        let (o, n) = (op.old_range(), op.new_range());
        if matches!(op, DiffOp::Equal { .. }) {
            if let Some(c) = current.take() {
                out.push(c);
            }
            continue;
        }
        current = Some(match current {
            Some((os, _, ns, _)) => (os, o.end, ns, n.end),
            None => (o.start, o.end, n.start, n.end),
        });
    }
    if let Some(c) = current {
        out.push(c);
    }
    out
}

fn normal(ops: &[DiffOp], a: &[&[u8]], b: &[&[u8]], out: &mut Vec<u8>) {
    let range = |s: usize, e: usize| {
        if e - s <= 1 {
            format!("{}", s + 1)
        } else {
            format!("{},{}", s + 1, e)
        }
    };
    for (os, oe, ns, ne) in regions(ops) {
        let head = if os == oe {
            format!("{}a{}\n", os, range(ns, ne))
        } else if ns == ne {
            format!("{}d{}\n", range(os, oe), ns)
        } else {
            format!("{}c{}\n", range(os, oe), range(ns, ne))
        };
        out.extend_from_slice(head.as_bytes());
        for line in a.get(os..oe).unwrap_or_default() {
            emit(out, b"< ", line);
        }
        if os != oe && ns != ne {
            out.extend_from_slice(b"---\n");
        }
        for line in b.get(ns..ne).unwrap_or_default() {
            emit(out, b"> ", line);
        }
    }
}

/// `-c` hunks: `***************`, the old lines (`- `, `! `, `  `) and
/// the new ones (`+ `, `! `, `  `), a side left out when it has no change.
fn context_diff(ops: &[DiffOp], a: &[&[u8]], b: &[&[u8]], context: usize, out: &mut Vec<u8>) {
    let range = |s: usize, e: usize| match e - s {
        0 => format!("{s}"),
        1 => format!("{}", s + 1),
        _ => format!("{},{e}", s + 1),
    };
    for group in similar::group_diff_ops(ops.to_vec(), context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (os, oe) = (first.old_range().start, last.old_range().end);
        let (ns, ne) = (first.new_range().start, last.new_range().end);
        let old_changes = group
            .iter()
            .any(|op| matches!(op, DiffOp::Delete { .. } | DiffOp::Replace { .. }));
        let new_changes = group
            .iter()
            .any(|op| matches!(op, DiffOp::Insert { .. } | DiffOp::Replace { .. }));
        out.extend_from_slice(format!("***************\n*** {} ****\n", range(os, oe)).as_bytes());
        if old_changes {
            for op in &group {
                let prefix: &[u8] = match op {
                    DiffOp::Equal { .. } => b"  ",
                    DiffOp::Delete { .. } => b"- ",
                    DiffOp::Replace { .. } => b"! ",
                    DiffOp::Insert { .. } => continue,
                };
                for line in a.get(op.old_range()).unwrap_or_default() {
                    emit(out, prefix, line);
                }
            }
        }
        out.extend_from_slice(format!("--- {} ----\n", range(ns, ne)).as_bytes());
        if new_changes {
            for op in &group {
                let prefix: &[u8] = match op {
                    DiffOp::Equal { .. } => b"  ",
                    DiffOp::Insert { .. } => b"+ ",
                    DiffOp::Replace { .. } => b"! ",
                    DiffOp::Delete { .. } => continue,
                };
                for line in b.get(op.new_range()).unwrap_or_default() {
                    emit(out, prefix, line);
                }
            }
        }
    }
}

fn unified(ops: &[DiffOp], a: &[&[u8]], b: &[&[u8]], context: usize, out: &mut Vec<u8>) {
    let range = |s: usize, len: usize| match len {
        0 => format!("{s},0"),
        1 => format!("{}", s + 1),
        _ => format!("{},{len}", s + 1),
    };
    for group in similar::group_diff_ops(ops.to_vec(), context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (os, oe) = (first.old_range().start, last.old_range().end);
        let (ns, ne) = (first.new_range().start, last.new_range().end);
        out.extend_from_slice(
            format!("@@ -{} +{} @@\n", range(os, oe - os), range(ns, ne - ns)).as_bytes(),
        );
        for op in &group {
            match op {
                DiffOp::Equal { old_index, len, .. } => {
                    for line in a.get(*old_index..old_index + len).unwrap_or_default() {
                        emit(out, b" ", line);
                    }
                }
                DiffOp::Delete {
                    old_index, old_len, ..
                } => {
                    for line in a.get(*old_index..old_index + old_len).unwrap_or_default() {
                        emit(out, b"-", line);
                    }
                }
                DiffOp::Insert {
                    new_index, new_len, ..
                } => {
                    for line in b.get(*new_index..new_index + new_len).unwrap_or_default() {
                        emit(out, b"+", line);
                    }
                }
                DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                } => {
                    for line in a.get(*old_index..old_index + old_len).unwrap_or_default() {
                        emit(out, b"-", line);
                    }
                    for line in b.get(*new_index..new_index + new_len).unwrap_or_default() {
                        emit(out, b"+", line);
                    }
                }
            }
        }
    }
}

pub(crate) fn cmp(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "slbn:i:",
        long: &[
            ("silent", 's', HasArg::No),
            ("quiet", 's', HasArg::No),
            ("verbose", 'l', HasArg::No),
            ("print-bytes", 'b', HasArg::No),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 2) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let Some(a_name) = args.operands.first().cloned() else {
        p.error("missing operand after 'cmp'");
        p.io.err_line("cmp: Try 'cmp --help' for more information.");
        return 2;
    };
    let b_name = args
        .operands
        .get(1)
        .cloned()
        .unwrap_or_else(|| "-".to_string());
    let silent = args.has('s');
    let mut datas = Vec::new();
    for name in [&a_name, &b_name] {
        match super::read_input(p, name) {
            Ok(d) => datas.push(d),
            Err(e) => {
                if !silent {
                    super::file_error(p, name, &e);
                }
                return 2;
            }
        }
    }
    let (Some(a), Some(b)) = (datas.first(), datas.get(1)) else {
        return 2;
    };
    let common = a.iter().zip(b.iter()).take_while(|(x, y)| x == y).count();
    if common == a.len() && common == b.len() {
        return 0;
    }
    if silent {
        return 1;
    }
    let prefix = a.get(..common).unwrap_or_default();
    let newlines = prefix.iter().filter(|&&c| c == b'\n').count();
    if common < a.len() && common < b.len() {
        p.out(
            format!(
                "{a_name} {b_name} differ: byte {}, line {}\n",
                common + 1,
                newlines + 1
            )
            .as_bytes(),
        );
        return 1;
    }
    let short = if common == a.len() { &a_name } else { &b_name };
    if common == 0 {
        p.error(&format!("EOF on {short} which is empty"));
    } else {
        let line = newlines + usize::from(prefix.last() != Some(&b'\n'));
        p.error(&format!("EOF on {short} after byte {common}, line {line}"));
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_normal(a: &[u8], b: &[u8]) -> String {
        let al: Vec<&[u8]> = a.split_inclusive(|&c| c == b'\n').collect();
        let bl: Vec<&[u8]> = b.split_inclusive(|&c| c == b'\n').collect();
        let ops = similar::capture_diff_slices(Algorithm::Myers, &al, &bl);
        let mut out = Vec::new();
        normal(&ops, &al, &bl, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn normal_format() {
        assert_eq!(
            run_normal(b"a\nb\nc\nd\n", b"a\nB\nc\nd\ne\n"),
            "2c2\n< b\n---\n> B\n4a5\n> e\n"
        );
        assert_eq!(
            run_normal(b"1\n2\n3\n", b"2\n3\n4\n"),
            "1d0\n< 1\n3a3\n> 4\n"
        );
        assert_eq!(
            run_normal(b"a\n", b"x"),
            "1c1\n< a\n---\n> x\n\\ No newline at end of file\n"
        );
    }
}
