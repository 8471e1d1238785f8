//! Running a parsed awk program: records and fields, variables and
//! arrays, built-in functions, output redirections, and `getline`.
//! Shell commands (`system`, `print | cmd`, `cmd | getline`) run through
//! the sandbox's own `sh -c`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use regex::Regex;

use super::format::sprintf;
use super::parser::{Expr, Function, GetlineSrc, Pattern, Program, Redirect, Stmt};
use super::value::Value;
use crate::programs::Process;
use crate::programs::textproc::posix_regex::{self, Dialect};
use crate::streams::{Io, Sink, Source};

/// Deepest user-function recursion before awk gives up.
const MAX_CALL_DEPTH: usize = 1000;

/// An associative array, iterated in insertion order.
#[derive(Debug, Default)]
pub(super) struct Array {
    map: HashMap<String, (u64, Value)>,
    seq: u64,
}

impl Array {
    fn get(&self, k: &str) -> Option<&Value> {
        self.map.get(k).map(|(_, v)| v)
    }

    fn set(&mut self, k: String, v: Value) {
        if let Some(slot) = self.map.get_mut(&k) {
            slot.1 = v;
        } else {
            self.seq += 1;
            self.map.insert(k, (self.seq, v));
        }
    }

    fn keys(&self) -> Vec<String> {
        let mut entries: Vec<(&String, u64)> = self.map.iter().map(|(k, (s, _))| (k, *s)).collect();
        entries.sort_by_key(|e| e.1);
        entries.into_iter().map(|(k, _)| k.clone()).collect()
    }

    fn remove(&mut self, k: &str) {
        self.map.remove(k);
    }

    fn clear(&mut self) {
        self.map.clear();
    }

    fn len(&self) -> usize {
        self.map.len()
    }
}

type ArrayRef = Rc<RefCell<Array>>;

#[derive(Debug, Clone)]
enum Cell {
    Val(Value),
    Arr(ArrayRef),
}

/// Why execution left the straight path.
pub(super) enum Flow {
    Next,
    NextFile,
    Exit,
    Return(Value),
    Break,
    Continue,
    Error(String),
}

type Exec<T> = Result<T, Flow>;

/// A source of records: the main input's current file, a `getline <`
/// file, or a command's output.
#[derive(Default)]
struct Reader {
    data: Vec<u8>,
    pos: usize,
}

enum Output {
    File(String, Vec<u8>),
    Pipe(String, Vec<u8>),
}

pub(super) struct Interp<'a, 'p> {
    p: &'a Process<'p>,
    prog: &'a Program,
    globals: HashMap<String, Cell>,
    frames: Vec<HashMap<String, Cell>>,
    record: String,
    fields: Vec<String>,
    split_done: bool,
    out: Vec<u8>,
    outputs: HashMap<String, Output>,
    readers: HashMap<String, Reader>,
    regexes: HashMap<String, Regex>,
    operands: Vec<String>,
    next_operand: usize,
    main: Option<Reader>,
    main_done: bool,
    range_active: Vec<bool>,
    rand_state: u64,
    rand_seed: f64,
    pub(super) exit_code: i32,
}

impl<'a, 'p> Interp<'a, 'p> {
    pub(super) fn new(p: &'a Process<'p>, prog: &'a Program, operands: Vec<String>) -> Self {
        let mut it = Self {
            p,
            prog,
            globals: HashMap::new(),
            frames: Vec::new(),
            record: String::new(),
            fields: Vec::new(),
            split_done: true,
            out: Vec::new(),
            outputs: HashMap::new(),
            readers: HashMap::new(),
            regexes: HashMap::new(),
            operands,
            next_operand: 0,
            main: None,
            main_done: false,
            range_active: vec![false; prog.rules.len()],
            rand_state: 0,
            rand_seed: 0.0,
            exit_code: 0,
        };
        for (k, v) in [
            ("FS", " "),
            ("OFS", " "),
            ("ORS", "\n"),
            ("RS", "\n"),
            ("SUBSEP", "\u{1c}"),
            ("CONVFMT", "%.6g"),
            ("OFMT", "%.6g"),
            ("FILENAME", ""),
        ] {
            it.set_global(k, Value::Str(v.to_string()));
        }
        for k in ["NR", "FNR", "RSTART", "RLENGTH"] {
            it.set_global(k, Value::Num(0.0));
        }
        it.set_global("RLENGTH", Value::Num(-1.0));
        let env = Rc::new(RefCell::new(Array::default()));
        for (k, v) in p.env {
            env.borrow_mut()
                .set(k.clone(), Value::from_input(v.clone()));
        }
        it.globals.insert("ENVIRON".to_string(), Cell::Arr(env));
        let argv = Rc::new(RefCell::new(Array::default()));
        argv.borrow_mut()
            .set("0".to_string(), Value::Str("awk".to_string()));
        for (i, op) in it.operands.iter().enumerate() {
            argv.borrow_mut()
                .set((i + 1).to_string(), Value::from_input(op.clone()));
        }
        it.globals.insert("ARGV".to_string(), Cell::Arr(argv));
        it.set_global("ARGC", Value::Num((it.operands.len() + 1) as f64));
        it
    }

    pub(super) fn set_global(&mut self, name: &str, v: Value) {
        self.globals.insert(name.to_string(), Cell::Val(v));
    }

    fn gstr(&self, name: &str) -> String {
        match self.globals.get(name) {
            Some(Cell::Val(v)) => v.string("%.6g"),
            _ => String::new(),
        }
    }

    fn gnum(&self, name: &str) -> f64 {
        match self.globals.get(name) {
            Some(Cell::Val(v)) => v.num(),
            _ => 0.0,
        }
    }

    fn convfmt(&self) -> String {
        self.gstr("CONVFMT")
    }

    /// Runs BEGIN, the main loop and END; returns the exit status.
    pub(super) fn run(&mut self) -> i32 {
        let result = self.run_inner();
        if let Err(Flow::Error(msg)) = result {
            self.flush_all();
            self.p.io.err_line(&format!("awk: run time error: {msg}"));
            self.p.io.err_line(&format!(
                "\tFILENAME=\"{}\" FNR={} NR={}",
                self.gstr("FILENAME"),
                self.gnum("FNR"),
                self.gnum("NR")
            ));
            return 2;
        }
        self.flush_all();
        self.exit_code
    }

