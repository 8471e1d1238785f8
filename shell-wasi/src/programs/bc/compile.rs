//! bc's grammar (GNU bc 1.07.1's bc.y) read by recursive descent, each
//! rule emitting the code its yacc action generates. Every instruction
//! keeps the size GNU's loader gives it, so a runtime error can name the
//! same code address (`Runtime error (func=(main), adr=3)`) as GNU's.

use std::collections::HashMap;

use super::lexer::{Lexer, Tok, Token};

/// One instruction (GNU's letter in the comment).
#[derive(Debug, Clone)]
pub(crate) enum Op {
    /// `0`, `1`, `K…:`: a constant, read in `ibase` when run.
    Const(String),
    /// `l`/`s`: a simple variable; `L`/`S`: an array element (index popped).
    Load(usize),
    Store(usize),
    LoadElem(usize),
    StoreElem(usize),
    /// `i`/`d`: increment a variable in place; `A`/`M`: an element.
    IncVar(usize, bool),
    IncElem(usize, bool),
    /// `D` duplicate, `x` swap, `p` pop.
    Dup,
    Swap,
    Pop,
    /// `W`: print with a newline and remember as `last`; `P`: print.
    PrintLine,
    Print,
    Neg,
    Not,
    Bin(char),
    Rel(&'static str),
    /// `J`, `Z` (jump when zero), `B` (jump when not zero), `N` (label).
    Jump(usize),
    JumpZero(usize),
    JumpNonZero(usize),
    Label(usize),
    /// `C`: function, and which arguments are arrays.
    Call(usize, Vec<bool>),
    /// `K-N:` in an argument list: array N by name.
    ArrayArg(usize),
    /// `cL` length, `cR` sqrt, `cS` scale, `cI` read, `cX` random.
    Builtin(char),
    /// `w`: a string statement; `O`: a string in `print`.
    Str(String),
    PrintStr(String),
    Return,
    Halt,
}

/// An instruction and its address in GNU's code.
#[derive(Debug, Clone)]
pub(crate) struct Instr {
    pub(crate) op: Op,
    pub(crate) addr: usize,
    pub(crate) size: usize,
}

/// A parameter or auto variable.
#[derive(Debug, Clone)]
pub(crate) struct Local {
    pub(crate) index: usize,
    pub(crate) array: bool,
    pub(crate) by_ref: bool,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Function {
    pub(crate) name: String,
    pub(crate) defined: bool,
    pub(crate) void: bool,
    pub(crate) params: Vec<Local>,
    pub(crate) autos: Vec<Local>,
    pub(crate) code: Vec<Instr>,
}

/// Names and functions, shared by everything compiled in one run.
#[derive(Default)]
pub(crate) struct Symbols {
    vars: HashMap<String, usize>,
    arrays: HashMap<String, usize>,
    pub(crate) array_names: Vec<String>,
    funcs: HashMap<String, usize>,
    pub(crate) functions: Vec<Function>,
    pub(crate) var_count: usize,
}

/// The special variables' numbers in GNU's code.
pub(crate) const IBASE: usize = 0;
pub(crate) const OBASE: usize = 1;
pub(crate) const SCALE: usize = 2;
pub(crate) const HISTORY: usize = 3;
pub(crate) const LAST: usize = 4;

impl Symbols {
    pub(crate) fn new() -> Self {
        Self {
            var_count: 5,
            // Array 0 is never used: GNU numbers arrays from 1.
            array_names: vec![String::new()],
            ..Self::default()
        }
    }

    fn var(&mut self, name: &str) -> usize {
        match name {
            "ibase" => return IBASE,
            "obase" => return OBASE,
            "scale" => return SCALE,
            "history" => return HISTORY,
            "last" => return LAST,
            _ => {}
        }
        if let Some(&i) = self.vars.get(name) {
            return i;
        }
        let i = self.var_count;
        self.var_count += 1;
        self.vars.insert(name.to_string(), i);
        i
    }

    fn array(&mut self, name: &str) -> usize {
        if let Some(&i) = self.arrays.get(name) {
            return i;
        }
        let i = self.array_names.len();
        self.array_names.push(name.to_string());
        self.arrays.insert(name.to_string(), i);
        i
    }

