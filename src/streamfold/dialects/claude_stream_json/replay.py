"""Claude Code's `stream-json` output as the replay server breaks it: a `result` line of subtype
`error_during_execution` where the run fails (the session id of the line before it kept), the `result` line
as the end, and the Messages events inside `stream_event` lines re-sent cumulatively as the API's would be.
It is a process's output, not an HTTP reply: `http-error` is refused."""

from __future__ import annotations

from typing import Any

from .._base import event_type
from .._replay import DROP, ArgumentsRewriter, ErrorFrame, ReplayQuirks, Rewrite
from ..anthropic.replay import ANTHROPIC_REPLAY

__all__ = ["CLAUDE_STREAM_JSON_REPLAY"]


class ClaudeStreamJSONReplay(ReplayQuirks):
    def error_frame(self, previous: Any) -> ErrorFrame | None:
        session = previous.get("session_id") if type(previous) is dict else None
        return ErrorFrame(None, {"type": "result", "subtype": "error_during_execution", "is_error": True,
                                 "num_turns": 1, "session_id": session if type(session) is str else None,
                                 "errors": ["API Error: 529 Overloaded"]})

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        return DROP if event_type(payload) == "result" else None

    def cumulative_arguments(self) -> ArgumentsRewriter | None:
        inner = ANTHROPIC_REPLAY.cumulative_arguments()
        assert inner is not None

        def rewrite(event: str | None, payload: Any) -> Any:
            if event_type(payload) != "stream_event" or type(payload.get("event")) is not dict:
                return None
            changed = inner(None, payload["event"])
            return None if changed is None else {**payload, "event": changed}

        return rewrite


CLAUDE_STREAM_JSON_REPLAY = ClaudeStreamJSONReplay()
