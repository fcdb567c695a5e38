"""A session stream as the replay server breaks it: a `session.error` whose retries are over (the
model overloaded) where the stream breaks off, the Anthropic API's error bodies, and the status that
ends the turn (idle, terminated, deleted) as the end."""

from __future__ import annotations

from typing import Any

from .._base import event_type
from .._replay import DROP, ErrorFrame, ReplayQuirks, Rewrite
from ..anthropic.replay import ANTHROPIC_REPLAY

__all__ = ["AGENTS_REPLAY"]

_ENDS = frozenset({"session.status_idle", "session.status_terminated", "session.deleted"})


class AgentsReplay(ReplayQuirks):
    no_fragments = "Managed Agents tool inputs arrive whole, as objects: there are no argument fragments to re-send"

    def error_frame(self, previous: Any) -> ErrorFrame | None:
        return ErrorFrame("session.error", {
            "type": "session.error", "id": "sevt_replay_error", "processed_at": "2026-12-07T00:00:00Z",
            "error": {"type": "model_overloaded_error", "message": "Overloaded",
                      "retry_status": {"type": "terminal"}}})

    def http_error(self, status: int) -> Any:
        return ANTHROPIC_REPLAY.http_error(status)

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        return DROP if event_type(payload) in _ENDS else None


AGENTS_REPLAY = AgentsReplay()
