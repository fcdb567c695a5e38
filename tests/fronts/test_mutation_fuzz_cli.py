"""The mutation fuzzer (tests/mutations.py) through the command line's readers of one capture: show
(plain, --json, --annotate, --quiet, coloured), frames (table, --jsonl), export and blame. Whatever the
bytes, the command ends with its exit code (2 for unusable input), never with an exception."""

from __future__ import annotations

from typing import Any

from hypothesis import given

from fuzz_runs import CASES, run_case
from mutations import FUZZ


@FUZZ
@given(case=CASES["cli"])
def test_the_command_line_never_raises(case: dict[str, Any]) -> None:
    run_case("cli", case)
