"""The ways the mutation fuzzer feeds one input, by name: the fuzz tests run them on drawn inputs, and
tests/folding/test_kept_fuzz_finds.py runs them again on every input a long run ever failed on. Not a test
module.

    python tests/fuzz_runs.py keep finds.jsonl   # each failure of a STREAMFOLD_FUZZ_REPORT file, kept

A kept find is one JSON file under tests/folding/fuzz_finds/: the run's name, its options, where it
raised and what, and the input in base64. Its name is a hash of the input and options, so keeping the
same find twice writes one file.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import strategies as st

from mutations import CAPTURES, INPUTS, check_result, guarded, json_mutated, mutated
from streamfold import DEFAULT_MAX_FRAME_SIZE, DIALECTS, Folder, fold
from streamfold.cli.common import read_input
from streamfold.cli.main import cli
from streamfold.framing import TRANSPORTS
from streamfold.services import FORMATS, InputError, load

__all__ = ["CASES", "FINDS", "RUNS", "keep", "run_case"]

FINDS = Path(__file__).resolve().parent / "folding" / "fuzz_finds"


def fold_whole(data: bytes) -> None:
    check_result(fold(data))


def fold_in_chunks(data: bytes, cuts: list[int]) -> None:
    points = sorted({cut % (len(data) + 1) for cut in cuts})
    folder = Folder()
    for start, end in zip([0, *points], [*points, len(data)]):
        folder.feed(data[start:end])
    folder.finish()
    result = folder.close()
    whole = fold(data)
    assert result == whole, "fed in chunks, the Result differs from fold()"
    assert list(result.frames) == list(whole.frames), "fed in chunks, the frames differ"
    check_result(result)


def fold_forced(data: bytes, dialect: str | None, transport: str | None, max_frame_size: int) -> None:
    check_result(fold(data, dialect=dialect, transport=transport, max_frame_size=max_frame_size))


def read_as_file(data: bytes, suffix: str, input_format: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"capture{suffix}"
        path.write_bytes(data)
        try:
            loaded = load(read_input(str(path)), input_format=input_format)
        except InputError:  # the documented refusal: this input cannot be used
            return
    check_result(loaded.result)


def run_command(data: bytes, command: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "capture.sse"
        path.write_bytes(data)
        done = CliRunner().invoke(cli, [*command, str(path)], env={"COLUMNS": "100", "NO_COLOR": "1"})
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        raise done.exception
    assert done.exit_code in (0, 2), done.output


RUNS: dict[str, Callable[..., None]] = {"fold": fold_whole, "json values": fold_whole, "chunks": fold_in_chunks,
                                        "forced": fold_forced, "readers": read_as_file, "cli": run_command}
COMMANDS = [["show"], ["show", "--json"], ["show", "--annotate"], ["--quiet", "show"], ["--color", "always", "show"],
            ["frames"], ["frames", "--jsonl"], ["export"], ["blame", "--offset", "0"]]
#: What each run is given: `data`, and its options. The fuzz tests draw these; so does the long run.
CASES: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "fold": st.fixed_dictionaries({"data": mutated()}),
    "json values": st.fixed_dictionaries({"data": json_mutated()}),
    "chunks": st.fixed_dictionaries({"data": mutated(), "cuts": st.lists(st.integers(min_value=0), max_size=30)}),
    "forced": st.fixed_dictionaries({
        "data": st.one_of(mutated(), json_mutated(), st.sampled_from(sorted(CAPTURES.values()))),
        "dialect": st.sampled_from([None, *sorted(DIALECTS)]), "transport": st.sampled_from([None, *TRANSPORTS]),
        "max_frame_size": st.sampled_from([DEFAULT_MAX_FRAME_SIZE, 4096, 200, 16])}),
    "readers": st.fixed_dictionaries({
        "data": st.one_of(mutated(INPUTS), mutated(), json_mutated()),
        "suffix": st.sampled_from([".har", ".log", ".txt", ".sse", ".ndjson", ".json", ".bin", ""]),
        "input_format": st.sampled_from(FORMATS)}),
    "cli": st.fixed_dictionaries({"data": st.one_of(mutated(), json_mutated()), "command": st.sampled_from(COMMANDS)}),
}


def run_case(name: str, case: dict[str, Any]) -> None:
    """Run one drawn case of `name` (see `guarded`: a long run records a failure and goes on)."""
    options = {key: value for key, value in case.items() if key != "data"}
    guarded(name, case["data"], lambda: RUNS[name](**case), **options)


def keep(report: Path) -> list[Path]:
    """Write each failure recorded in `report` (a STREAMFOLD_FUZZ_REPORT file) under FINDS."""
    written = []
    FINDS.mkdir(exist_ok=True)
    for line in report.read_text().splitlines():
        record: dict[str, Any] = json.loads(line)
        if record.get("input") is None:  # too large to record; the report names where it raised
            continue
        name = hashlib.sha256(json.dumps([record["test"], record["options"], record["input"]]).encode()).hexdigest()
        path = FINDS / f"{record['test'].replace(' ', '-')}-{name[:12]}.json"
        kept = {key: record[key] for key in ("test", "options", "type", "where", "message")}
        path.write_text(json.dumps({**kept, "input": record["input"]}, indent=1) + "\n")
        written.append(path)
    return written


def replay(path: Path) -> None:
    """Run a kept find the way the fuzzer ran it."""
    find = json.loads(path.read_text())
    RUNS[find["test"]](base64.b64decode(find["input"]), **find["options"])


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "keep":
        sys.exit(__doc__)
    for written in keep(Path(sys.argv[2])):
        print(written.relative_to(Path.cwd()) if written.is_relative_to(Path.cwd()) else written)
