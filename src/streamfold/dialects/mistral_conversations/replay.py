"""Mistral Conversations as the replay server breaks them: `conversation.response.error` where the
response fails, `conversation.response.done` as the end, each `function.call.delta` for a cumulative
re-send, and Mistral's `{"object": "error", ...}` HTTP error body."""

from __future__ import annotations

from typing import Any

from .._base import event_type
from .._replay import DROP, ArgumentsRewriter, ErrorFrame, ReplayQuirks, Rewrite, cumulative_field

__all__ = ["CONVERSATIONS_REPLAY"]

#: status -> (the error's `type`, its message), as api.mistral.ai answers them.
_HTTP_ERRORS = {400: ("invalid_request_error", "Bad request"), 401: ("invalid_request_error", "Unauthorized"),
                404: ("invalid_request_error", "Conversation not found"),
                429: ("rate_limited", "Requests rate limit exceeded"),
                500: ("internal_server_error", "Internal server error"),
                503: ("service_unavailable", "Service unavailable")}


class ConversationsReplay(ReplayQuirks):
    def error_frame(self, previous: Any) -> ErrorFrame | None:
        return ErrorFrame("conversation.response.error", {
            "type": "conversation.response.error", "message": "Internal server error", "code": 500})

    def http_error(self, status: int) -> Any:
        kind, message = _HTTP_ERRORS.get(status, ("internal_server_error" if status >= 500 else "invalid_request_error",
                                                  f"HTTP {status}"))
        return {"object": "error", "message": message, "type": kind, "param": None, "code": str(status)}

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        return DROP if event_type(payload) == "conversation.response.done" else None

    def cumulative_arguments(self) -> ArgumentsRewriter | None:
        sent: dict[Any, str] = {}

        def rewrite(event: str | None, payload: Any) -> Any:
            if event_type(payload) != "function.call.delta":
                return None
            return cumulative_field(sent, payload, payload.get("tool_call_id"), "arguments")

        return rewrite


CONVERSATIONS_REPLAY = ConversationsReplay()
