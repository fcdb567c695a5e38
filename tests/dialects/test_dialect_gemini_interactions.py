"""Gemini Interactions API stream (`event_type` step and content events): detection, the fold of each capture
whole, byte by byte and in random chunks (`tr_fold`), every capture event and every export checked against
google-genai's own models (the official library), the legacy content events, and the final
`interaction.completed` that carries no outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

pytest.importorskip("google.genai", reason="google-genai (its models check the captures) needs Python 3.11+")
from google.genai._gaos.types.interactions import Interaction, InteractionSSEEvent

from feeding import tr_fold
from streamfold import Result, fold
from streamfold.dialects import detect, spec_of
from streamfold.dialects.gemini_interactions import GeminiInteractions

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "gemini-interactions"
SSE_EVENT = TypeAdapter(InteractionSSEEvent)


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(event).encode() + b"\n\n" for event in events)


def events_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in path.read_text().splitlines() if line.startswith("data: ")]


def codes(result: Result) -> set[str]:
    return {f.code for f in (*result.errors, *result.diagnostics)}


CREATED = {"event_type": "interaction.created", "interaction": {"id": "int-1", "status": "in_progress"}}


def completed(status: str = "completed", **interaction: Any) -> dict[str, Any]:
    return {"event_type": "interaction.completed", "interaction": {"id": "int-1", "status": status, **interaction}}


@pytest.mark.parametrize("path", sorted(CAPTURES.glob("*.sse")), ids=lambda p: p.stem)
def test_every_capture_event_is_an_official_event_and_claimed(path: Path) -> None:
    for event in events_of(path):
        parsed = SSE_EVENT.validate_python(event)
        assert not getattr(parsed, "is_unknown", False), event
        assert parsed.event_type == event["event_type"]
        assert detect(event) is GeminiInteractions, event


@pytest.mark.parametrize("path", sorted(CAPTURES.glob("*.sse")), ids=lambda p: p.stem)
def test_every_export_is_an_official_interaction_and_reads_back(path: Path) -> None:
    result = tr_fold(path.read_bytes())
    exported = result.export()
    interaction = Interaction.model_validate(exported)
    assert interaction.id == result.id
    facts = spec_of(GeminiInteractions).read_response(exported)
    assert facts is not None
    choice = result.choice(0)
    assert choice is not None
    assert facts["content"] == choice.content
    assert facts["reasoning"] == choice.reasoning
    assert [(name, json.loads(arguments)) for name, arguments in facts["tool_calls"]] == [
        (call.name, call.parsed) for call in choice.tool_calls]


def test_the_completed_event_without_steps_leaves_the_deltas_as_the_reply() -> None:
    result = tr_fold((CAPTURES / "text-with-thoughts-completed-no-steps.sse").read_bytes())
    choice = result.choice(0)
    assert choice is not None and result.complete
    assert choice.content == "There are three r's in \u201cstrawberry\u201d."
    assert choice.reasoning is not None and choice.reasoning.startswith("**Counting letters**")
    assert result.usage is not None and result.usage.reasoning_tokens == 41
    exported = result.export()
    assert exported["steps"][0]["signature"] == "CpwCAdHtim9sig+Q"
    assert exported["status"] == "completed" and exported["model"] == "gemini-3-flash-preview"


def test_the_arguments_placeholder_is_not_joined_to_the_fragments() -> None:
    result = tr_fold((CAPTURES / "function-call-arguments-delta.sse").read_bytes())
    choice = result.choice(0)
    assert choice is not None
    [call] = choice.tool_calls
    assert (call.id, call.name, call.parsed) == ("call_9x2k", "get_weather",
                                                 {"location": "Paris, France", "unit": "celsius"})
    assert choice.finish_reason == "tool_calls"
    assert "cumulative-resend" not in codes(result)


def test_a_call_stated_whole_keeps_its_object_arguments() -> None:
    call = {"type": "function_call", "id": "c1", "name": "lookup", "arguments": {"q": "oslo"}}
    result = tr_fold(sse(CREATED, {"event_type": "step.start", "index": 0, "step": call},
                         {"event_type": "step.stop", "index": 0}, completed("requires_action")))
    choice = result.choice(0)
    assert choice is not None and [c.parsed for c in choice.tool_calls] == [{"q": "oslo"}]


def test_a_call_only_the_completed_event_states_is_taken_from_it() -> None:
    call = {"type": "function_call", "id": "c1", "name": "lookup", "arguments": {"q": "oslo"}}
    result = tr_fold(sse(CREATED, completed("requires_action", steps=[call])))
    choice = result.choice(0)
    assert choice is not None and [(c.name, c.parsed) for c in choice.tool_calls] == [("lookup", {"q": "oslo"})]


def test_legacy_content_events_fold_the_same_way() -> None:
    legacy = sse({"event_type": "interaction.start", "interaction": {"id": "int-1", "status": "in_progress"}},
                 {"event_type": "content.start", "index": 0, "content": {"type": "text"}},
                 {"event_type": "content.delta", "index": 0, "delta": {"type": "text", "text": "Hel"}},
                 {"event_type": "content.delta", "index": 0, "delta": {"type": "text", "text": "lo"}},
                 {"event_type": "content.stop", "index": 0},
                 {"event_type": "interaction.complete", "interaction": {
                     "id": "int-1", "status": "completed", "outputs": [],
                     "usage": {"total_input_tokens": 3, "total_output_tokens": 2, "total_tokens": 5}}})
    result = tr_fold(legacy)
    choice = result.choice(0)
    assert result.dialect == "gemini-interactions" and result.complete
    assert choice is not None and choice.content == "Hello" and choice.finish_reason == "stop"
    assert result.usage is not None and result.usage.total_tokens == 5


def test_a_stream_cut_before_the_completed_event_is_not_complete() -> None:
    data = (CAPTURES / "text-with-thoughts-completed-no-steps.sse").read_bytes()
    cut = data[: data.index(b'{"event_type":"interaction.completed"')]
    result = fold(cut)
    assert result.dialect == "gemini-interactions" and not result.complete
    choice = result.choice(0)
    assert choice is not None and choice.content.startswith("There are three")


def test_failed_status_is_an_in_stream_error() -> None:
    result = tr_fold(sse(CREATED, completed("failed")))
    assert "in-stream-error" in codes(result) and not result.complete


def test_bad_events_yield_findings_not_exceptions() -> None:
    result = fold(sse(CREATED, {"event_type": "step.delta", "index": 0, "delta": "text"},
                      {"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": "ok"}},
                      completed()))
    choice = result.choice(0)
    assert choice is not None and choice.content == "ok"
    assert "unexpected-payload" in codes(result)


def test_claims_only_its_own_shapes() -> None:
    assert not GeminiInteractions.claims({"event_type": "step.delta", "delta": {"type": "text"}})  # no index
    assert not GeminiInteractions.claims({"event_type": "error", "type": "error", "error": {}})
    assert not GeminiInteractions.claims({"event_type": "stream-start", "generation_id": "g"})
    assert not GeminiInteractions.claims({"candidates": [{"content": {"parts": [{"text": "hi"}]}}]})
    assert GeminiInteractions.claims({"event_type": "interaction.status_update", "interaction_id": "i",
                                      "status": "in_progress"})


def test_steps_whose_lists_are_not_lists_are_skipped() -> None:
    # Found by a mutation fuzz of the captures: a `content` or `summary` that is a number crashed the fold.
    result = fold(sse(CREATED, {"event_type": "step.start", "index": 0, "step": {"type": "thought", "summary": 1}},
                      {"event_type": "step.start", "index": 1, "step": {"type": "model_output", "content": True}},
                      {"event_type": "step.delta", "index": 1, "delta": {"type": "text", "text": "ok"}},
                      completed()))
    choice = result.choice(0)
    assert choice is not None and choice.content == "ok" and result.complete
    assert spec_of(GeminiInteractions).read_response({"id": "i", "status": "completed", "steps": [
        {"type": "model_output", "content": 3}, {"type": "thought", "summary": [{"type": "text", "text": 4}]}]}) == {
        "content": "", "reasoning": None, "tool_calls": [], "tool_call_ids": [], "finish_reason": "completed",
        "usage": None}


def test_a_legacy_function_call_delta_states_the_call_whole() -> None:
    # The content-based FunctionCallDelta (js-genai, "used when steps are disabled"): `arguments` is an object.
    call = {"type": "function_call", "id": "c7", "name": "lookup", "arguments": {"q": "oslo"}}
    result = tr_fold(sse({"event_type": "interaction.start", "interaction": {"id": "int-1", "status": "in_progress"}},
                         {"event_type": "content.start", "index": 0, "content": {"type": "thought"}},
                         {"event_type": "content.delta", "index": 0, "delta": {
                             "type": "thought_summary", "content": {"type": "text", "text": "Look it up."}}},
                         {"event_type": "content.start", "index": 1, "content": {"type": "function_call"}},
                         {"event_type": "content.delta", "index": 1, "delta": call},
                         {"event_type": "content.stop", "index": 1},
                         {"event_type": "interaction.complete", "interaction": {
                             "id": "int-1", "status": "requires_action", "outputs": []}}))
    choice = result.choice(0)
    assert choice is not None and choice.reasoning == "Look it up."
    assert [(c.id, c.name, c.parsed) for c in choice.tool_calls] == [("c7", "lookup", {"q": "oslo"})]
    assert choice.finish_reason == "tool_calls"
