//! `declare`, `typeset` and `local`: attributes, values and the listings
//! `declare -p`, `declare -f` and `local -p` print.

use crate::errors::{ShellError, Unwind};
use crate::interp::Shell;
use crate::interp::vars::{Case, Value, Var, is_name, split_subscript};
use crate::programs::quoting::{declare_quote, double_quote};
use crate::streams::Io;

/// The letters `declare` accepts after `-` or `+`.
const FLAGS: &str = "aAfFgilnprtuxcI";

/// Parsed options: what to add (`-x`) and remove (`+x`).
#[derive(Default)]
struct Opts {
    on: String,
    off: String,
}

impl Opts {
    fn has(&self, c: char) -> bool {
        self.on.contains(c)
    }
}

/// One `declare` operand.
struct Operand<'a> {
    arg: &'a str,
    name: &'a str,
    subscript: Option<&'a str>,
    value: Option<&'a str>,
    append: bool,
    /// Written as `name=(...)` in the script (not quoted): always an array.
    compound: bool,
}

fn parse_operand(arg: &str, compound: bool) -> Operand<'_> {
    let (lhs, value) = match arg.split_once('=') {
        Some((l, v)) => (l, Some(v)),
        None => (arg, None),
    };
    let (lhs, append) = match lhs.strip_suffix('+') {
        Some(l) if value.is_some() => (l, true),
        _ => (lhs, false),
    };
    let (name, subscript) = match split_subscript(lhs) {
        Some((n, s)) => (n, Some(s)),
        None => (lhs, None),
    };
    Operand {
        arg,
        name,
        subscript,
        value,
        append,
        compound: compound && value.is_some_and(|v| v.starts_with('(')),
    }
}

/// Splits options from operands; `Err` is the bad option.
fn parse_args(args: &[String]) -> Result<(Opts, usize), String> {
    let mut opts = Opts::default();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if arg == "--" {
            return Ok((opts, i + 1));
        }
        let Some(sign) = arg.chars().next().filter(|c| *c == '-' || *c == '+') else {
            break;
        };
        if arg.len() < 2 {
            break;
        }
        for c in arg.chars().skip(1) {
            if !FLAGS.contains(c) {
                return Err(format!("{sign}{c}"));
            }
            if sign == '-' {
                &mut opts.on
            } else {
                &mut opts.off
            }
            .push(c);
        }
        i += 1;
    }
    Ok((opts, i))
}

pub(crate) fn declare(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let builtin = argv.first().map_or("declare", String::as_str).to_string();
    run(shell, io, argv, &builtin)
}

pub(crate) fn local(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    if shell.functions == 0 {
        shell.report(io, "local: can only be used in a function");
        return Ok(1);
    }
    // `local -`: the function's `set` options are restored when it returns.
    if argv.iter().skip(1).any(|a| a == "-") {
        if let Some(slot) = shell.local_opts.last_mut()
            && slot.is_none()
        {
            *slot = Some(shell.opts);
        }
        let rest: Vec<String> = argv.iter().filter(|a| *a != "-").cloned().collect();
        if rest.len() == 1 {
            return Ok(0);
        }
        return run(shell, io, &rest, "local");
    }
    run(shell, io, argv, "local")
}

/// `export [-fnp] [name[=value]...]`: `declare -x` on the variables as
/// they are seen (locals included).
pub(crate) fn export(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    with_options(shell, io, argv, "export", "fnp", 'x')
}

/// `readonly [-aAfp] [name[=value]...]`: `declare -r`, never local.
pub(crate) fn readonly(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    with_options(shell, io, argv, "readonly", "aAfp", 'r')
}

/// `export` and `readonly`: their own few options, translated in place
/// (`export -n` is `+x`), and the attribute they stand for implied.
fn with_options(
    shell: &mut Shell,
    io: &Io,
    argv: &[String],
    builtin: &str,
    allowed: &str,
    attribute: char,
) -> Result<i32, Unwind> {
    let mut translated = argv.to_vec();
    for arg in translated.iter_mut().skip(1) {
        if arg == "--" || !arg.starts_with('-') || arg.len() < 2 {
            break;
        }
        if let Some(bad) = arg.chars().skip(1).find(|c| !allowed.contains(*c)) {
            shell.report(io, &format!("{builtin}: -{bad}: invalid option"));
            io.err_line(&format!(
                "{builtin}: usage: {builtin} [-{allowed}] [name[=value] ...] or {builtin} -p"
            ));
            return Ok(2);
        }
        if attribute == 'x' && arg.contains('n') {
            *arg = "+x".to_string();
        }
    }
    run_with(shell, io, &translated, builtin, attribute)
}

fn run(shell: &mut Shell, io: &Io, argv: &[String], builtin: &str) -> Result<i32, Unwind> {
    run_with(shell, io, argv, builtin, ' ')
}

