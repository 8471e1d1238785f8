//! `jq FILTER [FILE...]`, evaluated by the jaq crates, with jq 1.6's
//! output format (2-space pretty printing, `%.17g`-style numbers) and
//! exit statuses: 2 for unreadable files, 3 for a filter that does not
//! compile, 4 for input that is not JSON, 5 for a runtime error, and with
//! `-e` 1 when the last output is false or null and 4 when there is none.
//! Error messages name the file and line as jq 1.6's reader does (it
//! reads a line at a time). Modules and colour output are not supported.

use std::cell::RefCell;
use std::collections::VecDeque;

use jaq_core::box_iter::box_once;
use jaq_core::load::{Arena, File, Loader};
use jaq_core::native::{Fun, v};
use jaq_core::{Ctx, DataT, Error, Exn, Lut, RunPtr, Vars, data};
use jaq_json::{Num, Val};

use super::read_source;
use crate::programs::Process;

/// jq 1.6's definitions that jaq lacks or defines otherwise: `@csv`,
/// `@tsv`, `join` (null joins as ""), the stream and path helpers, and
/// the output side effects, which print through this program's stderr.
const JQ_DEFS: &str = r#"
def _jq_trunc: if length > 14 then .[0:11] + "..." else . end;
def @csv: if type != "array" then error("\(type) (\(tojson | _jq_trunc)) cannot be csv-formatted, only array") else
    map(if type == "string" then "\"" + (split("\"") | join("\"\"")) + "\""
    elif type == "null" then "" elif type == "array" or type == "object" then
    error("\(type) (\(tojson | _jq_trunc)) is not valid in a csv row") else tostring end) | join(",") end;
def @tsv: if type != "array" then error("\(type) (\(tojson | _jq_trunc)) cannot be tsv-formatted, only array") else
    map(if type == "string" then split("\\") | join("\\\\") | split("\t") | join("\\t")
    | split("\n") | join("\\n") | split("\r") | join("\\r")
    elif type == "null" then "" elif type == "array" or type == "object" then
    error("\(type) (\(tojson | _jq_trunc)) is not valid in a tsv row") else tostring end) | join("\t") end;
def join($x): reduce .[] as $i (null; (if . == null then "" else . + $x end) +
    ($i | if . == null then "" elif type == "string" then . else tojson end)) // "";
def env: $ENV;
def ltrimstr($x): if type == "string" and ($x | type) == "string" and startswith($x)
    then .[($x | length):] else . end;
def rtrimstr($x): if type == "string" and ($x | type) == "string" and ($x | length) > 0
    and endswith($x) then .[:length - ($x | length)] else . end;
def _jq_matchable: if type != "string"
    then error("\(type) (\(tojson | _jq_trunc)) cannot be matched, as it is not a string") end;
def splits($re): _jq_matchable | split($re; null)[];
def splits($re; flags): _jq_matchable | split($re; flags)[];
def to_entries: if type == "object" or type == "array"
    then [keys_unsorted[] as $k | {key: $k, value: .[$k]}]
    else error("\(type) (\(tojson | _jq_trunc)) has no keys") end;
def leaf_paths: paths(scalars);
def tostream: path(def r: (.[]?|r), .; r) as $p | getpath($p) | reduce path(.[]?) as $q ([$p, .]; [$p+$q]);
def fromstream(f): { x: null, e: false } as $init
    | foreach f as $i ($init; if .e then $init else . end
    | if $i | length == 2 then setpath(["e"]; $i[0] | length == 0) | setpath(["x"] + $i[0]; $i[1])
      else setpath(["e"]; $i[0] | length == 1) end; if .e then .x else empty end);
def INDEX(stream; idx_expr): reduce stream as $row ({}; .[$row|idx_expr|tostring] |= $row);
def INDEX(idx_expr): INDEX(.[]; idx_expr);
def debug: (_jq_debug as $x | .), .;
def stderr: (_jq_stderr as $x | .), .;
def halt_error($exit_code): _jq_halt_message, halt($exit_code);
def halt_error: halt_error(5);
def input_line_number: 0;
"#;

