"""The non-streaming object a LangGraph run stream stands for, and a frame's line in the frames table.

`export` gives the run's output as `POST /runs/wait` returns it: the graph's last `values` state, its
`messages` the followed lane's messages of this run as the stream merged them (AI messages as LangChain
adds their chunks, `type: "ai"`, with their `tool_calls` parsed; tool messages whole). The history before
the run is not in the stream's messages: a state without `values` is `{"messages": [...]}` alone.
`read_response` reads such a state: the reply is the AI messages after the last human one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._base import arguments_text, compact_json
from .context import message_type, sum_usage

if TYPE_CHECKING:
    from ...result import Result

__all__ = ["export", "read_response", "summarize"]

_AI = ("ai", "AIMessageChunk")


def export(result: Result) -> dict[str, Any]:
    native = result.native if type(result.native) is dict else {}
    values = native.get("values")
    out: dict[str, Any] = {key: value for key, value in values.items() if key != "messages"} \
        if type(values) is dict else {}
    choice = result.choice(0)
    calls = iter(choice.tool_calls if choice is not None else ())
    messages = []
    for message in native.get("messages", ()):
        if message_type(message) in _AI:
            # The Result's tool calls come message by message, each message's in its own order.
            held = _listed(message.get("tool_call_chunks")) or _listed(message.get("tool_calls"))
            stated = [call for call in (next(calls, None) for _ in held) if call is not None]
            message = {key: value for key, value in message.items()
                       if key not in ("tool_call_chunks", "chunk_position", "tool_calls")}
            message["type"] = "ai"
            message["tool_calls"] = [{"name": call.name, "args": call.parsed if call.error is None else {},
                                      "id": call.id, "type": "tool_call"} for call in stated]
        messages.append(message)
    out["messages"] = messages
    return out


def read_response(value: object) -> dict[str, Any] | None:
    """A graph state with `messages` (the `/runs/wait` body): the AI messages after the last human one."""
    messages = value.get("messages") if type(value) is dict else None
    if type(messages) is not list or not messages or not all(message_type(m) for m in messages):
        return None
    last_human = max((at for at, m in enumerate(messages) if m["type"] in ("human", "HumanMessageChunk")), default=-1)
    replies = [m for m in messages[last_human + 1:] if m["type"] in _AI]
    text: list[str] = []
    reasoning: list[str] = []
    for message in replies:
        content = message.get("content")
        for block in [content] if type(content) is str else content if type(content) is list else ():
            if type(block) is str:
                text.append(block)
            elif type(block) is dict and block.get("type") == "text" and type(block.get("text")) is str:
                text.append(block["text"])
            elif type(block) is dict and block.get("type") in ("thinking", "reasoning") \
                    and type(block.get(block["type"])) is str:
                reasoning.append(block[block["type"]])
    calls = [call for m in replies for call in _listed(m.get("tool_calls")) if type(call) is dict]
    finish = None
    for message in replies:
        metadata = message.get("response_metadata")
        if type(metadata) is dict:
            finish = metadata.get("finish_reason") or metadata.get("stop_reason") or finish
    return {"content": "".join(text), "reasoning": "".join(reasoning) or None,
            "tool_calls": [(call.get("name"), arguments_text(call.get("args", {}))) for call in calls],
            "tool_call_ids": [call.get("id") for call in calls], "finish_reason": finish,
            "usage": sum_usage([message.get("usage_metadata") for message in replies])}


def _listed(value: object) -> list[Any]:
    return value if type(value) is list else []


def summarize(value: object) -> str:
    if type(value) is list and len(value) == 2 and type(value[0]) is dict and type(value[1]) is dict:
        message, metadata = value
        content = message.get("content")
        calls = _listed(message.get("tool_call_chunks"))
        detail = compact_json(content, 80) if content else " ".join(
            f"{call.get('name') or ''}{compact_json(call.get('args'), 60)}" for call in calls if type(call) is dict)
        return f"{message.get('type')} [{metadata.get('langgraph_node')}] {detail}".rstrip()
    if type(value) is dict and type(value.get("run_id")) is str:
        return f"run {value['run_id']}"
    return compact_json(value, 120)
