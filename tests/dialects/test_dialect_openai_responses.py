"""OpenAI Responses dialect: each test builds the smallest stream that shows one
rule, trap or diagnostic (reference §4.2, R1-R4, U1, §5)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamfold
from streamfold import Diagnostic, Folder, Result, TextDelta, fold
from streamfold.dialects import detect, spec_of
from streamfold.dialects.openai_responses import OpenAIResponses
from values import assert_a_value

CAPTURES = sorted(p for p in (Path(__file__).resolve().parents[1] / "captures" / "openai-responses").iterdir()
                  if not p.name.endswith((".expect.json", ".md")))

RID, MSG, FC, RS = "resp_1", "msg_1", "fc_1", "rs_1"


def sse(*events: dict[str, Any], numbered: bool = True, names: bool = True, done: bool = False) -> bytes:
    """Events as the API frames them: `event:` = type, sequence numbers from 0."""
    out = []
    for seq, event in enumerate(events):
        if numbered and "sequence_number" not in event:
            event = {"type": event["type"], "sequence_number": seq, **event}
        head = f"event: {event['type']}\n" if names else ""
        out.append(f"{head}data: {json.dumps(event)}\n\n")
    return "".join(out).encode() + (b"data: [DONE]\n\n" if done else b"")


def response(status: str = "in_progress", output: list[Any] | None = None, **fields: Any) -> dict[str, Any]:
    return {"id": RID, "object": "response", "created_at": 1769900000, "model": "gpt-5-mini", "status": status,
            "output": output or [], "usage": None, **fields}


def created() -> dict[str, Any]:
    return {"type": "response.created", "response": response()}


def completed(output: list[Any] | None = None, status: str = "completed", **fields: Any) -> dict[str, Any]:
    kind = {"completed": "response.completed", "incomplete": "response.incomplete", "failed": "response.failed"}
    return {"type": kind.get(status, "response.completed"), "response": response(status, output, **fields)}


def message_added(index: int = 0, item_id: str = MSG) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index,
            "item": {"id": item_id, "type": "message", "role": "assistant", "status": "in_progress", "content": []}}


def part_added(index: int = 0, part: int = 0, kind: str = "output_text") -> dict[str, Any]:
    body = {"type": kind, "text": "", "annotations": []} if kind == "output_text" else {"type": kind, kind: ""}
    return {"type": "response.content_part.added", "item_id": MSG, "output_index": index, "content_index": part,
            "part": body}


def delta(text: str, index: int = 0, part: int = 0) -> dict[str, Any]:
    return {"type": "response.output_text.delta", "item_id": MSG, "output_index": index, "content_index": part,
            "delta": text, "logprobs": []}


def text_done(text: str, index: int = 0, part: int = 0) -> dict[str, Any]:
    return {"type": "response.output_text.done", "item_id": MSG, "output_index": index, "content_index": part,
            "text": text, "logprobs": []}


def call_added(index: int, call_id: str = "call_a", name: str = "lookup", item_id: str = FC) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index,
            "item": {"id": item_id, "type": "function_call", "call_id": call_id, "name": name, "arguments": "",
                     "status": "in_progress"}}


def args_delta(text: str, index: int) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.delta", "item_id": FC, "output_index": index, "delta": text}


def args_done(arguments: Any, index: int) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.done", "item_id": FC, "output_index": index,
            "arguments": arguments}


def summary_delta(text: str, summary: int, index: int = 0) -> dict[str, Any]:
    return {"type": "response.reasoning_summary_text.delta", "item_id": RS, "output_index": index,
            "summary_index": summary, "delta": text}


def reasoning_added(index: int = 0) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index,
            "item": {"id": RS, "type": "reasoning", "summary": []}}


def findings(result: Result) -> list[Diagnostic]:
    """Diagnostics but `empty-terminal-output`: the helpers' terminal events carry `output: []`."""
    return [d for d in result.diagnostics if d.code != "empty-terminal-output"]


def codes(result: Result, *, everything: bool = False) -> list[str]:
    return [d.code for d in (result.diagnostics if everything else findings(result))]


def text_stream(*middle: dict[str, Any], end: dict[str, Any] | None = None, **kw: Any) -> bytes:
    return sse(created(), message_added(), part_added(), *middle, end or completed(), **kw)


# -- detection ------------------------------------------------------------------


