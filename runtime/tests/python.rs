//! CPython as a sandboxed command: `python3.wasm`, built by
//! `runtime/python/build.sh OUT_DIR` (`./dev test` builds it into the
//! programs folder). `EPHEMERAL_PYTHON_WASM` may name another build; its
//! `python3-modules.txt` is read from the same folder. A missing build is a
//! failure, not a skip.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::{runtime, sandbox, sh, text};
use ephemeral_runtime::{Captured, Program, Runtime, RuntimeConfig, Sandbox};

fn wasm_path() -> PathBuf {
    if let Some(path) = std::env::var_os("EPHEMERAL_PYTHON_WASM") {
        return PathBuf::from(path);
    }
    let dir = std::env::var_os("EPHEMERAL_PROGRAMS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/ephemeral/programs"));
    dir.join("python3.wasm")
}

fn python() -> Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM
        .get_or_init(|| {
            let path = wasm_path();
            let wasm = std::fs::read(&path).unwrap_or_else(|e| {
                panic!("{path:?}: {e} (build it with `./dev test` or runtime/python/build.sh)")
            });
            runtime()
                .load_program("python3", &wasm)
                .expect("python3.wasm links against the sandbox")
        })
        .clone()
}

/// What a run printed and how it ended.
struct Ran {
    out: String,
    err: String,
    code: i32,
}

impl std::fmt::Debug for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.out, self.err
        )
    }
}

fn run_in(sb: &mut Sandbox, py: &Program, argv: &[&str], stdin: &[u8]) -> Ran {
    let Captured {
        outcome,
        stdout,
        stderr,
    } = sb
        .run_captured_with_input(py, argv, stdin.to_vec())
        .expect("python3 runs");
    Ran {
        out: text(&stdout),
        err: text(&stderr),
        code: outcome.exit_code,
    }
}

/// `python3 ARGS...` in a fresh sandbox, with `stdin`.
fn py(args: &[&str], stdin: &str) -> Ran {
    let program = python();
    let mut argv = vec!["python3"];
    argv.extend_from_slice(args);
    run_in(&mut sandbox(), &program, &argv, stdin.as_bytes())
}

/// `run_py!(args)` or `run_py!(args, stdin)`.
macro_rules! run_py {
    ($args:expr) => {
        py($args, "")
    };
    ($args:expr, $stdin:expr) => {
        py($args, $stdin)
    };
}

#[test]
fn prints_one() {
    let r = run_py!(&["-c", "print(1)"]);
    assert_eq!(
        (r.out.as_str(), r.err.as_str(), r.code),
        ("1\n", "", 0),
        "{r:?}"
    );
}

#[test]
fn version_and_help() {
    let r = run_py!(&["-V"]);
    assert!(r.out.starts_with("Python 3.1"), "{r:?}");
    assert_eq!(r.code, 0);
    let r = run_py!(&["--version"]);
    assert!(r.out.starts_with("Python 3."), "{r:?}");
    let r = run_py!(&["-h"]);
    assert!(r.out.contains("usage: python3"), "{r:?}");
    let r = run_py!(&["--bogus"]);
    assert_eq!(r.code, 2, "{r:?}");
}

const PRIMES: &str = r#"#!/usr/bin/env python3
import sys

def primes(n):
    found = []
    for k in range(2, n + 1):
        if all(k % p for p in found if p * p <= k):
            found.append(k)
    return found

if __name__ == "__main__":
    print(" ".join(map(str, primes(int(sys.argv[1])))))
    print(sys.argv[0], __file__.endswith("primes.py"))
"#;

#[test]
fn runs_a_script_file_by_path() {
    let program = python();
    let mut sb = sandbox();
    sb.put_file("primes.py", PRIMES.as_bytes()).unwrap();
    let r = run_in(&mut sb, &program, &["python3", "primes.py", "30"], b"");
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.out, "2 3 5 7 11 13 17 19 23 29\nprimes.py True\n",
        "{r:?}"
    );

    let abs = format!("{}/primes.py", sb.scratch_dir());
    let r = run_in(&mut sb, &program, &["python3", &abs, "10"], b"");
    assert_eq!(r.out, format!("2 3 5 7\n{abs} True\n"), "{r:?}");
}

