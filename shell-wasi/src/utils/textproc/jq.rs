//! `jq FILTER [FILE...]`, evaluated by the jaq crates, with jq 1.6's
//! output format (2-space pretty printing, `%.17g`-style numbers) and
//! exit statuses: 2 for unreadable files, 3 for a filter that does not
//! compile, 4 for input that is not JSON, 5 for a runtime error, and with
//! `-e` 1 when the last output is false or null and 4 when there is none.
//! `input`/`inputs`, modules and colour output are not supported.

use jaq_core::load::{Arena, File, Loader};
use jaq_core::{Ctx, Vars, data};
use jaq_json::{Num, Val};

use super::read_source;
use crate::utils::Process;

/// jq's `@csv` and `@tsv`, which jaq leaves to its binary.
const FORMAT_DEFS: &str = r#"
def @csv: map(if type == "string" then "\"" + (split("\"") | join("\"\"")) + "\""
    elif type == "null" then "" else tostring end) | join(",");
def @tsv: map(if type == "string" then split("\\") | join("\\\\") | split("\t") | join("\\t")
    | split("\n") | join("\\n") | split("\r") | join("\\r")
    elif type == "null" then "" else tostring end) | join("\t");
"#;

const USAGE: &str = "Usage:\tjq [OPTIONS] FILTER [FILES...]";

#[derive(Default)]
struct Options {
    raw: bool,
    join: bool,
    compact: bool,
    null_input: bool,
    slurp: bool,
    exit_status: bool,
    sort_keys: bool,
    tab: bool,
    indent: usize,
    ascii: bool,
    raw_input: bool,
    vars: Vec<(String, Val)>,
}

pub(crate) fn jq(p: &mut Process<'_>, argv: &[String]) -> i32 {
    p.prefix = "jq".to_string();
    let mut o = Options {
        indent: 2,
        ..Options::default()
    };
    let mut positional = Vec::new();
    let args = argv.get(1..).unwrap_or_default();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if !arg.starts_with('-') || arg == "-" {
            positional.push(arg.clone());
            continue;
        }
        let take2 = |i: &mut usize| -> Option<(String, String)> {
            let a = args.get(*i)?.clone();
            let b = args.get(*i + 1)?.clone();
            *i += 2;
            Some((a, b))
        };
        match arg.as_str() {
            "--raw-output" => o.raw = true,
            "--join-output" => {
                o.raw = true;
                o.join = true;
            }
            "--compact-output" => o.compact = true,
            "--null-input" => o.null_input = true,
            "--slurp" => o.slurp = true,
            "--exit-status" => o.exit_status = true,
            "--sort-keys" => o.sort_keys = true,
            "--tab" => o.tab = true,
            "--ascii-output" => o.ascii = true,
            "--raw-input" => o.raw_input = true,
            "--color-output" | "--monochrome-output" | "--unbuffered" | "--seq" => {}
            "--indent" => match args.get(i).and_then(|v| v.parse::<usize>().ok()) {
                Some(n) => {
                    i += 1;
                    o.indent = n.min(7);
                }
                None => {
                    p.error("--indent takes one parameter");
                    return 2;
                }
            },
            "--arg" => match take2(&mut i) {
                Some((name, value)) => o.vars.push((name, Val::from(value))),
                None => {
                    p.error("--arg takes two parameters (e.g. --arg varname value)");
                    return 2;
                }
            },
            "--argjson" => match take2(&mut i) {
                Some((name, text)) => match jaq_json::read::parse_single(text.as_bytes()) {
                    Ok(v) => o.vars.push((name, v)),
                    Err(_) => {
                        p.error("Invalid JSON text passed to --argjson");
                        p.io.err_line("Use jq --help for help with command-line options,\nor see the jq manpage, or online docs  at https://stedolan.github.io/jq");
                        return 2;
                    }
                },
                None => {
                    p.error("--argjson takes two parameters (e.g. --argjson varname text)");
                    return 2;
                }
            },
            long if long.starts_with("--") => {
                p.io.err_line(&format!("jq: Unknown option: {long}"));
                p.io.err_line(USAGE);
                return 2;
            }
            short => {
                for c in short.chars().skip(1) {
                    match c {
                        'r' => o.raw = true,
                        'j' => {
                            o.raw = true;
                            o.join = true;
                        }
                        'c' => o.compact = true,
                        'n' => o.null_input = true,
                        's' => o.slurp = true,
                        'e' => o.exit_status = true,
                        'S' => o.sort_keys = true,
                        'a' => o.ascii = true,
                        'R' => o.raw_input = true,
                        'C' | 'M' => {}
                        _ => {
                            p.io.err_line(&format!("jq: Unknown option: {short}"));
                            p.io.err_line(USAGE);
                            return 2;
                        }
                    }
                }
            }
        }
    }
    let mut positional = positional.into_iter();
    let Some(filter_text) = positional.next() else {
        p.io.err_line(USAGE);
        return 2;
    };
    let files: Vec<String> = positional.collect();
    run(p, &o, &filter_text, &files)
}

