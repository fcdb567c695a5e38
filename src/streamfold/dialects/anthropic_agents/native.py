"""The non-streaming object a session stream stands for: a page of the events list
(`GET /v1/sessions/{id}/events`, the SDK's `SyncPageCursor[BetaManagedAgentsSessionEvent]`: `data`,
`next_page`), holding the folded turn's buffered events (previews are never in the history); and the reverse."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._base import arguments_text
from .events import BUFFERED_TYPES, add_usage, texts

if TYPE_CHECKING:
    from ...result import Result

__all__ = ["export", "read_events_page"]

_TOOL_USES = ("agent.tool_use", "agent.mcp_tool_use", "agent.custom_tool_use")


def export(result: Result) -> dict[str, Any]:
    """The events list page of the folded turn: its buffered events as they came (and the message a cut stream
    was in, as its preview showed it), and no next page."""
    native = result.native if type(result.native) is dict else {}
    events = native.get("events")
    data = list(events) if type(events) is list else []
    cut = native.get("cut_previews")
    for ident, text in cut.items() if type(cut) is dict else ():
        # The message the stream was cut in, as its preview showed it; never processed (no history has it).
        data.append({"type": "agent.message", "id": ident, "content": [{"type": "text", "text": text}],
                     "processed_at": None})
    return {"data": data, "next_page": None}


def read_events_page(value: object) -> dict[str, Any] | None:
    """The facts of an events list page (one whose `data` holds session events), or None."""
    data = value.get("data") if type(value) is dict else None
    if type(data) is not list or not data:
        return None
    events = [event for event in data if type(event) is dict and event.get("type") in BUFFERED_TYPES]
    if len(events) != len(data):
        return None
    uses = [event for event in events if event["type"] in _TOOL_USES]
    usage: dict[str, int] = {}
    for event in events:
        if event["type"] == "span.model_request_end":
            add_usage(usage, event.get("model_usage"))
    stops = [event["stop_reason"].get("type") for event in events
             if event["type"] == "session.status_idle" and type(event.get("stop_reason")) is dict]
    return {"content": "".join("".join(texts(event.get("content"))[0]) for event in events
                               if event["type"] == "agent.message"),
            "reasoning": None,
            "tool_calls": [(event.get("name"), arguments_text(event.get("input"))) for event in uses],
            "tool_call_ids": [event.get("id") for event in uses], "finish_reason": stops[-1] if stops else None,
            "usage": usage or None}