const HELP_HINT: &str = "Use jq --help for help with command-line options,\nor see the jq manpage, or online docs  at https://stedolan.github.io/jq";

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
    /// `--arg`, `--argjson`, `--slurpfile`, `--rawfile`: `$name` and `$ARGS.named`.
    vars: Vec<(String, Val)>,
    /// `--args` / `--jsonargs`: what the words after the filter are.
    positional_mode: Positional,
    positional: Vec<Val>,
}

#[derive(Default, Clone, Copy, PartialEq)]
enum Positional {
    #[default]
    Files,
    Strings,
    Json,
}

/// An option error: jq's message, then its hint, status 2.
fn usage_error(p: &Process<'_>, msg: &str) -> i32 {
    p.io.err_line(&format!("jq: {msg}"));
    p.io.err_line(HELP_HINT);
    2
}

pub(crate) fn jq(p: &mut Process<'_>, argv: &[String]) -> i32 {
    p.prefix = "jq".to_string();
    let mut o = Options {
        indent: 2,
        ..Options::default()
    };
    let mut filter_text: Option<String> = None;
    let mut files = Vec::new();
    let args = argv.get(1..).unwrap_or_default();
    let mut i = 0;
    let mut options_done = false;
    while let Some(arg) = args.get(i) {
        i += 1;
        if options_done || !arg.starts_with('-') || arg == "-" {
            if filter_text.is_none() {
                filter_text = Some(arg.clone());
                continue;
            }
            match o.positional_mode {
                Positional::Files => files.push(arg.clone()),
                Positional::Strings => o.positional.push(Val::from(arg.clone())),
                Positional::Json => match jaq_json::read::parse_single(arg.as_bytes()) {
                    Ok(v) => o.positional.push(v),
                    Err(_) => {
                        return usage_error(p, "Invalid JSON text passed to --jsonargs");
                    }
                },
            }
            continue;
        }
        let take = |i: &mut usize, n: usize| -> Option<Vec<String>> {
            let got: Vec<String> = args.get(*i..*i + n)?.to_vec();
            *i += n;
            Some(got)
        };
        match arg.as_str() {
            "--" => options_done = true,
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
            "--args" => o.positional_mode = Positional::Strings,
            "--jsonargs" => o.positional_mode = Positional::Json,
            "--color-output" | "--monochrome-output" | "--unbuffered" | "--seq" => {}
            "--indent" => match args.get(i).map(|v| v.parse::<i64>()) {
                Some(Ok(n)) if (-1..=7).contains(&n) => {
                    i += 1;
                    if n < 0 {
                        o.tab = true;
                    }
                    o.indent = usize::try_from(n).unwrap_or(0);
                }
                Some(Ok(_)) => return usage_error(p, "--indent takes a number between -1 and 7"),
                _ => return usage_error(p, "--indent takes one parameter"),
            },
            "--arg" => match take(&mut i, 2) {
                Some(v) => o.vars.push((v[0].clone(), Val::from(v[1].clone()))),
                None => {
                    return usage_error(p, "--arg takes two parameters (e.g. --arg varname value)");
                }
            },
            "--argjson" => match take(&mut i, 2) {
                Some(v) => match jaq_json::read::parse_single(v[1].as_bytes()) {
                    Ok(val) => o.vars.push((v[0].clone(), val)),
                    Err(_) => return usage_error(p, "invalid JSON text passed to --argjson"),
                },
                None => {
                    return usage_error(
                        p,
                        "--argjson takes two parameters (e.g. --argjson varname text)",
                    );
                }
            },
            opt @ ("--slurpfile" | "--rawfile") => {
                let Some(v) = take(&mut i, 2) else {
                    return usage_error(
                        p,
                        &format!("{opt} takes two parameters (e.g. {opt} varname filename)"),
                    );
                };
                let text = match read_source(p, &v[1]) {
                    Ok(t) => t,
                    Err(msg) => {
                        p.io.err_line(&format!(
                            "jq: Bad JSON in {opt} {} {}: Could not open {}: {msg}",
                            v[0], v[1], v[1]
                        ));
                        return 2;
                    }
                };
                if opt == "--rawfile" {
                    o.vars.push((
                        v[0].clone(),
                        Val::from(String::from_utf8_lossy(&text).into_owned()),
                    ));
                } else {
                    let (items, err) = split_values(&text);
                    if let Some(e) = err {
                        p.io.err_line(&format!(
                            "jq: Bad JSON in {opt} {} {}: {} at line {}, column {}",
                            v[0], v[1], e.message, e.line, e.column
                        ));
                        return 2;
                    }
                    let vals: Vec<Val> = items.into_iter().map(|(v, _)| v).collect();
                    o.vars.push((v[0].clone(), vals.into_iter().collect()));
                }
            }
            long if long.starts_with("--") => {
                return usage_error(p, &format!("Unknown option {long}"));
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
                        _ => return usage_error(p, &format!("Unknown option {short}")),
                    }
                }
            }
        }
    }
    // Without a filter and with stdin not a terminal, jq runs `.`.
    let filter_text = filter_text.unwrap_or_else(|| ".".to_string());
    run(p, &o, &filter_text, &files)
}

