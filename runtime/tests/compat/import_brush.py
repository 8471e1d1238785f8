#!/usr/bin/env python3
"""Converts brush's bash-compatibility cases into cases.jsonl.

brush (https://github.com/reubeno/brush, MIT) keeps its compatibility tests
as YAML under brush-shell/tests/cases/compat/; bash is their oracle. This
keeps the cases that run as a plain script (`bash -c SCRIPT`, in a fresh
folder holding the case's test files) and drops the ones that need what a
sandbox does not have or what `bash -c` cannot show: interactive mode, job
control, signals, a terminal, other processes, the network, or programs
other than bash + coreutils/grep/sed/awk/jq/python3. It prints why each
dropped case was dropped.

    python3 runtime/tests/compat/import_brush.py [BRUSH_GIT_DIR_OR_CHECKOUT]

The default source is the bare git directory the `fetch` tool makes
(/work/.mirror/reubeno+brush/repo); a plain checkout works too. Needs
PyYAML (Debian: python3-yaml).

Each line of cases.jsonl:
  {"suite": "builtins/declare", "name": ..., "cmd": SCRIPT,
   "files": {path: contents}?, "executable": [path]?, "ignore_stderr": bool}
`suite` is the YAML file's path under cases/compat/ without `.yaml`
(stems alone collide: arrays, arithmetic). Paths in `files` are relative
to the working folder.
"""
import collections
import json
import pathlib
import posixpath
import re
import shlex
import subprocess
import sys

import yaml

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_SOURCE = "/work/.mirror/reubeno+brush/repo"
CASES_DIR = "brush-shell/tests/cases/compat"

BUILTINS = set(
    ". : [ alias bg bind break builtin caller cd command compgen complete compopt continue "
    "declare dirs disown echo enable eval exec exit export false fc fg getopts hash help "
    "history jobs kill let local logout mapfile popd printf pushd pwd read readarray "
    "readonly return set shift shopt source suspend test times trap true type typeset "
    "ulimit umask unalias unset wait".split()
)
KEYWORDS = set(
    "if then else elif fi case esac for select while until do done in function time "
    "{ } ! [[ ]] coproc".split()
)
COREUTILS = set(
    "cat chgrp chmod chown cp date dd df dir echo false ln ls mkdir mknod mktemp mv pwd "
    "readlink rm rmdir sleep sync touch true uname vdir [ arch b2sum base32 base64 "
    "basename basenc cksum comm csplit cut dircolors dirname du env expand expr factor "
    "fmt fold groups head hostid id install join link logname md5sum mkfifo nice nl nohup "
    "nproc numfmt od paste pathchk pr printenv printf ptx realpath seq sha1sum sha224sum "
    "sha256sum sha384sum sha512sum shred shuf sort split stat stdbuf sum tac tail tee "
    "test timeout tr truncate tsort unexpand uniq unlink wc whoami yes".split()
)
OTHER_PROGRAMS = set("which bash grep egrep fgrep sed awk mawk gawk jq python3 python".split())
ALLOWED = BUILTINS | KEYWORDS | COREUTILS | OTHER_PROGRAMS
# Commands that exist on a Debian machine (or commonly) but are out of scope;
# a word in command position not in ALLOWED is only treated as "another
# program" when it is one of these or is found on this machine's PATH, so
# deliberately unknown commands (`nonexistent-cmd`) stay.
KNOWN_PROGRAMS = set(
    "sh dash zsh ksh ps pgrep pkill top find xargs diff cmp file less more vi vim nano "
    "tput stty tty script hostname getent su sudo curl wget nc ncat socat ssh perl ruby "
    "node gcc make git tar gzip gunzip zcat bc dc od hexdump xxd strace ltrace man "
    "info which whereis locate ip ifconfig ping users who pinky uptime free lsof "
    "setsid flock logger systemctl service".split()
)
# Builtins that only mean something interactively, with job control, or with
# signals and other processes.
REASON_WORDS = {
    "history": "interactive: history/fc/bind/complete",
    "fc": "interactive: history/fc/bind/complete",
    "bind": "interactive: history/fc/bind/complete",
    "complete": "interactive: history/fc/bind/complete",
    "compopt": "interactive: history/fc/bind/complete",
    "jobs": "job control",
    "fg": "job control",
    "bg": "job control",
    "disown": "job control",
    "suspend": "job control",
    "wait": "job control",
    "coproc": "coprocess (concurrency)",
    "kill": "signals",
    "ulimit": "process limits (ulimit)",
}
SIGNAL_RE = re.compile(
    r"\b(SIG[A-Z]+[0-9]*|INT|TERM|HUP|USR[12]|QUIT|KILL|CHLD|ALRM|PIPE|WINCH|TSTP|TTIN|TTOU|"
    r"CONT|STOP|SEGV|ABRT|BUS|FPE|ILL|TRAP|URG|XCPU|XFSZ|VTALRM|PROF|IO|PWR|SYS|RTMIN|RTMAX)\b"
)