def test_claims_responses_events_and_nothing_else() -> None:
    assert OpenAIResponses.claims({"type": "response.created", "response": {}})
    assert OpenAIResponses.claims({"type": "error", "sequence_number": 3, "code": "server_error", "message": "x"})
    assert not OpenAIResponses.claims({"type": "error", "error": {"type": "overloaded_error"}})  # Anthropic
    assert not OpenAIResponses.claims({"type": "message_start", "message": {}})
    assert not OpenAIResponses.claims({"object": "chat.completion.chunk", "choices": []})
    assert not OpenAIResponses.claims({"type": 3})
    assert not OpenAIResponses.claims(["response.created"])
    assert detect({"type": "response.output_text.delta", "delta": "x"}) is OpenAIResponses


def test_a_stream_is_detected_without_naming_the_dialect() -> None:
    result = fold(text_stream(delta("Hi")))
    assert (result.dialect, result.complete, result.id, result.model) == ("openai-responses", True, RID, "gpt-5-mini")
    assert result.choices[0].role == "assistant"


# -- text, provenance, .done -----------------------------------------------------


def test_text_deltas_append_and_every_character_knows_its_frame() -> None:
    result = fold(text_stream(delta("One moment, "), delta("checking."), text_done("One moment, checking.")))
    assert result.choices[0].content == "One moment, checking."
    assert codes(result) == []
    frame = result.frame_producing_char(12, field="content")
    assert frame is not None and frame.index == 4


def test_a_done_text_that_differs_replaces_the_join_and_says_so() -> None:
    result = fold(text_stream(delta("Hello "), delta("wrld"), text_done("Hello world")))
    assert result.choices[0].content == "Hello world"
    (finding,) = [d for d in result.diagnostics if d.code == "done-mismatch"]
    assert finding.frame == 5
    assert finding.details == {"source": "`response.output_text.done`", "kept": "done", "position": 7,
                               "streamed": 10, "final": 11}
    assert "final value is the vendor's own last word and is the result" in finding.message
    # the replaced text comes from the .done frame now
    frame = result.frame_producing_char(0, field="content")
    assert frame is not None and frame.index == 5


def test_replacing_one_part_keeps_the_others_in_place_with_their_frames() -> None:
    data = sse(created(), message_added(0), part_added(0, 0), message_added(1, "msg_2"), part_added(1, 0),
               delta("A1 ", 0), delta("B1 ", 1), delta("A2", 0), delta("B2", 1),
               text_done("AX", 0), text_done("B1 B2", 1), completed())
    result = fold(data)
    # Arrival order is kept in content: A1 B1 A2 B2, and A's two runs are replaced by its .done text.
    assert result.choices[0].content == "AXB1 B2"
    assert codes(result) == ["done-mismatch"]
    sources = [result.frame_producing_char(i, field="content") for i in range(7)]
    assert [f.index for f in sources if f is not None] == [9, 9, 6, 6, 6, 8, 8]  # AX (done), B1 , B2


def test_an_empty_final_value_keeps_the_deltas() -> None:
    # agentgateway/agentgateway#2281: content_part.done with text "" and an output_item.done without content.
    part_done = {"type": "response.content_part.done", "item_id": MSG, "output_index": 0, "content_index": 0,
                 "part": {"type": "output_text", "text": "", "annotations": []}}
    item_done = {"type": "response.output_item.done", "output_index": 0,
                 "item": {"id": MSG, "type": "message", "role": "assistant", "status": "completed", "content": []}}
    result = fold(text_stream(delta("4"), part_done, item_done))
    assert result.choices[0].content == "4"
    details = [d.details["kept"] for d in result.diagnostics if d.code == "done-mismatch"]
    assert details == ["deltas", "deltas"]


def test_text_only_in_done_is_used_and_reported() -> None:
    result = fold(text_stream(text_done("Only the final text.")))
    assert result.choices[0].content == "Only the final text."
    assert codes(result) == ["done-without-deltas"]


def test_later_final_words_that_agree_are_silent() -> None:
    item_done = {"type": "response.output_item.done", "output_index": 0,
                 "item": {"id": MSG, "type": "message", "role": "assistant", "status": "completed",
                          "content": [{"type": "output_text", "text": "Hi there", "annotations": []}]}}
    final = completed([item_done["item"]])
    result = fold(text_stream(delta("Hi"), delta(" there"), text_done("Hi there"), item_done, end=final))
    assert result.choices[0].content == "Hi there" and codes(result) == []