/// What runs the filter: the look-up table, the inputs and stderr.
struct DataKind;

impl DataT for DataKind {
    type V<'a> = Val;
    type Data<'a> = &'a Data<'a>;
}

struct Data<'a> {
    lut: &'a Lut<DataKind>,
    inputs: &'a Inputs,
    err: &'a dyn Fn(&[u8]),
}

impl<'a> data::HasLut<'a, DataKind> for &'a Data<'a> {
    fn lut(&self) -> &'a Lut<DataKind> {
        self.lut
    }
}

/// One input value and where jq's reader was when it came out.
struct Item {
    val: Val,
    /// `None` for standard input.
    file: Option<String>,
    line: usize,
}

/// The input values not read yet, and where the reader is (for the
/// `(at FILE:LINE)` of error messages and `input_filename`).
#[derive(Default)]
struct Inputs {
    queue: RefCell<VecDeque<Item>>,
    /// File and line of the last value read; `None` is `<unknown>`.
    pos: RefCell<Option<(Option<String>, usize)>>,
    /// Where the reader ends when no value was read (an empty file).
    end: Option<(Option<String>, usize)>,
    taken: RefCell<usize>,
    /// Whether the last text ends with a newline: jq's reader keeps its
    /// place in it after the last value only then.
    ends_with_newline: bool,
    /// The error that ends the text, met once the values before it are read.
    parse_error: RefCell<Option<ParseError>>,
    /// Set when the reading met `parse_error`.
    failed: RefCell<bool>,
}

impl Inputs {
    fn next(&self) -> Option<Val> {
        let item = self.queue.borrow_mut().pop_front();
        match item {
            Some(item) => {
                *self.taken.borrow_mut() += 1;
                *self.pos.borrow_mut() = Some((item.file, item.line));
                Some(item.val)
            }
            None => {
                if let Some(e) = self.parse_error.borrow().as_ref() {
                    *self.failed.borrow_mut() = true;
                    let line = if e.column == 0 { e.line - 1 } else { e.line };
                    let file = self.end.as_ref().and_then(|(f, _)| f.clone());
                    *self.pos.borrow_mut() = Some((file, line));
                    return None;
                }
                let fresh = *self.taken.borrow() == 0;
                if fresh {
                    *self.pos.borrow_mut() = self.end.clone();
                } else if !self.ends_with_newline {
                    *self.pos.borrow_mut() = None;
                }
                None
            }
        }
    }

    /// Why `input` has nothing: the text's error, or jq 1.6's `break`.
    fn end_message(&self) -> String {
        match self.parse_error.borrow().as_ref() {
            Some(e) => format!("{} at line {}, column {}", e.message, e.line, e.column),
            None => "break".to_string(),
        }
    }

    fn location(&self) -> String {
        match &*self.pos.borrow() {
            None => "<unknown>".to_string(),
            Some((file, line)) => format!("{}:{line}", file.as_deref().unwrap_or("<stdin>")),
        }
    }
}

fn cv_data<'a>(cv: &jaq_core::Cv<'a, DataKind>) -> &'a Data<'a> {
    cv.0.data()
}

