//! `node` as a sandboxed command: `node.wasm` (the Boa JavaScript engine with
//! a small Node-style runtime), built by `runtime/programs/node/build.sh
//! OUT_DIR`. `EPHEMERAL_NODE_WASM` may name another build; otherwise it is
//! `$EPHEMERAL_PROGRAMS_DIR/node.wasm` or
//! `/var/cache/ephemeral/programs/node.wasm`. A missing build is a failure,
//! not a skip.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::{runtime, sandbox, sh, text};
use ephemeral_runtime::{Captured, Program, Runtime, RuntimeConfig, Sandbox};

fn wasm_path() -> PathBuf {
    if let Some(path) = std::env::var_os("EPHEMERAL_NODE_WASM") {
        return PathBuf::from(path);
    }
    let dir = std::env::var_os("EPHEMERAL_PROGRAMS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/ephemeral/programs"));
    dir.join("node.wasm")
}

fn wasm() -> &'static [u8] {
    static WASM: OnceLock<Vec<u8>> = OnceLock::new();
    WASM.get_or_init(|| {
        let path = wasm_path();
        std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{path:?}: {e} (build it with `runtime/programs/node/build.sh \
                 /var/cache/ephemeral/programs`, or set EPHEMERAL_NODE_WASM)"
            )
        })
    })
}

