"""The mutation fuzzer: every capture, mutated (bytes, lines, splices, JSON values; tests/mutations.py),
through every way in: `fold`, a `Folder` fed random chunks, every forced dialect and transport, and the
input readers. Bad input never raises (h11's invariant): a Result comes back, its JSON is strict and
reads back to the same Result, and it exports (or refuses, NotImplementedError) the same.

Every run draws the same 150 inputs per test; the long run (new inputs) is tests/mutations.py's to say.
The runs themselves are in tests/fuzz_runs.py, shared with the kept finds (test_fuzz_finds.py).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fuzz_runs import RUNS
from mutations import CAPTURES, FUZZ, INPUTS, guarded, json_mutated, mutated
from streamfold import DEFAULT_MAX_FRAME_SIZE, DIALECTS
from streamfold.framing import TRANSPORTS
from streamfold.services import FORMATS


@FUZZ
@given(data=mutated())
def test_a_mutated_capture_folds_to_a_value(data: bytes) -> None:
    guarded("fold", data, lambda: RUNS["fold"](data))


@FUZZ
@given(data=json_mutated())
def test_a_capture_with_hostile_json_values_folds_to_a_value(data: bytes) -> None:
    guarded("json values", data, lambda: RUNS["json values"](data))


@FUZZ
@given(data=mutated(), cuts=st.lists(st.integers(min_value=0), max_size=30))
def test_a_mutated_capture_folds_the_same_in_random_chunks(data: bytes, cuts: list[int]) -> None:
    guarded("chunks", data, lambda: RUNS["chunks"](data, cuts), cuts=cuts)


@FUZZ
@given(data=st.one_of(mutated(), json_mutated(), st.sampled_from(sorted(CAPTURES.values()))),
       dialect=st.sampled_from([None, *sorted(DIALECTS)]), transport=st.sampled_from([None, *TRANSPORTS]),
       max_frame_size=st.sampled_from([DEFAULT_MAX_FRAME_SIZE, 4096, 200, 16]))
def test_every_forced_dialect_and_transport(data: bytes, dialect: str | None, transport: str | None,
                                            max_frame_size: int) -> None:
    guarded("forced", data, lambda: RUNS["forced"](data, dialect, transport, max_frame_size),
            dialect=dialect, transport=transport, max_frame_size=max_frame_size)


@FUZZ
@given(data=st.one_of(mutated(INPUTS), mutated(), json_mutated()),
       suffix=st.sampled_from([".har", ".log", ".txt", ".sse", ".ndjson", ".json", ".bin", ""]),
       input_format=st.sampled_from(FORMATS))
def test_the_input_readers(data: bytes, suffix: str, input_format: str) -> None:
    guarded("readers", data, lambda: RUNS["readers"](data, suffix, input_format), suffix=suffix,
            input_format=input_format)