fn natives() -> Vec<Fun<DataKind>> {
    let list: Vec<jaq_core::native::Filter<RunPtr<DataKind>>> = vec![
        ("input", v(0), |cv| {
            let data = cv_data(&cv);
            match data.inputs.next() {
                Some(v) => box_once(Ok(v)),
                None => box_once(Err(Exn::from(Error::str(data.inputs.end_message())))),
            }
        }),
        ("inputs", v(0), |cv| {
            let data = cv_data(&cv);
            Box::new(std::iter::from_fn(move || data.inputs.next().map(Ok)))
        }),
        ("input_filename", v(0), |cv| {
            let data = cv_data(&cv);
            let name = match &*data.inputs.pos.borrow() {
                Some((Some(f), _)) => Val::from(f.clone()),
                _ => Val::Null,
            };
            box_once(Ok(name))
        }),
        ("_jq_debug", v(0), |cv| {
            let data = cv_data(&cv);
            let mut line = "[\"DEBUG:\",".to_string();
            write_value(&mut line, &cv.1, &COMPACT, 0);
            line.push_str("]\n");
            (data.err)(line.as_bytes());
            Box::new(std::iter::empty())
        }),
        ("_jq_stderr", v(0), |cv| {
            let data = cv_data(&cv);
            let mut text = String::new();
            write_value(&mut text, &cv.1, &COMPACT, 0);
            (data.err)(text.as_bytes());
            Box::new(std::iter::empty())
        }),
        ("_jq_halt_message", v(0), |cv| {
            let data = cv_data(&cv);
            match &cv.1 {
                Val::Null => {}
                Val::TStr(s) | Val::BStr(s) => (data.err)(s),
                other => {
                    let mut text = String::new();
                    write_value(&mut text, other, &COMPACT, 0);
                    text.push('\n');
                    (data.err)(text.as_bytes());
                }
            }
            Box::new(std::iter::empty())
        }),
    ];
    list.into_iter()
        .map(jaq_core::native::run::<DataKind>)
        .collect()
}

/// Options for `-c` output, used by `debug` and `stderr`.
const COMPACT: Options = Options {
    raw: false,
    join: false,
    compact: true,
    null_input: false,
    slurp: false,
    exit_status: false,
    sort_keys: false,
    tab: false,
    indent: 0,
    ascii: false,
    raw_input: false,
    vars: Vec::new(),
    positional_mode: Positional::Files,
    positional: Vec::new(),
};

/// A JSON text error as jq's parser words it.
struct ParseError {
    message: String,
    line: usize,
    column: usize,
}

/// The values of a JSON text (each with the line jq's reader has read up
/// to when it comes out), and the error that stops it, if any.
fn split_values(data: &[u8]) -> (Vec<(Val, usize)>, Option<ParseError>) {
    let mut out = Vec::new();
    let mut scan = JsonScan::default();
    let mut start: Option<usize> = None;
    let newlines_before = |i: usize| data.iter().take(i).filter(|&&b| b == b'\n').count();
    let line_of = |end: usize| {
        let before = newlines_before(end);
        before + usize::from(data.iter().skip(end).any(|&b| b == b'\n'))
    };
    let emit = |from: usize,
                to: usize,
                at: usize,
                out: &mut Vec<(Val, usize)>|
     -> Result<(), ParseError> {
        let slice = data.get(from..to).unwrap_or_default();
        match jaq_json::read::parse_single(slice) {
            Ok(v) => {
                out.push((v, line_of(at)));
                Ok(())
            }
            Err(_) => Err(ParseError {
                message: "Invalid literal".to_string(),
                line: 0,
                column: 0,
            }),
        }
    };
    for (i, &b) in data.iter().enumerate() {
        if start.is_none() && !b.is_ascii_whitespace() {
            start = Some(i);
        }
        match scan.feed(b) {
            Ok(Some(done)) => {
                let from = start.take().unwrap_or(i);
                // A literal ends at the byte after it; that byte may begin the next value.
                let (to, next_start) = match done {
                    Done::AtThisByte => (i + 1, None),
                    Done::BeforeThisByte => {
                        let next = (!b.is_ascii_whitespace()).then_some(i);
                        (i, next)
                    }
                };
                if let Err(mut e) = emit(from, to, i, &mut out) {
                    (e.line, e.column) = scan.position();
                    return (out, Some(e));
                }
                start = next_start;
                if next_start.is_some() {
                    // The byte that ended the literal starts a value: feed it again.
                    if let Err(e) = scan.refeed(b) {
                        return (out, Some(e));
                    }
                }
            }
            Ok(None) => {}
            Err(e) => return (out, Some(e)),
        }
    }
    match scan.finish() {
        Ok(true) => {
            let from = start.unwrap_or(data.len());
            if let Err(mut e) = emit(from, data.len(), data.len(), &mut out) {
                (e.line, e.column) = scan.position();
                e.message.push_str(" at EOF");
                return (out, Some(e));
            }
            (out, None)
        }
        Ok(false) => (out, None),
        Err(e) => (out, Some(e)),
    }
}

