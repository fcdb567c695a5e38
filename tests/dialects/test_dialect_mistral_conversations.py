"""Mistral's Conversations API stream (issue 26, part 4): messages, thinking and function calls folded per
agent lane, built-in tool executions as blocks (never tool calls), the hand-offs' other agents listed,
and Mistral's chat completions still `openai-chat`'s: neither claims the other's payloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from feeding import tr_fold
from replay_helpers import by_name, fold_plan
from streamfold import Lane, fold
from streamfold.dialects import detect, spec_of
from streamfold.dialects.mistral_conversations import MistralConversations
from streamfold.dialects.mistral_conversations.fold import EVENT_TYPES
from streamfold.dialects.openai_chat import OpenAIChat
from streamfold.replay import parse_fault, plan_response

CAPTURES = Path(__file__).resolve().parents[1] / "captures"
MISTRAL = CAPTURES / "mistral-conversations"
SPEC = spec_of("mistral-conversations")


def event(kind: str, **fields: Any) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n".encode()


def payloads(path: Path) -> list[Any]:
    """The JSON `data:` lines of a capture (these captures put one on each line)."""
    lines = path.read_text().splitlines()
    return [json.loads(line[5:]) for line in lines if line.startswith("data:") and line[5:].strip().startswith("{")]


def test_every_payload_of_the_captures_is_claimed_by_this_dialect_alone() -> None:
    for path in sorted(MISTRAL.glob("*.sse")):
        for value in payloads(path):
            assert detect(value) is MistralConversations and not OpenAIChat.claims(value), (path.name, value)


def test_mistral_chat_completions_stay_openai_chat() -> None:
    for path in sorted((CAPTURES / "openai").glob("b4-mistral-*.sse")):
        assert fold(path.read_bytes()).dialect == "openai-chat"
        assert not any(MistralConversations.claims(value) for value in payloads(path)), path.name


@pytest.mark.parametrize("value", [{"type": "message.delta", "content": "x"}, {"type": "message.output", "content": "x"},
                                   {"type": ["conversation.response.done"]}, {"object": "chat.completion.chunk"}])
def test_claims_nothing_else(value: dict[str, Any]) -> None:
    assert not MistralConversations.claims(value)


def test_the_function_call_fragments_join_per_call_in_every_chunking() -> None:
    data = event("conversation.response.started", conversation_id="conv_1") + b"".join(
        event("function.call.delta", id=f"fc_{call}", tool_call_id=f"call_{call}", name="f", arguments=piece)
        for call, piece in [(1, '{"a": '), (2, '{"b": 2}'), (1, "1}")]) + \
        event("conversation.response.done", usage={"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7})
    result = tr_fold(data)
    calls = result.choices[0].tool_calls
    assert [(call.id, call.parsed) for call in calls] == [("call_1", {"a": 1}), ("call_2", {"b": 2})]
    assert result.choices[0].finish_reason == "tool_calls" and result.complete and not result.diagnostics
    assert (result.usage.input_tokens, result.usage.output_tokens) == (3, 4)


def test_a_built_in_tool_is_a_block_and_its_reference_no_text() -> None:
    result = fold((MISTRAL / "web-search-references.sse").read_bytes())
    choice = result.choices[0]
    assert not choice.tool_calls and [block.type for block in choice.blocks] == ["tool_execution", "text"]
    exported = result.export()["outputs"]
    assert exported[0]["type"] == "tool.execution" and exported[0]["name"] == "web_search"
    assert exported[0]["info"] == {"num_results": 2}
    chunks = exported[1]["content"]
    assert [chunk["type"] for chunk in chunks] == ["text", "tool_reference", "text"]
    assert "".join(chunk.get("text", "") for chunk in chunks) == choice.content


def test_the_other_agents_are_listed_and_one_can_be_chosen() -> None:
    data = (MISTRAL / "handoff-lanes.sse").read_bytes()
    default = fold(data)
    listed = [d for d in default.diagnostics if d.code == "mistral-other-agents"]
    assert len(listed) == 1 and listed[0].details["lanes"] == ["ag_0691f3d0coder00000"] and listed[0].frame == 11
    assert default.export()["lanes"]["followed"] == "ag_0691f3d0analyst000"
    runner = fold(data, lane="ag_0691f3d0coder00000")
    assert runner.choices[0].content == "Five years at 8% is 46.9%."
    assert [block.type for block in runner.choices[0].blocks] == ["tool_execution", "text"]
    assert "I'll" not in runner.choices[0].content and runner.complete
    assert [d.details["lanes"] for d in runner.diagnostics if d.code == "mistral-other-agents"] == \
        [["ag_0691f3d0analyst000"]]


def test_a_payload_without_its_type_is_read_by_its_event_line() -> None:
    data = event("conversation.response.started", conversation_id="conv_1") + \
        b'event: message.output.delta\ndata: {"id": "m", "content": "Hi"}\n\n' + \
        event("conversation.response.done", usage={})
    result = fold(data)
    assert result.choices[0].content == "Hi" and result.complete and not result.diagnostics


def test_an_unknown_content_or_event_is_named_once_and_the_rest_folds() -> None:
    data = event("conversation.response.started", conversation_id="conv_1") + \
        event("message.output.delta", id="m", content={"type": "audio", "data": "x"}) + \
        event("message.output.delta", id="m", content="ok") + b'data: {"type": "x"}\n\n' + \
        event("conversation.response.done", usage={})
    result = fold(data)
    assert result.choices[0].content == "ok" and result.complete
    assert [d.code for d in result.diagnostics] == ["unexpected-payload", "unexpected-payload"]


@pytest.mark.parametrize("path", sorted(MISTRAL.glob("*.sse")), ids=lambda path: path.stem)
def test_the_export_reads_back_as_the_result(path: Path) -> None:
    result = fold(path.read_bytes())
    exported = result.export()
    assert exported["object"] == "conversation.response" and exported["conversation_id"] == result.id
    facts = SPEC.read_response(exported)
    assert facts is not None and facts["content"] == result.choices[0].content
    assert facts["reasoning"] == result.choices[0].reasoning
    assert [name for name, _ in facts["tool_calls"]] == [call.name for call in result.choices[0].tool_calls]
    assert SPEC.read_response({"object": "chat.completion", "choices": []}) is None


def test_the_replay_server_breaks_it_as_the_api_would() -> None:
    recording = by_name("mistral-conversations/text-model-thinking")
    errored = fold_plan(plan_response(recording, [parse_fault("error-event:5")]))
    assert [error["code"] for error in errored["errors"]] == ["in-stream-error"] and not errored["complete"]
    assert errored["choices"][0]["content"] == "Paris is"
    cut = fold_plan(plan_response(recording, [parse_fault("no-terminal")]))
    assert not cut["complete"] and "missing-terminal" in [d["code"] for d in cut["diagnostics"]]
    assert cut["choices"][0]["content"] == "Paris is the capital of France."


def test_the_event_types_are_the_sdks() -> None:
    assert len(EVENT_TYPES) == 10 and all(kind.count(".") >= 2 for kind in EVENT_TYPES)


def test_a_type_of_another_json_type_is_named_not_raised() -> None:
    data = event("conversation.response.started", conversation_id="conv_1") + \
        b'data: {"type": ["message.output.delta"], "content": "x"}\n\n' + event("conversation.response.done", usage={})
    result = fold(data)
    assert result.complete and [d.code for d in result.diagnostics] == ["unexpected-payload"]


def test_a_chunk_type_of_another_json_type_is_named_not_raised() -> None:
    data = event("conversation.response.started", conversation_id="conv_1") + \
        event("message.output.delta", id="m", content={"type": ["tool_reference"]}) + \
        event("message.output.delta", id="m", content={"type": "thinking", "thinking": "not a list"}) + \
        event("conversation.response.done", usage={})
    result = fold(data)
    assert result.complete and [d.code for d in result.diagnostics] == ["unexpected-payload"]


def test_the_agents_are_the_results_lanes_and_a_missing_one_is_said_once() -> None:
    data = (MISTRAL / "handoff-lanes.sse").read_bytes()
    assert fold(data).lanes == (Lane("ag_0691f3d0router0000", "agent", 1, False),
                                Lane("ag_0691f3d0analyst000", "agent", 2, True),
                                Lane("ag_0691f3d0coder00000", "agent", 10, False))
    missing = fold(data, lane="ag_nobody")
    assert [d.code for d in missing.diagnostics] == ["lane-not-found"] and missing.choices[0].content == ""
    assert fold((MISTRAL / "text-model-thinking.sse").read_bytes()).lanes == ()  # a model conversation: no agents
