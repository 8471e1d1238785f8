#!/usr/bin/env python3
"""Records what real bash does for every case of cases/*.txt into expected.jsonl.

Each file of `cases/` is one theme (`everyday`, `archives`, `jobs`, …): one
case per line, or a block of lines between a line `>>>` and a line `<<<`;
lines starting with `#` are comments.

Each case runs as `bash -c CASE` the way the sandbox runs it: as user
`worker` (uid/gid 1000, through a private /etc/passwd), in a fresh
`/tmp/ephemeral-run-XXXXXX/scratch` folder that is also HOME, with the
sandbox's environment, and inside an empty network namespace (so `curl`
fails to resolve exactly as in the sandbox, and nothing leaves the
machine). Needs root (unshare, mount, setpriv from util-linux).

    sudo python3 runtime/tests/differential/record.py            # every case
    sudo python3 runtime/tests/differential/record.py --missing  # only cases not recorded yet
    sudo python3 runtime/tests/differential/record.py --check --date '2027-02-03 04:05:06'

`--check` records nothing: it runs every case again and lists those whose
result differs from expected.jsonl. With `--date` (Debian's `faketime`)
the cases run on another day and time, which is how a case that depends
on the calendar or the clock is found: none may.

The working folder's path is written `$SCRATCH` in the recorded output, so
it can be compared with the sandbox's own random folder.
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
EXPECTED = HERE / "expected.jsonl"
TIMEOUT_S = 20
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"


def parse(text):
    """The cases of one theme file, in order."""
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
    return out


def cases():
    """(theme, case) for every case of cases/*.txt, themes in name order."""
    out = []
    for path in sorted((HERE / "cases").glob("*.txt")):
        out.extend((path.stem, c) for c in parse(path.read_text()))
    seen = set()
    for _, c in out:
        if c in seen:
            sys.exit(f"case recorded twice: {c!r}")
        seen.add(c)
    return out


def identity_files(tmp):
    passwd = tmp / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\nworker:x:1000:1000:worker:/tmp:/bin/bash\n")
    group = tmp / "group"
    group.write_text("root:x:0:\nworker:x:1000:\n")
    return passwd, group


def run(case, passwd, group, date=None):
    run_dir = pathlib.Path(tempfile.mkdtemp(prefix="ephemeral-run-", dir="/tmp"))
    scratch = run_dir / "scratch"
    scratch.mkdir()
    for p in (run_dir, scratch):
        os.chown(p, 1000, 1000)
    env = {
        "HOME": str(scratch), "USER": "worker", "LOGNAME": "worker",
        "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": "UTC",
        "SHELL": "/bin/bash", "HOSTNAME": "sandbox", "PWD": str(scratch),
    }
    # libfaketime straight from the environment: the `faketime` wrapper's
    # shared memory is root's, and the case runs as `worker`.
    fake = f"env LD_PRELOAD={FAKETIME_LIB} FAKETIME='@{date}' " if date else ""
    # The case's stdout and stderr are pipes that `worker` itself made (as
    # a sandbox's are its own), so `/dev/stdout` and `/dev/fd/N` open as
    # they do for an agent's shell; the root-owned pipes of this recorder
    # are only at the far end.
    relay = 'bash -c "$1" 2> >(cat >&2) | cat; exit ${PIPESTATUS[0]}'
    inner = (
        f"mount --bind {passwd} /etc/passwd && mount --bind {group} /etc/group && "
        f"exec setpriv --reuid=1000 --regid=1000 --clear-groups -- {fake}bash -c '{relay}' relay \"$1\""
    )
    try:
        p = subprocess.run(
            # The case is an argument, not an environment variable, so
            # `env` and `declare -p` inside it see only the sandbox's set.
            ["unshare", "--net", "--mount", "--fork", "sh", "-c", inner, "sh", case],
            cwd=scratch, env=env, stdin=subprocess.DEVNULL, capture_output=True,
            timeout=TIMEOUT_S,
        )
        out, err, code = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out, err, code = e.stdout or b"", e.stderr or b"", 124
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)

    def norm(b):
        return b.decode("utf-8", "replace").replace(str(scratch), "$SCRATCH")
    return {"stdout": norm(out), "stderr": norm(err), "status": code}


def recorded():
    if not EXPECTED.exists():
        return {}
    rows = (json.loads(line) for line in EXPECTED.read_text().splitlines() if line)
    return {row["cmd"]: row for row in rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--missing", action="store_true", help="record only cases not in expected.jsonl")
    ap.add_argument("--check", action="store_true", help="record nothing; list cases that differ")
    ap.add_argument("--date", help="run bash at this date and time (needs faketime)")
    ap.add_argument("--theme", help="only the cases of this theme")
    args = ap.parse_args()
    if args.date and not os.path.exists(FAKETIME_LIB):
        sys.exit("--date needs faketime (apt-get install faketime)")
    old = recorded()
    todo = [(t, c) for t, c in cases() if not args.theme or t == args.theme]
    with tempfile.TemporaryDirectory() as t:
        passwd, group = identity_files(pathlib.Path(t))
        os.chmod(t, 0o755)
        if args.check:
            differ = 0
            for theme, case in todo:
                got = run(case, passwd, group, args.date)
                want = old.get(case)
                if want is None or any(want[k] != got[k] for k in got):
                    differ += 1
                    print(f"[{theme}] {case!r}\n  recorded {want}\n  now      {got}")
            print(f"{differ} of {len(todo)} cases differ")
            sys.exit(1 if differ else 0)
        rows = {}
        for theme, case in todo:
            if args.missing and case in old:
                rows[case] = dict(old[case], theme=theme)
            else:
                rows[case] = {"theme": theme, "cmd": case, **run(case, passwd, group, args.date)}
    # Cases of other themes (with --theme) keep their recording; cases no
    # longer in cases/ are dropped.
    every = cases()
    with open(EXPECTED, "w") as f:
        for theme, case in every:
            row = rows.get(case) or (dict(old[case], theme=theme) if case in old else None)
            if row is None:
                continue
            row = {"theme": theme, "cmd": case, "stdout": row["stdout"],
                   "stderr": row["stderr"], "status": row["status"]}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    fresh = sum(1 for _, c in todo if not (args.missing and c in old))
    print(f"recorded {fresh} cases; expected.jsonl holds {len(every)}")


if __name__ == "__main__":
    main()