    fn run_inner(&mut self) -> Exec<()> {
        let prog = self.prog;
        let has_main = prog
            .rules
            .iter()
            .any(|r| !matches!(r.pattern, Pattern::Begin));
        let mut exiting = false;
        for rule in &prog.rules {
            if let (Pattern::Begin, Some(action)) = (&rule.pattern, &rule.action) {
                match self.exec_block(action) {
                    Ok(()) => {}
                    Err(Flow::Exit) => {
                        exiting = true;
                        break;
                    }
                    Err(Flow::Error(e)) => return Err(Flow::Error(e)),
                    Err(_) => {}
                }
            }
        }
        let has_main_rules = prog
            .rules
            .iter()
            .any(|r| !matches!(r.pattern, Pattern::Begin | Pattern::End));
        if !exiting && has_main {
            while self.next_main_record()? {
                if !has_main_rules {
                    continue;
                }
                match self.run_rules() {
                    Ok(()) | Err(Flow::Next) => {}
                    Err(Flow::NextFile) => {
                        self.main = None;
                    }
                    Err(Flow::Exit) => {
                        exiting = true;
                        break;
                    }
                    Err(Flow::Error(e)) => return Err(Flow::Error(e)),
                    Err(_) => {}
                }
            }
        }
        let _ = exiting;
        for rule in &prog.rules {
            if let (Pattern::End, Some(action)) = (&rule.pattern, &rule.action) {
                match self.exec_block(action) {
                    Ok(()) => {}
                    Err(Flow::Exit) => return Ok(()),
                    Err(Flow::Error(e)) => return Err(Flow::Error(e)),
                    Err(_) => {}
                }
            }
        }
        Ok(())
    }

    fn run_rules(&mut self) -> Exec<()> {
        let prog = self.prog;
        for (i, rule) in prog.rules.iter().enumerate() {
            let hit = match &rule.pattern {
                Pattern::Begin | Pattern::End => continue,
                Pattern::All => true,
                Pattern::Expr(e) => self.cond(e)?,
                Pattern::Range(a, b) => {
                    if self.range_active.get(i).copied().unwrap_or(false) {
                        if self.cond(b)?
                            && let Some(r) = self.range_active.get_mut(i)
                        {
                            *r = false;
                        }
                        true
                    } else if self.cond(a)? {
                        let ends = self.cond(b)?;
                        if let Some(r) = self.range_active.get_mut(i) {
                            *r = !ends;
                        }
                        true
                    } else {
                        false
                    }
                }
            };
            if !hit {
                continue;
            }
            match &rule.action {
                Some(action) => self.exec_block(action)?,
                None => {
                    let rec = self.get_record();
                    let ors = self.gstr("ORS");
                    self.write_out(None, format!("{rec}{ors}").as_bytes())?;
                }
            }
        }
        Ok(())
    }

    fn cond(&mut self, e: &Expr) -> Exec<bool> {
        Ok(self.eval(e)?.truthy())
    }

    // ---- input ----

    /// Reads the next main-input record into `$0`; false at the end.
    fn next_main_record(&mut self) -> Exec<bool> {
        loop {
            if self.main_done {
                return Ok(false);
            }
            if self.main.is_none() && !self.open_next_main()? {
                self.main_done = true;
                return Ok(false);
            }
            let rs = self.gstr("RS");
            let record = match self.main.as_mut() {
                Some(reader) => read_record(reader, &rs, &mut self.regexes),
                None => None,
            };
            match record {
                Some(rec) => {
                    let nr = self.gnum("NR") + 1.0;
                    let fnr = self.gnum("FNR") + 1.0;
                    self.set_global("NR", Value::Num(nr));
                    self.set_global("FNR", Value::Num(fnr));
                    self.set_record(rec);
                    return Ok(true);
                }
                None => self.main = None,
            }
        }
    }

    /// Opens the next file operand (handling `var=value` operands).
    fn open_next_main(&mut self) -> Exec<bool> {
        let argc = self.gnum("ARGC").max(0.0) as usize;
        while self.next_operand + 1 < argc {
            self.next_operand += 1;
            let arg = self
                .array_get("ARGV", &self.next_operand.to_string())
                .string("%.6g");
            if arg.is_empty() {
                continue;
            }
            if let Some((name, value)) = assignment(&arg) {
                let v = Value::from_input(super::unescape(value));
                self.assign_var(name, v)?;
                continue;
            }
            return self.open_main_file(arg).map(|_| true);
        }
        if self.gstr("FILENAME").is_empty() && !self.stdin_used() {
            // No file operands at all: read stdin once.
            self.mark_stdin_used();
            let data = self.p.io.stdin.borrow_mut().read_all();
            self.main = Some(Reader { data, pos: 0 });
            self.set_global("FNR", Value::Num(0.0));
            return Ok(true);
        }
        Ok(false)
    }

    fn stdin_used(&self) -> bool {
        self.globals.contains_key("\u{0}stdin")
    }

    fn mark_stdin_used(&mut self) {
        self.globals
            .insert("\u{0}stdin".to_string(), Cell::Val(Value::Uninit));
    }

    fn open_main_file(&mut self, name: String) -> Exec<()> {
        let data = if name == "-" || name == "/dev/stdin" {
            self.p.io.stdin.borrow_mut().read_all()
        } else {
            match std::fs::read(self.p.resolve(&name)) {
                Ok(d) => d,
                Err(e) => {
                    self.flush_all();
                    self.p.io.err_line(&format!(
                        "awk: cannot open {name} (No such file or directory)"
                    ));
                    let _ = e;
                    self.exit_code = 2;
                    // mawk stops at the first unreadable file.
                    self.main_done = true;
                    return Ok(());
                }
            }
        };
        self.mark_stdin_used();
        self.set_global("FILENAME", Value::Str(name));
        self.set_global("FNR", Value::Num(0.0));
        self.main = Some(Reader { data, pos: 0 });
        Ok(())
    }

    // ---- records and fields ----

    fn set_record(&mut self, rec: String) {
        self.record = rec;
        self.split_done = false;
    }

    fn get_record(&self) -> String {
        self.record.clone()
    }

    fn ensure_split(&mut self) {
        if self.split_done {
            return;
        }
        let fs = self.gstr("FS");
        let paragraph = self.gstr("RS").is_empty();
        self.fields = split_fields(&self.record, &fs, paragraph, &mut self.regexes);
        self.split_done = true;
        self.set_global("NF", Value::Num(self.fields.len() as f64));
    }