enum Done {
    AtThisByte,
    BeforeThisByte,
}

#[derive(Clone, Copy, PartialEq)]
enum Frame {
    /// In an array: whether a value is pending (before `,` or `]`).
    Array { pending: bool, any: bool },
    /// In an object: 0 want key, 1 want colon, 2 want value, 3 have value.
    Object { state: u8, any: bool },
}

/// A byte-at-a-time model of jq 1.6's JSON reader, for where values end
/// and how a broken text is reported.
#[derive(Default)]
struct JsonScan {
    stack: Vec<Frame>,
    depth: usize,
    in_string: bool,
    escaped: bool,
    literal: Vec<u8>,
    /// A complete value at top level or in a container slot, not yet used.
    top_pending: bool,
    line: usize,
    column: usize,
}

impl JsonScan {
    fn position(&self) -> (usize, usize) {
        (self.line + 1, self.column)
    }

    fn error(&self, message: &str) -> ParseError {
        let (line, column) = self.position();
        ParseError {
            message: message.to_string(),
            line,
            column,
        }
    }

    fn count(&mut self, b: u8) {
        if b == b'\n' {
            self.line += 1;
            self.column = 0;
        } else {
            self.column += 1;
        }
    }

    fn check_literal(&self) -> Result<(), ParseError> {
        let lit = &self.literal;
        let ok = match lit.first() {
            Some(b't' | b'f' | b'n') => {
                if matches!(lit.as_slice(), b"true" | b"false" | b"null" | b"nan") {
                    true
                } else {
                    return Err(self.error("Invalid literal"));
                }
            }
            _ => std::str::from_utf8(lit)
                .ok()
                .is_some_and(|s| s.parse::<f64>().is_ok()),
        };
        if ok {
            Ok(())
        } else {
            Err(self.error("Invalid numeric literal"))
        }
    }

    /// A value is complete in the current slot.
    fn value(&mut self) -> Result<bool, ParseError> {
        match self.stack.last_mut() {
            None => {
                if self.top_pending {
                    return Err(self.error("Expected separator between values"));
                }
                Ok(true)
            }
            Some(Frame::Array { pending, any }) => {
                if *pending {
                    return Err(self.error("Expected separator between values"));
                }
                *pending = true;
                *any = true;
                Ok(false)
            }
            Some(Frame::Object { state, any }) => {
                match *state {
                    0 => *state = 1,
                    2 => {
                        *state = 3;
                        *any = true;
                    }
                    _ => return Err(self.error("Expected separator between values")),
                }
                Ok(false)
            }
        }
    }

    fn refeed(&mut self, b: u8) -> Result<(), ParseError> {
        // Undo the count of the byte, then feed it as a fresh byte.
        if b == b'\n' {
            self.line -= 1;
        } else {
            self.column -= 1;
        }
        self.feed(b).map(|_| ())
    }

