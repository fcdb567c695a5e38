"""LangGraph / LangSmith Agent Server run streams (issue 26, part 6): `messages` chunks merged by message
id as LangChain adds `AIMessageChunk`s, tool call chunks by index, the other stream modes kept as context,
graph namespaces as lanes (the root graph's by default), no end event (the stream's close is the end)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from feeding import tr_fold
from replay_helpers import by_name, fold_plan
from streamfold import Lane, fold
from streamfold.dialects import detect, spec_of
from streamfold.dialects.langgraph import LangGraph
from streamfold.replay import parse_fault, plan_response
from streamfold.replay.faults import refusal

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "langgraph"
SPEC = spec_of("langgraph")
RUN = {"run_id": "run-1", "attempt": 1}


def event(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def chunk(content: Any = "", chunk_id: str | None = "chatcmpl-1", *, node: str = "agent", step: int = 1,
          ns: str = "agent:t1", **fields: Any) -> list[dict[str, Any]]:
    message = {"content": content, "additional_kwargs": {}, "response_metadata": {}, "type": "AIMessageChunk",
               "name": None, "id": chunk_id, "tool_calls": [], "invalid_tool_calls": [], "usage_metadata": None,
               "tool_call_chunks": [], "chunk_position": None, **fields}
    return [message, {"langgraph_node": node, "langgraph_step": step, "langgraph_checkpoint_ns": ns}]


def run(*parts: bytes) -> bytes:
    return event("metadata", RUN) + b"".join(parts)


@pytest.mark.parametrize("value", [RUN, {"status": "run_done", "run_id": "r"}, chunk("hi")])
def test_claims_the_metadata_event_and_a_message_with_langgraphs_metadata(value: Any) -> None:
    assert detect(value) is LangGraph


@pytest.mark.parametrize("value", [
    {"run_id": "r"}, {"run_id": 3, "attempt": 1}, [chunk("hi")[0], {"node": "agent"}], [{"type": "x", "content": ""}, {}],
    {"runId": "r", "threadId": "t", "type": "RUN_STARTED"}, {"messages": []}, [chunk()[0]], {"error": "ValueError"}])
def test_claims_nothing_else(value: Any) -> None:
    assert not LangGraph.claims(value)


def test_a_text_reply_folds_clean_in_every_chunking_and_the_close_is_its_end() -> None:
    data = run(event("messages", chunk("Hel")), b": heartbeat\n\n", event("messages", chunk("lo")),
               event("messages", chunk("", response_metadata={"finish_reason": "stop"})),
               event("values", {"messages": []}))
    result = tr_fold(data)
    assert (result.dialect, result.complete, result.id) == ("langgraph", True, "run-1")
    assert result.choices[0].content == "Hello" and result.choices[0].finish_reason == "stop"
    assert not result.errors and not result.diagnostics


def test_a_provider_id_and_langchains_run_id_are_one_message_from_one_node_and_step() -> None:
    data = run(event("messages", chunk([], "msg_1")), event("messages", chunk([{"type": "text", "text": "a", "index": 0}],
                                                                             "lc_run--1")),
               event("messages", chunk([{"type": "text", "text": "b", "index": 0}], "lc_run--1")),
               event("messages", chunk([{"type": "text", "text": "c", "index": 0}], "lc_run--2", step=3)))
    result = fold(data)
    messages = result.native["messages"]
    assert [message["id"] for message in messages] == ["msg_1", "lc_run--2"]
    assert messages[0]["content"] == [{"type": "text", "text": "ab", "index": 0}]
    assert result.choices[0].content == "abc"


def test_tool_call_chunks_join_by_index_and_usage_sums_over_messages() -> None:
    call = {"name": "f", "args": '{"a": ', "id": "call_1", "index": 0, "type": "tool_call_chunk"}
    data = run(event("messages", chunk(tool_call_chunks=[call], usage_metadata={"input_tokens": 5, "output_tokens": 1,
                                                                                "total_tokens": 6})),
               event("messages", chunk(tool_call_chunks=[{**call, "name": None, "id": None, "args": "1}"}],
                                       usage_metadata={"input_tokens": 0, "output_tokens": 3, "total_tokens": 3},
                                       response_metadata={"finish_reason": "tool_calls"})),
               event("messages", [{"type": "tool", "content": "ok", "tool_call_id": "call_1", "id": "t1"},
                                  {"langgraph_node": "tools", "langgraph_checkpoint_ns": "tools:t2"}]),
               event("messages", chunk("done", "chatcmpl-2", step=3, usage_metadata={
                   "input_tokens": 9, "output_tokens": 1, "total_tokens": 10})))
    result = tr_fold(data)
    assert [(call.id, call.name, call.parsed) for call in result.choices[0].tool_calls] == [("call_1", "f", {"a": 1})]
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.total_tokens) == (14, 5, 19)
    assert [message["type"] for message in result.native["messages"]] == ["AIMessageChunk", "tool", "AIMessageChunk"]
    assert result.choices[0].content == "done" and not result.diagnostics


def test_the_namespaces_are_lanes_and_one_can_be_chosen() -> None:
    data = (CAPTURES / "subgraph-lanes.sse").read_bytes()
    lane = "research:8e9f0a1b-2c3d-4e4f-8a5b-6c7d8e9f0a1b"
    default = fold(data)
    listed = [d for d in default.diagnostics if d.code == "langgraph-other-lanes"]
    assert len(listed) == 1 and listed[0].details["lanes"] == [lane] and listed[0].frame == 1
    assert default.lanes == (Lane(lane, "subgraph", 1, False), Lane("root", "graph", 5, True))
    research = fold(data, lane=lane)
    assert research.choices[0].content == "Found: 3 sources" and research.native["lane"] == lane
    assert research.native["updates"] == [["search"]]
    assert [d.details["lanes"] for d in research.diagnostics if d.code == "langgraph-other-lanes"] == [["root"]]


def test_without_subgraphs_a_messages_namespace_is_its_checkpoint_ns_less_the_node() -> None:
    data = run(event("messages", chunk("inner", ns="research:r1|search:s1")), event("messages", chunk("outer", "c2")))
    result = fold(data)
    assert result.choices[0].content == "outer"
    assert [d.details["lanes"] for d in result.diagnostics if d.code == "langgraph-other-lanes"] == [["research:r1"]]


def test_a_capture_without_its_event_lines_still_folds_its_messages() -> None:
    data = b"".join(line for line in (CAPTURES / "messages-tuple-text.sse").read_bytes().splitlines(keepends=True)
                    if not line.startswith(b"event:"))
    result = fold(data)
    assert result.dialect == "langgraph" and result.choices[0].content == "The capital of France is Paris."


def test_an_end_event_ends_it_and_what_follows_is_listed() -> None:
    result = fold(run(event("messages", chunk("a")), event("end", None), event("messages", chunk("b"))))
    assert result.complete and result.choices[0].content == "a"
    assert [d.code for d in result.diagnostics] == ["frame-after-terminal"]


def test_a_rewritten_partial_and_a_chunk_langchain_cannot_add_are_said() -> None:
    partial = run(event("messages/partial", [{"type": "ai", "content": "Hello", "id": "m"}]),
                  event("messages/partial", [{"type": "ai", "content": "Help me", "id": "m"}]))
    result = fold(partial)
    assert result.choices[0].content == "Hellop me"
    assert [d.code for d in result.diagnostics] == ["langgraph-partial-rewritten"]
    conflict = fold(run(event("messages", chunk("a", response_metadata={"x": "s"})),
                        event("messages", chunk("b", response_metadata={"x": 1}))))
    assert conflict.choices[0].content == "ab" and [d.code for d in conflict.diagnostics] == ["langgraph-merge-conflict"]


def test_an_unknown_event_is_named_once_and_kept_as_context() -> None:
    result = fold(run(event("weird", {"a": 1}), event("weird", {"a": 2}), event("messages", chunk("x"))))
    assert [d.code for d in result.diagnostics] == ["unexpected-payload"] and result.native["modes"] == {"weird": 2}
    assert result.choices[0].content == "x" and result.complete


@pytest.mark.parametrize("path", sorted(CAPTURES.glob("*.sse")), ids=lambda path: path.stem)
def test_the_export_is_the_runs_state_and_reads_back_as_the_result(path: Path) -> None:
    result = fold(path.read_bytes())
    exported = result.export()
    assert all(message["type"] != "AIMessageChunk" for message in exported["messages"])
    facts = SPEC.read_response(exported)
    assert facts is not None and facts["content"] == result.choices[0].content
    assert [name for name, _ in facts["tool_calls"]] == [call.name for call in result.choices[0].tool_calls]


def test_the_replay_server_breaks_it_as_the_agent_server_would() -> None:
    recording = by_name("langgraph/messages-tuple-text")
    errored = fold_plan(plan_response(recording, [parse_fault("error-event:5")]))
    assert [error["code"] for error in errored["errors"]] == ["in-stream-error"] and not errored["complete"]
    assert errored["choices"][0]["content"] == "The capital"
    refused = plan_response(recording, [parse_fault("http-error:409")])
    assert refused.status == 409 and json.loads(refused.body) == {"detail": "Thread is busy"}


def test_no_terminal_is_refused_with_the_reason() -> None:
    sentence = refusal([parse_fault("no-terminal")], transport="sse", dialect="langgraph", frames=13)
    assert sentence is not None and "closes the stream" in sentence


def test_the_root_is_asked_for_by_its_id_and_a_missing_lane_is_said_once() -> None:
    data = (CAPTURES / "subgraph-lanes.sse").read_bytes()
    asked = fold(data, lane="root")
    assert (asked.choices, asked.lanes) == (fold(data).choices, fold(data).lanes)
    missing = fold(data, lane="nope")
    assert [d.code for d in missing.diagnostics] == ["lane-not-found"] and missing.choices[0].content == ""


def test_a_second_model_call_of_the_same_step_is_another_message() -> None:
    data = run(event("messages", chunk("a", "msg_1")), event("messages", chunk("b", "lc_run--1")),
               event("messages", chunk("c", "lc_run--2")), event("messages", chunk("d", "lc_run--2")))
    assert [message["content"] for message in fold(data).native["messages"]] == ["ab", "cd"]
