//! Runs compiled bc code: a value stack, variables with bc's dynamic
//! scoping (a call pushes its parameters and autos over the globals),
//! arrays by value or by reference, and GNU's runtime errors and
//! warnings with the function and code address they happen at.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use super::compile::{HISTORY, IBASE, Instr, LAST, OBASE, Op, SCALE, Symbols};
use super::number::{MAX_DIGITS, Num};

/// Largest array index bc accepts (BC_DIM_MAX).
const DIM_MAX: i64 = 16_777_215;
/// BC_BASE_MAX and BC_SCALE_MAX.
const BASE_MAX: i64 = 2_147_483_647;
/// Deepest call nesting allowed (GNU has no limit but the C stack).
const MAX_CALL_DEPTH: usize = 2000;

type Array = Rc<RefCell<BTreeMap<i64, Num>>>;

#[derive(Clone)]
enum Val {
    N(Num),
    Array(usize),
}

/// Why execution stopped early.
pub(crate) enum Stop {
    /// A runtime error: the rest of the line is dropped.
    Error,
    /// `halt`: bc ends.
    Halt,
}

/// bc's output with its line wrapping (BC_LINE_LENGTH, default 70).
pub(crate) struct Output {
    pub(crate) bytes: Vec<u8>,
    col: usize,
    line_len: usize,
}

impl Output {
    pub(crate) fn new(line_len: usize) -> Self {
        Self {
            bytes: Vec::new(),
            col: 0,
            line_len,
        }
    }

    fn char(&mut self, ch: char) {
        if ch == '\n' {
            self.col = 0;
            self.bytes.push(b'\n');
            return;
        }
        self.col += 1;
        if self.line_len != 0 && self.col == self.line_len - 1 {
            self.bytes.extend_from_slice(b"\\\n");
            self.col = 1;
        }
        let mut buf = [0u8; 4];
        self.bytes
            .extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
    }

    fn text(&mut self, s: &str) {
        for c in s.chars() {
            self.char(c);
        }
    }
}

pub(crate) struct Machine {
    vars: Vec<Vec<Num>>,
    arrays: Vec<Vec<Array>>,
    ibase: u32,
    obase: u64,
    scale: u32,
    last: Num,
    pub(crate) out: Output,
    /// Runtime messages for stderr, in order.
    pub(crate) errors: Vec<String>,
    depth: usize,
    labels: HashMap<usize, HashMap<usize, usize>>,
    /// Lines `read()` takes numbers from.
    pub(crate) input: std::collections::VecDeque<String>,
}

/// Where the code being run belongs, for messages.
struct Frame<'c> {
    name: &'c str,
    code: &'c [Instr],
    key: usize,
}

impl Machine {
    pub(crate) fn new(line_len: usize) -> Self {
        Self {
            vars: Vec::new(),
            arrays: Vec::new(),
            ibase: 10,
            obase: 10,
            scale: 0,
            last: Num::zero(),
            out: Output::new(line_len),
            errors: Vec::new(),
            depth: 0,
            labels: HashMap::new(),
            input: std::collections::VecDeque::new(),
        }
    }

    pub(crate) fn set_scale(&mut self, s: u32) {
        self.scale = s;
    }

    /// The scale arithmetic uses (the program's, within the sandbox's
    /// memory).
    fn work_scale(&self) -> u32 {
        self.scale
            .min(u32::try_from(MAX_DIGITS).unwrap_or(u32::MAX))
    }

    fn var(&mut self, i: usize) -> Num {
        match i {
            IBASE => Num::from_i64(i64::from(self.ibase)),
            OBASE => Num::from_i64(i64::try_from(self.obase).unwrap_or(i64::MAX)),
            SCALE => Num::from_i64(i64::from(self.scale)),
            HISTORY => Num::from_i64(-1),
            LAST => self.last.clone(),
            _ => self
                .vars
                .get(i)
                .and_then(|s| s.last())
                .cloned()
                .unwrap_or_else(Num::zero),
        }
    }