class Source:
    """Reads files of brush's repository, bare git directory or checkout."""

    def __init__(self, path):
        self.path = pathlib.Path(path)
        self.bare = not (self.path / "brush-shell").is_dir()

    def git(self, *args):
        return subprocess.run(
            ["git", f"--git-dir={self.path}", *args], check=True, capture_output=True
        ).stdout.decode()

    def commit(self):
        if self.bare:
            return self.git("rev-parse", "HEAD").strip()
        try:
            return subprocess.run(
                ["git", "-C", str(self.path), "rev-parse", "HEAD"], capture_output=True, check=True
            ).stdout.decode().strip()
        except Exception:
            return "unknown"

    def list(self, under):
        if self.bare:
            return self.git("ls-tree", "-r", "--name-only", "HEAD", under).split()
        return sorted(
            str(p.relative_to(self.path)) for p in (self.path / under).rglob("*") if p.is_file()
        )

    def read(self, path):
        if self.bare:
            return self.git("show", f"HEAD:{path}")
        return (self.path / path).read_text()


def strip_quotes_and_comments(script):
    """The script with quoted text blanked and comments removed (roughly),
    so syntax checks see only shell syntax."""
    out, i, n = [], 0, len(script)
    while i < n:
        c = script[i]
        if c == "\\" and i + 1 < n:
            out.append("__")
            i += 2
        elif c == "'":
            j = script.find("'", i + 1)
            j = n if j < 0 else j
            out.append("''")
            i = j + 1
        elif c == '"':
            j = i + 1
            while j < n and script[j] != '"':
                j += 2 if script[j] == "\\" else 1
            out.append('""')
            i = j + 1
        elif c == "#" and (i == 0 or script[i - 1] in " \t\n;(|&"):
            j = script.find("\n", i)
            j = n if j < 0 else j
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


# A lookahead, so that overlapping matches (`if tput ...`) are all found.
CMD_POS_RE = re.compile(
    r"(?=(?:\b(?:then|do|else|elif|if|while|until|exec|command|builtin|time|!)\s|^|[;&|(`{\n]|\$\()"
    r"[ \t]*(?:[A-Za-z_][A-Za-z0-9_]*=\S*[ \t]+)*([A-Za-z_./\[][A-Za-z0-9_.+/\[-]*)(?=[\s;|&)<>]|$))"
)


def drop_reason(script, files):
    """Why a script cannot run as a plain sandboxed script, or None."""
    bare = strip_quotes_and_comments(script)
    # Arithmetic commands and expansions hold no command words.
    bare = re.sub(r"\(\([^()]*(?:\([^()]*\)[^()]*)*\)\)", "(( ))", bare)
    # A lone `&` (not &&, >&, <&, &>, |&) starts a background job.
    syntax = re.sub(r"&&|[<>]&|&>>?|\|&", " ", bare)
    if "&" in syntax:
        return "background jobs (&)"
    if re.search(r"\$!", bare):
        return "background jobs (&)"
    if "/proc" in script:
        return "/proc"
    if re.search(r"/dev/(tcp|udp)/", script):
        return "network"
    if "/dev/tty" in script:
        return "terminal"
    if re.search(r"\bset +[-+][a-zA-Z]*m|\bset +-o +monitor|\bset +-b\b", bare):
        return "job control"
    if re.search(r"\b(PS[0124]|PROMPT_COMMAND|HISTFILE|HISTSIZE)\b", script):
        return "interactive: prompt/history variables"
    if re.search(r"\btrap\b", bare) and (SIGNAL_RE.search(script) or re.search(r"\btrap +-l", bare)):
        return "signals (trap on a signal)"
    if re.search(r"\bkill\b", bare):
        return "signals"
    defined = set(re.findall(r"(?:^|[\s;{(])(?:function\s+)?([A-Za-z_][\w.:-]*)\s*\(\s*\)", script))
    defined |= set(re.findall(r"\bfunction\s+([A-Za-z_][\w.:-]*)", script))
    defined |= set(re.findall(r"\balias\s+(?:-\S+\s+)*([\w.-]+)=", script))
    for m in CMD_POS_RE.finditer(bare):
        word = m.group(1)
        name = posixpath.basename(word)
        if word in REASON_WORDS:
            return REASON_WORDS[word]
        if word in ALLOWED or word in defined or posixpath.normpath(word) in files:
            continue
        if name in KNOWN_PROGRAMS or (not "/" in word and shutil_which(word)):
            if name == "sh":
                return "program sh (dash on Debian)"
            return f"program {name}"
    return None


