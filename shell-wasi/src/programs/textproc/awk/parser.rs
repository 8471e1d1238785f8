//! awk's grammar, parsed by recursive descent into the tree `eval.rs`
//! walks. Precedence, lowest first: assignment, `?:`, `||`, `&&`, `in`,
//! `~`, comparison, concatenation, additive, multiplicative, unary, `^`,
//! increment, `$`, grouping. Inside `print`, a bare `>` redirects.

use super::lexer::Tok;

#[derive(Debug, Clone)]
pub(super) enum Expr {
    Num(f64),
    Str(String),
    /// A regex literal; alone it matches against `$0`.
    Regex(String),
    Field(Box<Expr>),
    Var(String),
    Index(String, Vec<Expr>),
    /// `(a, b)` — only meaningful in `print` and before `in`.
    List(Vec<Expr>),
    Assign(Option<&'static str>, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Plus(Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Cmp(&'static str, Box<Expr>, Box<Expr>),
    Concat(Box<Expr>, Box<Expr>),
    Match(bool, Box<Expr>, Box<Expr>),
    In(Vec<Expr>, String),
    /// `++x` (true) or `x++` (false), with +1 or -1.
    Incr(bool, f64, Box<Expr>),
    Builtin(String, Vec<Expr>),
    Call(String, Vec<Expr>),
    Getline(GetlineSrc, Option<Box<Expr>>),
}

#[derive(Debug, Clone)]
pub(super) enum GetlineSrc {
    Main,
    File(Box<Expr>),
    Command(Box<Expr>),
}

#[derive(Debug, Clone)]
pub(super) enum Redirect {
    File(Expr),
    Append(Expr),
    Pipe(Expr),
}

#[derive(Debug, Clone)]
pub(super) enum Stmt {
    Expr(Expr),
    Print(Vec<Expr>, Option<Redirect>),
    Printf(Vec<Expr>, Option<Redirect>),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    While(Expr, Box<Stmt>),
    Do(Box<Stmt>, Expr),
    For(
        Option<Box<Stmt>>,
        Option<Expr>,
        Option<Box<Stmt>>,
        Box<Stmt>,
    ),
    ForIn(String, String, Box<Stmt>),
    Block(Vec<Stmt>),
    Next,
    NextFile,
    Exit(Option<Expr>),
    Return(Option<Expr>),
    Break,
    Continue,
    Delete(String, Option<Vec<Expr>>),
    Getline(Expr),
}

#[derive(Debug, Clone)]
pub(super) enum Pattern {
    Begin,
    End,
    All,
    Expr(Expr),
    Range(Expr, Expr),
}

#[derive(Debug, Clone)]
pub(super) struct Rule {
    pub(super) pattern: Pattern,
    /// `None`: print `$0`.
    pub(super) action: Option<Vec<Stmt>>,
}

#[derive(Debug, Clone)]
pub(super) struct Function {
    pub(super) params: Vec<String>,
    pub(super) body: Vec<Stmt>,
}

#[derive(Debug, Default)]
pub(super) struct Program {
    pub(super) rules: Vec<Rule>,
    pub(super) functions: std::collections::HashMap<String, Function>,
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    no_gt: bool,
    no_in: bool,
}

type PResult<T> = Result<T, String>;