def test_the_terminal_output_fills_a_reply_that_was_never_streamed() -> None:
    # R4: a gateway that sends created + completed only.
    item = {"id": MSG, "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "From the final object.", "annotations": []}]}
    call = {"id": FC, "type": "function_call", "call_id": "call_z", "name": "f", "arguments": "{\"a\":1}",
            "status": "completed"}
    result = fold(sse(created(), completed([item, call])))
    choice = result.choices[0]
    assert choice.content == "From the final object."
    assert [(c.id, c.name, c.parsed) for c in choice.tool_calls] == [("call_z", "f", {"a": 1})]
    assert choice.finish_reason == "tool_calls"
    assert codes(result) == ["output-from-terminal", "output-from-terminal"]


def test_an_empty_terminal_output_is_reported_and_the_stream_rebuilt() -> None:
    result = fold(text_stream(delta("Kept."), text_done("Kept."), end=completed([])))
    assert result.choices[0].content == "Kept."
    assert codes(result, everything=True) == ["empty-terminal-output"]
    assert result.export()["output"][0]["content"][0]["text"] == "Kept."


def test_a_terminal_response_without_output_is_reported_too() -> None:
    end = completed()
    del end["response"]["output"]  # decolua/9router#705
    result = fold(text_stream(delta("x"), end=end))
    assert codes(result, everything=True) == ["empty-terminal-output"]


def test_a_failed_response_with_empty_output_is_not_an_empty_output_warning() -> None:
    failed = completed(status="failed", error={"code": "server_error", "message": "boom"})
    result = fold(text_stream(delta("partial"), end=failed))
    assert "empty-terminal-output" not in codes(result, everything=True)


# -- refusal and reasoning --------------------------------------------------------


def test_refusal_is_kept_apart_from_content() -> None:
    refusal = [{"type": "response.refusal.delta", "item_id": MSG, "output_index": 0, "content_index": 0,
                "delta": piece} for piece in ("I can't", " help.")]
    done = {"type": "response.refusal.done", "item_id": MSG, "output_index": 0, "content_index": 0,
            "refusal": "I can't help."}
    result = fold(sse(created(), message_added(), part_added(kind="refusal"), *refusal, done, completed()))
    choice = result.choices[0]
    assert (choice.content, choice.refusal, choice.finish_reason) == ("", "I can't help.", "stop")
    assert [b.type for b in choice.blocks] == ["refusal"]


def test_summary_parts_are_joined_with_a_blank_line_and_kept_apart_for_export() -> None:
    data = sse(created(), reasoning_added(), summary_delta("**Plan**\n\nFirst", 0), summary_delta(" part.", 0),
               summary_delta("**Next**\n\nSecond part.", 1), message_added(1), part_added(1), delta("Answer", 1),
               completed())
    result = fold(data)
    assert result.choices[0].reasoning == "**Plan**\n\nFirst part.\n\n**Next**\n\nSecond part."
    assert result.choices[0].content == "Answer"
    item = result.export()["output"][0]
    assert item["summary"] == [{"type": "summary_text", "text": "**Plan**\n\nFirst part."},
                               {"type": "summary_text", "text": "**Next**\n\nSecond part."}]


def test_a_summary_done_that_differs_replaces_only_its_part() -> None:
    done = {"type": "response.reasoning_summary_text.done", "item_id": RS, "output_index": 0, "summary_index": 0,
            "text": "First, fixed."}
    data = sse(created(), reasoning_added(), summary_delta("First", 0), summary_delta("Second", 1), done,
               completed())
    result = fold(data)
    assert result.choices[0].reasoning == "First, fixed.\n\nSecond"
    assert codes(result) == ["done-mismatch"]


def test_raw_reasoning_text_of_open_weight_models() -> None:
    deltas = [{"type": "response.reasoning_text.delta", "item_id": RS, "output_index": 0, "content_index": 0,
               "delta": piece} for piece in ("We need", " to answer.")]
    done = {"type": "response.reasoning_text.done", "item_id": RS, "output_index": 0, "content_index": 0,
            "text": "We need to answer."}
    result = fold(sse(created(), reasoning_added(), *deltas, done, completed()))
    assert result.choices[0].reasoning == "We need to answer."
    assert result.export()["output"][0]["content"] == [{"type": "reasoning_text", "text": "We need to answer."}]


def test_encrypted_content_comes_from_the_done_item_not_the_skeleton() -> None:
    # R3: the `.added` copy may be incomplete.
    added = {"type": "response.output_item.added", "output_index": 0,
             "item": {"id": RS, "type": "reasoning", "summary": [], "encrypted_content": "gAAA"}}
    done = {"type": "response.output_item.done", "output_index": 0,
            "item": {"id": RS, "type": "reasoning", "summary": [], "encrypted_content": "gAAAAB-full"}}
    result = fold(sse(created(), added, done, completed([])))
    assert result.export()["output"][0]["encrypted_content"] == "gAAAAB-full"


# -- function calls -----------------------------------------------------------------


def test_a_function_call_is_keyed_by_output_index_and_identified_by_call_id() -> None:
    data = sse(created(), call_added(0, "call_R2d9", "get_weather"), args_delta('{"city":', 0),
               args_delta('"Oslo"}', 0), args_done('{"city":"Oslo"}', 0), completed())
    result = fold(data)
    (call,) = result.choices[0].tool_calls
    assert (call.id, call.name, call.parsed, call.key) == ("call_R2d9", "get_weather", {"city": "Oslo"}, 0)
    assert result.choices[0].finish_reason == "tool_calls"
    assert result.choices[0].finish_reason_raw == "completed"
    exported = result.export()["output"][0]
    assert (exported["id"], exported["call_id"]) == (FC, "call_R2d9")  # R2: both ids kept


def test_interleaved_argument_deltas_of_parallel_calls_stay_apart() -> None:
    data = sse(created(), call_added(1, "call_a", "a", "fc_a"), call_added(2, "call_b", "b", "fc_b"),
               args_delta('{"x"', 1), args_delta('{"y"', 2), args_delta(":1}", 1), args_delta(":2}", 2), completed())
    calls = fold(data).choices[0].tool_calls
    assert [(c.index, c.key, c.id, c.parsed) for c in calls] == [(0, 1, "call_a", {"x": 1}), (1, 2, "call_b", {"y": 2})]


def test_arguments_only_in_done_are_used() -> None:
    # R4: lidge-jun/opencodex#4652, gpt-5.3-codex-spark.
    result = fold(sse(created(), call_added(0), args_done('{"q":"x"}', 0), completed()))
    assert result.choices[0].tool_calls[0].parsed == {"q": "x"}
    (finding,) = [d for d in result.diagnostics if d.code == "done-without-deltas"]
    assert "runs the tool with `{}`" in finding.message


def test_arguments_done_that_differ_replace_the_join() -> None:
    result = fold(sse(created(), call_added(0), args_delta('{"q":"x"}{"q":"x"}', 0), args_done('{"q":"x"}', 0),
                      completed()))
    call = result.choices[0].tool_calls[0]
    assert (call.arguments, call.parsed) == ('{"q":"x"}', {"q": "x"})
    assert codes(result) == ["done-mismatch"]


def test_object_valued_arguments_in_done_are_serialised_compactly() -> None:
    result = fold(sse(created(), call_added(0), args_done({"q": "é", "n": 1}, 0), completed()))
    assert result.choices[0].tool_calls[0].arguments == '{"q":"é","n":1}'


def test_arguments_only_in_the_done_item_are_used() -> None:
    item = {"type": "response.output_item.done", "output_index": 0,
            "item": {"id": FC, "type": "function_call", "call_id": "call_a", "name": "lookup",
                     "arguments": '{"k":2}', "status": "completed"}}
    result = fold(sse(created(), call_added(0), item, completed()))
    assert result.choices[0].tool_calls[0].parsed == {"k": 2}
    assert codes(result) == ["done-without-deltas"]


def test_a_changed_call_id_keeps_the_first_and_says_so() -> None:
    item = {"type": "response.output_item.done", "output_index": 0,
            "item": {"id": FC, "type": "function_call", "call_id": "call_other", "name": "lookup",
                     "arguments": "{}", "status": "completed"}}
    result = fold(sse(created(), call_added(0, "call_a"), args_delta("{}", 0), item, completed()))
    assert result.choices[0].tool_calls[0].id == "call_a"
    assert codes(result) == ["tool-call-identity-changed"]


def test_truncated_arguments_are_invalid_and_blame_the_token_limit() -> None:
    end = completed(status="incomplete", incomplete_details={"reason": "max_output_tokens"})
    result = fold(sse(created(), call_added(0), args_delta('{"path": "/ho', 0), end))
    call = result.choices[0].tool_calls[0]
    assert call.error is not None and call.parsed is None
    (finding,) = [d for d in result.diagnostics if d.code == "tool-args-invalid"]
    assert "max_output_tokens" in finding.message
    assert result.choices[0].finish_reason == "length"


# -- annotations ----------------------------------------------------------------------


def annotation(index: int, start: int) -> dict[str, Any]:
    return {"type": "response.output_text.annotation.added", "item_id": MSG, "output_index": 0,
            "content_index": 0, "annotation_index": index,
            "annotation": {"type": "url_citation", "start_index": start, "end_index": start + 3,
                           "url": f"https://example.org/{index}", "title": str(index)}}


def test_annotations_are_placed_at_their_index() -> None:
    result = fold(text_stream(delta("abc def"), annotation(1, 4), annotation(0, 0), end=completed([])))
    assert codes(result, everything=True) == ["annotation-out-of-order", "empty-terminal-output"]
    (finding,) = [d for d in result.diagnostics if d.code == "annotation-out-of-order"]
    assert finding.severity == "info" and finding.details == {"annotation_index": 0, "after": 1}
    part = result.export()["output"][0]["content"][0]
    assert [a["start_index"] for a in part["annotations"]] == [0, 4]


# -- finish reasons (§5) ----------------------------------------------------------------


@pytest.mark.parametrize(("status", "reason", "finish", "raw"), [
    ("completed", None, "stop", "completed"),
    ("incomplete", "max_output_tokens", "length", "max_output_tokens"),
    ("incomplete", "content_filter", "content_filter", "content_filter"),
    ("incomplete", "max_messages", "incomplete", "max_messages"),
    ("incomplete", "some_future_reason", "incomplete", "some_future_reason"),
    ("incomplete", None, "incomplete", "incomplete"),
    ("cancelled", None, "other", "cancelled"),
])
def test_finish_reason_from_status_and_incomplete_details(status: str, reason: str | None, finish: str,
                                                          raw: str) -> None:
    details: dict[str, Any] = {"incomplete_details": {"reason": reason}} if reason else {}
    end = {"type": "response.incomplete" if status == "incomplete" else "response.completed",
           "response": response(status, **details)}
    choice = fold(text_stream(delta("x"), end=end)).choices[0]
    assert (choice.finish_reason, choice.finish_reason_raw) == (finish, raw)


def test_response_failed_is_an_in_stream_error() -> None:
    failed = completed(status="failed", error={"code": "server_error", "message": "An error occurred."})
    result = fold(text_stream(delta("partial"), end=failed))
    assert not result.complete
    assert (result.choices[0].finish_reason, result.choices[0].finish_reason_raw) == ("error", "failed")
    (error,) = result.errors
    assert error.code == "in-stream-error" and "An error occurred." in error.message
    assert json.loads(error.raw or "") == {"code": "server_error", "message": "An error occurred."}
    assert "missing-terminal" not in codes(result)


def test_an_error_event_is_an_in_stream_error() -> None:
    error = {"type": "error", "code": "rate_limit_exceeded", "message": "Slow down.", "param": None}
    result = fold(text_stream(delta("part"), error, end={"type": "response.failed", "response": response("failed")}))
    assert [e.code for e in result.errors] == ["in-stream-error", "in-stream-error"]
    assert result.choices[0].finish_reason == "error" and not result.complete
    export = result.export()
    assert export["status"] == "failed" and export["error"]["message"] == "Slow down."


def test_an_error_event_alone_then_eof() -> None:
    error = {"type": "error", "code": None, "message": "Internal error.", "param": None}
    result = fold(sse(created(), error))
    assert result.choices[0].finish_reason == "error" and result.choices[0].finish_reason_raw is None
    assert codes(result) == []  # no missing-terminal: the error explains the end


# -- the end of the stream (R1) ------------------------------------------------------


def test_a_gateway_done_after_completed_is_harmless() -> None:
    result = fold(text_stream(delta("x"), done=True))
    assert result.complete and codes(result) == [] and result.errors == ()


def test_done_without_a_terminal_event_is_accepted_and_reported() -> None:
    result = fold(sse(created(), message_added(), part_added(), delta("x"), done=True))
    assert result.complete
    assert codes(result) == ["no-final-response"]
    assert result.choices[0].finish_reason is None


def test_response_done_ends_the_stream() -> None:
    end = {"type": "response.done", "response": response("completed")}
    result = fold(text_stream(delta("x"), end=end))
    assert result.complete and result.choices[0].finish_reason == "stop"
    assert [(d.code, d.severity) for d in findings(result)] == [("nonstandard-terminal", "info")]


def test_eof_before_a_terminal_event_is_missing_terminal() -> None:
    result = fold(sse(created(), message_added(), part_added(), delta("cut")))
    assert not result.complete
    (finding,) = [d for d in result.diagnostics if d.code == "missing-terminal"]
    assert "response.completed" in finding.message
    assert result.export()["status"] == "in_progress"
    assert result.export()["output"][0]["status"] == "incomplete"


def test_frames_after_the_end_are_listed_not_folded() -> None:
    data = text_stream(delta("a"), end=completed([])) + sse(delta("b"), numbered=False)
    result = fold(data)
    assert result.choices[0].content == "a" and result.complete
    (finding,) = [d for d in result.diagnostics if d.code == "frame-after-terminal"]
    assert finding.frame == 5 and finding.details == {"frames": [5]}


# -- sequence numbers, names, odd payloads -------------------------------------------------


def test_a_sequence_gap_names_the_expected_and_seen_numbers() -> None:
    events = [created(), message_added(), part_added(), delta("a"), delta("c"), completed()]
    events = [{"type": e["type"], "sequence_number": n, **e} for e, n in zip(events, [0, 1, 2, 3, 5, 6])]
    result = fold(sse(*events))
    (finding,) = findings(result)
    assert (finding.code, finding.frame, finding.details) == ("sequence-gap", 4, {"expected": 4, "seen": 5})
    assert "1 event(s) (4) are missing" in finding.message


def test_reordered_sequence_numbers_are_reported() -> None:
    events = [created(), message_added(), part_added(), delta("a"), delta("b"), delta("c"), completed()]
    events = [{"type": e["type"], "sequence_number": n, **e} for e, n in zip(events, [0, 1, 2, 3, 5, 4, 6])]
    result = fold(sse(*events))
    assert [(d.code, d.details) for d in findings(result)] == [
        ("sequence-gap", {"expected": 4, "seen": 5}), ("sequence-gap", {"expected": 6, "seen": 4})]
    assert "reordered" in findings(result)[1].message


def test_sequence_gaps_past_ten_are_counted_once() -> None:
    events = [{"type": e["type"], "sequence_number": 2 * n, **e}
              for n, e in enumerate([created(), message_added(), part_added(), *[delta("x")] * 12, completed()])]
    result = fold(sse(*events))
    gaps = [d for d in result.diagnostics if d.code == "sequence-gap"]
    assert len(gaps) == 11 and gaps[-1].details["frames"] == [11, 12, 13, 14, 15]


def test_streams_without_sequence_numbers_are_fine() -> None:
    assert codes(fold(text_stream(delta("x"), numbered=False))) == []


def test_dispatch_is_on_the_json_type_not_the_event_name() -> None:
    data = text_stream(delta("x")).replace(b"event: response.output_text.delta", b"event: response.text.delta")
    result = fold(data)
    assert result.choices[0].content == "x"
    assert [(d.code, d.severity) for d in findings(result)] == [("event-name-mismatch", "info")]


def test_event_lines_stripped_by_a_proxy_change_nothing() -> None:
    result = fold(text_stream(delta("x"), names=False))
    assert result.choices[0].content == "x" and codes(result) == []


def test_informational_events_are_ignored_silently_and_unknown_ones_noted() -> None:
    info = [{"type": t, "output_index": 0, "item_id": "ws_1"} for t in (
        "response.web_search_call.in_progress", "response.web_search_call.searching",
        "response.mcp_call.in_progress", "response.code_interpreter_call.interpreting",
        "response.image_generation_call.generating", "response.file_search_call.completed")]
    result = fold(text_stream(delta("x"), *info, {"type": "response.brand_new.thing"},
                              {"type": "response.brand_new.thing"}))
    assert [(d.code, d.severity, d.details) for d in findings(result)] == [
        ("unknown-event", "info", {"type": "response.brand_new.thing"})]


def test_a_delta_before_its_item_is_created_and_reported() -> None:
    result = fold(sse(created(), delta("orphan"), completed()))
    assert result.choices[0].content == "orphan"
    assert codes(result) == ["missing-added-event"]
    assert "Received a content event" in findings(result)[0].message


def test_payloads_of_the_wrong_shape_are_ignored_with_a_word() -> None:
    data = text_stream(delta("x")) + b""
    data = data.replace(b"data: {\"type\": \"response.output_text.delta\"",
                        b"data: [1, 2]\n\ndata: {\"no_type\": 1}\n\ndata: {\"type\": \"response.output_text.delta\"")
    result = fold(data)
    assert result.choices[0].content == "x"
    assert codes(result).count("unexpected-payload") == 2


def test_a_chat_style_error_envelope_is_an_in_stream_error() -> None:
    envelope = b'data: {"error": {"message": "upstream timeout", "code": "timeout"}}\n\n'
    result = fold(sse(created(), message_added(), part_added(), delta("x")) + envelope)
    assert [e.code for e in result.errors] == ["in-stream-error"]
    assert result.choices[0].finish_reason == "error" and not result.complete


def test_bad_indexes_never_raise() -> None:
    odd: list[dict[str, Any]] = [
           {"type": "response.output_text.delta", "output_index": "0", "content_index": 0, "delta": "x"},
           {"type": "response.output_text.delta", "output_index": 0, "content_index": [0], "delta": "x"},
           {"type": "response.output_item.done", "output_index": 0, "item": None},
           {"type": "response.function_call_arguments.delta", "output_index": None, "delta": "x"},
           {"type": "response.reasoning_summary_text.delta", "output_index": 0, "summary_index": None, "delta": "y"},
           {"type": "response.output_text.delta", "output_index": {}, "content_index": {}, "delta": "x"}]
    result = fold(text_stream(*odd))
    assert result.choices[0].content == "" and "unexpected-payload" in codes(result)


def test_a_changed_response_id_is_reported() -> None:
    other = {"type": "response.in_progress", "response": {**response(), "id": "resp_2"}}
    result = fold(text_stream(other, delta("x")))
    assert result.id == RID and codes(result) == ["response-id-changed"]


# -- usage (U1) -----------------------------------------------------------------------------


def test_usage_comes_from_the_terminal_response_object() -> None:
    usage = {"input_tokens": 88, "input_tokens_details": {"cached_tokens": 64, "cache_write_tokens": 0},
             "output_tokens": 64, "output_tokens_details": {"reasoning_tokens": 38}, "total_tokens": 152}
    result = fold(text_stream(delta("x"), end=completed(usage=usage)))
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.reasoning_tokens,
            result.usage.cache_read_tokens, result.usage.total_tokens) == (88, 64, 38, 64, 152)


