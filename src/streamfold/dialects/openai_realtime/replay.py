"""The OpenAI Realtime API's server events as the replay server breaks them (over NDJSON; a WebSocket
capture's messages are not rewritten): the `error` event where the server fails, `response.done` as the
end, each `response.function_call_arguments.delta` for a cumulative re-send, and OpenAI's HTTP error body
for a refused upgrade."""

from __future__ import annotations

from typing import Any

from .._base import event_type
from .._replay import DROP, ArgumentsRewriter, ErrorFrame, ReplayQuirks, Rewrite, cumulative_field
from ..openai_chat.replay import openai_error

__all__ = ["REALTIME_REPLAY"]


class RealtimeReplay(ReplayQuirks):
    def error_frame(self, previous: Any) -> ErrorFrame | None:
        return ErrorFrame(None, {"type": "error", "event_id": "event_streamfold_error", "error": {
            "type": "server_error", "code": "server_error", "param": None, "event_id": None,
            "message": "The server had an error while processing your request."}})

    def http_error(self, status: int) -> Any:
        return openai_error(status)

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        return DROP if event_type(payload) == "response.done" else None

    def cumulative_arguments(self) -> ArgumentsRewriter | None:
        sent: dict[Any, str] = {}

        def rewrite(event: str | None, payload: Any) -> Any:
            if event_type(payload) != "response.function_call_arguments.delta":
                return None
            return cumulative_field(sent, payload, payload.get("item_id") or payload.get("call_id"), "delta")

        return rewrite


REALTIME_REPLAY = RealtimeReplay()
