"""What a LangGraph stream carries besides the reply: the shapes detection knows it by, and the stream
modes kept as context for the export (`values`, `updates`, `custom`, and how many of the rest)."""

from __future__ import annotations

from typing import Any

__all__ = ["MESSAGE_TYPES", "Context", "is_metadata_tuple", "is_run_metadata", "message_type", "sum_usage"]

#: A serialised LangChain message's `type` (langchain_core `BaseMessage.type`), chunks and whole messages.
MESSAGE_TYPES = frozenset({"AIMessageChunk", "ai", "HumanMessageChunk", "human", "ToolMessageChunk", "tool",
                           "SystemMessageChunk", "system", "ChatMessageChunk", "chat", "FunctionMessageChunk",
                           "function", "RemoveMessage", "remove"})
#: How many `custom` payloads and `updates` entries the export keeps (a long run sends thousands).
_KEPT = 200


def message_type(value: object) -> str | None:
    kind = value.get("type") if type(value) is dict else None
    return kind if type(kind) is str and kind in MESSAGE_TYPES else None


def is_run_metadata(value: object) -> bool:
    """The `metadata` event: `{run_id, attempt}` (a thread stream's `{status: "run_done", run_id}` too)."""
    if type(value) is not dict or type(value.get("run_id")) is not str:
        return False
    return (type(value.get("attempt")) is int or value.get("status") == "run_done") and len(value) <= 4


def is_metadata_tuple(value: object) -> bool:
    """A `messages` event (stream mode "messages-tuple"): `[message, metadata]`, the metadata LangGraph's."""
    if type(value) is not list or len(value) != 2 or message_type(value[0]) is None or type(value[1]) is not dict:
        return False
    message, metadata = value
    return "content" in message and any(type(key) is str and key.startswith("langgraph_") for key in metadata)


class Context:
    """The context modes of the followed lane: the last `values`, the nodes each `updates` named, the
    `custom` payloads, and a count of every mode's events (no frame numbers: a keep-alive more would change
    them, and the export with them)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.values: Any = None
        self.updates: list[list[str]] = []
        self.custom: list[Any] = []

    def add(self, mode: str, value: Any, *, followed: bool) -> None:
        self.counts[mode] = self.counts.get(mode, 0) + 1
        if not followed:
            return
        if mode == "values":
            self.values = value
        elif mode == "updates" and type(value) is dict and len(self.updates) < _KEPT:
            self.updates.append(sorted(str(node) for node in value))
        elif mode == "custom" and len(self.custom) < _KEPT:
            self.custom.append(value)

    def snapshot(self) -> dict[str, Any]:
        out: dict[str, Any] = {"modes": dict(self.counts)}
        if self.values is not None:
            out["values"] = self.values
        if self.updates:
            out["updates"] = list(self.updates)
        if self.custom:
            out["custom"] = list(self.custom)
        return out


def sum_usage(usages: list[Any]) -> dict[str, Any] | None:
    """The `usage_metadata` of several messages summed key by key (nested details too)."""
    total: dict[str, Any] | None = None
    for usage in usages:
        if type(usage) is dict:
            total = usage if total is None else _added(total, usage)
    return total


def _added(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    out = dict(left)
    for key, value in right.items():
        if type(value) is int and type(out.get(key)) is int:
            out[key] += value
        elif type(value) is dict and type(out.get(key)) is dict:
            out[key] = _added(out[key], value)
        else:
            out.setdefault(key, value)
    return out
