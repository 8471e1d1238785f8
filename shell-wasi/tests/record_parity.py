#!/usr/bin/env python3
"""Records what real `bash -c` and the GNU tools do for a parity case file.

A case file holds one command string a line, or a block of lines between a
line `>>>` and a line `<<<`; lines starting with `#` are comments. Each
case runs as

    env -i HOME=$DIR PATH=/usr/bin:/bin USER=worker LANG=C.UTF-8 bash -c CASE

in a fresh temporary `$DIR` that is also its working folder, with empty
stdin, and becomes a Rust `Case { script, stdout, stderr, status }` entry
(the folder's path written `$DIR`). The output is a Rust file meant for
`include!` by a parity test:

    python3 shell-wasi/tests/record_parity.py shell-wasi/tests/programs_parity/cases.txt \
        > shell-wasi/tests/programs_parity/recorded.rs

Never edit the output by hand: change the case file and record again.
"""
import pathlib
import subprocess
import sys
import tempfile

TIMEOUT_S = 20


def parse(text):
    """The cases of a case file, in order."""
    out, block = [], None
    for line in text.split("\n"):
        if block is not None:
            if line == "<<<":
                out.append("\n".join(block))
                block = None
            else:
                block.append(line)
        elif line == ">>>":
            block = []
        elif line.strip() and not line.startswith("#"):
            out.append(line)
    if block is not None:
        sys.exit("a `>>>` block is not closed by `<<<`")
    if len(set(out)) != len(out):
        sys.exit("a case is written twice")
    return out


def run(case):
    """(stdout, stderr, status) of one case, the folder written `$DIR`."""
    with tempfile.TemporaryDirectory() as d:
        env = ["env", "-i", f"HOME={d}", "PATH=/usr/bin:/bin", "USER=worker", "LANG=C.UTF-8"]
        try:
            p = subprocess.run(env + ["bash", "-c", case], cwd=d, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=TIMEOUT_S)
            out, err, status = p.stdout, p.stderr, p.returncode
        except subprocess.TimeoutExpired:
            sys.exit(f"case timed out: {case!r}")

        def text(b):
            # The parity runner reads output as lossy UTF-8 too.
            return b.decode("utf-8", "replace").replace(d, "$DIR")
        return text(out), text(err), status


def rust_str(s):
    """A Rust string literal for `s`."""
    out = ['"']
    for c in s:
        if c == "\\":
            out.append("\\\\")
        elif c == '"':
            out.append('\\"')
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{{{ord(c):x}}}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    source = pathlib.Path(sys.argv[1])
    cases = parse(source.read_text())
    print(f"// Recorded by tests/record_parity.py from {source.name}: do not edit by hand.")
    print("const RECORDED: &[Case] = &[")
    for case in cases:
        out, err, status = run(case)
        print("    Case {")
        print(f"        script: {rust_str(case)},")
        print(f"        stdout: {rust_str(out)},")
        print(f"        stderr: {rust_str(err)},")
        print(f"        status: {status},")
        print("    },")
    print("];")


if __name__ == "__main__":
    main()