    fn feed(&mut self, b: u8) -> Result<Option<Done>, ParseError> {
        self.count(b);
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                let top = self.value()?;
                return Ok(top.then_some(Done::AtThisByte));
            }
            return Ok(None);
        }
        let structural = matches!(b, b'[' | b'{' | b']' | b'}' | b',' | b':' | b'"');
        if !(structural || b.is_ascii_whitespace()) {
            self.literal.push(b);
            return Ok(None);
        }
        if !self.literal.is_empty() {
            self.check_literal()?;
            self.literal.clear();
            if self.value()? {
                return Ok(Some(Done::BeforeThisByte));
            }
        }
        match b {
            b'"' => {
                if let Some(Frame::Object { state: 1 | 3, .. })
                | Some(Frame::Array { pending: true, .. }) = self.stack.last()
                {
                    return Err(self.error("Expected separator between values"));
                }
                self.in_string = true;
            }
            b'[' | b'{' => {
                if let Some(Frame::Object {
                    state: 0 | 1 | 3, ..
                })
                | Some(Frame::Array { pending: true, .. }) = self.stack.last()
                {
                    return Err(self.error("Expected separator between values"));
                }
                self.stack.push(if b == b'[' {
                    Frame::Array {
                        pending: false,
                        any: false,
                    }
                } else {
                    Frame::Object {
                        state: 0,
                        any: false,
                    }
                });
                self.depth += 1;
            }
            b']' => {
                match self.stack.last() {
                    Some(Frame::Array { pending, any }) => {
                        if !pending && *any {
                            return Err(self.error("Expected another array element"));
                        }
                    }
                    _ => return Err(self.error("Unmatched ']'")),
                }
                self.stack.pop();
                self.depth -= 1;
                let top = self.value()?;
                return Ok(top.then_some(Done::AtThisByte));
            }
            b'}' => {
                match self.stack.last() {
                    Some(Frame::Object { state, any }) => match state {
                        3 => {}
                        0 if !any => {}
                        0 => return Err(self.error("Expected another key-value pair")),
                        _ => return Err(self.error("Objects must consist of key:value pairs")),
                    },
                    _ => return Err(self.error("Unmatched '}'")),
                }
                self.stack.pop();
                self.depth -= 1;
                let top = self.value()?;
                return Ok(top.then_some(Done::AtThisByte));
            }
            b',' => match self.stack.last_mut() {
                None => return Err(self.error("Expected value before ','")),
                Some(Frame::Array { pending, .. }) => {
                    if !*pending {
                        return Err(self.error("Expected value before ','"));
                    }
                    *pending = false;
                }
                Some(Frame::Object { state, .. }) => {
                    if *state != 3 {
                        return Err(self.error("Objects must consist of key:value pairs"));
                    }
                    *state = 0;
                }
            },
            b':' => match self.stack.last_mut() {
                Some(Frame::Object { state, .. }) if *state == 1 => *state = 2,
                Some(Frame::Object { .. }) => {
                    return Err(self.error("Object keys must be strings"));
                }
                _ => return Err(self.error("':' not as part of an object")),
            },
            _ => {}
        }
        Ok(None)
    }

    /// At the end of the text: whether a literal is left to emit.
    fn finish(&mut self) -> Result<bool, ParseError> {
        if self.in_string || !self.stack.is_empty() {
            return Err(self.error("Unfinished JSON term at EOF"));
        }
        if self.literal.is_empty() {
            return Ok(false);
        }
        if let Err(mut e) = self.check_literal() {
            e.message.push_str(" at EOF");
            return Err(e);
        }
        Ok(true)
    }
}