#[test]
fn a_script_imports_modules_next_to_it() {
    let program = python();
    let mut sb = sandbox();
    sb.put_file("proj/helper.py", b"GREETING = 'hi from helper'\n")
        .unwrap();
    sb.put_file("proj/pkg/__init__.py", b"from .inner import VALUE\n")
        .unwrap();
    sb.put_file("proj/pkg/inner.py", b"VALUE = 42\n").unwrap();
    sb.put_file(
        "proj/main.py",
        b"import helper, pkg\nfrom dataclasses import dataclass\n\
          @dataclass\nclass P:\n    x: int\n\
          print(helper.GREETING, pkg.VALUE, P(1), __name__)\n",
    )
    .unwrap();
    let r = run_in(&mut sb, &program, &["python3", "proj/main.py"], b"");
    assert_eq!(r.out, "hi from helper 42 P(x=1) __main__\n", "{r:?}");

    // -m with a module of the sandbox's own files, from the working folder.
    sb.put_file(
        "mymod.py",
        b"import sys\nprint('mod', __name__, sys.argv[1:])\n",
    )
    .unwrap();
    let r = run_in(&mut sb, &program, &["python3", "-m", "mymod", "a"], b"");
    assert_eq!(r.out, "mod __main__ ['a']\n", "{r:?}");
}

/// A project's `app.py` (a Flask app, a CLI) is the project's: the
/// sandbox's own python modules must not take common names.
#[test]
fn a_projects_app_module_is_its_own() {
    let program = python();
    let mut sb = sandbox();
    sb.put_file(
        "app.py",
        b"X = 42\nif __name__ == '__main__':\n    print('main', X)\n",
    )
    .unwrap();
    sb.put_file("test_app.py", b"from app import X\nprint('imported', X)\n")
        .unwrap();
    let r = run_in(&mut sb, &program, &["python3", "test_app.py"], b"");
    assert_eq!((r.out.as_str(), r.code), ("imported 42\n", 0), "{r:?}");
    let r = run_in(
        &mut sb,
        &program,
        &["python3", "-c", "import app; print(app.X)"],
        b"",
    );
    assert_eq!((r.out.as_str(), r.code), ("42\n", 0), "{r:?}");
    let r = run_in(&mut sb, &program, &["python3", "-m", "app"], b"");
    assert_eq!((r.out.as_str(), r.code), ("main 42\n", 0), "{r:?}");
}

#[test]
fn dash_c_gets_its_arguments() {
    let r = run_py!(&["-c", "import sys; print(sys.argv)", "a", "b c"]);
    assert_eq!(r.out, "['-c', 'a', 'b c']\n", "{r:?}");
    // Options before -c, and -c glued to its code.
    let r = run_py!(&["-u", "-B", "-E", "-cprint(2+2)"]);
    assert_eq!(r.out, "4\n", "{r:?}");
}

#[test]
fn reads_the_program_from_stdin() {
    let r = run_py!(&[], "import sys\nprint(6 * 7, sys.argv)\n");
    assert_eq!(r.out, "42 ['']\n", "{r:?}");
    let r = run_py!(&["-", "x", "y"], "import sys\nprint(sys.argv)\n");
    assert_eq!(r.out, "['-', 'x', 'y']\n", "{r:?}");
}

#[test]
fn json_from_stdin() {
    let r = run_py!(
        &["-c", "import json,sys; print(json.load(sys.stdin))"],
        "{\"a\": [1, 2], \"b\": null}"
    );
    assert_eq!(r.out, "{'a': [1, 2], 'b': None}\n", "{r:?}");
    let r = run_py!(&["-m", "json.tool"], "{\"a\":1}");
    assert_eq!(r.out, "{\n    \"a\": 1\n}\n", "{r:?}");
}

#[test]
fn uncaught_exception_prints_a_traceback_and_exits_1() {
    let r = run_py!(&["-c", "x"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.out, "");
    assert!(
        r.err.starts_with("Traceback (most recent call last):\n")
            && r.err.contains("File \"<string>\", line 1, in <module>")
            && r.err.ends_with("NameError: name 'x' is not defined\n"),
        "{r:?}"
    );
    assert!(
        !r.err.contains("sandbox_python3"),
        "driver frames leak: {r:?}"
    );

    let program = python();
    let mut sb = sandbox();
    sb.put_file(
        "bad.py",
        b"def f():\n    return 1 / 0\nprint('before')\nf()\n",
    )
    .unwrap();
    let r = run_in(&mut sb, &program, &["python3", "bad.py"], b"");
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.out, "before\n", "{r:?}");
    let file = format!("File \"{}/bad.py\", line 2, in f", sb.scratch_dir());
    assert!(r.err.contains(&file), "{r:?}");
    assert!(r.err.contains("return 1 / 0"), "source line shown: {r:?}");
    assert!(
        r.err.ends_with("ZeroDivisionError: division by zero\n"),
        "{r:?}"
    );
}

