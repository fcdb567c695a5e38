"""Rendered output on a terminal compared at a fixed width, 80 and 120 columns.

After an intended change of the rendering, regenerate with
`STREAMFOLD_UPDATE_GOLDEN=1 python -m pytest tests/folding/test_golden.py` and read the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from streamfold.cli import cli

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parents[1] / "golden"
CASES = [
    ("show", "openai-tool-calls.sse", 80),
    ("show", "openai-reasoning.sse", 80),
    ("show", "openai-broken.sse", 80),
    ("show", "openai-broken.sse", 120),
    ("frames", "openai-broken.sse", 80),
    ("frames", "openai-reasoning.sse", 120),
]


@pytest.mark.parametrize("command, example, width", CASES, ids=lambda v: str(v))
def test_rendering_matches_the_golden_file(command: str, example: str, width: int) -> None:
    # The layout on a terminal (a pipe gets the reply and the rows whole: test_cli_off_terminal.py).
    result = CliRunner().invoke(cli, ["--color", "never", command, str(ROOT / "examples" / example)],
                                env={"COLUMNS": str(width), "TTY_COMPATIBLE": "1"})
    assert result.exit_code == 0
    golden = GOLDEN / f"{command}-{example.removesuffix('.sse')}-{width}.txt"
    if os.environ.get("STREAMFOLD_UPDATE_GOLDEN"):
        golden.write_text(result.stdout)
    assert result.stdout == golden.read_text()
    assert max(len(line) for line in result.stdout.splitlines()) <= width