    pub(crate) fn func(&mut self, name: &str) -> usize {
        if let Some(&i) = self.funcs.get(name) {
            return i;
        }
        let i = self.functions.len() + 1;
        self.functions.push(Function {
            name: name.to_string(),
            ..Function::default()
        });
        self.funcs.insert(name.to_string(), i);
        i
    }
}

/// Bytes GNU's loader uses for a variable, array or function number.
fn index_size(i: usize) -> usize {
    if i > 0x7f { 2 } else { 1 }
}

fn op_size(op: &Op) -> usize {
    match op {
        Op::Const(t) if t == "0" || t == "1" => 1,
        Op::Const(t) => 2 + t.len(),
        Op::Load(i) | Op::Store(i) | Op::IncVar(i, _) => 1 + index_size(*i),
        Op::LoadElem(i) | Op::StoreElem(i) | Op::IncElem(i, _) => 1 + index_size(*i),
        Op::Jump(_) | Op::JumpZero(_) | Op::JumpNonZero(_) => 3,
        Op::Label(_) => 0,
        Op::Call(f, args) => 1 + index_size(*f) + args.len() + 1,
        Op::ArrayArg(i) => 2 + format!("-{i}").len(),
        Op::Builtin(_) => 2,
        Op::Str(s) | Op::PrintStr(s) => 2 + s.len(),
        _ => 1,
    }
}

// Expression flags, as bc.y's.
const EX_ASSGN: u32 = 0;
const EX_REG: u32 = 1;
const EX_COMP: u32 = 2;
const EX_PAREN: u32 = 4;
const EX_VOID: u32 = 8;

/// What one top-level item of the program is.
pub(crate) enum Item {
    /// Code to run now (a line of statements).
    Run(Vec<Instr>),
    /// A function was defined; nothing to run.
    Defined,
    /// `quit`: stop reading and exit.
    Quit,
    /// The end of the text.
    End,
}

/// Where compiling stopped: a message for stderr and whether the rest
/// of the line was skipped.
pub(crate) struct Diagnostic {
    pub(crate) line: usize,
    pub(crate) message: String,
}

pub(crate) struct Compiler<'a, 's> {
    lex: Lexer<'a>,
    tok: Token,
    syms: &'s mut Symbols,
    code: Vec<Instr>,
    next_label: usize,
    break_label: Option<usize>,
    continue_label: Option<usize>,
    in_function: Option<usize>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// A semantic error: the item is compiled but not run (had_error).
    item_error: bool,
}

/// A syntax error: recover at the end of the line.
struct SyntaxError;

type Parse<T> = Result<T, SyntaxError>;

impl<'a, 's> Compiler<'a, 's> {
    pub(crate) fn new(src: &'a str, syms: &'s mut Symbols) -> Self {
        let mut lex = Lexer::new(src);
        let tok = lex.next_token();
        let mut c = Self {
            lex,
            tok,
            syms,
            code: Vec::new(),
            next_label: 1,
            break_label: None,
            continue_label: None,
            in_function: None,
            diagnostics: Vec::new(),
            item_error: false,
        };
        c.flush_lexer_errors();
        c
    }

    fn flush_lexer_errors(&mut self) {
        for (line, message) in self.lex.errors.drain(..) {
            self.diagnostics.push(Diagnostic { line, message });
        }
    }

    fn advance(&mut self) {
        self.tok = self.lex.next_token();
        self.flush_lexer_errors();
    }

    fn emit(&mut self, op: Op) {
        let addr = self.code.last().map_or(0, |i| i.addr + i.size);
        let size = op_size(&op);
        self.code.push(Instr { op, addr, size });
    }

    fn label(&mut self) -> usize {
        let l = self.next_label;
        self.next_label += 1;
        l
    }

    fn error(&mut self, message: &str) {
        self.diagnostics.push(Diagnostic {
            line: self.tok.line,
            message: message.to_string(),
        });
        self.item_error = true;
    }

    fn error_at(&mut self, line: usize, message: &str) {
        self.diagnostics.push(Diagnostic {
            line,
            message: message.to_string(),
        });
        self.item_error = true;
    }

    fn syntax_error<T>(&mut self) -> Parse<T> {
        self.diagnostics.push(Diagnostic {
            line: self.tok.line,
            message: "syntax error".into(),
        });
        Err(SyntaxError)
    }

    fn is(&self, c: char) -> bool {
        self.tok.tok == Tok::Punct(c)
    }

    fn expect(&mut self, c: char) -> Parse<()> {
        if self.is(c) {
            self.advance();
            Ok(())
        } else {
            self.syntax_error()
        }
    }

