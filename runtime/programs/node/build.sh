#!/usr/bin/env bash
# Builds node.wasm: the Boa JavaScript engine with a small Node-style runtime
# (src/runtime.js), as a wasi:cli/command component that imports no network.
#
#   runtime/programs/node/build.sh OUT_DIR
#
# Writes OUT_DIR/node.wasm, OUT_DIR/node-imports.txt (the WASI interfaces it
# imports) and OUT_DIR/node-LICENSE.txt (Boa's licence). Skips the build when
# its inputs are unchanged. Network: crates.io, on the first build only.
set -euo pipefail

STAMP_FORMAT=1

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:?usage: build.sh OUT_DIR}"
cache="${EPHEMERAL_CACHE:-/var/cache/ephemeral}"
target="$cache/node-target"
say() { echo "node.wasm: $*"; }

mkdir -p "$out"
out="$(cd "$out" && pwd)"

# What the result depends on: this script, the sources, the WIT, the
# manifest and lockfile, the licence text and the compiler.
inputs_hash="$(
    cd "$here"
    {
        echo "format $STAMP_FORMAT"
        rustc --version
        find -L build.sh Cargo.toml Cargo.lock LICENSE-boa.txt src wit -type f -print0 |
            sort -z | xargs -0 sha256sum
    } | sha256sum | cut -d' ' -f1
)"
stamp="$out/node.stamp"
outputs=(node.wasm node-imports.txt node-LICENSE.txt)
up_to_date=1
for f in "${outputs[@]}"; do [[ -s "$out/$f" ]] || up_to_date=0; done
if [[ $up_to_date == 1 && -f "$stamp" && "$(cat "$stamp")" == "$inputs_hash" ]]; then
    say "up to date ($out/node.wasm)"
    exit 0
fi

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
    say "adding the rustup target wasm32-wasip2"
    rustup target add wasm32-wasip2
fi

say "building (cargo, wasm32-wasip2, release; about 1 min, 3-4 min the first time)"
mkdir -p "$cache"
CARGO_TARGET_DIR="$target" cargo build --quiet --release --locked -j2 \
    --manifest-path "$here/Cargo.toml" --target wasm32-wasip2
built="$target/wasm32-wasip2/release/node.wasm"
[[ -s "$built" ]] || { say "cargo produced no $built"; exit 1; }

# The component's imports, from the names in its import section: a
# wasm32-wasip2 binary names each imported interface as a plain string.
stage="$(mktemp -d "$cache/node-build.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
LC_ALL=C grep -aoE 'wasi:[a-z-]+/[a-z-]+@[0-9]+\.[0-9]+\.[0-9]+' "$built" | sort -u > "$stage/imports.txt"
grep -q '^wasi:cli/run@' "$stage/imports.txt" || { say "not a wasi:cli/command component (no wasi:cli/run)"; exit 1; }
if grep -E '^wasi:(sockets|http)/' "$stage/imports.txt"; then
    say "the component imports the network (above)"
    exit 1
fi

cp "$built" "$stage/node.wasm"
cp "$here/LICENSE-boa.txt" "$out/node-LICENSE.txt"
cp "$stage/imports.txt" "$out/node-imports.txt"
mv "$stage/node.wasm" "$out/node.wasm"
echo "$inputs_hash" > "$stamp"
say "built $out/node.wasm ($(stat -c %s "$out/node.wasm") bytes); interfaces:"
sed 's/^/  /' "$out/node-imports.txt"