    fn nf(&mut self) -> usize {
        self.ensure_split();
        self.fields.len()
    }

    fn get_field(&mut self, i: usize) -> Value {
        if i == 0 {
            return Value::from_input(self.record.clone());
        }
        self.ensure_split();
        match self.fields.get(i - 1) {
            Some(f) => Value::from_input(f.clone()),
            None => Value::Uninit,
        }
    }

    fn set_field(&mut self, i: usize, v: String) -> Exec<()> {
        if i == 0 {
            self.set_record(v);
            return Ok(());
        }
        if i > 100_000 {
            return Err(Flow::Error(format!("$%d exceeds maximum field({i})")));
        }
        self.ensure_split();
        if self.fields.len() < i {
            self.fields.resize(i, String::new());
        }
        if let Some(f) = self.fields.get_mut(i - 1) {
            *f = v;
        }
        self.rebuild_record();
        Ok(())
    }

    fn set_nf(&mut self, n: usize) {
        self.ensure_split();
        self.fields.resize(n, String::new());
        self.rebuild_record();
    }

    fn rebuild_record(&mut self) {
        let ofs = self.gstr("OFS");
        self.record = self.fields.join(&ofs);
        self.set_global("NF", Value::Num(self.fields.len() as f64));
    }

    // ---- variables ----

    fn lookup(&self, name: &str) -> Option<&Cell> {
        if let Some(frame) = self.frames.last()
            && let Some(c) = frame.get(name)
        {
            return Some(c);
        }
        self.globals.get(name)
    }

    fn get_var(&mut self, name: &str) -> Exec<Value> {
        if name == "NF" {
            return Ok(Value::Num(self.nf() as f64));
        }
        match self.lookup(name) {
            Some(Cell::Val(v)) => Ok(v.clone()),
            Some(Cell::Arr(_)) => Err(Flow::Error(format!(
                "can't use array {name} in scalar context"
            ))),
            None => Ok(Value::Uninit),
        }
    }

    fn assign_var(&mut self, name: &str, v: Value) -> Exec<()> {
        if name == "NF" {
            let n = v.num().max(0.0) as usize;
            self.set_nf(n.min(100_000));
            return Ok(());
        }
        if let Some(frame) = self.frames.last_mut()
            && let Some(c) = frame.get_mut(name)
        {
            *c = Cell::Val(v);
            return Ok(());
        }
        if name == "FS" || name == "RS" {
            // A new FS applies from the next record; split this one now.
            self.ensure_split();
        }
        self.globals.insert(name.to_string(), Cell::Val(v));
        Ok(())
    }

    /// The array called `name`, created if it does not exist yet.
    fn array(&mut self, name: &str) -> Exec<ArrayRef> {
        if let Some(frame) = self.frames.last_mut()
            && let Some(c) = frame.get_mut(name)
        {
            return match c {
                Cell::Arr(a) => Ok(Rc::clone(a)),
                Cell::Val(Value::Uninit) => {
                    let a = Rc::new(RefCell::new(Array::default()));
                    *c = Cell::Arr(Rc::clone(&a));
                    Ok(a)
                }
                Cell::Val(_) => Err(Flow::Error(format!("can't use scalar {name} as array"))),
            };
        }
        match self.globals.get(name) {
            Some(Cell::Arr(a)) => Ok(Rc::clone(a)),
            Some(Cell::Val(Value::Uninit)) | None => {
                let a = Rc::new(RefCell::new(Array::default()));
                self.globals
                    .insert(name.to_string(), Cell::Arr(Rc::clone(&a)));
                Ok(a)
            }
            Some(Cell::Val(_)) => Err(Flow::Error(format!("can't use scalar {name} as array"))),
        }
    }

    fn array_get(&mut self, name: &str, key: &str) -> Value {
        match self.array(name) {
            Ok(a) => a.borrow().get(key).cloned().unwrap_or(Value::Uninit),
            Err(_) => Value::Uninit,
        }
    }

    fn subscript(&mut self, idx: &[Expr]) -> Exec<String> {
        let conv = self.convfmt();
        let mut parts = Vec::with_capacity(idx.len());
        for e in idx {
            parts.push(self.eval(e)?.string(&conv));
        }
        Ok(parts.join(&self.gstr("SUBSEP")))
    }

    fn assign(&mut self, target: &Expr, v: Value) -> Exec<Value> {
        match target {
            Expr::Var(name) => self.assign_var(name, v.clone())?,
            Expr::Index(name, idx) => {
                let key = self.subscript(idx)?;
                self.array(name)?.borrow_mut().set(key, v.clone());
            }
            Expr::Field(e) => {
                let i = self.field_index(e)?;
                let conv = self.convfmt();
                self.set_field(i, v.string(&conv))?;
            }
            _ => return Err(Flow::Error("assignment to a non-variable".to_string())),
        }
        Ok(v)
    }

    fn field_index(&mut self, e: &Expr) -> Exec<usize> {
        let n = self.eval(e)?.num();
        if n < 0.0 {
            return Err(Flow::Error(format!("negative field index ${}", n as i64)));
        }
        Ok(n as usize)
    }

    // ---- statements ----

    fn exec_block(&mut self, stmts: &[Stmt]) -> Exec<()> {
        for s in stmts {
            self.exec(s)?;
        }
        Ok(())
    }