def test_no_usage_is_null_usage() -> None:
    assert fold(text_stream(delta("x"))).usage is None


# -- blocks, events, export, summaries --------------------------------------------------------


def test_blocks_are_the_output_items_with_their_frames() -> None:
    data = sse(created(), reasoning_added(0), summary_delta("r", 0), message_added(1), part_added(1),
               delta("t", 1), call_added(2), args_delta("{}", 2), completed())
    blocks = fold(data).choices[0].blocks
    assert [(b.type, b.index, b.frames) for b in blocks] == [
        ("reasoning", 0, (1, 2)), ("text", 1, (3, 5)), ("tool_call", 2, (6, 7))]


def test_incremental_feed_yields_text_deltas() -> None:
    folder = Folder()
    events = []
    for byte in range(len(data := text_stream(delta("He"), delta("llo")))):
        events.extend(folder.feed(data[byte : byte + 1]))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["He", "llo"]
    assert folder.close().choices[0].content == "Hello"


def test_export_fills_what_a_trimmed_stream_never_said() -> None:
    terminal = {"type": "response.completed", "response": {"id": "resp_x", "status": "completed"}}
    exported = fold(sse({"type": "response.created", "response": {"id": "resp_x"}}, message_added(),
                        part_added(), delta("x"), terminal)).export()
    from openai.types.responses import Response
    model = Response.model_validate(exported)
    assert (model.output_text, model.status, model.tools, model.created_at) == ("x", "completed", [], 0)


