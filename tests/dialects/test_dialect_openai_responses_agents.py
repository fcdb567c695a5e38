"""OpenAI Responses multi-agent (beta, issue 26 part 1): the root agent's reply is the choice, each sub-agent a
lane of its own (listed, folded when chosen), nothing of one lane in another; `multi_agent_call` items are blocks
of their own, not tool calls; the WebSocket's `response.inject.created` / `.failed`; every event type of the
SDK's beta unions (read from openai-python itself) is known."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest

from feeding import tr_fold
from streamfold import Folder, Result, fold
from streamfold.dialects import spec_of

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "openai-responses-agents"
ROOT, RESEARCHER = "/root", "/root/researcher"


def folded(data: bytes, lane: str | None = None) -> Result:
    folder = Folder("openai-responses")
    folder._dialect.lane = lane  # type: ignore[union-attr]  # (until the common lane option: issue 26 part 11)
    folder.feed(data)
    return folder.close()


class Stream:
    """A multi-agent Responses SSE body with consecutive sequence numbers."""

    def __init__(self, root: str | None = ROOT) -> None:
        self.root = root  # the agent the response's own events name
        self.events: list[dict[str, Any]] = []
        self.add("response.created", root, response={"id": "resp_1", "object": "response", "status": "in_progress",
                                                      "model": "gpt-5.6", "output": [], "created_at": 1})

    def add(self, kind: str, agent: str | None = None, **fields: Any) -> Stream:
        event = {"type": kind, "sequence_number": len(self.events), **fields}
        if agent is not None:
            event["agent"] = {"agent_name": agent}
        self.events.append(event)
        return self

    def text(self, index: int, agent: str | None, *pieces: str) -> Stream:
        self.add("response.output_item.added", agent, output_index=index, item={
            "type": "message", "id": f"msg_{index}", "role": "assistant", "content": [], "status": "in_progress",
            **({"agent": {"agent_name": agent}} if agent else {})})
        for piece in pieces:
            self.add("response.output_text.delta", agent, output_index=index, item_id=f"msg_{index}",
                     content_index=0, delta=piece)
        return self

    def completed(self, *output: dict[str, Any]) -> Stream:
        return self.add("response.completed", self.root, response={
            "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5.6", "created_at": 1,
            "output": list(output)})

    def body(self) -> bytes:
        return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in self.events)


def codes(result: Result) -> set[str]:
    return {f.code for f in (*result.errors, *result.diagnostics)}


def test_interleaved_agents_fold_apart_in_every_chunking() -> None:
    data = (CAPTURES / "root-waits-for-a-researcher.sse").read_bytes()
    root = tr_fold(data)
    assert root.choices[0].content == "There are three direct flights; the 12:40 one suits you best."
    assert "Three direct" not in root.choices[0].content and root.choices[0].tool_calls == ()
    assert [b.type for b in root.choices[0].blocks].count("multi_agent_call") == 2
    researcher = folded(data, RESEARCHER)
    assert researcher.choices[0].content == "Three direct flights: 07:10, 12:40 and 18:05."
    assert "multi_agent_call" not in [b.type for b in researcher.choices[0].blocks]
    assert researcher.native["agents"]["lane"] == RESEARCHER and set(researcher.native["agents"]["others"]) == {ROOT}


def test_a_sub_agents_function_call_is_its_own_and_named_in_the_listing() -> None:
    data = (CAPTURES / "researcher-calls-a-function.sse").read_bytes()
    root = fold(data)
    assert root.choices[0].tool_calls == ()
    (listing,) = [d for d in root.diagnostics if d.code == "responses-other-agents"]
    assert "get_fare" in listing.message and listing.severity == "info"
    assert root.native["agents"]["others"][RESEARCHER]["function_calls"] == [{"name": "get_fare",
                                                                             "call_id": "call_fare_1"}]
    researcher = folded(data, RESEARCHER)
    assert [(c.name, c.parsed) for c in researcher.choices[0].tool_calls] == [("get_fare", {"from": "BER",
                                                                                            "to": "LIS"})]
    assert researcher.choices[0].content == "" and researcher.choices[0].finish_reason == "tool_calls"


def test_the_terminal_output_fills_in_only_the_followed_lanes_items() -> None:
    """A gateway that sends no deltas: the reply comes from `response.output`, where every agent's items are."""
    sub = {"type": "message", "id": "m1", "role": "assistant", "status": "completed", "agent": {"agent_name": RESEARCHER},
           "content": [{"type": "output_text", "text": "sub text", "annotations": []}]}
    main = {**sub, "id": "m2", "agent": {"agent_name": ROOT},
            "content": [{"type": "output_text", "text": "root text", "annotations": []}]}
    data = Stream().completed(sub, main).body()
    assert fold(data).choices[0].content == "root text"
    assert folded(data, RESEARCHER).choices[0].content == "sub text"