    fn exec(&mut self, s: &Stmt) -> Exec<()> {
        match s {
            Stmt::Expr(e) | Stmt::Getline(e) => {
                self.eval(e)?;
            }
            Stmt::Print(args, redirect) => {
                let ofmt = self.gstr("OFMT");
                let text = if args.is_empty() {
                    self.get_record()
                } else {
                    let mut parts = Vec::with_capacity(args.len());
                    for a in args {
                        let v = self.eval(a)?;
                        parts.push(v.string(&ofmt));
                    }
                    parts.join(&self.gstr("OFS"))
                };
                let line = format!("{text}{}", self.gstr("ORS"));
                self.write_out(redirect.as_ref(), line.as_bytes())?;
            }
            Stmt::Printf(args, redirect) => {
                let Some((fmt, rest)) = args.split_first() else {
                    return Err(Flow::Error("printf: no format".to_string()));
                };
                let conv = self.convfmt();
                let fmt = self.eval(fmt)?.string(&conv);
                let mut vals = Vec::with_capacity(rest.len());
                for a in rest {
                    vals.push(self.eval(a)?);
                }
                if conversions(&fmt) > vals.len() {
                    return Err(Flow::Error(format!(
                        "not enough arguments passed to printf(\"{fmt}\")"
                    )));
                }
                let text = sprintf(&fmt, &vals, &conv);
                self.write_out(redirect.as_ref(), text.as_bytes())?;
            }
            Stmt::If(c, then, other) => {
                if self.cond(c)? {
                    self.exec(then)?;
                } else if let Some(o) = other {
                    self.exec(o)?;
                }
            }
            Stmt::While(c, body) => {
                while self.cond(c)? {
                    match self.exec(body) {
                        Ok(()) | Err(Flow::Continue) => {}
                        Err(Flow::Break) => break,
                        Err(f) => return Err(f),
                    }
                }
            }
            Stmt::Do(body, c) => loop {
                match self.exec(body) {
                    Ok(()) | Err(Flow::Continue) => {}
                    Err(Flow::Break) => break,
                    Err(f) => return Err(f),
                }
                if !self.cond(c)? {
                    break;
                }
            },
            Stmt::For(init, c, step, body) => {
                if let Some(i) = init {
                    self.exec(i)?;
                }
                loop {
                    if let Some(c) = c
                        && !self.cond(c)?
                    {
                        break;
                    }
                    match self.exec(body) {
                        Ok(()) | Err(Flow::Continue) => {}
                        Err(Flow::Break) => break,
                        Err(f) => return Err(f),
                    }
                    if let Some(s) = step {
                        self.exec(s)?;
                    }
                }
            }
            Stmt::ForIn(var, arr, body) => {
                let keys = self.array(arr)?.borrow().keys();
                for k in keys {
                    self.assign_var(var, Value::from_input(k))?;
                    match self.exec(body) {
                        Ok(()) | Err(Flow::Continue) => {}
                        Err(Flow::Break) => break,
                        Err(f) => return Err(f),
                    }
                }
            }
            Stmt::Block(stmts) => self.exec_block(stmts)?,
            Stmt::Next => return Err(Flow::Next),
            Stmt::NextFile => return Err(Flow::NextFile),
            Stmt::Exit(code) => {
                if let Some(c) = code {
                    self.exit_code = self.eval(c)?.num() as i32;
                }
                return Err(Flow::Exit);
            }
            Stmt::Return(v) => {
                let v = match v {
                    Some(e) => self.eval(e)?,
                    None => Value::Uninit,
                };
                return Err(Flow::Return(v));
            }
            Stmt::Break => return Err(Flow::Break),
            Stmt::Continue => return Err(Flow::Continue),
            Stmt::Delete(name, idx) => match idx {
                Some(idx) => {
                    let key = self.subscript(idx)?;
                    self.array(name)?.borrow_mut().remove(&key);
                }
                None => self.array(name)?.borrow_mut().clear(),
            },
        }
        Ok(())
    }

    // ---- output ----

