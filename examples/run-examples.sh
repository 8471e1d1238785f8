#!/usr/bin/env bash
# Runs both examples end to end, with nothing leaving the machine: a real
# `ephemeral serve` (SQLite in a temporary folder, in-process sandboxes) and
# fake_openai.py standing in for the model provider. Checks that each
# example's answer quotes what its commands printed in the sandbox, and that
# agent_loop.py used plain completions while the Agents SDK example streamed.
#
#   examples/run-examples.sh                 # EPHEMERAL_BIN picks the server binary
#
# Makes (or reuses) a virtualenv named after the hash of requirements.txt;
# the SDK is taken from ../sdk/python/src.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
bin="${EPHEMERAL_BIN:-/var/cache/ephemeral/target/release/ephemeral}"
python="${PYTHON:-python3}"
if [ ! -x "$bin" ]; then
    echo "run-examples.sh: no server binary at $bin (build it, or set EPHEMERAL_BIN)" >&2
    exit 2
fi

cache=/var/cache/ephemeral
if ! { mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ]; }; then
    cache="${XDG_CACHE_HOME:-$HOME/.cache}/ephemeral"
    mkdir -p "$cache"
fi
hash="$( { cat "$here/requirements.txt"; "$python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-16)"
venv="$cache/examples-venv-$hash"
if [ ! -f "$venv/.complete" ]; then
    echo "==> making $venv" >&2
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
    touch "$venv/.complete"
fi
py="$venv/bin/python"

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

free_port() {
    "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_for() {  # URL SECONDS: until it answers 200
    "$py" - "$1" "$2" <<'PY'
import sys, time, urllib.request
url, deadline = sys.argv[1], time.monotonic() + float(sys.argv[2])
while time.monotonic() < deadline:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            if r.status == 200:
                sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit(f"{url} did not answer in time")
PY
}

# The server.
port="$(free_port)"
cat >"$work/config.toml" <<EOF
listen = "127.0.0.1:$port"
data_dir = "$work"
isolation = "wasm"
default_model = "ephemeral/script"
shutdown_grace_seconds = 2
EOF
key="$("$bin" keys create --org examples --config "$work/config.toml" 2>"$work/keys.log" | grep -o 'eph_[0-9A-Za-z_]*' | head -n1)"
"$bin" orgs set --org examples --balance-micros 10000000 --per-run-cap-micros 1000000 \
    --config "$work/config.toml" >/dev/null
EPHEMERAL_PROGRAMS_DIR="${EPHEMERAL_PROGRAMS_DIR:-/var/cache/ephemeral/programs}" \
EPHEMERAL_CACHE_DIR="${EPHEMERAL_CACHE_DIR:-/var/cache/ephemeral/components}" \
    "$bin" serve --config "$work/config.toml" >"$work/serve.log" 2>&1 &
pids+=("$!")
wait_for "http://127.0.0.1:$port/v1/health" 60 || { tail -n 20 "$work/serve.log" >&2; exit 1; }

# The fake provider.
"$py" "$here/fake_openai.py" --port 0 --port-file "$work/openai.port" --log "$work/openai.jsonl" \
    >"$work/openai.log" 2>&1 &
pids+=("$!")
for _ in $(seq 100); do [ -s "$work/openai.port" ] && break; sleep 0.1; done
wait_for "http://127.0.0.1:$(cat "$work/openai.port")/v1/models" 10

export EPHEMERAL_URL="http://127.0.0.1:$port" EPHEMERAL_API_KEY="$key"
export OPENAI_BASE_URL="http://127.0.0.1:$(cat "$work/openai.port")/v1"
export OPENAI_API_KEY=fake-key FAKE_OPENAI_KEY=fake-key MODEL=fake-model
export OPENAI_AGENTS_DISABLE_TRACING=1 PYTHONPATH="$root/sdk/python/src" PYTHONDONTWRITEBYTECODE=1

passed=0
failed=0
# run_example FILE STREAMED: runs it, checks its answer and how it called the model.
run_example() {
    local name="$1" streamed="$2" out="$work/$1.out" err="$work/$1.err"
    : >"$work/openai.jsonl"
    if timeout 180 "$py" "$here/$name" "What is 6 times 7, and the sum of 0..9?" >"$out" 2>"$err" &&
        grep -q 'The sandbox said:.*42.*45' "$out" &&
        "$py" - "$work/openai.jsonl" "$streamed" <<'PY'
import json, sys
calls = [json.loads(line) for line in open(sys.argv[1])]
want = sys.argv[2] == "true"
assert [c["answer"] for c in calls] == ["tool_call", "tool_call", "text"], calls
assert all(c["stream"] is want for c in calls), f"stream should be {want}: {calls}"
assert all(c["tools"] == ["shell"] for c in calls), calls
PY
    then
        echo "PASS $name: $(tail -n 1 "$out")"
        passed=$((passed + 1))
    else
        echo "FAIL $name" >&2
        sed 's/^/  stdout: /' "$out" >&2
        tail -n 30 "$err" | sed 's/^/  stderr: /' >&2
        failed=$((failed + 1))
    fi
}

run_example agent_loop.py false
run_example openai_agents_tool.py true
echo "examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
