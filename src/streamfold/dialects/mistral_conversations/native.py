"""The non-streaming `ConversationResponse` a Conversations stream stands for (`export`), its facts
(`read_response`), and a frame's line in the frames table (`summarize`).

The export is mistralai's `ConversationResponse`: `{object: "conversation.response", conversation_id,
outputs, usage}`, the outputs the followed lane's entries in stream order (`message.output` with its
content a string when it is all text, else its chunks; `function.call`; `tool.execution`; the
hand-offs' `agent.handoff`), and the other lanes under `lanes`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._base import arguments_text, compact_json

if TYPE_CHECKING:
    from ...result import Result

__all__ = ["export", "read_response", "summarize"]


def export(result: Result) -> dict[str, Any]:
    native = result.native if type(result.native) is dict else {}
    choice = result.choice(0)
    texts = {"text": choice.content if choice else "", "thinking": (choice.reasoning or "") if choice else ""}
    calls = {call.key: call for call in choice.tool_calls} if choice is not None else {}
    outputs: list[dict[str, Any]] = []
    for entry in native.get("entries", ()):
        kind = entry["type"]
        out: dict[str, Any] = {"object": "entry", "type": kind, "id": entry["id"]}
        if kind == "message.output":
            chunks = [_chunk(part, texts) for part in entry["content"]]
            out.update(role="assistant", agent_id=entry.get("agent_id"), model=entry.get("model"),
                       content=chunks[0]["text"] if len(chunks) == 1 and chunks[0]["type"] == "text" else chunks)
        elif kind == "function.call" and entry["call"] in calls:
            call = calls[entry["call"]]
            out.update(tool_call_id=call.id, name=call.name, arguments=call.arguments)
        elif kind == "tool.execution":
            out.update(name=entry.get("name"), arguments=entry.get("arguments", ""))
            if "info" in entry:
                out["info"] = entry["info"]
        elif kind == "agent.handoff":
            out.update((key, value) for key, value in entry.items() if key.endswith(("_agent_id", "_agent_name")))
        outputs.append(out)
    exported: dict[str, Any] = {"object": "conversation.response", "conversation_id": result.id, "outputs": outputs,
                                "usage": result.usage.raw if result.usage is not None else {}}
    if native.get("lanes", {}).get("others"):
        exported["lanes"] = native["lanes"]
    return exported


def _chunk(part: Any, texts: dict[str, str]) -> dict[str, Any]:
    """A message entry's content chunk: a text or thinking span of the reply or the reasoning, or a chunk kept whole."""
    if type(part) is dict:
        return part
    kind, start, end = part
    if kind == "thinking":
        return {"type": "thinking", "thinking": [{"type": "text", "text": texts["thinking"][start:end]}]}
    return {"type": "text", "text": texts["text"][start:end]}


def read_response(value: object) -> dict[str, Any] | None:
    """The facts of a non-streaming `ConversationResponse`."""
    if not (type(value) is dict and value.get("object", "conversation.response") == "conversation.response"
            and type(value.get("conversation_id")) is str and type(value.get("outputs")) is list):
        return None
    content: list[str] = []
    reasoning: list[str] = []
    calls = [entry for entry in value["outputs"] if type(entry) is dict and entry.get("type") == "function.call"]
    for entry in value["outputs"]:
        if type(entry) is not dict or entry.get("type") != "message.output":
            continue
        chunks = entry.get("content")
        for chunk in [chunks] if type(chunks) is str else chunks if type(chunks) is list else ():
            if type(chunk) is str:
                content.append(chunk)
            elif type(chunk) is dict and chunk.get("type") == "text" and type(chunk.get("text")) is str:
                content.append(chunk["text"])
            elif type(chunk) is dict and chunk.get("type") == "thinking" and type(chunk.get("thinking")) is list:
                reasoning.extend(piece["text"] for piece in chunk["thinking"]
                                 if type(piece) is dict and type(piece.get("text")) is str)
    # The usage comes with the stream's end: the export of a stream cut before it has none, and tells no end.
    usage = value.get("usage") or None
    return {"content": "".join(content), "reasoning": "".join(reasoning) or None,
            "tool_calls": [(call.get("name"), arguments_text(call.get("arguments"))) for call in calls],
            "tool_call_ids": [call.get("tool_call_id") for call in calls],
            "finish_reason": "conversation.response.done" if usage else None, "usage": usage}


def summarize(value: object) -> str:
    if type(value) is not dict:
        return compact_json(value)
    kind = value.get("type")
    if kind == "message.output.delta":
        content = value.get("content")
        text = content if type(content) is str else content.get("text") if type(content) is dict else None
        detail = compact_json(text, 80) if type(text) is str else compact_json(content, 80)
        return f"{kind} {value.get('agent_id') or ''} {detail}".replace("  ", " ")
    if kind == "function.call.delta":
        return f"{kind} {value.get('name')} {compact_json(value.get('arguments'), 80)}"
    if type(kind) is str and kind.startswith("tool.execution."):
        return f"{kind} {value.get('name')}"
    if kind == "agent.handoff.started":
        return f"{kind} from {value.get('previous_agent_id')}"
    if kind == "agent.handoff.done":
        return f"{kind} to {value.get('next_agent_id')}"
    return str(kind) if kind else compact_json(value)