fn run_with(
    shell: &mut Shell,
    io: &Io,
    argv: &[String],
    builtin: &str,
    implied: char,
) -> Result<i32, Unwind> {
    let compound = std::mem::take(&mut shell.compound_args);
    let args = argv.get(1..).unwrap_or_default();
    let (mut opts, first) = match parse_args(args) {
        Ok(parsed) => parsed,
        Err(bad) => {
            shell.report(io, &format!("{builtin}: {bad}: invalid option"));
            io.err_line(&format!(
                "{builtin}: usage: {builtin} [-aAfFgiIlnrtux] [name[=value] ...] or {builtin} -p [-aAfFilnrtux] [name ...]"
            ));
            return Ok(2);
        }
    };
    if implied != ' ' && !opts.off.contains(implied) {
        opts.on.push(implied);
    }
    let operands: Vec<Operand> = args
        .iter()
        .enumerate()
        .skip(first)
        .map(|(i, a)| parse_operand(a, compound.contains(&(i + 1))))
        .collect();
    if opts.has('f') || opts.has('F') {
        return Ok(functions(shell, io, &opts, &operands));
    }
    if operands.is_empty() {
        list(shell, io, &opts, builtin);
        return Ok(0);
    }
    if opts.has('p') {
        return Ok(print_named(shell, io, &operands, builtin));
    }
    let make_local = builtin == "local" || (shell.functions > 0 && !opts.has('g'));
    let mut status = 0;
    for op in &operands {
        let result = if implied != ' ' {
            declare_one(shell, io, &opts, op, builtin, false)
        } else if !make_local && shell.functions > 0 {
            declare_global(shell, io, &opts, op, builtin)
        } else {
            declare_one(shell, io, &opts, op, builtin, make_local)
        };
        match result {
            Ok(0) => {}
            Ok(s) => status = s,
            Err(err) => {
                shell.report(io, &format!("{builtin}: {err}"));
                status = 1;
            }
        }
    }
    Ok(status)
}

/// `declare -g` inside a function: the operand works on the global
/// variable even when a local shadows it.
fn declare_global(
    shell: &mut Shell,
    io: &Io,
    opts: &Opts,
    op: &Operand,
    builtin: &str,
) -> Result<i32, ShellError> {
    let mut vars = std::mem::take(&mut shell.vars);
    let result = vars.with_global(op.name, |v| {
        std::mem::swap(v, &mut shell.vars);
        let r = declare_one(shell, io, opts, op, builtin, false);
        std::mem::swap(v, &mut shell.vars);
        r
    });
    shell.vars = vars;
    result
}

/// Declares one operand: attributes, then the value.
fn declare_one(
    shell: &mut Shell,
    io: &Io,
    opts: &Opts,
    op: &Operand,
    builtin: &str,
    make_local: bool,
) -> Result<i32, ShellError> {
    if !is_name(op.name) {
        shell.report(
            io,
            &format!("{builtin}: `{}': not a valid identifier", op.arg),
        );
        return Ok(1);
    }
    if let Some(status) = refuse_element(shell, io, op, builtin) {
        return Ok(status);
    }
    if make_local {
        shell.vars.make_local(op.name);
    }
    let arrays = opts.has('a') || opts.has('A');
    if opts.has('n') && !arrays {
        return nameref(shell, io, opts, op, builtin);
    }
    if opts.off.contains('n') {
        shell.vars.raw_mut(op.name).nameref = false;
    }
    if let Some(status) = refuse_change(shell, io, opts, op, builtin) {
        return Ok(status);
    }
    if let Some(status) = convert(shell, io, opts, op.name, builtin)? {
        return Ok(status);
    }
    set_value_attrs(shell, opts, op.name);
    // `declare 'a[5]'` declares an array.
    if op.subscript.is_some()
        && op.value.is_none()
        && let Some(var) = shell.vars.attrs_mut(op.name)
        && var.valueless
        && matches!(var.value, Value::Scalar(_))
    {
        var.value = Value::Indexed(Default::default());
    }
    if op.value.is_some() {
        assign(shell, io, op)?;
    }
    if let Some(var) = shell.vars.attrs_mut(op.name) {
        apply_late_flags(var, opts);
    }
    Ok(0)
}

/// `export` and `readonly` take whole variables: not `a[0]=x`, and a
/// nameref to an element is left alone by `export` and names no
/// identifier for `readonly`.
fn refuse_element(shell: &Shell, io: &Io, op: &Operand, builtin: &str) -> Option<i32> {
    if builtin != "export" && builtin != "readonly" {
        return None;
    }
    if let Some(sub) = op.subscript {
        let name = op.name;
        shell.report(
            io,
            &format!("{builtin}: `{name}[{sub}]': not a valid identifier"),
        );
        return Some(1);
    }
    if op.value.is_some() || !shell.vars.refers_to_element(op.name) {
        return None;
    }
    if builtin == "export" {
        return Some(0);
    }
    let target = shell.vars.resolve(op.name);
    shell.report(
        io,
        &format!("{builtin}: `{target}': not a valid identifier"),
    );
    Some(1)
}

