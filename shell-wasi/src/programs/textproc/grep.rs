//! `grep`, `egrep`, `fgrep`: GNU grep 3.8's options that agents use, with
//! its output format, messages and exit status (0 selected, 1 none,
//! 2 trouble). Patterns are POSIX BRE/ERE translated for the `regex`
//! crate (`posix_regex.rs`); back-references in patterns are not
//! supported. Directory walks (`-r`) are sorted by name, where GNU grep
//! follows directory order.

use regex::bytes::Regex;

use super::posix_regex::{self, Dialect};
use super::{glob_match, read_source};
use crate::programs::Process;

const USAGE: &str = "Usage: grep [OPTION]... PATTERNS [FILE]...";

/// The options of one run.
#[derive(Default)]
struct Options {
    dialect: Option<Dialect>,
    fixed: bool,
    ignore_case: bool,
    invert: bool,
    count: bool,
    files_with: bool,
    files_without: bool,
    line_number: bool,
    byte_offset: bool,
    with_filename: Option<bool>,
    only_matching: bool,
    quiet: bool,
    no_messages: bool,
    recursive: bool,
    deref_recursive: bool,
    word: bool,
    line: bool,
    max_count: Option<u64>,
    after: usize,
    before: usize,
    color: bool,
    null_after_name: bool,
    text: bool,
    include: Vec<String>,
    exclude: Vec<String>,
    exclude_dir: Vec<String>,
    patterns: Vec<String>,
    pattern_given: bool,
}

/// How a run ended so far.
struct Run<'o> {
    opts: &'o Options,
    matcher: Matcher,
    any_selected: bool,
    error: bool,
    show_names: bool,
}

/// The compiled patterns.
struct Matcher {
    re: Regex,
    word: bool,
    /// An empty pattern list matches nothing (`grep -f /dev/null`).
    empty: bool,
}

impl Matcher {
    /// Byte ranges of the matches in `line`, leftmost first.
    fn matches(&self, line: &[u8]) -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        if self.empty {
            return found;
        }
        let mut start = 0;
        while start <= line.len() {
            let Some(m) = self.re.find_at(line, start) else {
                break;
            };
            if self.word && !word_bounded(line, m.start(), m.end()) {
                start = m.start() + 1;
                continue;
            }
            found.push((m.start(), m.end()));
            start = if m.end() == m.start() {
                m.end() + 1
            } else {
                m.end()
            };
        }
        found
    }

    fn is_match(&self, line: &[u8]) -> bool {
        if self.empty {
            return false;
        }
        if self.word {
            return !self.matches(line).is_empty();
        }
        self.re.is_match(line)
    }
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

fn word_bounded(line: &[u8], start: usize, end: usize) -> bool {
    let before = start == 0 || !line.get(start - 1).copied().is_some_and(is_word_byte);
    let after = !line.get(end).copied().is_some_and(is_word_byte);
    before && after && end > start
}

pub(crate) fn grep(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let name = argv.first().map(String::as_str).unwrap_or("grep");
    let mut opts = Options::default();
    match name.rsplit('/').next() {
        Some("egrep") => opts.dialect = Some(Dialect::Extended),
        Some("fgrep") => opts.fixed = true,
        _ => {}
    }
    p.prefix = "grep".to_string();
    let operands = match parse_args(p, argv.get(1..).unwrap_or_default(), &mut opts) {
        Ok(ops) => ops,
        Err(status) => return status,
    };
    let mut operands = operands.into_iter();
    if !opts.pattern_given {
        match operands.next() {
            Some(pat) => opts.patterns.extend(pat.split('\n').map(String::from)),
            None => {
                p.io.err_line(USAGE);
                p.try_help("grep");
                return 2;
            }
        }
    }
    let mut files: Vec<String> = operands.collect();
    let matcher = match compile(&opts) {
        Ok(m) => m,
        Err(msg) => {
            p.error(&msg);
            return 2;
        }
    };
    let recursive = opts.recursive || opts.deref_recursive;
    let implicit_dot = files.is_empty() && recursive;
    if files.is_empty() {
        files.push(if recursive { ".".into() } else { "-".into() });
    }
    let single_plain = files.len() == 1 && !(recursive && p.resolve(&files[0]).is_dir());
    let show_names = opts.with_filename.unwrap_or(!single_plain);
    let mut run = Run {
        opts: &opts,
        matcher,
        any_selected: false,
        error: false,
        show_names,
    };
    for file in &files {
        if implicit_dot {
            walk_dir(p, &mut run, ".", "");
        } else {
            run_operand(p, &mut run, file);
        }
        if opts.quiet && run.any_selected {
            return 0;
        }
    }
    if run.error && !(opts.quiet && run.any_selected) {
        2
    } else if run.any_selected {
        0
    } else {
        1
    }
}