fn run(p: &Process<'_>, o: &Options, code: &str, files: &[String]) -> i32 {
    // Inputs first: jq reports unreadable files before running anything.
    let mut status = 0;
    let sources: Vec<String> = if files.is_empty() {
        vec!["-".to_string()]
    } else {
        files.to_vec()
    };
    let mut texts: Vec<(Option<String>, Vec<u8>)> = Vec::new();
    for f in &sources {
        match read_source(p, f) {
            Ok(d) => texts.push(((f != "-").then(|| f.clone()), d)),
            Err(msg) => {
                p.error(&format!("error: Could not open file {f}: {msg}"));
                status = 2;
            }
        }
    }

    let extra = jaq_core::load::parse(JQ_DEFS, |p| p.defs()).unwrap_or_default();
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs())
        .chain(extra);
    let replaced = ["input", "inputs", "env", "input_filename"];
    let funs = jaq_core::funs()
        .chain(jaq_std::funs().filter(|(name, _, _)| !replaced.contains(name)))
        .chain(jaq_json::funs())
        .chain(natives());
    let loader = Loader::new(defs);
    let arena = Arena::default();
    let modules = match loader.load(&arena, File { code, path: () }) {
        Ok(m) => m,
        Err(errs) => {
            let token = if unbalanced(code) {
                "$end"
            } else {
                "INVALID_CHARACTER"
            };
            let pad = " ".repeat(last_token_start(code));
            p.io.err_line(&format!(
                "jq: error: syntax error, unexpected {token} (Unix shell quoting issues?) at <top-level>, line 1:\n{code}{pad}"
            ));
            let count = errs.len().max(1);
            let plural = if count > 1 { "s" } else { "" };
            p.io.err_line(&format!("jq: {count} compile error{plural}"));
            return 3;
        }
    };
    let mut var_names: Vec<String> = vec!["$ENV".to_string(), "$ARGS".to_string()];
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
                    let pad = " ".repeat(word_start(code, name));
                    p.io.err_line(&format!(
                        "jq: error: {what} is not defined at <top-level>, line 1:\n{code}{pad}"
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
    let named: Val = Val::obj(
        o.vars
            .iter()
            .map(|(k, v)| (Val::from(k.clone()), v.clone()))
            .collect(),
    );
    let args_obj = Val::obj(
        [
            (
                Val::from("positional".to_string()),
                o.positional.iter().cloned().collect(),
            ),
            (Val::from("named".to_string()), named),
        ]
        .into_iter()
        .collect(),
    );
    let mut var_values = vec![env_obj, args_obj];
    var_values.extend(o.vars.iter().map(|(_, v)| v.clone()));

    // The inputs, each with where the reader is when it comes out.
    let mut inputs = Inputs::default();
    let mut parse_error = None;
    {
        let mut queue = inputs.queue.borrow_mut();
        for (file, data) in &texts {
            if o.raw_input {
                let text = String::from_utf8_lossy(data).into_owned();
                let body = text.strip_suffix('\n').unwrap_or(&text);
                if !text.is_empty() {
                    for (n, l) in body.split('\n').enumerate() {
                        queue.push_back(Item {
                            val: Val::from(l.to_string()),
                            file: file.clone(),
                            line: n + 1,
                        });
                    }
                }
            } else {
                let (items, err) = split_values(data);
                queue.extend(items.into_iter().map(|(val, line)| Item {
                    val,
                    file: file.clone(),
                    line,
                }));
                if err.is_some() {
                    parse_error = err;
                    inputs.end = Some((file.clone(), 0));
                    break;
                }
            }
            let lines = data.iter().filter(|&&b| b == b'\n').count();
            inputs.end = Some((file.clone(), lines));
            inputs.ends_with_newline = data.ends_with(b"\n");
        }
        if o.raw_input && o.slurp {
            let text: String = texts
                .iter()
                .map(|(_, d)| String::from_utf8_lossy(d).into_owned())
                .collect();
            queue.clear();
            queue.push_back(Item {
                val: Val::from(text),
                file: texts.last().and_then(|(f, _)| f.clone()),
                line: 0,
            });
        } else if o.slurp && !o.null_input {
            let all: Vec<Item> = queue.drain(..).collect();
            let (file, line) = all.last().map_or((None, 0), |i| (i.file.clone(), i.line));
            queue.push_back(Item {
                val: all.into_iter().map(|i| i.val).collect(),
                file,
                line,
            });
        }
    }
    *inputs.parse_error.borrow_mut() = parse_error;
    let err = |b: &[u8]| p.io.err(b);
    let lut = &filter.lut;
    let data = Data {
        lut,
        inputs: &inputs,
        err: &err,
    };
    let st = eval_all(p, o, &filter, &var_values, &data);
    if !o.null_input
        && *inputs.failed.borrow()
        && let Some(e) = inputs.parse_error.borrow().as_ref()
    {
        p.io.err_line(&format!(
            "parse error: {} at line {}, column {}",
            e.message, e.line, e.column
        ));
        return 4;
    }
    if status != 0 { status } else { st }
}

/// Where the last token of `code` starts (jq pads its echo of the
/// program to the error's place).
fn last_token_start(code: &str) -> usize {
    let trimmed = code.trim_end();
    let Some(last) = trimmed.chars().last() else {
        return 0;
    };
    if !(last.is_alphanumeric() || last == '_') {
        return trimmed.chars().count() - 1;
    }
    let word = trimmed
        .chars()
        .rev()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .count();
    trimmed.chars().count() - word
}

/// Where the name `name` first appears as a word of `code`.
fn word_start(code: &str, name: &str) -> usize {
    let chars: Vec<char> = code.chars().collect();
    let want: Vec<char> = name.chars().collect();
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    (0..chars.len())
        .find(|&i| {
            chars.get(i..i + want.len()) == Some(want.as_slice())
                && (i == 0 || !is_word(chars[i - 1]))
                && chars.get(i + want.len()).is_none_or(|c| !is_word(*c))
        })
        .unwrap_or(0)
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
    in_str
        || depth > 0
        || code
            .trim_end()
            .ends_with(['|', ',', '.', '+', '-', '*', '/'])
}

/// Runs the filter on each input; returns the exit status.
fn eval_all<'a>(
    p: &Process<'_>,
    o: &Options,
    filter: &'a jaq_core::Filter<DataKind>,
    vars: &[Val],
    data: &'a Data<'a>,
) -> i32 {
    let mut last: Option<bool> = None;
    let mut status = 0;
    let mut first = true;
    let mut ran = false;
    loop {
        let input = if o.null_input {
            if !first {
                break;
            }
            Val::Null
        } else {
            match data.inputs.next() {
                Some(v) => v,
                None => break,
            }
        };
        first = false;
        ran = true;
        let ctx = Ctx::<DataKind>::new(data, Vars::new(vars.iter().cloned()));
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
                Err(exn) => {
                    match exn.get_err() {
                        Ok(err) => {
                            if let Some(msg) = error_text(err) {
                                p.io.err_line(&format!(
                                    "jq: error (at {}){msg}",
                                    data.inputs.location()
                                ));
                                status = 5;
                            }
                        }
                        Err(exn) => {
                            if let Ok(code) = exn.get_halt() {
                                return code;
                            }
                            status = 5;
                        }
                    }
                    // An error ends the work on this input.
                    break;
                }
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
            None if ran => 4,
            None => 0,
        };
    }
    0
}

