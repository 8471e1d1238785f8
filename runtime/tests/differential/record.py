#!/usr/bin/env python3
"""Records what real bash does for every case of cases.txt into expected.jsonl.

Each case runs as `bash -c CASE` the way the sandbox runs it: as user
`worker` (uid/gid 1000, through a private /etc/passwd), in a fresh
`/tmp/ephemeral-run-XXXXXX/scratch` folder that is also HOME, with the
sandbox's environment, and inside an empty network namespace (so `curl`
fails to resolve exactly as in the sandbox, and nothing leaves the
machine). Needs root (unshare, mount, setpriv from util-linux).

    sudo python3 runtime/tests/differential/record.py

The working folder's path is written `$SCRATCH` in the recorded output, so
it can be compared with the sandbox's own random folder.
"""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
TIMEOUT_S = 20


def cases():
    """The cases of cases.txt, in order."""
    out, block = [], None
    for line in (HERE / "cases.txt").read_text().split("\n"):
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
    return out


def identity_files(tmp):
    passwd = tmp / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\nworker:x:1000:1000:worker:/tmp:/bin/bash\n")
    group = tmp / "group"
    group.write_text("root:x:0:\nworker:x:1000:\n")
    return passwd, group


def run(case, passwd, group):
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
    inner = (
        f"mount --bind {passwd} /etc/passwd && mount --bind {group} /etc/group && "
        "exec setpriv --reuid=1000 --regid=1000 --clear-groups -- bash -c \"$1\""
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
    return {"cmd": case, "stdout": norm(out), "stderr": norm(err), "status": code}


def main():
    with tempfile.TemporaryDirectory() as t:
        passwd, group = identity_files(pathlib.Path(t))
        rows = [run(c, passwd, group) for c in cases()]
    with open(HERE / "expected.jsonl", "w") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"recorded {len(rows)} cases")


if __name__ == "__main__":
    main()
