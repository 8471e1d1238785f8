#!/usr/bin/env bash
# Builds the console into dist/ (checked in, so a user's machine needs no
# node): dist/index.html, dist/assets/app.js, dist/assets/app.css and the
# icon. Reproducible: the same sources and lockfile give the same bytes.
#
#   ./build.sh           build into dist/
#   ./build.sh --check   build into a temporary folder and fail (exit 1) if it
#                        differs from the checked-in dist/
#
# The pinned devDependencies (package-lock.json) are installed with `npm ci`
# into a cache keyed by the lockfile's hash, outside the working tree, as
# sdk/typescript/run-tests.sh does. Prints the folder's path on stdout when
# called as `./build.sh --deps` (the tests use it to find puppeteer-core).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

cache_root="${EPHEMERAL_CONSOLE_CACHE:-/var/cache/ephemeral}"
hash="$(sha256sum package-lock.json | cut -c1-16)"
deps="$cache_root/console-node_modules-$hash"
if [[ ! -f "$deps/.complete" ]]; then
    rm -rf "$deps" # an install that is not whole is no use
    echo "build.sh: npm ci into $deps" >&2
    mkdir -p "$cache_root"
    tmp="$(mktemp -d "$cache_root/.console-install.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    chmod 755 "$tmp"
    cp package.json package-lock.json "$tmp/"
    (cd "$tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    touch "$tmp/.complete"
    if ! mv -T "$tmp" "$deps" 2>/dev/null; then
        rm -rf "$tmp" # another runner got there first; theirs is as good as ours
    fi
    trap - EXIT
fi
export CONSOLE_DEPS="$deps/node_modules"

case "${1:-}" in
    --deps)
        echo "$deps/node_modules"
        ;;
    --check)
        out="$(mktemp -d)"
        trap 'rm -rf "$out"' EXIT
        node build.mjs "$out"
        if ! diff -r "$out" dist >/dev/null; then
            echo "build.sh --check: console/dist/ is not what the sources build; run console/build.sh and commit dist/" >&2
            diff -r "$out" dist | head -20 >&2 || true
            exit 1
        fi
        echo "build.sh --check: console/dist/ matches its sources" >&2
        ;;
    "")
        node build.mjs dist
        ;;
    *)
        echo "usage: build.sh [--check|--deps]" >&2
        exit 2
        ;;
esac
