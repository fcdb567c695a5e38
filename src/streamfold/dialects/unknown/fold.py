"""The dialect of last resort: folds nothing, says what it saw.

A capture no dialect claims still lists every frame; this records the
top-level keys of its payloads so the report can say what the stream looked
like instead of guessing silently. Errors in a generic `{"error": ...}`
envelope are still reported.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .._base import Dialect, top_level_keys

if TYPE_CHECKING:
    from ...findings import Report
    from ...framing import FrameView
    from ...merge import Merger

__all__ = ["Unknown"]


class Unknown(Dialect):
    name = "unknown"
    expects_end = False

    def __init__(self, merger: Merger | None = None, report: Report | None = None,
                 frames: FrameView | None = None) -> None:
        super().__init__(merger, report, frames)
        self.keys_seen: dict[str, int] = {}
        self.first_frame: int | None = None

    def fold(self, value: object, frame: int) -> None:
        if self.first_frame is None:
            self.first_frame = frame
        for key in top_level_keys(value):
            self.keys_seen[key] = self.keys_seen.get(key, 0) + 1
        if isinstance(value, dict) and value.get("error"):
            error = value["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            self.in_stream_error(frame, f"the stream carries an error: {message}",
                                 json.dumps(value, ensure_ascii=False))

    def in_stream_error(self, frame: int, message: str, raw: str | None = None, *,
                        offset: int | None = None, line: int | None = None) -> None:
        # No reply was folded, so there is no choice to end: only the error is reported.
        self.report.error("in-stream-error", frame, message, raw=raw, offset=offset, line=line)

    def finish(self, last_frame: int) -> None:
        if self.first_frame is None or set(self.keys_seen) == {"error"}:
            return  # nothing seen, or only error envelopes: the in-stream errors already say it
        counted = sorted(self.keys_seen.items(), key=lambda kv: -kv[1])[:20]
        keys = ", ".join(f"{key} ({count})" for key, count in counted)
        self.report.diagnostic(
            "unknown-dialect", self.first_frame,
            f"no dialect recognises these payloads, so nothing was folded; every frame is still listed. "
            f"Top-level keys seen: {keys}. Force one with --dialect if you know it",
            keys=sorted(self.keys_seen))
