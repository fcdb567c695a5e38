"""The mutation fuzzer: every capture, mutated (bytes, lines, splices, JSON values; tests/mutations.py),
through every way in: `fold`, a `Folder` fed random chunks, every forced dialect and transport, and the
input readers. Bad input never raises (h11's invariant): a Result comes back, its JSON is strict and
reads back to the same Result, and it exports (or refuses, NotImplementedError) the same.

Every run draws the same 150 inputs per test; the long run (new inputs) is tests/mutations.py's to say.
The runs themselves are in tests/fuzz_runs.py, shared with the kept finds (test_fuzz_finds.py).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given

from fuzz_runs import CASES, run_case
from mutations import FUZZ


@FUZZ
@given(case=CASES["fold"])
def test_a_mutated_capture_folds_to_a_value(case: dict[str, Any]) -> None:
    run_case("fold", case)


@FUZZ
@given(case=CASES["json values"])
def test_a_capture_with_hostile_json_values_folds_to_a_value(case: dict[str, Any]) -> None:
    run_case("json values", case)


@FUZZ
@given(case=CASES["chunks"])
def test_a_mutated_capture_folds_the_same_in_random_chunks(case: dict[str, Any]) -> None:
    run_case("chunks", case)


@FUZZ
@given(case=CASES["forced"])
def test_every_forced_dialect_and_transport(case: dict[str, Any]) -> None:
    run_case("forced", case)


@FUZZ
@given(case=CASES["readers"])
def test_the_input_readers(case: dict[str, Any]) -> None:
    run_case("readers", case)