    fn keyword(&self) -> Option<&str> {
        match &self.tok.tok {
            Tok::Name(n) => Some(n.as_str()),
            _ => None,
        }
    }

    /// The names and functions compiled so far.
    pub(crate) fn symbols(&self) -> &Symbols {
        self.syms
    }

    /// The next top-level item: a line of statements or a definition.
    pub(crate) fn item(&mut self) -> Item {
        loop {
            self.code.clear();
            self.item_error = false;
            self.next_label = 1;
            if self.tok.tok == Tok::Eof {
                return Item::End;
            }
            if self.keyword() == Some("define") {
                match self.function() {
                    Ok(()) => return Item::Defined,
                    Err(SyntaxError) => {
                        self.recover();
                        continue;
                    }
                }
            }
            match self.semicolon_list() {
                Ok(true) => return Item::Quit,
                Ok(false) => {}
                Err(SyntaxError) => {
                    self.recover();
                    continue;
                }
            }
            match self.tok.tok {
                Tok::Newline => self.advance(),
                Tok::Eof => {
                    // A last line without its newline is not a statement.
                    if !self.code.is_empty() {
                        let _: Parse<()> = self.syntax_error();
                        return Item::End;
                    }
                }
                _ => {
                    let _: Parse<()> = self.syntax_error();
                    self.recover();
                    continue;
                }
            }
            if self.item_error {
                continue;
            }
            return Item::Run(std::mem::take(&mut self.code));
        }
    }

    /// yacc's `error ENDOFLINE`: skip to the next line.
    fn recover(&mut self) {
        while !matches!(self.tok.tok, Tok::Newline | Tok::Eof) {
            self.advance();
        }
        if self.tok.tok == Tok::Newline {
            self.advance();
        }
        self.in_function = None;
        self.break_label = None;
        self.continue_label = None;
    }

    /// Statements separated by `;` up to the end of the line; true on
    /// `quit`.
    fn semicolon_list(&mut self) -> Parse<bool> {
        loop {
            if matches!(self.tok.tok, Tok::Newline | Tok::Eof) {
                return Ok(false);
            }
            if self.is(';') {
                self.advance();
                continue;
            }
            if self.statement()? {
                return Ok(true);
            }
            if self.is(';') {
                self.advance();
            } else if !matches!(self.tok.tok, Tok::Newline | Tok::Eof) {
                return self.syntax_error();
            }
        }
    }

    /// Statements inside braces, across lines; true on `quit`.
    fn statement_list(&mut self) -> Parse<bool> {
        loop {
            match &self.tok.tok {
                Tok::Punct('}') => return Ok(false),
                Tok::Newline | Tok::Punct(';') => self.advance(),
                Tok::Eof => return self.syntax_error(),
                _ => {
                    if self.statement()? {
                        return Ok(true);
                    }
                    if !matches!(
                        self.tok.tok,
                        Tok::Newline | Tok::Punct(';') | Tok::Punct('}')
                    ) {
                        return self.syntax_error();
                    }
                }
            }
        }
    }

    fn skip_newlines(&mut self) {
        while self.tok.tok == Tok::Newline {
            self.advance();
        }
    }