def shutil_which(word):
    import shutil

    return word not in ALLOWED and shutil.which(word, path="/usr/local/bin:/usr/bin:/bin")


def convert(suite, case, common_files, src, yaml_dir):
    """(record, None) for a kept case or (None, reason)."""
    if case.get("skip"):
        return None, "skipped by brush (skip: true)"
    if case.get("pty"):
        return None, "terminal (pty)"
    if case.get("ignore_stdout"):
        return None, "brush ignores stdout (nondeterministic)"
    if case.get("snapshot") or case.get("expected_stdout") is not None:
        return None, "brush-specific expectation"
    if case.get("home_dir") not in (None, "."):
        return None, "needs a different HOME folder"
    if case.get("removed_default_args") or case.get("additional_test_args"):
        return None, "brush-specific command line"

    files, executable = {}, []
    for f in list(common_files) + list(case.get("test_files") or []):
        if "source_path" in f:
            contents = src.read(posixpath.normpath(posixpath.join(yaml_dir, f["source_path"])))
        else:
            contents = f.get("contents", "")
        files[f["path"]] = contents
        if f.get("executable"):
            executable.append(f["path"])

    args = [str(a) for a in case.get("args") or []]
    stdin = case.get("stdin")
    if args:
        if any(a in ("-i", "--login", "-l", "-s", "--rcfile", "-t") for a in args):
            return None, "interactive/login/stdin-reading bash invocation"
        if stdin is not None:
            if "history" in args:
                return None, "interactive: history/fc/bind/complete"
            if not set(args) <= {"-e", "-u", "-x", "-f"}:
                return None, "needs stdin input with command-line arguments"
            # `bash -e < SCRIPT` is `set -e` before the script's first line.
            args, stdin = [], f"set {' '.join(args)}; {stdin}"
    if len(args) == 2 and args[0] == "-c":
        cmd = args[1]
    elif args:
        # `bash SCRIPT ARGS...`, `bash -c CMD ARGS...`, `bash -x SCRIPT`:
        # run as a nested bash with the same argv.
        cmd = shlex.join(["bash", *args])
    elif stdin is not None:
        # brush pipes the script to bash's stdin; here it is `bash -c`'s
        # argument (stdin is empty), which is how the sandbox runs commands.
        cmd = stdin
    else:
        return None, "no script"
    script_text = cmd + "\n" + "\n".join(files.values())

    # `hexdump -C` (bsdextrautils, not in the sandbox's set) shows bytes;
    # GNU od shows the same bytes.
    if re.search(r"\bhexdump -C\b", cmd):
        cmd = re.sub(r"\bhexdump -C\b", "od -A x -t x1z -v", cmd)
        script_text = cmd + "\n" + "\n".join(files.values())

    env = case.get("env") or {}
    if env:
        if set(env) - {"HOME"}:
            return None, "interactive: prompt/history variables"
        # Same first line, so line numbers in messages stay those of the case.
        cmd = "".join(f"export {k}={shlex.quote(str(v))}; " for k, v in env.items()) + cmd

    reason = drop_reason(script_text, files)
    if reason:
        return None, reason
    row = {"suite": suite, "name": case["name"], "cmd": cmd}
    if files:
        row["files"] = files
    if executable:
        row["executable"] = executable
    row["ignore_stderr"] = bool(case.get("ignore_stderr"))
    return row, None


def main():
    src = Source(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_SOURCE)
    rows, dropped = [], collections.Counter()
    dropped_by_suite = collections.Counter()
    total = 0
    for path in src.list(CASES_DIR):
        if not path.endswith(".yaml"):
            continue
        suite = path[len(CASES_DIR) + 1 : -len(".yaml")]
        doc = yaml.safe_load(src.read(path)) or {}
        common = doc.get("common_test_files") or []
        seen = set()
        for case in doc.get("cases") or []:
            total += 1
            row, reason = convert(suite, case, common, src, posixpath.dirname(path))
            if row is None:
                dropped[reason] += 1
                dropped_by_suite[suite] += 1
                continue
            # Names are unique per suite.
            base, k = row["name"], 2
            while row["name"] in seen:
                row["name"] = f"{base} ({k})"
                k += 1
            seen.add(row["name"])
            rows.append(row)
    with open(HERE / "cases.jsonl", "w") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"brush commit {src.commit()}: {total} cases under {CASES_DIR}/")
    print(f"kept {len(rows)}, dropped {total - len(rows)}:")
    for reason, n in dropped.most_common():
        print(f"  {n:5}  {reason}")


if __name__ == "__main__":
    main()
