"""Gives a clone's unchanged files the mtimes the previous build saw.

    python3 .ci/source_mtimes.py RECORD.json

Cargo decides freshness by mtime, and a fresh clone makes every file new.
RECORD maps each tracked path to (git blob hash, mtime in ns) as the last
run left it. A file whose hash matches, and that has no uncommitted change,
gets its recorded mtime back; every other file keeps its own. Then RECORD
is rewritten from the tree as it now is, for the next run.
"""
import json
import os
import subprocess
import sys


def git(*args):
    return subprocess.run(["git", *args], check=True, capture_output=True).stdout


def tracked():
    """path -> blob hash, for every regular file of the index."""
    files = {}
    for entry in git("ls-files", "-s", "-z").split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, blob, _stage = meta.split(b" ")
        if mode.startswith(b"100"):
            files[os.fsdecode(path)] = blob.decode()
    return files


def dirty():
    out = git("diff", "--name-only", "-z", "HEAD")
    return {os.fsdecode(p) for p in out.split(b"\0") if p}


def main(record_path):
    try:
        with open(record_path) as f:
            record = json.load(f)
    except (OSError, ValueError):
        record = {}
    files = tracked()
    changed = dirty()
    restored = 0
    for path, blob in files.items():
        seen = record.get(path)
        if seen and seen[0] == blob and path not in changed and os.path.isfile(path):
            os.utime(path, ns=(seen[1], seen[1]))
            restored += 1
    now = {}
    for path, blob in files.items():
        if path in changed:
            continue
        try:
            now[path] = [blob, os.stat(path).st_mtime_ns]
        except OSError:
            pass
    os.makedirs(os.path.dirname(record_path), exist_ok=True)
    tmp = record_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(now, f)
    os.replace(tmp, record_path)
    print(f"==> sources: {restored} of {len(files)} files keep the mtime the last build saw",
          file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