/// Reads options; `Err` carries the exit status after a usage error.
fn parse_args(p: &Process<'_>, args: &[String], o: &mut Options) -> Result<Vec<String>, i32> {
    let mut operands = Vec::new();
    let mut i = 0;
    let mut only_operands = false;
    // An option's value: the rest of the word or the next argument.
    let bad = |msg: String| {
        p.error(&msg);
        p.io.err_line(USAGE);
        p.try_help("grep");
        2
    };
    while let Some(arg) = args.get(i) {
        i += 1;
        if only_operands || arg == "-" || !arg.starts_with('-') {
            operands.push(arg.clone());
            continue;
        }
        if arg == "--" {
            only_operands = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (key, value) = match long.split_once('=') {
                Some((k, v)) => (k, Some(v.to_string())),
                None => (long, None),
            };
            let needs_value = matches!(
                key,
                "regexp"
                    | "file"
                    | "after-context"
                    | "before-context"
                    | "context"
                    | "max-count"
                    | "include"
                    | "exclude"
                    | "exclude-dir"
            );
            let value = if needs_value && value.is_none() {
                match args.get(i) {
                    Some(v) => {
                        i += 1;
                        Some(v.clone())
                    }
                    None => {
                        return Err(bad(format!("option '--{key}' requires an argument")));
                    }
                }
            } else {
                value
            };
            let v = value.clone().unwrap_or_default();
            match key {
                "extended-regexp" => o.dialect = Some(Dialect::Extended),
                "fixed-strings" => o.fixed = true,
                "basic-regexp" => o.dialect = Some(Dialect::Basic),
                "ignore-case" => o.ignore_case = true,
                "no-ignore-case" => o.ignore_case = false,
                "invert-match" => o.invert = true,
                "count" => o.count = true,
                "files-with-matches" => o.files_with = true,
                "files-without-match" => o.files_without = true,
                "line-number" => o.line_number = true,
                "byte-offset" => o.byte_offset = true,
                "with-filename" => o.with_filename = Some(true),
                "no-filename" => o.with_filename = Some(false),
                "only-matching" => o.only_matching = true,
                "quiet" | "silent" => o.quiet = true,
                "no-messages" => o.no_messages = true,
                "recursive" => o.recursive = true,
                "dereference-recursive" => o.deref_recursive = true,
                "word-regexp" => o.word = true,
                "line-regexp" => o.line = true,
                "text" => o.text = true,
                "null" => o.null_after_name = true,
                "color" | "colour" => {
                    o.color = matches!(value.as_deref(), Some("always"));
                }
                "regexp" => {
                    o.patterns.extend(v.split('\n').map(String::from));
                    o.pattern_given = true;
                }
                "file" => read_pattern_file(p, &v, o)?,
                "after-context" => o.after = context_number(p, &v)?,
                "before-context" => o.before = context_number(p, &v)?,
                "context" => {
                    let n = context_number(p, &v)?;
                    o.after = n;
                    o.before = n;
                }
                "max-count" => o.max_count = Some(max_count(p, &v)?),
                "include" => o.include.push(v),
                "exclude" => o.exclude.push(v),
                "exclude-dir" => o.exclude_dir.push(v),
                "binary-files" | "line-buffered" | "label" => {}
                _ => return Err(bad(format!("unrecognized option '{arg}'"))),
            }
            continue;
        }
        let chars: Vec<char> = arg.chars().skip(1).collect();
        let mut k = 0;
        while let Some(&c) = chars.get(k) {
            k += 1;
            if c.is_ascii_digit() {
                // `-2` is `-C 2`.
                let mut digits = c.to_string();
                while let Some(&d) = chars.get(k).filter(|d| d.is_ascii_digit()) {
                    digits.push(d);
                    k += 1;
                }
                let n = context_number(p, &digits)?;
                o.after = n;
                o.before = n;
                continue;
            }
            if matches!(c, 'e' | 'f' | 'A' | 'B' | 'C' | 'm') {
                let rest: String = chars.get(k..).unwrap_or_default().iter().collect();
                let value = if !rest.is_empty() {
                    rest
                } else if let Some(v) = args.get(i) {
                    i += 1;
                    v.clone()
                } else {
                    return Err(bad(format!("option requires an argument -- '{c}'")));
                };
                k = chars.len();
                match c {
                    'e' => {
                        o.patterns.extend(value.split('\n').map(String::from));
                        o.pattern_given = true;
                    }
                    'f' => read_pattern_file(p, &value, o)?,
                    'A' => o.after = context_number(p, &value)?,
                    'B' => o.before = context_number(p, &value)?,
                    'C' => {
                        let n = context_number(p, &value)?;
                        o.after = n;
                        o.before = n;
                    }
                    _ => o.max_count = Some(max_count(p, &value)?),
                }
                continue;
            }
            match c {
                'E' => o.dialect = Some(Dialect::Extended),
                'F' => o.fixed = true,
                'G' => o.dialect = Some(Dialect::Basic),
                'P' => o.dialect = Some(Dialect::Extended),
                'i' | 'y' => o.ignore_case = true,
                'v' => o.invert = true,
                'c' => o.count = true,
                'l' => o.files_with = true,
                'L' => o.files_without = true,
                'n' => o.line_number = true,
                'b' => o.byte_offset = true,
                'h' => o.with_filename = Some(false),
                'H' => o.with_filename = Some(true),
                'o' => o.only_matching = true,
                'q' => o.quiet = true,
                's' => o.no_messages = true,
                'r' => o.recursive = true,
                'R' => o.deref_recursive = true,
                'w' => o.word = true,
                'x' => o.line = true,
                'a' => o.text = true,
                'I' | 'U' => {}
                'Z' => o.null_after_name = true,
                _ => return Err(bad(format!("invalid option -- '{c}'"))),
            }
        }
    }
    Ok(operands)
}

