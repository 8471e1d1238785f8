#!/usr/bin/env bash
# Builds python3.wasm: CPython (from componentize-py) with its whole pure-Python
# standard library pre-imported, as a wasi:cli/command component with no
# wasi:sockets import (a stub that refuses every socket is plugged in).
#
#   runtime/python/build.sh OUT_DIR
#
# Writes OUT_DIR/python3.wasm, OUT_DIR/python3-modules.txt (every stdlib
# module it holds), OUT_DIR/python3-modules-failed.txt (those that cannot
# import under WASI, with why) and OUT_DIR/python-LICENSE.txt. Skips the
# build when its inputs are unchanged. Network: PyPI (componentize-py) and
# crates.io (the two small Rust helpers), on the first build only.
set -euo pipefail

COMPONENTIZE_PY_VERSION=0.25.1
STAMP_FORMAT=1

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:?usage: build.sh OUT_DIR}"
cache="${EPHEMERAL_CACHE:-/var/cache/ephemeral}"
venv="$cache/python-venv"
tools_target="$cache/python-tools-target"
say() { echo "python3.wasm: $*"; }

mkdir -p "$out"
out="$(cd "$out" && pwd)"

# What the result depends on: this script, the driver and its processes
# module, the WIT (links followed), the helpers' sources and the pinned
# versions.
inputs_hash="$(
    cd "$here"
    {
        echo "componentize-py $COMPONENTIZE_PY_VERSION format $STAMP_FORMAT"
        find -L build.sh sandbox_python3.py sandbox_processes.py sandbox_pip.py sandbox_sqlite3.py wit socket-stub/Cargo.toml socket-stub/Cargo.lock socket-stub/src \
            socket-stub/wit plug/Cargo.toml plug/Cargo.lock plug/src -type f -print0 |
            sort -z | xargs -0 sha256sum
    } | sha256sum | cut -d' ' -f1
)"
stamp="$out/python3.stamp"
outputs=(python3.wasm python3-modules.txt python-LICENSE.txt)
up_to_date=1
for f in "${outputs[@]}"; do [[ -s "$out/$f" ]] || up_to_date=0; done
if [[ $up_to_date == 1 && -f "$stamp" && "$(cat "$stamp")" == "$inputs_hash" ]]; then
    say "up to date ($out/python3.wasm)"
    exit 0
fi

# 1. componentize-py, in its own venv.
if [[ "$("$venv/bin/componentize-py" --version 2>/dev/null || true)" != "componentize-py $COMPONENTIZE_PY_VERSION" ]]; then
    say "creating $venv with componentize-py $COMPONENTIZE_PY_VERSION"
    mkdir -p "$cache"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "componentize-py==$COMPONENTIZE_PY_VERSION"
fi
say "using $("$venv/bin/componentize-py" --version)"

# 2. The two Rust helpers (own workspaces and lockfiles, own target folder).
say "building the sockets stub (wasm32-wasip2) and the plug tool"
CARGO_TARGET_DIR="$tools_target" cargo build --quiet --release --locked \
    --manifest-path "$here/socket-stub/Cargo.toml" --target wasm32-wasip2
CARGO_TARGET_DIR="$tools_target" cargo build --quiet --release --locked \
    --manifest-path "$here/plug/Cargo.toml"
stub="$tools_target/wasm32-wasip2/release/ephemeral_socket_stub.wasm"
plug="$tools_target/release/ephemeral-python-plug"

# 3. componentize-py runs sandbox_python3.py once (pre-importing the stdlib) and
# snapshots the interpreter. The staging folder is mounted writable as /0;
# sandbox_python3.py leaves its module lists and CPython's licence there.
stage="$(mktemp -d "$cache/python-build.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/app" "$stage/no-site-packages"
cp "$here/sandbox_python3.py" "$here/sandbox_processes.py" "$here/sandbox_pip.py" "$here/sandbox_sqlite3.py" "$stage/app/"
touch "$stage/app/build-stage"
say "componentizing CPython with the standard library pre-imported (about 10-20 s)"
# VIRTUAL_ENV points at an empty folder so that no host site-packages are
# mounted into the build.
(cd "$stage/app" && VIRTUAL_ENV="$stage/no-site-packages" "$venv/bin/componentize-py" \
    --quiet -d "$here/wit" -w python3 componentize -p . sandbox_python3 -o "$stage/python3-raw.wasm") \
    2>&1 | grep -v "site-packages directory not found" || true
[[ -s "$stage/python3-raw.wasm" ]] || { say "componentize-py failed"; exit 1; }
say "pre-imported $(wc -l < "$stage/app/python3-modules.txt") modules; $(wc -l < "$stage/app/python3-modules-failed.txt") cannot import under WASI"

# 4. Plug the sockets stub in; the result must import no network at all.
say "plugging the sockets stub in"
"$plug" "$stage/python3-raw.wasm" "$stub" "$stage/python3.wasm" > "$stage/imports.txt"
if grep -E '^wasi:(sockets|http)/' "$stage/imports.txt"; then
    say "the component still imports the network (above)"
    exit 1
fi

cp "$stage/app/python3-modules.txt" "$stage/app/python3-modules-failed.txt" "$out/"
cp "$stage/imports.txt" "$out/python3-imports.txt"
if [[ -s "$stage/app/python-LICENSE.txt" ]]; then
    cp "$stage/app/python-LICENSE.txt" "$out/python-LICENSE.txt"
else
    say "warning: CPython's LICENSE was not found in the bundled stdlib"
    echo "CPython's LICENSE text was not found in componentize-py $COMPONENTIZE_PY_VERSION." > "$out/python-LICENSE.txt"
fi
mv "$stage/python3.wasm" "$out/python3.wasm"
echo "$inputs_hash" > "$stamp"
say "built $out/python3.wasm ($(stat -c %s "$out/python3.wasm") bytes); imports:"
sed 's/^/  /' "$out/python3-imports.txt"
