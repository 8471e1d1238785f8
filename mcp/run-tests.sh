#!/usr/bin/env bash
# The MCP server as the official MCP Python client (`mcp` on PyPI) sees it.
#
#   mcp/run-tests.sh [PYTEST_ARGS...]
#       against the real binary: EPHEMERAL_BIN (the `ephemeral` binary; its
#       `mcp` subcommand is the stdio server) and, for the HTTP tests,
#       EPHEMERAL_URL + EPHEMERAL_API_KEY (a running `ephemeral serve`);
#       without EPHEMERAL_URL, starts `$EPHEMERAL_BIN serve` itself (SQLite
#       in a temporary folder) with a key of its own.
#   mcp/run-tests.sh --fake [PYTEST_ARGS...]
#       against examples/fake_server (the crate's fake sandboxes), which it
#       builds and, for HTTP, starts on 127.0.0.1: proves the protocol
#       interop without the edge.
#
# The virtualenv lives under $EPHEMERAL_CACHE/venv-mcp (default
# /var/cache/ephemeral), one per hash of tests/python/requirements.txt.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cache="${EPHEMERAL_CACHE:-/var/cache/ephemeral}"
requirements="$here/tests/python/requirements.txt"
say() { echo "mcp tests: $*" >&2; }

# 1. The virtualenv, made once per requirements.txt (Debian's python3 when
# there is one: the version the requirements were checked with).
python="python3"
[[ -x /usr/bin/python3 ]] && python=/usr/bin/python3
key="$({ cat "$requirements"; "$python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-16)"
venv="$cache/venv-mcp/$key"
if [[ ! -f "$venv/.complete" ]]; then
    say "creating $venv"
    rm -rf "$venv"
    mkdir -p "$cache/venv-mcp"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$requirements"
    touch "$venv/.complete"
    # Older keys' virtualenvs are of no further use.
    find "$cache/venv-mcp" -mindepth 1 -maxdepth 1 -type d ! -name "$key" -exec rm -rf {} +
fi

# 2. The server under test.
server_pid=""
cleanup() {
    if [[ -n "$server_pid" ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
}
trap cleanup EXIT

if [[ "${1:-}" == "--fake" ]]; then
    shift
    target="${CARGO_TARGET_DIR:-$root/target}"
    say "building examples/fake_server"
    (cd "$root" && CARGO_TARGET_DIR="$target" nice -n 19 cargo build --quiet -j1 -p ephemeral-mcp --example fake_server)
    export EPHEMERAL_BIN="$target/debug/examples/fake_server"
    export EPHEMERAL_API_KEY="fake-key-$RANDOM$RANDOM"
    log="$(mktemp)"
    "$EPHEMERAL_BIN" serve 127.0.0.1:0 "$EPHEMERAL_API_KEY" > "$log" 2>&1 &
    server_pid=$!
    for _ in $(seq 100); do
        url="$(sed -n 's/^listening on //p' "$log")"
        [[ -n "$url" ]] && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$log" >&2; say "the fake server died"; exit 1; }
        sleep 0.1
    done
    [[ -n "$url" ]] || { say "the fake server did not start"; exit 1; }
    export EPHEMERAL_URL="$url"
    say "fake server at $EPHEMERAL_URL"
fi

[[ -n "${EPHEMERAL_BIN:-}" ]] || { say "set EPHEMERAL_BIN (the ephemeral binary), or pass --fake"; exit 2; }
if [[ -z "${EPHEMERAL_URL:-}" ]]; then
    data="$(mktemp -d)"
    log="$data/serve.log"
    export EPHEMERAL_API_KEY="$("$EPHEMERAL_BIN" keys create --org mcp-tests --data "$data")"
    "$EPHEMERAL_BIN" serve --listen 127.0.0.1:0 --data "$data" --isolation "${EPHEMERAL_MCP_ISOLATION:-wasm}" > "$log" 2>&1 &
    server_pid=$!
    url=""
    for _ in $(seq 300); do
        url="$(sed -n 's/^ephemeral: listening on //p' "$log" | head -n 1)"
        [[ -n "$url" ]] && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$log" >&2; say "the server died"; exit 1; }
        sleep 0.1
    done
    [[ -n "$url" ]] || { cat "$log" >&2; say "the server did not start"; exit 1; }
    export EPHEMERAL_URL="$url"
    say "ephemeral serve at $EPHEMERAL_URL"
fi

# 3. The tests.
cd "$here/tests/python"
status=0
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest -p no:cacheprovider -v "$@" test_mcp_client.py || status=$?
if [[ -n "$server_pid" ]]; then
    sleep 0.3
    say "the server's last word: $(tail -n 1 "$log")"
fi
exit "$status"