    fn write_out(&mut self, redirect: Option<&Redirect>, bytes: &[u8]) -> Exec<()> {
        let Some(r) = redirect else {
            self.out.extend_from_slice(bytes);
            if self.out.len() >= 64 * 1024 {
                self.flush_stdout();
            }
            return Ok(());
        };
        let conv = self.convfmt();
        let (name, append, pipe) = match r {
            Redirect::File(e) => (self.eval(e)?.string(&conv), false, false),
            Redirect::Append(e) => (self.eval(e)?.string(&conv), true, false),
            Redirect::Pipe(e) => (self.eval(e)?.string(&conv), false, true),
        };
        if !pipe && (name == "/dev/stdout" || name == "-") {
            self.out.extend_from_slice(bytes);
            return Ok(());
        }
        if !pipe && name == "/dev/stderr" {
            self.flush_stdout();
            self.p.io.err(bytes);
            return Ok(());
        }
        if !self.outputs.contains_key(&name) {
            if pipe {
                self.outputs
                    .insert(name.clone(), Output::Pipe(name.clone(), Vec::new()));
            } else {
                let path = self.p.resolve(&name);
                let opened = if append {
                    std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&path)
                        .map(|_| ())
                } else {
                    std::fs::write(&path, b"")
                };
                if opened.is_err() {
                    return Err(Flow::Error(format!("cannot open \"{name}\" for output")));
                }
                self.outputs
                    .insert(name.clone(), Output::File(name.clone(), Vec::new()));
            }
        }
        if let Some(Output::File(_, buf) | Output::Pipe(_, buf)) = self.outputs.get_mut(&name) {
            buf.extend_from_slice(bytes);
        }
        Ok(())
    }

    fn flush_stdout(&mut self) {
        if !self.out.is_empty() {
            self.p.out(&self.out);
            self.out.clear();
        }
    }

    /// Closes one output or input by name; returns the status close() gives.
    fn close(&mut self, name: &str) -> f64 {
        let mut status = -1.0;
        if let Some(out) = self.outputs.remove(name) {
            status = self.finish_output(out);
        }
        if self.readers.remove(name).is_some() {
            status = 0.0;
        }
        status
    }

    fn finish_output(&mut self, out: Output) -> f64 {
        match out {
            Output::File(name, buf) => {
                use std::io::Write;
                let path = self.p.resolve(&name);
                let ok = std::fs::OpenOptions::new()
                    .append(true)
                    .open(path)
                    .and_then(|mut f| f.write_all(&buf))
                    .is_ok();
                if ok { 0.0 } else { -1.0 }
            }
            Output::Pipe(cmd, buf) => {
                self.flush_stdout();
                let (status, _) = self.shell(&cmd, buf, false);
                f64::from(status)
            }
        }
    }

    fn flush_all(&mut self) {
        self.flush_stdout();
        let mut names: Vec<String> = self.outputs.keys().cloned().collect();
        names.sort();
        for n in names {
            if let Some(o) = self.outputs.remove(&n) {
                self.finish_output(o);
            }
        }
        self.flush_stdout();
    }

    /// Runs `cmd` with the sandbox's shell; `capture` collects its stdout.
    fn shell(&mut self, cmd: &str, stdin: Vec<u8>, capture: bool) -> (i32, Vec<u8>) {
        let sink = if capture {
            Sink::memory()
        } else {
            Rc::clone(&self.p.io.stdout)
        };
        let io = Io {
            stdin: Source::bytes(stdin),
            stdout: Rc::clone(&sink),
            stderr: Rc::clone(&self.p.io.stderr),
            extra: Default::default(),
        };
        let mut child = Process::new(
            "sh",
            self.p.cwd,
            self.p.env,
            self.p.host,
            &io,
            self.p.depth + 1,
        );
        let argv = ["sh".to_string(), "-c".to_string(), cmd.to_string()];
        let status = crate::programs::shell::bash(&mut child, &argv);
        let captured = if capture {
            sink.borrow_mut().take()
        } else {
            Vec::new()
        };
        (status, captured)
    }

    // ---- expressions ----

    fn regex(&mut self, pattern: &str) -> Exec<Regex> {
        if let Some(r) = self.regexes.get(pattern) {
            return Ok(r.clone());
        }
        let re = compile_regex(pattern).map_err(|e| {
            Flow::Error(format!(
                "regular expression compile failed ({e})\n{pattern}"
            ))
        })?;
        if self.regexes.len() > 500 {
            self.regexes.clear();
        }
        self.regexes.insert(pattern.to_string(), re.clone());
        Ok(re)
    }

    /// The regex an operand of `~` or a function stands for.
    fn regex_of(&mut self, e: &Expr) -> Exec<Regex> {
        match e {
            Expr::Regex(r) => self.regex(r),
            other => {
                let conv = self.convfmt();
                let s = self.eval(other)?.string(&conv);
                self.regex(&s)
            }
        }
    }

    pub(super) fn eval(&mut self, e: &Expr) -> Exec<Value> {
        Ok(match e {
            Expr::Num(n) => Value::Num(*n),
            Expr::Str(s) => Value::Str(s.clone()),
            Expr::Regex(r) => {
                let re = self.regex(r)?;
                let rec = self.get_record();
                Value::Num(f64::from(u8::from(re.is_match(&rec))))
            }
            Expr::Field(i) => {
                let i = self.field_index(i)?;
                self.get_field(i)
            }
            Expr::Var(name) => self.get_var(name)?,
            Expr::Index(name, idx) => {
                let key = self.subscript(idx)?;
                let arr = self.array(name)?;
                let existing = arr.borrow().get(&key).cloned();
                match existing {
                    Some(v) => v,
                    None => {
                        // Referencing an element creates it.
                        arr.borrow_mut().set(key, Value::Uninit);
                        Value::Uninit
                    }
                }
            }
            Expr::List(items) => {
                let conv = self.convfmt();
                let mut parts = Vec::new();
                for i in items {
                    parts.push(self.eval(i)?.string(&conv));
                }
                Value::Str(parts.join(" "))
            }
            Expr::Assign(op, target, rhs) => {
                let r = self.eval(rhs)?;
                let v = match op {
                    None => match r {
                        Value::Uninit => Value::Uninit,
                        other => other,
                    },
                    Some(op) => {
                        let l = self.eval(target)?.num();
                        Value::Num(arith(op, l, r.num()))
                    }
                };
                self.assign(target, v)?
            }
            Expr::Cond(c, a, b) => {
                if self.cond(c)? {
                    self.eval(a)?
                } else {
                    self.eval(b)?
                }
            }
            Expr::And(a, b) => Value::Num(f64::from(u8::from(self.cond(a)? && self.cond(b)?))),
            Expr::Or(a, b) => Value::Num(f64::from(u8::from(self.cond(a)? || self.cond(b)?))),
            Expr::Not(a) => Value::Num(f64::from(u8::from(!self.cond(a)?))),
            Expr::Neg(a) => Value::Num(-self.eval(a)?.num()),
            Expr::Plus(a) => Value::Num(self.eval(a)?.num()),
            Expr::Binary(op, a, b) => {
                let l = self.eval(a)?.num();
                let r = self.eval(b)?.num();
                Value::Num(arith(op, l, r))
            }
            Expr::Cmp(op, a, b) => {
                let l = self.eval(a)?;
                let r = self.eval(b)?;
                let ord = if l.is_numeric() && r.is_numeric() {
                    l.num().partial_cmp(&r.num())
                } else {
                    let conv = self.convfmt();
                    Some(l.string(&conv).as_bytes().cmp(r.string(&conv).as_bytes()))
                };
                use std::cmp::Ordering::*;
                let hit = match (*op, ord) {
                    (_, None) => *op == "!=",
                    ("<", Some(o)) => o == Less,
                    ("<=", Some(o)) => o != Greater,
                    ("==", Some(o)) => o == Equal,
                    ("!=", Some(o)) => o != Equal,
                    (">=", Some(o)) => o != Less,
                    (_, Some(o)) => o == Greater,
                };
                Value::Num(f64::from(u8::from(hit)))
            }
            Expr::Concat(a, b) => {
                let conv = self.convfmt();
                let mut s = self.eval(a)?.string(&conv);
                s.push_str(&self.eval(b)?.string(&conv));
                Value::Str(s)
            }
            Expr::Match(negate, l, r) => {
                let conv = self.convfmt();
                let s = self.eval(l)?.string(&conv);
                let re = self.regex_of(r)?;
                Value::Num(f64::from(u8::from(re.is_match(&s) != *negate)))
            }
            Expr::In(keys, arr) => {
                let key = self.subscript(keys)?;
                let present = self.array(arr)?.borrow().get(&key).is_some();
                Value::Num(f64::from(u8::from(present)))
            }
            Expr::Incr(pre, step, target) => {
                let old = self.eval(target)?.num();
                let new = old + step;
                self.assign(target, Value::Num(new))?;
                Value::Num(if *pre { new } else { old })
            }
            Expr::Builtin(name, args) => self.builtin(name, args)?,
            Expr::Call(name, args) => self.call(name, args)?,
            Expr::Getline(src, target) => self.getline(src, target.as_deref())?,
        })
    }

    fn call(&mut self, name: &str, args: &[Expr]) -> Exec<Value> {
        let prog = self.prog;
        let Some(Function { params, body }) = prog.functions.get(name) else {
            return Err(Flow::Error(format!("function {name} never defined")));
        };
        if self.frames.len() >= MAX_CALL_DEPTH {
            return Err(Flow::Error("function call nesting too deep".to_string()));
        }
        let mut frame = HashMap::new();
        for (i, param) in params.iter().enumerate() {
            let cell = match args.get(i) {
                Some(Expr::Var(v)) => match self.lookup(v).cloned() {
                    Some(Cell::Arr(a)) => Cell::Arr(a),
                    Some(Cell::Val(val)) => Cell::Val(val),
                    None => Cell::Val(Value::Uninit),
                },
                Some(e) => Cell::Val(self.eval(e)?),
                None => Cell::Val(Value::Uninit),
            };
            frame.insert(param.clone(), cell);
        }
        for extra in args.iter().skip(params.len()) {
            self.eval(extra)?;
        }
        self.frames.push(frame);
        let result = self.exec_block(body);
        let frame = self.frames.pop();
        // An untyped variable the callee made an array stays one.
        if let Some(frame) = frame {
            for (i, param) in params.iter().enumerate() {
                if let (Some(Expr::Var(v)), Some(Cell::Arr(a))) = (args.get(i), frame.get(param))
                    && matches!(self.lookup(v), None | Some(Cell::Val(Value::Uninit)))
                {
                    self.bind_array(v, Rc::clone(a));
                }
            }
        }
        match result {
            Ok(()) => Ok(Value::Uninit),
            Err(Flow::Return(v)) => Ok(v),
            Err(f) => Err(f),
        }
    }

    fn bind_array(&mut self, name: &str, a: ArrayRef) {
        if let Some(frame) = self.frames.last_mut()
            && frame.contains_key(name)
        {
            frame.insert(name.to_string(), Cell::Arr(a));
            return;
        }
        self.globals.insert(name.to_string(), Cell::Arr(a));
    }

    fn getline(&mut self, src: &GetlineSrc, target: Option<&Expr>) -> Exec<Value> {
        let conv = self.convfmt();
        let rs = self.gstr("RS");
        let record = match src {
            GetlineSrc::Main => {
                if target.is_none() {
                    if !self.next_main_record()? {
                        return Ok(Value::Num(0.0));
                    }
                    return Ok(Value::Num(1.0));
                }
                // `getline var` reads the main input without touching $0.
                loop {
                    if self.main.is_none() && !self.open_next_main()? {
                        return Ok(Value::Num(0.0));
                    }
                    let rec = match self.main.as_mut() {
                        Some(r) => read_record(r, &rs, &mut self.regexes),
                        None => None,
                    };
                    match rec {
                        Some(rec) => {
                            let nr = self.gnum("NR") + 1.0;
                            let fnr = self.gnum("FNR") + 1.0;
                            self.set_global("NR", Value::Num(nr));
                            self.set_global("FNR", Value::Num(fnr));
                            break rec;
                        }
                        None => self.main = None,
                    }
                }
            }
            GetlineSrc::File(e) => {
                let name = self.eval(e)?.string(&conv);
                if !self.readers.contains_key(&name) {
                    let data = if name == "-" || name == "/dev/stdin" {
                        self.p.io.stdin.borrow_mut().read_all()
                    } else {
                        match std::fs::read(self.p.resolve(&name)) {
                            Ok(d) => d,
                            Err(_) => return Ok(Value::Num(-1.0)),
                        }
                    };
                    self.readers.insert(name.clone(), Reader { data, pos: 0 });
                }
                let rec = match self.readers.get_mut(&name) {
                    Some(r) => read_record(r, &rs, &mut self.regexes),
                    None => None,
                };
                match rec {
                    Some(r) => r,
                    None => return Ok(Value::Num(0.0)),
                }
            }
            GetlineSrc::Command(e) => {
                let cmd = self.eval(e)?.string(&conv);
                if !self.readers.contains_key(&cmd) {
                    self.flush_stdout();
                    let (_, data) = self.shell(&cmd, Vec::new(), true);
                    self.readers.insert(cmd.clone(), Reader { data, pos: 0 });
                }
                let rec = match self.readers.get_mut(&cmd) {
                    Some(r) => read_record(r, &rs, &mut self.regexes),
                    None => None,
                };
                match rec {
                    Some(r) => {
                        let nr = self.gnum("NR") + 1.0;
                        self.set_global("NR", Value::Num(nr));
                        r
                    }
                    None => return Ok(Value::Num(0.0)),
                }
            }
        };
        match target {
            Some(t) => {
                self.assign(t, Value::from_input(record))?;
            }
            None => self.set_record(record),
        }
        Ok(Value::Num(1.0))
    }

    fn builtin(&mut self, name: &str, args: &[Expr]) -> Exec<Value> {
        let conv = self.convfmt();
        let arg = |it: &mut Self, i: usize| -> Exec<Value> {
            match args.get(i) {
                Some(e) => it.eval(e),
                None => Ok(Value::Uninit),
            }
        };
        Ok(match name {
            "length" => match args.first() {
                None => Value::Num(self.get_record().len() as f64),
                Some(Expr::Var(v)) if matches!(self.lookup(v), Some(Cell::Arr(_))) => {
                    let a = self.array(v)?;
                    Value::Num(a.borrow().len() as f64)
                }
                Some(e) => Value::Num(self.eval(e)?.string(&conv).len() as f64),
            },
            "substr" => {
                let s = arg(self, 0)?.string(&conv);
                let start = arg(self, 1)?.num();
                let len = if args.len() > 2 {
                    arg(self, 2)?.num()
                } else {
                    f64::INFINITY
                };
                Value::Str(substr(&s, start, len))
            }
            "index" => {
                let s = arg(self, 0)?.string(&conv);
                let t = arg(self, 1)?.string(&conv);
                Value::Num(s.find(&t).map_or(0.0, |i| (i + 1) as f64))
            }
            "split" => {
                let s = arg(self, 0)?.string(&conv);
                let Some(Expr::Var(arr)) = args.get(1) else {
                    return Err(Flow::Error(
                        "split: second argument must be an array".to_string(),
                    ));
                };
                let parts = match args.get(2) {
                    None => {
                        let fs = self.gstr("FS");
                        split_fields(&s, &fs, false, &mut self.regexes)
                    }
                    Some(Expr::Regex(r)) => {
                        let re = self.regex(r)?;
                        split_regex(&s, &re)
                    }
                    Some(e) => {
                        let fs = self.eval(e)?.string(&conv);
                        split_fields(&s, &fs, false, &mut self.regexes)
                    }
                };
                let a = self.array(arr)?;
                let mut a = a.borrow_mut();
                a.clear();
                for (i, part) in parts.iter().enumerate() {
                    a.set((i + 1).to_string(), Value::from_input(part.clone()));
                }
                Value::Num(parts.len() as f64)
            }
            "sub" | "gsub" => {
                let Some(re_expr) = args.first() else {
                    return Err(Flow::Error(format!("{name}: missing arguments")));
                };
                let re = self.regex_of(re_expr)?;
                let repl = arg(self, 1)?.string(&conv);
                let target = args
                    .get(2)
                    .cloned()
                    .unwrap_or(Expr::Field(Box::new(Expr::Num(0.0))));
                let text = self.eval(&target)?.string(&conv);
                let (new, n) = substitute(&re, &repl, &text, name == "gsub");
                if n > 0 {
                    self.assign(&target, Value::Str(new))?;
                }
                Value::Num(n as f64)
            }
            "match" => {
                let s = arg(self, 0)?.string(&conv);
                let Some(re_expr) = args.get(1) else {
                    return Err(Flow::Error("match: missing arguments".to_string()));
                };
                let re = self.regex_of(re_expr)?;
                let (start, len) = match re.find(&s) {
                    Some(m) => ((m.start() + 1) as f64, (m.end() - m.start()) as f64),
                    None => (0.0, -1.0),
                };
                self.set_global("RSTART", Value::Num(start));
                self.set_global("RLENGTH", Value::Num(len));
                Value::Num(start)
            }
            "sprintf" => {
                let fmt = arg(self, 0)?.string(&conv);
                let mut vals = Vec::new();
                for e in args.iter().skip(1) {
                    vals.push(self.eval(e)?);
                }
                Value::Str(sprintf(&fmt, &vals, &conv))
            }
            "tolower" => Value::Str(arg(self, 0)?.string(&conv).to_ascii_lowercase()),
            "toupper" => Value::Str(arg(self, 0)?.string(&conv).to_ascii_uppercase()),
            "int" => Value::Num(arg(self, 0)?.num().trunc()),
            "sqrt" => Value::Num(arg(self, 0)?.num().sqrt()),
            "exp" => Value::Num(arg(self, 0)?.num().exp()),
            "log" => Value::Num(arg(self, 0)?.num().ln()),
            "sin" => Value::Num(arg(self, 0)?.num().sin()),
            "cos" => Value::Num(arg(self, 0)?.num().cos()),
            "atan2" => {
                let y = arg(self, 0)?.num();
                let x = arg(self, 1)?.num();
                Value::Num(y.atan2(x))
            }
            "rand" => {
                // xorshift64*: awk only promises [0, 1).
                if self.rand_state == 0 {
                    self.rand_state = 0x2545_F491_4F6C_DD1D ^ self.rand_seed.to_bits();
                }
                let mut x = self.rand_state;
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                self.rand_state = x;
                let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
                Value::Num(r as f64 / (1u64 << 53) as f64)
            }
            "srand" => {
                let old = self.rand_seed;
                self.rand_seed = if args.is_empty() {
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0.0, |d| d.as_secs() as f64)
                } else {
                    arg(self, 0)?.num()
                };
                self.rand_state = 0;
                Value::Num(old)
            }
            "system" => {
                let cmd = arg(self, 0)?.string(&conv);
                self.flush_all();
                let (status, _) = self.shell(&cmd, Vec::new(), false);
                Value::Num(f64::from(status))
            }
            "close" => {
                let n = arg(self, 0)?.string(&conv);
                Value::Num(self.close(&n))
            }
            "fflush" => {
                self.flush_stdout();
                Value::Num(0.0)
            }
            other => return Err(Flow::Error(format!("function {other} never defined"))),
        })
    }
}