fn node_program() -> Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM
        .get_or_init(|| {
            runtime()
                .load_program("node", wasm())
                .expect("node.wasm links against the sandbox")
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

fn run_in(sb: &mut Sandbox, argv: &[&str], stdin: &[u8]) -> Ran {
    let Captured {
        outcome,
        stdout,
        stderr,
    } = sb
        .run_captured_with_input(&node_program(), argv, stdin.to_vec())
        .expect("node runs");
    Ran {
        out: text(&stdout),
        err: text(&stderr),
        code: outcome.exit_code,
    }
}

/// `node ARGS...` in a fresh sandbox, with `stdin`.
fn node_with_input(args: &[&str], stdin: &str) -> Ran {
    let mut argv = vec!["node"];
    argv.extend_from_slice(args);
    run_in(&mut sandbox(), &argv, stdin.as_bytes())
}

fn node(args: &[&str]) -> Ran {
    node_with_input(args, "")
}

/// `node -e CODE`, expecting success; returns stdout.
fn eval_ok(code: &str) -> String {
    let r = node(&["-e", code]);
    assert_eq!((r.code, r.err.as_str()), (0, ""), "{code}\n{r:?}");
    r.out
}

#[test]
fn prints_one() {
    let r = node(&["-e", "console.log(1)"]);
    assert_eq!(
        (r.out.as_str(), r.err.as_str(), r.code),
        ("1\n", "", 0),
        "{r:?}"
    );
}

#[test]
fn dash_p_prints_the_value() {
    assert_eq!(node(&["-p", "6*7"]).out, "42\n");
    assert_eq!(node(&["-p", "'a' + 'b'"]).out, "ab\n");
    assert_eq!(node(&["-p", "({a: 1, b: 'x'})"]).out, "{ a: 1, b: 'x' }\n");
    assert_eq!(
        node(&["-p", "process.argv.length", "x", "y"]).out,
        "3\n",
        "-p: argv is [node, ...rest]"
    );
}

#[test]
fn console_formats_values_like_node() {
    let cases: &[(&str, &str)] = &[
        (
            "console.log({ a: 1, b: [1, 2] })",
            "{ a: 1, b: [ 1, 2 ] }\n",
        ),
        (
            "console.log('a', 1, 'b', true, null, undefined)",
            "a 1 b true null undefined\n",
        ),
        ("console.log(['x', \"it's\"])", "[ 'x', \"it's\" ]\n"),
        (
            "console.log({ s: 'str', n: -0, big: 10n })",
            "{ s: 'str', n: -0, big: 10n }\n",
        ),
        ("console.log([])", "[]\n"),
        ("console.log({})", "{}\n"),
        (
            "console.log({ 'a-b': 1, c: { d: { e: { f: 1 } } } })",
            "{ 'a-b': 1, c: { d: { e: [Object] } } }\n",
        ),
        (
            "console.log(new Map([[1, 'a']]), new Set([1]))",
            "Map(1) { 1 => 'a' } Set(1) { 1 }\n",
        ),
        (
            "console.log(function foo() {}, () => 1, class A {}, class B extends Map {}, Map)",
            "[Function: foo] [Function (anonymous)] [class A] [class B extends Map] [Function: Map]\n",
        ),
        (
            "console.log('%s is %d years', 'Bob', 42)",
            "Bob is 42 years\n",
        ),
        ("console.log(Buffer.from('hi'))", "<Buffer 68 69>\n"),
        (
            "const o = { x: 1 }; o.self = o; console.log(o)",
            "<ref *1> { x: 1, self: [Circular *1] }\n",
        ),
        (
            "console.log(Array.from({ length: 30 }, (_, i) => i))",
            "[\n   0,  1,  2,  3,  4,  5,  6,  7,  8,\n   9, 10, 11, 12, 13, 14, 15, 16, 17,\n  18, 19, 20, 21, 22, 23, 24, 25, 26,\n  27, 28, 29\n]\n",
        ),
        (
            "console.log({ alpha: 'aaaaaaaaaaaaaaaaaaaa', beta: 'bbbbbbbbbbbbbbbbbbbb', gamma: 'cccccccccccccccccccc' })",
            "{\n  alpha: 'aaaaaaaaaaaaaaaaaaaa',\n  beta: 'bbbbbbbbbbbbbbbbbbbb',\n  gamma: 'cccccccccccccccccccc'\n}\n",
        ),
        (
            "console.log([1.5, 'two', [3]], { u: undefined, f: false })",
            "[ 1.5, 'two', [ 3 ] ] { u: undefined, f: false }\n",
        ),
        (
            "console.log(JSON.stringify({ a: [1, { b: 2 }] }))",
            "{\"a\":[1,{\"b\":2}]}\n",
        ),
        ("console.log(Promise.resolve(4))", "Promise { 4 }\n"),
        ("console.log(new Date(0))", "1970-01-01T00:00:00.000Z\n"),
        (
            "console.log(Symbol('s'), [undefined, null])",
            "Symbol(s) [ undefined, null ]\n",
        ),
    ];
    let mut failures = Vec::new();
    for (code, want) in cases {
        let r = node(&["-e", code]);
        if r.out != *want || r.code != 0 {
            failures.push(format!(
                "{code}\n  want {want:?}\n  got  {:?} {:?} {}",
                r.out, r.err, r.code
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn console_error_and_warn_go_to_stderr() {
    let r = node(&[
        "-e",
        "console.error('e', { a: 1 }); console.warn('w'); console.info('i'); \
         process.stdout.write('o'); process.stderr.write('E\\n')",
    ]);
    assert_eq!(r.out, "i\no", "{r:?}");
    assert_eq!(r.err, "e { a: 1 }\nw\nE\n", "{r:?}");
    assert_eq!(r.code, 0);
}

const SCRIPT: &str = r#"#!/usr/bin/env node
const path = require('path');
console.log(JSON.stringify(process.argv));
console.log(path.basename(__filename), __dirname === path.dirname(__filename));
console.log(require.main === module, typeof module.exports);
"#;

#[test]
fn runs_a_script_file_with_arguments() {
    let mut sb = sandbox();
    sb.put_file("app.js", SCRIPT.as_bytes()).unwrap();
    let abs = format!("{}/app.js", sb.scratch_dir());
    let r = run_in(&mut sb, &["node", "app.js", "a", "b c"], b"");
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.out,
        format!("[\"/usr/bin/node\",\"{abs}\",\"a\",\"b c\"]\napp.js true\ntrue object\n"),
        "{r:?}"
    );
    let r = run_in(&mut sb, &["node", &abs], b"");
    assert!(
        r.out
            .starts_with(&format!("[\"/usr/bin/node\",\"{abs}\"]\n")),
        "{r:?}"
    );

    let r = run_in(&mut sb, &["node", "missing.js"], b"");
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.err.contains("Cannot find module"), "{r:?}");
}

#[test]
fn requires_modules_next_to_the_script() {
    let mut sb = sandbox();
    sb.put_file("proj/lib/math.js", b"exports.double = (x) => x * 2;\n")
        .unwrap();
    sb.put_file("proj/data.json", b"{\"n\": 21}\n").unwrap();
    sb.put_file(
        "proj/node_modules/greet/index.js",
        b"module.exports = (n) => 'hello ' + n;\n",
    )
    .unwrap();
    sb.put_file(
        "proj/main.js",
        b"const { double } = require('./lib/math');\n\
          console.log(double(require('./data.json').n), require('greet')('world'));\n",
    )
    .unwrap();
    let r = run_in(&mut sb, &["node", "proj/main.js"], b"");
    assert_eq!((r.out.as_str(), r.code), ("42 hello world\n", 0), "{r:?}");
}

#[test]
fn es_module_syntax_and_top_level_await() {
    let mut sb = sandbox();
    sb.put_file(
        "lib.mjs",
        b"export const K = 21;\nexport function double(x) { return x * 2; }\nexport default 'dflt';\n",
    )
    .unwrap();
    sb.put_file(
        "main.mjs",
        b"import { readFileSync } from 'node:fs';\n\
          import path from 'path';\n\
          import dflt, { K, double as twice } from './lib.mjs';\n\
          const v = await new Promise((r) => setTimeout(() => r(twice(K)), 5));\n\
          console.log(v, dflt, path.basename(import.meta.url), typeof readFileSync);\n",
    )
    .unwrap();
    let r = run_in(&mut sb, &["node", "main.mjs"], b"");
    assert_eq!(
        (r.out.as_str(), r.code),
        ("42 dflt main.mjs function\n", 0),
        "{r:?}"
    );

    let r = node(&[
        "-e",
        "import os from 'os'; console.log(os.platform(), await Promise.resolve(1))",
    ]);
    assert_eq!((r.out.as_str(), r.code), ("linux 1\n", 0), "{r:?}");
}

#[test]
fn reads_the_program_from_stdin() {
    let r = node_with_input(
        &[],
        "const x = [1, 2, 3];\nconsole.log(x.map(n => n * n).join(','));\n",
    );
    assert_eq!((r.out.as_str(), r.code), ("1,4,9\n", 0), "{r:?}");
    let r = node_with_input(&["-"], "console.log('dash')");
    assert_eq!(r.out, "dash\n", "{r:?}");
}

#[test]
fn reads_stdin_from_a_script() {
    let r = node_with_input(
        &[
            "-e",
            "const s = require('fs').readFileSync(0, 'utf8'); console.log(s.trim().split('\\n').length)",
        ],
        "a\nb\nc\n",
    );
    assert_eq!(r.out, "3\n", "{r:?}");
    let r = node_with_input(
        &[
            "-e",
            "let d = ''; process.stdin.on('data', c => d += c); process.stdin.on('end', () => console.log(JSON.parse(d).k))",
        ],
        "{\"k\": \"v\"}",
    );
    assert_eq!(r.out, "v\n", "{r:?}");
}

#[test]
fn process_basics() {
    let mut sb = sandbox();
    let r = run_in(
        &mut sb,
        &[
            "node",
            "-e",
            "console.log(process.platform, process.cwd(), process.env.USER, typeof process.env.PATH, process.argv.slice(1))",
            "x",
        ],
        b"",
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.out,
        format!("linux {} worker string [ 'x' ]\n", sb.scratch_dir()),
        "{r:?}"
    );
}

#[test]
fn exit_codes() {
    assert_eq!(node(&["-e", "process.exit(3)"]).code, 3);
    assert_eq!(node(&["-e", "process.exit(0)"]).code, 0);
    assert_eq!(node(&["-e", "process.exit(255)"]).code, 255);
    let r = node(&["-e", "console.log('a'); process.exit(42); console.log('b')"]);
    assert_eq!((r.out.as_str(), r.code), ("a\n", 42), "{r:?}");
    let r = node(&[
        "-e",
        "process.exitCode = 5; setTimeout(() => console.log('t'), 5)",
    ]);
    assert_eq!((r.out.as_str(), r.code), ("t\n", 5), "{r:?}");
    let r = node(&[
        "-e",
        "process.on('exit', c => console.log('exit', c)); process.exit(2)",
    ]);
    assert_eq!((r.out.as_str(), r.code), ("exit 2\n", 2), "{r:?}");
}

#[test]
fn uncaught_errors_print_and_exit_1() {
    let r = node(&["-e", "console.log('before'); null.x"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.out, "before\n");
    assert!(r.err.starts_with("TypeError: "), "{r:?}");

    let r = node(&["-e", "throw new Error('boom')"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.err.starts_with("Error: boom\n"), "{r:?}");

    let r = node(&[
        "-e",
        "class MyErr extends Error {}; setTimeout(() => { throw new RangeError('late') }, 1)",
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.err.starts_with("RangeError: late"), "{r:?}");

    let r = node(&["-e", "Promise.reject(new Error('rejected'))"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.err.starts_with("Error: rejected"), "{r:?}");

    let r = node(&[
        "-e",
        "async function f() { throw new TypeError('in async') } f()",
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.err.starts_with("TypeError: in async"), "{r:?}");

    let r = node(&["-e", "function ("]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.err.contains("SyntaxError"), "{r:?}");

    let r = node(&[
        "-e",
        "process.on('uncaughtException', e => console.log('caught', e.message)); throw new Error('x')",
    ]);
    assert_eq!((r.out.as_str(), r.code), ("caught x\n", 0), "{r:?}");

    let r = node(&["-e", "function f() { return f() } f()"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.err.contains("RangeError"), "{r:?}");
}

#[test]
fn promises_and_async_await_drain_before_exit() {
    let out = eval_ok(
        "(async () => {\n\
           const r = await Promise.all([1, Promise.resolve(2), new Promise(r => setTimeout(() => r(3), 10))]);\n\
           console.log(r);\n\
           for await (const x of (async function* () { yield 'a'; yield 'b' })()) console.log(x);\n\
         })();\n\
         Promise.resolve().then(() => console.log('micro'));\n\
         process.nextTick(() => console.log('tick'));\n\
         console.log('sync');",
    );
    assert_eq!(out, "sync\ntick\nmicro\n[ 1, 2, 3 ]\na\nb\n");
}

#[test]
fn timers_run_in_time_order() {
    let t = Instant::now();
    let out = eval_ok(
        "setTimeout(() => console.log('c'), 60);\n\
         setTimeout(() => console.log('a'), 10);\n\
         const t = setTimeout(() => console.log('never'), 20); clearTimeout(t);\n\
         setTimeout(() => console.log('b'), 30);\n\
         setImmediate(() => console.log('imm'));\n\
         let n = 0; const i = setInterval(() => { console.log('i' + ++n); if (n === 3) clearInterval(i) }, 15);",
    );
    assert_eq!(out, "imm\na\ni1\nb\ni2\ni3\nc\n");
    assert!(t.elapsed() >= Duration::from_millis(60));
}

#[test]
fn fs_round_trip() {
    let mut sb = sandbox();
    let r = run_in(
        &mut sb,
        &[
            "node",
            "-e",
            "const fs = require('fs');\n\
             fs.mkdirSync('a/b/c', { recursive: true });\n\
             fs.writeFileSync('a/b/c/f.txt', 'hello');\n\
             fs.appendFileSync('a/b/c/f.txt', ' world\\n');\n\
             console.log(fs.readFileSync('a/b/c/f.txt', 'utf8').trim());\n\
             console.log(fs.readFileSync('a/b/c/f.txt', { encoding: 'utf8' }).length);\n\
             const buf = fs.readFileSync('a/b/c/f.txt');\n\
             console.log(Buffer.isBuffer(buf), buf.length, buf.toString().trim());\n\
             console.log(fs.existsSync('a/b'), fs.existsSync('nope'));\n\
             console.log(fs.readdirSync('a/b/c'), fs.readdirSync('.'));\n\
             const st = fs.statSync('a/b/c/f.txt');\n\
             console.log(st.isFile(), st.isDirectory(), st.size, fs.statSync('a').isDirectory());\n\
             fs.writeFileSync('/tmp/abs.txt', Buffer.from([104, 105]));\n\
             console.log(fs.readFileSync('/tmp/abs.txt', 'utf8'));\n\
             fs.unlinkSync('a/b/c/f.txt');\n\
             console.log(fs.readdirSync('a/b/c').length);\n\
             try { fs.readFileSync('missing.txt') } catch (e) { console.log(e.code, e.message) }\n\
             fs.writeFileSync('out.json', JSON.stringify({ k: 1 }));",
        ],
        b"",
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.out,
        "hello world\n12\ntrue 12 hello world\ntrue false\n[ 'f.txt' ] [ 'a' ]\n\
         true false 12 true\nhi\n0\n\
         ENOENT ENOENT: no such file or directory, open 'missing.txt'\n",
        "{r:?}"
    );
    let (out, _, code) = sh(&mut sb, "cat out.json");
    assert_eq!((out.as_str(), code), ("{\"k\":1}", 0));
}

#[test]
fn fs_promises_and_callbacks() {
    let out = eval_ok(
        "const fs = require('fs');\n\
         fs.writeFile('x.txt', 'cb', (err) => {\n\
           fs.readFile('x.txt', 'utf8', (err, d) => console.log('cb', err, d));\n\
         });\n\
         (async () => { await fs.promises.writeFile('y.txt', 'p'); console.log('p', await require('fs/promises').readFile('y.txt', 'utf8')); })();",
    );
    assert_eq!(out, "p p\ncb null cb\n");
}

#[test]
fn path_and_os() {
    let mut sb = sandbox();
    let r = run_in(
        &mut sb,
        &[
            "node",
            "-e",
            "const path = require('path'), os = require('os');\n\
             console.log(path.join('/a/b', '../c', 'd.txt'), path.join('a', '', 'b/'));\n\
             console.log(path.resolve('x', '../y'), path.resolve('/r', 's'));\n\
             console.log(path.basename('/p/q/file.tar.gz'), path.basename('/p/q/file.js', '.js'), path.dirname('/p/q/file'), path.dirname('file'));\n\
             console.log(path.extname('a/b.tar.gz'), path.extname('.bashrc'), path.extname('noext'), path.sep);\n\
             console.log(os.platform(), JSON.stringify(os.EOL), os.tmpdir(), os.homedir());",
        ],
        b"",
    );
    assert_eq!(r.code, 0, "{r:?}");
    let cwd = sb.scratch_dir().to_owned();
    let parent = cwd.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
    let (home, _, _) = sh(&mut sb, "echo $HOME");
    assert_eq!(
        r.out,
        format!(
            "/a/c/d.txt a/b/\n{cwd}/y /r/s\nfile.tar.gz file /p/q .\n.gz   /\nlinux \"\\n\" /tmp {}\n",
            home.trim()
        ),
        "{r:?} (parent {parent})"
    );
}

#[test]
fn network_fails_like_node_without_network() {
    let r = node(&[
        "-e",
        "require('https').get('https://example.com/', () => {}).on('error', e => console.log('https', e.message, e.code));\n\
         require('http').request({ hostname: 'example.com', path: '/' }).on('error', e => console.log('http', e.message)).end();\n\
         require('net').connect(80, 'example.com').on('error', e => console.log('net', e.code));\n\
         fetch('https://example.com/').catch(e => console.log('fetch', e.message, e.cause.code));",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let mut lines: Vec<&str> = r.out.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            "fetch fetch failed EAI_AGAIN",
            "http getaddrinfo EAI_AGAIN example.com",
            "https getaddrinfo EAI_AGAIN example.com EAI_AGAIN",
            "net EAI_AGAIN",
        ],
        "{r:?}"
    );
    // Unhandled: an uncaught error, exit 1, no crash.
    let r = node(&["-e", "require('http').get('http://example.com')"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.err.contains("getaddrinfo EAI_AGAIN example.com"), "{r:?}");
}

#[test]
fn modern_javascript_works() {
    let out = eval_ok(
        "class P { #x; constructor(x) { this.#x = x } get x() { return this.#x } static of(x) { return new P(x) } }\n\
         const { a, ...rest } = { a: 1, b: 2, c: 3 };\n\
         console.log(P.of(5).x, a, rest, [1, [2, [3]]].flat(Infinity), 2n ** 64n, 'abc'.at(-1), Object.groupBy ? 'g' : 'ng');\n\
         console.log([3, 1, 2].toSorted(), /(?<y>\\d{4})/.exec('in 2024').groups.y, structuredClone({ q: [1] }));",
    );
    assert!(
        out.starts_with("5 1 { b: 2, c: 3 } [ 1, 2, 3 ] 18446744073709551616n c "),
        "{out}"
    );
    assert!(
        out.contains("[ 1, 2, 3 ]") && out.contains("2024 { q: [ 1 ] }"),
        "{out}"
    );
}

/// `node` through the shell, found by name in a programs folder, and a
/// `#!/usr/bin/env node` script.
#[test]
fn through_the_shell_by_name_and_shebang() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("node.wasm"), wasm()).unwrap();
    let rt = Runtime::new(RuntimeConfig {
        cache_dir: Some(common::cache_dir()),
        max_concurrent: 4,
        programs_dir: Some(dir.path().to_owned()),
        ..RuntimeConfig::default()
    })
    .unwrap();
    let mut sb = rt.sandbox().build().unwrap();
    let (out, err, code) = sh(&mut sb, "node -e 'console.log(6*7)'");
    assert_eq!((out.as_str(), err.as_str(), code), ("42\n", "", 0));

    let (out, err, code) = sh(&mut sb, "echo 'console.log(\"piped\")' | node");
    assert_eq!((out.as_str(), err.as_str(), code), ("piped\n", "", 0));

    sb.put_file("hello.js", SCRIPT.as_bytes()).unwrap();
    let (out, err, code) = sh(&mut sb, "chmod +x hello.js && ./hello.js one | head -1");
    let abs = format!("{}/hello.js", sb.scratch_dir());
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        (
            format!("[\"/usr/bin/node\",\"{abs}\",\"one\"]\n").as_str(),
            "",
            0
        )
    );

    let (out, _, code) = sh(&mut sb, "node -e 'process.exit(7)'; echo \"status $?\"");
    assert_eq!((out.as_str(), code), ("status 7\n", 0));

    let (out, _, _) = sh(
        &mut sb,
        "node -p 'require(\"fs\").writeFileSync(\"n.txt\", \"from node\"); 1' && cat n.txt",
    );
    assert_eq!(out, "1\nfrom node");
}

/// Compile time, cache-hit load time and start-up time of `node -e
/// 'console.log(1)'` in fresh sandboxes. Run with `--ignored --nocapture`.
#[test]
#[ignore]
fn startup_numbers() {
    let wasm = wasm();
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
    let program = rt.load_program("node", wasm).unwrap();
    let compile = t.elapsed();
    drop(program);
    drop(rt);
    let rt = new_runtime();
    let t = Instant::now();
    let program = rt.load_program("node", wasm).unwrap();
    let cached = t.elapsed();

    let mut times: Vec<Duration> = Vec::new();
    for _ in 0..50 {
        let mut sb = rt.sandbox().build().unwrap();
        let t = Instant::now();
        let Captured { stdout, .. } = sb
            .run_captured(&program, &["node", "-e", "console.log(1)"])
            .unwrap();
        times.push(t.elapsed());
        assert_eq!(text(&stdout), "1\n");
    }
    times.sort();
    eprintln!(
        "node.wasm {} bytes: compile {compile:?}, load from cache {cached:?}, \
         `node -e 'console.log(1)'` p50 {:?} min {:?} p90 {:?} max {:?} (50 runs)",
        wasm.len(),
        times[25],
        times[0],
        times[45],
        times[49]
    );
}

/// Runs argv from `EPHEMERAL_NODE_ARGV` (split on \x1f) with stdin from
/// `EPHEMERAL_NODE_STDIN` and shows what happened. Run with `--ignored
/// --nocapture adhoc`.
#[test]
#[ignore]
fn adhoc() {
    let argv = std::env::var("EPHEMERAL_NODE_ARGV")
        .unwrap_or_else(|_| "node\x1f-e\x1fconsole.log(1)".into());
    let argv: Vec<&str> = argv.split('\x1f').collect();
    let stdin = std::env::var("EPHEMERAL_NODE_STDIN").unwrap_or_default();
    let t = Instant::now();
    let r = run_in(&mut sandbox(), &argv, stdin.as_bytes());
    eprintln!("{r:?}--- {:?}", t.elapsed());
}

/// `child_process` runs the sandbox's own programs through the host, with
/// Node's results and errors (expected output recorded from Node 20 on
/// Debian 12 with the same script).
#[test]
fn child_process_runs_the_sandboxs_programs() {
    let script = r#"const cp = require('child_process');
console.log(cp.execSync('echo hi; echo err >&2; exit 0').toString().trim());
console.log(cp.execSync('printf "%s" "$X"', { env: { X: 'from-env', PATH: process.env.PATH } }).toString());
const r = cp.spawnSync('sh', ['-c', 'echo out; echo oops >&2; exit 4'], { encoding: 'utf8' });
console.log(r.status, JSON.stringify(r.stdout), JSON.stringify(r.stderr), r.signal);
try { cp.execSync('exit 3', { stdio: 'pipe' }); } catch (e) { console.log('caught', e.status, e.message.split('\n')[0]); }
const m = cp.spawnSync('nosuch-cmd', ['a']);
console.log(m.error.code, m.error.message, m.status);
console.log(cp.execSync('cat', { input: 'piped input' }).toString());
console.log(cp.execFileSync('ls', ['-d', '/tmp'], { encoding: 'utf8' }).trim());
const t = cp.spawnSync('sleep', ['5'], { timeout: 200 });
console.log(t.error && t.error.code, t.signal, t.status);
cp.exec('echo async; exit 2', (err, stdout, stderr) => { console.log('exec', err && err.code, JSON.stringify(stdout)); });
"#;
    let mut sb = sandbox();
    sb.put_file("cp.js", script.as_bytes()).expect("put");
    let r = run_in(&mut sb, &["node", "cp.js"], b"");
    assert_eq!(
        (r.out.as_str(), r.err.as_str(), r.code),
        (
            "hi\nfrom-env\n4 \"out\\n\" \"oops\\n\" null\ncaught 3 Command failed: exit 3\n\
             ENOENT spawnSync nosuch-cmd ENOENT null\npiped input\n/tmp\nETIMEDOUT SIGTERM null\n\
             exec 2 \"async\\n\"\n",
            "err\n",
            0
        ),
        "{r:?}"
    );
}
