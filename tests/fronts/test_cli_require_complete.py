"""`--require-complete` fails (exit 1) a stream that did not end as its protocol says, which
`--strict` alone lets pass when no frame was bad (a stream cut mid-frame, or cleanly between two
frames, has no error); why is one line on stderr. Real runs of the program, as CI runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPLETE = ROOT / "examples" / "openai-plain-text.sse"


def streamfold(*args: str) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "streamfold", *args], capture_output=True, text=True, env=env,
                          timeout=60, check=False)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def cut_mid_frame(tmp_path: Path) -> Path:
    body = COMPLETE.read_bytes()
    path = tmp_path / "cut-mid-frame.sse"
    path.write_bytes(body[: body.index(b"data:", 600) + 40])  # inside a frame's JSON
    return path


@pytest.fixture
def cut_between_frames(tmp_path: Path) -> Path:
    body = COMPLETE.read_bytes()
    path = tmp_path / "cut-between-frames.sse"
    path.write_bytes(body[: body.index(b"data:", 600)])  # after a frame's blank line: every frame whole
    return path


def test_strict_alone_passes_a_cut_stream_without_errors(cut_mid_frame: Path) -> None:
    assert streamfold("--strict", "show", str(cut_mid_frame))[0] == 0


@pytest.mark.parametrize("cut", ["cut_mid_frame", "cut_between_frames"])
def test_require_complete_fails_a_cut_stream_and_says_why(cut: str, request: pytest.FixtureRequest) -> None:
    path = str(request.getfixturevalue(cut))
    for args in (("--require-complete", "show", path), ("show", path, "--require-complete"),
                 ("--strict", "--require-complete", "show", "--json", path), ("--require-complete", "frames", path),
                 ("--require-complete", "export", path), ("-q", "show", path, "--require-complete")):
        code, out, err = streamfold(*args)
        assert code == 1, args
        assert out  # the output is still all there
        (line,) = [line for line in err.splitlines() if "--require-complete" in line]
        assert line.startswith("streamfold: --require-complete: the stream is incomplete (cut off or failed): ")
        assert "missing-terminal" in line


def test_require_complete_passes_a_complete_stream() -> None:
    for args in (("--require-complete", "show", str(COMPLETE)), ("--strict", "--require-complete", "frames",
                                                                 str(COMPLETE))):
        code, _, err = streamfold(*args)
        assert code == 0 and err == ""


def test_strict_says_which_errors_failed_it() -> None:
    code, _, err = streamfold("--strict", "show", str(ROOT / "examples" / "openai-broken.sse"))
    assert code == 1 and err == "streamfold: --strict: the stream had 1 error (invalid-json)\n"


def test_the_exit_codes_are_in_the_help() -> None:
    help_text = streamfold("--help")[1]
    assert "with --require-complete, it did not end as its protocol" in help_text
    assert "streamfold --strict --require-complete show capture.sse" in help_text
    assert "--require-complete" in streamfold("show", "--help")[1]