    /// One statement; true on `quit` (which bc obeys while reading).
    fn statement(&mut self) -> Parse<bool> {
        let kw = self.keyword().map(str::to_string);
        match kw.as_deref() {
            Some("quit") => return Ok(true),
            Some("warranty" | "limits") => {
                // Both print at once, while reading, as GNU's do.
                let name = kw.unwrap_or_default();
                self.advance();
                self.emit(Op::Str(format!("\u{0}{name}")));
                return Ok(false);
            }
            Some("halt") => {
                self.advance();
                self.emit(Op::Halt);
            }
            Some("break") => {
                // Reported at the keyword's own line (yacc needs no
                // look-ahead to reduce it).
                let line = self.tok.line;
                self.advance();
                match self.break_label {
                    Some(l) => self.emit(Op::Jump(l)),
                    None => self.error_at(line, "Break outside a for/while"),
                }
            }
            Some("continue") => {
                // Reported at the keyword's own line (yacc needs no
                // look-ahead to reduce it).
                let line = self.tok.line;
                self.advance();
                match self.continue_label {
                    Some(l) => self.emit(Op::Jump(l)),
                    None => self.error_at(line, "Continue outside a for"),
                }
            }
            Some("return") => {
                self.advance();
                if matches!(
                    self.tok.tok,
                    Tok::Newline | Tok::Eof | Tok::Punct(';' | '}')
                ) {
                    self.emit(Op::Const("0".into()));
                    if self.in_function.is_none() {
                        self.error("Return outside of a function.");
                    }
                } else {
                    let f = self.expression()?;
                    if f & EX_VOID != 0 {
                        self.error("return requires non-void expression");
                    }
                    if self.in_function.is_none() {
                        self.error("Return outside of a function.");
                    } else if let Some(fi) = self.in_function
                        && self.syms.functions.get(fi - 1).is_some_and(|f| f.void)
                    {
                        self.error("Return expression in a void function.");
                    }
                }
                self.emit(Op::Return);
            }
            Some("if") => return self.if_statement(),
            Some("while") => return self.while_statement(),
            Some("for") => return self.for_statement(),
            Some("print") => {
                self.advance();
                loop {
                    if let Tok::Str(s) = &self.tok.tok {
                        let s = s.clone();
                        self.advance();
                        self.emit(Op::PrintStr(s));
                    } else {
                        let f = self.expression()?;
                        if f & EX_VOID != 0 {
                            self.error("void expression in print");
                        }
                        self.emit(Op::Print);
                    }
                    if self.is(',') {
                        self.advance();
                    } else {
                        break;
                    }
                }
            }
            _ => {
                if self.is('{') {
                    self.advance();
                    if self.statement_list()? {
                        return Ok(true);
                    }
                    self.expect('}')?;
                    return Ok(false);
                }
                if let Tok::Str(s) = &self.tok.tok {
                    let s = s.clone();
                    self.advance();
                    self.emit(Op::Str(s));
                    return Ok(false);
                }
                let f = self.expression()?;
                if f & EX_REG != 0 {
                    self.emit(Op::PrintLine);
                } else {
                    self.emit(Op::Pop);
                }
            }
        }
        Ok(false)
    }

    fn if_statement(&mut self) -> Parse<bool> {
        self.advance();
        self.expect('(')?;
        let f = self.expression()?;
        if f & EX_VOID != 0 {
            self.error("void expression");
        }
        self.expect(')')?;
        let mut if_label = self.label();
        self.emit(Op::JumpZero(if_label));
        self.skip_newlines();
        if self.statement()? {
            return Ok(true);
        }
        // An `else` may follow on the same line or after newlines only
        // inside braces; GNU's grammar takes it right after the statement.
        if self.keyword() == Some("else") {
            self.advance();
            let else_label = self.label();
            self.emit(Op::Jump(else_label));
            self.emit(Op::Label(if_label));
            if_label = else_label;
            self.skip_newlines();
            if self.statement()? {
                return Ok(true);
            }
        }
        self.emit(Op::Label(if_label));
        Ok(false)
    }

    fn while_statement(&mut self) -> Parse<bool> {
        self.advance();
        let start = self.label();
        self.emit(Op::Label(start));
        self.expect('(')?;
        let f = self.expression()?;
        if f & EX_VOID != 0 {
            self.error("void expression");
        }
        self.expect(')')?;
        let saved = self.break_label;
        let brk = self.label();
        self.break_label = Some(brk);
        self.emit(Op::JumpZero(brk));
        self.skip_newlines();
        let quit = self.statement()?;
        self.emit(Op::Jump(start));
        self.emit(Op::Label(brk));
        self.break_label = saved;
        Ok(quit)
    }

    fn for_statement(&mut self) -> Parse<bool> {
        self.advance();
        let saved_break = self.break_label;
        let brk = self.label();
        self.break_label = Some(brk);
        self.expect('(')?;
        if !self.is(';') {
            let f = self.expression()?;
            if f & EX_VOID != 0 {
                self.error("first expression is void");
            }
            self.emit(Op::Pop);
        }
        self.expect(';')?;
        let cond = self.label();
        self.emit(Op::Label(cond));
        if self.is(';') {
            self.emit(Op::Const("1".into()));
        } else {
            let f = self.expression()?;
            if f & EX_VOID != 0 {
                self.error("second expression is void");
            }
        }
        self.expect(';')?;
        let body = self.label();
        self.emit(Op::JumpNonZero(body));
        self.emit(Op::Jump(brk));
        let saved_continue = self.continue_label;
        let cont = self.label();
        self.continue_label = Some(cont);
        self.emit(Op::Label(cont));
        if !self.is(')') {
            let f = self.expression()?;
            if f & EX_VOID != 0 {
                self.error("third expression is void");
            }
            self.emit(Op::Pop);
        }
        self.expect(')')?;
        self.emit(Op::Jump(cond));
        self.emit(Op::Label(body));
        self.skip_newlines();
        let quit = self.statement()?;
        self.emit(Op::Jump(cont));
        self.emit(Op::Label(brk));
        self.break_label = saved_break;
        self.continue_label = saved_continue;
        Ok(quit)
    }

