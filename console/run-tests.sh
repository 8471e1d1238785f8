#!/usr/bin/env bash
# The console's tests, in a real browser against a real server.
#
# Builds nothing in Rust: the server is $EPHEMERAL_BIN (default: the release
# build), which embeds console/dist/ at compile time — rebuild it after
# changing dist/. This script:
#   1. type-checks the sources (tsc --noEmit) and checks that dist/ is what
#      they build (./build.sh --check);
#   2. starts a fake OpenAI-wire model on loopback (tests/support/fake-llm.mjs:
#      the runs are real runs whose model turns are known in advance);
#   3. starts `ephemeral serve` on a free loopback port with its own
#      configuration and SQLite store in a temporary folder (in-process
#      `wasm` sandboxes: it starts in milliseconds), with two organisations:
#      `console` (a large balance) and `poor` (1,000 micros, for a 402);
#   4. runs `node --test tests/*.test.mjs`, which drive Debian's headless
#      Chromium (/usr/bin/chromium, or $CHROMIUM) with puppeteer-core from
#      ./build.sh --deps. Screenshots land in a temporary folder, or in
#      screenshots/ (the README's, checked in) with UPDATE_SCREENSHOTS=1,
#      so a test run leaves the clone as it found it.
#
#   EPHEMERAL_BIN=path/to/ephemeral   the server binary
#   CHROMIUM=path/to/chromium          the browser (default /usr/bin/chromium)
#   test files (tests/x.test.mjs)      run only those
#   other arguments                    passed to `node --test` (e.g. --test-name-pattern=…)
#
# The exit status is the tests' (non-zero on any failure).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
caller="$PWD"
say() { echo "console tests: $*" >&2; }

bin="${EPHEMERAL_BIN:-/var/cache/ephemeral/target/release/ephemeral}"
if [[ ! -x "$bin" ]]; then
    say "no server binary at $bin (set EPHEMERAL_BIN)"
    exit 2
fi
EPHEMERAL_BIN="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
export EPHEMERAL_BIN
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
if [[ ! -x "$CHROMIUM" ]]; then
    say "no browser at $CHROMIUM (apt-get install chromium, or set CHROMIUM)"
    exit 2
fi
cd "$here"

# 1. Dependencies (cached by the lockfile's hash), types, dist/.
CONSOLE_DEPS="$(./build.sh --deps)"
export CONSOLE_DEPS
"$CONSOLE_DEPS/.bin/tsc" --noEmit -p tsconfig.json
./build.sh --check

work="$(mktemp -d "${TMPDIR:-/tmp}/ephemeral-console-tests.XXXXXX")"
server_pid=""
fake_pid=""
cleanup() {
    local status=$?
    for pid in "$server_pid" "$fake_pid"; do
        if [[ -n "$pid" ]]; then
            kill "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    if [[ $status -ne 0 && -f "$work/serve.log" ]]; then
        say "the server's last words:"
        tail -n 30 "$work/serve.log" >&2 || true
    fi
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT

# Waits for "<prefix>http://…" in a log file; prints the URL.
wait_url() {
    local log="$1" prefix="$2" pid="$3" url=""
    for _ in $(seq 600); do
        url="$(sed -n "s|^${prefix}\(http://[0-9.:]*\)\$|\1|p" "$log" | head -n 1)"
        [[ -n "$url" ]] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if [[ -z "$url" ]]; then
        cat "$log" >&2
        return 1
    fi
    echo "$url"
}

# 2. The fake model.
node tests/support/fake-llm.mjs > "$work/fake-llm.log" 2>&1 &
fake_pid=$!
FAKE_LLM_URL="$(wait_url "$work/fake-llm.log" "fake-llm: listening on " "$fake_pid")" || { say "the fake model did not start"; exit 1; }
export FAKE_LLM_URL

# 3. The server.
config="$work/config.toml"
cat > "$config" <<EOF
listen = "127.0.0.1:0"
data_dir = "$work/data"
isolation = "wasm"
default_model = "fake/seed"
shutdown_grace_seconds = 1

[models."fake/seed"]
provider = "openai"
upstream = "seed"
base_url = "$FAKE_LLM_URL/v1"
input_micros_per_million = 50000
output_micros_per_million = 200000
context_window = 128000
max_output_tokens = 4096

[models."fake/hostile"]
provider = "openai"
upstream = "hostile"
base_url = "$FAKE_LLM_URL/v1"
input_micros_per_million = 50000
output_micros_per_million = 200000
context_window = 128000
max_output_tokens = 4096
EOF
mkdir -p "$work/data"
export EPHEMERAL_CONFIG="$config"
export EPHEMERAL_PROGRAMS_DIR="${EPHEMERAL_PROGRAMS_DIR:-/var/cache/ephemeral/programs}"
export EPHEMERAL_CACHE_DIR="${EPHEMERAL_CACHE_DIR:-/var/cache/ephemeral/components}"

new_key() {
    local org="$1" balance="$2"
    "$EPHEMERAL_BIN" keys create --org "$org" --config "$config" | sed -n '/[^[:space:]]/{p;q}'
    "$EPHEMERAL_BIN" orgs set --org "$org" --balance-micros "$balance" --per-run-cap-micros 10000000 --config "$config" >/dev/null
}
EPHEMERAL_TEST_KEY="$(new_key console 100000000)"
EPHEMERAL_POOR_KEY="$(new_key poor 1000)"
export EPHEMERAL_TEST_KEY EPHEMERAL_POOR_KEY

# The client's variables are the client's: the server has no use for them.
env -u EPHEMERAL_URL -u EPHEMERAL_API_KEY "$EPHEMERAL_BIN" serve --config "$config" > "$work/serve.log" 2>&1 &
server_pid=$!
EPHEMERAL_URL="$(wait_url "$work/serve.log" "ephemeral: listening on " "$server_pid")" || { say "the server did not start"; exit 1; }
export EPHEMERAL_URL
export EPHEMERAL_SERVE_LOG="$work/serve.log"
for _ in $(seq 100); do
    curl -fsS "$EPHEMERAL_URL/v1/health" >/dev/null 2>&1 && break
    sleep 0.1
done
say "server at $EPHEMERAL_URL, fake model at $FAKE_LLM_URL"

# 4. The tests, one file after another (each starts its own browser; the
# machine's cores are shared).
if [[ "${UPDATE_SCREENSHOTS:-}" == 1 ]]; then
    export SCREENSHOTS_DIR="$here/screenshots"
else
    export SCREENSHOTS_DIR="$work/screenshots"
fi
mkdir -p "$SCREENSHOTS_DIR"
# Test files named among the arguments run instead of all of them.
reporter=(--test-reporter=spec)
options=()
tests=()
for a in "$@"; do
    case "$a" in
        --test-reporter*) reporter=(); options+=("$a") ;;
        *.test.mjs) tests+=("$(cd "$caller" && cd "$(dirname "$a")" && pwd)/$(basename "$a")") ;;
        *) options+=("$a") ;;
    esac
done
[[ ${#tests[@]} -gt 0 ]] || tests=("$here"/tests/*.test.mjs)
status=0
node --test --test-concurrency=1 --test-timeout=300000 "${reporter[@]}" "${options[@]}" "${tests[@]}" || status=$?
exit "$status"
