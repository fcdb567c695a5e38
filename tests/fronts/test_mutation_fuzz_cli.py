"""The mutation fuzzer (tests/mutations.py) through the command line's readers of one capture: show
(plain, --json, --annotate, --quiet, coloured), frames (table, --jsonl), export and blame. Whatever the
bytes, the command ends with its exit code (2 for unusable input), never with an exception."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from mutations import FUZZ, guarded, json_mutated, mutated
from streamfold.cli.main import cli

COMMANDS = [["show"], ["show", "--json"], ["show", "--annotate"], ["--quiet", "show"], ["--color", "always", "show"],
            ["frames"], ["frames", "--jsonl"], ["export"], ["blame", "--offset", "0"]]


@FUZZ
@given(data=st.one_of(mutated(), json_mutated()), command=st.sampled_from(COMMANDS))
def test_the_command_line_never_raises(tmp_path_factory: pytest.TempPathFactory, data: bytes, command: list[str]) -> None:
    def run() -> None:
        path = tmp_path_factory.mktemp("capture") / "capture.sse"
        path.write_bytes(data)
        done = CliRunner().invoke(cli, [*command, str(path)], env={"COLUMNS": "100", "NO_COLOR": "1"})
        if done.exception is not None and not isinstance(done.exception, SystemExit):
            raise done.exception
        assert done.exit_code in (0, 2), done.output

    guarded("cli", data, run, command=command)
