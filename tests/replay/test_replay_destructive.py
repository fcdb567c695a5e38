"""Each destructive fault changes the reply the way its documentation says, and the reference of
what was served shows that change: cut -> incomplete with the cut said, glue -> glued frames still
read, drop -> a piece of text missing, and so on, over every dialect the vendor hooks cover."""

from __future__ import annotations

import json
from typing import Any

import pytest

from replay_helpers import by_name, served
from streamfold.decoding import decode_frame
from streamfold.replay import Recording, parse_fault, plan_response, reply_part

PLAIN = "examples/openai-plain-text"
#: One capture per dialect with the vendor hooks (`DialectSpec.replay`).
HOOKED = {"openai-chat": "examples/openai-tool-calls", "anthropic": "anthropic/a3-a6-thinking-then-tool-use",
          "openai-responses": "openai-responses/r2-parallel-function-calls",
          "gemini": "gemini/g3-parallel-calls-same-tool", "ollama": "ollama/generate-stream",
          "anthropic-completions": "anthropic-completions/text-stop-sequence", "ag-ui": "ag-ui/tool-call",
          "vercel-ui": "vercel-ui/tool-call-two-steps", "a2a": "a2a/v03-task-artifact-chunks",
          "mcp": "mcp/tool-result-with-progress", "claude-stream-json": "claude-stream-json/partial-messages-text",
          "openai-realtime": "openai-realtime/beta-text",
          "gemini-interactions": "gemini-interactions/function-call-arguments-delta",
          "vercel-data": "vercel-data/tool-call-two-steps",
          "anthropic-agents": "anthropic-agents/tool-use-mcp-end-turn",
          "gemini-live": "gemini-live/tool-call-then-answer", "adk": "adk/tool-loop",
          "mistral-conversations": "mistral-conversations/function-calls"}
#: Dialects whose streams have no end sign to drop (the server closes them): every hook but no-terminal's.
NO_END_SIGN = {"langgraph": "langgraph/messages-tuple-text"}


def text(result: dict[str, Any]) -> str:
    return str(result["choices"][0]["content"]) if result["choices"] else ""


def codes(result: dict[str, Any]) -> set[str]:
    return {d["code"] for d in result["diagnostics"]} | {e["code"] for e in result["errors"]}


def delta(recording: Recording, frame: int) -> str:
    """The text openai-chat frame `frame` carries."""
    return str(decode_frame(recording.frames[frame]).value["choices"][0]["delta"]["content"])


