"""The mutation fuzzer: every capture, mutated (bytes, lines, splices, JSON values; tests/mutations.py),
through every way in: `fold`, a `Folder` fed random chunks, every forced dialect and transport, and the
input readers. Bad input never raises (h11's invariant): a Result comes back, its JSON is strict and
reads back to the same Result, and it exports (or refuses, NotImplementedError) the same.

The default run is small (STREAMFOLD_FUZZ_EXAMPLES, 150 per test); for a long run see tests/mutations.py.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from mutations import CAPTURES, FUZZ, INPUTS, check_result, guarded, json_mutated, mutated
from streamfold import DEFAULT_MAX_FRAME_SIZE, DIALECTS, Folder, fold
from streamfold.cli.common import read_input
from streamfold.framing import TRANSPORTS
from streamfold.services import FORMATS, InputError, load


@FUZZ
@given(data=mutated())
def test_a_mutated_capture_folds_to_a_value(data: bytes) -> None:
    guarded("fold", data, lambda: check_result(fold(data)))


@FUZZ
@given(data=json_mutated())
def test_a_capture_with_hostile_json_values_folds_to_a_value(data: bytes) -> None:
    guarded("json values", data, lambda: check_result(fold(data)))


@FUZZ
@given(data=mutated(), cuts=st.lists(st.integers(min_value=0), max_size=30))
def test_a_mutated_capture_folds_the_same_in_random_chunks(data: bytes, cuts: list[int]) -> None:
    def run() -> None:
        points = sorted({cut % (len(data) + 1) for cut in cuts})
        folder = Folder()
        for start, end in zip([0, *points], [*points, len(data)]):
            folder.feed(data[start:end])
        folder.finish()
        result = folder.close()
        assert result == fold(data), "fed in chunks, the Result differs from fold()"
        assert list(result.frames) == list(fold(data).frames), "fed in chunks, the frames differ"
        check_result(result)

    guarded("chunks", data, run, cuts=cuts)


@FUZZ
@given(data=st.one_of(mutated(), json_mutated(), st.sampled_from(sorted(CAPTURES.values()))),
       dialect=st.sampled_from([None, *sorted(DIALECTS)]), transport=st.sampled_from([None, *TRANSPORTS]),
       max_frame_size=st.sampled_from([DEFAULT_MAX_FRAME_SIZE, 4096, 200, 16]))
def test_every_forced_dialect_and_transport(data: bytes, dialect: str | None, transport: str | None,
                                            max_frame_size: int) -> None:
    guarded("forced", data,
            lambda: check_result(fold(data, dialect=dialect, transport=transport, max_frame_size=max_frame_size)),
            dialect=dialect, transport=transport, max_frame_size=max_frame_size)


@FUZZ
@given(data=st.one_of(mutated(INPUTS), mutated(), json_mutated()),
       suffix=st.sampled_from([".har", ".log", ".txt", ".sse", ".ndjson", ".json", ".bin", ""]),
       input_format=st.sampled_from(FORMATS))
def test_the_input_readers(data: bytes, suffix: str, input_format: str) -> None:
    def run() -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"capture{suffix}"
            path.write_bytes(data)
            try:
                loaded = load(read_input(str(path)), input_format=input_format)
            except InputError:  # the documented refusal: this input cannot be used
                return
        check_result(loaded.result)

    guarded("readers", data, run, suffix=suffix, input_format=input_format)