def _without_terminal_output(data: bytes) -> bytes | None:
    """The capture with its terminal response's `output` emptied, so that the export rebuilds the items
    from the stream (None when the last event carries no `output`)."""
    head, _, last = data.rstrip().removesuffix(b"data: [DONE]").rstrip(b"\n").rpartition(b"\ndata: ")
    event = json.loads(last)
    if type(event.get("response")) is not dict or not event["response"].get("output"):
        return None
    event["response"]["output"] = []
    return head + b"\ndata: " + json.dumps(event).encode() + b"\n\n"


_ROUND_TRIPS = [(p.stem, p.read_bytes()) for p in CAPTURES]
_ROUND_TRIPS += [(f"{stem} (rebuilt)", rebuilt) for stem, data in _ROUND_TRIPS
                 if (rebuilt := _without_terminal_output(data)) is not None]


@pytest.mark.parametrize("data", [data for _, data in _ROUND_TRIPS], ids=[name for name, _ in _ROUND_TRIPS])
def test_a_result_read_back_from_json_is_equal_and_exports_the_same_response(data: bytes) -> None:
    result = fold(data)
    assert result.dialect == "openai-responses"
    back = assert_a_value(result)
    assert back.native == result.native is not None
    # The snapshot points into the reply instead of copying it.
    items = json.dumps(result.native.get("items", []), ensure_ascii=False)
    choice = result.choices[0] if result.choices else None
    for text in (choice.content, choice.reasoning, choice.refusal) if choice else ():
        if text and len(text) > 8:
            assert text not in items