/// Readonly variables keep their value and attributes; arrays cannot be
/// made scalars.
fn refuse_change(shell: &Shell, io: &Io, opts: &Opts, op: &Operand, builtin: &str) -> Option<i32> {
    let var = shell.vars.get(op.name)?;
    let off_array = matches!(var.value, Value::Indexed(_) | Value::Assoc(_))
        && (opts.off.contains('a') || opts.off.contains('A'));
    if off_array {
        shell.report(
            io,
            &format!(
                "{builtin}: {}: cannot destroy array variables in this way",
                op.name
            ),
        );
        return Some(1);
    }
    let changes = op.value.is_some() || opts.off.contains('r') || !opts.off.is_empty();
    if var.readonly && changes {
        shell.report(io, &format!("{builtin}: {}: readonly variable", op.name));
        return Some(1);
    }
    None
}

/// `-a`/`-A` on an existing variable: a scalar becomes element 0; an
/// array cannot change kind.
fn convert(
    shell: &mut Shell,
    io: &Io,
    opts: &Opts,
    name: &str,
    builtin: &str,
) -> Result<Option<i32>, ShellError> {
    let want_assoc = opts.has('A');
    if !want_assoc && !opts.has('a') {
        return Ok(None);
    }
    let Some(var) = shell.vars.attrs_mut(name) else {
        return Ok(None);
    };
    let message = match (&var.value, want_assoc) {
        (Value::Indexed(_), true) => Some("cannot convert indexed to associative array"),
        (Value::Assoc(_), false) => Some("cannot convert associative to indexed array"),
        (Value::Scalar(s), _) => {
            let first = (!var.valueless).then(|| s.clone());
            var.value = match (want_assoc, first) {
                (true, Some(s)) => Value::Assoc([("0".to_string(), s)].into()),
                (true, None) => Value::Assoc(Default::default()),
                (false, Some(s)) => Value::Indexed([(0, s)].into()),
                (false, None) => Value::Indexed(Default::default()),
            };
            None
        }
        _ => None,
    };
    Ok(message.map(|m| {
        shell.report(io, &format!("{builtin}: {name}: {m}"));
        1
    }))
}

/// The attributes that change how the value is stored: set before it.
fn set_value_attrs(shell: &mut Shell, opts: &Opts, name: &str) {
    let Some(var) = shell.vars.attrs_mut(name) else {
        return;
    };
    if opts.has('i') {
        var.integer = true;
    }
    if opts.off.contains('i') {
        var.integer = false;
    }
    for (c, case) in [
        ('u', Case::Upper),
        ('l', Case::Lower),
        ('c', Case::Capitalize),
    ] {
        if opts.has(c) {
            var.case = case;
        }
        if opts.off.contains(c) && var.case == case {
            var.case = Case::Keep;
        }
    }
}

/// The attributes that apply after the value: `-r` must not refuse it.
fn apply_late_flags(var: &mut Var, opts: &Opts) {
    if opts.has('x') {
        var.exported = true;
    }
    if opts.off.contains('x') {
        var.exported = false;
    }
    if opts.has('t') {
        var.trace = true;
    }
    if opts.off.contains('t') {
        var.trace = false;
    }
    if opts.has('r') {
        var.readonly = true;
    }
}

/// `declare -n ref[=target]`.
fn nameref(
    shell: &mut Shell,
    io: &Io,
    opts: &Opts,
    op: &Operand,
    builtin: &str,
) -> Result<i32, ShellError> {
    if let Err(msg) = shell.vars.set_nameref(op.name, op.value) {
        shell.report(io, &format!("{builtin}: {msg}"));
        return Ok(1);
    }
    let var = shell.vars.raw_mut(op.name);
    apply_late_flags(var, opts);
    Ok(0)
}

/// The value part of `name=value`, `name+=value`, `name[i]=value` and
/// `name=(...)`.
fn assign(shell: &mut Shell, io: &Io, op: &Operand) -> Result<(), ShellError> {
    let value = op.value.unwrap_or("");
    if let Some(sub) = op.subscript {
        return shell.assign_element_text(op.name, sub, value, op.append, io);
    }
    let is_array = matches!(
        shell.vars.get(op.name).map(|v| &v.value),
        Some(Value::Indexed(_) | Value::Assoc(_))
    );
    if op.compound || (is_array && value.starts_with('(') && value.ends_with(')')) {
        return shell.assign_compound_text(op.name, value, op.append, io);
    }
    shell.assign_scalar_text(op.name, value.to_string(), op.append, io)
}