pub(super) fn parse(toks: Vec<(Tok, usize)>) -> PResult<Program> {
    let mut p = Parser {
        toks,
        pos: 0,
        no_gt: false,
        no_in: false,
    };
    let mut prog = Program::default();
    loop {
        p.skip_terminators();
        if p.peek() == &Tok::Eof {
            return Ok(prog);
        }
        if p.peek() == &Tok::Keyword("function") {
            p.advance();
            let name = match p.advance() {
                Tok::Name(n) | Tok::FuncName(n) => n,
                _ => return Err(p.syntax_error()),
            };
            p.expect_op("(")?;
            let mut params = Vec::new();
            while let Tok::Name(n) = p.peek().clone() {
                p.advance();
                params.push(n);
                if p.peek() == &Tok::Op(",") {
                    p.advance();
                    p.skip_newlines();
                }
            }
            p.expect_op(")")?;
            p.skip_newlines();
            let body = p.block()?;
            prog.functions.insert(name, Function { params, body });
            continue;
        }
        let pattern = match p.peek() {
            Tok::Keyword("BEGIN") => {
                p.advance();
                Pattern::Begin
            }
            Tok::Keyword("END") => {
                p.advance();
                Pattern::End
            }
            Tok::Op("{") => Pattern::All,
            _ => {
                let first = p.expr()?;
                if p.peek() == &Tok::Op(",") {
                    p.advance();
                    p.skip_newlines();
                    Pattern::Range(first, p.expr()?)
                } else {
                    Pattern::Expr(first)
                }
            }
        };
        let action = if p.peek() == &Tok::Op("{") {
            Some(p.block()?)
        } else {
            if matches!(pattern, Pattern::Begin | Pattern::End) {
                return Err(p.syntax_error());
            }
            None
        };
        prog.rules.push(Rule { pattern, action });
    }
}

impl Parser {
    fn peek(&self) -> &Tok {
        self.toks.get(self.pos).map_or(&Tok::Eof, |t| &t.0)
    }

