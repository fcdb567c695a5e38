"""Vercel AI SDK UI message stream (`vercel-ui`): each test builds the smallest stream that shows one
rule of the protocol (ai-sdk.dev "Stream Protocols", the `ai` package's `uiMessageChunkSchema`), and
every capture folds the same however it is fed. The check against the SDK's own reader is
tests/dialects/test_vercel_node.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from feeding import tr_fold
from streamfold import Result, fold
from streamfold.dialects import DIALECTS, detect, spec_of
from streamfold.dialects.vercel_ui import VercelUI

CAPTURES = Path(__file__).resolve().parents[1] / "captures"
OWN = sorted((CAPTURES / "vercel-ui").glob("*.sse"))


def ui(*chunks: Any, done: bool = True) -> bytes:
    body = b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks)
    return body + (b"data: [DONE]\n\n" if done else b"")


def text(part_id: str, *pieces: str) -> list[dict[str, Any]]:
    return [{"type": "text-start", "id": part_id}, *({"type": "text-delta", "id": part_id, "delta": piece}
                                                    for piece in pieces), {"type": "text-end", "id": part_id}]


START = {"type": "start", "messageId": "m1"}
FINISH = {"type": "finish", "finishReason": "stop"}


def codes(result: Result) -> list[str]:
    return [d.code for d in result.diagnostics]


# -- detection ---------------------------------------------------------------

def test_claims_only_chunks_of_the_schema_shape() -> None:
    for chunk in (START, FINISH, {"type": "finish"}, {"type": "text-delta", "id": "a", "delta": "x"},
                  {"type": "error", "errorText": "boom"}, {"type": "data-weather", "data": {}}, {"type": "start-step"},
                  {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "{"}):
        assert VercelUI.claims(chunk), chunk
    for other in ({"type": "error", "error": {"type": "overloaded_error", "message": "x"}},  # Anthropic
                  {"type": "start", "session": 1}, {"type": "text-delta", "delta": "x"},  # a required key missing
                  {"type": "finish", "reason": "stop"}, {"type": "data-"}, {"type": "message-start"},
                  {"type": "content-delta", "index": 0}, {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"},
                  {"type": ["start"]}, [], "start"):
        assert not VercelUI.claims(other), other


@pytest.mark.parametrize("path", sorted(p for p in CAPTURES.rglob("*") if p.is_file() and p.parent.name != "vercel-ui"
                                        and not p.name.endswith((".json", ".md"))),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_other_capture_is_taken_for_vercel_ui(path: Path) -> None:
    assert fold(path.read_bytes()).dialect != "vercel-ui"


def test_detection_picks_vercel_ui_from_the_first_chunk() -> None:
    found = detect(START)
    assert found is not None and found.name == "vercel-ui" and DIALECTS["vercel-ui"] is VercelUI


@pytest.mark.parametrize("path", OWN, ids=lambda p: p.name)
def test_a_capture_folds_the_same_however_fed(path: Path) -> None:
    assert tr_fold(path.read_bytes()).dialect == "vercel-ui"


# -- text, reasoning, tool calls ------------------------------------------------------

def test_text_parts_join_in_order_and_reasoning_apart() -> None:
    result = fold(ui(START, {"type": "reasoning-start", "id": "r"}, {"type": "reasoning-delta", "id": "r", "delta": "hm"},
                     {"type": "reasoning-end", "id": "r"}, *text("a", "Hel", "lo"), *text("b", " there"), FINISH))
    choice = result.choices[0]
    assert (choice.content, choice.reasoning, choice.finish_reason, result.complete) == ("Hello there", "hm", "stop", True)
    parts = result.export()["parts"]
    assert [(p["type"], p["text"], p["state"]) for p in parts] == [
        ("reasoning", "hm", "done"), ("text", "Hello", "done"), ("text", " there", "done")]


def test_interleaved_text_parts_keep_their_own_text_in_the_export() -> None:
    result = fold(ui(START, {"type": "text-start", "id": "a"}, {"type": "text-start", "id": "b"},
                     {"type": "text-delta", "id": "a", "delta": "A1"}, {"type": "text-delta", "id": "b", "delta": "B1"},
                     {"type": "text-delta", "id": "a", "delta": "A2"}, {"type": "text-end", "id": "a"},
                     {"type": "text-end", "id": "b"}, FINISH))
    assert [p["text"] for p in result.export()["parts"]] == ["A1A2", "B1"]


def test_streamed_input_is_kept_when_it_is_the_whole_input() -> None:
    result = fold(ui(START, {"type": "tool-input-start", "toolCallId": "c1", "toolName": "f"},
                     {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"a": '},
                     {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "1}"},
                     {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {"a": 1}},
                     {"type": "finish", "finishReason": "tool-calls"}))
    (call,) = result.choices[0].tool_calls
    assert (call.id, call.name, call.arguments, call.parsed) == ("c1", "f", '{"a": 1}', {"a": 1})
    assert result.choices[0].finish_reason == "tool_calls" and codes(result) == []


def test_the_whole_input_wins_over_a_different_streamed_one() -> None:
    result = fold(ui(START, {"type": "tool-input-start", "toolCallId": "c1", "toolName": "f"},
                     {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"a": 2}'},
                     {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {"a": 1}}, FINISH))
    assert result.choices[0].tool_calls[0].parsed == {"a": 1}
    assert codes(result) == ["final-text-mismatch"]


TEXT_INPUT = {"type": "tool-input-start", "toolCallId": "c1", "toolName": "shell", "inputEncoding": "text"}


def test_a_text_input_cut_mid_stream_is_its_text_and_no_invalid_argument() -> None:
    result = tr_fold(ui(START, TEXT_INPUT, {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "rm -"},
                        done=False))
    (call,) = result.choices[0].tool_calls
    assert (call.arguments, call.parsed, call.error) == ("rm -", "rm -", None)
    assert "tool-args-invalid" not in codes(result)
    part = result.export()["parts"][0]
    assert (part["input"], part["inputEncoding"], part["state"]) == ("rm -", "text", "input-streaming")


def test_a_text_input_that_differs_from_its_whole_input_keeps_the_whole_one_as_text() -> None:
    result = fold(ui(START, TEXT_INPUT, {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "[1"},
                     {"type": "tool-input-available", "toolCallId": "c1", "toolName": "shell", "input": "[1, 2]"},
                     FINISH))
    (call,) = result.choices[0].tool_calls
    assert (call.arguments, call.parsed) == ("[1, 2]", "[1, 2]") and codes(result) == ["final-text-mismatch"]


def test_a_whole_input_that_is_no_text_is_json_again() -> None:
    result = fold(ui(START, TEXT_INPUT, {"type": "tool-input-available", "toolCallId": "c1", "toolName": "shell",
                                         "input": [1, 2]}, FINISH))
    assert result.choices[0].tool_calls[0].parsed == [1, 2]


def test_stop_after_tools_that_ran_is_stop_and_before_their_output_is_tool_calls() -> None:
    call = [{"type": "tool-input-available", "toolCallId": "c", "toolName": "f", "input": {}}]
    ran = fold(ui(START, *call, {"type": "tool-output-available", "toolCallId": "c", "output": 1}, FINISH))
    waiting = fold(ui(START, *call, FINISH))
    assert (ran.choices[0].finish_reason, waiting.choices[0].finish_reason) == ("stop", "tool_calls")
    assert ran.export()["parts"][0] == {"type": "tool-f", "toolCallId": "c", "state": "output-available",
                                        "input": {}, "output": 1}


def test_tool_chunks_for_an_unknown_call_are_reported_and_kept() -> None:
    result = fold(ui(START, {"type": "tool-output-available", "toolCallId": "zz", "output": 3}, FINISH))
    assert codes(result) == ["part-missing-start"]
    assert result.export()["parts"][0]["output"] == 3


def test_a_bad_delta_type_is_reported_not_raised() -> None:
    result = fold(ui(START, {"type": "text-start", "id": "a"}, {"type": "text-delta", "id": "a", "delta": 5}, FINISH))
    assert result.choices[0].content == "" and "unexpected-payload" in codes(result)


# -- the end of the stream ----------------------------------------------------------

def test_finish_without_done_is_complete_and_done_without_finish_too() -> None:
    assert fold(ui(START, *text("a", "x"), FINISH, done=False)).complete
    assert fold(ui(START, *text("a", "x"))).complete


def test_a_cut_stream_is_incomplete_with_missing_terminal() -> None:
    result = fold(ui(START, {"type": "text-start", "id": "a"}, {"type": "text-delta", "id": "a", "delta": "x"}, done=False))
    assert not result.complete and "missing-terminal" in codes(result)
    assert result.export()["parts"] == [{"type": "text", "text": "x", "state": "streaming"}]


def test_error_and_abort_end_the_reply_with_an_error() -> None:
    for last in ({"type": "error", "errorText": "rate limited"}, {"type": "abort", "reason": "stop button"}):
        result = fold(ui(START, *text("a", "part"), last))
        assert not result.complete and result.choices[0].finish_reason == "error"
        assert [e.code for e in result.errors] == ["in-stream-error"]


def test_usage_comes_from_message_metadata_only() -> None:
    usage = {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7, "cachedInputTokens": 1}
    result = fold(ui(START, *text("a", "x"), {"type": "finish", "finishReason": "stop", "messageMetadata": {"totalUsage": usage}}))
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.total_tokens,
            result.usage.cache_read_tokens) == (3, 4, 7, 1)
    assert fold(ui(START, *text("a", "x"), FINISH)).usage is None


def test_metadata_merges_and_transient_data_is_not_in_the_message() -> None:
    result = fold(ui({"type": "start", "messageId": "m", "messageMetadata": {"a": 1}},
                     {"type": "data-note", "data": "x", "transient": True},
                     {"type": "data-status", "id": "s", "data": 1}, {"type": "data-status", "id": "s", "data": 2},
                     {"type": "message-metadata", "messageMetadata": {"b": 2}}, FINISH))
    exported = result.export()
    assert exported["metadata"] == {"a": 1, "b": 2}
    assert exported["parts"] == [{"type": "data-status", "id": "s", "data": 2}]


def test_summaries_name_the_chunk() -> None:
    assert spec_of(VercelUI).summary({"type": "text-delta", "id": "a", "delta": "Hi"}) == 'text-delta "Hi"'
    assert spec_of(VercelUI).summary({"type": "tool-input-start", "toolCallId": "c", "toolName": "f"}) == "tool-input-start c f"
    assert spec_of(VercelUI).summary(FINISH) == "finish stop"


def test_a_reset_step_takes_back_its_steps_text_and_keeps_the_rest_in_the_order_it_came() -> None:
    """ai 7's `reset-step`: the parts since the last `start-step` leave the message (a part of an earlier step
    still open is not the step's: its text stays, where it came); a reset with no step before takes all back.
    The same in every chunking (the text is rebuilt once, at the end)."""
    step = {"type": "start-step"}
    result = tr_fold(ui(START, step, {"type": "text-start", "id": "a"}, {"type": "text-delta", "id": "a", "delta": "Kept "},
                        step, {"type": "text-start", "id": "b"}, {"type": "text-delta", "id": "b", "delta": "dropped "},
                        {"type": "text-delta", "id": "a", "delta": "too late "},
                        {"type": "tool-input-start", "toolCallId": "c1", "toolName": "x"},
                        {"type": "reset-step"}, *text("c", "and new."), FINISH))
    assert result.choices[0].content == "Kept too late and new." and not result.choices[0].tool_calls
    assert [part["type"] for part in result.export()["parts"]] == ["step-start", "text", "step-start", "text"]
    everything = fold(ui(START, *text("a", "gone"), {"type": "reset-step"}, *text("b", "left"), FINISH))
    assert everything.choices[0].content == "left" and not everything.diagnostics


def test_a_tool_approval_response_answers_the_request_of_its_id() -> None:
    call = [{"type": "tool-input-available", "toolCallId": "c1", "toolName": "x", "input": {}},
            {"type": "tool-approval-request", "approvalId": "ap", "toolCallId": "c1", "isAutomatic": False}]
    result = fold(ui(START, *call, {"type": "tool-approval-response", "approvalId": "ap", "approved": False}, FINISH))
    (part,) = result.export()["parts"]
    assert part["state"] == "approval-responded" and part["approval"] == {"id": "ap", "approved": False}
    stray = fold(ui(START, {"type": "tool-approval-response", "approvalId": "none", "approved": True}, FINISH))
    assert codes(stray) == ["part-missing-start"] and stray.complete
