"""The Vercel AI SDK data stream as the replay server breaks it: a `3:` error part (the SDK's default
text, `An error occurred.`), the `d:` finish-message part as the end, and each `c:` tool-call delta
re-sent with everything before it. Its lines are `TYPE:JSON`, not JSON: the hooks see them decoded as
`Prefixed` values and write them back as text. The SDK's routes answer errors as the app chooses:
`http-error` is refused."""

from __future__ import annotations

import json
from typing import Any

from .._replay import DROP, ArgumentsRewriter, ErrorFrame, ReplayQuirks, Rewrite, cumulative_field
from .fold import Prefixed

__all__ = ["DATA_STREAM_REPLAY"]


class DataStreamReplay(ReplayQuirks):
    def error_frame(self, previous: Any) -> ErrorFrame | None:
        return ErrorFrame(None, None, text='3:"An error occurred."')

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        return DROP if isinstance(payload, Prefixed) and payload.prefix == "d" else None

    def cumulative_arguments(self) -> ArgumentsRewriter | None:
        sent: dict[Any, str] = {}

        def rewrite(event: str | None, payload: Any) -> Any:
            if not (isinstance(payload, Prefixed) and payload.prefix == "c" and type(payload.value) is dict):
                return None
            changed = cumulative_field(sent, payload.value, payload.value.get("toolCallId"), "argsTextDelta")
            return None if changed is None else "c:" + json.dumps(changed, ensure_ascii=False, separators=(",", ":"))

        return rewrite


DATA_STREAM_REPLAY = DataStreamReplay()