def test_an_event_that_names_no_agent_is_the_root_s_unless_its_item_is_another_lanes() -> None:
    stream = Stream().text(0, RESEARCHER, "sub ")
    stream.add("response.output_text.delta", output_index=0, item_id="msg_0", content_index=0, delta="more")
    stream.text(1, None, "root")
    result = fold(stream.body())
    assert result.choices[0].content == "root" and "responses-other-agents" in codes(result)
    assert folded(stream.body(), RESEARCHER).choices[0].content == "sub "


def test_a_stream_without_agents_folds_as_before_and_says_nothing_of_lanes() -> None:
    result = fold(Stream(root=None).text(0, None, "Hi").completed().body())
    assert result.choices[0].content == "Hi" and "agents" not in result.native
    assert "responses-other-agents" not in codes(result)


def test_the_websocket_inject_answers_are_folded() -> None:
    result = fold((CAPTURES / "websocket-inject.jsonl").read_bytes())
    assert result.transport == "websocket" and result.choices[0].content == "It costs 89 EUR."
    (failed,) = [d for d in result.diagnostics if d.code == "responses-inject-failed"]
    assert "response_not_found" in failed.message and failed.severity == "warning"
    assert result.native["agents"]["injections"] == [
        {"response_id": "resp_ma_ws", "committed": True},
        {"response_id": "resp_gone", "committed": False, "code": "response_not_found"}]
    assert "unknown-event" not in codes(result)


def test_the_export_is_the_whole_response_and_reads_back_as_the_root_s_reply() -> None:
    result = fold((CAPTURES / "root-waits-for-a-researcher.sse").read_bytes())
    exported = result.export()
    assert len(exported["output"]) == 7  # every agent's items, as the API returns them
    facts = spec_of("openai-responses").read_response(exported)
    assert facts is not None and facts["content"] == result.choices[0].content and facts["tool_calls"] == []


def _member_types(union: Any) -> list[str]:
    members = typing.get_args(typing.get_args(union)[0]) if typing.get_origin(union) is typing.Annotated \
        else typing.get_args(union)
    return sorted({typing.get_args(member.model_fields["type"].annotation)[0] for member in members})


pytest.importorskip("openai")
from openai.types.beta import BetaResponsesServerEvent, BetaResponseStreamEvent  # noqa: E402

BETA_EVENTS = sorted({*_member_types(BetaResponseStreamEvent), *_member_types(BetaResponsesServerEvent)})


def test_the_beta_unions_are_read() -> None:
    assert len(BETA_EVENTS) >= 60 and {"response.inject.created", "response.inject.failed"} <= set(BETA_EVENTS)


@pytest.mark.parametrize("kind", BETA_EVENTS)
def test_every_event_of_the_sdks_beta_unions_is_known(kind: str) -> None:
    stream = Stream().text(0, ROOT).add(kind, ROOT, output_index=0, item_id="msg_0")
    assert "unknown-event" not in codes(fold(stream.body()))


def test_the_frames_table_names_each_events_agent_and_a_calls_action() -> None:
    summary = spec_of("openai-responses").summary
    event = {"type": "response.output_item.added", "output_index": 0, "agent": {"agent_name": ROOT}, "item": {
        "type": "multi_agent_call", "action": "spawn_agent", "call_id": "c1", "id": "mac_1"}}
    assert summary(event) == "output_item.added [0] /root multi_agent_call spawn_agent c1 mac_1"


def test_an_output_index_of_another_json_type_is_no_key_and_raises_nothing() -> None:
    """Found by tests/dialects/test_dialects_2026_fuzz.py: `"output_index": []` on an agent's item raised
    TypeError (an unhashable list taken as an item's key)."""
    events = [{"type": "response.output_item.added", "output_index": [], "agent": {"agent_name": "/root/helper"},
               "item": {"type": "message", "id": "m1", "role": "assistant", "content": []}},
              {"type": "response.output_text.delta", "output_index": [], "item_id": "m1", "content_index": 0,
               "delta": "hi"}]
    data = b"".join(b"data: " + json.dumps(event).encode() + b"\n\n" for event in events)
    result = tr_fold(data)
    assert result.dialect == "openai-responses" and [lane.id for lane in tr_fold(data, lane="/root/helper").lanes]
