#!/usr/bin/env bash
# Tests of the Python SDK against a real `ephemeral serve` (started by the
# tests themselves). Makes or reuses a virtualenv named after the hash of
# requirements-test.txt and the Python version, installs the SDK into it
# (editable), and runs pytest with every marker; the exit status is pytest's.
#
#   sdk/python/run-tests.sh                      # everything
#   sdk/python/run-tests.sh -m "not sandboxes and not files and not models"
#   EPHEMERAL_BIN=/path/to/ephemeral sdk/python/run-tests.sh -k stream
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

python="${PYTHON:-python3}"
export EPHEMERAL_BIN="${EPHEMERAL_BIN:-/var/cache/ephemeral/target/release/ephemeral}"
if [ ! -x "$EPHEMERAL_BIN" ]; then
    echo "run-tests.sh: no server binary at $EPHEMERAL_BIN (build it, or set EPHEMERAL_BIN)" >&2
    exit 2
fi

cache=/var/cache/ephemeral
if ! { mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ]; }; then
    cache="${XDG_CACHE_HOME:-$HOME/.cache}/ephemeral"
    mkdir -p "$cache"
fi
hash="$( { cat requirements-test.txt; "$python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-16)"
venv="$cache/sdk-python-venv-$hash"

if [ ! -f "$venv/.complete" ]; then
    echo "==> making $venv" >&2
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
    touch "$venv/.complete"
fi
# The checkout may move (CI clones elsewhere): point the editable install here.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-deps --no-build-isolation -e "$here"

export PYTHONDONTWRITEBYTECODE=1
exec "$venv/bin/python" -m pytest "$@"