/// What follows `jq: error (at ...)` for an error: `: message` or
/// ` (not a string): value`; `None` for `error(null)`, which jq 1.6
/// does not report.
fn error_text(err: Error<Val>) -> Option<String> {
    let shown = err.to_string();
    let val = err.into_val();
    match &val {
        Val::TStr(s) | Val::BStr(s) => {
            // jaq's own messages are strings too: reword those jq words otherwise.
            let text = String::from_utf8_lossy(s).into_owned();
            let _ = shown;
            Some(format!(": {}", jq_message(&text)))
        }
        Val::Null => None,
        other => {
            let mut text = String::new();
            write_value(&mut text, other, &COMPACT, 0);
            Some(format!(" (not a string): {text}"))
        }
    }
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
        return format!("Cannot iterate over {} ({})", type_of(v), truncate(v));
    }
    if let Some(rest) = msg.strip_prefix("cannot calculate ") {
        for (op, verb) in [
            (" + ", "added"),
            (" - ", "subtracted"),
            (" * ", "multiplied"),
            (" / ", "divided"),
            (" % ", "divided"),
        ] {
            if let Some((l, r)) = rest.split_once(op) {
                return format!(
                    "{} ({}) and {} ({}) cannot be {verb}",
                    type_of(l),
                    truncate(l),
                    type_of(r),
                    truncate(r)
                );
            }
        }
    }
    if let Some(v) = msg.strip_suffix(" has no length") {
        return format!("{} ({}) has no length", type_of(v), truncate(v));
    }
    if let Some(rest) = msg.strip_prefix("cannot parse ")
        && let Some((text, _)) = rest.rsplit_once(" as JSON")
        && let Ok(Val::TStr(s)) = jaq_json::read::parse_single(text.as_bytes())
    {
        let (_, err) = split_values(&s);
        if let Some(e) = err {
            let shown = String::from_utf8_lossy(&s);
            return format!(
                "{} at line {}, column {} (while parsing '{shown}')",
                e.message, e.line, e.column
            );
        }
    }
    if msg.starts_with('"')
        && let Ok(Val::TStr(s)) = jaq_json::read::parse_single(msg.as_bytes())
    {
        return String::from_utf8_lossy(&s).into_owned();
    }
    msg.to_string()
}

/// A value in a message as jq 1.6 cuts it: at most 14 characters, else
/// the first 11 and `...`.
fn truncate(json: &str) -> String {
    if json.chars().count() <= 14 {
        return json.to_string();
    }
    let head: String = json.chars().take(11).collect();
    format!("{head}...")
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
