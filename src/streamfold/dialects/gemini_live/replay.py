"""Live server messages as the replay server breaks them (over NDJSON; a WebSocket capture's messages are
not rewritten): Google's error envelope where the server fails, the turn's end (`turnComplete`,
`generationComplete`, an `IDLE` interaction status) taken out, and Google's HTTP error bodies."""

from __future__ import annotations

from typing import Any

from .._replay import DROP, ErrorFrame, ReplayQuirks, Rewrite
from ..gemini.replay import GEMINI_REPLAY

__all__ = ["LIVE_REPLAY"]

_ENDS = ("turnComplete", "generationComplete", "turnCompleteReason")


class LiveReplay(ReplayQuirks):
    no_fragments = "Live function calls arrive whole (`toolCall.functionCalls[].args`): there are no argument " \
                   "fragments to re-send"

    def error_frame(self, previous: Any) -> ErrorFrame | None:
        return ErrorFrame(None, {"error": {"code": 503, "message": "The service is currently unavailable.",
                                           "status": "UNAVAILABLE"}})

    def http_error(self, status: int) -> Any:
        return GEMINI_REPLAY.http_error(status)

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        content = payload.get("serverContent") if type(payload) is dict else None
        if type(content) is not dict:
            return None
        if not any(key in content for key in _ENDS) and content.get("interactionStatus") != "IDLE":
            return None
        kept = {key: value for key, value in content.items() if key not in _ENDS and key != "interactionStatus"}
        rest = {key: value for key, value in payload.items() if key not in ("serverContent", "usageMetadata")}
        if not kept and not rest and "usageMetadata" not in payload:
            return DROP
        return Rewrite({**rest, **({"serverContent": kept} if kept else {}),
                        **({"usageMetadata": payload["usageMetadata"]} if "usageMetadata" in payload else {})})


LIVE_REPLAY = LiveReplay()
