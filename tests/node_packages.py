"""The npm packages the suite uses, installed once into tests/node/node_modules (gitignored) from
tests/node's package.json and lock: the `ai` SDK's readers (tests/dialects/test_vercel_node.py) and
ESLint (tests/project/test_javascript_lint.py). Not a test module.

One install serves every test: it is redone only when package.json or the lock is newer than the
last one, under a file lock, so xdist's workers never run npm in the same folder at once. Without
node or npm, or when the install fails (no registry), `missing` says why and the tests skip with it.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

__all__ = ["NODE_DIR", "missing"]

NODE_DIR = Path(__file__).resolve().parent / "node"


def missing(*packages: str) -> str | None:
    """None once `packages` are installed under tests/node, else why they cannot be."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return "node or npm is not on PATH"
    with open(NODE_DIR / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _up_to_date():
            try:
                done = subprocess.run([npm, "ci", "--prefix", str(NODE_DIR), "--no-audit", "--no-fund"],
                                      capture_output=True, text=True, timeout=240)
            except (OSError, subprocess.TimeoutExpired) as exc:
                return f"npm install failed: {exc}"
            if done.returncode != 0:
                return f"npm install failed: {done.stderr.strip()[-400:]}"
    absent = [name for name in packages if not (NODE_DIR / "node_modules" / name / "package.json").is_file()]
    return f"npm installed no {', '.join(absent)}" if absent else None


def _up_to_date() -> bool:
    stamp = NODE_DIR / "node_modules" / ".package-lock.json"
    return stamp.exists() and all(stamp.stat().st_mtime >= (NODE_DIR / name).stat().st_mtime
                                  for name in ("package.json", "package-lock.json"))
