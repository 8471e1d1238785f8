//! `split [-l N|-b SIZE|-C SIZE|-n CHUNKS] [-a N] [-d|-x[FROM]] [-e]
//! [-t SEP] [--additional-suffix S] [--filter CMD] [--verbose] [FILE
//! [PREFIX]]`: GNU's split, its file names (`xaa`… widening to `xzaaa`
//! when no length is given) and its chunk modes (`N`, `K/N`, `l/N`,
//! `l/K/N`, `r/N`, `r/K/N`), ported from coreutils 9.1 over an input
//! held in memory.

use std::path::PathBuf;

use super::Process;
use super::args::{HasArg, Spec};
use crate::errors::strerror;
use crate::programs::quoting::{quote_if_needed, single_quote};

const SPEC: Spec<'static> = Spec {
    short: "C:a:b:del:n:t:ux",
    long: &[
        ("bytes", 'b', HasArg::Yes),
        ("lines", 'l', HasArg::Yes),
        ("line-bytes", 'C', HasArg::Yes),
        ("number", 'n', HasArg::Yes),
        ("elide-empty-files", 'e', HasArg::No),
        ("unbuffered", 'u', HasArg::No),
        ("suffix-length", 'a', HasArg::Yes),
        ("additional-suffix", 'A', HasArg::Yes),
        ("numeric-suffixes", 'd', HasArg::Optional),
        ("hex-suffixes", 'x', HasArg::Optional),
        ("filter", 'F', HasArg::Yes),
        ("verbose", 'V', HasArg::No),
        ("separator", 't', HasArg::Yes),
        ("old-lines", 'L', HasArg::Yes),
    ],
};

/// Suffixes `split -b` and `-C` accept.
const MULTIPLIERS: &str = "bEGKkMmPTYZ0";
const OFF_T_MAX: u64 = i64::MAX as u64;
/// Most files `-n r/N` keeps in memory at once (GNU keeps N open).
const MAX_OPEN_FILES: usize = 1 << 20;

/// How the input is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Lines(u64),
    Bytes(u64),
    LineBytes(u64),
    /// `-n [K/]N`: byte chunks, all or the Kth to stdout.
    Chunks(u64, u64),
    /// `-n l/[K/]N`: chunks ending at line ends.
    LineChunks(u64, u64),
    /// `-n r/[K/]N`: lines dealt round robin.
    RoundRobin(u64, u64),
}

/// The output file names: GNU's next_file_name.
struct Namer {
    prefix: String,
    alphabet: &'static [u8],
    length: usize,
    auto: bool,
    index: Vec<usize>,
    additional: String,
    started: bool,
}

impl Namer {
    fn current(&self) -> String {
        let suffix: String = self
            .index
            .iter()
            .map(|&i| char::from(self.alphabet.get(i).copied().unwrap_or(b'a')))
            .collect();
        format!("{}{suffix}{}", self.prefix, self.additional)
    }

    /// The next name, or `None` once the suffixes are exhausted.
    fn next(&mut self, start: Option<&str>) -> Option<String> {
        if !self.started {
            self.started = true;
            self.index = vec![0; self.length];
            if let Some(start) = start {
                let offset = self.length.saturating_sub(start.len());
                for (i, c) in start.bytes().enumerate() {
                    let digit = self.alphabet.iter().position(|&a| a == c).unwrap_or(0);
                    if let Some(slot) = self.index.get_mut(offset + i) {
                        *slot = digit;
                    }
                }
            }
            return Some(self.current());
        }
        let mut i = self.length;
        while i > 0 {
            i -= 1;
            self.index[i] += 1;
            if self.auto && i == 0 && self.index[0] + 1 >= self.alphabet.len() {
                // Widen: the last first letter joins the prefix and the
                // suffix grows by one (`xyz` is followed by `xzaaa`).
                self.prefix
                    .push(char::from(self.alphabet[self.alphabet.len() - 1]));
                self.length += 1;
                self.index = vec![0; self.length];
                return Some(self.current());
            }
            if self.index[i] < self.alphabet.len() {
                return Some(self.current());
            }
            self.index[i] = 0;
        }
        None
    }
}