    fn define_list(&mut self, autos: bool) -> Parse<Vec<Local>> {
        let mut list = Vec::new();
        loop {
            let by_ref = if self.is('*') || self.is('&') {
                self.advance();
                true
            } else {
                false
            };
            let Some(name) = self.keyword().map(str::to_string) else {
                return self.syntax_error();
            };
            self.advance();
            let array = if self.is('[') {
                self.advance();
                self.expect(']')?;
                true
            } else {
                if by_ref {
                    return self.syntax_error();
                }
                false
            };
            let _ = autos;
            let index = if array {
                self.syms.array(&name)
            } else {
                self.syms.var(&name)
            };
            list.push(Local {
                index,
                array,
                by_ref,
            });
            if self.is(',') {
                self.advance();
            } else {
                return Ok(list);
            }
        }
    }

    fn function(&mut self) -> Parse<()> {
        self.advance();
        let mut void = false;
        if self.keyword() == Some("void") {
            void = true;
            self.advance();
        }
        let Some(name) = self.keyword().map(str::to_string) else {
            return self.syntax_error();
        };
        self.advance();
        self.expect('(')?;
        let params = if self.is(')') {
            Vec::new()
        } else {
            self.define_list(false)?
        };
        self.expect(')')?;
        self.skip_newlines();
        self.expect('{')?;
        self.skip_newlines();
        let autos = if self.keyword() == Some("auto") {
            self.advance();
            let a = self.define_list(true)?;
            if matches!(self.tok.tok, Tok::Newline | Tok::Punct(';')) {
                self.advance();
            } else {
                return self.syntax_error();
            }
            a
        } else {
            Vec::new()
        };
        let index = self.syms.func(&name);
        if let Some(f) = self.syms.functions.get_mut(index - 1) {
            f.void = void;
        }
        let saved_code = std::mem::take(&mut self.code);
        let saved_label = self.next_label;
        self.next_label = 1;
        self.in_function = Some(index);
        let result = self.statement_list();
        let quit = match result {
            Ok(q) => q,
            Err(e) => {
                self.code = saved_code;
                return Err(e);
            }
        };
        if quit {
            self.code = saved_code;
            return Ok(());
        }
        self.expect('}')?;
        self.emit(Op::Const("0".into()));
        self.emit(Op::Return);
        let code = std::mem::replace(&mut self.code, saved_code);
        self.next_label = saved_label;
        self.in_function = None;
        if !self.item_error
            && let Some(f) = self.syms.functions.get_mut(index - 1)
        {
            f.defined = true;
            f.params = params;
            f.autos = autos;
            f.code = code;
        }
        if matches!(self.tok.tok, Tok::Newline) {
            self.advance();
        }
        Ok(())
    }

    /// An expression; returns bc.y's flags.
    fn expression(&mut self) -> Parse<u32> {
        self.binary(1)
    }

    fn precedence(tok: &Tok) -> Option<(u32, bool)> {
        Some(match tok {
            Tok::Or => (1, false),
            Tok::And => (2, false),
            Tok::Rel(_) => (4, false),
            Tok::Punct('+' | '-') => (6, false),
            Tok::Punct('*' | '/' | '%') => (7, false),
            Tok::Punct('^') => (8, true),
            _ => return None,
        })
    }

