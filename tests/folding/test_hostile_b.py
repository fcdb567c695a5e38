"""Issue 20, part 3, group B (text, JSON and framing core): each repro once raised, put text that is
not Unicode or JSON that is not strict into a result, went quadratic, depended on the chunking or cost
tens of times its size. Each is now a finding at its place, and the rest still folds. (Cost and memory
are measured in benchmarks/hostile/hostile_b.py, not here.)"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamfold
from feeding import tr_fold
from streamfold import Folder, fold
from streamfold._json import dumps_strict
from streamfold.framing import JSONArrayParser, NDJSONParser, SSEParser, WebSocketParser
from streamfold.framing.frame import MAX_LISTED_ISSUES
from streamfold.services._websocket import message_reads
from values import not_strict

CAPTURES = Path(__file__).resolve().parents[1] / "captures"


def assert_strict(result: streamfold.Result) -> dict[str, Any]:
    out = result.to_dict()
    assert not_strict(out) == []
    dumps_strict(out).encode("utf-8")
    return out


# -- 1. lone surrogates and times no float holds, in WebSocket messages -------------------------------

RESPONSE_EVENTS = [
    {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}},
    {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "GOOD"},
    {"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "output": []}},
]


def ws_line(data: str, time: str = "1764633600.25") -> bytes:
    return b'{"type":"receive","time":' + time.encode() + b',"opcode":1,"data":' + data.encode() + b"}\n"


def ws_events(first: bytes) -> bytes:
    return first + b"".join(ws_line(json.dumps(json.dumps(event))) for event in RESPONSE_EVENTS)


def test_a_websocket_message_of_a_lone_surrogate_is_replaced_and_reported_and_the_rest_folds() -> None:
    data = ws_events(ws_line(r'"\ud800"'))  # the message is the JSON string "\ud800": no text a socket carries
    result = tr_fold(data)
    out = assert_strict(result)
    assert (result.transport, result.dialect) == ("websocket", "openai-responses")
    assert [(e.code, e.frame, e.raw) for e in result.errors] == [("invalid-json", 0, "\ufffd")]
    found = [d for d in result.diagnostics if d.code == "non-strict-json"]
    assert [(d.frame, d.line) for d in found] == [(0, 1)] and "lone surrogate" in found[0].message
    assert result.choices[0].content == "GOOD" and result.complete
    assert out["errors"][0]["raw"] == "\ufffd"


def test_a_lone_surrogate_escape_inside_a_websocket_message_folds_as_in_any_payload() -> None:
    delta = json.dumps({"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                        "delta": "A\\ud800B"}).replace("\\\\ud800", "\\ud800")
    data = ws_events(b"") + ws_line(json.dumps(delta))
    result = tr_fold(data)
    assert_strict(result)
    assert not result.errors


@pytest.mark.parametrize("time", [str(10**400), "-" + str(10**400), "NaN", "1e999"])
def test_a_websocket_time_no_float_holds_is_no_time_and_the_rest_folds(time: str) -> None:
    data = ws_line(json.dumps(json.dumps(RESPONSE_EVENTS[0])), time) + b"".join(
        ws_line(json.dumps(json.dumps(event))) for event in RESPONSE_EVENTS[1:])
    frames = WebSocketParser().feed(data)
    assert [name for name, _ in frames[0].headers] == ["direction", "opcode"]  # no time
    assert dict(frames[1].headers)["time"] == 1764633600.25
    assert message_reads(data) is None  # the arrival times need every message's time
    result = tr_fold(data)
    assert_strict(result)
    assert result.choices[0].content == "GOOD" and result.complete
    if time == "NaN":  # not JSON: the record was read leniently, and that is said
        assert [d.line for d in result.diagnostics if d.code == "non-strict-json"] == [1]


# -- 2. NaN in a non-streaming reply ----------------------------------------------------------------

NAN_REPLY = (b'{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":'
             b'{"role":"assistant","content":"Hello"},"finish_reason":"stop"}],'
             b'"usage":{"prompt_tokens":NaN,"completion_tokens":2,"total_tokens":Infinity}}')


def test_a_non_streaming_reply_with_nan_usage_folds_to_strict_json() -> None:
    result = tr_fold(NAN_REPLY)
    assert_strict(result)
    assert [d.frame for d in result.diagnostics if d.code == "non-strict-json"] == [0]


def test_a_non_streaming_reply_with_nan_usage_is_read_as_the_reply_with_null_tokens() -> None:
    from streamfold.services import load
    result = load(NAN_REPLY).result
    out = assert_strict(result)
    assert out["choices"][0]["content"] == "Hello" and out["dialect"] == "openai-chat"
    assert (out["usage"]["input_tokens"], out["usage"]["output_tokens"], out["usage"]["total_tokens"]) == (None, 2, None)
    assert {"not-a-stream", "non-strict-json"} <= {d["code"] for d in out["diagnostics"]}


def test_the_fronts_writer_refuses_nan() -> None:
    with pytest.raises(ValueError):
        dumps_strict({"a": math.nan})
    assert dumps_strict({"a": "é"}) == '{"a": "é"}'


# -- every transport: strings a result holds are text, numbers are JSON ------------------------------

_STRING_START = re.compile(rb'(":\s*")')
_NUMBER = re.compile(rb'(":\s*)(\d+(?:\.\d+)?)(?=[,}\]])')


def hostile_versions(data: bytes) -> Iterator[tuple[str, bytes]]:
    """A capture with a lone surrogate (as an escape, and as the bytes of one) at the start of every
    string, in every WebSocket message, and with every number NaN, Infinity, 1e999 or 10**400."""
    yield "surrogate-escape", _STRING_START.sub(rb"\1\\ud800", data)
    yield "surrogate-bytes", _STRING_START.sub(lambda found: found.group(1) + b"\xed\xa0\x80", data)
    yield "escaped-inside-a-string", data.replace(b'\\":\\"', b'\\":\\"\\\\udc00')
    yield "websocket-data", data.replace(b'"data":"', b'"data":"\\ud800').replace(b'"data": "', b'"data": "\\ud800')
    for name, number in (("nan", b"NaN"), ("infinity", b"Infinity"), ("1e999", b"1e999"),
                         ("10**400", str(10**400).encode())):
        yield name, _NUMBER.sub(lambda found, number=number: found.group(1) + number, data)  # type: ignore[misc]


CAPTURE_FILES = sorted(path for path in CAPTURES.rglob("*") if path.is_file()
                       and not path.name.endswith((".expect.json", ".md")))


@pytest.mark.parametrize("path", CAPTURE_FILES, ids=lambda path: str(path.relative_to(CAPTURES)))
def test_every_capture_made_hostile_folds_to_text_and_strict_json(path: Path) -> None:
    for name, data in hostile_versions(path.read_bytes()):
        out = fold(data).to_dict()
        assert not_strict(out) == [], name
        dumps_strict(out).encode("utf-8")


def test_the_hostile_versions_reach_every_transport() -> None:
    transports = {fold(data).transport for path in CAPTURE_FILES for _, data in hostile_versions(path.read_bytes())}
    assert transports == set(streamfold.framing.TRANSPORTS)


# -- 3. invalid UTF-8: linear, and a line of many bad runs is not an issue object per run -------------


def test_a_line_of_many_invalid_runs_lists_the_first_and_counts_the_rest() -> None:
    line = b'{"model":"q","message":{"role":"assistant","content":"' + b"\xffa" * 300 + b'"},"done":false}\n'
    good = b'{"model":"q","message":{"role":"assistant","content":"GOOD"},"done":true,"done_reason":"stop"}\n'
    [first, _] = NDJSONParser().feed(line + good)
    assert len(first.issues) == MAX_LISTED_ISSUES + 1
    assert {issue.code for issue in first.issues} == {"invalid-utf8"}
    start = line.index(b"\xff")
    assert [issue.offset for issue in first.issues] == [start + 2 * k for k in range(MAX_LISTED_ISSUES + 1)]
    assert first.issues[-1].message.startswith("200 more runs of invalid UTF-8 (200 bytes)")
    result = tr_fold(line + good)
    assert result.choices[0].content == "\ufffda" * 300 + "GOOD" and result.complete


def test_invalid_runs_in_an_element_of_many_lines_are_placed_on_their_lines() -> None:
    element = b'[{"text":"' + b"\xff\n" * 150 + b'"},\n{"candidates":[]}]'
    first = JSONArrayParser().feed(element)[0]
    assert [issue.line for issue in first.issues[:MAX_LISTED_ISSUES]] == list(range(1, MAX_LISTED_ISSUES + 1))
    assert first.issues[-1].line == MAX_LISTED_ISSUES + 1 and "50 more runs" in first.issues[-1].message


# -- 4. tool arguments and frames of many back-to-back documents -------------------------------------


def _chat_tool_call(arguments: str, pieces: int = 100) -> bytes:
    step = max(1, len(arguments) // pieces)
    chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                                                  "function": {"name": "f", "arguments": ""}}]}}]}]
    chunks += [{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {
        "arguments": arguments[at : at + step]}}]}}]} for at in range(0, len(arguments), step)]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks) + b"data: [DONE]\n\n"


def test_tool_arguments_of_many_copies_of_one_document_are_recovered_as_one() -> None:
    result = fold(_chat_tool_call("{}" * 20_000))
    [call] = result.choices[0].tool_calls
    assert call.parsed == {} and call.error is None and call.id == "call_1"
    [said] = [d for d in result.diagnostics if d.code == "cumulative-resend"]
    assert "20000" in said.message


def test_tool_arguments_of_different_documents_keep_the_first() -> None:
    arguments = "".join(json.dumps({"i": i}) for i in range(5_000))
    [call] = fold(_chat_tool_call(arguments)).choices[0].tool_calls
    assert call.parsed == {"i": 0} and call.arguments == arguments


def test_a_frame_of_many_glued_documents_folds_each_and_lists_where_the_first_start() -> None:
    chunk = json.dumps({"choices": [{"index": 0, "delta": {"content": "a"}}]})
    result = fold(b"data: " + (chunk * 5_000).encode() + b"\n\ndata: [DONE]\n\n")
    assert result.choices[0].content == "a" * 5_000
    [glued] = [d for d in result.diagnostics if d.code == "glued-frames"]
    assert "holds 5000 JSON documents" in glued.message and glued.message.count(",") < 40 and "…" in glued.message
    assert glued.details["count"] == 5_000 and glued.details["documents"] == [json.loads(chunk)] * 100


def test_a_glued_frame_decodes_as_the_documents_it_holds() -> None:
    payload = streamfold.decoding.decode_data('{"a": 1}\n{"b": [2]} data: {"c": "\\ud800"}')
    assert payload.kind is streamfold.decoding.PayloadKind.GLUED and len(payload.value) == 3
    expected = [({"a": 1}, 0), ({"b": [2]}, 9), ({"c": "\ufffd"}, 26)]
    assert list(payload.value) == expected and payload.value == expected and payload.value[-1] == expected[-1]
    assert payload.value[1:] == tuple(expected[1:])


# -- 5. the result does not depend on how the bytes arrived (CR, Ollama) ------------------------------


def test_an_ollama_capture_cut_after_a_cr_keeps_its_thinking_as_fold_does() -> None:
    """The capture's thinking lines, with `\\r` at each line end; a server that leaves `role` out after
    the first line (as the fuzz did) made the plain path drop the thinking the run path kept. Cut after the
    first CR, the second piece has none and is folded as a run; fold() of it all has a CR and was not."""
    lines = (CAPTURES / "ollama" / "b3-chat-thinking-tool-call.ndjson").read_bytes().splitlines()
    thinking = [json.loads(line) for line in lines[:2]]
    later = []
    for position in range(10):
        line = dict(thinking[position % 2])
        line["message"] = {key: value for key, value in line["message"].items() if key != "role"}
        later.append(json.dumps(line).encode())
    data = b"".join(line + b"\r\n" for line in [lines[0], *later, lines[-1]])
    cut = data.index(b"\r") + 1
    folder = Folder()
    folder.feed(data[:cut])
    folder.feed(data[cut:])
    split, whole = folder.close(), fold(data)
    assert split == whole
    expected = thinking[0]["message"]["thinking"] + "".join(
        thinking[position % 2]["message"]["thinking"] for position in range(10))
    assert whole.choices[0].reasoning == expected and whole.choices[0].finish_reason == "stop"


_TEXTS = st.sampled_from(["", "think ", "é", "\r", "<think>"])
# A few line ends with a CR: the chunks between them hold stretches of plain LF lines, which fold as runs
# (the fast way), while a chunk with a CR folds line by line (the plain way).
_CR_ENDS = st.sampled_from([b"\r\n", b"\r\r\n", b" \r\n", b"\n\r\n", b"\r \n"])


@st.composite
def cr_rich_ollama(draw: st.DrawFn) -> bytes:
    """An Ollama chat stream whose messages leave keys out (role, content), line ends of CR and LF."""
    lines = [{"model": "q", "created_at": "t", "message": {"role": "assistant", "content": ""}, "done": False}]
    for _ in range(draw(st.integers(1, 40))):
        message: dict[str, Any] = {}
        for key, values, likely in (("role", st.just("assistant"), 0.3), ("content", _TEXTS, 0.8),
                                    ("thinking", _TEXTS, 0.6)):
            if draw(st.floats(0, 1)) < likely:
                message[key] = draw(values)
        lines.append({"model": "q", "created_at": "t", "message": message, "done": False})
    lines.append({"model": "q", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"})
    with_cr = set(draw(st.lists(st.integers(0, len(lines) - 1), max_size=3)))
    return b"".join(json.dumps(line).encode() + (draw(_CR_ENDS) if at in with_cr else b"\n")
                    for at, line in enumerate(lines))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cr_rich_ollama(), st.randoms(use_true_random=False))
def test_cr_rich_ndjson_folds_alike_in_any_chunking(data: bytes, rng: random.Random) -> None:
    whole = fold(data)
    assert whole.dialect == "ollama"
    for _ in range(3):
        folder = Folder()
        position = 0
        while position < len(data):
            step = rng.choice([1, 2, 7, 64, 333, 4096])
            folder.feed(data[position : position + step])
            position += step
        assert folder.close() == whole
    lines = data.split(b"\n")
    by_line = Folder()
    for line in lines[:-1]:
        by_line.feed(line + b"\n")
    by_line.feed(lines[-1])
    assert by_line.close() == whole


# -- 6. memory: frames of many lines, deep nesting ----------------------------------------------------


def test_a_block_of_many_comments_keeps_every_comment() -> None:
    comments = [f"keep-alive {i}" for i in range(5_000)] + [""]
    data = b"".join(b": " + comment.encode() + b"\n" for comment in comments) + b"\ndata: {}\n\n"
    frames = SSEParser().feed(data)
    assert frames[0].comments == tuple(comments) and frames[0].data is None
    assert frames[0].raw == data[: data.index(b"\n\n") + 2]
    result = tr_fold(data[:3_000] + data[data.index(b"\n\n") :])
    assert result.frame_counts["comments"] == 1


def test_a_block_of_many_data_lines_joins_them_all() -> None:
    data = b"".join(b"data: line %d\n" % i for i in range(5_000)) + b"\n"
    [frame] = SSEParser().feed(data)
    assert frame.data == "\n".join(f"line {i}" for i in range(5_000)) and frame.raw == data
    result = fold(data)
    assert [e.code for e in result.errors] == ["invalid-json"]


def test_a_block_of_many_bad_lines_lists_the_first_issues_of_each_code_and_counts_the_rest() -> None:
    data = b"Data: x\n" * 300 + b"data: \xff\n" * 150 + b"data: {}\n\n" + b"data: [DONE]\n\n"
    [frame, done] = SSEParser().feed(data)
    codes = [issue.code for issue in frame.issues]
    assert codes == ["unknown-field"] * 100 + ["invalid-utf8"] * 100 + ["unknown-field", "invalid-utf8"]
    more_fields, more_utf8 = frame.issues[-2:]
    assert more_fields.message.startswith("200 more `unknown-field` issues in this frame from line 101 on")
    assert (more_fields.line, more_fields.offset) == (101, 800)
    assert more_utf8.message.startswith("50 more `invalid-utf8` issues") and more_utf8.line == 401
    assert done.data == "[DONE]"
    result = fold(data)
    assert {d.code for d in result.diagnostics} >= {"unknown-field", "invalid-utf8", "findings-collapsed"}


def test_deep_nesting_in_a_json_array_is_invalid_json_and_the_next_element_folds() -> None:
    good = json.dumps({"candidates": [{"content": {"parts": [{"text": "GOOD"}], "role": "model"},
                                       "finishReason": "STOP"}]}).encode()
    data = b"[" + b"[" * 50_000 + b"]" * 50_000 + b",\r\n" + good + b"]"
    result = tr_fold(data)
    assert [(e.code, e.frame) for e in result.errors] == [("invalid-json", 0)]
    assert "nested more than 256 levels deep" in result.errors[0].message
    assert result.choices[0].content == "GOOD" and result.dialect == "gemini"
