"""Claude Code / Agent SDK `stream-json`: the envelope lines are recognised (never reported as
unknown), the wrapped events fold as `anthropic` with one `envelope` note, a run of several turns
is one reply, the `result` line ends it. The captures' lines are checked against the official
libraries: each wrapped event validates as the anthropic SDK's `RawMessageStreamEvent`, and each
line parses with `claude-agent-sdk`'s own `parse_message` where that package is installed (it
bundles the CLI, 170 MB: not a test dependency; the test skips without it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from feeding import tr_fold
from streamfold import Result, fold
from streamfold.dialects import DIALECTS, detect, spec_of
from streamfold.dialects.claude_stream_json import ClaudeStreamJSON

CAPTURES = Path(__file__).resolve().parents[1] / "captures"
OWN = sorted((CAPTURES / "claude-stream-json").glob("*.ndjson"))
SID = "s-1"


def lines(*values: Any) -> bytes:
    return b"".join(json.dumps(value).encode() + b"\n" for value in values)


def ev(event: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
    return {"type": "stream_event", "event": event, "session_id": SID, "parent_tool_use_id": parent, "uuid": "u"}


def start(message_id: str) -> dict[str, Any]:
    return ev({"type": "message_start", "message": {"id": message_id, "type": "message", "role": "assistant",
                                                    "model": "claude-x", "content": [], "usage": {"input_tokens": 3,
                                                                                                  "output_tokens": 1}}})


def text(index: int, piece: str) -> list[dict[str, Any]]:
    return [ev({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
            ev({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
            ev({"type": "content_block_stop", "index": index})]


def tool(index: int, call_id: str, arguments: str) -> list[dict[str, Any]]:
    return [ev({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": call_id, "name": "Bash", "input": {}}}),
            ev({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": arguments}}),
            ev({"type": "content_block_stop", "index": index})]


def stop(reason: str) -> list[dict[str, Any]]:
    return [ev({"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {"output_tokens": 5}}),
            ev({"type": "message_stop"})]


INIT = {"type": "system", "subtype": "init", "session_id": SID, "model": "claude-x", "tools": []}
RESULT = {"type": "result", "subtype": "success", "is_error": False, "num_turns": 1, "session_id": SID,
          "result": "", "usage": {"input_tokens": 10, "output_tokens": 20}}


def codes(result: Result) -> list[str]:
    return [d.code for d in result.diagnostics]


# -- detection ---------------------------------------------------------------

def test_claims_envelopes_with_a_session_id_only() -> None:
    for line in (INIT, RESULT, start("m"), {"type": "assistant", "message": {}, "session_id": SID},
                 {"type": "rate_limit_event", "session_id": SID, "rate_limit_info": {}}):
        assert ClaudeStreamJSON.claims(line), line
    for other in ({"type": "system", "subtype": "init"}, {"type": "assistant", "content": "x"},
                  {"type": "stream_event", "session_id": SID}, {"type": "message_start", "message": {}},
                  {"type": "result", "session_id": 3}, {"role": "assistant", "content": "x"}, []):
        assert not ClaudeStreamJSON.claims(other), other
    found = detect(INIT)
    assert found is ClaudeStreamJSON and DIALECTS["claude-stream-json"] is ClaudeStreamJSON


@pytest.mark.parametrize("path", sorted(p for p in CAPTURES.rglob("*") if p.is_file() and p.parent.name
                                        != "claude-stream-json" and not p.name.endswith((".json", ".md"))),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_other_capture_carries_the_envelope_note(path: Path) -> None:
    assert "envelope" not in codes(fold(path.read_bytes()))


@pytest.mark.parametrize("path", OWN, ids=lambda p: p.name)
def test_a_capture_folds_the_same_however_fed_as_anthropic_with_one_note(path: Path) -> None:
    result = tr_fold(path.read_bytes())
    assert result.dialect == "anthropic" and result.transport == "ndjson"
    notes = [d for d in result.diagnostics if d.code == "envelope"]
    assert notes and notes[0].frame == 0 and "stream-json" in notes[0].message
    assert not {"unknown-event-type", "unexpected-payload", "unknown-dialect"} & set(codes(result))


# -- the envelope and the turns ------------------------------------------------------------

def test_one_turn_folds_as_anthropic_and_ends_at_the_result_line() -> None:
    result = fold(lines(INIT, start("m1"), *text(0, "Hi"), *stop("end_turn"), RESULT))
    choice = result.choices[0]
    assert (result.id, result.model, choice.content, choice.finish_reason, result.complete) == (
        "m1", "claude-x", "Hi", "stop", True)
    assert result.usage is not None and (result.usage.input_tokens, result.usage.output_tokens) == (10, 20)


def test_message_stop_is_not_the_end_of_a_run() -> None:
    result = fold(lines(INIT, start("m1"), *text(0, "Hi"), *stop("end_turn")))
    assert not result.complete and "missing-terminal" in codes(result)


def test_turns_fold_in_order_with_their_block_indexes_moved() -> None:
    answered = {"type": "user", "session_id": SID, "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}}
    result = fold(lines(INIT, start("m1"), *text(0, "A"), *tool(1, "t1", '{"command":"ls"}'), *stop("tool_use"),
                        answered, start("m2"), *text(0, "B"), *stop("end_turn"), RESULT))
    choice = result.choices[0]
    assert choice.content == "AB" and [(c.id, c.parsed) for c in choice.tool_calls] == [("t1", {"command": "ls"})]
    # Anthropic's rule, as the exported Message reads back: a reply with tool calls ends in tool_calls.
    assert (choice.finish_reason, choice.finish_reason_raw, result.id) == ("tool_calls", "end_turn", "m1")
    assert "finish-reason-conflict" not in codes(result) and "unexpected-payload" not in codes(result)
    assert [block["type"] for block in result.export()["content"]] == ["text", "tool_use", "text"]


def test_assistant_lines_repeat_streamed_events_and_are_not_folded_twice() -> None:
    whole = {"type": "assistant", "session_id": SID, "message": {"id": "m1", "role": "assistant", "model": "claude-x",
                                                                "content": [{"type": "text", "text": "Hi"}]}}
    assert fold(lines(INIT, start("m1"), *text(0, "Hi"), *stop("end_turn"), whole, RESULT)).choices[0].content == "Hi"


def test_assistant_lines_alone_fold_as_streamed_blocks() -> None:
    def whole(message_id: str, block: dict[str, Any]) -> dict[str, Any]:
        return {"type": "assistant", "session_id": SID,
                "message": {"id": message_id, "role": "assistant", "model": "claude-x", "content": [block]}}
    result = fold(lines(INIT, whole("m1", {"type": "text", "text": "A"}),
                        whole("m1", {"type": "tool_use", "id": "t1", "name": "Read", "input": {"p": 1}}),
                        whole("m2", {"type": "text", "text": "B"}), RESULT))
    choice = result.choices[0]
    assert (choice.content, [(c.name, c.parsed) for c in choice.tool_calls]) == ("AB", [("Read", {"p": 1})])
    assert result.complete and result.id == "m1"


def test_subagent_lines_are_not_the_reply() -> None:
    sub = ev({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "sub"}}, parent="t9")
    result = fold(lines(INIT, start("m1"), *text(0, "main"), sub, *stop("end_turn"), RESULT))
    assert result.choices[0].content == "main"
    assert any(d.code == "envelope" and "subagent" in d.message for d in result.diagnostics)


def test_an_error_result_is_an_in_stream_error() -> None:
    failed = {**RESULT, "subtype": "error_during_execution", "is_error": True, "errors": ["API Error: 500"]}
    result = fold(lines(INIT, start("m1"), *text(0, "par"), failed))
    assert not result.complete and result.choices[0].finish_reason == "error"
    assert "API Error: 500" in result.errors[0].message


def test_unknown_line_types_are_noted_once_and_bad_events_reported() -> None:
    result = fold(lines(INIT, {"type": "future_thing", "session_id": SID}, {"type": "future_thing", "session_id": SID},
                        {"type": "stream_event", "session_id": SID, "event": 3}, RESULT))
    assert codes(result).count("unknown-event-type") == 1 and "unexpected-payload" in codes(result)


def test_types_that_are_not_strings_are_reported_not_raised() -> None:
    # The mutation fuzzer's find: an event `type` that is a list reached a set lookup.
    odd = {"type": "assistant", "session_id": SID, "message": {"id": "m", "content": [{"type": ["text"]}]}}
    result = fold(lines(INIT, ev({"type": [], "index": 0}), odd, RESULT))
    assert "unknown-event-type" in codes(result) and result.complete


def test_summaries_name_the_envelope_and_the_event() -> None:
    assert spec_of(ClaudeStreamJSON).summary(RESULT) == "result success, 1 turn(s)"
    assert spec_of(ClaudeStreamJSON).summary(INIT) == "system init"
    assert spec_of(ClaudeStreamJSON).summary(text(0, "Hi")[1]).startswith("stream_event · ")


# -- the official libraries -------------------------------------------------------------

@pytest.mark.parametrize("path", OWN, ids=lambda p: p.name)
def test_every_wrapped_event_is_an_anthropic_stream_event(path: Path) -> None:
    from anthropic.types import RawMessageStreamEvent
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    for line in path.read_text().splitlines():
        value = json.loads(line)
        if value["type"] == "stream_event" and value["event"]["type"] != "error":  # error events are not in the union
            assert adapter.validate_python(value["event"]).type == value["event"]["type"]


@pytest.mark.parametrize("path", OWN, ids=lambda p: p.name)
def test_every_line_parses_with_the_agent_sdk(path: Path) -> None:
    parser = pytest.importorskip("claude_agent_sdk._internal.message_parser",
                                 reason="claude-agent-sdk (170 MB with its CLI) is not installed")
    kinds = {"system": "SystemMessage", "stream_event": "StreamEvent", "assistant": "AssistantMessage",
             "user": "UserMessage", "result": "ResultMessage"}
    for line in path.read_text().splitlines():
        value = json.loads(line)
        assert type(parser.parse_message(value)).__name__ == kinds[value["type"]]