    fn binary(&mut self, min: u32) -> Parse<u32> {
        let mut flags = self.unary()?;
        while let Some((prec, right)) = Self::precedence(&self.tok.tok) {
            if prec < min {
                break;
            }
            let op = self.tok.tok.clone();
            self.advance();
            let next = if right { prec } else { prec + 1 };
            match op {
                Tok::And => {
                    let l = self.label();
                    self.emit(Op::Dup);
                    self.emit(Op::JumpZero(l));
                    self.emit(Op::Pop);
                    let f2 = self.binary(next)?;
                    self.emit(Op::Dup);
                    self.emit(Op::JumpZero(l));
                    self.emit(Op::Pop);
                    self.emit(Op::Const("1".into()));
                    self.emit(Op::Label(l));
                    flags = (flags | f2) & !EX_PAREN;
                }
                Tok::Or => {
                    let l = self.label();
                    self.emit(Op::JumpNonZero(l));
                    let f2 = self.binary(next)?;
                    let t = self.label();
                    self.emit(Op::JumpNonZero(l));
                    self.emit(Op::Const("0".into()));
                    self.emit(Op::Jump(t));
                    self.emit(Op::Label(l));
                    self.emit(Op::Const("1".into()));
                    self.emit(Op::Label(t));
                    flags = (flags | f2) & !EX_PAREN;
                }
                Tok::Rel(r) => {
                    let f2 = self.binary(next)?;
                    if (flags | f2) & EX_VOID != 0 {
                        self.error("void expression with comparison");
                    }
                    self.emit(Op::Rel(r));
                    flags = EX_REG | EX_COMP;
                }
                Tok::Punct(c) => {
                    let f2 = self.binary(next)?;
                    if (flags | f2) & EX_VOID != 0 {
                        self.error(&format!("void expression with {c}"));
                    }
                    self.emit(Op::Bin(c));
                    flags = (flags | f2) & !EX_PAREN;
                }
                _ => break,
            }
        }
        Ok(flags)
    }

    fn unary(&mut self) -> Parse<u32> {
        match self.tok.tok.clone() {
            Tok::Not => {
                self.advance();
                // `!` binds looser than comparisons: `!a < b` is `!(a < b)`.
                let f = self.binary(4)?;
                self.emit(Op::Not);
                Ok(f & !EX_PAREN)
            }
            Tok::Punct('-') => {
                self.advance();
                let f = self.unary_operand()?;
                self.emit(Op::Neg);
                Ok(f & !EX_PAREN)
            }
            _ => self.postfix(),
        }
    }

