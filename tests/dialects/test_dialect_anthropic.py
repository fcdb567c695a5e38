"""Anthropic Messages dialect: each test builds the smallest stream that shows
one rule, trap (A1-A6, U2) or diagnostic of reference §4.3."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import streamfold
from streamfold import Folder, Result, fold
from streamfold.dialects import detect, spec_of
from streamfold.dialects.anthropic import Anthropic
from streamfold.events import TextDelta, ToolCallDelta, ToolCallDone

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "anthropic"
USAGE = {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}


def event(obj: dict[str, Any], name: str | bool | None = True) -> bytes:
    line = b"data: " + json.dumps(obj).encode() + b"\n\n"
    if name is True:
        name = obj["type"]
    return (f"event: {name}\n".encode() if name else b"") + line


def sse(*events: dict[str, Any] | bytes, names: bool = True) -> bytes:
    return b"".join(e if isinstance(e, bytes) else event(e, names) for e in events)


def start(usage: dict[str, Any] | None = None, **message: Any) -> dict[str, Any]:
    body = {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": dict(usage or USAGE)}
    body.update(message)
    return {"type": "message_start", "message": body}


def block(index: int, **content: Any) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": content}


def delta(index: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, **fields}}


def text(index: int, value: str) -> dict[str, Any]:
    return delta(index, "text_delta", text=value)


def partial(index: int, value: Any) -> dict[str, Any]:
    return delta(index, "input_json_delta", partial_json=value)


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(reason: str | None = "end_turn", usage: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None, **extra},
            "usage": usage if usage is not None else {"output_tokens": 5}}


PING = {"type": "ping"}
END = {"type": "message_stop"}


def text_reply(*pieces: str) -> list[dict[str, Any]]:
    return [start(), block(0, type="text", text=""), *(text(0, p) for p in pieces), stop(0), message_delta(), END]


def tool_reply(*fragments: Any, input: Any = None) -> list[dict[str, Any]]:
    return [start(), block(0, type="tool_use", id="toolu_01A", name="lookup", input={} if input is None else input),
            *(partial(0, f) for f in fragments), stop(0), message_delta("tool_use"), END]


def codes(result: Result) -> list[str]:
    return [d.code for d in result.diagnostics]


def findings(result: Result, code: str) -> list[Any]:
    return [d for d in result.diagnostics if d.code == code]


# -- detection ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["message_start", "content_block_start", "content_block_delta",
                                  "content_block_stop", "message_delta", "message_stop"])
def test_claims_every_anthropic_event_type(kind: str) -> None:
    assert Anthropic.claims({"type": kind})
    assert detect({"type": kind}) is Anthropic


def test_a_ping_claims_nothing_but_folds_as_a_keep_alive() -> None:
    """Text Completions send pings too: a stream that opens with one is told by what follows."""
    assert not Anthropic.claims({"type": "ping"}) and detect({"type": "ping"}) is None
    result = fold(b'event: ping\ndata: {"type": "ping"}\n\n' + (CAPTURES / "a2-tool-no-arguments.sse").read_bytes())
    assert result.dialect == "anthropic" and result.complete and not result.diagnostics


def test_claims_an_error_event_but_not_other_vendors() -> None:
    assert Anthropic.claims({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    assert not Anthropic.claims({"type": "error", "code": "server_error", "message": "x", "sequence_number": 3})
    assert not Anthropic.claims({"error": {"message": "x", "type": "server_error"}})
    assert not Anthropic.claims({"object": "chat.completion.chunk", "choices": []})
    assert not Anthropic.claims({"type": "response.output_text.delta", "delta": "x"})
    assert not Anthropic.claims({"type": "content-delta"})
    assert not Anthropic.claims(["message_start"])


def test_fold_without_a_dialect_picks_anthropic() -> None:
    result = fold(sse(*text_reply("Hi")))
    assert (result.dialect, result.transport, result.complete) == ("anthropic", "sse", True)
    assert (result.id, result.model, result.choices[0].role) == ("msg_01", "claude-sonnet-4-5", "assistant")


# -- A1: dispatch on data.type ---------------------------------------------------------------------------


def test_stripped_event_lines_still_fold_and_say_what_the_sdk_does() -> None:
    result = fold(sse(*text_reply("Hello", " there"), names=False))
    assert result.choices[0].content == "Hello there" and result.complete
    (finding,) = findings(result, "event-type-missing")
    assert finding.frame == 0 and finding.details == {"frames": 7}
    assert "none of its 7" in finding.message and "nothing at all" in finding.message


def test_some_stripped_event_lines_are_counted() -> None:
    events = text_reply("a", "b")
    data = b"".join(event(e, e["type"] if i != 2 else None) for i, e in enumerate(events))
    result = fold(data)
    assert result.choices[0].content == "ab"
    (finding,) = findings(result, "event-type-missing")
    assert finding.frame == 2 and finding.details == {"frames": 1} and "holes" in finding.message


def test_event_name_and_data_type_mismatch_is_reported_once_per_pair() -> None:
    data = sse(start(), block(0, type="text", text=""),
               event(text(0, "a"), "message_delta"), event(text(0, "b"), "message_delta"),
               event(text(0, "c"), "ping"), stop(0), message_delta(), END)
    result = fold(data)
    assert result.choices[0].content == "abc"  # folded by the data's type
    mismatches = findings(result, "event-type-mismatch")
    assert [(d.frame, d.details) for d in mismatches] == [
        (2, {"event": "message_delta", "type": "content_block_delta"}),
        (4, {"event": "ping", "type": "content_block_delta"})]
    assert "event-type-missing" not in codes(result)


def test_no_event_name_diagnostic_outside_sse() -> None:
    lines = b"".join(json.dumps(e).encode() + b"\n" for e in text_reply("x"))
    result = fold(lines, dialect="anthropic")
    assert result.transport == "ndjson" and result.choices[0].content == "x"
    assert "event-type-missing" not in codes(result)


# -- the terminal -----------------------------------------------------------------------------------------


def test_frames_after_message_stop_are_listed_not_folded() -> None:
    result = fold(sse(*text_reply("kept"), PING, text(0, " lost"), message_delta("max_tokens")))
    choice = result.choices[0]
    assert (choice.content, choice.finish_reason_raw, result.complete) == ("kept", "end_turn", True)
    (finding,) = findings(result, "frame-after-terminal")
    assert finding.frame == 6 and finding.details == {"frames": [6, 7, 8]}  # the core lists every data frame
    assert "message_stop" in finding.message


def test_a_gateway_done_after_message_stop_is_harmless() -> None:
    result = fold(sse(*text_reply("ok")) + b"data: [DONE]\n\n")
    assert result.complete and result.choices[0].content == "ok"
    assert result.diagnostics == () and result.errors == ()


def test_done_without_message_stop_is_not_the_end() -> None:
    result = fold(sse(*text_reply("cut")[:-1]) + b"data: [DONE]\n\n")
    assert not result.complete
    assert "missing-terminal" in codes(result)
    assert "`message_stop`" in findings(result, "missing-terminal")[0].message


# -- text, pings, blocks ----------------------------------------------------------------------------------


def test_ping_between_block_start_and_first_delta_is_ignored() -> None:
    result = fold(sse(start(), PING, block(0, type="text", text=""), PING, PING, text(0, "x"), PING, stop(0),
                      message_delta(), PING, END))
    assert result.choices[0].content == "x" and result.diagnostics == ()


def test_blocks_are_the_content_blocks_in_order_with_their_frames() -> None:
    result = fold(sse(start(), block(0, type="thinking", thinking="", signature=""),
                      delta(0, "thinking_delta", thinking="hmm"), stop(0),
                      block(1, type="text", text=""), text(1, "a"), text(1, "b"), stop(1),
                      block(2, type="tool_use", id="toolu_1", name="f", input={}), partial(2, "{}"), stop(2),
                      message_delta("tool_use"), END))
    blocks = [(b.type, b.index, b.frames) for b in result.choices[0].blocks]
    assert blocks == [("reasoning", 0, (1, 3)), ("text", 1, (4, 7)), ("tool_call", 2, (8, 10))]
    assert result.choices[0].reasoning == "hmm" and result.choices[0].content == "ab"


def test_text_of_all_text_blocks_is_joined_and_traceable() -> None:
    result = fold(sse(start(), block(0, type="text", text=""), text(0, "ab"), stop(0),
                      block(1, type="text", text="c"), text(1, "d"), stop(1), message_delta(), END))
    assert result.choices[0].content == "abcd"
    frame = result.frame_producing_char(2)
    assert frame is not None and frame.index == 4  # "c" came whole in its block start


def test_a_second_message_start_keeps_the_first_identity() -> None:
    result = fold(sse(start(), start(id="msg_02", model="other"), *text_reply("x")[1:]))
    assert (result.id, result.model) == ("msg_01", "claude-sonnet-4-5")
    assert "unexpected-payload" in codes(result)


# -- tool input: A2, A3, PARSE-AT-END ---------------------------------------------------------------------


def test_partial_json_is_appended_and_parsed_once_at_block_stop() -> None:
    folder = Folder()
    events = []
    for chunk in sse(*tool_reply('{"q": "Os', 'lo", "n"', ": 2}")).split(b"\n\n"):
        events.extend(folder.feed(chunk + b"\n\n"))
    result = folder.close()
    (call,) = result.choices[0].tool_calls
    assert (call.id, call.name, call.arguments, call.parsed) == ("toolu_01A", "lookup", '{"q": "Oslo", "n": 2}',
                                                                 {"q": "Oslo", "n": 2})
    assert (call.index, call.key) == (0, 0)
    assert [e.arguments for e in events if isinstance(e, ToolCallDelta)] == ['{"q": "Os', 'lo", "n"', ": 2}"]
    (done,) = [e for e in events if isinstance(e, ToolCallDone)]
    assert (done.frame, done.arguments) == (5, {"q": "Oslo", "n": 2})  # at content_block_stop, frame 5


@pytest.mark.parametrize("fragments", [("",), (), ("", "  ")])
def test_a_tool_without_arguments_is_an_empty_object(fragments: tuple[str, ...]) -> None:
    result = fold(sse(*tool_reply(*fragments)))
    (call,) = result.choices[0].tool_calls
    assert call.parsed == {} and call.error is None and call.arguments == "".join(fragments)
    assert result.export()["content"][0]["input"] == {}
    assert "tool-args-invalid" not in codes(result)


def test_the_parsed_input_replaces_the_start_input() -> None:
    result = fold(sse(*tool_reply('{"b": 2}', input={"a": 1})))
    assert result.choices[0].tool_calls[0].parsed == {"b": 2}
    assert result.export()["content"][0]["input"] == {"b": 2}


def test_a_whole_input_in_the_start_block_is_kept_when_no_delta_comes() -> None:
    result = fold(sse(*tool_reply(input={"city": "Oslo"})))
    (call,) = result.choices[0].tool_calls
    assert (call.arguments, call.parsed) == ('{"city":"Oslo"}', {"city": "Oslo"})


def test_unparseable_input_keeps_the_raw_join_and_names_the_frame() -> None:
    result = fold(sse(*tool_reply('{"q": ', '"x"', ", }")))
    (call,) = result.choices[0].tool_calls
    assert call.parsed is None and call.error is not None and call.arguments == '{"q": "x", }'
    (finding,) = findings(result, "tool-args-invalid")
    assert finding.frame == 4 and finding.severity == "error"
    assert result.export()["content"][0]["input"] == '{"q": "x", }'  # never a silent {}


def test_a_repeated_input_is_recovered_and_reported() -> None:
    result = fold(sse(*tool_reply('{"q": "x"}', '{"q": "x"}')))
    assert result.choices[0].tool_calls[0].parsed == {"q": "x"}
    assert findings(result, "cumulative-resend")[0].details["recovery"] == "identical-copies"


def test_tool_call_keys_are_block_indexes_and_ids_are_tool_use_ids() -> None:
    result = fold(sse(start(), block(0, type="text", text=""), text(0, "Two lookups."), stop(0),
                      block(1, type="tool_use", id="toolu_A", name="f", input={}), partial(1, '{"x": 1}'),
                      stop(1), block(2, type="tool_use", id="toolu_B", name="g", input={}), partial(2, ""),
                      stop(2), message_delta("tool_use"), END))
    calls = [(c.index, c.key, c.id, c.name, c.parsed) for c in result.choices[0].tool_calls]
    assert calls == [(0, 1, "toolu_A", "f", {"x": 1}), (1, 2, "toolu_B", "g", {})]
    assert result.choices[0].finish_reason == "tool_calls"


# -- thinking: A6 -----------------------------------------------------------------------------------------


def test_signature_delta_replaces_and_a_start_signature_survives() -> None:
    result = fold(sse(start(), block(0, type="thinking", thinking="", signature=""),
                      delta(0, "thinking_delta", thinking="a"), delta(0, "signature_delta", signature="S1"),
                      delta(0, "signature_delta", signature="S2"), stop(0),
                      block(1, type="thinking", thinking="", signature="KEPT"), stop(1),
                      block(2, type="text", text=""), text(2, "x"), stop(2), message_delta(), END))
    thinking = [b for b in result.export()["content"] if b["type"] == "thinking"]
    # The empty-text thinking block with its signature is not dropped (A6).
    assert thinking == [{"type": "thinking", "thinking": "a", "signature": "S2"},
                        {"type": "thinking", "thinking": "", "signature": "KEPT"}]
    assert result.choices[0].reasoning == "a"


def test_redacted_thinking_is_kept_whole_and_is_not_reasoning_text() -> None:
    result = fold(sse(start(), block(0, type="redacted_thinking", data="EmwKAhgB"), stop(0),
                      block(1, type="text", text=""), text(1, "ok"), stop(1), message_delta(), END))
    assert result.choices[0].reasoning is None
    assert [b.type for b in result.choices[0].blocks] == ["redacted_reasoning", "text"]
    assert result.export()["content"][0] == {"type": "redacted_thinking", "data": "EmwKAhgB"}


# -- citations, server tools, result blocks ------------------------------------------------------------------


def test_citations_are_extended_per_block_and_exported() -> None:
    cite = {"type": "char_location", "cited_text": "c", "document_index": 0, "document_title": None,
            "start_char_index": 0, "end_char_index": 1}
    second = {**cite, "cited_text": "d", "start_char_index": 1, "end_char_index": 2}
    result = fold(sse(start(), block(0, type="text", text="", citations=[]),
                      delta(0, "citations_delta", citation=cite), text(0, "x"),
                      delta(0, "citations_delta", citation=second), stop(0),
                      block(1, type="text", text=""), text(1, "y"), stop(1), message_delta(), END))
    content = result.export()["content"]
    assert content == [{"type": "text", "text": "x", "citations": [cite, second]}, {"type": "text", "text": "y"}]
    assert result.choices[0].content == "xy"


def test_server_tool_use_is_a_block_with_its_input_not_a_client_tool_call() -> None:
    found = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
             "content": [{"type": "web_search_result", "title": "T", "url": "https://e.x", "encrypted_content": "E",
                          "page_age": None}]}
    result = fold(sse(start(), block(0, type="server_tool_use", id="srvtoolu_1", name="web_search", input={}),
                      partial(0, ""), partial(0, '{"query": '), partial(0, '"x"}'), stop(0),
                      block(1, **found), stop(1), block(2, type="text", text=""), text(2, "Done."), stop(2),
                      message_delta("end_turn"), END))
    choice = result.choices[0]
    assert choice.tool_calls == () and choice.finish_reason == "stop"
    assert [b.type for b in choice.blocks] == ["server_tool_use", "web_search_tool_result", "text"]
    content = result.export()["content"]
    assert content[0] == {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}
    assert content[1] == found


def test_a_cut_server_tool_input_is_reported() -> None:
    result = fold(sse(start(), block(0, type="server_tool_use", id="srvtoolu_1", name="web_search", input={}),
                      partial(0, '{"query": "x'), stop(0), message_delta("pause_turn"), END))
    (finding,) = findings(result, "tool-args-invalid")
    assert "server tool" in finding.message and finding.frame == 2


def test_an_unknown_block_type_is_kept_whole() -> None:
    odd = {"type": "future_block", "payload": {"k": 1}}
    result = fold(sse(start(), block(0, **odd), stop(0), message_delta(), END))
    assert result.export()["content"] == [odd]
    assert [b.type for b in result.choices[0].blocks] == ["future_block"]
    (finding,) = findings(result, "unknown-event-type")
    assert finding.severity == "info" and finding.details == {"type": "future_block"}


# -- message_delta: finish reasons and usage (A4, U2) ---------------------------------------------------------


@pytest.mark.parametrize(("raw", "normalised"), [
    ("end_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length"),
    ("model_context_window_exceeded", "length"), ("tool_use", "tool_calls"), ("refusal", "content_filter"),
    ("pause_turn", "incomplete"), ("something_new", "other")])
def test_finish_reasons(raw: str, normalised: str) -> None:
    events = text_reply("x")
    events[-2] = message_delta(raw)
    choice = fold(sse(*events)).choices[0]
    assert (choice.finish_reason, choice.finish_reason_raw) == (normalised, raw)


def test_stop_sequence_and_stop_details_are_exported() -> None:
    details = {"type": "refusal", "category": "cyber", "explanation": "no"}
    events = text_reply("x")
    events[-2] = {"type": "message_delta", "delta": {"stop_reason": "refusal", "stop_sequence": "END",
                                                      "stop_details": details}, "usage": {"output_tokens": 2}}
    exported = fold(sse(*events)).export()
    assert (exported["stop_reason"], exported["stop_sequence"], exported["stop_details"]) == ("refusal", "END", details)


def test_a_changed_stop_reason_keeps_the_last_and_says_so() -> None:
    events = text_reply("x")
    events[-1:-1] = [message_delta("max_tokens")]
    result = fold(sse(*events))
    assert result.choices[0].finish_reason_raw == "max_tokens"
    assert findings(result, "finish-reason-conflict")[0].details == {"choice": 0, "previous": "end_turn",
                                                                     "value": "max_tokens"}


def test_message_delta_usage_replaces_field_by_field_and_never_adds() -> None:
    begin = {"input_tokens": 412, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 2048,
             "output_tokens": 3, "service_tier": "standard"}
    events = [start(begin), block(0, type="text", text=""), text(0, "x"), stop(0),
              message_delta(None, {"output_tokens": 40}),
              message_delta("end_turn", {"output_tokens": 71, "cache_read_input_tokens": None,
                                         "server_tool_use": {"web_search_requests": 1}}), END]
    usage = fold(sse(*events)).usage
    assert usage is not None
    assert usage.raw == {"input_tokens": 412, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 2048,
                         "output_tokens": 71, "service_tier": "standard", "server_tool_use": {"web_search_requests": 1}}
    # U2: input excludes the cache; the total is the sum of the four.
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.total_tokens) == (
        412, 71, 2048, 412 + 100 + 2048 + 71)


def test_input_tokens_reported_only_at_the_end_replace_the_start_value() -> None:
    events = text_reply("x")
    events[0] = start({"input_tokens": 0, "output_tokens": 1})
    events[-2] = message_delta("end_turn", {"input_tokens": 900, "output_tokens": 30})
    usage = fold(sse(*events)).usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (900, 30, 930)
    assert usage.cache_read_tokens is None


def test_thinking_tokens_are_the_reasoning_tokens() -> None:
    events = text_reply("x")
    events[-2] = message_delta("end_turn", {"output_tokens": 80, "output_tokens_details": {"thinking_tokens": 64}})
    usage = fold(sse(*events)).usage
    assert usage is not None and usage.reasoning_tokens == 64


# -- errors and oddities ----------------------------------------------------------------------------------------


def test_an_error_event_ends_the_reply_as_an_error() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "request_id": "req_1"}
    result = fold(sse(start(), block(0, type="text", text=""), text(0, "Par"), error))
    choice = result.choices[0]
    assert (choice.content, choice.finish_reason, choice.finish_reason_raw) == ("Par", "error", None)
    assert not result.complete
    (failure,) = result.errors
    assert failure.code == "in-stream-error" and failure.frame == 3
    assert "overloaded_error" in failure.message and "content block 0 (text)" in failure.message
    assert json.loads(failure.raw or "") == error
    assert "missing-terminal" not in codes(result)


def test_an_error_event_without_event_lines_is_still_an_error() -> None:
    error = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}
    result = fold(sse(start(), error, names=False))
    assert [e.code for e in result.errors] == ["in-stream-error"] and not result.complete


def test_unknown_event_types_are_ignored_and_listed_once_per_type() -> None:
    events = text_reply("x")
    events[2:2] = [{"type": "content_block_annotation", "index": 0}, {"type": "content_block_annotation", "index": 0},
                   {"type": "usage_tick"}, delta(0, "emoji_delta", emoji="*")]
    result = fold(sse(*events))
    assert result.choices[0].content == "x" and result.complete
    unknown = findings(result, "unknown-event-type")
    assert [d.details["type"] for d in unknown] == ["content_block_annotation", "usage_tick", "emoji_delta"]
    assert {d.severity for d in unknown} == {"info"}


def test_a_delta_without_its_block_start_is_folded_and_reported() -> None:
    result = fold(sse(start(), text(0, "orphan"), stop(0), message_delta(), END))
    assert result.choices[0].content == "orphan"
    (finding,) = findings(result, "content-block-missing-start")
    assert finding.frame == 1 and "IndexError" in finding.message


def test_a_delta_after_its_block_stop_is_folded_and_reported() -> None:
    result = fold(sse(start(), block(0, type="text", text=""), text(0, "a"), stop(0), text(0, "b"),
                      message_delta(), END))
    assert result.choices[0].content == "ab"
    (finding,) = findings(result, "delta-after-block-stop")
    assert finding.frame == 4 and finding.details == {"index": 0, "stop_frame": 3}


def test_a_delta_that_does_not_fit_its_block_is_ignored() -> None:
    result = fold(sse(start(), block(0, type="tool_use", id="toolu_1", name="f", input={}), text(0, "stray"),
                      partial(0, "{}"), stop(0), message_delta("tool_use"), END))
    assert result.choices[0].content == ""
    assert findings(result, "unexpected-payload")[0].details["delta_type"] == "text_delta"


def test_wrong_shapes_never_raise() -> None:
    junk: list[Any] = [[1, 2], "x", 3, None, {"no": "type"}, {"type": 5},
                       {"type": "message_start"}, {"type": "message_start", "message": []},
                       {"type": "content_block_start"}, {"type": "content_block_start", "index": "0", "content_block": {}},
                       {"type": "content_block_delta", "index": 0}, {"type": "content_block_delta", "index": 9, "delta": 1},
                       {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": 5}},
                       {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": {}}},
                       {"type": "content_block_stop", "index": 7}, {"type": "content_block_stop"},
                       {"type": "message_delta", "delta": [], "usage": 3}, {"type": "message_delta"},
                       {"type": "error", "error": "bare string"}, {"type": "error"}]
    data = b"".join(b"data: " + json.dumps(j).encode() + b"\n\n" for j in junk)
    result = fold(sse(start()) + data, dialect="anthropic")
    assert result.dialect == "anthropic"
    assert "unexpected-payload" in codes(result)
    result.export()


def test_summaries_for_the_frames_table() -> None:
    assert spec_of(Anthropic).summary(text(0, "Hi")) == '[0] text "Hi"'
    assert spec_of(Anthropic).summary(partial(1, '{"a"')) == '[1] input "{\\"a\\""'
    assert spec_of(Anthropic).summary(block(1, type="tool_use", id="toolu_1", name="f", input={})) == "[1] start tool_use f toolu_1"
    assert spec_of(Anthropic).summary(stop(2)) == "[2] stop"
    assert spec_of(Anthropic).summary(start()) == "message_start msg_01 claude-sonnet-4-5"
    assert spec_of(Anthropic).summary(message_delta("tool_use", {"output_tokens": 7})) == "message_delta, stop_reason tool_use, usage output_tokens 7"
    assert spec_of(Anthropic).summary({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}) \
        == 'error overloaded_error: "Overloaded"'
    assert spec_of(Anthropic).summary(PING) == "ping"


def test_feed_reports_text_deltas_as_they_arrive() -> None:
    folder = streamfold.Folder()
    seen: list[Any] = []
    for e in text_reply("Hel", "lo"):
        seen.extend(folder.feed(event(e)))
    assert [e.text for e in seen if isinstance(e, TextDelta)] == ["Hel", "lo"]
    assert folder.close().choices[0].content == "Hello"


def test_a_beta_mcp_tool_use_streams_its_input_like_a_server_tool() -> None:
    result = fold(sse(start(), block(0, type="mcp_tool_use", id="mcptoolu_1", name="search", server_name="docs",
                                     input={}), partial(0, '{"q": "x"}'), stop(0),
                      block(1, type="mcp_tool_result", tool_use_id="mcptoolu_1", is_error=False,
                            content=[{"type": "text", "text": "hit"}]), stop(1), message_delta(), END))
    assert result.choices[0].tool_calls == () and "unknown-event-type" not in codes(result)
    content = result.export()["content"]
    assert content[0]["input"] == {"q": "x"} and content[1]["content"] == [{"type": "text", "text": "hit"}]


# -- a Result read back from JSON is the same Result, and exports the same object ---------------