fn run(p: &Process<'_>, o: &Options, code: &str, files: &[String]) -> i32 {
    // Inputs first: jq reports unreadable files before running anything.
    let mut data = Vec::new();
    let mut status = 0;
    let sources: Vec<String> = if files.is_empty() {
        vec!["-".to_string()]
    } else {
        files.to_vec()
    };
    if !o.null_input || !files.is_empty() {
        for f in &sources {
            match read_source(p, f) {
                Ok(d) => data.extend_from_slice(&d),
                Err(msg) => {
                    p.error(&format!("error: Could not open file {f}: {msg}"));
                    status = 2;
                }
            }
        }
    }

    let extra = jaq_core::load::parse(FORMAT_DEFS, |p| p.defs()).unwrap_or_default();
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs())
        .chain(extra);
    let funs = jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs());
    let loader = Loader::new(defs);
    let arena = Arena::default();
    let modules = match loader.load(&arena, File { code, path: () }) {
        Ok(m) => m,
        Err(errs) => {
            let _ = &errs;
            let token = if unbalanced(code) {
                "$end"
            } else {
                "INVALID_CHARACTER"
            };
            let tail = if token == "$end" { " " } else { "" };
            p.io.err_line(&format!(
                "jq: error: syntax error, unexpected {token} (Unix shell quoting issues?) at <top-level>, line 1:\n{code}{tail}"
            ));
            let count = errs.len().max(1);
            let plural = if count > 1 { "s" } else { "" };
            p.io.err_line(&format!("jq: {count} compile error{plural}"));
            return 3;
        }
    };
    let mut var_names: Vec<String> = vec!["$ENV".to_string()];
    var_names.extend(o.vars.iter().map(|(n, _)| format!("${n}")));
    let filter = match jaq_core::Compiler::default()
        .with_funs(funs)
        .with_global_vars(var_names.iter().map(String::as_str))
        .compile(modules)
    {
        Ok(f) => f,
        Err(errs) => {
            let mut count = 0;
            for (_, list) in &errs {
                for (name, undefined) in list {
                    count += 1;
                    let what = match undefined {
                        jaq_core::compile::Undefined::Filter(arity) => format!("{name}/{arity}"),
                        _ => (*name).to_string(),
                    };
                    p.io.err_line(&format!(
                        "jq: error: {what} is not defined at <top-level>, line 1:\n{code}"
                    ));
                }
            }
            let count = count.max(1);
            let plural = if count > 1 { "s" } else { "" };
            p.io.err_line(&format!("jq: {count} compile error{plural}"));
            return 3;
        }
    };
    let env_obj: Val = {
        let pairs = p
            .env
            .iter()
            .map(|(k, v)| (Val::from(k.clone()), Val::from(v.clone())));
        Val::obj(pairs.collect())
    };
    let mut var_values = vec![env_obj];
    var_values.extend(o.vars.iter().map(|(_, v)| v.clone()));

    // The inputs.
    let mut inputs: Vec<Val> = Vec::new();
    if o.raw_input {
        let text = String::from_utf8_lossy(&data).into_owned();
        if o.slurp {
            inputs.push(Val::from(text));
        } else {
            let body = text.strip_suffix('\n').unwrap_or(&text);
            if !text.is_empty() {
                inputs.extend(body.split('\n').map(|l| Val::from(l.to_string())));
            }
        }
    } else {
        let mut parse_failed = None;
        for item in jaq_json::read::parse_many(&data) {
            match item {
                Ok(v) => inputs.push(v),
                Err(e) => {
                    parse_failed = Some(e.to_string());
                    break;
                }
            }
        }
        if let Some(msg) = parse_failed {
            let (line, col) = end_position(&data);
            let kind = if msg.contains("eof") || msg.contains("EOF") || msg.contains("end") {
                "Unfinished JSON term at EOF"
            } else {
                "Invalid numeric literal"
            };
            // Output for the values before the error still happens.
            let st = eval_all(p, o, &filter, &var_values, inputs, data.is_empty());
            let _ = st;
            p.io.err_line(&format!("parse error: {kind} at line {line}, column {col}"));
            return 4;
        }
        if o.slurp {
            let arr: Val = inputs.drain(..).collect();
            inputs.push(arr);
        }
    }
    if o.null_input {
        inputs = vec![Val::Null];
    }
    let st = eval_all(p, o, &filter, &var_values, inputs, false);
    if status != 0 { status } else { st }
}

