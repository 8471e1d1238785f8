//! Hostile shell input hits a limit with a message, never a hang or a
//! crash: runaway recursion, huge expansions, pathological globs.

mod common;

use std::time::{Duration, Instant};

use ephemeral_runtime::{EXIT_TRAP, Limits};

/// Runs `cmd` with a 10 s limit; returns (stdout, stderr, status, time).
fn run(cmd: &str) -> (String, String, i32, Duration) {
    let mut sb = common::sandbox_with(Limits {
        command_timeout: Duration::from_secs(10),
        ..Limits::default()
    });
    let started = Instant::now();
    let out = sb.exec_captured(cmd).expect("exec");
    let took = started.elapsed();
    assert_ne!(
        out.outcome.exit_code, EXIT_TRAP,
        "the shell crashed on {cmd}"
    );
    let stderr = common::text(&out.stderr);
    assert!(!stderr.contains("panicked"), "{cmd}: {stderr}");
    (
        common::text(&out.stdout),
        stderr,
        out.outcome.exit_code,
        took,
    )
}

#[test]
fn runaway_recursion_is_stopped_with_a_message() {
    let (_, err, code, took) = run("f() { f; }; f; echo after");
    assert_ne!(code, 0);
    assert!(
        err.contains("nesting") || err.contains("recursion"),
        "{err}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn huge_brace_expansion_is_refused() {
    let (out, err, code, _) = run("echo {1..1000}{1..1000}{1..1000} | wc -c");
    assert!(!err.is_empty() || code != 0, "{out}");
}

#[test]
fn command_substitution_of_an_endless_stream_ends() {
    // bash would eat memory until killed; the shell stops the
    // substitution at its pipe cap and says so.
    let (_, err, code, took) = run("x=$(yes); echo ${#x}");
    assert_eq!(
        (err.as_str(), code),
        ("bash: line 1: expansion too large\n", 1)
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn endless_pipeline_reader_stops_the_writer() {
    let (out, _, code, took) = run("yes | head -c 1000000 | wc -c");
    assert_eq!((out.as_str(), code), ("1000000\n", 0));
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn pathological_glob_finishes() {
    let setup = "mkdir -p a/a/a/a/a/a/a/a && for d in a a/a a/a/a a/a/a/a; do touch $d/f1 $d/f2 $d/f3; done";
    let (out, _, code, took) = run(&format!(
        "{setup}; echo */*/*/*/*/*/*/* | wc -w; echo ********a | wc -w"
    ));
    assert_eq!(code, 0);
    assert_eq!(out, "1\n1\n");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn huge_arithmetic_and_string_ops_do_not_crash() {
    for cmd in [
        "echo $(( 2 ** 64 )) $(( -9223372036854775808 / -1 )) $(( 1 << 200 ))",
        "x=$(printf '%0100000d' 0); y=${x//0/00}; echo ${#y}",
        "printf '%.0s-' {1..100000} | wc -c",
        "a=(); for i in $(seq 10000); do a+=($i); done; echo ${#a[@]}",
    ] {
        let (_, _, code, took) = run(cmd);
        assert!(took < Duration::from_secs(10), "{cmd}: {took:?}");
        assert_ne!(code, 124, "{cmd} timed out");
    }
}

/// A pipeline's stages run one after another, so a pipe holds at most
/// 64 MiB: a longer stream is cut, and the command says so by name
/// instead of ending as if nothing happened (security finding G6).
#[test]
fn a_full_pipe_is_a_named_limit() {
    let mut sb = common::sandbox_with(Limits {
        command_timeout: Duration::from_secs(60),
        ..Limits::default()
    });
    let out = sb
        .exec_captured("yes | head -c 100000000 | wc -c")
        .expect("exec");
    assert_eq!(out.outcome.limit, Some(ephemeral_runtime::LimitHit::Pipe));
    let stderr = common::text(&out.stderr);
    assert!(stderr.contains("limit: pipe"), "{stderr}");
    // An ordinary pipeline hits nothing.
    let out = sb.exec_captured("seq 1 1000 | tail -1").expect("exec");
    assert_eq!(
        (common::text(&out.stdout).as_str(), out.outcome.limit),
        ("1000\n", None)
    );
    // A reader that stops early never sees the cut, as with a real pipe:
    // `yes | head` is not a limit.
    let out = sb
        .exec_captured("yes | head -n 2; echo \"${PIPESTATUS[@]}\"")
        .expect("exec");
    assert_eq!(
        (
            common::text(&out.stdout).as_str(),
            common::text(&out.stderr).as_str(),
            out.outcome.limit
        ),
        ("y\ny\n141 0\n", "", None)
    );
}

/// A program that overflows its stack ends with a line saying so and a
/// named limit (security finding G7: exit 134 and no word). jq here is the
/// shell's own, so the command ends with it.
#[test]
fn a_stack_overflow_is_a_named_limit() {
    let mut sb = common::sandbox_with(Limits {
        command_timeout: Duration::from_secs(30),
        ..Limits::default()
    });
    let out = sb
        .exec_captured("jq -n 'def f: [f]; f'; echo rc=$?")
        .expect("exec");
    let stderr = common::text(&out.stderr);
    assert_eq!(out.outcome.exit_code, EXIT_TRAP, "{stderr}");
    assert!(stderr.contains("stack overflow"), "{stderr}");
    assert_eq!(
        out.outcome.limit,
        Some(ephemeral_runtime::LimitHit::Stack),
        "{stderr}"
    );
    // The sandbox goes on.
    let out = sb.exec_captured("echo still here").expect("exec");
    assert_eq!(common::text(&out.stdout), "still here\n");
}
