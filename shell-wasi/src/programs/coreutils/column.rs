//! `column -t [-s SEPARATORS] [-o OUTPUT_SEP] [FILE...]`: aligns fields into
//! a table, two spaces between columns (util-linux); without `-t` the
//! input passes through (filling columns by terminal width has no terminal
//! here).

use super::Process;
use super::args::{HasArg, Spec};

pub(crate) fn column(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "ts:o:",
        long: &[
            ("table", 't', HasArg::No),
            ("separator", 's', HasArg::Yes),
            ("output-separator", 'o', HasArg::Yes),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let names = if args.operands.is_empty() {
        vec!["-".to_string()]
    } else {
        args.operands.clone()
    };
    let mut input = Vec::new();
    for name in &names {
        match super::read_input(p, name) {
            Ok(bytes) => input.extend(bytes),
            Err(e) => {
                super::file_error(p, name, &e);
                return 1;
            }
        }
    }
    let text = String::from_utf8_lossy(&input);
    if !args.has('t') {
        p.out(text.as_bytes());
        return 0;
    }
    let separators = args.value('s').unwrap_or(" \t").to_string();
    let gap = args.value('o').unwrap_or("  ").to_string();
    let split_ws = !args.has('s');
    let rows: Vec<Vec<String>> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            if split_ws {
                line.split_whitespace().map(str::to_string).collect()
            } else {
                line.split(|c| separators.contains(c))
                    .map(str::to_string)
                    .collect()
            }
        })
        .collect();
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|f| f.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in &rows {
        let last = row.len().saturating_sub(1);
        for (c, field) in row.iter().enumerate() {
            out.push_str(field);
            if c < last {
                let pad = widths
                    .get(c)
                    .copied()
                    .unwrap_or(0)
                    .saturating_sub(field.chars().count());
                out.push_str(&" ".repeat(pad));
                out.push_str(&gap);
            }
        }
        out.push('\n');
    }
    p.out(out.as_bytes());
    0
}
