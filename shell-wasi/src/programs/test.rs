//! `test EXPR` and `[ EXPR ]`, also used by `[[ ]]` for its operators.
//! brush-parser's test grammar builds the expression; evaluation is ours.

use brush_parser::ast::{BinaryPredicate, TestExpr, UnaryPredicate};

use super::Process;
use crate::host::{Host, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG};

/// What file and variable tests look at.
pub(crate) struct TestContext<'a> {
    pub(crate) cwd: &'a str,
    pub(crate) host: &'a dyn Host,
    /// `-v NAME`.
    pub(crate) is_set: &'a dyn Fn(&str) -> bool,
    /// `-R NAME`.
    pub(crate) is_nameref: &'a dyn Fn(&str) -> bool,
    /// `-o OPTION`.
    pub(crate) option_on: &'a dyn Fn(&str) -> bool,
}

/// For programs, which know no shell variables or options.
fn never(_: &str) -> bool {
    false
}

pub(crate) fn test(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv.get(1..).unwrap_or_default())
}

pub(crate) fn bracket(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = argv.get(1..).unwrap_or_default();
    match args.split_last() {
        Some((last, inner)) if last == "]" => run(p, inner),
        _ => {
            p.error("missing `]'");
            2
        }
    }
}

fn run(p: &Process<'_>, args: &[String]) -> i32 {
    let env = p.env;
    let is_set = |name: &str| env.iter().any(|(k, _)| k == name);
    let ctx = TestContext {
        cwd: p.cwd,
        host: p.host.as_ref(),
        is_set: &is_set,
        is_nameref: &never,
        option_on: &never,
    };
    match evaluate(args, &ctx) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(msg) => {
            p.error(&msg);
            2
        }
    }
}

/// Parses and evaluates test arguments; `Err` is bash's message.
pub(crate) fn evaluate(args: &[String], ctx: &TestContext<'_>) -> Result<bool, String> {
    let expr = brush_parser::test_command::parse(args).map_err(|_| parse_error_message(args))?;
    eval(&expr, ctx)
}

/// bash's wording for malformed test expressions, by argument count.
fn parse_error_message(args: &[String]) -> String {
    match args {
        [op, _] => format!("{op}: unary operator expected"),
        [_, op, _] => format!("{op}: binary operator expected"),
        _ => "too many arguments".to_string(),
    }
}

pub(crate) fn eval(expr: &TestExpr, ctx: &TestContext<'_>) -> Result<bool, String> {
    Ok(match expr {
        TestExpr::False => false,
        TestExpr::Literal(s) => !s.is_empty(),
        TestExpr::And(a, b) => eval(a, ctx)? && eval(b, ctx)?,
        TestExpr::Or(a, b) => eval(a, ctx)? || eval(b, ctx)?,
        TestExpr::Not(e) => !eval(e, ctx)?,
        TestExpr::Parenthesized(e) => eval(e, ctx)?,
        TestExpr::UnaryTest(op, operand) => unary(op, operand, ctx),
        TestExpr::BinaryTest(op, l, r) => binary(op, l, r, ctx)?,
    })
}

