"""The Vercel AI SDK data stream protocol (`vercel-data`, ai 3/4): `TYPE:JSON` lines, sniffed as
line-framed and decoded as `Prefixed` values; each test builds the smallest stream that shows one
rule of the protocol (ai-sdk.dev/v4 "Stream Protocols"), and every capture folds the same however
fed. The check against ai 4's own reader is tests/dialects/test_vercel_node.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from feeding import tr_fold
from streamfold import PayloadKind, Result, fold, sniff
from streamfold.decoding import decode_data
from streamfold.dialects import detect, spec_of
from streamfold.dialects.vercel_data import Prefixed, VercelData

CAPTURES = Path(__file__).resolve().parents[1] / "captures"
OWN = sorted((CAPTURES / "vercel-data").glob("*.txt"))


def parts(*items: tuple[str, Any]) -> bytes:
    return "".join(f"{kind}:{json.dumps(value)}\n" for kind, value in items).encode()


FINISH = ("d", {"finishReason": "stop", "usage": {"promptTokens": 1, "completionTokens": 2}})


def codes(result: Result) -> list[str]:
    return [d.code for d in result.diagnostics]


# -- transport, decoding, detection ----------------------------------------------------

def test_prefixed_lines_are_sniffed_as_lines_and_sse_stays_sse() -> None:
    assert sniff(b'0:"Hello"\n') == "ndjson" and sniff(b'f:{"messageId":"m"}\n') == "ndjson"
    assert sniff(b"0", final=False) is None and sniff(b"d", final=False) is None
    for sse in (b"data: {}\n\n", b"event: x\n", b": ping\n\n", b"id: 1\n", b"retry: 5\n"):
        assert sniff(sse) == "sse", sse


def test_a_prefixed_line_decodes_to_its_type_and_value_and_json_stays_json() -> None:
    assert decode_data('0:"Hi"').value == Prefixed("0", "Hi")
    assert decode_data('9:{"toolCallId":"c","args":{}}').value == Prefixed("9", {"toolCallId": "c", "args": {}})
    assert decode_data('":"').value == ":" and decode_data('{"a":1}').value == {"a": 1}
    assert decode_data("0:not json").kind is PayloadKind.INVALID
    assert decode_data('A:"x"').kind is PayloadKind.INVALID  # one digit or lower-case letter only


def test_claims_prefixed_parts_only() -> None:
    assert VercelData.claims(Prefixed("0", "x")) and VercelData.claims(Prefixed("d", {}))
    for other in (Prefixed("z", 1), {"type": "text-delta"}, ["0", "x"], "0:x"):
        assert not VercelData.claims(other), other
    found = detect(Prefixed("f", {"messageId": "m"}))
    assert found is VercelData


@pytest.mark.parametrize("path", sorted(p for p in CAPTURES.rglob("*") if p.is_file() and p.parent.name != "vercel-data"
                                        and not p.name.endswith((".json", ".md"))),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_other_capture_is_taken_for_vercel_data(path: Path) -> None:
    assert fold(path.read_bytes()).dialect != "vercel-data"


@pytest.mark.parametrize("path", OWN, ids=lambda p: p.name)
def test_a_capture_folds_the_same_however_fed(path: Path) -> None:
    result = tr_fold(path.read_bytes())
    assert (result.dialect, result.transport) == ("vercel-data", "ndjson")


# -- the parts --------------------------------------------------------------------------

def test_text_reasoning_and_the_finish_message() -> None:
    result = fold(parts(("f", {"messageId": "m1"}), ("g", "think"), ("0", "Hel"), ("0", "lo"), FINISH))
    choice = result.choices[0]
    assert (result.id, choice.content, choice.reasoning, choice.finish_reason, result.complete) == (
        "m1", "Hello", "think", "stop", True)
    assert result.usage is not None and (result.usage.input_tokens, result.usage.total_tokens) == (1, 3)


def test_streamed_args_are_kept_when_they_are_the_whole_args_and_replaced_when_not() -> None:
    start = ("b", {"toolCallId": "c", "toolName": "f"})
    same = fold(parts(start, ("c", {"toolCallId": "c", "argsTextDelta": '{"a": 1}'}),
                      ("9", {"toolCallId": "c", "toolName": "f", "args": {"a": 1}}), FINISH))
    assert same.choices[0].tool_calls[0].arguments == '{"a": 1}' and codes(same) == []
    other = fold(parts(start, ("c", {"toolCallId": "c", "argsTextDelta": '{"a": 2}'}),
                       ("9", {"toolCallId": "c", "toolName": "f", "args": {"a": 1}}), FINISH))
    assert other.choices[0].tool_calls[0].parsed == {"a": 1} and codes(other) == ["final-text-mismatch"]


def test_step_usage_adds_up_until_the_finish_message_gives_the_total() -> None:
    step = ("e", {"finishReason": "stop", "usage": {"promptTokens": 5, "completionTokens": 1}, "isContinued": False})
    cut = fold(parts(step, step))
    assert cut.usage is not None and (cut.usage.input_tokens, cut.usage.output_tokens) == (10, 2)
    assert not cut.complete and "missing-terminal" in codes(cut)


def test_a_delta_without_its_start_and_an_unknown_part_are_reported() -> None:
    result = fold(parts(("c", {"toolCallId": "c", "argsTextDelta": "{}"}), ("x", 1), FINISH))
    assert [c.id for c in result.choices[0].tool_calls] == ["c"]
    assert "tool-call-missing-index" in codes(result) and "unknown-event-type" in codes(result)


def test_bad_values_are_reported_not_raised() -> None:
    result = fold(parts(("0", 5), ("9", "nope"), ("d", [1]), FINISH))
    assert codes(result).count("unexpected-payload") == 3 and result.complete


def test_an_error_part_is_an_in_stream_error() -> None:
    result = fold(parts(("0", "part"), ("3", "boom")))
    assert not result.complete and "boom" in result.errors[0].message


def test_summaries_name_the_part() -> None:
    assert spec_of(VercelData).summary(Prefixed("0", "Hi")) == '0: text "Hi"'
    assert spec_of(VercelData).summary(Prefixed("c", {"toolCallId": "c1", "argsTextDelta": "{"})) == 'c: tool_call_delta c1 "{"'


def test_the_web_page_gets_each_parts_value_not_a_span_it_cannot_parse() -> None:
    from starlette.testclient import TestClient

    from streamfold.web.app import create_app

    data = parts(("0", "Hi"), ("9", {"toolCallId": "c", "toolName": "f", "args": {"a": 1}}), FINISH)
    response = TestClient(create_app(), base_url="http://127.0.0.1").post("/api/fold", content=data)
    frames = response.json()["frames"]
    assert [json.loads(frame["payload_json"]) for frame in frames][:2] == [
        ["0", "Hi"], ["9", {"toolCallId": "c", "toolName": "f", "args": {"a": 1}}]]
    assert not any("data_span" in frame for frame in frames)