/// Where the pieces go: files (through a filter, if any) or stdout.
struct Output<'p, 'a> {
    p: &'p Process<'a>,
    namer: Namer,
    start: Option<String>,
    elide: bool,
    verbose: bool,
    filter: Option<String>,
    input: Option<PathBuf>,
    current: Option<(String, Vec<u8>)>,
    stdout: Vec<u8>,
}

impl Output<'_, '_> {
    fn next_name(&mut self) -> Result<String, i32> {
        let start = self.start.take();
        match self.namer.next(start.as_deref()) {
            Some(n) => Ok(n),
            None => {
                self.p.error("output file suffixes exhausted");
                Err(1)
            }
        }
    }

    /// GNU's cwrite: `None` with `new_file` creates an empty file.
    fn write(&mut self, new_file: bool, bytes: Option<&[u8]>) -> Result<(), i32> {
        if new_file {
            if bytes.is_none() && self.elide {
                return Ok(());
            }
            self.close()?;
            let name = self.next_name()?;
            self.create(&name)?;
            self.current = Some((name, Vec::new()));
        }
        if let (Some((_, buf)), Some(b)) = (self.current.as_mut(), bytes) {
            buf.extend_from_slice(b);
        }
        Ok(())
    }

    /// Creates (truncates) a file as GNU does on opening it.
    fn create(&mut self, name: &str) -> Result<(), i32> {
        if self.filter.is_some() {
            if self.verbose {
                self.stdout
                    .extend(format!("executing with FILE={}\n", quote_if_needed(name)).bytes());
            }
            return Ok(());
        }
        if self.verbose {
            self.stdout
                .extend(format!("creating file {}\n", single_quote(name)).bytes());
        }
        let path = self.p.resolve(name);
        if let (Some(input), Ok(out)) = (&self.input, std::fs::canonicalize(&path))
            && *input == out
        {
            self.p.error(&format!(
                "{} would overwrite input; aborting",
                single_quote(name)
            ));
            return Err(1);
        }
        std::fs::write(&path, b"").map_err(|e| {
            self.p
                .error(&format!("{}: {}", quote_if_needed(name), strerror(&e)));
            1
        })
    }

    /// Writes out the file being filled, or feeds it to the filter.
    fn close(&mut self) -> Result<(), i32> {
        let Some((name, data)) = self.current.take() else {
            return Ok(());
        };
        self.finish(&name, data)
    }

    fn finish(&mut self, name: &str, data: Vec<u8>) -> Result<(), i32> {
        if let Some(cmd) = self.filter.clone() {
            return self.run_filter(&cmd, name, data);
        }
        let path = self.p.resolve(name);
        std::fs::write(&path, data).map_err(|e| {
            self.p
                .error(&format!("{}: {}", quote_if_needed(name), strerror(&e)));
            1
        })
    }

    /// `--filter`: `$SHELL -c CMD` with `FILE` set and the piece on stdin.
    fn run_filter(&mut self, cmd: &str, name: &str, data: Vec<u8>) -> Result<(), i32> {
        let p = self.p;
        super::write_all(p, &std::mem::take(&mut self.stdout));
        let mut env: Vec<(String, String)> =
            p.env.iter().filter(|(k, _)| k != "FILE").cloned().collect();
        env.push(("FILE".to_string(), name.to_string()));
        let argv = vec!["sh".to_string(), "-c".to_string(), cmd.to_string()];
        let io = crate::streams::Io {
            stdin: crate::streams::Source::bytes(data),
            stdout: std::rc::Rc::clone(&p.io.stdout),
            stderr: std::rc::Rc::clone(&p.io.stderr),
            extra: Default::default(),
        };
        let mut child = Process::new("sh", p.cwd, &env, p.host, &io, p.depth + 1);
        let status = crate::programs::shell::bash(&mut child, &argv);
        if status != 0 {
            p.error(&format!(
                "with FILE={}, exit {status} from command: {cmd}",
                quote_if_needed(name)
            ));
            return Err(status);
        }
        Ok(())
    }
}

