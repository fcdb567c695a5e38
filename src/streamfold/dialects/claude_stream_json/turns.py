"""The Anthropic stream events one whole `assistant` message stands for: what `claude -p
--output-format stream-json` prints without `--include-partial-messages` (no `stream_event`
lines), folded as if its blocks had streamed in one delta each."""

from __future__ import annotations

from typing import Any

from .._base import dumps_arguments

__all__ = ["events_of_message"]

#: Block type -> the delta type and the field that carries its whole content.
_DELTAS = {"text": ("text_delta", "text"), "thinking": ("thinking_delta", "thinking")}


def events_of_message(message: dict[str, Any], first: bool, at: int) -> list[dict[str, Any]]:
    """`message_start` (for the first line of a message), then per content block a start, one delta
    and a stop (the blocks numbered from `at`: Claude Code prints a message one block a line), then a
    `message_delta` with its stop reason and usage when it has them."""
    events: list[dict[str, Any]] = []
    if first:
        events.append({"type": "message_start", "message": {**message, "content": []}})
    content = message.get("content")
    for index, block in enumerate(content if type(content) is list else (), start=at):
        if type(block) is not dict:
            continue
        kind = block.get("type") if type(block.get("type")) is str else None
        if kind in _DELTAS:
            delta_type, field = _DELTAS[kind]
            start = {**block, field: ""}
            events.append({"type": "content_block_start", "index": index, "content_block": start})
            if block.get(field):
                events.append({"type": "content_block_delta", "index": index,
                               "delta": {"type": delta_type, field: block[field]}})
        elif kind == "tool_use" or kind == "server_tool_use":
            events.append({"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}})
            if block.get("input"):
                events.append({"type": "content_block_delta", "index": index,
                               "delta": {"type": "input_json_delta", "partial_json": dumps_arguments(block["input"])}})
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "content_block_stop", "index": index})
    delta = {key: message[key] for key in ("stop_reason", "stop_sequence") if message.get(key) is not None}
    if delta or type(message.get("usage")) is dict:
        events.append({"type": "message_delta", "delta": delta,
                       **({"usage": message["usage"]} if type(message.get("usage")) is dict else {})})
    return events