def test_summaries_are_one_line() -> None:
    assert spec_of(OpenAIResponses).summary(delta("Hi")) == 'output_text.delta [0:0] "Hi"'
    assert spec_of(OpenAIResponses).summary(call_added(2, "call_x", "f")) == \
        "output_item.added [2] function_call f call_x fc_1"
    assert spec_of(OpenAIResponses).summary(completed(status="incomplete", incomplete_details={"reason": "max_output_tokens"},
                                               usage={"input_tokens": 1})) == \
        "incomplete incomplete max_output_tokens usage"
    assert spec_of(OpenAIResponses).summary({"type": "error", "code": "server_error", "message": "boom"}) == \
        'error server_error: "boom"'
    assert spec_of(OpenAIResponses).summary([1]) == "[1]"


# -- the captures, whatever the chunking and the JSON decoder ---------------------------------


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(CAPTURES), st.lists(st.integers(min_value=0), max_size=25))
def test_captures_do_not_depend_on_chunking(path: Path, cuts: list[int]) -> None:
    data = path.read_bytes()
    points = sorted({c % (len(data) + 1) for c in cuts})
    folder = Folder()
    for a, b in zip([0, *points], [*points, len(data)]):
        folder.feed(data[a:b])
    assert folder.close() == fold(data)


def test_captures_do_not_depend_on_the_fast_decoder() -> None:
    script = (
        "import sys, json; sys.modules['msgspec'] = None\n"
        "import streamfold, pathlib\n"
        "out = {p: streamfold.fold(pathlib.Path(p).read_bytes()).to_dict() for p in sys.argv[1:]}\n"
        "print(json.dumps(out, sort_keys=True))\n"
    )
    paths = [str(p) for p in CAPTURES]
    without = subprocess.run([sys.executable, "-c", script, *paths], capture_output=True, text=True, check=True)
    with_fast = {p: streamfold.fold(Path(p).read_bytes()).to_dict() for p in paths}
    assert json.loads(without.stdout) == json.loads(json.dumps(with_fast, sort_keys=True))


