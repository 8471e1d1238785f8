//! `join [-a N] [-v N] [-e S] [-i] [-j F] [-1 F] [-2 F] [-o LIST|auto]
//! [-t C] [-z] [--header] [--check-order|--nocheck-order] FILE1 FILE2`:
//! GNU's merge of two sorted inputs on a key field, with its order check
//! (a warning once per file when an unpairable line shows the disorder,
//! and exit 1 at the end).

use super::Process;
use super::args::{HasArg, Spec};

const SPEC: Spec<'static> = Spec {
    short: "a:e:i1:2:j:o:t:v:z",
    long: &[
        ("ignore-case", 'i', HasArg::No),
        ("check-order", 'C', HasArg::No),
        ("nocheck-order", 'N', HasArg::No),
        ("zero-terminated", 'z', HasArg::No),
        ("header", 'H', HasArg::No),
    ],
};

/// How fields are separated: runs of blanks, one byte, or not at all.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sep {
    Blanks,
    Byte(u8),
    WholeLine,
}

/// One output field: the join field, or field N of file 1 or 2.
#[derive(Clone, Copy)]
enum OutField {
    Key,
    Of(usize, usize),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    Default,
    Check,
    NoCheck,
}

/// A line and where its fields are.
struct Line<'a> {
    text: &'a [u8],
    fields: Vec<&'a [u8]>,
}

struct Options {
    sep: Sep,
    eol: u8,
    ignore_case: bool,
    unpaired: [bool; 2],
    paired: bool,
    empty: Option<String>,
    format: Option<Vec<OutField>>,
    auto: bool,
    keys: [usize; 2],
    order: Order,
    header: bool,
}

fn fields_of(text: &[u8], sep: Sep) -> Vec<&[u8]> {
    match sep {
        Sep::WholeLine => vec![text],
        Sep::Byte(b) => text.split(|&c| c == b).collect(),
        Sep::Blanks => blank_fields(text),
    }
}

/// GNU's xfields for blank separation: leading blanks skipped, runs of
/// blanks separate, and trailing blanks leave one empty last field.
fn blank_fields(text: &[u8]) -> Vec<&[u8]> {
    let is_blank = |c: u8| c == b' ' || c == b'\t' || c == b'\n';
    let mut fields = Vec::new();
    let Some(mut start) = text.iter().position(|&c| !is_blank(c)) else {
        return fields;
    };
    loop {
        let end = text
            .iter()
            .skip(start)
            .position(|&c| is_blank(c))
            .map_or(text.len(), |i| start + i);
        fields.push(text.get(start..end).unwrap_or_default());
        if end == text.len() {
            return fields;
        }
        match text.iter().skip(end).position(|&c| !is_blank(c)) {
            Some(i) => start = end + i,
            None => {
                fields.push(&[]);
                return fields;
            }
        }
    }
}

/// One input, read a line at a time as GNU does, so the order check sees
/// exactly the lines GNU's would.
struct Input<'a> {
    name: String,
    lines: Vec<&'a [u8]>,
    next: usize,
    prev: Option<usize>,
    warned: bool,
}

struct Joiner<'a> {
    opts: &'a Options,
    inputs: [Input<'a>; 2],
    seen_unpairable: bool,
    autocount: [usize; 2],
    out: Vec<u8>,
    fatal: bool,
}