    fn slot(&mut self, i: usize) -> &mut Num {
        if self.vars.len() <= i {
            self.vars.resize_with(i + 1, Vec::new);
        }
        let stack = &mut self.vars[i];
        if stack.is_empty() {
            stack.push(Num::zero());
        }
        let last = stack.len() - 1;
        &mut stack[last]
    }

    fn array(&mut self, a: usize) -> Array {
        if self.arrays.len() <= a {
            self.arrays.resize_with(a + 1, Vec::new);
        }
        let stack = &mut self.arrays[a];
        if stack.is_empty() {
            stack.push(Rc::new(RefCell::new(BTreeMap::new())));
        }
        Rc::clone(&stack[stack.len() - 1])
    }

    fn warn(&mut self, f: &Frame<'_>, adr: usize, msg: &str) {
        self.errors.push(format!(
            "Runtime warning (func={}, adr={adr}): {msg}",
            f.name
        ));
    }

    fn fail(&mut self, f: &Frame<'_>, adr: usize, msg: &str) -> Stop {
        self.errors
            .push(format!("Runtime error (func={}, adr={adr}): {msg}", f.name));
        Stop::Error
    }

    /// Stores into a variable, with bc's checks of the special ones.
    fn store(&mut self, f: &Frame<'_>, i: usize, v: &Num, adr: usize) {
        let n = if v.fits_i64() {
            v.to_i64()
        } else if v.is_negative() {
            i64::MIN
        } else {
            i64::MAX
        };
        match i {
            IBASE => {
                self.ibase = if n < 2 {
                    self.warn(f, adr, "ibase too small, set to 2");
                    2
                } else if n > 36 {
                    self.warn(f, adr, "ibase too large, set to 36");
                    36
                } else {
                    u32::try_from(n).unwrap_or(10)
                };
            }
            OBASE => {
                self.obase = if n < 2 {
                    self.warn(f, adr, "obase too small, set to 2");
                    2
                } else if n > BASE_MAX {
                    self.warn(f, adr, &format!("obase too large, set to {BASE_MAX}"));
                    BASE_MAX as u64
                } else {
                    u64::try_from(n).unwrap_or(10)
                };
            }
            SCALE => {
                self.scale = if n < 0 {
                    self.warn(f, adr, "negative scale, set to 0");
                    0
                } else if n > BASE_MAX {
                    self.warn(f, adr, &format!("scale too large, set to {BASE_MAX}"));
                    BASE_MAX as u32
                } else {
                    u32::try_from(n).unwrap_or(0)
                };
            }
            HISTORY => {}
            LAST => self.last = v.clone(),
            _ => *self.slot(i) = v.clone(),
        }
    }

    fn index(&mut self, f: &Frame<'_>, v: &Num, name: &str, adr: usize) -> Result<i64, Stop> {
        let i = if v.fits_i64() { v.to_i64() } else { -1 };
        if !(0..=DIM_MAX).contains(&i) {
            return Err(self.fail(f, adr, &format!("Array {name} subscript out of bounds.")));
        }
        Ok(i)
    }

    fn print_num(&mut self, n: &Num) {
        let text = n.format(self.obase);
        self.out.text(&text);
    }

