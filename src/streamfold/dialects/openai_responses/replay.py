"""The OpenAI Responses API as the replay server breaks it: the `error` event (R1) numbered after
the event before it, OpenAI's HTTP error body, `response.completed`/`incomplete`/`failed` as the
end, and each `response.function_call_arguments.delta` for a cumulative re-send."""

from __future__ import annotations

from typing import Any

from .._base import event_type
from .._replay import DROP, ArgumentsRewriter, ErrorFrame, ReplayQuirks, Rewrite, cumulative_field
from ..openai_chat.replay import openai_error

__all__ = ["RESPONSES_REPLAY", "ResponsesReplay"]

_ENDS = frozenset({"response.completed", "response.incomplete", "response.failed", "response.done"})


class ResponsesReplay(ReplayQuirks):
    """`event: error` mid-stream, the response's last event as the end, argument deltas per item."""

    def error_frame(self, previous: Any) -> ErrorFrame | None:
        number = previous.get("sequence_number") if type(previous) is dict else None
        return ErrorFrame("error", {"type": "error", "code": "server_error",
                                    "message": "The server had an error while processing your request.",
                                    "param": None,
                                    "sequence_number": number + 1 if type(number) is int else 0})

    def http_error(self, status: int) -> Any:
        return openai_error(status)

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        if event_type(payload) in _ENDS or (data is not None and data.strip() == "[DONE]"):
            return DROP
        return None

    def cumulative_arguments(self) -> ArgumentsRewriter | None:
        sent: dict[Any, str] = {}

        def rewrite(event: str | None, payload: Any) -> Any:
            if event_type(payload) != "response.function_call_arguments.delta":
                return None
            return cumulative_field(sent, payload, payload.get("item_id", payload.get("output_index")), "delta")

        return rewrite


RESPONSES_REPLAY = ResponsesReplay()
