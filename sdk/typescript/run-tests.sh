#!/usr/bin/env bash
# The TypeScript SDK's tests: install the pinned dev dependencies (from
# package-lock.json, into a cache outside the working tree), compile the SDK
# and its tests with tsc, then run them with Node's own runner against a real
# `ephemeral serve` that each test file starts (test/support/server.ts).
#
#   EPHEMERAL_BIN=path/to/ephemeral   the server binary (default: the release build)
#   EPHEMERAL_SDK_ONLY_RUNS=1         leave out the sandboxes, run files and models
#                                     tests (their endpoints are still landing)
#   extra arguments                   passed to `node --test` (e.g. --test-name-pattern=…)
#
# The exit status is the tests'.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

bin="${EPHEMERAL_BIN:-/var/cache/ephemeral/target/release/ephemeral}"
if [[ ! -x "$bin" ]]; then
    echo "run-tests.sh: no server binary at $bin (set EPHEMERAL_BIN)" >&2
    exit 2
fi
# Absolute, since the tests run from this folder, not the caller's.
EPHEMERAL_BIN="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
export EPHEMERAL_BIN
cd "$here"

# node_modules keyed by the lockfile's hash: a new lockfile gets a fresh
# install, an unchanged one installs nothing. Installed into a temporary
# folder and renamed, so two runners at once never see half an install.
cache_root="${EPHEMERAL_SDK_CACHE:-/var/cache/ephemeral}"
hash="$(sha256sum package-lock.json | cut -c1-16)"
deps="$cache_root/sdk-ts-node_modules-$hash"
if [[ ! -x "$deps/node_modules/.bin/tsc" ]]; then
    rm -rf "$deps" # an install that is not whole is no use
    echo "run-tests.sh: npm ci into $deps" >&2
    mkdir -p "$cache_root"
    tmp="$(mktemp -d "$cache_root/.sdk-ts-install.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    chmod 755 "$tmp" # mktemp's 700 would keep it from other users of the cache
    cp package.json package-lock.json "$tmp/"
    (cd "$tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    if ! mv -T "$tmp" "$deps" 2>/dev/null; then
        # Another runner got there first; theirs is as good as ours.
        rm -rf "$tmp"
    fi
    trap - EXIT
fi

# tsc finds @types/node through --typeRoots, so nothing is linked into the
# working tree; dist/ and build/ are the build's outputs (.gitignore).
tsc="$deps/node_modules/.bin/tsc"
rm -rf dist build
"$tsc" -p tsconfig.json
"$tsc" -p tsconfig.test.json --typeRoots "$deps/node_modules/@types"

tests=(build/test/*.test.js)
if [[ "${EPHEMERAL_SDK_ONLY_RUNS:-}" == "1" ]]; then
    kept=()
    for t in "${tests[@]}"; do
        case "$(basename "$t")" in
            sandboxes.test.js | files.test.js | models.test.js) ;;
            *) kept+=("$t") ;;
        esac
    done
    tests=("${kept[@]}")
fi

# Test files run one after another: each starts its own server, and the
# machine's cores are shared with the Rust builds. The spec reporter unless
# the caller picked one.
reporter=(--test-reporter=spec)
for a in "$@"; do [[ "$a" == --test-reporter* ]] && reporter=(); done
exec node --test --test-concurrency=1 --test-timeout=300000 "${reporter[@]}" "$@" "${tests[@]}"
