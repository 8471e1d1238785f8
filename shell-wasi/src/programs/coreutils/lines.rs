//! Line-wise tools: `tac`, `rev`, `nl` (`-b -n -w -s -v`), `paste`
//! (`-d -s`) and `comm` (`-1 -2 -3`, with GNU's order check).

use super::Process;
use super::args::{HasArg, Spec};

/// Reads every operand (stdin when none) and concatenates them; errors are
/// reported and turn the status to 1.
fn read_all_inputs(p: &Process<'_>, operands: &[String]) -> (Vec<Vec<u8>>, i32) {
    let mut names = operands.to_vec();
    if names.is_empty() {
        names.push("-".to_string());
    }
    let mut status = 0;
    let mut datas = Vec::new();
    for name in &names {
        match super::read_input(p, name) {
            Ok(d) => datas.push(d),
            Err(e) => {
                super::file_error(p, name, &e);
                status = 1;
            }
        }
    }
    (datas, status)
}

pub(crate) fn tac(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "brs:",
        long: &[("separator", 's', HasArg::Yes), ("before", 'b', HasArg::No)],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let (datas, status) = read_all_inputs(p, &args.operands);
    for data in datas {
        let mut out = Vec::with_capacity(data.len());
        // Each record keeps its own separator; an unterminated last one
        // is printed as is, which glues it to the next (as GNU does).
        let records: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
        for r in records.iter().rev() {
            out.extend_from_slice(r);
        }
        if !super::write_all(p, &out) {
            break;
        }
    }
    status
}

pub(crate) fn rev(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let operands: Vec<String> = argv.get(1..).unwrap_or_default().to_vec();
    let (datas, status) = read_all_inputs(p, &operands);
    for data in datas {
        let text = String::from_utf8_lossy(&data);
        let mut out = String::with_capacity(text.len());
        for line in text.split_inclusive('\n') {
            let (body, nl) = match line.strip_suffix('\n') {
                Some(b) => (b, "\n"),
                None => (line, ""),
            };
            out.extend(body.chars().rev());
            out.push_str(nl);
        }
        if !super::write_all(p, out.as_bytes()) {
            break;
        }
    }
    status
}

const NL_SPEC: Spec<'static> = Spec {
    short: "b:n:w:s:v:i:h:f:d:l:p",
    long: &[
        ("body-numbering", 'b', HasArg::Yes),
        ("number-format", 'n', HasArg::Yes),
        ("number-width", 'w', HasArg::Yes),
        ("number-separator", 's', HasArg::Yes),
        ("starting-line-number", 'v', HasArg::Yes),
        ("line-increment", 'i', HasArg::Yes),
    ],
};