fn context_number(p: &Process<'_>, v: &str) -> Result<usize, i32> {
    v.parse::<usize>().map_err(|_| {
        p.error(&format!("{v}: invalid context length argument"));
        2
    })
}

fn max_count(p: &Process<'_>, v: &str) -> Result<u64, i32> {
    v.parse::<i64>()
        .map(|n| u64::try_from(n).unwrap_or(u64::MAX))
        .map_err(|_| {
            p.error("invalid max count");
            2
        })
}

fn read_pattern_file(p: &Process<'_>, name: &str, o: &mut Options) -> Result<(), i32> {
    match read_source(p, name) {
        Ok(data) => {
            let text = String::from_utf8_lossy(&data);
            let text = text.strip_suffix('\n').unwrap_or(&text);
            if !data.is_empty() {
                o.patterns.extend(text.split('\n').map(String::from));
            }
            o.pattern_given = true;
            Ok(())
        }
        Err(msg) => {
            p.error(&format!("{name}: {msg}"));
            Err(2)
        }
    }
}

/// Builds one regex from all the patterns.
fn compile(o: &Options) -> Result<Matcher, String> {
    let dialect = o.dialect.unwrap_or(Dialect::Basic);
    let mut parts = Vec::new();
    for pat in &o.patterns {
        let body = if o.fixed {
            posix_regex::escape(pat)
        } else {
            posix_regex::translate(pat, dialect).map_err(|e| e.to_string())?
        };
        parts.push(format!("(?:{body})"));
    }
    let mut joined = parts.join("|");
    if o.line {
        joined = format!("^(?:{joined})$");
    }
    if o.ignore_case {
        joined = format!("(?i){joined}");
    }
    let re = regex::bytes::RegexBuilder::new(&joined)
        .multi_line(false)
        .size_limit(64 << 20)
        .build()
        .map_err(|e| format!("{e}"))?;
    Ok(Matcher {
        re,
        word: o.word && !o.line,
        empty: o.patterns.is_empty(),
    })
}

/// One command-line operand: stdin, a file, or with -r a folder.
fn run_operand(p: &Process<'_>, run: &mut Run<'_>, file: &str) {
    let opts = run.opts;
    if file == "-" {
        let data = p.io.stdin.borrow_mut().read_all();
        search(p, run, "(standard input)", &data);
        return;
    }
    let path = p.resolve(file);
    if path.is_dir() {
        if opts.recursive || opts.deref_recursive {
            if !excluded_dir(opts, file) || file == "." {
                walk_dir(p, run, file, file);
            }
        } else if !opts.no_messages {
            p.error(&format!("{file}: Is a directory"));
            run.error = true;
        }
        return;
    }
    if !opts.include.is_empty() || !opts.exclude.is_empty() {
        let base = file.rsplit('/').next().unwrap_or(file);
        if !included(opts, base) {
            return;
        }
    }
    match std::fs::read(&path) {
        Ok(data) => search(p, run, file, &data),
        Err(e) => {
            if !opts.no_messages {
                p.error(&format!("{file}: {}", crate::errors::strerror(&e)));
            }
            run.error = true;
        }
    }
}

