"""Writes the Responses multi-agent captures (tests/captures/openai-responses-agents/) from openai-python's beta
types: every event is validated by the SDK's own union (`BetaResponseStreamEvent` over HTTP,
`BetaResponsesServerEvent` and `BetaResponsesClientEvent` over a WebSocket) and written as the SDK dumps it.
Agent names, actions and the order of events follow the multi-agent guide (Azure OpenAI's "Use multi-agent
orchestration with the Responses API": the root agent is `/root`, sub-agents `/root/<task>`, every item and
event names its agent, the root's `final_answer` message is the answer, `response.inject` over a WebSocket).

    /work/venv311/bin/python tests/sdk/responses_agents_recorder.py tests/captures/openai-responses-agents
"""

from __future__ import annotations

import json
import sys
import typing
from pathlib import Path
from typing import Any

from openai.types.beta import BetaResponsesClientEvent, BetaResponsesServerEvent, BetaResponseStreamEvent

MODEL = "gpt-5.6"
ROOT, RESEARCHER = "/root", "/root/researcher"
USAGE = {"input_tokens": 412, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0}, "output_tokens": 96,
         "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 508}


class Events:
    """A response's events in order, numbered, each owned by an agent, and the items its output holds."""

    def __init__(self, response_id: str) -> None:
        self.id = response_id
        self.events: list[dict[str, Any]] = []
        self.output: dict[int, dict[str, Any]] = {}

    def add(self, kind: str, agent: str | None = None, **fields: Any) -> Events:
        event = {"type": kind, "sequence_number": len(self.events), **fields}
        if agent is not None:
            event["agent"] = {"agent_name": agent}
        self.events.append(event)
        return self

    def response(self, status: str, output: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
        return {"id": self.id, "object": "response", "created_at": 1796650000, "model": MODEL, "status": status,
                "output": output or [], "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
                "multi_agent": {"enabled": True, "max_concurrent_subagents": 3}, **extra}

    def start(self) -> Events:
        self.add("response.created", ROOT, response=self.response("in_progress"))
        return self.add("response.in_progress", ROOT, response=self.response("in_progress"))

    def whole(self, index: int, agent: str, item: dict[str, Any]) -> Events:
        """An item that streams nothing but its `.added` and `.done` (a multi-agent call, its output)."""
        item = {**item, "agent": {"agent_name": agent}}
        self.output[index] = item
        self.add("response.output_item.added", agent, output_index=index, item=item)
        return self.add("response.output_item.done", agent, output_index=index, item=item)

    def agent_call(self, index: int, agent: str, action: str, call_id: str, arguments: dict[str, Any],
                   result: str, output_index: int) -> Events:
        self.whole(index, agent, {"type": "multi_agent_call", "id": f"mac_{call_id}", "call_id": call_id,
                                  "action": action, "arguments": json.dumps(arguments)})
        return self.whole(output_index, agent, {
            "type": "multi_agent_call_output", "id": f"maco_{call_id}", "call_id": call_id, "action": action,
            "output": [{"type": "output_text", "text": result, "annotations": []}]})

    def message_start(self, index: int, agent: str, item_id: str, phase: str | None = None) -> Events:
        item = {"type": "message", "id": item_id, "role": "assistant", "status": "in_progress", "content": [],
                "agent": {"agent_name": agent}}
        if phase:
            item["phase"] = phase
        self.add("response.output_item.added", agent, output_index=index, item=item)
        return self.add("response.content_part.added", agent, output_index=index, item_id=item_id, content_index=0,
                        part={"type": "output_text", "text": "", "annotations": []})

    def delta(self, index: int, agent: str, item_id: str, text: str) -> Events:
        return self.add("response.output_text.delta", agent, output_index=index, item_id=item_id, content_index=0,
                        delta=text, logprobs=[])

    def message_end(self, index: int, agent: str, item_id: str, text: str, phase: str | None = None) -> Events:
        part = {"type": "output_text", "text": text, "annotations": []}
        self.add("response.output_text.done", agent, output_index=index, item_id=item_id, content_index=0,
                 text=text, logprobs=[])
        self.add("response.content_part.done", agent, output_index=index, item_id=item_id, content_index=0, part=part)
        item = {"type": "message", "id": item_id, "role": "assistant", "status": "completed", "content": [part],
                "agent": {"agent_name": agent}}
        if phase:
            item["phase"] = phase
        self.output[index] = item
        return self.add("response.output_item.done", agent, output_index=index, item=item)

    def function_call(self, index: int, agent: str, call_id: str, name: str, pieces: list[str]) -> Events:
        item_id = f"fc_{call_id}"
        skeleton = {"type": "function_call", "id": item_id, "call_id": call_id, "name": name, "arguments": "",
                    "status": "in_progress", "agent": {"agent_name": agent}}
        self.add("response.output_item.added", agent, output_index=index, item=skeleton)
        for piece in pieces:
            self.add("response.function_call_arguments.delta", agent, output_index=index, item_id=item_id,
                     delta=piece)
        arguments = "".join(pieces)
        self.add("response.function_call_arguments.done", agent, output_index=index, item_id=item_id, name=name,
                 arguments=arguments)
        self.output[index] = {**skeleton, "arguments": arguments, "status": "completed"}
        return self.add("response.output_item.done", agent, output_index=index, item=self.output[index])

    def complete(self) -> Events:
        output = [self.output[index] for index in sorted(self.output)]
        return self.add("response.completed", ROOT, response=self.response("completed", output, usage=USAGE))


def root_waits_for_a_researcher() -> Events:
    """The root spawns a researcher and waits; their text interleaves; the root's final answer is the reply."""
    events = Events("resp_ma_root_waits").start()
    events.agent_call(0, ROOT, "spawn_agent", "call_spawn_1", {"task_name": "researcher", "message":
                      "Find direct flights from Berlin to Lisbon on 3 May."}, '{"task_name":"/root/researcher"}', 1)
    events.message_start(2, RESEARCHER, "msg_researcher").delta(2, RESEARCHER, "msg_researcher", "Three direct ")
    events.whole(3, ROOT, {"type": "multi_agent_call", "id": "mac_wait_1", "call_id": "call_wait_1",
                           "action": "wait_agent", "arguments": json.dumps({"targets": [RESEARCHER]})})
    events.delta(2, RESEARCHER, "msg_researcher", "flights: 07:10, 12:40 and 18:05.")
    events.message_end(2, RESEARCHER, "msg_researcher", "Three direct flights: 07:10, 12:40 and 18:05.")
    events.whole(4, RESEARCHER, {"type": "agent_message", "id": "am_1", "author": RESEARCHER, "recipient": ROOT,
                                 "content": [{"type": "encrypted_content", "encrypted_content": "gAAAAB-opaque"}]})
    events.whole(5, ROOT, {"type": "multi_agent_call_output", "id": "maco_wait_1", "call_id": "call_wait_1",
                           "action": "wait_agent", "output": [{"type": "output_text", "annotations": [],
                                                               "text": '{"/root/researcher":"completed"}'}]})
    events.message_start(6, ROOT, "msg_root", "final_answer").delta(6, ROOT, "msg_root", "There are three ")
    events.delta(6, ROOT, "msg_root", "direct flights; the 12:40 one suits you best.")
    events.message_end(6, ROOT, "msg_root", "There are three direct flights; the 12:40 one suits you best.",
                       "final_answer")
    return events.complete()


def researcher_calls_a_function() -> Events:
    """A sub-agent calls a developer function: the response completes paused on it, the root says so."""
    events = Events("resp_ma_function").start()
    events.agent_call(0, ROOT, "spawn_agent", "call_spawn_2", {"task_name": "researcher", "message":
                      "Look up the fare."}, '{"task_name":"/root/researcher"}', 1)
    events.message_start(2, ROOT, "msg_root_2", "commentary").delta(2, ROOT, "msg_root_2", "Checking fares.")
    events.function_call(3, RESEARCHER, "call_fare_1", "get_fare", ['{"from":"BER",', '"to":"LIS"}'])
    events.message_end(2, ROOT, "msg_root_2", "Checking fares.", "commentary")
    return events.complete()


def websocket_inject() -> list[tuple[str, dict[str, Any]]]:
    """Over a WebSocket: the sub-agent's function call, the client injects its output into the active response
    (`response.inject`, accepted: `response.inject.created`), a second injection names no active response
    (`response.inject.failed`), the researcher goes on and the root answers."""
    events = Events("resp_ma_ws").start()
    events.agent_call(0, ROOT, "spawn_agent", "call_spawn_3", {"task_name": "researcher", "message":
                      "Get the fare."}, '{"task_name":"/root/researcher"}', 1)
    events.function_call(2, RESEARCHER, "call_fare_2", "get_fare", ['{"from":"BER","to":"LIS"}'])
    injected = {"type": "function_call_output", "call_id": "call_fare_2", "output": '{"eur":89}'}
    sent_at = len(events.events)
    events.add("response.inject.created", response_id=events.id)
    events.add("response.inject.failed", response_id="resp_gone", input=[injected],
               error={"code": "response_not_found", "message": "No active response with id resp_gone."})
    events.message_start(3, RESEARCHER, "msg_r3").delta(3, RESEARCHER, "msg_r3", "The fare is 89 EUR.")
    events.message_end(3, RESEARCHER, "msg_r3", "The fare is 89 EUR.")
    events.message_start(4, ROOT, "msg_root_3", "final_answer").delta(4, ROOT, "msg_root_3", "It costs 89 EUR.")
    events.message_end(4, ROOT, "msg_root_3", "It costs 89 EUR.", "final_answer")
    events.complete()
    create = {"type": "response.create", "model": MODEL, "input": "What does a flight to Lisbon cost?",
              "multi_agent": {"enabled": True}}
    inject = {"type": "response.inject", "response_id": events.id, "input": [injected]}
    inject_wrong = {"type": "response.inject", "response_id": "resp_gone", "input": [injected]}
    received = [("receive", event) for event in events.events]
    return [("send", create), *received[:sent_at], ("send", inject), ("send", inject_wrong), *received[sent_at:]]


def _by_type(union: Any) -> dict[str, Any]:
    """The union's members by their `type` (validating against the one member names the error plainly)."""
    members = typing.get_args(typing.get_args(union)[0]) if typing.get_origin(union) is typing.Annotated \
        else typing.get_args(union)
    return {typing.get_args(member.model_fields["type"].annotation)[0]: member for member in members}


def _typed(union: Any, event: dict[str, Any]) -> Any:
    return _by_type(union)[event["type"]].model_validate(event)


def sse(events: Events) -> bytes:
    out = []
    for event in events.events:
        typed = _typed(BetaResponseStreamEvent, event)
        out.append(f"event: {event['type']}\ndata: {typed.model_dump_json(exclude_unset=True)}\n\n")
    return "".join(out).encode()


def websocket(messages: list[tuple[str, dict[str, Any]]]) -> bytes:
    lines = []
    for at, (direction, message) in enumerate(messages):
        typed = _typed(BetaResponsesClientEvent if direction == "send" else BetaResponsesServerEvent, message)
        data = typed.model_dump_json(exclude_unset=True)
        lines.append(json.dumps({"type": direction, "time": 1796650000.0 + at / 10, "opcode": 1, "data": data}))
    return ("\n".join(lines) + "\n").encode()


def main(out: Path) -> None:
    (out / "root-waits-for-a-researcher.sse").write_bytes(sse(root_waits_for_a_researcher()))
    (out / "researcher-calls-a-function.sse").write_bytes(sse(researcher_calls_a_function()))
    (out / "websocket-inject.jsonl").write_bytes(websocket(websocket_inject()))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
