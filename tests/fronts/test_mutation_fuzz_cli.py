"""The mutation fuzzer (tests/mutations.py) through the command line's readers of one capture: show
(plain, --json, --annotate, --quiet, coloured), frames (table, --jsonl), export and blame. Whatever the
bytes, the command ends with its exit code (2 for unusable input), never with an exception."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fuzz_runs import RUNS
from mutations import FUZZ, guarded, json_mutated, mutated

COMMANDS = [["show"], ["show", "--json"], ["show", "--annotate"], ["--quiet", "show"], ["--color", "always", "show"],
            ["frames"], ["frames", "--jsonl"], ["export"], ["blame", "--offset", "0"]]


@FUZZ
@given(data=st.one_of(mutated(), json_mutated()), command=st.sampled_from(COMMANDS))
def test_the_command_line_never_raises(data: bytes, command: list[str]) -> None:
    guarded("cli", data, lambda: RUNS["cli"](data, command), command=command)