#[test]
fn syntax_error_exits_1_with_cpythons_message() {
    let r = run_py!(&["-c", "def f(:\n  pass"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(!r.err.contains("Traceback"), "{r:?}");
    assert!(r.err.contains("File \"<string>\", line 1"), "{r:?}");
    assert!(r.err.contains("SyntaxError: "), "{r:?}");
}

#[test]
fn exit_status_follows_system_exit() {
    let r = run_py!(&["-c", "import sys; print('out'); sys.exit(3)"]);
    assert_eq!((r.code, r.out.as_str()), (3, "out\n"), "{r:?}");
    let r = run_py!(&["-c", "raise SystemExit('bye')"]);
    assert_eq!((r.code, r.err.as_str()), (1, "bye\n"), "{r:?}");
    let r = run_py!(&["-c", "import sys; sys.exit()"]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = run_py!(&["-c", "import os; os._exit(7)"]);
    assert_eq!(r.code, 7, "{r:?}");
    let r = run_py!(&[
        "-c",
        "import atexit, sys; atexit.register(lambda: print('atexit ran')); \
         sys.stdout.write('unflushed')"
    ]);
    assert_eq!(
        (r.code, r.out.as_str()),
        (0, "unflushedatexit ran\n"),
        "{r:?}"
    );
    let r = run_py!(&["missing.py"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.err.contains("can't open file"), "{r:?}");
}

#[test]
fn sockets_fail_with_os_error_not_a_crash() {
    let r = run_py!(&[
        "-c",
        "import socket\n\
         try:\n    socket.create_connection(('example.com', 80), timeout=5)\n\
         except OSError as e:\n    print('refused', type(e).__name__, e)\n\
         try:\n    socket.socket()\n\
         except OSError as e:\n    print('socket()', type(e).__name__, e)\n"
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    // What Python says on a Linux host without network.
    assert_eq!(
        r.out,
        "refused gaierror [Errno -3] Temporary failure in name resolution\n\
         socket() OSError [Errno 101] Network is unreachable\n",
        "{r:?}"
    );

    // Uncaught, it is an ordinary traceback and exit 1 (not a trap).
    let r = run_py!(&[
        "-c",
        "import socket; socket.create_connection(('10.0.0.1', 80))"
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.err.contains("Traceback (most recent call last):"),
        "{r:?}"
    );
}

#[test]
fn urlopen_raises_url_error() {
    let r = run_py!(&[
        "-c",
        "import urllib.request, urllib.error\n\
         try:\n    urllib.request.urlopen('http://example.com', timeout=5)\n\
         except urllib.error.URLError as e:\n    print('URLError', e.reason)\n"
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.out, "URLError [Errno -3] Temporary failure in name resolution\n",
        "{r:?}"
    );
}

#[test]
fn sees_the_sandbox_environment_files_and_cwd() {
    let program = python();
    let mut sb = sandbox();
    let r = run_in(
        &mut sb,
        &program,
        &[
            "python3",
            "-c",
            "import os, getpass, pathlib\n\
             print(os.getcwd()); print(os.environ['USER'], getpass.getuser())\n\
             pathlib.Path('made-by-python.txt').write_text('hello\\n')\n\
             print(sorted(os.listdir('.')))",
        ],
        b"",
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.out,
        format!(
            "{}\nworker worker\n['made-by-python.txt']\n",
            sb.scratch_dir()
        ),
        "{r:?}"
    );
    let (out, _, code) = sh(&mut sb, "cat made-by-python.txt");
    assert_eq!((out.as_str(), code), ("hello\n", 0));
}

#[test]
fn each_run_has_its_own_randomness() {
    let code = "import random, os, uuid; print(random.random(), os.urandom(8).hex(), uuid.uuid4())";
    let a = run_py!(&["-c", code]);
    let b = run_py!(&["-c", code]);
    assert_eq!((a.code, b.code), (0, 0), "{a:?} {b:?}");
    assert_ne!(a.out, b.out);
}

#[test]
fn every_preloaded_stdlib_module_imports() {
    let program = python();
    let list = wasm_path().with_file_name("python3-modules.txt");
    let names = std::fs::read_to_string(&list).unwrap_or_else(|e| panic!("{list:?}: {e}"));
    let names: Vec<&str> = names.lines().filter(|l| !l.is_empty()).collect();
    assert!(names.len() > 400, "only {} modules listed", names.len());
    for must in [
        "json",
        "json.decoder",
        "urllib.request",
        "urllib.parse",
        "email.mime.text",
        "collections.abc",
        "importlib.metadata",
        "encodings.idna",
        "xml.etree.ElementTree",
        "asyncio",
        "sqlite3",
        "decimal",
        "zoneinfo",
        "tomllib",
        "csv",
        "argparse",
        "dataclasses",
        "typing",
        "unittest",
        "socket",
        "http.client",
        "hashlib",
        "zlib",
    ] {
        assert!(names.contains(&must), "{must} not preloaded");
    }
    let mut script = String::from("import importlib\nfailed = []\nnames = [\n");
    for n in &names {
        script.push_str(&format!("    {n:?},\n"));
    }
    script.push_str(
        "]\nfor n in names:\n    try:\n        importlib.import_module(n)\n\
         \x20   except BaseException as e:\n        failed.append(f'{n}: {e!r}')\n\
         import zlib, this\n\
         print('FAILED', failed) if failed else print('ALL', len(names))\n",
    );
    let mut sb = sandbox();
    sb.put_file("imports.py", script.as_bytes()).unwrap();
    let r = run_in(&mut sb, &program, &["python3", "imports.py"], b"");
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.out.ends_with(&format!("ALL {}\n", names.len())), "{r:?}");
    assert!(
        r.out.starts_with("The Zen of Python"),
        "`import this` prints: {r:?}"
    );
}

/// Compile time, cache-hit load time and start-up time of `python3 -c
/// 'print(1)'` in fresh sandboxes. Run with `--ignored --nocapture`.
#[test]
#[ignore]
fn startup_numbers() {
    let path = wasm_path();
    let wasm = std::fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let new_runtime = || {
        Runtime::new(RuntimeConfig {
            cache_dir: Some(dir.path().to_owned()),
            max_concurrent: 4,
            ..RuntimeConfig::default()
        })
        .unwrap()
    };
    let rt = new_runtime();
    let t = Instant::now();
    let program = rt.load_program("python3", &wasm).unwrap();
    let compile = t.elapsed();
    drop(program);
    drop(rt);
    let rt = new_runtime();
    let t = Instant::now();
    let program = rt.load_program("python3", &wasm).unwrap();
    let cached = t.elapsed();

    let mut times: Vec<Duration> = Vec::new();
    for _ in 0..50 {
        let mut sb = rt.sandbox().build().unwrap();
        let t = Instant::now();
        let r = run_in(&mut sb, &program, &["python3", "-c", "print(1)"], b"");
        times.push(t.elapsed());
        assert_eq!(r.out, "1\n", "{r:?}");
    }
    times.sort();
    eprintln!(
        "python3.wasm {} bytes: compile {compile:?}, load from cache {cached:?}, \
         `python3 -c 'print(1)'` p50 {:?} min {:?} p90 {:?} max {:?} (50 runs)",
        wasm.len(),
        times[25],
        times[0],
        times[45],
        times[49]
    );
}

/// Runs argv from `EPHEMERAL_PYTHON_ARGV` (split on \x1f) with stdin from
/// `EPHEMERAL_PYTHON_STDIN` and shows what happened: a tool for poking at
/// python3. Run with `--ignored --nocapture adhoc`.
#[test]
#[ignore]
fn adhoc() {
    let program = python();
    let argv = std::env::var("EPHEMERAL_PYTHON_ARGV")
        .unwrap_or_else(|_| "python3\x1f-c\x1fprint(1)".into());
    let argv: Vec<&str> = argv.split('\x1f').collect();
    let stdin = std::env::var("EPHEMERAL_PYTHON_STDIN").unwrap_or_default();
    let t = Instant::now();
    let r = run_in(&mut sandbox(), &program, &argv, stdin.as_bytes());
    eprintln!("{r:?}--- {:?}", t.elapsed());
}
