"""The Realtime dialect's vendor objects: the `realtime.response` that `response.done`
carries, rebuilt from a Result (`export`) and read back (`read_response`), and
the one-line summary of a server event for the frames table.

The export is the response as `response.done` states it: `output` items in
stream order (a message's content part is `output_text` with `text`, or
`output_audio` with `transcript`, as the reply's modality was), `status` and
`status_details`, `usage` as the server sent it. The audio itself is never in
it (`response.done` omits it too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._base import compact_json

if TYPE_CHECKING:
    from ...result import Result

__all__ = ["export", "listed", "read_response", "summarize"]


def listed(value: object) -> list[Any] | tuple[()]:
    """`value` if it is a list, else nothing to iterate: a server's `output` or `content` may be anything."""
    return value if type(value) is list else ()


def export(result: Result) -> dict[str, Any]:
    """The `realtime.response` object of the followed response."""
    native = result.native if type(result.native) is dict else {}
    choice = result.choice(0)
    content = choice.content if choice is not None else ""
    calls = {call.key: call for call in choice.tool_calls} if choice is not None else {}
    status = native.get("item_status", {})
    output: list[dict[str, Any]] = []
    for item in native.get("items", ()):
        if item[0] == "message":
            _, item_id, modality, start, end = item
            part: dict[str, Any] = {"type": "output_audio", "transcript": content[start:end]} \
                if modality == "transcript" else {"type": "output_text", "text": content[start:end] if start is not
                                                  None else ""}
            output.append({"id": item_id, "object": "realtime.item", "type": "message",
                           "status": status.get(item_id, "completed"),
                           "role": "assistant", "content": [part]})
        elif item[0] == "function_call" and item[2] in calls:
            call = calls[item[2]]
            output.append({"id": item[1], "object": "realtime.item", "type": "function_call",
                           "status": status.get(item[1], "completed"), "call_id": call.id, "name": call.name,
                           "arguments": call.arguments})
    out: dict[str, Any] = {"object": "realtime.response", "id": result.id}
    for key in ("status", "status_details", "conversation_id", "output_modalities", "modalities", "metadata"):
        if key in native:
            out[key] = native[key]
    out["output"] = output
    if result.usage is not None:
        out["usage"] = result.usage.raw
    return out


def read_response(value: object) -> dict[str, Any] | None:
    """The facts of a `realtime.response` object (or of a `response.done` event holding one)."""
    if isinstance(value, dict) and value.get("type") == "response.done":
        value = value.get("response")
    if not isinstance(value, dict) or value.get("object") != "realtime.response":
        return None
    texts: list[str] = []
    calls: list[tuple[Any, Any]] = []
    ids: list[Any] = []
    for item in listed(value.get("output")):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            calls.append((item.get("name"), item.get("arguments") or ""))
            ids.append(item.get("call_id"))
        for part in listed(item.get("content")) if item.get("type") == "message" else ():
            if isinstance(part, dict):
                texts.append(str(part.get("text") or part.get("transcript") or ""))
    details = value.get("status_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    status = value.get("status")
    return {"content": "".join(texts), "reasoning": None, "tool_calls": calls, "tool_call_ids": ids,
            # A response still in progress (a session cut before `response.done`) has not finished.
            "finish_reason": None if status == "in_progress" else reason if reason and status != "failed"
            else status,
            "usage": value.get("usage")}


def summarize(value: object) -> str:
    """`type` and what the event carries that a person looks for: a delta, a name, a status, an error."""
    if type(value) is not dict or type(value.get("type")) is not str:
        return compact_json(value)
    kind: str = value["type"]
    if kind.endswith(".delta") and type(value.get("delta")) is str:
        if "audio" in kind and "transcript" not in kind:
            return f"{kind} ({len(value['delta'])} base64 chars of audio)"
        return f"{kind} {compact_json(value['delta'], 80)}"
    if kind == "error" and type(value.get("error")) is dict:
        return f"error {compact_json(value['error'].get('message') or value['error'], 120)}"
    response = value.get("response")
    if type(response) is dict:
        parts = [f"{kind} {response.get('id')}", f"status {response.get('status')}"]
        if response.get("usage"):
            parts.append("usage")
        return ", ".join(parts)
    item = value.get("item")
    if type(item) is dict:
        name = f" {item['name']}" if item.get("name") else ""
        return f"{kind} {item.get('type')}{name} {item.get('id')}"
    if kind.endswith(".done"):
        for key in ("arguments", "text", "transcript"):
            if type(value.get(key)) is str:
                return f"{kind} {key} {compact_json(value[key], 80)}"
    part = value.get("part")
    if type(part) is dict:
        return f"{kind} {part.get('type')}"
    session = value.get("session")
    if type(session) is dict:
        return f"{kind} {session.get('model') or session.get('id') or ''}".rstrip()
    return kind