/// `-n` values: `N`, `K/N`, with `l/` or `r/` in front.
fn parse_chunks(p: &Process<'_>, text: &str) -> Result<Mode, i32> {
    let t = text.trim_start();
    let (kind, rest) = if let Some(r) = t.strip_prefix("r/") {
        ('r', r)
    } else if let Some(r) = t.strip_prefix("l/") {
        ('l', r)
    } else {
        ('b', t)
    };
    let (k, n) = match rest.split_once('/') {
        Some((k, n)) => {
            let n = super::size_operand(p, n, "", (1, u64::MAX), "invalid number of chunks")?;
            let k = super::size_operand(p, k, "", (1, n), "invalid chunk number")?;
            (k, n)
        }
        None => (
            0,
            super::size_operand(p, rest, "", (1, u64::MAX), "invalid number of chunks")?,
        ),
    };
    Ok(match kind {
        'r' => Mode::RoundRobin(k, n),
        'l' => Mode::LineChunks(k, n),
        _ => Mode::Chunks(k, n),
    })
}

/// `-5` is an old spelling of `-l 5`, also inside a cluster (`-d2x`).
fn old_line_counts(argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut operands = false;
    for (i, a) in argv.iter().enumerate() {
        if i == 0 || operands || !a.starts_with('-') || a.starts_with("--") || a == "-" {
            operands |= i > 0 && a == "--";
            out.push(a.clone());
            continue;
        }
        let body = a.get(1..).unwrap_or_default();
        let mut flags = String::new();
        let mut digits = String::new();
        for (j, c) in body.char_indices() {
            if c.is_ascii_digit() {
                digits.push(c);
            } else if "Cablnt".contains(c) {
                // The rest of the cluster is this option's value.
                flags.push_str(body.get(j..).unwrap_or_default());
                break;
            } else {
                flags.push(c);
            }
        }
        if digits.is_empty() {
            out.push(a.clone());
            continue;
        }
        out.push(format!("--old-lines={digits}"));
        if !flags.is_empty() {
            out.push(format!("-{flags}"));
        }
    }
    out
}

struct Settings {
    mode: Mode,
    eol: u8,
    alphabet: &'static [u8],
    start: Option<String>,
    length: u64,
    additional: String,
}

