"""The web page's JavaScript keeps the project's ESLint rules (eslint.config.mjs at the root): ESLint and
its rules come from npm, locked in tests/node (tests/node_packages.py installs them once). Without node
or npm, or with no registry to install from, the test skips and says why.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from node_packages import NODE_DIR, missing

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "src" / "streamfold" / "web" / "static"


def _eslint(*arguments: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    reason = missing("eslint", "@eslint/js", "globals")
    if reason is not None:
        pytest.skip(f"ESLint is not available: {reason}")
    return subprocess.run([str(NODE_DIR / "node_modules" / ".bin" / "eslint"), "--max-warnings", "0", *arguments],
                          cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=120)


def test_eslint_finds_nothing_in_the_page_s_modules() -> None:
    done = _eslint(str(STATIC.relative_to(ROOT)))
    assert done.returncode == 0, done.stdout + done.stderr


def test_eslint_reads_the_page_s_modules_and_fails_on_an_error() -> None:
    """The config applies to the page's files (a file no config matches would pass unread)."""
    probe = str((STATIC / "js" / "lint-probe.js").relative_to(ROOT))
    done = _eslint("--stdin", "--stdin-filename", probe, stdin="document.body.innerHTML = undefinedName;\n")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "'undefinedName' is not defined" in done.stdout and "must never become markup" in done.stdout, done.stdout