fn excluded_dir(o: &Options, name: &str) -> bool {
    let base = name
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(name);
    o.exclude_dir.iter().any(|g| glob_match(g, base))
}

fn included(o: &Options, base: &str) -> bool {
    if o.exclude.iter().any(|g| glob_match(g, base)) {
        return false;
    }
    o.include.is_empty() || o.include.iter().any(|g| glob_match(g, base))
}

/// Searches every file under `dir`, sorted by name. `shown` is how
/// names are printed: `""` for an implicit `.` (no `./` prefix).
fn walk_dir(p: &Process<'_>, run: &mut Run<'_>, dir: &str, shown: &str) {
    let path = p.resolve(dir);
    let entries = match std::fs::read_dir(&path) {
        Ok(rd) => rd,
        Err(e) => {
            if !run.opts.no_messages {
                p.error(&format!("{dir}: {}", crate::errors::strerror(&e)));
            }
            run.error = true;
            return;
        }
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        let child = format!("{}/{name}", dir.trim_end_matches('/'));
        let child_shown = if shown.is_empty() {
            name.clone()
        } else {
            format!("{}/{name}", shown.trim_end_matches('/'))
        };
        let child_path = p.resolve(&child);
        let Ok(meta) = std::fs::symlink_metadata(&child_path) else {
            continue;
        };
        let is_link = meta.file_type().is_symlink();
        if is_link && !run.opts.deref_recursive {
            continue;
        }
        if child_path.is_dir() {
            if !excluded_dir(run.opts, &name) {
                walk_dir(p, run, &child, &child_shown);
            }
            continue;
        }
        if !included(run.opts, &name) {
            continue;
        }
        match std::fs::read(&child_path) {
            Ok(data) => search(p, run, &child_shown, &data),
            Err(e) => {
                if !run.opts.no_messages {
                    p.error(&format!("{child_shown}: {}", crate::errors::strerror(&e)));
                }
                run.error = true;
            }
        }
        if run.opts.quiet && run.any_selected {
            return;
        }
    }
}

