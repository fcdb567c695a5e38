"""The `UIMessage` a UI message stream stands for, from the Result alone (its `native` parts),
shaped as the `ai` package's `readUIMessageStream` yields it; and the frames-table summaries."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .._base import compact_json, dumps_arguments

if TYPE_CHECKING:
    from ...result import Result

__all__ = ["export_message", "read_message", "summarize_chunk"]


def export_message(result: Result) -> dict[str, Any]:
    """`{id, role: "assistant", metadata?, parts}`: text and reasoning parts `done`, tool parts
    named `tool-NAME` (`dynamic-tool` with a `toolName` for dynamic tools) with their state."""
    native = result.native if type(result.native) is dict else {}
    choice = result.choice(0)
    content = choice.content if choice is not None else ""
    reasoning = (choice.reasoning if choice is not None else None) or ""
    calls = {call.key: call for call in choice.tool_calls} if choice is not None else {}
    parts: list[dict[str, Any]] = []
    for part in native.get("parts", ()):
        kind = part.get("type")
        if kind in ("text", "reasoning"):
            source = content if kind == "text" else reasoning
            parts.append({"type": kind, "text": "".join(source[start:end] for start, end in part["runs"]),
                          "state": "done" if part.get("done") else "streaming",
                          **({"citations": part["citations"]} if "citations" in part else {})})
        elif kind == "tool":
            call = calls.get(part["key"])
            name = call.name if call is not None else None
            out: dict[str, Any] = ({"type": "dynamic-tool", "toolName": name} if part.get("dynamic")
                                   else {"type": f"tool-{name}"})
            out.update({"toolCallId": part["toolCallId"], "state": part["state"],
                        # Unparseable input keeps its text (never a null in its place).
                        "input": None if call is None else call.parsed if call.error is None else call.arguments})
            for field in ("output", "errorText", "providerExecuted", "preliminary", "title", "approval", "toolMetadata",
                          "inputEncoding", "callProviderMetadata", "resultProviderMetadata"):
                if field in part:
                    out[field] = part[field]
            parts.append(out)
        elif kind == "raw":
            parts.append(dict(part["part"]))
    message: dict[str, Any] = {"id": result.id or "", "role": "assistant"}
    if "metadata" in native:
        message["metadata"] = native["metadata"]
    message["parts"] = parts
    return message


_MESSAGE_KEYS = frozenset({"id", "role", "metadata", "parts"})


def _input_arguments(value: object) -> str:
    """A tool part's `input` (any JSON value: a string is a text input's, ai 7) as the arguments text; but for
    the text of a JSON object or array that does not parse, which is how an export keeps input that did not
    parse (never a null in its place)."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            json.loads(value)
        except (ValueError, RecursionError):
            return value
    return dumps_arguments(value)


def read_message(value: object) -> dict[str, Any] | None:
    """The facts of an assistant `UIMessage` (`{id, role, metadata?, parts}`, nothing else: a chat
    message has `content`), or None when `value` is not one. A UIMessage has no finish reason: the
    facts leave it out."""
    if not (isinstance(value, dict) and value.get("role") == "assistant" and isinstance(value.get("parts"), list)
            and value.keys() <= _MESSAGE_KEYS and all(isinstance(part, dict) and isinstance(part.get("type"), str)
                                                     for part in value["parts"])):
        return None
    parts: list[dict[str, Any]] = value["parts"]
    tools = [part for part in parts if part["type"].startswith("tool-") or part["type"] == "dynamic-tool"]
    metadata = value.get("metadata")
    usage = next((metadata[key] for key in ("usage", "totalUsage") if isinstance(metadata.get(key), dict)), None) \
        if isinstance(metadata, dict) else None
    return {"content": "".join(str(part.get("text") or "") for part in parts if part["type"] == "text"),
            "reasoning": "".join(str(part.get("text") or "") for part in parts if part["type"] == "reasoning") or None,
            "tool_calls": [(part.get("toolName") if part["type"] == "dynamic-tool" else part["type"][5:],
                            _input_arguments(part.get("input"))) for part in tools],
            "tool_call_ids": [part.get("toolCallId") for part in tools],
            "usage": usage}


def summarize_chunk(value: object) -> str:
    """`text-delta "Hel"`, `tool-input-start call_1 weather`, `finish stop`, ..."""
    if type(value) is not dict or type(value.get("type")) is not str:
        return compact_json(value)
    kind: str = value["type"]
    if kind in ("text-delta", "reasoning-delta"):
        return f"{kind} {compact_json(value.get('delta'), 80)}"
    if kind == "tool-input-delta":
        return f"{kind} {value.get('toolCallId')} {compact_json(value.get('inputTextDelta'), 60)}"
    if kind == "tool-approval-response":
        return f"{kind} {value.get('approvalId')} {'approved' if value.get('approved') is True else 'denied'}"
    if kind.startswith("tool-"):
        name = f" {value['toolName']}" if value.get("toolName") else ""
        return f"{kind} {value.get('toolCallId')}{name}"
    if kind == "finish":
        return f"finish {value.get('finishReason') or ''}".rstrip()
    if kind == "error":
        return f"error {compact_json(value.get('errorText'), 80)}"
    if kind in ("text-start", "text-end", "reasoning-start", "reasoning-end"):
        return f"{kind} {value.get('id')}"
    if kind == "start":
        return f"start {value.get('messageId') or ''}".rstrip()
    return compact_json(value, 120)
