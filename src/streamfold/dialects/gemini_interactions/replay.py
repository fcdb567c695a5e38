"""Gemini Interactions as the replay server breaks them: the `error` event where the interaction fails,
`interaction.complete(d)` as the end, each `arguments_delta` of a function call step for a cumulative
re-send, and Google's HTTP error body."""

from __future__ import annotations

from typing import Any

from .._replay import DROP, ArgumentsRewriter, ErrorFrame, ReplayQuirks, Rewrite, accumulate
from ..gemini.replay import GEMINI_REPLAY

__all__ = ["INTERACTIONS_REPLAY"]

_ENDS = frozenset({"interaction.completed", "interaction.complete"})


def _kind(payload: Any) -> Any:
    return payload.get("event_type") if type(payload) is dict else None


class InteractionsReplay(ReplayQuirks):
    def error_frame(self, previous: Any) -> ErrorFrame | None:
        return ErrorFrame(None, {"event_type": "error", "error": {"code": "internal",
                                                                  "message": "Internal error encountered."}})

    def http_error(self, status: int) -> Any:
        return GEMINI_REPLAY.http_error(status)

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        return DROP if _kind(payload) in _ENDS else None

    def cumulative_arguments(self) -> ArgumentsRewriter | None:
        sent: dict[Any, str] = {}

        def rewrite(event: str | None, payload: Any) -> Any:
            delta = payload.get("delta") if _kind(payload) in ("step.delta", "content.delta") else None
            if type(delta) is not dict or delta.get("type") != "arguments_delta":
                return None
            joined = accumulate(sent, payload.get("index"), delta.get("arguments"))
            if joined is None or joined == delta["arguments"]:
                return None
            return {**payload, "delta": {**delta, "arguments": joined}}

        return rewrite


INTERACTIONS_REPLAY = InteractionsReplay()