/// `name=value` operand, if the text is one.
fn assignment(arg: &str) -> Option<(&str, &str)> {
    let (name, value) = arg.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    if (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        Some((name, value))
    } else {
        None
    }
}

pub(super) fn compile_regex(pattern: &str) -> Result<Regex, String> {
    let translated = posix_regex::translate(pattern, Dialect::Awk).map_err(|e| e.to_string())?;
    regex::RegexBuilder::new(&format!("(?s){translated}"))
        .size_limit(64 << 20)
        .build()
        .map_err(|e| e.to_string())
}

/// mawk's substr: positions truncate toward zero, and a start before 1
/// keeps the whole length (`substr(s, 0, 2)` is two characters).
fn substr(s: &str, start: f64, len: f64) -> String {
    let bytes = s.as_bytes();
    if start.is_nan() || len.is_nan() {
        return String::new();
    }
    let mut begin = start.trunc();
    let mut length = if len.is_infinite() {
        f64::INFINITY
    } else {
        len.trunc()
    };
    if begin < 1.0 {
        length -= begin;
        begin = 1.0;
    }
    if length <= 0.0 {
        return String::new();
    }
    let from = (begin as usize).saturating_sub(1).min(bytes.len());
    let to = if length.is_infinite() {
        bytes.len()
    } else {
        from.saturating_add(length as usize).min(bytes.len())
    };
    String::from_utf8_lossy(bytes.get(from..to).unwrap_or_default()).into_owned()
}

