#!/usr/bin/env python3
"""Records what real bash does for every case of cases.jsonl into expected.jsonl.

The same way as ../differential/record.py: each case runs as `bash -c CMD`
as user `worker` (uid/gid 1000, through a private /etc/passwd), in a fresh
`/tmp/ephemeral-run-XXXXXX/scratch` folder that is also HOME and holds the
case's `files`, with the sandbox's environment and an empty stdin, inside
an empty network namespace (nothing leaves the machine). Needs root
(unshare, mount, setpriv from util-linux).

    sudo python3 runtime/tests/compat/record.py

The scratch folder's path is written `$SCRATCH` in the recorded output and
its parent's `$RUNDIR`. Every case runs twice; a case whose two runs differ
(pids, times, random names) is dropped, as is one that times out.
"""
import collections
import concurrent.futures
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
TIMEOUT_S = 20
# Cases slower than this in bash are dropped, so the replay stays quick.
SLOW_S = 5


def identity_files(tmp):
    passwd = tmp / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\nworker:x:1000:1000:worker:/tmp:/bin/bash\n")
    group = tmp / "group"
    group.write_text("root:x:0:\nworker:x:1000:\n")
    for p in (tmp, passwd, group):
        os.chmod(p, 0o755 if p == tmp else 0o644)
    return passwd, group


def run(case, passwd, group):
    """(stdout, stderr, status, seconds) of one run of `case` under bash."""
    run_dir = pathlib.Path(tempfile.mkdtemp(prefix="ephemeral-run-", dir="/tmp"))
    scratch = run_dir / "scratch"
    scratch.mkdir()
    for p in (run_dir, scratch):
        os.chown(p, 1000, 1000)
    for rel, contents in (case.get("files") or {}).items():
        path = scratch / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(contents)
        os.chmod(path, 0o755 if rel in (case.get("executable") or []) else 0o644)
        for p in [path, *path.relative_to(scratch).parents]:
            os.chown(scratch / p, 1000, 1000)
    env = {
        "HOME": str(scratch), "USER": "worker", "LOGNAME": "worker",
        "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": "UTC",
        "SHELL": "/bin/bash", "HOSTNAME": "sandbox", "PWD": str(scratch),
    }
    inner = (
        f"mount --bind {passwd} /etc/passwd && mount --bind {group} /etc/group && "
        "exec setpriv --reuid=1000 --regid=1000 --clear-groups -- bash -c \"$1\""
    )
    start = time.monotonic()
    try:
        p = subprocess.run(
            # The case is an argument, not an environment variable (which
            # `env`, `set` and `declare -p` would show).
            ["unshare", "--net", "--mount", "--fork", "sh", "-c", inner, "sh", case["cmd"]],
            cwd=scratch, env=env, stdin=subprocess.DEVNULL,
            capture_output=True, timeout=TIMEOUT_S,
        )
        out, err, code = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out, err, code = e.stdout or b"", e.stderr or b"", 124
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    seconds = time.monotonic() - start

    def norm(b):
        text = b.decode("utf-8", "replace")
        return text.replace(str(scratch), "$SCRATCH").replace(str(run_dir), "$RUNDIR")

    return norm(out), norm(err), code, seconds


def record(case, passwd, group):
    """The expected row for `case`, or (None, why it was dropped)."""
    a = run(case, passwd, group)
    if a[2] == 124 and a[3] >= TIMEOUT_S:
        return None, "times out in bash"
    if a[3] > SLOW_S:
        return None, f"slower than {SLOW_S} s in bash"
    b = run(case, passwd, group)
    if a[:3] != b[:3]:
        same_out = a[0] == b[0] and a[2] == b[2]
        if not (same_out and case.get("ignore_stderr")):
            return None, "nondeterministic in bash"
    row = dict(case)
    row.update(stdout=a[0], stderr=a[1], status=a[2])
    return row, None


def main():
    if os.geteuid() != 0:
        sys.exit("record.py needs root (unshare, mount, setpriv)")
    cases = [json.loads(line) for line in (HERE / "cases.jsonl").read_text().splitlines() if line]
    with tempfile.TemporaryDirectory() as t:
        passwd, group = identity_files(pathlib.Path(t))
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda c: record(c, passwd, group), cases))
    rows = [r for r, _ in results if r is not None]
    dropped = collections.Counter(why for r, why in results if r is None)
    with open(HERE / "expected.jsonl", "w") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"recorded {len(rows)} of {len(cases)} cases")
    for (why, n) in dropped.most_common():
        print(f"  dropped {n:4}  {why}")
    for (r, why), c in zip(results, cases):
        if r is None:
            print(f"    {why}: {c['suite']}: {c['name']}")


if __name__ == "__main__":
    main()
