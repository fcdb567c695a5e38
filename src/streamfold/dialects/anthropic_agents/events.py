"""The Managed Agents session events by type (anthropic 2.17 `types/beta/sessions/
beta_managed_agents_stream_session_events.py`: 44 members), what claims one, and a preview's state."""

from __future__ import annotations

from typing import Any

__all__ = ["BUFFERED_TYPES", "PREVIEW_TYPES", "Preview", "add_usage", "claims_event", "texts"]

#: The buffered events: whole, each with its `id`, and in the session's history (the events list).
BUFFERED_TYPES = frozenset({
    "user.message", "user.interrupt", "user.tool_confirmation", "user.custom_tool_result", "user.tool_result",
    "user.define_outcome", "system.message",
    "agent.message", "agent.thinking", "agent.tool_use", "agent.tool_result", "agent.mcp_tool_use",
    "agent.mcp_tool_result", "agent.custom_tool_use", "agent.thread_message_received", "agent.thread_message_sent",
    "agent.thread_context_compacted",
    "session.error", "session.status_rescheduled", "session.status_running", "session.status_idle",
    "session.status_terminated", "session.thread_created", "session.deleted", "session.thread_status_running",
    "session.thread_status_idle", "session.thread_status_terminated", "session.thread_status_rescheduled",
    "session.updated", "session.usage",
    "span.outcome_evaluation_start", "span.outcome_evaluation_end", "span.outcome_evaluation_ongoing",
    "span.model_request_start", "span.model_request_end",
    "workflow_run.created", "workflow_run.status_ended", "workflow_run.phase_started", "workflow_run.phase_ended",
    "workflow_run.status_running", "workflow_run.status_idle", "workflow_run.error"})
#: The opt-in previews (`event_deltas`): never in the history, each concluded by the buffered event of its id.
PREVIEW_TYPES = frozenset({"event_start", "event_delta"})


def claims_event(value: object) -> bool:
    """A session event: a buffered one has its string `id` (never a Realtime event's `event_id`: both send
    `session.updated`), a preview its previewed event (`event_start`) or that event's id (`event_delta`)."""
    if type(value) is not dict:
        return False
    kind = value.get("type")
    if kind in BUFFERED_TYPES:
        return type(value.get("id")) is str and "event_id" not in value
    if kind == "event_start":
        event = value.get("event")
        return type(event) is dict and type(event.get("id")) is str and type(event.get("type")) is str
    return kind == "event_delta" and type(value.get("event_id")) is str and type(value.get("delta")) is dict


def texts(content: object) -> tuple[list[str], int]:
    """The text of an `agent.message`'s content blocks, and how many are `redacted` (withheld by policy)."""
    pieces, redacted = [], 0
    for block in content if type(content) is list else ():
        if type(block) is dict:
            if block.get("type") == "text" and type(block.get("text")) is str:
                pieces.append(block["text"])
            elif block.get("type") == "redacted":
                redacted += 1
    return pieces, redacted


def add_usage(total: dict[str, int], usage: object) -> None:
    """Add a `span.model_request_end`'s `model_usage` (one model request's tokens) to the turn's `total`."""
    if type(usage) is dict:
        for field in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
            if type(usage.get(field)) is int:
                total[field] = total.get(field, 0) + usage[field]


class Preview:
    """One previewed event: its type, the frame that opened it, its text per content index (each piece with
    its frame), and how it ended (None while open, "reconciled" or "abandoned")."""

    __slots__ = ("_parts", "frame", "kind", "state")

    def __init__(self, kind: str, frame: int) -> None:
        self.kind = kind
        self.frame = frame
        self.state: str | None = None
        self._parts: dict[int, list[tuple[str, int]]] = {}

    def add(self, index: int, text: str, frame: int) -> None:
        """A delta lands in the content entry at `index`: a new entry, or appended to the one there."""
        self._parts.setdefault(index, []).append((text, frame))

    def pieces(self) -> list[tuple[str, int]]:
        return [piece for index in sorted(self._parts) for piece in self._parts[index]]

    def text(self) -> str:
        return "".join(text for text, _ in self.pieces())

    def __repr__(self) -> str:
        return f"Preview({self.kind!r}, {self.frame}, {self.state!r}, {self.text()!r})"


def summarize(value: Any) -> str:
    """A session event's line in the frames table: its type, and what it says in a few words."""
    kind = value.get("type") if type(value) is dict else None
    if type(kind) is not str:
        return "not a session event"
    if kind == "agent.message":
        return f"agent.message {''.join(texts(value.get('content'))[0])[:60]!r}"
    if kind in ("agent.tool_use", "agent.mcp_tool_use", "agent.custom_tool_use"):
        return f"{kind} {value.get('name')}"
    if kind == "session.status_idle" and type(value.get("stop_reason")) is dict:
        return f"session.status_idle ({value['stop_reason'].get('type')})"
    if kind == "event_delta":
        return f"event_delta of {value.get('event_id')}"
    if kind == "event_start" and type(value.get("event")) is dict:
        return f"event_start of {value['event'].get('type')} {value['event'].get('id')}"
    return kind