impl<'a> Joiner<'a> {
    fn line(&self, which: usize, index: usize) -> Line<'a> {
        let text = self.inputs[which].lines[index];
        Line {
            text,
            fields: if text.is_empty() {
                Vec::new()
            } else {
                fields_of(text, self.opts.sep)
            },
        }
    }

    fn keycmp(&self, a: &Line<'_>, b: &Line<'_>, ka: usize, kb: usize) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        let fa = a.fields.get(ka).copied().unwrap_or_default();
        let fb = b.fields.get(kb).copied().unwrap_or_default();
        match (fa.is_empty(), fb.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        if self.opts.ignore_case {
            let la = fa.iter().map(u8::to_ascii_lowercase);
            let lb = fb.iter().map(u8::to_ascii_lowercase);
            la.cmp(lb)
        } else {
            fa.cmp(fb)
        }
    }

    /// Reads the next line of input `which`, checking its order.
    fn get_line(&mut self, which: usize, p: &Process<'_>) -> Option<usize> {
        let input = &self.inputs[which];
        if input.next >= input.lines.len() || self.fatal {
            return None;
        }
        let index = input.next;
        self.inputs[which].next += 1;
        if let Some(prev) = self.inputs[which].prev {
            self.check_order(which, prev, index, p);
        }
        self.inputs[which].prev = Some(index);
        (!self.fatal).then_some(index)
    }

    fn check_order(&mut self, which: usize, prev: usize, cur: usize, p: &Process<'_>) {
        let order = self.opts.order;
        if order == Order::NoCheck || (order == Order::Default && !self.seen_unpairable) {
            return;
        }
        if self.inputs[which].warned {
            return;
        }
        let key = self.opts.keys[which];
        let (a, b) = (self.line(which, prev), self.line(which, cur));
        if self.keycmp(&a, &b, key, key) == std::cmp::Ordering::Greater {
            p.error(&format!(
                "{}:{}: is not sorted: {}",
                self.inputs[which].name,
                cur + 1,
                String::from_utf8_lossy(b.text)
            ));
            self.inputs[which].warned = true;
            if order == Order::Check {
                self.fatal = true;
            }
        }
    }

    fn field(&mut self, line: Option<&Line<'_>>, n: usize) {
        match line.and_then(|l| l.fields.get(n)) {
            Some(f) if !f.is_empty() => self.out.extend_from_slice(f),
            _ => {
                if let Some(e) = &self.opts.empty {
                    self.out.extend_from_slice(e.as_bytes());
                }
            }
        }
    }

    fn out_sep(&self) -> u8 {
        match self.opts.sep {
            Sep::Byte(b) => b,
            Sep::Blanks => b' ',
            Sep::WholeLine => b'\n',
        }
    }

    /// Prints the join of two lines; `None` stands for the blank line an
    /// unpairable line is joined with.
    fn prjoin(&mut self, l1: Option<&Line<'_>>, l2: Option<&Line<'_>>) {
        let sep = self.out_sep();
        let (key_line, key_field) = match l1 {
            None => (l2, self.opts.keys[1]),
            Some(_) => (l1, self.opts.keys[0]),
        };
        if let Some(format) = self.opts.format.clone() {
            for (i, f) in format.iter().enumerate() {
                if i > 0 {
                    self.out.push(sep);
                }
                match *f {
                    OutField::Key => self.field(key_line, key_field),
                    OutField::Of(file, n) => self.field(if file == 1 { l1 } else { l2 }, n),
                }
            }
        } else {
            self.field(key_line, key_field);
            for (which, line) in [(0, l1), (1, l2)] {
                let count = if self.opts.auto {
                    self.autocount[which]
                } else {
                    line.map_or(0, |l| l.fields.len())
                };
                let key = self.opts.keys[which];
                for i in (0..count).filter(|&i| i != key) {
                    self.out.push(sep);
                    self.field(line, i);
                }
            }
        }
        self.out.push(self.opts.eol);
    }

    fn run(&mut self, p: &Process<'_>) {
        let mut seq1: Vec<usize> = self.get_line(0, p).into_iter().collect();
        let mut seq2: Vec<usize> = self.get_line(1, p).into_iter().collect();
        if self.opts.auto {
            self.autocount = [
                seq1.first().map_or(0, |&i| self.line(0, i).fields.len()),
                seq2.first().map_or(0, |&i| self.line(1, i).fields.len()),
            ];
        }
        if self.opts.header && (!seq1.is_empty() || !seq2.is_empty()) {
            let h1 = seq1.first().map(|&i| self.line(0, i));
            let h2 = seq2.first().map(|&i| self.line(1, i));
            self.prjoin(h1.as_ref(), h2.as_ref());
            self.inputs[0].prev = None;
            self.inputs[1].prev = None;
            if !seq1.is_empty() {
                seq1 = self.get_line(0, p).into_iter().collect();
            }
            if !seq2.is_empty() {
                seq2 = self.get_line(1, p).into_iter().collect();
            }
        }
        let (k1, k2) = (self.opts.keys[0], self.opts.keys[1]);
        while let (Some(&a), Some(&b)) = (seq1.first(), seq2.first()) {
            if self.fatal {
                return;
            }
            let (la, lb) = (self.line(0, a), self.line(1, b));
            match self.keycmp(&la, &lb, k1, k2) {
                std::cmp::Ordering::Less => {
                    if self.opts.unpaired[0] {
                        self.prjoin(Some(&la), None);
                    }
                    seq1 = self.get_line(0, p).into_iter().collect();
                    self.seen_unpairable = true;
                    continue;
                }
                std::cmp::Ordering::Greater => {
                    if self.opts.unpaired[1] {
                        self.prjoin(None, Some(&lb));
                    }
                    seq2 = self.get_line(1, p).into_iter().collect();
                    self.seen_unpairable = true;
                    continue;
                }
                std::cmp::Ordering::Equal => {}
            }
            // Every following line of file 1 with the same key, then of
            // file 2; the first that differs starts the next round.
            let mut next1 = None;
            while let Some(i) = self.get_line(0, p) {
                if self.keycmp(&self.line(0, i), &lb, k1, k2) != std::cmp::Ordering::Equal {
                    next1 = Some(i);
                    break;
                }
                seq1.push(i);
            }
            let mut next2 = None;
            while let Some(j) = self.get_line(1, p) {
                if self.keycmp(&la, &self.line(1, j), k1, k2) != std::cmp::Ordering::Equal {
                    next2 = Some(j);
                    break;
                }
                seq2.push(j);
            }
            if self.fatal {
                return;
            }
            if self.opts.paired {
                for &i in &seq1 {
                    for &j in &seq2 {
                        let (x, y) = (self.line(0, i), self.line(1, j));
                        self.prjoin(Some(&x), Some(&y));
                    }
                }
            }
            seq1 = next1.into_iter().collect();
            seq2 = next2.into_iter().collect();
        }
        self.tails(p, seq1.first().copied(), seq2.first().copied());
    }

    fn print_unpaired(&mut self, which: usize, index: usize) {
        let line = self.line(which, index);
        if which == 0 {
            self.prjoin(Some(&line), None);
        } else {
            self.prjoin(None, Some(&line));
        }
    }

    /// The unpairable rest of each input, read to the end to check order.
    fn tails(&mut self, p: &Process<'_>, first1: Option<usize>, first2: Option<usize>) {
        let checktail =
            self.opts.order != Order::NoCheck && !(self.inputs[0].warned && self.inputs[1].warned);
        for (which, first, other) in [(0, first1, first2), (1, first2, first1)] {
            let print = self.opts.unpaired[which];
            let Some(first) = first else { continue };
            if !(print || checktail) {
                continue;
            }
            if other.is_some() {
                self.seen_unpairable = true;
            }
            if print {
                self.print_unpaired(which, first);
            }
            while let Some(i) = self.get_line(which, p) {
                if print {
                    self.print_unpaired(which, i);
                }
                if self.inputs[which].warned && !print {
                    break;
                }
            }
            if self.fatal {
                return;
            }
        }
    }
}

