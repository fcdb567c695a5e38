"""AG-UI as the replay server breaks it: a `RUN_ERROR` event where the run fails, `RUN_FINISHED` as the
end, and each `TOOL_CALL_ARGS` (or `TOOL_CALL_CHUNK`) delta for a cumulative re-send. AG-UI names no
HTTP error body: `http-error` is refused."""

from __future__ import annotations

from typing import Any

from .._base import event_type
from .._replay import DROP, ArgumentsRewriter, ErrorFrame, ReplayQuirks, Rewrite, cumulative_field

__all__ = ["AG_UI_REPLAY"]


class AGUIReplay(ReplayQuirks):
    def error_frame(self, previous: Any) -> ErrorFrame | None:
        return ErrorFrame(None, {"type": "RUN_ERROR", "message": "The agent failed while running.",
                                 "code": "INTERNAL_ERROR"})

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        return DROP if event_type(payload) == "RUN_FINISHED" else None

    def cumulative_arguments(self) -> ArgumentsRewriter | None:
        sent: dict[Any, str] = {}
        chunked: list[Any] = [None]  # a TOOL_CALL_CHUNK without its id continues the last one's

        def rewrite(event: str | None, payload: Any) -> Any:
            kind = event_type(payload)
            if kind not in ("TOOL_CALL_ARGS", "TOOL_CALL_CHUNK"):
                return None
            ident = payload.get("toolCallId")
            if kind == "TOOL_CALL_CHUNK":
                ident = chunked[0] = ident if type(ident) is str else chunked[0]
            return cumulative_field(sent, payload, ident, "delta")

        return rewrite


AG_UI_REPLAY = AGUIReplay()