fn settings(p: &Process<'_>, args: &super::args::Parsed) -> Result<Settings, i32> {
    let mut mode = None;
    let set_mode = |mode: &mut Option<Mode>, m: Mode| -> Result<(), i32> {
        if mode.is_some() {
            return Err(super::usage(p, "cannot split in more than one way", 1));
        }
        *mode = Some(m);
        Ok(())
    };
    let mut s = Settings {
        mode: Mode::Lines(1000),
        eol: b'\n',
        alphabet: b"abcdefghijklmnopqrstuvwxyz",
        start: None,
        length: 0,
        additional: String::new(),
    };
    let mut eol: Option<u8> = None;
    let mut old_lines_seen = false;
    for opt in &args.opts {
        let v = opt.value.as_deref().unwrap_or_default();
        match opt.key {
            'a' => {
                s.length =
                    super::size_operand(p, v, "", (0, u64::MAX / 8), "invalid suffix length")?;
            }
            'A' => {
                if v.contains('/') {
                    let msg = format!(
                        "invalid suffix {}, contains directory separator",
                        p.quote(v)
                    );
                    return Err(super::usage(p, &msg, 1));
                }
                s.additional = v.to_string();
            }
            'b' => set_mode(
                &mut mode,
                Mode::Bytes(super::size_operand(
                    p,
                    v,
                    MULTIPLIERS,
                    (1, OFF_T_MAX),
                    "invalid number of bytes",
                )?),
            )?,
            'l' => set_mode(
                &mut mode,
                Mode::Lines(super::size_operand(
                    p,
                    v,
                    "",
                    (1, u64::MAX),
                    "invalid number of lines",
                )?),
            )?,
            'L' => {
                if mode.is_some() && !old_lines_seen {
                    return Err(super::usage(p, "cannot split in more than one way", 1));
                }
                old_lines_seen = true;
                let n: u64 = v.parse().unwrap_or(u64::MAX);
                if n == 0 {
                    let msg = format!("invalid number of lines: {}", p.quote("0"));
                    return Err(super::usage(p, &msg, 1));
                }
                mode = Some(Mode::Lines(n));
            }
            'C' => set_mode(
                &mut mode,
                Mode::LineBytes(super::size_operand(
                    p,
                    v,
                    MULTIPLIERS,
                    (1, OFF_T_MAX),
                    "invalid number of bytes",
                )?),
            )?,
            'n' => set_mode(&mut mode, parse_chunks(p, v)?)?,
            't' => {
                let b = match v.as_bytes() {
                    [] => {
                        p.error("empty record separator");
                        return Err(1);
                    }
                    [b] => *b,
                    b"\\0" => 0,
                    _ => {
                        p.error(&format!("multi-character separator {}", p.quote(v)));
                        return Err(1);
                    }
                };
                if eol.is_some_and(|e| e != b) {
                    p.error("multiple separator characters specified");
                    return Err(1);
                }
                eol = Some(b);
            }
            'd' | 'x' => {
                s.alphabet = if opt.key == 'd' {
                    b"0123456789"
                } else {
                    b"0123456789abcdef"
                };
                if let Some(from) = opt.value.as_deref() {
                    if !from.bytes().all(|c| s.alphabet.contains(&c)) {
                        let kind = if opt.key == 'd' {
                            "numerical"
                        } else {
                            "hexadecimal"
                        };
                        let msg =
                            format!("{}: invalid start value for {kind} suffix", p.quote(from));
                        return Err(super::usage(p, &msg, 1));
                    }
                    let trimmed = from.trim_start_matches('0');
                    s.start = Some(if trimmed.is_empty() && !from.is_empty() {
                        "0".to_string()
                    } else {
                        trimmed.to_string()
                    });
                }
            }
            _ => {}
        }
    }
    s.mode = mode.unwrap_or(Mode::Lines(1000));
    s.eol = eol.unwrap_or(b'\n');
    Ok(s)
}

/// GNU's set_suffix_length: the length, and whether it may widen.
fn suffix_length(p: &Process<'_>, s: &Settings) -> Result<(usize, bool), i32> {
    let mut auto = s.start.is_none();
    let mut needed: u64 = 0;
    if let Mode::Chunks(_, n) | Mode::LineChunks(_, n) | Mode::RoundRobin(_, n) = s.mode {
        let mut end = n - 1;
        if let Some(start) = s.start.as_deref()
            && let Ok(from) = start.parse::<u64>()
            && from <= u64::MAX - n
            && from < n
        {
            end += from;
        }
        let base = s.alphabet.len() as u64;
        loop {
            needed += 1;
            end /= base;
            if end == 0 {
                break;
            }
        }
        auto = false;
    }
    if s.length != 0 {
        if s.length < needed {
            p.error(&format!("the suffix length needs to be at least {needed}"));
            return Err(1);
        }
        return Ok((usize::try_from(s.length).unwrap_or(usize::MAX), false));
    }
    Ok((usize::try_from(needed.max(2)).unwrap_or(2), auto))
}

