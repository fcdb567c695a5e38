"""No file of the project keeps a merge's conflict markers (a README once did)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(rb"^(<{7} |>{7} |={7}$)", re.MULTILINE)
TEXT = (".py", ".md", ".js", ".css", ".html", ".toml", ".txt", ".cfg", ".yml", ".yaml", ".json")


def test_no_conflict_markers_are_left() -> None:
    places = ["README.md", "pyproject.toml", ".ci/run", "src", "tests", "docs", "benchmarks", "examples"]
    files = [path for place in places for path in ([ROOT / place] if (ROOT / place).is_file()
                                                   else sorted((ROOT / place).rglob("*")))
             if path.is_file() and (path.suffix in TEXT or path.name == "run") and ".data" not in path.parts]
    assert len(files) > 100
    left = [str(path.relative_to(ROOT)) for path in files if MARKER.search(path.read_bytes())]
    assert left == []
