"""What `Folder.feed()` returns, made from the journal the merger and the report
write in the order things happened: only canonical paths become events (a
dialect's own paths stay private), and every finding is one. The order does not
depend on how the bytes were chunked."""

from __future__ import annotations

from typing import Any

from ..events import Event, Finding, FinishReason, TextDelta, ToolCallDelta, ToolCallDone, UsageUpdate
from ..result import TEXT_FIELDS

__all__ = ["events_of"]



def events_of(journal: list[tuple[str, tuple[Any, ...], Any, int]], names: dict[tuple[Any, ...], Any]) -> list[Event]:
    """`names` holds each tool call's name as the changes so far have set it: an event carries the
    name known at its frame, not at the end of the chunk, so events do not depend on the chunking."""
    events: list[Event] = []
    for op, path, value, frame in journal:
        if op == "finding":
            events.append(Finding(frame, value))
            continue
        choice_path = type(path[0]) is int
        tool_path = choice_path and len(path) == 4 and path[1] == "tool"
        if op == "append":
            if choice_path and len(path) == 2 and path[1] in TEXT_FIELDS:
                events.append(TextDelta(frame, path[0], path[1], value))
            elif tool_path and path[3] == "arguments":
                events.append(ToolCallDelta(frame, path[0], path[2], names.get(path[:3]), value))
        elif op == "parsed":
            if tool_path:
                events.append(ToolCallDone(frame, path[0], path[2], names.get(path[:3]), value.value, value.error))
        elif tool_path and path[3] == "name":
            names[path[:3]] = value
        elif path == ("usage",):
            events.append(UsageUpdate(frame, value))
        elif choice_path and len(path) == 2 and path[1] == "finish_reason":
            events.append(FinishReason(frame, path[0], value))
    return events