/// `declare` with no names: every variable (`-p` or attribute filters
/// as declarations; bare, as `set` lists them, then the functions).
fn list(shell: &Shell, io: &Io, opts: &Opts, builtin: &str) {
    let mut out = String::new();
    let locals = builtin == "local";
    let names = if locals {
        shell.vars.local_names()
    } else {
        shell.vars.names()
    };
    let filter: String = opts
        .on
        .chars()
        .filter(|c| "aAinrtxulc".contains(*c))
        .collect();
    let bare = !opts.has('p') && filter.is_empty() && !locals;
    let mut names = names;
    names.sort();
    for name in names {
        let Some(var) = shell.vars.get_raw(&name) else {
            continue;
        };
        if !filter.chars().all(|c| var.flags().contains(c)) {
            continue;
        }
        if bare {
            if !var.valueless {
                out.push_str(&set_line(&name, var));
            }
        } else {
            out.push_str(&declaration(&name, var));
        }
    }
    if bare {
        let mut funcs: Vec<&String> = shell.funcs.keys().collect();
        funcs.sort();
        for f in funcs {
            if let Some(func) = shell.funcs.get(f) {
                out.push_str(&format!("{}\n", func.def));
            }
        }
    }
    io.out(out.as_bytes());
}

/// `declare -p name...`.
fn print_named(shell: &Shell, io: &Io, operands: &[Operand], builtin: &str) -> i32 {
    let mut out = String::new();
    let mut status = 0;
    for op in operands {
        match shell.vars.get_raw(op.arg) {
            Some(var) => out.push_str(&declaration(op.arg, var)),
            None => {
                shell.report(io, &format!("{builtin}: {}: not found", op.arg));
                status = 1;
            }
        }
    }
    io.out(out.as_bytes());
    status
}

/// `declare -f [name...]` (definitions) and `declare -F` (names).
fn functions(shell: &Shell, io: &Io, opts: &Opts, operands: &[Operand]) -> i32 {
    let names_only = opts.has('F');
    let mut names: Vec<String> = if operands.is_empty() {
        let mut all: Vec<String> = shell.funcs.keys().cloned().collect();
        all.sort();
        all
    } else {
        operands.iter().map(|o| o.arg.to_string()).collect()
    };
    names.dedup();
    let mut out = String::new();
    let mut status = 0;
    for name in names {
        match shell.funcs.get(&name) {
            Some(_) if names_only && (operands.is_empty() || opts.has('p')) => {
                out.push_str(&format!("declare -f {name}\n"));
            }
            Some(func) if names_only && shell.shopt_on("extdebug") => {
                out.push_str(&format!("{name} {} {}\n", func.line, func.source));
            }
            Some(_) if names_only => out.push_str(&format!("{name}\n")),
            Some(func) => out.push_str(&format!("{}\n", func.def)),
            None => status = 1,
        }
    }
    io.out(out.as_bytes());
    status
}

/// `name=value` as `set` and a bare `declare` list it.
fn set_line(name: &str, var: &Var) -> String {
    let value = match &var.value {
        Value::Scalar(s) => crate::programs::quoting::set_quote(s),
        Value::Indexed(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("[{k}]={}", declare_quote(v)))
                .collect();
            format!("({})", items.join(" "))
        }
        Value::Assoc(map) => {
            let items: String = map
                .iter()
                .map(|(k, v)| format!("[{}]={} ", assoc_key(k), declare_quote(v)))
                .collect();
            format!("({items})")
        }
    };
    format!("{name}={value}\n")
}

/// An associative key as `declare -p` writes it: bare when safe.
fn assoc_key(key: &str) -> String {
    let safe = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || "_-./:@%+,".contains(c) || !c.is_ascii());
    if safe {
        key.to_string()
    } else {
        double_quote(key)
    }
}

/// `declare -x NAME="value"` lines, as `export -p` and `declare -p` print.
pub(crate) fn declaration(name: &str, var: &Var) -> String {
    let flags = var.flags();
    let flags = if flags.is_empty() {
        "--".to_string()
    } else {
        format!("-{flags}")
    };
    if var.valueless {
        return format!("declare {flags} {name}\n");
    }
    match &var.value {
        Value::Scalar(s) => format!("declare {flags} {name}={}\n", declare_quote(s)),
        Value::Indexed(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("[{k}]={}", declare_quote(v)))
                .collect();
            format!("declare {flags} {name}=({})\n", items.join(" "))
        }
        Value::Assoc(map) => {
            // bash ends the list with a space here.
            let items: String = map
                .iter()
                .map(|(k, v)| format!("[{}]={} ", assoc_key(k), declare_quote(v)))
                .collect();
            format!("declare {flags} {name}=({items})\n")
        }
    }
}
