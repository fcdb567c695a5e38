"""A2A as the replay server breaks it: a JSON-RPC error response (`-32603`, to the id the stream answers)
where the task fails, and the event that ends the stream (a `final` status update, or a status whose state
ends or interrupts the task) as the end. A2A streams artifacts, not tool-call arguments."""

from __future__ import annotations

from typing import Any

from .._replay import DROP, ErrorFrame, ReplayQuirks, Rewrite
from .shapes import event_of, state_name

__all__ = ["A2A_REPLAY"]

_ENDING = frozenset({"completed", "canceled", "failed", "rejected", "input-required", "auth-required"})


class A2AReplay(ReplayQuirks):
    no_fragments = "A2A streams artifacts and task states, not tool-call arguments: there are no fragments"

    def error_frame(self, previous: Any) -> ErrorFrame | None:
        ident = previous.get("id") if type(previous) is dict else None
        return ErrorFrame(None, {"jsonrpc": "2.0", "id": ident if type(ident) in (int, str) else None,
                                 "error": {"code": -32603, "message": "Internal error"}})

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        found = event_of(payload)
        if found is None or found[1] not in ("status-update", "task"):
            return None
        body = found[2]
        return DROP if body.get("final") is True or state_name(body.get("status")) in _ENDING else None


A2A_REPLAY = A2AReplay()