    fn advance(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn line(&self) -> usize {
        self.toks
            .get(self.pos)
            .or_else(|| self.toks.last())
            .map_or(1, |t| t.1)
    }

    fn syntax_error(&self) -> String {
        let near = match self.peek() {
            Tok::Num(n) => super::value::num_to_string(*n, "%.6g"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Regex(r) => format!("/{r}/"),
            Tok::Name(n) | Tok::FuncName(n) | Tok::Builtin(n) => n.clone(),
            Tok::Keyword(k) => (*k).to_string(),
            Tok::Op(o) => (*o).to_string(),
            Tok::Newline => "end of line".to_string(),
            Tok::Eof => "end of file".to_string(),
        };
        format!("line {}: syntax error at or near {near}", self.line())
    }

    fn expect_op(&mut self, op: &'static str) -> PResult<()> {
        if self.peek() == &Tok::Op(op) {
            self.advance();
            Ok(())
        } else {
            Err(self.syntax_error())
        }
    }

    fn skip_newlines(&mut self) {
        while self.peek() == &Tok::Newline {
            self.advance();
        }
    }

    fn skip_terminators(&mut self) {
        while matches!(self.peek(), Tok::Newline | Tok::Op(";")) {
            self.advance();
        }
    }

    fn block(&mut self) -> PResult<Vec<Stmt>> {
        self.expect_op("{")?;
        let mut stmts = Vec::new();
        loop {
            self.skip_terminators();
            if self.peek() == &Tok::Op("}") {
                self.advance();
                return Ok(stmts);
            }
            if self.peek() == &Tok::Eof {
                return Err(format!(
                    "line {}: missing }} near end of file",
                    self.line() + 1
                ));
            }
            stmts.push(self.statement()?);
        }
    }

    /// After a simple statement: `;`, a newline, or a following `}`.
    fn end_simple(&mut self) -> PResult<()> {
        match self.peek() {
            Tok::Op(";") | Tok::Newline => {
                self.advance();
                Ok(())
            }
            Tok::Op("}") | Tok::Eof => Ok(()),
            _ => Err(self.syntax_error()),
        }
    }

    /// A statement as the body of `if`/`while`/`for`.
    fn body(&mut self) -> PResult<Stmt> {
        self.skip_newlines();
        if self.peek() == &Tok::Op(";") {
            self.advance();
            return Ok(Stmt::Block(Vec::new()));
        }
        self.statement()
    }

    fn statement(&mut self) -> PResult<Stmt> {
        match self.peek().clone() {
            Tok::Op("{") => Ok(Stmt::Block(self.block()?)),
            Tok::Keyword("if") => {
                self.advance();
                self.expect_op("(")?;
                let cond = self.expr()?;
                self.expect_op(")")?;
                let then = self.body()?;
                // `else` may follow after newlines or a `;`.
                let save = self.pos;
                self.skip_terminators();
                if self.peek() == &Tok::Keyword("else") {
                    self.advance();
                    let other = self.body()?;
                    Ok(Stmt::If(cond, Box::new(then), Some(Box::new(other))))
                } else {
                    self.pos = save;
                    Ok(Stmt::If(cond, Box::new(then), None))
                }
            }
            Tok::Keyword("while") => {
                self.advance();
                self.expect_op("(")?;
                let cond = self.expr()?;
                self.expect_op(")")?;
                if self.peek() == &Tok::Op(";") {
                    self.advance();
                    return Ok(Stmt::While(cond, Box::new(Stmt::Block(Vec::new()))));
                }
                Ok(Stmt::While(cond, Box::new(self.body()?)))
            }
            Tok::Keyword("do") => {
                self.advance();
                let body = self.body()?;
                self.skip_terminators();
                if self.advance() != Tok::Keyword("while") {
                    return Err(self.syntax_error());
                }
                self.expect_op("(")?;
                let cond = self.expr()?;
                self.expect_op(")")?;
                self.end_simple()?;
                Ok(Stmt::Do(Box::new(body), cond))
            }
            Tok::Keyword("for") => {
                self.advance();
                self.expect_op("(")?;
                if let (
                    Tok::Name(var),
                    Some((Tok::Keyword("in"), _)),
                    Some((Tok::Name(arr), _)),
                    Some((Tok::Op(")"), _)),
                ) = (
                    self.peek().clone(),
                    self.toks.get(self.pos + 1).cloned(),
                    self.toks.get(self.pos + 2).cloned(),
                    self.toks.get(self.pos + 3).cloned(),
                ) {
                    self.pos += 4;
                    let body = self.body()?;
                    return Ok(Stmt::ForIn(var, arr, Box::new(body)));
                }
                let init = if self.peek() == &Tok::Op(";") {
                    None
                } else {
                    Some(Box::new(self.simple_statement()?))
                };
                self.expect_op(";")?;
                self.skip_newlines();
                let cond = if self.peek() == &Tok::Op(";") {
                    None
                } else {
                    Some(self.expr()?)
                };
                self.expect_op(";")?;
                self.skip_newlines();
                let step = if self.peek() == &Tok::Op(")") {
                    None
                } else {
                    Some(Box::new(self.simple_statement()?))
                };
                self.expect_op(")")?;
                if self.peek() == &Tok::Op(";") {
                    self.advance();
                    return Ok(Stmt::For(
                        init,
                        cond,
                        step,
                        Box::new(Stmt::Block(Vec::new())),
                    ));
                }
                let body = self.body()?;
                Ok(Stmt::For(init, cond, step, Box::new(body)))
            }
            Tok::Op(";") => {
                self.advance();
                Ok(Stmt::Block(Vec::new()))
            }
            _ => {
                let s = self.simple_statement()?;
                self.end_simple()?;
                Ok(s)
            }
        }
    }

    fn simple_statement(&mut self) -> PResult<Stmt> {
        match self.peek().clone() {
            Tok::Keyword("print") | Tok::Keyword("printf") => {
                let is_printf = self.advance() == Tok::Keyword("printf");
                let mut args = Vec::new();
                let old = self.no_gt;
                self.no_gt = true;
                if !matches!(
                    self.peek(),
                    Tok::Op(";" | "}" | ">" | ">>" | "|") | Tok::Newline | Tok::Eof
                ) {
                    args.push(self.expr()?);
                    while self.peek() == &Tok::Op(",") {
                        self.advance();
                        self.skip_newlines();
                        args.push(self.expr()?);
                    }
                }
                self.no_gt = old;
                if args.len() == 1
                    && let Some(Expr::List(items)) = args.first()
                {
                    args = items.clone();
                }
                let redirect = match self.peek() {
                    Tok::Op(">") => {
                        self.advance();
                        Some(Redirect::File(self.concat_level()?))
                    }
                    Tok::Op(">>") => {
                        self.advance();
                        Some(Redirect::Append(self.concat_level()?))
                    }
                    Tok::Op("|") => {
                        self.advance();
                        Some(Redirect::Pipe(self.concat_level()?))
                    }
                    _ => None,
                };
                Ok(if is_printf {
                    Stmt::Printf(args, redirect)
                } else {
                    Stmt::Print(args, redirect)
                })
            }
            Tok::Keyword("next") => {
                self.advance();
                Ok(Stmt::Next)
            }
            Tok::Keyword("nextfile") => {
                self.advance();
                Ok(Stmt::NextFile)
            }
            Tok::Keyword("break") => {
                self.advance();
                Ok(Stmt::Break)
            }
            Tok::Keyword("continue") => {
                self.advance();
                Ok(Stmt::Continue)
            }
            Tok::Keyword("exit") | Tok::Keyword("return") => {
                let is_exit = self.advance() == Tok::Keyword("exit");
                let value = if matches!(self.peek(), Tok::Op(";" | "}") | Tok::Newline | Tok::Eof) {
                    None
                } else {
                    Some(self.expr()?)
                };
                Ok(if is_exit {
                    Stmt::Exit(value)
                } else {
                    Stmt::Return(value)
                })
            }
            Tok::Keyword("delete") => {
                self.advance();
                let Tok::Name(name) = self.advance() else {
                    return Err(self.syntax_error());
                };
                if self.peek() == &Tok::Op("[") {
                    self.advance();
                    let idx = self.expr_list("]")?;
                    Ok(Stmt::Delete(name, Some(idx)))
                } else {
                    Ok(Stmt::Delete(name, None))
                }
            }
            _ => {
                let e = self.expr()?;
                if let Expr::Getline(..) = e {
                    return Ok(Stmt::Getline(e));
                }
                Ok(Stmt::Expr(e))
            }
        }
    }

    fn expr_list(&mut self, close: &'static str) -> PResult<Vec<Expr>> {
        let mut items = Vec::new();
        let (old_gt, old_in) = (self.no_gt, self.no_in);
        self.no_gt = false;
        self.no_in = false;
        self.skip_newlines();
        if self.peek() != &Tok::Op(close) {
            items.push(self.expr()?);
            while self.peek() == &Tok::Op(",") {
                self.advance();
                self.skip_newlines();
                items.push(self.expr()?);
            }
        }
        self.skip_newlines();
        self.no_gt = old_gt;
        self.no_in = old_in;
        self.expect_op(close)?;
        Ok(items)
    }

    pub(super) fn expr(&mut self) -> PResult<Expr> {
        self.ternary()
    }

    fn ternary(&mut self) -> PResult<Expr> {
        let cond = self.or()?;
        if self.peek() == &Tok::Op("?") {
            self.advance();
            self.skip_newlines();
            let a = self.ternary()?;
            self.skip_newlines();
            self.expect_op(":")?;
            self.skip_newlines();
            let b = self.ternary()?;
            return Ok(Expr::Cond(Box::new(cond), Box::new(a), Box::new(b)));
        }
        if let Tok::Op(op @ ("=" | "+=" | "-=" | "*=" | "/=" | "%=" | "^=")) = self.peek().clone()
            && is_lvalue(&cond)
        {
            self.advance();
            self.skip_newlines();
            let rhs = self.ternary()?;
            let op = match op {
                "=" => None,
                "+=" => Some("+"),
                "-=" => Some("-"),
                "*=" => Some("*"),
                "/=" => Some("/"),
                "%=" => Some("%"),
                _ => Some("^"),
            };
            return Ok(Expr::Assign(op, Box::new(cond), Box::new(rhs)));
        }
        Ok(cond)
    }

    fn or(&mut self) -> PResult<Expr> {
        let mut l = self.and()?;
        while self.peek() == &Tok::Op("||") {
            self.advance();
            self.skip_newlines();
            let r = self.and()?;
            l = Expr::Or(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn and(&mut self) -> PResult<Expr> {
        let mut l = self.in_expr()?;
        while self.peek() == &Tok::Op("&&") {
            self.advance();
            self.skip_newlines();
            let r = self.in_expr()?;
            l = Expr::And(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn in_expr(&mut self) -> PResult<Expr> {
        let mut l = self.matching()?;
        while !self.no_in && self.peek() == &Tok::Keyword("in") {
            self.advance();
            let Tok::Name(arr) = self.advance() else {
                return Err(self.syntax_error());
            };
            let keys = match l {
                Expr::List(items) => items,
                other => vec![other],
            };
            l = Expr::In(keys, arr);
        }
        Ok(l)
    }

    fn matching(&mut self) -> PResult<Expr> {
        let mut l = self.comparison()?;
        while let Tok::Op(op @ ("~" | "!~")) = self.peek().clone() {
            self.advance();
            let r = self.comparison()?;
            l = Expr::Match(op == "!~", Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn comparison(&mut self) -> PResult<Expr> {
        let l = self.concat_level()?;
        match self.peek().clone() {
            Tok::Op(op @ ("<" | "<=" | "==" | "!=" | ">=")) => {
                self.advance();
                let r = self.concat_level()?;
                Ok(Expr::Cmp(op, Box::new(l), Box::new(r)))
            }
            Tok::Op(">") if !self.no_gt => {
                self.advance();
                let r = self.concat_level()?;
                Ok(Expr::Cmp(">", Box::new(l), Box::new(r)))
            }
            _ => Ok(l),
        }
    }

    /// Concatenation, and `cmd | getline`.
    fn concat_level(&mut self) -> PResult<Expr> {
        let mut l = self.additive()?;
        loop {
            if self.peek() == &Tok::Op("|")
                && self.toks.get(self.pos + 1).map(|t| &t.0) == Some(&Tok::Keyword("getline"))
            {
                self.pos += 2;
                let target = self.getline_target()?;
                l = Expr::Getline(GetlineSrc::Command(Box::new(l)), target);
                continue;
            }
            if self.starts_operand() {
                let r = self.additive()?;
                l = Expr::Concat(Box::new(l), Box::new(r));
                continue;
            }
            return Ok(l);
        }
    }

    fn starts_operand(&self) -> bool {
        match self.peek() {
            Tok::Num(_)
            | Tok::Str(_)
            | Tok::Regex(_)
            | Tok::Name(_)
            | Tok::FuncName(_)
            | Tok::Builtin(_) => true,
            Tok::Op(op) => matches!(*op, "$" | "!" | "(" | "-" | "+" | "++" | "--"),
            Tok::Keyword(k) => *k == "getline",
            _ => false,
        }
    }

    fn additive(&mut self) -> PResult<Expr> {
        let mut l = self.multiplicative()?;
        while let Tok::Op(op @ ("+" | "-")) = self.peek().clone() {
            self.advance();
            let r = self.multiplicative()?;
            l = Expr::Binary(op, Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn multiplicative(&mut self) -> PResult<Expr> {
        let mut l = self.unary()?;
        while let Tok::Op(op @ ("*" | "/" | "%")) = self.peek().clone() {
            self.advance();
            let r = self.unary()?;
            l = Expr::Binary(op, Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn unary(&mut self) -> PResult<Expr> {
        match self.peek() {
            Tok::Op("!") => {
                self.advance();
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            Tok::Op("-") => {
                self.advance();
                Ok(Expr::Neg(Box::new(self.unary()?)))
            }
            Tok::Op("+") => {
                self.advance();
                Ok(Expr::Plus(Box::new(self.unary()?)))
            }
            _ => self.power(),
        }
    }

    fn power(&mut self) -> PResult<Expr> {
        let base = self.postfix()?;
        if self.peek() == &Tok::Op("^") {
            self.advance();
            // Right associative, and binds tighter than unary minus on its left.
            let exp = if matches!(self.peek(), Tok::Op("-" | "+" | "!")) {
                self.unary()?
            } else {
                self.power()?
            };
            return Ok(Expr::Binary("^", Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> PResult<Expr> {
        if let Tok::Op(op @ ("++" | "--")) = self.peek().clone() {
            self.advance();
            let target = self.postfix()?;
            if !is_lvalue(&target) {
                return Err(self.syntax_error());
            }
            let step = if op == "++" { 1.0 } else { -1.0 };
            return Ok(Expr::Incr(true, step, Box::new(target)));
        }
        let e = self.primary()?;
        if is_lvalue(&e)
            && let Tok::Op(op @ ("++" | "--")) = self.peek().clone()
        {
            self.advance();
            let step = if op == "++" { 1.0 } else { -1.0 };
            return Ok(Expr::Incr(false, step, Box::new(e)));
        }
        Ok(e)
    }

    fn getline_target(&mut self) -> PResult<Option<Box<Expr>>> {
        match self.peek() {
            Tok::Op("$") | Tok::Name(_) => {
                let e = self.primary()?;
                Ok(Some(Box::new(e)))
            }
            _ => Ok(None),
        }
    }

    fn primary(&mut self) -> PResult<Expr> {
        let line_err = self.syntax_error();
        match self.advance() {
            Tok::Num(n) => Ok(Expr::Num(n)),
            Tok::Str(s) => Ok(Expr::Str(s)),
            Tok::Regex(r) => Ok(Expr::Regex(r)),
            Tok::Op("$") => {
                let e = if let Tok::Op(op @ ("++" | "--")) = self.peek().clone() {
                    self.advance();
                    let target = self.primary()?;
                    let step = if op == "++" { 1.0 } else { -1.0 };
                    Expr::Incr(true, step, Box::new(target))
                } else if self.peek() == &Tok::Op("-") {
                    self.advance();
                    Expr::Neg(Box::new(self.primary()?))
                } else {
                    self.primary()?
                };
                Ok(Expr::Field(Box::new(e)))
            }
            Tok::Op("(") => {
                let items = self.expr_list(")")?;
                match items.len() {
                    0 => Err(line_err),
                    1 => Ok(items.into_iter().next().unwrap_or(Expr::Num(0.0))),
                    _ => Ok(Expr::List(items)),
                }
            }
            Tok::Op("-") => Ok(Expr::Neg(Box::new(self.unary()?))),
            Tok::Op("!") => Ok(Expr::Not(Box::new(self.unary()?))),
            Tok::Name(n) => {
                if self.peek() == &Tok::Op("[") {
                    self.advance();
                    let idx = self.expr_list("]")?;
                    Ok(Expr::Index(n, idx))
                } else {
                    Ok(Expr::Var(n))
                }
            }
            Tok::FuncName(n) => {
                self.expect_op("(")?;
                let args = self.expr_list(")")?;
                Ok(Expr::Call(n, args))
            }
            Tok::Builtin(b) => {
                if self.peek() == &Tok::Op("(") {
                    self.advance();
                    let args = self.expr_list(")")?;
                    Ok(Expr::Builtin(b, args))
                } else if b == "length" {
                    Ok(Expr::Builtin(b, Vec::new()))
                } else {
                    Err(line_err)
                }
            }
            Tok::Keyword("getline") => {
                let target = self.getline_target()?;
                if self.peek() == &Tok::Op("<") {
                    self.advance();
                    let src = self.postfix()?;
                    return Ok(Expr::Getline(GetlineSrc::File(Box::new(src)), target));
                }
                Ok(Expr::Getline(GetlineSrc::Main, target))
            }
            _ => Err(line_err),
        }
    }
}

fn is_lvalue(e: &Expr) -> bool {
    matches!(e, Expr::Var(_) | Expr::Index(..) | Expr::Field(_))
}

#[cfg(test)]
mod tests {
    use super::super::lexer::lex;
    use super::*;

    fn program(src: &str) -> PResult<Program> {
        parse(lex(src)?)
    }

    #[test]
    fn parses_common_programs() {
        for src in [
            "{ s += $3 } END { print s }",
            "NR > 1 && $2 > 10",
            "BEGIN { FS = \",\" } { a[$1]++ } END { for (k in a) print k, a[k] }",
            "function f(x) { return x * 2 } { print f($1) > \"out\" }",
            "/a/,/b/ { print; next } { printf \"%s\\n\", $0 }",
            "{ while ((getline line < \"f\") > 0) n++ }",
        ] {
            assert!(program(src).is_ok(), "{src}: {:?}", program(src).err());
        }
    }

    #[test]
    fn reports_syntax_errors() {
        assert!(program("{ print ( }").is_err());
        assert!(program("BEGIN").is_err());
    }
}
