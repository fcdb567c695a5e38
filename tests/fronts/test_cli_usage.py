"""Usage through the real program: group options after the command, one-line usage errors, --stall."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
REASONING, BROKEN = str(EXAMPLES / "openai-reasoning.sse"), str(EXAMPLES / "openai-broken.sse")


def streamfold(*args: str, stdin: str = "") -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "streamfold", *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=60)
    return done.returncode, done.stdout, done.stderr


def test_group_options_work_after_the_command_too() -> None:
    before = streamfold("--quiet", "show", REASONING)
    after = streamfold("show", "--quiet", REASONING)
    assert before[0] == after[0] == 0 and before[1] == after[1]
    assert after[1].startswith("The sky looks blue") and "usage" not in after[1]
    assert streamfold("show", REASONING, "-q")[1] == before[1]
    assert streamfold("show", BROKEN, "--strict")[0] == 1
    assert streamfold("show", BROKEN)[0] == 0
    assert "\x1b[" in streamfold("show", REASONING, "--color", "always")[1]
    assert "\x1b[" not in streamfold("--color", "always", "show", REASONING, "--color", "never")[1]


@pytest.mark.parametrize(("args", "line"), [
    (["show"], "streamfold show: missing FILE (try: streamfold show --help)"),
    (["diff", "a"], "streamfold diff: missing B (try: streamfold diff --help)"),
    (["check", REASONING], "streamfold check: missing option --expect (try: streamfold check --help)"),
    (["show", "--jsn", REASONING],
     "streamfold show: unknown option --jsn; did you mean --json? (try: streamfold show --help)"),
    (["--colr", "never", "show", REASONING],
     "streamfold: unknown option --colr; did you mean --color? (try: streamfold --help)"),
    (["shw", REASONING], "streamfold: unknown command 'shw'; did you mean show? (try: streamfold --help)"),
    (["blame", REASONING, "--offset", "q"],
     "streamfold blame: invalid --offset: 'q' is not a valid integer (try: streamfold blame --help)"),
])
def test_a_usage_error_is_one_line_and_a_hint(args: list[str], line: str) -> None:
    code, out, err = streamfold(*args)
    assert (code, out, err) == (2, "", line + "\n")


@pytest.mark.parametrize("command", ["show", "tail"])
@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "-inf", "soon"])
def test_stall_must_be_a_positive_finite_number(command: str, value: str) -> None:
    code, out, err = streamfold(command, "--stall", value, REASONING)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"streamfold {command}: invalid --stall: ") and f"(try: streamfold {command} --help)" in err


def test_a_good_stall_still_works() -> None:
    assert streamfold("show", "--stall", "0.5", REASONING)[0] == 0
