"""The Vercel AI SDK UI message stream as the replay server breaks it: the `error` chunk the SDK sends
(its default text, `An error occurred.`), `finish` and `[DONE]` as the end, and each `tool-input-delta`
for a cumulative re-send. The SDK's routes answer errors as the app chooses: `http-error` is refused."""

from __future__ import annotations

from typing import Any

from .._base import event_type
from .._replay import DROP, ArgumentsRewriter, ErrorFrame, ReplayQuirks, Rewrite, cumulative_field

__all__ = ["VERCEL_UI_REPLAY"]


class VercelUIReplay(ReplayQuirks):
    def error_frame(self, previous: Any) -> ErrorFrame | None:
        return ErrorFrame(None, {"type": "error", "errorText": "An error occurred."})

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        if event_type(payload) == "finish" or (data is not None and data.strip() == "[DONE]"):
            return DROP
        return None

    def cumulative_arguments(self) -> ArgumentsRewriter | None:
        sent: dict[Any, str] = {}

        def rewrite(event: str | None, payload: Any) -> Any:
            if event_type(payload) != "tool-input-delta":
                return None
            return cumulative_field(sent, payload, payload.get("toolCallId"), "inputTextDelta")

        return rewrite


VERCEL_UI_REPLAY = VercelUIReplay()