/// sub/gsub: `&` is the match, `\&` a literal `&`.
fn substitute(re: &Regex, repl: &str, text: &str, global: bool) -> (String, usize) {
    let mut out = String::new();
    let mut count = 0;
    let mut pos = 0;
    let mut start = 0;
    let mut prev_end: Option<usize> = None;
    while start <= text.len() {
        let Some(m) = re.find_at(text, start) else {
            break;
        };
        if m.start() == m.end() && prev_end == Some(m.start()) {
            start = next_char_boundary(text, m.start());
            continue;
        }
        out.push_str(text.get(pos..m.start()).unwrap_or_default());
        let mut chars = repl.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&'&') => {
                    chars.next();
                    out.push('&');
                }
                '\\' if chars.peek() == Some(&'\\') => {
                    chars.next();
                    out.push('\\');
                }
                '&' => out.push_str(m.as_str()),
                other => out.push(other),
            }
        }
        pos = m.end();
        count += 1;
        prev_end = Some(m.end());
        if !global {
            break;
        }
        start = if m.start() == m.end() {
            if m.end() < text.len() {
                let next = next_char_boundary(text, m.end());
                out.push_str(text.get(m.end()..next).unwrap_or_default());
                pos = next;
                next
            } else {
                text.len() + 1
            }
        } else {
            m.end()
        };
    }
    out.push_str(text.get(pos.min(text.len())..).unwrap_or_default());
    (out, count)
}

fn next_char_boundary(text: &str, i: usize) -> usize {
    let mut j = i + 1;
    while j < text.len() && !text.is_char_boundary(j) {
        j += 1;
    }
    j
}

