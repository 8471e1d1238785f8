//! python3's processes: `subprocess`, `os.system`, `os.popen`, `os.exec*`,
//! `shutil.which`, over the sandbox's `process` interface, behaving as
//! CPython does on Linux (exit codes, signals, errors). Needs
//! `python3.wasm` in the programs folder (`$EPHEMERAL_PROGRAMS_DIR`, as
//! `tests/python.rs`); each case runs through the shell, as an agent's
//! command does.

mod common;

use common::{sandbox, sh};

/// `python3 -c CODE` through the shell of a fresh sandbox, after `setup`.
fn py(setup: &str, code: &str) -> (String, String, i32) {
    let mut sb = sandbox();
    if !setup.is_empty() {
        let (_, err, code) = sh(&mut sb, setup);
        assert_eq!(code, 0, "setup failed: {err}");
    }
    sb.put_file("t.py", code.as_bytes()).expect("write t.py");
    sh(&mut sb, "python3 t.py")
}

fn out_of(setup: &str, code: &str) -> String {
    let (out, err, status) = py(setup, code);
    assert_eq!(status, 0, "stdout:\n{out}\nstderr:\n{err}");
    out
}

#[test]
fn run_captures_and_returns_exit_codes() {
    let out = out_of(
        "",
        r#"import subprocess
r = subprocess.run(["echo", "hi"], capture_output=True, text=True)
print(repr(r.stdout), repr(r.stderr), r.returncode, r.args)
print(subprocess.run(["false"]).returncode, subprocess.run(["sh", "-c", "exit 42"]).returncode)
print(subprocess.call("exit 3", shell=True), subprocess.check_call(["true"]))
print(repr(subprocess.check_output("printf 'a\\nb\\n' | wc -l", shell=True)))
r = subprocess.run(["ls", "/nope"], capture_output=True)
print(r.returncode, r.stderr)
print(subprocess.getstatusoutput("echo x; exit 4"), subprocess.getoutput("echo y"))
"#,
    );
    assert_eq!(
        out,
        "'hi\\n' '' 0 ['echo', 'hi']\n1 42\n3 0\nb'2\\n'\n\
         2 b\"ls: cannot access '/nope': No such file or directory\\n\"\n(4, 'x') y\n"
    );
}

#[test]
fn errors_are_linuxs() {
    let out = out_of(
        "printf 'echo hi\\n' > plain.sh && mkdir adir",
        r#"import subprocess
for args, kw in [(["nosuch-program"], {}), (["./nosuch"], {}), (["./plain.sh"], {}),
                 (["./adir"], {}), (["echo"], {"cwd": "missing-dir"}),
                 (["echo"], {"cwd": "plain.sh"})]:
    try:
        subprocess.run(args, **kw)
    except OSError as e:
        print(type(e).__name__, e.errno, e)
try:
    subprocess.run(["false"], check=True)
except subprocess.CalledProcessError as e:
    print(e, e.returncode, e.output)
try:
    subprocess.check_output(["sh", "-c", "echo partial; exit 5"])
except subprocess.CalledProcessError as e:
    print(e, e.output, e.stdout)
"#,
    );
    assert_eq!(
        out,
        "FileNotFoundError 2 [Errno 2] No such file or directory: 'nosuch-program'\n\
         FileNotFoundError 2 [Errno 2] No such file or directory: './nosuch'\n\
         PermissionError 13 [Errno 13] Permission denied: './plain.sh'\n\
         PermissionError 13 [Errno 13] Permission denied: './adir'\n\
         FileNotFoundError 2 [Errno 2] No such file or directory: 'missing-dir'\n\
         NotADirectoryError 20 [Errno 20] Not a directory: 'plain.sh'\n\
         Command '['false']' returned non-zero exit status 1. 1 None\n\
         Command '['sh', '-c', 'echo partial; exit 5']' returned non-zero exit status 5. \
         b'partial\\n' b'partial\\n'\n"
    );
}