/// `-f x`, `-z s`, ...
pub(crate) fn unary(op: &UnaryPredicate, operand: &str, ctx: &TestContext<'_>) -> bool {
    use UnaryPredicate as U;
    match op {
        U::StringHasZeroLength => return operand.is_empty(),
        U::StringHasNonZeroLength => return !operand.is_empty(),
        U::ShellVariableIsSetAndAssigned => return (ctx.is_set)(operand),
        U::ShellVariableIsSetAndNameRef => return (ctx.is_nameref)(operand),
        U::ShellOptionEnabled => return (ctx.option_on)(operand),
        U::FdIsOpenTerminal => return false,
        _ => {}
    }
    if operand.is_empty() {
        return false;
    }
    let path = crate::interp::normalize(ctx.cwd, operand);
    let follow = !matches!(op, U::FileExistsAndIsSymlink);
    let Ok(mode) = ctx.host.get_mode(&path, follow) else {
        return false;
    };
    let kind = mode & S_IFMT;
    let may = |want: u32| ctx.host.access(&path, want).is_ok();
    match op {
        U::FileExists => true,
        U::FileExistsAndOwnedByEffectiveGroupId | U::FileExistsAndOwnedByEffectiveUserId => {
            ctx.host.get_owner(&path, follow) == Ok(crate::host::SANDBOX_UID)
        }
        U::FileExistsAndIsDir => kind == S_IFDIR,
        U::FileExistsAndIsRegularFile => kind == S_IFREG,
        U::FileExistsAndIsSymlink => kind == S_IFLNK,
        U::FileExistsAndIsCharSpecialFile => kind == crate::host::S_IFCHR,
        U::FileExistsAndIsReadable => may(4),
        U::FileExistsAndIsWritable => may(2),
        U::FileExistsAndIsExecutable => may(1),
        U::FileExistsAndIsNotZeroLength => {
            std::fs::metadata(crate::interp::resolve_in(ctx.cwd, operand))
                .is_ok_and(|m| m.len() > 0)
        }
        U::FileExistsAndIsSetuid => mode & 0o4000 != 0,
        U::FileExistsAndIsSetgid => mode & 0o2000 != 0,
        U::FileExistsAndHasStickyBit => mode & 0o1000 != 0,
        _ => false,
    }
}

/// `a = b`, `1 -lt 2`, `f -nt g`, ...
pub(crate) fn binary(
    op: &BinaryPredicate,
    l: &str,
    r: &str,
    ctx: &TestContext<'_>,
) -> Result<bool, String> {
    use BinaryPredicate as B;
    let int = |s: &str| -> Result<i64, String> {
        s.trim()
            .parse::<i64>()
            .map_err(|_| format!("{s}: integer expression expected"))
    };
    Ok(match op {
        B::StringExactlyMatchesString | B::StringExactlyMatchesPattern => l == r,
        B::StringDoesNotExactlyMatchString | B::StringDoesNotExactlyMatchPattern => l != r,
        B::LeftSortsBeforeRight => l < r,
        B::LeftSortsAfterRight => l > r,
        B::ArithmeticEqualTo => int(l)? == int(r)?,
        B::ArithmeticNotEqualTo => int(l)? != int(r)?,
        B::ArithmeticLessThan => int(l)? < int(r)?,
        B::ArithmeticLessThanOrEqualTo => int(l)? <= int(r)?,
        B::ArithmeticGreaterThan => int(l)? > int(r)?,
        B::ArithmeticGreaterThanOrEqualTo => int(l)? >= int(r)?,
        B::LeftFileIsNewerOrExistsWhenRightDoesNot => match (mtime(ctx, l), mtime(ctx, r)) {
            (Some(a), Some(b)) => a > b,
            (Some(_), None) => true,
            _ => false,
        },
        B::LeftFileIsOlderOrDoesNotExistWhenRightDoes => match (mtime(ctx, l), mtime(ctx, r)) {
            (Some(a), Some(b)) => a < b,
            (None, Some(_)) => true,
            _ => false,
        },
        B::FilesReferToSameDeviceAndInodeNumbers => {
            let canon = |s: &str| std::fs::canonicalize(crate::interp::resolve_in(ctx.cwd, s)).ok();
            canon(l).is_some() && canon(l) == canon(r)
        }
        B::StringMatchesRegex | B::StringContainsSubstring => {
            return Err(format!("{r}: regular expressions are not supported yet"));
        }
    })
}

fn mtime(ctx: &TestContext<'_>, name: &str) -> Option<std::time::SystemTime> {
    std::fs::metadata(crate::interp::resolve_in(ctx.cwd, name))
        .and_then(|m| m.modified())
        .ok()
}