_TYPES = ["response.created", "response.in_progress", "response.output_item.added", "response.output_item.done",
          "response.content_part.added", "response.content_part.done", "response.output_text.delta",
          "response.output_text.done", "response.output_text.annotation.added", "response.refusal.delta",
          "response.refusal.done", "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
          "response.reasoning_summary_text.done", "response.reasoning_text.delta", "response.reasoning_text.done",
          "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.completed",
          "response.incomplete", "response.failed", "response.done", "error"]
_ANY = st.recursive(st.none() | st.booleans() | st.integers(-2, 3) | st.sampled_from(["", "x", "{}", "message"]),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                        st.sampled_from(["type", "id", "text", "content", "summary", "status", "arguments"]),
                        inner, max_size=3), max_leaves=6)
_ITEM = st.fixed_dictionaries({"type": st.sampled_from(["message", "reasoning", "function_call", "web_search_call"]),
                               "id": st.sampled_from(["a", "b"]), "call_id": st.sampled_from(["c1", "c2", None]),
                               "name": st.sampled_from(["f", ""]), "arguments": _ANY, "content": _ANY,
                               "summary": _ANY})
_EVENT = st.fixed_dictionaries({"type": st.sampled_from(_TYPES)}, optional={
    "sequence_number": st.integers(0, 6), "output_index": st.integers(0, 2) | _ANY,
    "content_index": st.integers(0, 1) | _ANY, "summary_index": st.integers(0, 1),
    "annotation_index": st.integers(0, 2), "delta": st.sampled_from(["a", "", "{"]) | _ANY, "text": _ANY,
    "arguments": _ANY, "refusal": _ANY, "item": _ITEM | _ANY, "part": _ANY, "annotation": _ANY,
    "response": st.fixed_dictionaries({}, optional={"id": _ANY, "status": _ANY,
                                                    "output": st.lists(_ITEM, max_size=2) | _ANY,
                                                    "usage": _ANY, "error": _ANY, "incomplete_details": _ANY}),
    "message": _ANY, "code": _ANY})


@settings(max_examples=300, deadline=None)
@given(st.lists(_EVENT, max_size=12), st.booleans())
def test_arbitrary_event_sequences_never_raise(events: list[dict[str, Any]], done: bool) -> None:
    result = fold(sse(*events, numbered=False, done=done), dialect="openai-responses")
    result.to_dict()
    result.export()
