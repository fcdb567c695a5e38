"""Text Completions as the replay server breaks them: `event: error` with an `overloaded_error`
mid-stream, the Messages API's error bodies (the same service answers both), and the last
`completion` event's `stop_reason` as the end (and a first API version's `[DONE]`)."""

from __future__ import annotations

import copy
from typing import Any

from .._replay import DROP, ErrorFrame, ReplayQuirks, Rewrite
from ..anthropic.replay import ANTHROPIC_REPLAY
from .fold import claims_completion

__all__ = ["COMPLETIONS_REPLAY"]


class CompletionsReplay(ReplayQuirks):
    no_fragments = "Text Completions stream no tool calls, so there are no argument fragments to re-send"

    def error_frame(self, previous: Any) -> ErrorFrame | None:
        return ANTHROPIC_REPLAY.error_frame(previous)

    def http_error(self, status: int) -> Any:
        return ANTHROPIC_REPLAY.http_error(status)

    def end_of_stream(self, event: str | None, data: str | None, payload: Any) -> Rewrite | str | None:
        if data == "[DONE]":
            return DROP
        if claims_completion(payload) and payload.get("stop_reason") is not None:
            if not payload["completion"]:
                return DROP  # the usual last event: no text, only the stop reason
            changed = copy.deepcopy(payload)
            changed["stop_reason"] = None
            return Rewrite(changed)
        return None


COMPLETIONS_REPLAY = CompletionsReplay()
