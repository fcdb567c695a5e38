"""One line per Bedrock ConverseStream event for the frames table, in the words the other
dialects' rows use (`[0] text "Hel"`, `[1] start tool_use get_weather tooluse_…`,
`stop end_turn`), not the event's JSON.

An event-stream message carries the event body alone (its name is the `:event-type`
header, shown in the event column), so the event is told by its shape; SDK logs wrap it
(`{"contentBlockDelta": {...}}`) and are unwrapped first.
"""

from __future__ import annotations

from typing import Any

from .._base import compact_json

__all__ = ["summarize_event"]

#: contentBlockDelta's fields, in the order looked for, and their labels.
_DELTAS = (("text", "text"), ("toolUse", "input"), ("reasoningContent", "reasoning"), ("citation", "citation"),
           ("toolResult", "tool result"))


def summarize_event(event: str | None, value: dict[Any, Any]) -> str | None:
    """The event in one line, or None when its shape is not a ConverseStream event's."""
    value = {key: item for key, item in value.items() if key != "p"}  # the event-stream's padding
    index = value.get("contentBlockIndex")
    if event == "contentBlockDelta" or (event is None and "delta" in value and "contentBlockIndex" in value):
        return _delta(index, value.get("delta"))
    if event == "contentBlockStart" or (event is None and "start" in value and "contentBlockIndex" in value):
        return _start(index, value.get("start"))
    if event == "contentBlockStop" or (event is None and set(value) == {"contentBlockIndex"}):
        return f"[{index}] stop"
    if event == "messageStop" or (event is None and "stopReason" in value):
        return f"stop {_word(value.get('stopReason'))}"
    if event == "messageStart" or (event is None and set(value) == {"role"}):
        return f"role {compact_json(value.get('role'), 40)}"
    if event == "metadata" or (event is None and ("usage" in value or "metrics" in value)):
        return _metadata(value)
    return None


def _delta(index: object, delta: object) -> str:
    if type(delta) is not dict:
        return f"[{index}] delta"
    for key, label in _DELTAS:
        if key not in delta:
            continue
        piece = delta[key]
        if key == "toolUse" and type(piece) is dict:
            piece = piece.get("input")
        elif key == "reasoningContent" and type(piece) is dict:
            for name, shown in (("text", "reasoning"), ("signature", "signature"), ("redactedContent", "redacted")):
                if name in piece:
                    return f"[{index}] {shown} {compact_json(piece[name], 80)}"
        elif key == "citation" and type(piece) is dict:
            piece = piece.get("title", piece)
        return f"[{index}] {label} {compact_json(piece, 80)}"
    return f"[{index}] delta {compact_json(delta, 80)}"


def _start(index: object, start: object) -> str:
    if type(start) is not dict or not start:
        return f"[{index}] start"
    tool = start.get("toolUse")
    if type(tool) is dict:
        kind = "server_tool_use" if tool.get("type") == "server_tool_use" else "tool_use"
        label = " ".join(str(tool[key]) for key in ("name", "toolUseId") if tool.get(key))
        return f"[{index}] start {kind}" + (f" {label}" if label else "")
    return f"[{index}] start {next(iter(start))}"


def _metadata(value: dict[str, Any]) -> str:
    parts = []
    usage = value.get("usage")
    if type(usage) is dict:
        names = {"inputTokens": "input", "outputTokens": "output", "totalTokens": "total",
                 "cacheReadInputTokens": "cache read", "cacheWriteInputTokens": "cache write"}
        counts = [f"{names.get(key, key)} {count}" for key, count in usage.items() if type(count) is int]
        parts.append("usage " + ", ".join(counts))
    metrics = value.get("metrics")
    if type(metrics) is dict and type(metrics.get("latencyMs")) is int:
        parts.append(f"latency {metrics['latencyMs']} ms")
    return " · ".join(parts) or "metadata"


def _word(value: object) -> str:
    return value if type(value) is str else compact_json(value, 40)