/// Splits a record into fields by FS: `" "` (runs of blanks, trimmed),
/// one other character (literally, except as a regex metachar), or a regex.
fn split_fields(
    rec: &str,
    fs: &str,
    paragraph: bool,
    cache: &mut HashMap<String, Regex>,
) -> Vec<String> {
    if fs == " " {
        return rec
            .split([' ', '\t', '\n'])
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
    }
    if rec.is_empty() {
        return Vec::new();
    }
    let single = fs.chars().count() == 1 && fs != "\\";
    let fields: Vec<String> = if single && !paragraph {
        let sep = fs.chars().next().unwrap_or(' ');
        if sep == '\t' || !"\\^$.[]|()*+?{}".contains(sep) {
            return rec.split(sep).map(String::from).collect();
        }
        rec.split(sep).map(String::from).collect()
    } else {
        let pattern = if single {
            format!("{}|\n", posix_regex::escape(fs))
        } else if paragraph {
            format!("(?:{fs})|\n")
        } else {
            fs.to_string()
        };
        let re = match cache.get(&pattern) {
            Some(r) => r.clone(),
            None => match compile_regex(&pattern) {
                Ok(r) => {
                    cache.insert(pattern.clone(), r.clone());
                    r
                }
                Err(_) => return vec![rec.to_string()],
            },
        };
        split_regex(rec, &re)
    };
    fields
}

fn split_regex(s: &str, re: &Regex) -> Vec<String> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut pos = 0;
    for m in re.find_iter(s) {
        if m.start() == m.end() {
            continue;
        }
        out.push(s.get(pos..m.start()).unwrap_or_default().to_string());
        pos = m.end();
    }
    out.push(s.get(pos..).unwrap_or_default().to_string());
    out
}

/// The next record of `r` by RS: newline, one character, paragraph
/// mode (`""`) or a regex.
fn read_record(r: &mut Reader, rs: &str, cache: &mut HashMap<String, Regex>) -> Option<String> {
    let rest = r.data.get(r.pos..)?;
    if rs.is_empty() {
        // Paragraph mode: skip leading newlines, end at a blank line.
        let skip = rest.iter().take_while(|&&b| b == b'\n').count();
        let body = rest.get(skip..)?;
        if body.is_empty() {
            r.pos = r.data.len();
            return None;
        }
        let mut end = body.len();
        let mut next = body.len();
        let mut i = 0;
        while i + 1 < body.len() {
            if body.get(i) == Some(&b'\n') && body.get(i + 1) == Some(&b'\n') {
                end = i;
                next = i + body
                    .get(i..)
                    .map_or(0, |t| t.iter().take_while(|&&b| b == b'\n').count());
                break;
            }
            i += 1;
        }
        let mut text = String::from_utf8_lossy(body.get(..end).unwrap_or_default()).into_owned();
        if next == body.len() && text.ends_with('\n') {
            text.pop();
        }
        r.pos += skip + next;
        return Some(text);
    }
    if rest.is_empty() {
        return None;
    }
    let single = rs.len() == 1 || (rs.chars().count() == 1);
    if single {
        let sep = rs.as_bytes();
        let (end, used) = match find_bytes(rest, sep) {
            Some(i) => (i, i + sep.len()),
            None => (rest.len(), rest.len()),
        };
        let text = String::from_utf8_lossy(rest.get(..end).unwrap_or_default()).into_owned();
        r.pos += used;
        return Some(text);
    }
    let text = String::from_utf8_lossy(rest).into_owned();
    let re = match cache.get(rs) {
        Some(re) => re.clone(),
        None => {
            let re = compile_regex(rs).ok()?;
            cache.insert(rs.to_string(), re.clone());
            re
        }
    };
    match re.find_iter(&text).find(|m| m.end() > m.start()) {
        Some(m) => {
            r.pos += m.end();
            Some(text.get(..m.start()).unwrap_or_default().to_string())
        }
        None => {
            r.pos = r.data.len();
            Some(text.strip_suffix('\n').unwrap_or(&text).to_string())
        }
    }
}

fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

fn arith(op: &str, l: f64, r: f64) -> f64 {
    match op {
        "+" => l + r,
        "-" => l - r,
        "*" => l * r,
        "/" => l / r,
        "%" => l % r,
        _ => l.powf(r),
    }
}

/// How many arguments a printf format consumes.
fn conversions(fmt: &str) -> usize {
    let mut n = 0;
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            continue;
        }
        while let Some(&f) = chars.peek() {
            if f == '*' {
                n += 1;
            }
            if "-+ #0123456789.*hlLqjz".contains(f) {
                chars.next();
            } else {
                break;
            }
        }
        if chars.next().is_some() {
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substr_follows_mawk() {
        assert_eq!(substr("hello", 0.0, 2.0), "he");
        assert_eq!(substr("hello", -1.0, 3.0), "hell");
        assert_eq!(substr("hello", 2.0, f64::INFINITY), "ello");
        assert_eq!(substr("hello", 2.5, 2.0), "el");
        assert_eq!(substr("hello", 6.0, 1.0), "");
    }

    #[test]
    fn gsub_handles_empty_matches_and_ampersand() {
        let re = compile_regex("x*").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            substitute(&re, "-", "abc", true),
            ("-a-b-c-".to_string(), 4)
        );
        let re = compile_regex("o").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            substitute(&re, "[&]", "foo", true),
            ("f[o][o]".to_string(), 2)
        );
        assert_eq!(substitute(&re, "\\&", "foo", false), ("f&o".to_string(), 1));
    }

    #[test]
    fn fields_split_by_fs() {
        let mut c = HashMap::new();
        assert_eq!(
            split_fields("  a b\tc ", " ", false, &mut c),
            vec!["a", "b", "c"]
        );
        assert_eq!(split_fields("a,,b", ",", false, &mut c), vec!["a", "", "b"]);
        assert_eq!(
            split_fields("a1b22c", "[0-9]+", false, &mut c),
            vec!["a", "b", "c"]
        );
        assert_eq!(split_fields("a|b", "|", false, &mut c), vec!["a", "b"]);
    }

    #[test]
    fn records_split_by_rs() {
        let mut c = HashMap::new();
        let mut r = Reader {
            data: b"a\n\n\nb\nc\n\n".to_vec(),
            pos: 0,
        };
        assert_eq!(read_record(&mut r, "", &mut c).as_deref(), Some("a"));
        assert_eq!(read_record(&mut r, "", &mut c).as_deref(), Some("b\nc"));
        assert_eq!(read_record(&mut r, "", &mut c), None);
    }
}