pub(crate) fn nl(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = match super::parse_args(p, &NL_SPEC, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let style = args.value('b').unwrap_or("t").to_string();
    let format = args.value('n').unwrap_or("rn").to_string();
    if !matches!(format.as_str(), "ln" | "rn" | "rz") {
        p.error(&format!(
            "invalid line numbering format: {}",
            p.quote(&format)
        ));
        return 1;
    }
    let width: usize = match args.value('w').map(str::parse) {
        None => 6,
        Some(Ok(w)) if w > 0 && w <= super::MAX_FIELD_WIDTH => w,
        Some(_) => {
            let v = args.value('w').unwrap_or_default();
            p.error(&format!("invalid line number field width: {}", p.quote(v)));
            return 1;
        }
    };
    let sep = args.value('s').unwrap_or("\t").to_string();
    let mut number: i64 = args.value('v').and_then(|v| v.parse().ok()).unwrap_or(1);
    let incr: i64 = args.value('i').and_then(|v| v.parse().ok()).unwrap_or(1);
    let (datas, status) = read_all_inputs(p, &args.operands);
    let mut out = String::new();
    for data in datas {
        let text = String::from_utf8_lossy(&data);
        for line in text.split_inclusive('\n') {
            let body = line.strip_suffix('\n').unwrap_or(line);
            let numbered = match style.as_str() {
                "a" => true,
                "n" => false,
                _ => !body.is_empty(),
            };
            if numbered {
                let n = match format.as_str() {
                    "ln" => format!("{number:<width$}"),
                    "rz" => format!("{number:0>width$}"),
                    _ => format!("{number:>width$}"),
                };
                out.push_str(&n);
                out.push_str(&sep);
                number += incr;
            } else {
                out.push_str(&" ".repeat(width + sep.len()));
            }
            out.push_str(line);
        }
    }
    super::write_all(p, out.as_bytes());
    status
}

pub(crate) fn paste(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "d:sz",
        long: &[
            ("delimiters", 'd', HasArg::Yes),
            ("serial", 's', HasArg::No),
            ("zero-terminated", 'z', HasArg::No),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let delims: Vec<u8> = match args.value('d') {
        None => vec![b'\t'],
        Some(d) => unescape_delims(d),
    };
    let mut names = args.operands.clone();
    if names.is_empty() {
        names.push("-".to_string());
    }
    // `-` named several times shares one stdin, read line by line.
    let stdin_lines: Vec<Vec<u8>> = if names.iter().any(|n| n == "-") {
        let data = p.io.stdin.borrow_mut().read_all();
        super::split_lines(&data, b'\n')
            .into_iter()
            .map(<[u8]>::to_vec)
            .collect()
    } else {
        Vec::new()
    };
    let mut stdin_pos = 0;
    let mut files: Vec<Option<Vec<Vec<u8>>>> = Vec::new();
    let mut status = 0;
    for name in &names {
        if name == "-" {
            files.push(None);
            continue;
        }
        match super::read_input(p, name) {
            Ok(d) => files.push(Some(
                super::split_lines(&d, b'\n')
                    .into_iter()
                    .map(<[u8]>::to_vec)
                    .collect(),
            )),
            Err(e) => {
                super::file_error(p, name, &e);
                return 1;
            }
        }
    }
    let delim_at = |i: usize| -> Option<u8> {
        if delims.is_empty() {
            None
        } else {
            delims.get(i % delims.len()).copied().filter(|&d| d != 0)
        }
    };
    let mut out = Vec::new();
    if args.has('s') {
        for file in &files {
            let lines: Vec<Vec<u8>> = match file {
                Some(lines) => lines.clone(),
                None => {
                    let rest = stdin_lines.get(stdin_pos..).unwrap_or_default().to_vec();
                    stdin_pos = stdin_lines.len();
                    rest
                }
            };
            for (i, line) in lines.iter().enumerate() {
                if i > 0
                    && let Some(d) = delim_at(i - 1)
                {
                    out.push(d);
                }
                out.extend_from_slice(line);
            }
            out.push(b'\n');
        }
    } else {
        let mut row = 0;
        loop {
            let mut any = false;
            let mut line_out = Vec::new();
            for (col, file) in files.iter().enumerate() {
                if col > 0
                    && let Some(d) = delim_at(col - 1)
                {
                    line_out.push(d);
                }
                let line = match file {
                    Some(lines) => lines.get(row).cloned(),
                    None => {
                        let l = stdin_lines.get(stdin_pos).cloned();
                        if l.is_some() {
                            stdin_pos += 1;
                        }
                        l
                    }
                };
                if let Some(l) = line {
                    any = true;
                    line_out.extend_from_slice(&l);
                }
            }
            if !any {
                break;
            }
            out.extend_from_slice(&line_out);
            out.push(b'\n');
            row += 1;
        }
    }
    if !super::write_all(p, &out) {
        status = 1;
    }
    status
}

/// `-d` lists: `\n`, `\t`, `\\`, and `\0` for no delimiter.
fn unescape_delims(d: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut chars = d.bytes();
    while let Some(c) = chars.next() {
        if c == b'\\' {
            match chars.next() {
                Some(b'n') => out.push(b'\n'),
                Some(b't') => out.push(b'\t'),
                Some(b'0') => out.push(0),
                Some(other) => out.push(other),
                None => out.push(b'\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

pub(crate) fn comm(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "123z",
        long: &[
            ("check-order", 'c', HasArg::No),
            ("nocheck-order", 'n', HasArg::No),
            ("output-delimiter", 'd', HasArg::Yes),
            ("total", 't', HasArg::No),
            ("zero-terminated", 'z', HasArg::No),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    match args.operands.len() {
        0 => return super::usage(p, "missing operand", 1),
        1 => {
            let last = args.operands.first().cloned().unwrap_or_default();
            return super::usage(p, &format!("missing operand after {}", p.quote(&last)), 1);
        }
        2 => {}
        _ => {
            let extra = args.operands.get(2).cloned().unwrap_or_default();
            return super::usage(p, &format!("extra operand {}", p.quote(&extra)), 1);
        }
    }
    let mut inputs = Vec::new();
    for name in &args.operands {
        match super::read_input(p, name) {
            Ok(d) => inputs.push(d),
            Err(e) => {
                super::file_error(p, name, &e);
                return 1;
            }
        }
    }
    let (Some(a), Some(b)) = (inputs.first(), inputs.get(1)) else {
        return 1;
    };
    let a = super::split_lines(a, b'\n');
    let b = super::split_lines(b, b'\n');
    let show = [!args.has('1'), !args.has('2'), !args.has('3')];
    let delim = args.value('d').unwrap_or("\t").to_string();
    let check = !args.has('n');
    let (mut i, mut j) = (0, 0);
    let mut unsorted = false;
    let mut warned = [false, false];
    let mut out: Vec<u8> = Vec::new();
    let emit = |out: &mut Vec<u8>, col: usize, line: &[u8]| {
        if show.get(col).copied().unwrap_or(false) {
            let lead = show.iter().take(col).filter(|&&s| s).count();
            out.extend_from_slice(delim.repeat(lead).as_bytes());
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    };
    let order_ok = |lines: &[&[u8]], k: usize| -> bool {
        k == 0
            || lines
                .get(k - 1)
                .zip(lines.get(k))
                .is_none_or(|(x, y)| x <= y)
    };
    while i < a.len() || j < b.len() {
        for (n, (lines, k)) in [(&a, i), (&b, j)].into_iter().enumerate() {
            if check && k < lines.len() && !order_ok(lines, k) && !warned[n] {
                warned[n] = true;
                unsorted = true;
                super::write_all(p, &out);
                out.clear();
                p.error(&format!("file {} is not in sorted order", n + 1));
            }
        }
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x < y => {
                emit(&mut out, 0, x);
                i += 1;
            }
            (Some(x), Some(y)) if x > y => {
                emit(&mut out, 1, y);
                j += 1;
            }
            (Some(x), Some(_)) => {
                emit(&mut out, 2, x);
                i += 1;
                j += 1;
            }
            (Some(x), None) => {
                emit(&mut out, 0, x);
                i += 1;
            }
            (None, Some(y)) => {
                emit(&mut out, 1, y);
                j += 1;
            }
            (None, None) => break,
        }
    }
    super::write_all(p, &out);
    if unsorted {
        p.error("input is not in sorted order");
        return 1;
    }
    0
}