    fn print_escaped(&mut self, s: &str) {
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                self.out.char(c);
                continue;
            }
            match chars.next() {
                Some('a') => self.out.char('\u{7}'),
                Some('b') => self.out.char('\u{8}'),
                Some('f') => self.out.char('\u{c}'),
                Some('n') => self.out.char('\n'),
                Some('r') => self.out.char('\r'),
                Some('q') => self.out.char('"'),
                Some('t') => self.out.char('\t'),
                Some('\\') => self.out.char('\\'),
                Some(o) => {
                    self.out.char('\\');
                    self.out.char(o);
                }
                None => self.out.char('\\'),
            }
        }
    }

    /// Runs one top-level item.
    pub(crate) fn run_main(&mut self, syms: &Symbols, code: &[Instr]) -> Result<(), Stop> {
        let frame = Frame {
            name: "(main)",
            code,
            key: usize::MAX,
        };
        self.labels.remove(&usize::MAX);
        let saved_vars = self.vars.iter().map(Vec::len).collect::<Vec<_>>();
        let saved_arrays = self.arrays.iter().map(Vec::len).collect::<Vec<_>>();
        let mut stack = Vec::new();
        let r = self.exec(syms, &frame, &mut stack).map(|_| ());
        if r.is_err() {
            // A runtime error unwinds every call: autos and parameters
            // go, the globals come back.
            for (i, s) in self.vars.iter_mut().enumerate() {
                s.truncate(saved_vars.get(i).copied().unwrap_or(0).max(1).min(s.len()));
            }
            for (i, s) in self.arrays.iter_mut().enumerate() {
                s.truncate(
                    saved_arrays
                        .get(i)
                        .copied()
                        .unwrap_or(0)
                        .max(1)
                        .min(s.len()),
                );
            }
            self.depth = 0;
        }
        r
    }

    fn label_map(&mut self, f: &Frame<'_>) -> &HashMap<usize, usize> {
        self.labels.entry(f.key).or_insert_with(|| {
            f.code
                .iter()
                .enumerate()
                .filter_map(|(i, ins)| match ins.op {
                    Op::Label(l) => Some((l, i)),
                    _ => None,
                })
                .collect()
        })
    }

    fn pop(stack: &mut Vec<Val>) -> Num {
        match stack.pop() {
            Some(Val::N(n)) => n,
            _ => Num::zero(),
        }
    }

    /// Executes code until its end or a `return`; the returned value.
    fn exec(&mut self, syms: &Symbols, f: &Frame<'_>, stack: &mut Vec<Val>) -> Result<Num, Stop> {
        let mut pc = 0;
        let mut steps: u32 = 0;
        while let Some(ins) = f.code.get(pc) {
            pc += 1;
            let end = ins.addr + ins.size;
            match &ins.op {
                Op::Const(t) => stack.push(Val::N(Num::parse(t, self.ibase))),
                Op::Load(i) => {
                    let v = self.var(*i);
                    stack.push(Val::N(v));
                }
                Op::Store(i) => {
                    let v = Self::pop(stack);
                    self.store(f, *i, &v, end);
                    stack.push(Val::N(v));
                }
                Op::LoadElem(a) => {
                    let idx = Self::pop(stack);
                    let i = self.index(f, &idx, &syms.array_names[*a], end)?;
                    let v = self
                        .array(*a)
                        .borrow()
                        .get(&i)
                        .cloned()
                        .unwrap_or_else(Num::zero);
                    stack.push(Val::N(v));
                }
                Op::StoreElem(a) => {
                    let v = Self::pop(stack);
                    let idx = Self::pop(stack);
                    let i = self.index(f, &idx, &syms.array_names[*a], end)?;
                    self.array(*a).borrow_mut().insert(i, v.clone());
                    stack.push(Val::N(v));
                }
                Op::IncVar(i, inc) => {
                    let v = self.var(*i);
                    let one = Num::from_i64(1);
                    let n = if *inc { v.add(&one) } else { v.sub(&one) };
                    self.store(f, *i, &n, end);
                }
                Op::IncElem(a, inc) => {
                    let idx = Self::pop(stack);
                    let i = self.index(f, &idx, &syms.array_names[*a], end)?;
                    let arr = self.array(*a);
                    let mut m = arr.borrow_mut();
                    let v = m.get(&i).cloned().unwrap_or_else(Num::zero);
                    let one = Num::from_i64(1);
                    m.insert(i, if *inc { v.add(&one) } else { v.sub(&one) });
                }
                Op::Dup => {
                    if let Some(top) = stack.last().cloned() {
                        stack.push(top);
                    }
                }
                Op::Swap => {
                    let n = stack.len();
                    if n >= 2 {
                        stack.swap(n - 1, n - 2);
                    }
                }
                Op::Pop => {
                    stack.pop();
                }
                Op::PrintLine => {
                    let v = Self::pop(stack);
                    self.print_num(&v);
                    self.out.char('\n');
                    self.last = v;
                }
                Op::Print => {
                    let v = Self::pop(stack);
                    self.print_num(&v);
                }
                Op::Neg => {
                    let v = Self::pop(stack);
                    stack.push(Val::N(v.neg()));
                }
                Op::Not => {
                    let v = Self::pop(stack);
                    stack.push(Val::N(Num::from_i64(i64::from(v.is_zero()))));
                }
                Op::Bin(c) => {
                    let b = Self::pop(stack);
                    let a = Self::pop(stack);
                    let r = self.binary(f, *c, &a, &b, end)?;
                    stack.push(Val::N(r));
                }
                Op::Rel(r) => {
                    let b = Self::pop(stack);
                    let a = Self::pop(stack);
                    let o = a.cmp(&b);
                    let t = match *r {
                        "==" => o.is_eq(),
                        "!=" => o.is_ne(),
                        "<" => o.is_lt(),
                        "<=" => o.is_le(),
                        ">" => o.is_gt(),
                        _ => o.is_ge(),
                    };
                    stack.push(Val::N(Num::from_i64(i64::from(t))));
                }
                Op::Jump(l) | Op::JumpZero(l) | Op::JumpNonZero(l) => {
                    let take = match &ins.op {
                        Op::Jump(_) => true,
                        Op::JumpZero(_) => Self::pop(stack).is_zero(),
                        _ => !Self::pop(stack).is_zero(),
                    };
                    if take {
                        pc = self.label_map(f).get(l).copied().unwrap_or(f.code.len());
                        steps = steps.wrapping_add(1);
                        if steps.is_multiple_of(1024)
                            && crate::programs::coreutils::deadline_passed()
                        {
                            return Err(Stop::Halt);
                        }
                    }
                }
                Op::Label(_) => {}
                Op::Call(fi, kinds) => {
                    let r = self.call(syms, f, ins, *fi, kinds, stack)?;
                    stack.push(Val::N(r));
                }
                Op::ArrayArg(a) => stack.push(Val::Array(*a)),
                Op::Builtin(b) => {
                    let v = match b {
                        'I' => {
                            let line = self.input.pop_front().unwrap_or_default();
                            Num::parse(line.trim(), self.ibase)
                        }
                        'X' => Num::from_i64(i64::from(random_u31())),
                        _ => {
                            let x = Self::pop(stack);
                            match b {
                                'L' => Num::from_i64(i64::try_from(x.length()).unwrap_or(0)),
                                'S' => Num::from_i64(i64::from(x.scale)),
                                _ => match x.sqrt(self.work_scale()) {
                                    Some(r) => r,
                                    None => {
                                        return Err(self.fail(
                                            f,
                                            end,
                                            "Square root of a negative number",
                                        ));
                                    }
                                },
                            }
                        }
                    };
                    stack.push(Val::N(v));
                }
                Op::Str(s) => {
                    if let Some(kind) = s.strip_prefix('\u{0}') {
                        let text = if kind == "limits" { LIMITS } else { WARRANTY };
                        self.out.text(text);
                    } else {
                        for c in s.chars() {
                            self.out.char(c);
                        }
                    }
                }
                Op::PrintStr(s) => self.print_escaped(s),
                Op::Return => return Ok(Self::pop(stack)),
                Op::Halt => return Err(Stop::Halt),
            }
        }
        Ok(Num::zero())
    }

    fn binary(
        &mut self,
        f: &Frame<'_>,
        c: char,
        a: &Num,
        b: &Num,
        end: usize,
    ) -> Result<Num, Stop> {
        let scale = self.work_scale();
        Ok(match c {
            '+' => a.add(b),
            '-' => a.sub(b),
            '*' => a.mul(b, scale),
            '/' => match a.div(b, scale) {
                Some(r) => r,
                None => return Err(self.fail(f, end, "Divide by zero")),
            },
            '%' => match a.modulo(b, scale) {
                Some(r) => r,
                None => return Err(self.fail(f, end, "Modulo by zero")),
            },
            _ => {
                if b.scale > 0 && b.rescale(0).cmp(b).is_ne() {
                    self.warn(f, end, "non-zero scale in exponent");
                }
                if !b.fits_i64() {
                    return Err(self.fail(f, end, "exponent too large in raise"));
                }
                let e = b.to_i64();
                let digits = a.length().saturating_sub(u64::from(a.scale)).max(1);
                if a.rescale(0).v.magnitude().bits() > 1
                    && digits.saturating_mul(e.unsigned_abs()) > MAX_DIGITS * 8
                {
                    return Err(self.fail(f, end, "exponent too large in raise"));
                }
                match a.pow(e, scale) {
                    Some(r) => r,
                    None => return Err(self.fail(f, end, "Divide by zero")),
                }
            }
        })
    }

    fn call(
        &mut self,
        syms: &Symbols,
        f: &Frame<'_>,
        ins: &Instr,
        fi: usize,
        kinds: &[bool],
        stack: &mut Vec<Val>,
    ) -> Result<Num, Stop> {
        let Some(func) = syms.functions.get(fi - 1) else {
            return Err(Stop::Error);
        };
        let index_bytes = if fi > 0x7f { 2 } else { 1 };
        if !func.defined {
            return Err(self.fail(
                f,
                ins.addr + 1 + index_bytes,
                &format!("Function {} not defined.", func.name),
            ));
        }
        let end = ins.addr + ins.size;
        if func.params.len() != kinds.len() {
            return Err(self.fail(f, end, "Parameter number mismatch"));
        }
        if func.params.iter().zip(kinds).any(|(p, &k)| p.array != k) {
            return Err(self.fail(f, end, "Parameter type mismatch"));
        }
        if self.depth >= MAX_CALL_DEPTH {
            return Err(self.fail(f, end, "function nesting too deep"));
        }
        let mut args = Vec::with_capacity(kinds.len());
        for _ in 0..kinds.len() {
            args.push(stack.pop().unwrap_or(Val::N(Num::zero())));
        }
        args.reverse();
        for (p, arg) in func.params.iter().zip(args) {
            match arg {
                Val::N(n) => {
                    if self.vars.len() <= p.index {
                        self.vars.resize_with(p.index + 1, Vec::new);
                    }
                    if self.vars[p.index].is_empty() {
                        self.vars[p.index].push(Num::zero());
                    }
                    self.vars[p.index].push(n);
                }
                Val::Array(a) => {
                    let src = self.array(a);
                    let value = if p.by_ref {
                        src
                    } else {
                        Rc::new(RefCell::new(src.borrow().clone()))
                    };
                    let _ = self.array(p.index);
                    self.arrays[p.index].push(value);
                }
            }
        }
        for a in &func.autos {
            if a.array {
                let _ = self.array(a.index);
                self.arrays[a.index].push(Rc::new(RefCell::new(BTreeMap::new())));
            } else {
                let _ = self.slot(a.index);
                self.vars[a.index].push(Num::zero());
            }
        }
        self.depth += 1;
        let frame = Frame {
            name: &func.name,
            code: &func.code,
            key: fi,
        };
        let mut inner = Vec::new();
        let result = self.exec(syms, &frame, &mut inner);
        self.depth -= 1;
        if result.is_ok() {
            for l in func.autos.iter().chain(func.params.iter()) {
                if l.array {
                    if let Some(s) = self.arrays.get_mut(l.index) {
                        s.pop();
                    }
                } else if let Some(s) = self.vars.get_mut(l.index) {
                    s.pop();
                }
            }
        }
        let r = result?;
        Ok(if func.void { Num::zero() } else { r })
    }
}

fn random_u31() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u8(0);
    (h.finish() >> 33) as u32
}

const LIMITS: &str = "BC_BASE_MAX     = 2147483647
BC_DIM_MAX      = 16777215
BC_SCALE_MAX    = 2147483647
BC_STRING_MAX   = 2147483647
MAX Exponent    = 9223372036854775807
Number of vars  = 32767
";

const WARRANTY: &str = "bc 1.07.1
Copyright 1991-1994, 1997, 1998, 2000, 2004, 2006, 2008, 2012-2017 Free Software Foundation, Inc.

    This program is free software; you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation; either version 3 of the License , or
    (at your option) any later version.

    This program is distributed in the hope that it will be useful,
    but WITHOUT ANY WARRANTY; without even the implied warranty of
    MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
    GNU General Public License for more details.

    You should have received a copy of the GNU General Public License
    along with this program. If not, write to

       The Free Software Foundation, Inc.
       51 Franklin Street, Fifth Floor
       Boston, MA 02110-1335  USA
";