/// True when brackets or a string are left open (jq says `$end`).
fn unbalanced(code: &str) -> bool {
    let mut depth = 0i64;
    let mut in_str = false;
    let mut escaped = false;
    for c in code.chars() {
        if in_str {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
    }
    in_str || depth > 0 || code.trim_end().ends_with(['|', ',', '.'])
}

/// Line and column where jq's parser stops at the end of `data`.
fn end_position(data: &[u8]) -> (usize, usize) {
    let lines = data.iter().filter(|&&b| b == b'\n').count();
    let col = data.len() - data.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    (lines + 1, col)
}

/// Runs the filter on each input; returns the exit status.
fn eval_all(
    p: &Process<'_>,
    o: &Options,
    filter: &jaq_core::Filter<data::JustLut<Val>>,
    vars: &[Val],
    inputs: Vec<Val>,
    _empty: bool,
) -> i32 {
    let mut last: Option<bool> = None;
    let mut status = 0;
    for (n, input) in inputs.into_iter().enumerate() {
        let ctx = Ctx::<data::JustLut<Val>>::new(&filter.lut, Vars::new(vars.iter().cloned()));
        for item in filter.id.run((ctx, input)) {
            match item {
                Ok(v) => {
                    last = Some(!matches!(v, Val::Null | Val::Bool(false)));
                    let mut out = String::new();
                    match (&v, o.raw) {
                        (Val::TStr(s), true) => out.push_str(&String::from_utf8_lossy(s)),
                        _ => write_value(&mut out, &v, o, 0),
                    }
                    if !o.join {
                        out.push('\n');
                    }
                    if !p.out(out.as_bytes()) {
                        return status;
                    }
                }
                Err(exn) => match exn.get_err() {
                    Ok(err) => {
                        let where_ = if o.null_input {
                            "<unknown>".to_string()
                        } else {
                            format!("<stdin>:{}", n + 1)
                        };
                        p.io.err_line(&format!(
                            "jq: error (at {where_}): {}",
                            jq_message(&err.to_string())
                        ));
                        status = 5;
                    }
                    Err(exn) => {
                        if let Ok(code) = exn.get_halt() {
                            return code;
                        }
                        status = 5;
                    }
                },
            }
        }
    }
    if status != 0 {
        return status;
    }
    if o.exit_status {
        return match last {
            Some(true) => 0,
            Some(false) => 1,
            None => 4,
        };
    }
    0
}

/// The JSON type name jq uses in messages, for a value shown as JSON.
fn type_of(json: &str) -> &'static str {
    match json.trim().chars().next() {
        Some('"') => "string",
        Some('[') => "array",
        Some('{') => "object",
        Some('n') => "null",
        Some('t' | 'f') => "boolean",
        _ => "number",
    }
}

/// jaq's runtime error text reworded as jq 1.6 says it.
fn jq_message(msg: &str) -> String {
    if let Some(rest) = msg.strip_prefix("cannot index ")
        && let Some((l, r)) = rest.rsplit_once(" with ")
    {
        let lt = type_of(l);
        return match type_of(r) {
            "string" => format!("Cannot index {lt} with string {r}"),
            rt => format!("Cannot index {lt} with {rt}"),
        };
    }
    if let Some(rest) = msg.strip_prefix("cannot use ")
        && let Some((v, _)) = rest.split_once(" as iterable")
    {
        return format!("Cannot iterate over {} ({v})", type_of(v));
    }
    if let Some(rest) = msg.strip_prefix("cannot calculate ")
        && let Some((l, r)) = rest.split_once(" + ")
    {
        return format!(
            "{} ({l}) and {} ({r}) cannot be added",
            type_of(l),
            type_of(r)
        );
    }
    if msg.starts_with('"')
        && let Ok(Val::TStr(s)) = jaq_json::read::parse_single(msg.as_bytes())
    {
        return String::from_utf8_lossy(&s).into_owned();
    }
    msg.to_string()
}