    /// The operand of unary minus: tighter than `^`, so `-2^2` is 4.
    fn unary_operand(&mut self) -> Parse<u32> {
        if self.is('-') {
            return self.unary();
        }
        if self.tok.tok == Tok::Not {
            return self.unary();
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Parse<u32> {
        if let Tok::Incr(inc) = self.tok.tok {
            self.advance();
            let target = self.named()?;
            match target {
                Named::Var(i) => {
                    self.emit(Op::IncVar(i, inc));
                    self.emit(Op::Load(i));
                }
                Named::Elem(a) => {
                    self.emit(Op::Dup);
                    self.emit(Op::IncElem(a, inc));
                    self.emit(Op::LoadElem(a));
                }
            }
            return Ok(EX_REG);
        }
        self.primary()
    }

    /// A variable, an array element (its index code emitted) or a
    /// special variable.
    fn named(&mut self) -> Parse<Named> {
        let Some(name) = self.keyword().map(str::to_string) else {
            return self.syntax_error();
        };
        if is_reserved(&name)
            && !matches!(
                name.as_str(),
                "ibase" | "obase" | "scale" | "last" | "history"
            )
        {
            return self.syntax_error();
        }
        self.advance();
        if self.is('[')
            && !matches!(
                name.as_str(),
                "ibase" | "obase" | "scale" | "last" | "history"
            )
        {
            self.advance();
            let f = self.expression()?;
            if f & EX_VOID != 0 {
                self.error("void expression as subscript");
            }
            self.expect(']')?;
            return Ok(Named::Elem(self.syms.array(&name)));
        }
        Ok(Named::Var(self.syms.var(&name)))
    }

    fn primary(&mut self) -> Parse<u32> {
        match self.tok.tok.clone() {
            Tok::Number(n) => {
                self.advance();
                self.emit(Op::Const(n));
                Ok(EX_REG)
            }
            Tok::Punct('(') => {
                self.advance();
                let f = self.expression()?;
                if f & EX_VOID != 0 {
                    self.error("void expression in parenthesis");
                }
                self.expect(')')?;
                Ok(f | EX_REG | EX_PAREN)
            }
            Tok::Name(name) => {
                let builtin = match name.as_str() {
                    "length" => Some('L'),
                    "sqrt" => Some('R'),
                    "read" => Some('I'),
                    "random" => Some('X'),
                    "scale" => Some('S'),
                    _ => None,
                };
                if let Some(b) = builtin {
                    // `scale` is a variable unless called.
                    if b != 'S' || self.peek_is_call() {
                        self.advance();
                        self.expect('(')?;
                        if b == 'I' || b == 'X' {
                            self.expect(')')?;
                        } else {
                            let f = self.expression()?;
                            if f & EX_VOID != 0 {
                                self.error("void expression in function");
                            }
                            self.expect(')')?;
                        }
                        self.emit(Op::Builtin(b));
                        return Ok(EX_REG);
                    }
                }
                if !is_reserved(&name) && self.peek_is_call() {
                    return self.call(&name);
                }
                let target = self.named()?;
                self.after_named(target)
            }
            _ => self.syntax_error(),
        }
    }

    /// Whether the name now read is followed by `(`.
    fn peek_is_call(&self) -> bool {
        self.lex
            .rest()
            .trim_start_matches([' ', '\t'])
            .starts_with('(')
    }

    fn call(&mut self, name: &str) -> Parse<u32> {
        self.advance();
        self.expect('(')?;
        let mut kinds = Vec::new();
        if !self.is(')') {
            loop {
                // `name[]` passes a whole array.
                if let Some(n) = self.keyword().map(str::to_string)
                    && !is_reserved(&n)
                    && self.lex.rest().trim_start().starts_with("[]")
                {
                    self.advance();
                    self.expect('[')?;
                    self.expect(']')?;
                    let a = self.syms.array(&n);
                    self.emit(Op::ArrayArg(a));
                    kinds.push(true);
                } else {
                    let f = self.expression()?;
                    if f & EX_VOID != 0 {
                        self.error("void argument");
                    }
                    kinds.push(false);
                }
                if self.is(',') {
                    self.advance();
                } else {
                    break;
                }
            }
        }
        self.expect(')')?;
        let f = self.syms.func(name);
        let void = self.syms.functions.get(f - 1).is_some_and(|x| x.void);
        self.emit(Op::Call(f, kinds));
        Ok(if void { EX_VOID } else { EX_REG })
    }

    /// After a named expression: an assignment, a postfix `++`, or a load.
    fn after_named(&mut self, target: Named) -> Parse<u32> {
        match self.tok.tok.clone() {
            Tok::Assign(op) => {
                self.advance();
                if let Some(o) = op {
                    match target {
                        Named::Var(i) => self.emit(Op::Load(i)),
                        Named::Elem(a) => {
                            self.emit(Op::Dup);
                            self.emit(Op::LoadElem(a));
                        }
                    }
                    let f = self.binary(5)?;
                    if f & EX_VOID != 0 {
                        self.error("Assignment of a void expression");
                    }
                    self.emit(Op::Bin(o));
                } else {
                    let f = self.binary(5)?;
                    if f & EX_VOID != 0 {
                        self.error("Assignment of a void expression");
                    }
                }
                match target {
                    Named::Var(i) => self.emit(Op::Store(i)),
                    Named::Elem(a) => self.emit(Op::StoreElem(a)),
                }
                Ok(EX_ASSGN)
            }
            Tok::Incr(inc) => {
                self.advance();
                match target {
                    Named::Var(i) => {
                        self.emit(Op::Load(i));
                        self.emit(Op::IncVar(i, inc));
                    }
                    Named::Elem(a) => {
                        self.emit(Op::Dup);
                        self.emit(Op::LoadElem(a));
                        self.emit(Op::Swap);
                        self.emit(Op::IncElem(a, inc));
                    }
                }
                Ok(EX_REG)
            }
            _ => {
                match target {
                    Named::Var(i) => self.emit(Op::Load(i)),
                    Named::Elem(a) => self.emit(Op::LoadElem(a)),
                }
                Ok(EX_REG)
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Named {
    Var(usize),
    Elem(usize),
}

fn is_reserved(name: &str) -> bool {
    matches!(
        name,
        "auto"
            | "break"
            | "continue"
            | "define"
            | "else"
            | "for"
            | "halt"
            | "ibase"
            | "if"
            | "last"
            | "length"
            | "limits"
            | "obase"
            | "print"
            | "quit"
            | "read"
            | "return"
            | "scale"
            | "sqrt"
            | "warranty"
            | "while"
            | "void"
            | "random"
            | "history"
    )
}
