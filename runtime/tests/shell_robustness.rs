//! Garbage in, no crash out: twenty thousand generated command strings (shell
//! syntax shuffled, truncated and nested) run in the real sandbox, and the
//! shell must answer each with an exit status and, at most, an error
//! message. A panic in the shell shows as a trap (exit 134) or Rust's
//! "panicked at" on stderr; either fails the test. The same check drives
//! the fuzz target in `runtime/fuzz/`.

mod common;

use std::time::Duration;

use ephemeral_runtime::{EXIT_TRAP, Limits};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Pieces agents' commands are made of, and the ones parsers choke on.
const TOKENS: &[&str] = &[
    "echo",
    "printf",
    "cd",
    "export",
    "x=1",
    "$x",
    "${x:-d}",
    "${x#*}",
    "${#x}",
    "${x//a/b}",
    "$((1+2))",
    "$(( x / 0 ))",
    "$(",
    ")",
    "`",
    "'",
    "\"",
    "\\",
    "|",
    "||",
    "&&",
    ";",
    "&",
    "(",
    ")",
    "{",
    "}",
    "[[",
    "]]",
    "[",
    "]",
    "if",
    "then",
    "else",
    "fi",
    "for",
    "in",
    "do",
    "done",
    "while",
    "case",
    "esac",
    ";;",
    "function",
    "f()",
    "<<EOF",
    "EOF",
    "<<<",
    ">",
    ">>",
    "2>&1",
    "<",
    "*",
    "?",
    "{1..3}",
    "{a,b}",
    "~",
    "!",
    "#",
    "\n",
    " ",
    "\t",
    "-",
    "--",
    "a",
    "ls",
    "cat",
    "-l",
    "/tmp",
    "..",
    "$@",
    "$#",
    "$?",
    "$$",
    "$!",
    "local",
    "return",
    "set -e",
    "trap",
    "eval",
    "shift",
    "read",
    "$'\\x41'",
    "${arr[@]}",
    "arr=(1 2)",
    "((",
    "))",
    "=~",
    "\u{0}",
    "é",
    "🙂",
    "exit",
];

fn generate(rng: &mut StdRng) -> String {
    let len = rng.random_range(1..24);
    let mut s = String::new();
    for _ in 0..len {
        s.push_str(TOKENS[rng.random_range(0..TOKENS.len())]);
        if rng.random_bool(0.6) {
            s.push(' ');
        }
    }
    s
}

#[test]
fn generated_commands_never_crash_the_shell() {
    let mut rng = StdRng::seed_from_u64(0x5eed);
    let limits = Limits {
        command_timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    let mut sb = common::sandbox_with(limits);
    for i in 0..20_000 {
        if i % 100 == 0 {
            sb = common::sandbox_with(limits);
        }
        let cmd = generate(&mut rng);
        let out = sb.exec_captured(&cmd).expect("the host is fine");
        let stderr = common::text(&out.stderr);
        assert!(
            out.outcome.exit_code != EXIT_TRAP && !stderr.contains("panicked at"),
            "the shell crashed on {cmd:?}: {stderr}"
        );
    }
}
