"""Cohere v2 chat dialect (reference §4.6, B2): each test builds the smallest
stream that shows one rule, trap or diagnostic. The export is checked for the
documented v2 `ChatResponse` shape (the cohere SDK is not a test dependency)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamfold import Folder, Result, ToolCallDone, fold
from streamfold.dialects import detect, spec_of
from streamfold.dialects.cohere import Cohere

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "cohere"
ID = "6d4c8a1e-0f3b-4e27-9a5c-3b8e2f1d7c60"


def sse(*events: Any, named: bool = True, done: bool = False) -> bytes:
    out = b""
    for event in events:
        name = event.get("type") if named and isinstance(event, dict) else None
        out += (f"event: {name}\n".encode() if name else b"") + b"data: " + json.dumps(event).encode() + b"\n\n"
    return out + (b"data: [DONE]\n\n" if done else b"")


def start(id_: str = ID) -> dict[str, Any]:
    return {"id": id_, "type": "message-start",
            "delta": {"message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}}}


def content_start(index: int, kind: str = "text") -> dict[str, Any]:
    return {"type": "content-start", "index": index, "delta": {"message": {"content": {"type": kind, kind: ""}}}}


def content(index: int, text: str, kind: str = "text") -> dict[str, Any]:
    return {"type": "content-delta", "index": index, "delta": {"message": {"content": {kind: text}}}}


def plan(text: str) -> dict[str, Any]:
    return {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": text}}}


def call_start(index: int, call_id: str, name: str, arguments: Any = "") -> dict[str, Any]:
    return {"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": {
        "id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}}}}


def call_delta(index: int, arguments: str) -> dict[str, Any]:
    return {"type": "tool-call-delta", "index": index, "delta": {"message": {"tool_calls": {"function": {"arguments": arguments}}}}}


def end(finish: str = "COMPLETE", usage: Any = None, error: str | None = None) -> dict[str, Any]:
    delta: dict[str, Any] = {"finish_reason": finish}
    if usage is not None:
        delta["usage"] = usage
    if error is not None:
        delta["error"] = error
    return {"type": "message-end", "delta": delta}


USAGE = {"billed_units": {"input_tokens": 37, "output_tokens": 21}, "tokens": {"input_tokens": 1204, "output_tokens": 58},
         "cached_tokens": 1024}


def codes(result: Result) -> list[str]:
    return [d.code for d in result.diagnostics]


# -- detection ---------------------------------------------------------------

OTHER_VENDORS: list[Any] = [
    {"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": []}},  # Anthropic
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}},
    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    {"type": "response.output_text.delta", "delta": "x", "item_id": "msg_1"},  # Responses
    {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "x"}}]},
    {"type": "message.delta", "content": "x"},  # LM Studio
    {"type": "chat.end", "result": {}},
    {"model": "llama3", "created_at": "2026-01-01T00:00:00Z", "response": "x", "done": False},  # Ollama
    {"content": "x", "stop": False},  # llama.cpp
    {"response": "x", "p": "abc"},  # Cloudflare
    {"type": ["content-delta"]}, {"type": None}, [], "content-delta", 3,
]


def test_claims_its_kebab_case_event_types_only() -> None:
    for kind in ("message-start", "content-delta", "tool-call-start", "citation-start", "message-end", "debug"):
        assert Cohere.claims({"type": kind})
    for payload in OTHER_VENDORS:
        assert not Cohere.claims(payload), payload


def test_detection_picks_cohere_for_its_payloads() -> None:
    for event in (start(), content(0, "x"), call_start(0, "c", "f"), end()):
        found = detect(event)
        assert found is not None and found.name == "cohere"


# -- content, thinking, tool plan -----------------------------------------------------


def test_thinking_goes_to_reasoning_and_text_to_content() -> None:
    result = fold(sse(start(), content_start(0, "thinking"), content(0, "Let me add.", "thinking"),
                      {"type": "content-end", "index": 0}, content_start(1), content(1, "2 + 2"), content(1, " = 4"),
                      {"type": "content-end", "index": 1}, end()))
    choice = result.choices[0]
    assert (choice.content, choice.reasoning, choice.role) == ("2 + 2 = 4", "Let me add.", "assistant")
    assert [b.type for b in choice.blocks] == ["reasoning", "text"]
    assert result.id == ID and result.complete


def test_tool_plan_is_reasoning_not_content() -> None:
    result = fold(sse(start(), plan("I will look up"), plan(" the weather."), call_start(0, "t1", "get_weather", '{"city":"Oslo"}'),
                      {"type": "tool-call-end", "index": 0}, end("TOOL_CALL")))
    choice = result.choices[0]
    assert choice.content == "" and choice.reasoning == "I will look up the weather."
    assert result.export()["message"]["tool_plan"] == "I will look up the weather."


def test_dispatch_is_on_data_type_not_on_the_event_line() -> None:
    body = (b"event: message-end\ndata: " + json.dumps(content(0, "Hello")).encode() + b"\n\n"
            + sse(end(), named=False))
    result = fold(body)
    assert result.choices[0].content == "Hello" and result.complete


def test_a_payload_without_type_falls_back_to_the_event_name() -> None:
    body = sse(start()) + b'event: content-delta\ndata: {"index":0,"delta":{"message":{"content":{"text":"Hi"}}}}\n\n' + sse(end())
    assert fold(body).choices[0].content == "Hi"


# -- tool calls (B2) ------------------------------------------------------------


def test_b2_tool_calls_is_one_object_keyed_by_index() -> None:
    result = fold(sse(start(), call_start(0, "get_weather_a", "get_weather"), call_delta(0, '{"city":'),
                      call_start(1, "get_time_b", "get_time"), call_delta(1, '{"tz": "UTC"}'), call_delta(0, ' "Oslo"}'),
                      {"type": "tool-call-end", "index": 0}, {"type": "tool-call-end", "index": 1}, end("TOOL_CALL")))
    calls = result.choices[0].tool_calls
    assert [(c.id, c.name, c.arguments, c.parsed) for c in calls] == [
        ("get_weather_a", "get_weather", '{"city": "Oslo"}', {"city": "Oslo"}),
        ("get_time_b", "get_time", '{"tz": "UTC"}', {"tz": "UTC"})]
    assert result.choices[0].finish_reason == "tool_calls"


def test_id_and_name_are_set_once() -> None:
    result = fold(sse(start(), call_start(0, "t1", "lookup", "{}"), call_start(0, "t1", "lookup"),
                      call_start(0, "t2", "other"), end("TOOL_CALL")))
    (call,) = result.choices[0].tool_calls
    assert (call.id, call.name) == ("t1", "lookup")
    assert "tool-call-identity-changed" in codes(result)


def test_arguments_are_parsed_at_tool_call_end() -> None:
    folder = Folder()
    data = sse(start(), call_start(0, "t1", "f"), call_delta(0, '{"a": '), call_delta(0, "1}"),
               {"type": "tool-call-end", "index": 0}, end("TOOL_CALL"))
    events = [event for line in data.split(b"\n\n") if line for event in folder.feed(line + b"\n\n")]
    done = [event for event in events if isinstance(event, ToolCallDone)]
    assert len(done) == 1 and done[0].frame == 4 and done[0].arguments == {"a": 1}
    folder.close()


def test_an_empty_argument_buffer_is_an_empty_object() -> None:
    result = fold(sse(start(), call_start(0, "t1", "list_files"), {"type": "tool-call-end", "index": 0}, end("TOOL_CALL")))
    assert result.choices[0].tool_calls[0].parsed == {}


def test_object_valued_arguments_are_serialised() -> None:
    result = fold(sse(start(), call_start(0, "t1", "f", {"a": [1, 2]}), end("TOOL_CALL")))
    assert result.choices[0].tool_calls[0].arguments == '{"a":[1,2]}'


def test_a_list_of_tool_calls_from_a_proxy_is_folded_and_noted() -> None:
    event = {"type": "tool-call-start", "index": 0, "delta": {"message": {"tool_calls": [
        {"id": "t1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}}
    result = fold(sse(start(), event, end("TOOL_CALL")))
    assert result.choices[0].tool_calls[0].name == "f"
    assert "unexpected-payload" in codes(result)


def test_arguments_cut_by_max_tokens_are_reported_with_the_b8_hint() -> None:
    result = fold(sse(start(), call_start(0, "t1", "write_file"), call_delta(0, '{"path": "a.txt", "text": "Hel'),
                      end("MAX_TOKENS")))
    (call,) = result.choices[0].tool_calls
    assert call.error is not None and call.parsed is None and call.arguments.endswith('"Hel')
    (finding,) = [d for d in result.diagnostics if d.code == "tool-args-invalid"]
    assert "MAX_TOKENS" in finding.message and "token limit" in finding.message
    assert result.choices[0].finish_reason == "length"


# -- end, finish reasons, errors ---------------------------------------------------------


@pytest.mark.parametrize(("raw", "normalised"), [
    ("COMPLETE", "stop"), ("STOP_SEQUENCE", "stop"), ("MAX_TOKENS", "length"), ("TOOL_CALL", "tool_calls"),
    ("SOMETHING_NEW", "other")])
def test_finish_reasons(raw: str, normalised: str) -> None:
    choice = fold(sse(start(), content(0, "x"), end(raw))).choices[0]
    assert (choice.finish_reason, choice.finish_reason_raw) == (normalised, raw)


def test_error_finish_is_an_in_stream_error_with_the_error_string() -> None:
    result = fold(sse(start(), content(0, "Partial"), end("ERROR", error="internal server error")))
    assert not result.complete and result.choices[0].finish_reason == "error"
    (error,) = result.errors
    assert error.code == "in-stream-error" and "internal server error" in error.message and error.frame == 2
    assert "missing-terminal" not in codes(result)


def test_timeout_without_an_error_string_is_still_an_error() -> None:
    result = fold(sse(start(), content(0, "Partial"), end("TIMEOUT")))
    assert result.choices[0].finish_reason == "error" and result.choices[0].finish_reason_raw == "TIMEOUT"
    assert [e.code for e in result.errors] == ["in-stream-error"] and not result.complete


def test_message_end_is_terminal_and_a_later_done_is_harmless() -> None:
    result = fold(sse(start(), content(0, "Hi"), end(), done=True))
    assert result.complete and codes(result) == []


def test_data_after_message_end_is_listed_not_folded() -> None:
    result = fold(sse(start(), content(0, "Hi"), end(), content(0, " there")))
    assert result.choices[0].content == "Hi"
    (finding,) = [d for d in result.diagnostics if d.code == "frame-after-terminal"]
    assert finding.frame == 3 and finding.details["frames"] == [3]


def test_done_without_message_end_is_tolerated_as_the_end() -> None:
    result = fold(sse(start(), content(0, "Hi"), done=True))
    assert result.complete and result.choices[0].finish_reason is None


def test_a_stream_without_message_end_is_cut() -> None:
    result = fold(sse(start(), content(0, "Hi")))
    assert not result.complete
    (finding,) = [d for d in result.diagnostics if d.code == "missing-terminal"]
    assert "`message-end`" in finding.message


def test_debug_is_ignored_silently_and_unknown_types_are_noted_once() -> None:
    result = fold(sse(start(), {"type": "debug", "prompt": "<BOS_TOKEN>..."}, {"type": "citation-end", "index": 0},
                      {"type": "brand-new-event"}, {"type": "brand-new-event"}, content(0, "ok"), end()))
    assert result.choices[0].content == "ok"
    assert codes(result) == ["unexpected-payload"]


def test_wrong_shapes_never_raise() -> None:
    result = fold(sse(start(), {"type": "content-delta", "delta": 5}, {"type": "content-delta", "delta": {"message": []}},
                      {"type": "tool-call-start", "index": "x", "delta": {"message": {"tool_calls": 7}}},
                      {"type": "content-end", "index": [1]}, {"type": "message-end", "delta": "nope"}))
    assert result.dialect == "cohere" and result.complete


# -- usage -----------------------------------------------------------------------


def test_usage_counts_tokens_and_keeps_billed_units_raw() -> None:
    usage = fold(sse(start(), content(0, "x"), end(usage=USAGE))).usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens, usage.cache_read_tokens) == (1204, 58, 1262, 1024)
    assert usage.raw["billed_units"] == {"input_tokens": 37, "output_tokens": 21}


def test_usage_falls_back_to_billed_units_without_tokens() -> None:
    usage = fold(sse(start(), content(0, "x"), end(usage={"billed_units": {"input_tokens": 5, "output_tokens": 2}}))).usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (5, 2, 7)


# -- export: the non-streaming v2 ChatResponse ------------------------------------------

V2_MESSAGE_KEYS = {"role", "content", "tool_plan", "tool_calls", "citations"}


def check_v2_chat_response(out: dict[str, Any]) -> None:
    """The documented v2 ChatResponse shape (cohere SDK `ChatResponse`, `AssistantMessageResponse`)."""
    assert set(out) <= {"id", "finish_reason", "message", "usage", "prompt", "logprobs"}
    assert isinstance(out["id"], str)
    assert out["finish_reason"] in ("COMPLETE", "STOP_SEQUENCE", "MAX_TOKENS", "TOOL_CALL", "ERROR", "TIMEOUT")
    message = out["message"]
    assert set(message) <= V2_MESSAGE_KEYS and message["role"] == "assistant"
    for item in message["content"]:
        assert item["type"] in ("text", "thinking") and isinstance(item[item["type"]], str)
    for call in message.get("tool_calls", []):
        assert set(call) == {"id", "type", "function"} and call["type"] == "function"
        assert isinstance(call["function"]["name"], str) and isinstance(call["function"]["arguments"], str)
        json.loads(call["function"]["arguments"])
    for citation in message.get("citations", []):
        assert {"start", "end", "text", "sources"} <= set(citation)
    if "usage" in out:
        assert set(out["usage"]) <= {"billed_units", "tokens", "cached_tokens"}


@pytest.mark.parametrize("name", ["tool-use-example", "text-with-citations", "thinking-reply", "parallel-tools-event-lines-stripped"])
def test_export_of_each_complete_capture_has_the_v2_shape(name: str) -> None:
    result = fold((CAPTURES / f"{name}.sse").read_bytes())
    out = result.export()
    check_v2_chat_response(out)
    choice = result.choices[0]
    assert "".join(item["text"] for item in out["message"]["content"] if item["type"] == "text") == choice.content
    assert [c["function"]["arguments"] for c in out["message"].get("tool_calls", [])] == [c.arguments for c in choice.tool_calls]


def test_export_lists_thinking_then_text_items_and_citations_in_index_order() -> None:
    thinking = fold((CAPTURES / "thinking-reply.sse").read_bytes()).export()
    assert [item["type"] for item in thinking["message"]["content"]] == ["thinking", "text"]
    assert thinking["message"]["content"][1]["text"] == "17 × 24 = 408."
    assert "tool_plan" not in thinking["message"]
    cited = fold((CAPTURES / "text-with-citations.sse").read_bytes()).export()
    assert [c["text"] for c in cited["message"]["citations"]] == ["Oslo Plaza hotel, at 117 metres", "opened in 1990"]
    text = cited["message"]["content"][0]["text"]
    assert all(text[c["start"]:c["end"]] == c["text"] for c in cited["message"]["citations"])
    assert cited["finish_reason"] == "COMPLETE" and cited["usage"]["tokens"] == {"input_tokens": 1867, "output_tokens": 84}


def test_summaries_name_the_event() -> None:
    assert spec_of(Cohere).summary(content(0, "Hi")) == 'content-delta [0] text "Hi"'
    assert spec_of(Cohere).summary(end("COMPLETE", usage=USAGE)) == "message-end finish COMPLETE, usage"
    assert spec_of(Cohere).summary(call_delta(0, '{"a":')).startswith("tool-call-delta [0] args")


# -- a Result read back from JSON is the same Result, and exports the same object ---------------
