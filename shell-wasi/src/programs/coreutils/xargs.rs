//! `xargs [-0] [-d DELIM] [-n N] [-L N] [-I REPL] [-r] [-t] [COMMAND]`:
//! builds command lines from stdin and runs them through the shell's own
//! programs (`super::run_child`), each with an empty stdin as GNU gives.

use super::Process;
use super::args::{HasArg, Spec};

/// Exit status when some command failed with 1-125 (GNU's).
const SOME_FAILED: i32 = 123;

pub(crate) fn xargs(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "0d:n:L:I:i::rtpP:s:E:e::xa:",
        long: &[
            ("null", '0', HasArg::No),
            ("delimiter", 'd', HasArg::Yes),
            ("max-args", 'n', HasArg::Yes),
            ("max-lines", 'L', HasArg::Yes),
            ("replace", 'i', HasArg::Optional),
            ("no-run-if-empty", 'r', HasArg::No),
            ("verbose", 't', HasArg::No),
            ("max-procs", 'P', HasArg::Yes),
            ("max-chars", 's', HasArg::Yes),
            ("arg-file", 'a', HasArg::Yes),
        ],
    };
    // Options end at the command: stop parsing at the first operand.
    let args_all = argv.get(1..).unwrap_or_default();
    let mut split = 0;
    while let Some(a) = args_all.get(split) {
        if !a.starts_with('-') || a == "-" {
            break;
        }
        if a == "--" {
            break;
        }
        let takes = matches!(
            a.as_str(),
            "-d" | "-n" | "-L" | "-I" | "-P" | "-s" | "-E" | "-a"
        );
        split += if takes { 2 } else { 1 };
    }
    let split = split.min(args_all.len());
    let mut head = vec![argv.first().cloned().unwrap_or_default()];
    head.extend(args_all.get(..split).unwrap_or_default().iter().cloned());
    let args = match super::parse_args(p, &spec, &head, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let mut command: Vec<String> = args_all
        .get(split..)
        .unwrap_or_default()
        .iter()
        .skip_while(|a| *a == "--")
        .cloned()
        .collect();
    if command.is_empty() {
        command.push("echo".to_string());
    }
    let replace = args
        .opts
        .iter()
        .rev()
        .find(|o| o.key == 'I' || o.key == 'i')
        .map(|o| o.value.clone().unwrap_or_else(|| "{}".to_string()));
    let number = |key: char| -> Result<Option<usize>, String> {
        match args.value(key) {
            None => Ok(None),
            Some(v) => match v.parse::<usize>() {
                Ok(n) if n > 0 => Ok(Some(n)),
                _ => Err(format!("invalid number {} for -{key} option", p.quote(v))),
            },
        }
    };
    let (max_args, max_lines) = match (number('n'), number('L')) {
        (Ok(n), Ok(l)) => (n, l),
        (Err(m), _) | (_, Err(m)) => {
            p.error(&m);
            return 1;
        }
    };
    let data = match args.value('a') {
        Some(file) => match super::read_input(p, file) {
            Ok(d) => d,
            Err(e) => {
                p.error(&format!(
                    "Cannot open input file {}: {}",
                    p.quote(file),
                    crate::errors::strerror(&e)
                ));
                return 1;
            }
        },
        None => p.io.stdin.borrow_mut().read_all(),
    };
    // Items, grouped by input line (for -L and -I).
    let lines: Vec<Vec<String>> = if args.has('0') {
        vec![split_on(&data, 0)]
    } else if let Some(d) = args.value('d') {
        let delim = unescape_delim(d);
        vec![split_on(&data, delim)]
    } else if replace.is_some() {
        String::from_utf8_lossy(&data)
            .lines()
            .map(|l| l.trim_start().to_string())
            .filter(|l| !l.is_empty())
            .map(|l| vec![l])
            .collect()
    } else {
        match tokenize(&String::from_utf8_lossy(&data)) {
            Ok(l) => l,
            Err(q) => {
                p.error(&format!(
                    "unmatched {} quote; by default quotes are special to xargs unless you use the -0 option",
                    if q == '"' { "double" } else { "single" }
                ));
                return 1;
            }
        }
    };
    let mut batches: Vec<Vec<String>> = Vec::new();
    if replace.is_some() || max_lines.is_some() {
        let per = if replace.is_some() {
            1
        } else {
            max_lines.unwrap_or(1)
        };
        let nonempty: Vec<&Vec<String>> = lines.iter().filter(|l| !l.is_empty()).collect();
        for group in nonempty.chunks(per) {
            batches.push(group.iter().flat_map(|l| l.iter().cloned()).collect());
        }
    } else {
        let items: Vec<String> = lines.into_iter().flatten().collect();
        match max_args {
            Some(n) => batches.extend(items.chunks(n).map(<[String]>::to_vec)),
            None => {
                if !items.is_empty() {
                    batches.push(items);
                }
            }
        }
    }
    if batches.is_empty() && !args.has('r') && replace.is_none() {
        batches.push(Vec::new());
    }
    let mut status = 0;
    for batch in batches {
        let argv: Vec<String> = match &replace {
            Some(r) => {
                let item = batch.join(" ");
                command
                    .iter()
                    .map(|w| w.replace(r.as_str(), &item))
                    .collect()
            }
            None => command.iter().cloned().chain(batch).collect(),
        };
        if args.has('t') {
            p.io.err_line(&argv.join(" "));
        }
        match super::run_child(p, &argv, Some(Vec::new())) {
            None => {
                let name = argv.first().cloned().unwrap_or_default();
                p.error(&format!("{name}: No such file or directory"));
                return 127;
            }
            Some(255) => {
                let name = argv.first().cloned().unwrap_or_default();
                p.error(&format!("{name}: exited with status 255; aborting"));
                return 124;
            }
            Some(0) => {}
            Some(s) if (1..=125).contains(&s) => status = SOME_FAILED,
            Some(s) => return s,
        }
    }
    status
}

fn split_on(data: &[u8], delim: u8) -> Vec<String> {
    super::split_lines(data, delim)
        .into_iter()
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

fn unescape_delim(d: &str) -> u8 {
    match d {
        "\\n" => b'\n',
        "\\t" => b'\t',
        "\\0" => 0,
        _ => d.bytes().next().unwrap_or(b'\n'),
    }
}

/// xargs' default parsing: blanks separate, quotes and backslash group.
/// Returns items per input line, or the unmatched quote.
fn tokenize(text: &str) -> Result<Vec<Vec<String>>, char> {
    let mut lines = Vec::new();
    let mut line: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        Some('\n') | None => return Err(c),
                        Some(o) => word.push(o),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            ' ' | '\t' | '\n' => {
                if in_word {
                    line.push(std::mem::take(&mut word));
                    in_word = false;
                }
                if c == '\n' {
                    lines.push(std::mem::take(&mut line));
                }
            }
            o => {
                in_word = true;
                word.push(o);
            }
        }
    }
    if in_word {
        line.push(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizes_like_xargs() {
        assert_eq!(
            tokenize("a 'b c'\nd\\ e\n").unwrap(),
            vec![
                vec!["a".to_string(), "b c".to_string()],
                vec!["d e".to_string()]
            ]
        );
        assert_eq!(tokenize("'open"), Err('\''));
    }
}