def test_cut_closes_mid_frame_and_the_reply_is_incomplete_with_the_cut_said() -> None:
    recording = by_name(PLAIN)
    clean = served(recording)[1]
    plan, result = served(recording, "cut:5")
    frame = recording.frames[5]
    assert plan.cut and plan.body == recording.body[: frame.offset + len(frame.raw) // 2]
    assert result["complete"] is False and clean["complete"] is True
    assert {"missing-terminal", "unterminated-final-line"} <= codes(result)
    assert text(result) == "".join(delta(recording, i) for i in range(1, 5))
    plan, result = served(recording, "cut:5:0")
    assert plan.body == recording.body[: frame.offset] and text(result) == "".join(delta(recording, i)
                                                                                  for i in range(1, 5))


def test_glue_loses_the_blank_line_and_both_frames_are_still_read() -> None:
    recording = by_name(PLAIN)
    plan, result = served(recording, "glue:3")
    assert len(plan.body) == len(recording.body) - 1
    assert "glued-frames" in codes(result) and text(result) == text(served(recording)[1])


def test_drop_duplicate_and_reorder_move_the_text_of_their_frames() -> None:
    recording = by_name(PLAIN)
    clean = text(served(recording)[1])
    pieces = [delta(recording, i) for i in range(1, 6)]
    assert clean.startswith("".join(pieces))
    dropped = text(served(recording, "drop:3")[1])
    assert dropped == clean.replace("".join(pieces), "".join(pieces[:2] + pieces[3:]), 1)
    doubled = text(served(recording, "duplicate:3")[1])
    assert doubled.startswith("".join(pieces[:3]) + pieces[2] + "".join(pieces[3:]))
    swapped = text(served(recording, "reorder:2,3")[1])
    assert swapped.startswith(pieces[0] + pieces[2] + pieces[1] + "".join(pieces[3:]))
    assert len(swapped) == len(clean)


def test_corrupt_breaks_the_frames_json_and_its_text_is_lost() -> None:
    recording = by_name(PLAIN)
    plan, result = served(recording, "corrupt:3")
    assert [(e["code"], e["frame"]) for e in result["errors"]] == [("invalid-json", 3)]
    assert text(result) == text(served(recording, "drop:3")[1])
    assert len(plan.body) == len(recording.body) - 1


@pytest.mark.parametrize("dialect", sorted(HOOKED))
def test_no_terminal_leaves_the_reply_incomplete_in_every_hooked_dialect(dialect: str) -> None:
    recording = by_name(HOOKED[dialect])
    clean = served(recording)[1]
    result = served(recording, "no-terminal")[1]
    assert clean["complete"] is True and result["complete"] is False
    assert "missing-terminal" in codes(result)
    assert result["dialect"] == clean["dialect"] and recording.dialect == dialect  # (stream-json folds as anthropic)
    # An MCP stream's end is its response, which holds the reply: the notifications before it stay.
    assert text(result) == ("" if dialect == "mcp" else text(clean))


@pytest.mark.parametrize("dialect", sorted({**HOOKED, **NO_END_SIGN}))
def test_error_event_puts_the_vendors_error_where_the_stream_breaks_off(dialect: str) -> None:
    recording = by_name({**HOOKED, **NO_END_SIGN}[dialect])
    plan, result = served(recording, "error-event:2")
    assert result["complete"] is False and [e["code"] for e in result["errors"]] == ["in-stream-error"]
    assert result["errors"][0]["frame"] == 2 and result["dialect"] == served(recording)[1]["dialect"]
    assert plan.body.startswith(recording.body[: recording.frames[2].offset])
    served_frames = plan.body[recording.frames[2].offset:]
    if recording.transport == "sse" and dialect in ("anthropic", "openai-responses"):
        assert served_frames.startswith(b"event: error\n")


@pytest.mark.parametrize("dialect, status, shape", [
    ("openai-chat", 429, {"error": {"message": str, "type": "requests", "param": None, "code": "rate_limit_exceeded"}}),
    ("openai-responses", 500, {"error": {"message": str, "type": "server_error", "param": None, "code": None}}),
    ("anthropic", 529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ("gemini", 429, {"error": {"code": 429, "message": str, "status": "RESOURCE_EXHAUSTED"}}),
    ("ollama", 500, {"error": str}),
    ("anthropic-completions", 529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ("mcp", 400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": str}}),
    ("openai-realtime", 500, {"error": {"message": str, "type": "server_error", "param": None, "code": None}}),
    ("gemini-interactions", 503, {"error": {"code": 503, "message": str, "status": "UNAVAILABLE"}}),
    ("mistral-conversations", 429, {"object": "error", "message": str, "type": "rate_limited", "param": None,
                                    "code": "429"}),
    ("langgraph", 404, {"detail": str}),
])
def test_http_error_serves_the_status_with_the_vendors_error_body(dialect: str, status: int,
                                                                  shape: dict[str, Any]) -> None:
    plan, result = served(by_name({**HOOKED, **NO_END_SIGN}[dialect]), f"http-error:{status}")
    assert plan.status == status and dict(plan.headers)["content-type"] == "application/json"
    body = json.loads(plan.body)

    def fits(value: Any, expected: Any) -> bool:
        if isinstance(expected, dict):
            return isinstance(value, dict) and value.keys() == expected.keys() and all(
                fits(value[key], expected[key]) for key in expected)
        return isinstance(value, expected) if isinstance(expected, type) else value == expected

    assert fits(body, shape), body
    assert "http-status" in codes(result) and result["complete"] is False


@pytest.mark.parametrize("name", ["examples/openai-tool-calls", "anthropic/a3-a6-thinking-then-tool-use",
                                  "ag-ui/tool-call", "vercel-ui/tool-call-two-steps",
                                  "gemini-interactions/function-call-arguments-delta",
                                  "claude-stream-json/tool-use-two-turns", "vercel-data/tool-call-two-steps",
                                  "mistral-conversations/function-calls", "langgraph/tool-loop-anthropic"])
def test_cumulative_args_resends_each_fragment_and_the_value_is_recovered(name: str) -> None:
    recording = by_name(name)
    clean = served(recording)[1]["choices"][0]["tool_calls"]
    result = served(recording, "cumulative-args")[1]
    calls = result["choices"][0]["tool_calls"]
    assert "cumulative-resend" in codes(result)
    assert [call["parsed"] for call in calls] == [call["parsed"] for call in clean]
    assert all(len(call["arguments"]) > len(before["arguments"]) for call, before in zip(calls, clean, strict=True))


def test_strip_events_removes_every_event_line_and_the_reply_is_still_built() -> None:
    recording = by_name(HOOKED["anthropic"])
    plan, result = served(recording, "strip-events")
    assert b"event:" in recording.body and b"event:" not in plan.body
    assert "event-type-missing" in codes(result)
    assert result["choices"][0]["tool_calls"] == served(recording)[1]["choices"][0]["tool_calls"]


@pytest.mark.parametrize("spec", ["cut:6", "glue:3", "drop:3", "duplicate:3", "corrupt:3", "no-terminal",
                                  "error-event:4", "reorder:2,5", "http-error:503", "cumulative-args"])
def test_transparent_faults_on_top_of_a_destructive_one_change_nothing_more(spec: str) -> None:
    recording = by_name("examples/openai-tool-calls")
    alone = reply_part(served(recording, spec)[1])
    for extra in (["chunk:1"], ["chunk:random", "split-utf8"], ["slow:1", "stall:0:1"]):
        assert reply_part(served(recording, spec, *extra, speed="max")[1]) == alone, extra


def test_a_destructive_plan_is_the_same_every_time() -> None:
    recording = by_name(PLAIN)
    faults = [parse_fault(spec) for spec in ("drop:2", "duplicate:4", "reorder:7,8", "corrupt:9", "chunk:random")]
    assert plan_response(recording, faults, seed=11) == plan_response(recording, faults, seed=11)


@pytest.mark.parametrize("name", ["gemini/f9-weather-thought-call-array", "bedrock/converse-reasoning-tool-call",
                                  "ollama/generate-stream"])
@pytest.mark.parametrize("spec, change", [("drop:0", -1), ("drop:2", -1), ("drop:LAST", -1), ("duplicate:1", 1),
                                          ("duplicate:LAST", 1), ("reorder:1,2", 0)])
def test_frames_moved_in_a_json_array_an_event_stream_or_ndjson_stay_well_formed(name: str, spec: str,
                                                                                change: int) -> None:
    """A JSON array keeps its commas right; AWS event-stream messages move whole (their CRCs with them)."""
    recording = by_name(name)
    spec = spec.replace("LAST", str(len(recording.frames) - 1))
    result = served(recording, spec)[1]
    assert result["frames"]["total"] == len(recording.frames) + change
    assert result["frames"]["invalid"] == 0 and result["errors"] == []
    assert not {"invalid-json", "truncated-message", "crc-mismatch", "unterminated-final-frame"} & codes(result)


def test_an_added_error_frame_is_a_frame_to_the_other_faults() -> None:
    recording = by_name(HOOKED["anthropic"])
    plan, result = served(recording, "error-event:3", "strip-events", "nospace", "crlf")
    assert b"event:" not in plan.body and plan.body.endswith(b'data:{"type":"error","error":{"type":'
                                                             b'"overloaded_error","message":"Overloaded"}}\r\n\r\n')
    assert [e["code"] for e in result["errors"]] == ["in-stream-error"]
