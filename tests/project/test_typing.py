"""The package is typed (py.typed, mypy --strict): keep it true."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


needs_mypy = pytest.mark.skipif(
    shutil.which("mypy") is None and not (Path(sys.executable).parent / "mypy").exists(), reason="mypy is not installed")


@needs_mypy
def test_mypy_strict_passes_on_the_package() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", str(SRC / "streamfold")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


MERGE_PATHS = """
from streamfold.merge import Merger, ToolCallPath

merger = Merger()
merger.append((0, "content"), "a", 0)
merger.set_once((0, "tool", 3, "name"), "get_weather", 0)
call: ToolCallPath = (0, "tool", 3)
merger.append((*call, "arguments"), "{}", 0)
merger.replace(("usage",), {}, 0)
merger.append((0, "contnet"), "a", 0)  # line 10
merger.set_once((*call, "nmae"), "x", 0)  # line 11
merger.replace(("usgae",), {}, 0)  # line 12
"""


@needs_mypy
def test_a_misspelt_merge_path_is_a_type_error(tmp_path: Path) -> None:
    """Paths are typed: the canonical ones pass, a typo is rejected where it is written."""
    (tmp_path / "paths.py").write_text(MERGE_PATHS)
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "paths.py"],
                          capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "MYPYPATH": str(SRC)})
    rejected = sorted({int(line.split(":")[1]) for line in done.stdout.splitlines() if ": error:" in line})
    assert rejected == [10, 11, 12], done.stdout + done.stderr