pub(crate) fn split(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = match super::parse_args(p, &SPEC, &old_line_counts(argv), 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let s = match settings(p, &args) {
        Ok(s) => s,
        Err(status) => return status,
    };
    let filter = args.value('F').map(str::to_string);
    if filter.is_some()
        && let Mode::Chunks(k, _) | Mode::LineChunks(k, _) | Mode::RoundRobin(k, _) = s.mode
        && k != 0
    {
        return super::usage(
            p,
            "--filter does not process a chunk extracted to stdout",
            1,
        );
    }
    let (length, auto) = match suffix_length(p, &s) {
        Ok(v) => v,
        Err(status) => return status,
    };
    let infile = args.operands.first().cloned().unwrap_or_else(|| "-".into());
    let prefix = args.operands.get(1).cloned().unwrap_or_else(|| "x".into());
    if let Some(extra) = args.operands.get(2) {
        return super::usage(p, &format!("extra operand {}", p.quote(extra)), 1);
    }
    if s.start.as_ref().is_some_and(|st| st.len() > length) {
        return super::usage(
            p,
            "numerical suffix start value is too large for the suffix length",
            1,
        );
    }
    let data = match super::read_input(p, &infile) {
        Ok(d) => d,
        Err(e) => {
            p.error(&format!(
                "cannot open {} for reading: {}",
                single_quote(&infile),
                strerror(&e)
            ));
            return 1;
        }
    };
    let input = (infile != "-")
        .then(|| std::fs::canonicalize(p.resolve(&infile)).ok())
        .flatten();
    let mut out = Output {
        p,
        namer: Namer {
            prefix,
            alphabet: s.alphabet,
            length,
            auto,
            index: Vec::new(),
            additional: s.additional.clone(),
            started: false,
        },
        start: s.start.clone(),
        elide: args.has('e'),
        verbose: args.has('V'),
        filter,
        input,
        current: None,
        stdout: Vec::new(),
    };
    let result = cut(&mut out, &s, &data).and_then(|()| out.close());
    let stdout = std::mem::take(&mut out.stdout);
    super::write_all(p, &stdout);
    match result {
        Ok(()) => 0,
        Err(status) => status,
    }
}

fn cut(out: &mut Output<'_, '_>, s: &Settings, data: &[u8]) -> Result<(), i32> {
    let eol = s.eol;
    match s.mode {
        Mode::Lines(n) => {
            let mut new_file = true;
            let mut count = 0u64;
            let mut start = 0;
            for (i, &b) in data.iter().enumerate() {
                if b == eol {
                    count += 1;
                    if count >= n {
                        out.write(new_file, data.get(start..=i))?;
                        start = i + 1;
                        new_file = true;
                        count = 0;
                    }
                }
            }
            if start < data.len() {
                out.write(new_file, data.get(start..))?;
            }
            Ok(())
        }
        Mode::Bytes(n) => bytes_split(out, n, data, 0),
        Mode::LineBytes(n) => line_bytes_split(out, n, data, eol),
        Mode::Chunks(k, n) => {
            let size = (data.len() as u64).max(n);
            if k == 0 {
                return bytes_split(out, size / n, data, n);
            }
            let start = (k - 1) * (size / n);
            let end = if k == n { size } else { k * (size / n) };
            let bytes = slice(data, start, end.min(data.len() as u64));
            out.stdout.extend_from_slice(bytes);
            Ok(())
        }
        Mode::LineChunks(k, n) => lines_chunk_split(out, k, n, data, eol),
        Mode::RoundRobin(k, n) => lines_rr(out, k, n, data, eol),
    }
}

fn slice(data: &[u8], start: u64, end: u64) -> &[u8] {
    let s = usize::try_from(start).unwrap_or(usize::MAX).min(data.len());
    let e = usize::try_from(end).unwrap_or(usize::MAX).min(data.len());
    data.get(s..e.max(s)).unwrap_or_default()
}

/// GNU's bytes_split over one buffer; `max_files` 0 is unlimited.
fn bytes_split(out: &mut Output<'_, '_>, n: u64, data: &[u8], max_files: u64) -> Result<(), i32> {
    let mut new_file = true;
    let mut opened = 0u64;
    let mut to_write = n;
    let mut pos = 0u64;
    let mut left = data.len() as u64;
    while to_write <= left {
        out.write(new_file, Some(slice(data, pos, pos + to_write)))?;
        opened += u64::from(new_file);
        new_file = max_files == 0 || opened < max_files;
        pos += to_write;
        left -= to_write;
        to_write = n;
    }
    if left != 0 {
        out.write(new_file, Some(slice(data, pos, pos + left)))?;
        opened += u64::from(new_file);
    }
    while opened < max_files {
        opened += 1;
        out.write(true, None)?;
    }
    Ok(())
}

/// GNU's line_bytes_split (`-C`) over one buffer.
fn line_bytes_split(out: &mut Output<'_, '_>, n: u64, data: &[u8], eol: u8) -> Result<(), i32> {
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    let mut n_out = 0usize;
    let mut hold: Vec<u8> = Vec::new();
    let mut sob = 0usize;
    let mut n_left = data.len();
    let mut split_line = false;
    while n_left > 0 {
        let mut split_rest = 0usize;
        let mut eoc = false;
        let window = if n - n_out - hold.len() <= n_left {
            split_rest = n - n_out - hold.len();
            eoc = true;
            split_rest
        } else {
            n_left
        };
        let eol_at = data
            .get(sob..sob + window)
            .and_then(|w| w.iter().rposition(|&b| b == eol))
            .map(|i| sob + i);
        if !(hold.is_empty() || eol_at.is_none() && n_out > 0) {
            let held = std::mem::take(&mut hold);
            out.write(n_out == 0, Some(&held))?;
            n_out += held.len();
        }
        if let Some(e) = eol_at {
            split_line = true;
            let n_write = e - sob + 1;
            out.write(n_out == 0, data.get(sob..sob + n_write))?;
            n_out += n_write;
            n_left -= n_write;
            sob += n_write;
            if eoc {
                split_rest -= n_write;
            }
        }
        if n_left > 0 && !split_line {
            let n_write = if eoc { split_rest } else { n_left };
            out.write(n_out == 0, data.get(sob..sob + n_write))?;
            n_out += n_write;
            n_left -= n_write;
            sob += n_write;
            if eoc {
                split_rest -= n_write;
            }
        }
        if (eoc && split_rest > 0) || (!eoc && n_left > 0) {
            let n_buf = if eoc { split_rest } else { n_left };
            hold.extend_from_slice(data.get(sob..sob + n_buf).unwrap_or_default());
            n_left -= n_buf;
            sob += n_buf;
        }
        if eoc {
            n_out = 0;
            split_line = false;
        }
    }
    if !hold.is_empty() {
        out.write(n_out == 0, Some(&hold))?;
    }
    Ok(())
}

/// GNU's lines_chunk_split (`-n l/[K/]N`) over one buffer.
fn lines_chunk_split(
    out: &mut Output<'_, '_>,
    k: u64,
    n: u64,
    data: &[u8],
    eol: u8,
) -> Result<(), i32> {
    let file_size = (data.len() as u64).max(n);
    let chunk_size = file_size / n;
    let mut chunk_no = 1u64;
    let mut chunk_end = chunk_size as i128 - 1;
    let mut n_written: u64 = 0;
    let mut new_file = true;
    let mut bp = 0u64;
    if k > 1 {
        let start = (k - 1) * chunk_size - 1;
        bp = start;
        n_written = start;
        chunk_no = k - 1;
        chunk_end = i128::from(chunk_no * chunk_size) - 1;
    }
    let eob = data.len() as u64;
    let mut truncated = false;
    while bp < eob {
        let mut next = false;
        let skip = (chunk_end - i128::from(n_written)).max(0);
        let skip = u64::try_from(skip).unwrap_or(0).min(eob - bp);
        let search = slice(data, bp + skip, eob);
        let bp_out = match search.iter().position(|&b| b == eol) {
            Some(i) => {
                next = true;
                bp + skip + i as u64 + 1
            }
            None => eob,
        };
        let chunk = slice(data, bp, bp_out);
        if k == chunk_no {
            out.stdout.extend_from_slice(chunk);
        } else if k == 0 {
            out.write(new_file, Some(chunk))?;
        }
        n_written += bp_out - bp;
        bp = bp_out;
        new_file = next;
        while next || chunk_end < i128::from(n_written) {
            if !next && bp == eob {
                truncated = true;
                break;
            }
            chunk_no += 1;
            if k != 0 && chunk_no > k {
                return Ok(());
            }
            if chunk_no == n {
                chunk_end = i128::from(file_size) - 1;
            } else {
                chunk_end += i128::from(chunk_size);
            }
            if chunk_end < i128::from(n_written) {
                if k == 0 {
                    out.write(true, None)?;
                }
            } else {
                next = false;
            }
        }
    }
    // A chunk cut short by the end of the data still counts.
    if truncated {
        chunk_no += 1;
    }
    while k == 0 && chunk_no <= n {
        chunk_no += 1;
        out.write(true, None)?;
    }
    Ok(())
}

/// GNU's lines_rr (`-n r/[K/]N`): line I goes to file I mod N.
fn lines_rr(out: &mut Output<'_, '_>, k: u64, n: u64, data: &[u8], eol: u8) -> Result<(), i32> {
    let lines = data.split_inclusive(|&b| b == eol);
    if k != 0 {
        let mut line_no = 1u64;
        for line in lines {
            if line_no == k {
                out.stdout.extend_from_slice(line);
            }
            if line.last() == Some(&eol) {
                line_no = if line_no == n { 1 } else { line_no + 1 };
            }
        }
        return Ok(());
    }
    let count = usize::try_from(n).unwrap_or(usize::MAX);
    if count > MAX_OPEN_FILES {
        out.p.error("memory exhausted");
        return Err(1);
    }
    let mut names = Vec::with_capacity(count);
    for _ in 0..count {
        names.push(out.next_name()?);
    }
    let mut files: Vec<Option<Vec<u8>>> = vec![None; count];
    let mut i = 0usize;
    let mut wrapped = false;
    for line in lines {
        if files[i].is_none() {
            out.create(&names[i])?;
            files[i] = Some(Vec::new());
        }
        if let Some(buf) = files[i].as_mut() {
            buf.extend_from_slice(line);
        }
        if line.last() == Some(&eol) {
            i += 1;
            if i == count {
                wrapped = true;
                i = 0;
            }
        }
    }
    let ceiling = if wrapped { count } else { i };
    for (index, file) in files.iter_mut().enumerate() {
        if index >= ceiling && !out.elide && file.is_none() {
            out.create(&names[index])?;
            *file = Some(Vec::new());
        }
    }
    for (name, file) in names.iter().zip(files) {
        if let Some(bytes) = file {
            out.finish(name, bytes)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn namer(length: usize, auto: bool) -> Namer {
        Namer {
            prefix: "x".into(),
            alphabet: b"abcdefghijklmnopqrstuvwxyz",
            length,
            auto,
            index: Vec::new(),
            additional: String::new(),
            started: false,
        }
    }

    #[test]
    fn names_widen_after_xyz() {
        let mut n = namer(2, true);
        let names: Vec<String> = (0..651).filter_map(|_| n.next(None)).collect();
        assert_eq!(names[0], "xaa");
        assert_eq!(names[649], "xyz");
        assert_eq!(names[650], "xzaaa");
    }

    #[test]
    fn fixed_length_names_run_out() {
        let mut n = namer(1, false);
        assert_eq!((0..27).filter_map(|_| n.next(None)).count(), 26);
    }
}
