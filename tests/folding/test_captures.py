"""Realistic captures under tests/captures/, each with a hand-computed
`.expect.json` (the oracle) naming the trap it covers and its source.

The expectations were written from the reference, independently of the code;
a listed code must be present, every listed value must be equal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import streamfold
from streamfold.services import read_capture

CAPTURES = Path(__file__).resolve().parents[1] / "captures"
EXPECTATIONS = sorted(CAPTURES.rglob("*.expect.json"))
assert EXPECTATIONS, "no capture expectations found"


def capture_for(expectation: Path) -> Path:
    stem = expectation.name[: -len(".expect.json")]
    found = [p for p in expectation.parent.glob(stem + ".*") if not p.name.endswith(".expect.json")]
    assert len(found) == 1, f"expected exactly one capture for {expectation.name}, found {found}"
    return found[0]


def capture_bytes(expectation: Path) -> bytes:
    """The stream a capture holds: a HAR (a browser's WebSocket export) is read by the input layer first."""
    path = capture_for(expectation)
    return read_capture(path.read_bytes()).body if path.suffix == ".har" else path.read_bytes()


def check(result: dict[str, Any], want: dict[str, Any]) -> None:
    assert want.get("source"), "every capture names the trap and its source"
    for key in ("dialect", "complete", "model", "id"):
        if key in want:
            assert result[key] == want[key], key
    for wanted in want.get("choices", []):
        got = next(c for c in result["choices"] if c["index"] == wanted["index"])
        for key in ("content", "reasoning", "refusal", "finish_reason", "finish_reason_raw"):
            if key in wanted:
                assert got[key] == wanted[key], f"choice {wanted['index']} {key}"
        if "tool_calls" in wanted:
            assert len(got["tool_calls"]) == len(wanted["tool_calls"]), got["tool_calls"]
            for want_call, got_call in zip(wanted["tool_calls"], got["tool_calls"]):
                for key in ("id", "name", "arguments", "parsed"):
                    if key in want_call:
                        assert got_call[key] == want_call[key], f"tool call {key}"
                if "error_is_set" in want_call:
                    assert (got_call["error"] is not None) == want_call["error_is_set"]
                    assert (got_call["parsed"] is None) == want_call["error_is_set"]
    if "usage" in want:
        if want["usage"] is None:
            assert result["usage"] is None
        else:
            for key, value in want["usage"].items():
                assert result["usage"][key] == value, f"usage {key}"
    error_codes = {error["code"] for error in result["errors"]}
    assert set(want.get("error_codes", [])) <= error_codes
    diagnostic_codes = {diagnostic["code"] for diagnostic in result["diagnostics"]}
    assert set(want.get("diagnostic_codes", [])) <= diagnostic_codes


@pytest.mark.parametrize("expectation", EXPECTATIONS, ids=lambda p: f"{p.parent.name}/{p.name[:-12]}")
def test_capture_folds_to_its_expectation(expectation: Path) -> None:
    data = capture_bytes(expectation)
    want = json.loads(expectation.read_text())
    check(streamfold.fold(data).to_dict(), want)


@pytest.mark.parametrize("expectation", EXPECTATIONS, ids=lambda p: f"{p.parent.name}/{p.name[:-12]}")
def test_capture_gives_the_same_result_byte_by_byte(expectation: Path) -> None:
    data = capture_bytes(expectation)
    folder = streamfold.Folder()
    for i in range(len(data)):
        folder.feed(data[i : i + 1])
    assert folder.close() == streamfold.fold(data)


def test_every_diagnostic_and_error_points_at_a_real_frame() -> None:
    for expectation in EXPECTATIONS:
        result = streamfold.fold(capture_bytes(expectation))
        for finding in (*result.errors, *result.diagnostics):
            if finding.frame is not None:
                frame = result.frames[finding.frame]
                assert finding.offset is not None and finding.line is not None
                assert frame.offset <= finding.offset < frame.end or finding.offset == frame.offset