/// `-1 F`, `-2 F`, `-j F`: a 1-based field number, GNU's message else.
fn field_number(p: &Process<'_>, text: &str) -> Result<usize, i32> {
    if text.is_empty()
        || !text.bytes().all(|c| c.is_ascii_digit())
        || text.bytes().all(|c| c == b'0')
    {
        p.error(&format!("invalid field number: {}", p.quote(text)));
        return Err(1);
    }
    // Too large a field is simply one no line has.
    Ok(text.parse::<usize>().map_or(usize::MAX - 1, |n| n - 1))
}

fn field_list(p: &Process<'_>, text: &str) -> Result<Vec<OutField>, i32> {
    let mut out = Vec::new();
    for spec in text.split([',', ' ', '\t']) {
        let bad = |msg: &str| {
            p.error(&format!("{msg}: {}", p.quote(spec)));
            Err(1)
        };
        match spec.as_bytes() {
            [b'0'] => out.push(OutField::Key),
            [b'0', ..] => return bad("invalid field specifier"),
            [f @ (b'1' | b'2'), b'.', ..] => {
                let n = field_number(p, spec.get(2..).unwrap_or_default())?;
                out.push(OutField::Of(usize::from(f - b'0'), n));
            }
            [b'1' | b'2', ..] => return bad("invalid field specifier"),
            _ => return bad("invalid file number in field spec"),
        }
    }
    Ok(out)
}

fn set_key(p: &Process<'_>, slot: &mut Option<usize>, value: usize) -> Result<(), i32> {
    if let Some(old) = *slot
        && old != value
    {
        p.error(&format!(
            "incompatible join fields {}, {}",
            old.saturating_add(1),
            value.saturating_add(1)
        ));
        return Err(1);
    }
    *slot = Some(value);
    Ok(())
}