/// Appends `v` as jq prints it.
fn write_value(out: &mut String, v: &Val, o: &Options, level: usize) {
    let pretty = !o.compact;
    let newline_indent = |out: &mut String, level: usize| {
        out.push('\n');
        if o.tab {
            out.extend(std::iter::repeat_n('\t', level));
        } else {
            out.extend(std::iter::repeat_n(' ', level * o.indent));
        }
    };
    let pretty = pretty && (o.tab || o.indent > 0);
    match v {
        Val::Null => out.push_str("null"),
        Val::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Val::Num(n) => out.push_str(&format_number(n)),
        Val::TStr(s) | Val::BStr(s) => write_string(out, &String::from_utf8_lossy(s), o.ascii),
        Val::Arr(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if pretty {
                    newline_indent(out, level + 1);
                }
                write_value(out, item, o, level + 1);
            }
            if pretty {
                newline_indent(out, level);
            }
            out.push(']');
        }
        Val::Obj(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            let mut entries: Vec<(&Val, &Val)> = map.iter().collect();
            if o.sort_keys {
                entries.sort_by(|a, b| a.0.cmp(b.0));
            }
            out.push('{');
            for (i, (k, val)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if pretty {
                    newline_indent(out, level + 1);
                }
                match k {
                    Val::TStr(s) | Val::BStr(s) => {
                        write_string(out, &String::from_utf8_lossy(s), o.ascii);
                    }
                    other => {
                        let mut key = String::new();
                        write_value(&mut key, other, o, 0);
                        write_string(out, &key, o.ascii);
                    }
                }
                out.push(':');
                if pretty {
                    out.push(' ');
                }
                write_value(out, val, o, level + 1);
            }
            if pretty {
                newline_indent(out, level);
            }
            out.push('}');
        }
    }
}

/// A JSON string with jq's escapes.
fn write_string(out: &mut String, s: &str, ascii: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if ascii && !c.is_ascii() => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A number as jq 1.6 prints it: every number is a double, shown with
/// the shortest round-trip digits, in exponent form when the decimal
/// point would be far outside the digits.
fn format_number(n: &Num) -> String {
    let x: f64 = match n {
        Num::Int(i) => *i as f64,
        Num::Float(f) => *f,
        other => other.to_string().parse::<f64>().unwrap_or(f64::NAN),
    };
    if x.is_nan() {
        return "null".to_string();
    }
    let x = if x.is_infinite() {
        f64::MAX.copysign(x)
    } else {
        x
    };
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // `{:e}` gives the shortest digits: `-1.2345e-7`.
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let ndigits = digits.len() as i32;
    let decpt = exp + 1;
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if decpt <= -4 || decpt > ndigits + 15 {
        out.push_str(digits.get(..1).unwrap_or("0"));
        if ndigits > 1 {
            out.push('.');
            out.push_str(digits.get(1..).unwrap_or(""));
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.abs()));
    } else if decpt <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-decpt) as usize));
        out.push_str(&digits);
    } else if decpt >= ndigits {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (decpt - ndigits) as usize));
    } else {
        out.push_str(digits.get(..decpt as usize).unwrap_or(""));
        out.push('.');
        out.push_str(digits.get(decpt as usize..).unwrap_or(""));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_like_jq_1_6() {
        let f = |x: f64| format_number(&Num::Float(x));
        assert_eq!(f(1000.0), "1000");
        assert_eq!(f(1.5e17), "1.5e+17");
        assert_eq!(f(12345678901234567890.0), "12345678901234567000");
        assert_eq!(f(0.0001), "0.0001");
        assert_eq!(f(1.23e-5), "1.23e-05");
        assert_eq!(f(1e100), "1e+100");
        assert_eq!(f(-1.5), "-1.5");
        assert_eq!(format_number(&Num::Int(42)), "42");
    }

    #[test]
    fn messages_follow_jq() {
        assert_eq!(
            jq_message("cannot index 1 with \"b\""),
            "Cannot index number with string \"b\""
        );
        assert_eq!(
            jq_message("cannot index [1] with \"a\""),
            "Cannot index array with string \"a\""
        );
        assert_eq!(
            jq_message("cannot use 5 as iterable"),
            "Cannot iterate over number (5)"
        );
    }
}
