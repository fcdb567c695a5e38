"""The code keeps the project's ruff rules ([tool.ruff] in pyproject.toml): keep it true."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

ruff = pytest.importorskip("ruff", reason="ruff is not installed (pip install '.[test]' brings it)")


def test_ruff_check_is_clean() -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "src", "tests", "benchmarks"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
