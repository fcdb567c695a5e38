"""The package is typed (py.typed, mypy --strict): keep it true."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.mark.skipif(shutil.which("mypy") is None and not (Path(sys.executable).parent / "mypy").exists(),
                    reason="mypy is not installed")
def test_mypy_strict_passes_on_the_package() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", str(SRC / "streamfold")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
