"""Anthropic Messages as the replay server breaks it: `event: error` with an `overloaded_error`
mid-stream (A5), the error body of each HTTP status, `message_stop` as the end, and each
`input_json_delta.partial_json` fragment for a cumulative re-send."""

from __future__ import annotations

import copy
from typing import Any

from .._base import event_type
from .._replay import DROP, ArgumentsRewriter, ErrorFrame, ReplayQuirks, Rewrite, accumulate

__all__ = ["ANTHROPIC_REPLAY", "AnthropicReplay"]

#: status -> (error type, message), as the Messages API answers them.
_HTTP_ERRORS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Invalid request."),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use the specified resource."),
    404: ("not_found_error", "The requested resource could not be found."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."),
    500: ("api_error", "An unexpected error has occurred internal to Anthropic's systems."),
    529: ("overloaded_error", "Overloaded"),
}


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


class AnthropicReplay(ReplayQuirks):
    """`event: error` mid-stream, `message_stop` as the end, `partial_json` fragments per block index."""

    def error_frame(self, previous: Any) -> ErrorFrame | None:
        return ErrorFrame("error", _error("overloaded_error", "Overloaded"))

    def http_error(self, status: int) -> Any:
        kind, message = _HTTP_ERRORS.get(status, ("api_error" if status >= 500 else "invalid_request_error",
                                                  f"HTTP {status}"))
        return _error(kind, message)

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        return DROP if event_type(payload) == "message_stop" or event == "message_stop" else None

    def cumulative_arguments(self) -> ArgumentsRewriter | None:
        sent: dict[Any, str] = {}

        def rewrite(event: str | None, payload: Any) -> Any:
            if event_type(payload) != "content_block_delta" or type(payload.get("delta")) is not dict:
                return None
            delta = payload["delta"]
            if delta.get("type") != "input_json_delta":
                return None
            joined = accumulate(sent, payload.get("index"), delta.get("partial_json"))
            if joined is None or joined == delta["partial_json"]:
                return None
            changed = copy.deepcopy(payload)
            changed["delta"]["partial_json"] = joined
            return changed

        return rewrite


ANTHROPIC_REPLAY = AnthropicReplay()