#[test]
fn popen_pipes_poll_wait_and_signals() {
    let out = out_of(
        "",
        r#"import subprocess, time
p = subprocess.Popen(["sort"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
print(p.poll(), p.communicate("b\na\nc\n"), p.returncode, p.poll())
p = subprocess.Popen(["tr", "a-z", "A-Z"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
p.stdin.write(b"abc\n")
p.stdin.close()
print(p.stdout.read(), p.wait())
p = subprocess.Popen(["sh", "-c", "echo one; echo two"], stdout=subprocess.PIPE, text=True)
print([line for line in p.stdout], p.wait())
p = subprocess.Popen(["sleep", "30"])
start = time.monotonic()
print(p.poll())
p.kill()
print(p.wait(), time.monotonic() - start < 10)
p = subprocess.Popen(["sleep", "30"])
p.terminate()
print(p.wait())
try:
    subprocess.Popen(["sleep", "30"]).wait(timeout=0.2)
except subprocess.TimeoutExpired as e:
    print("timeout", e.cmd, e.timeout)
with subprocess.Popen(["sh", "-c", "exit 9"]) as p:
    pass
print(p.returncode)
"#,
    );
    assert_eq!(
        out,
        "None ('a\\nb\\nc\\n', None) 0 0\nb'ABC\\n' 0\n['one\\n', 'two\\n'] 0\nNone\n-9 True\n-15\n\
         timeout ['sleep', '30'] 0.2\n9\n"
    );
}

#[test]
fn run_timeout_kills_the_child() {
    let out = out_of(
        "",
        r#"import subprocess, time
start = time.monotonic()
try:
    subprocess.run(["sleep", "20"], timeout=0.3)
except subprocess.TimeoutExpired as e:
    print("timed out:", e.cmd, round(e.timeout, 1), time.monotonic() - start < 5)
try:
    subprocess.check_output("sleep 20", shell=True, timeout=0.3)
except subprocess.TimeoutExpired as e:
    print("timed out:", e.cmd)
"#,
    );
    assert_eq!(
        out,
        "timed out: ['sleep', '20'] 0.3 True\ntimed out: sleep 20\n"
    );
}

#[test]
fn streams_devnull_stdout_files_and_environment() {
    let mut sb = sandbox();
    sb.put_file(
        "t.py",
        br#"import subprocess, sys, os
r = subprocess.run("echo out; echo err >&2", shell=True, stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT, text=True)
print(repr(r.stdout), r.stderr)
r = subprocess.run("echo out; echo err >&2", shell=True, capture_output=True)
print(r.stdout, r.stderr)
r = subprocess.run("echo gone; echo gone >&2", shell=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
print(r.returncode, r.stdout)
with open("log.txt", "w") as f:
    subprocess.run(["echo", "into the file"], stdout=f)
print(open("log.txt").read().strip())
print(subprocess.run(["sh", "-c", "echo $GREETING-$HOME"], env={"GREETING": "hello"},
                     capture_output=True, text=True).stdout.strip())
os.environ["FROM_PARENT"] = "inherited"
print(subprocess.run("echo $FROM_PARENT", shell=True, capture_output=True, text=True).stdout.strip())
os.mkdir("sub")
print(subprocess.run(["pwd"], cwd="sub", capture_output=True, text=True).stdout.strip().endswith("/sub"))
print(subprocess.run([sys.executable, "-c", "import os; print(6*7, os.getcwd().endswith('sub'))"],
                     cwd="sub", capture_output=True, text=True).stdout.strip())
print(subprocess.run(["cat"], input="piped", capture_output=True, text=True).stdout)
print(subprocess.run(["tr", "a-z", "A-Z"], input=b"bytes", capture_output=True).stdout)
print(subprocess.run(["cat"], input="a\r\nb", stdout=subprocess.PIPE, universal_newlines=True).stdout.split("\n"))
sys.stdout.flush()
subprocess.run(["echo", "straight"])
subprocess.run("echo to-stderr >&2", shell=True)
"#,
    )
    .expect("write");
    let (out, err, code) = sh(&mut sb, "python3 t.py");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "'out\\nerr\\n' None\nb'out\\n' b'err\\n'\n0 None\ninto the file\nhello-\ninherited\nTrue\n\
         42 True\npiped\nb'BYTES'\n['a', 'b']\nstraight\n"
    );
    assert_eq!(err, "to-stderr\n");
}

#[test]
fn a_child_reads_what_is_left_of_stdin() {
    let mut sb = sandbox();
    sb.put_file(
        "t.py",
        b"import subprocess\nsubprocess.run(['tr', 'a-z', 'A-Z'])\n",
    )
    .expect("write");
    let (out, err, code) = sh(&mut sb, "echo shared input | python3 t.py");
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        ("SHARED INPUT\n", "", 0)
    );
}

#[test]
fn os_system_popen_exec_and_fork() {
    let (out, err, code) = py(
        "",
        r#"import os, sys
print("before", flush=True)
os.execvp("sh", ["sh", "-c", "echo exec ran; exit 6"])
print("not reached")
"#,
    );
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        ("before\nexec ran\n", "", 6)
    );
    let out = out_of(
        "",
        r#"import os
st = os.system("echo from-system; exit 3")
print(st, os.waitstatus_to_exitcode(st), os.WIFEXITED(st), os.WEXITSTATUS(st))
print(os.system("true"))
print(repr(os.popen("echo via-popen; echo second").read()))
f = os.popen("exit 2")
print(f.read() == "", f.close())
with os.popen("cat > written.txt", "w") as f:
    f.write("popen write mode\n")
print(open("written.txt").read().strip())
print([line.strip() for line in os.popen("printf '1\\n2\\n'")])
for call in (os.fork, lambda: os.posix_spawn("/bin/true", ["true"], {})):
    try:
        call()
    except OSError as e:
        print(type(e).__name__, e)
try:
    os.waitpid(-1, 0)
except ChildProcessError as e:
    print(e)
try:
    os.kill(12345, 9)
except ProcessLookupError as e:
    print(e)
"#,
    );
    assert_eq!(
        out,
        "from-system\n768 3 True 3\n0\n'via-popen\\nsecond\\n'\nTrue 512\npopen write mode\n\
         ['1', '2']\nBlockingIOError [Errno 11] Resource temporarily unavailable\n\
         BlockingIOError [Errno 11] Resource temporarily unavailable\n\
         [Errno 10] No child processes\n[Errno 3] No such process\n"
    );
}

#[test]
fn which_finds_what_the_shell_finds() {
    let out = out_of(
        "mkdir -p bin && printf '#!/bin/sh\\necho tool ran\\n' > bin/tool && chmod +x bin/tool \
         && printf 'x\\n' > bin/notexec",
        r#"import os, shutil, subprocess
print(shutil.which("ls"), shutil.which("python3"), shutil.which("sh"), shutil.which("no-such-tool"))
os.environ["PATH"] = os.path.abspath("bin") + ":" + os.environ["PATH"]
print(shutil.which("tool") == os.path.abspath("bin/tool"), shutil.which("notexec"))
print(subprocess.run(["tool"], capture_output=True, text=True).stdout.strip())
print(subprocess.run("command -v ls", shell=True, capture_output=True, text=True).stdout.split())
print(os.access("bin/tool", os.X_OK), os.access("bin/notexec", os.X_OK), os.access("/etc/passwd", os.W_OK))
"#,
    );
    assert_eq!(
        out,
        "/usr/bin/ls /usr/bin/python3 /usr/bin/sh None\nTrue None\ntool ran\n['/usr/bin/ls']\n\
         True False False\n"
    );
}

#[test]
fn scripts_and_nested_pythons() {
    let out = out_of(
        "printf '#!/bin/bash\\necho \"building $1\"\\nexit 4\\n' > build.sh && chmod +x build.sh \
         && printf 'import sys\\nprint(\"child\", sys.argv[1:])\\nsys.exit(7)\\n' > child.py",
        r#"import subprocess, sys
r = subprocess.run(["./build.sh", "release"], capture_output=True, text=True)
print(r.returncode, r.stdout.strip())
r = subprocess.run([sys.executable, "child.py", "a", "b"], capture_output=True, text=True)
print(r.returncode, r.stdout.strip())
r = subprocess.run(["python3", "-c", "import subprocess; print(subprocess.check_output(['echo', 'deep'], text=True).strip())"],
                   capture_output=True, text=True)
print(r.returncode, r.stdout.strip(), r.stderr)
"#,
    );
    assert_eq!(out, "4 building release\n7 child ['a', 'b']\n0 deep \n");
}

#[test]
fn python_command_line_bullets() {
    let mut sb = sandbox();
    let (out, err, code) = sh(&mut sb, "python3 missing.py");
    assert_eq!(out, "");
    assert!(
        err.starts_with("python3: can't open file '/")
            && err.ends_with("/missing.py': [Errno 2] No such file or directory\n"),
        "{err}"
    );
    assert_eq!(code, 2);
    let (out, err, code) = sh(
        &mut sb,
        "echo '{\"b\": 1, \"a\": [1, 2]}' | python3 -m json.tool",
    );
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        (
            "{\n    \"b\": 1,\n    \"a\": [\n        1,\n        2\n    ]\n}\n",
            "",
            0
        )
    );
    sb.put_file(
        "test_math.py",
        b"import unittest\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(1 + 1, 2)\n",
    )
    .expect("write");
    let (out, err, code) = sh(&mut sb, "python3 -m unittest 2>&1 | head -3");
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with(".\n---"), "{out}");
    assert!(out.contains("Ran 1 test in "), "{out}");
    let (out, _, code) = sh(
        &mut sb,
        "python3 -c \"import urllib.request; urllib.request.urlopen('https://example.com')\" 2>&1 | tail -1",
    );
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>\n"
    );
}

/// `EPHEMERAL_SH='...' cargo test --release --test python_processes -- --ignored adhoc --nocapture`
#[test]
#[ignore]
fn adhoc() {
    let cmd = std::env::var("EPHEMERAL_SH").unwrap_or_else(|_| "python3 -c 'print(1)'".into());
    let (out, err, code) = sh(&mut sandbox(), &cmd);
    eprintln!("exit {code}\n--- stdout\n{out}--- stderr\n{err}");
}