fn options(p: &Process<'_>, args: &super::args::Parsed) -> Result<Options, i32> {
    let mut opts = Options {
        sep: Sep::Blanks,
        eol: b'\n',
        ignore_case: false,
        unpaired: [false, false],
        paired: true,
        empty: None,
        format: None,
        auto: false,
        keys: [0, 0],
        order: Order::Default,
        header: false,
    };
    let mut keys: [Option<usize>; 2] = [None, None];
    for opt in &args.opts {
        let value = opt.value.as_deref().unwrap_or_default();
        match opt.key {
            'a' | 'v' => {
                if opt.key == 'v' {
                    opts.paired = false;
                }
                match value {
                    "1" => opts.unpaired[0] = true,
                    "2" => opts.unpaired[1] = true,
                    _ => {
                        p.error(&format!("invalid field number: {}", p.quote(value)));
                        return Err(1);
                    }
                }
            }
            'e' => {
                if opts.empty.as_deref().is_some_and(|e| e != value) {
                    p.error("conflicting empty-field replacement strings");
                    return Err(1);
                }
                opts.empty = Some(value.to_string());
            }
            'i' => opts.ignore_case = true,
            '1' => set_key(p, &mut keys[0], field_number(p, value)?)?,
            '2' => set_key(p, &mut keys[1], field_number(p, value)?)?,
            'j' => {
                let n = field_number(p, value)?;
                set_key(p, &mut keys[0], n)?;
                set_key(p, &mut keys[1], n)?;
            }
            'o' if value == "auto" => opts.auto = true,
            'o' => opts
                .format
                .get_or_insert_with(Vec::new)
                .extend(field_list(p, value)?),
            't' => {
                let sep = match value.as_bytes() {
                    [] => Sep::WholeLine,
                    [b] => Sep::Byte(*b),
                    b"\\0" => Sep::Byte(0),
                    _ => {
                        p.error(&format!("multi-character tab {}", p.quote(value)));
                        return Err(1);
                    }
                };
                if opts.sep != Sep::Blanks && opts.sep != sep {
                    p.error("incompatible tabs");
                    return Err(1);
                }
                opts.sep = sep;
            }
            'z' => opts.eol = 0,
            'C' => opts.order = Order::Check,
            'N' => opts.order = Order::NoCheck,
            'H' => opts.header = true,
            _ => {}
        }
    }
    opts.keys = [keys[0].unwrap_or(0), keys[1].unwrap_or(0)];
    Ok(opts)
}

pub(crate) fn join(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = match super::parse_args(p, &SPEC, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    match args.operands.as_slice() {
        [] => return super::usage(p, "missing operand", 1),
        [_] => {
            let last = argv.last().cloned().unwrap_or_default();
            return super::usage(p, &format!("missing operand after {}", p.quote(&last)), 1);
        }
        [_, _] => {}
        [_, _, extra, ..] => {
            let shown = super::super::quoting::single_quote(extra);
            return super::usage(p, &format!("extra operand {shown}"), 1);
        }
    }
    let opts = match options(p, &args) {
        Ok(o) => o,
        Err(status) => return status,
    };
    let names = [args.operands[0].clone(), args.operands[1].clone()];
    if names[0] == "-" && names[1] == "-" {
        // GNU appends whatever errno was left: ENOENT from its locale lookup.
        p.error("both files cannot be standard input: No such file or directory");
        return 1;
    }
    let mut datas = Vec::new();
    for name in &names {
        match super::read_input(p, name) {
            Ok(d) => datas.push(d),
            Err(e) => {
                super::file_error(p, name, &e);
                return 1;
            }
        }
    }
    let input = |i: usize| Input {
        name: names[i].clone(),
        lines: super::split_lines(&datas[i], opts.eol),
        next: 0,
        prev: None,
        warned: false,
    };
    let mut joiner = Joiner {
        opts: &opts,
        inputs: [input(0), input(1)],
        seen_unpairable: false,
        autocount: [0, 0],
        out: Vec::new(),
        fatal: false,
    };
    joiner.run(p);
    super::write_all(p, &joiner.out);
    if joiner.fatal {
        return 1;
    }
    if joiner.inputs.iter().any(|i| i.warned) {
        p.error("input is not in sorted order");
        return 1;
    }
    0
}
