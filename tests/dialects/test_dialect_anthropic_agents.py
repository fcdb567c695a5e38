"""Anthropic Managed Agents' session event stream (`anthropic-agents`, issue 26 part 2): buffered events
folded, previews reconciled by the event of their id and never counted twice, the first turn of the
primary thread the reply, other threads and later turns listed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from feeding import tr_fold
from replay_helpers import by_name, fold_plan
from streamfold import Folder, fold
from streamfold.dialects import detect, spec_of
from streamfold.dialects.anthropic import Anthropic
from streamfold.dialects.anthropic.fold import EVENT_TYPES
from streamfold.dialects.anthropic_agents import AnthropicAgents
from streamfold.dialects.anthropic_agents.events import BUFFERED_TYPES, PREVIEW_TYPES
from streamfold.dialects.openai_realtime import OpenAIRealtime
from streamfold.replay import parse_fault, plan_response
from streamfold.replay.faults import refusal

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "anthropic-agents"
SPEC = spec_of("anthropic-agents")


def event(kind: str, **fields: Any) -> bytes:
    payload = {"type": kind, **({} if kind.startswith("event_") else {"id": fields.pop("id", f"sevt_{kind}")}),
               **fields}
    return f"event: {kind}\ndata: {json.dumps(payload)}\n\n".encode()


def message(text: str, ident: str = "sevt_msg") -> bytes:
    return event("agent.message", id=ident, content=[{"type": "text", "text": text}])


def delta(ident: str, text: str, index: int = 0) -> bytes:
    return event("event_delta", event_id=ident,
                 delta={"type": "content_delta", "index": index, "content": {"type": "text", "text": text}})


START = event("user.message", content=[{"type": "text", "text": "hi"}]) + event("session.status_running")
IDLE = event("session.status_idle", stop_reason={"type": "end_turn"})


@pytest.mark.parametrize("value", [
    {"type": "agent.message", "id": "sevt_1", "content": []}, {"type": "session.status_idle", "id": "sevt_2"},
    {"type": "event_start", "event": {"type": "agent.message", "id": "sevt_3"}},
    {"type": "event_delta", "event_id": "sevt_3", "delta": {"type": "content_delta"}}])
def test_claims_session_events(value: dict[str, Any]) -> None:
    assert detect(value) is AnthropicAgents and not Anthropic.claims(value) and not OpenAIRealtime.claims(value)


def test_no_event_type_is_also_a_messages_one() -> None:
    assert not (BUFFERED_TYPES | PREVIEW_TYPES) & EVENT_TYPES


@pytest.mark.parametrize("value", [
    {"type": "session.updated", "event_id": "event_1", "session": {}}, {"type": "message_start", "message": {}},
    {"type": "agent.message"}, {"type": "event_delta", "event_id": 3, "delta": {}}, {"type": "error", "error": {}},
    {"type": "event_start", "event": "agent.message"}])
def test_claims_no_other_vendors_event(value: dict[str, Any]) -> None:
    assert not AnthropicAgents.claims(value)


def test_a_previewed_message_is_counted_once_in_every_chunking() -> None:
    data = START + event("event_start", event={"type": "agent.message", "id": "m1"}) + delta("m1", "Hel") + \
        delta("m1", "lo") + message("Hello!", "m1") + IDLE
    result = tr_fold(data)
    assert result.dialect == "anthropic-agents" and result.complete
    assert result.choices[0].content == "Hello!" and result.choices[0].finish_reason == "stop"
    assert not result.errors and not result.diagnostics


def test_a_preview_the_event_contradicts_is_said_and_the_event_wins() -> None:
    data = START + event("event_start", event={"type": "agent.message", "id": "m1"}) + delta("m1", "Bye") + \
        message("Hello!", "m1") + IDLE
    result = fold(data)
    assert result.choices[0].content == "Hello!" and [d.code for d in result.diagnostics] == ["agents-preview-differs"]


def test_deltas_land_in_their_content_index() -> None:
    data = START + delta("m1", "b", 1) + delta("m1", "a", 0) + delta("m1", "c", 1)
    result = fold(data)
    assert result.choices[0].content == "abc" and not result.complete
    assert {d.code for d in result.diagnostics} == {"agents-preview-unreconciled", "missing-terminal"}


def test_requires_action_pauses_the_turn_and_running_resumes_it() -> None:
    use = event("agent.custom_tool_use", id="use_1", name="lookup", input={"q": "x"})
    paused = START + use + event("session.status_idle", stop_reason={"type": "requires_action", "event_ids": ["use_1"]})
    result = fold(paused)
    assert result.complete and result.choices[0].finish_reason == "tool_calls"
    assert result.choices[0].tool_calls[0].parsed == {"q": "x"}
    resumed = fold(paused + event("session.status_running") + message("Done."))
    assert not resumed.complete and resumed.choices[0].finish_reason is None
    assert [d.code for d in resumed.diagnostics] == ["missing-terminal"]


def test_a_status_or_usage_after_the_turn_is_no_later_turn() -> None:
    trailing = event("session.usage", usage={"input_tokens": 3}) + event("session.updated", title="Hi")
    result = fold(START + message("Hi.") + IDLE + trailing)
    assert result.complete and not result.diagnostics


def test_an_idle_before_the_turn_began_is_not_its_end() -> None:
    result = fold(IDLE + START + message("Hi.") + IDLE)
    assert result.choices[0].content == "Hi." and result.complete and not result.diagnostics


def test_another_thread_can_be_the_lane_followed() -> None:
    data = (CAPTURES / "subagent-thread-cross-posted.sse").read_bytes()
    folder = Folder("anthropic-agents")
    folder._dialect.lane = "sthr_01Kq7TfWm3pXc9Rd"  # (until the lane is an option of its own: issue 26 part 11)
    folder.feed(data)
    folded = folder.close()
    choice = folded.choices[0]
    assert choice.content == "" and [call.name for call in choice.tool_calls] == ["web_fetch"]
    assert choice.finish_reason_raw == "end_turn" and folded.complete
    lanes = next(d for d in folded.diagnostics if d.code == "agents-other-lanes")
    assert "the primary thread" in lanes.message and "primary" in folded.native["other_lanes"]


def test_an_input_that_is_no_object_is_said_and_kept() -> None:
    result = fold(START + event("agent.tool_use", id="u1", name="bash", input="ls") + IDLE)
    assert result.choices[0].tool_calls[0].arguments == "ls"
    assert "unexpected-payload" in [d.code for d in result.diagnostics]


@pytest.mark.parametrize("path", sorted(CAPTURES.glob("*.sse")), ids=lambda path: path.stem)
def test_the_export_is_an_events_page_that_reads_back_as_the_result(path: Path) -> None:
    result = fold(path.read_bytes())
    exported = result.export()
    assert set(exported) == {"data", "next_page"} and exported["next_page"] is None
    assert all(item["type"] not in ("event_start", "event_delta") for item in exported["data"])
    facts = SPEC.read_response(exported)
    assert facts is not None and facts["content"] == result.choices[0].content
    assert facts["tool_call_ids"] == [call.id for call in result.choices[0].tool_calls]
    assert SPEC.read_response({"data": [{"type": "message_start"}]}) is None


def test_the_replay_server_breaks_it_as_the_api_would() -> None:
    recording = by_name("anthropic-agents/tool-use-mcp-end-turn")
    errored = fold_plan(plan_response(recording, [parse_fault("error-event:4")]))
    assert [error["code"] for error in errored["errors"]] == ["in-stream-error"] and not errored["complete"]
    cut = fold_plan(plan_response(recording, [parse_fault("no-terminal")]))
    assert not cut["complete"] and "missing-terminal" in [d["code"] for d in cut["diagnostics"]]
    refused = plan_response(recording, [parse_fault("http-error:529")])
    assert refused.status == 529 and json.loads(refused.body)["error"]["type"] == "overloaded_error"
    sentence = refusal([parse_fault("cumulative-args")], transport="sse", dialect="anthropic-agents", frames=17)
    assert sentence is not None and "whole" in sentence