/// Searches one file's bytes and prints what the options ask for.
fn search(p: &Process<'_>, run: &mut Run<'_>, name: &str, data: &[u8]) {
    let o = run.opts;
    let binary = !o.text && (data.contains(&0) || std::str::from_utf8(data).is_err());
    let lines: Vec<&[u8]> = split_lines(data);
    let mut count: u64 = 0;
    let mut out: Vec<u8> = Vec::new();
    let mut last_printed: Option<usize> = None;
    let mut after_left = 0usize;
    let mut offsets = Vec::with_capacity(if o.byte_offset { lines.len() } else { 0 });
    if o.byte_offset {
        let mut off = 0;
        for l in &lines {
            offsets.push(off);
            off += l.len() + 1;
        }
    }
    let context = !o.count && !o.files_with && !o.files_without && !o.quiet && !binary;
    let name_sep = if o.null_after_name { "\0" } else { "" };
    let prefix = |out: &mut Vec<u8>, idx: usize, sep: u8| {
        if run.show_names {
            out.extend_from_slice(name.as_bytes());
            if o.null_after_name {
                out.push(0);
            } else {
                out.push(sep);
            }
        }
        if o.line_number {
            out.extend_from_slice(format!("{}", idx + 1).as_bytes());
            out.push(sep);
        }
        if o.byte_offset {
            out.extend_from_slice(format!("{}", offsets.get(idx).copied().unwrap_or(0)).as_bytes());
            out.push(sep);
        }
    };
    let mut any_output_group = false;
    for (idx, line) in lines.iter().enumerate() {
        if o.max_count.is_some_and(|m| count >= m) {
            // GNU prints trailing context after the last counted match,
            // further matching lines included (as context).
            if after_left > 0 && context && !o.only_matching {
                prefix(&mut out, idx, b'-');
                out.extend_from_slice(line);
                out.push(b'\n');
                last_printed = Some(idx);
                after_left -= 1;
                continue;
            }
            break;
        }
        let selected = run.matcher.is_match(line) != o.invert;
        if selected {
            count += 1;
            run.any_selected = true;
            if o.quiet {
                return;
            }
            if o.files_with || o.files_without {
                break;
            }
            if o.count {
                continue;
            }
            if binary {
                break;
            }
            // Leading context and the group separator.
            let first_ctx = idx.saturating_sub(o.before);
            let start = match last_printed {
                Some(lp) if lp + 1 >= first_ctx => lp + 1,
                _ => first_ctx,
            };
            if (o.before > 0 || o.after > 0)
                && any_output_group
                && last_printed.is_none_or(|lp| start > lp + 1)
            {
                out.extend_from_slice(b"--\n");
            }
            for (ci, cl) in lines.iter().enumerate().take(idx).skip(start) {
                prefix(&mut out, ci, b'-');
                out.extend_from_slice(cl);
                out.push(b'\n');
            }
            if o.only_matching {
                if !o.invert {
                    for (s, e) in run.matcher.matches(line) {
                        if e == s {
                            continue;
                        }
                        prefix(&mut out, idx, b':');
                        out.extend_from_slice(line.get(s..e).unwrap_or_default());
                        out.push(b'\n');
                    }
                }
            } else {
                prefix(&mut out, idx, b':');
                if o.color && !o.invert {
                    colorize(&mut out, line, &run.matcher.matches(line));
                } else {
                    out.extend_from_slice(line);
                }
                out.push(b'\n');
            }
            any_output_group = true;
            last_printed = Some(idx);
            after_left = o.after;
        } else if after_left > 0 && context && !o.only_matching {
            prefix(&mut out, idx, b'-');
            out.extend_from_slice(line);
            out.push(b'\n');
            last_printed = Some(idx);
            after_left -= 1;
        }
        if out.len() >= 64 * 1024 {
            if !p.out(&out) {
                return;
            }
            out.clear();
        }
    }
    if o.count {
        if run.show_names {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(if o.null_after_name { b"\0" } else { b":" });
        }
        out.extend_from_slice(format!("{count}\n").as_bytes());
    }
    if o.files_with && count > 0 {
        out.extend_from_slice(format!("{name}{}\n", name_sep).as_bytes());
    }
    if o.files_without && count == 0 {
        out.extend_from_slice(format!("{name}{}\n", name_sep).as_bytes());
    }
    p.out(&out);
    if binary && count > 0 && !o.count && !o.files_with && !o.files_without {
        p.io.flush();
        p.error(&format!("{name}: binary file matches"));
    }
}

/// Lines without their newline; a final line without one still counts.
fn split_lines(data: &[u8]) -> Vec<&[u8]> {
    if data.is_empty() {
        return Vec::new();
    }
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    body.split(|&b| b == b'\n').collect()
}

/// `--color=always`: GNU's default match colour (bold red).
fn colorize(out: &mut Vec<u8>, line: &[u8], spans: &[(usize, usize)]) {
    let mut pos = 0;
    for &(s, e) in spans {
        if e == s {
            continue;
        }
        out.extend_from_slice(line.get(pos..s).unwrap_or_default());
        out.extend_from_slice(b"\x1b[01;31m\x1b[K");
        out.extend_from_slice(line.get(s..e).unwrap_or_default());
        out.extend_from_slice(b"\x1b[m\x1b[K");
        pos = e;
    }
    out.extend_from_slice(line.get(pos..).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matcher(pat: &str, word: bool) -> Matcher {
        let o = Options {
            patterns: vec![pat.to_string()],
            word,
            ..Options::default()
        };
        compile(&o).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn word_matches_need_boundaries() {
        let m = matcher("foo", true);
        assert!(m.is_match(b"a foo b"));
        assert!(!m.is_match(b"foobar"));
        assert!(m.is_match(b"foobar foo"));
    }

    #[test]
    fn only_matching_spans() {
        let m = matcher("o\\+", false);
        assert_eq!(m.matches(b"foo bo"), vec![(1, 3), (5, 6)]);
    }

    #[test]
    fn lines_split_without_trailing_empty() {
        assert_eq!(split_lines(b"a\nb\n"), vec![&b"a"[..], &b"b"[..]]);
        assert_eq!(split_lines(b"a\n\nb"), vec![&b"a"[..], &b""[..], &b"b"[..]]);
        assert!(split_lines(b"").is_empty());
    }
}
