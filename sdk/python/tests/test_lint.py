"""The SDK stays clean: ruff over the package, tests and examples; mypy --strict over the package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SDK = Path(__file__).resolve().parents[1]
EXAMPLES = SDK.parents[1] / "examples"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=SDK, capture_output=True, text=True,
                          timeout=300, check=False)


def test_ruff() -> None:
    targets = ["src", "tests", *([str(EXAMPLES)] if EXAMPLES.is_dir() else [])]
    done = run("ruff", "check", "--no-cache", *targets)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict() -> None:
    pytest.importorskip("mypy")
    cache = Path(sys.prefix) / "mypy-cache"
    done = run("mypy", "--cache-dir", str(cache))
    assert done.returncode == 0, done.stdout + done.stderr
