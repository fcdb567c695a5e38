"""What the raw pane needs to show a line-based input's own bytes (a log, curl -v/-i output),
not only the stream body read out of it, and which HAR entry (cassette interaction, trace log
record) the page folded.

    "file":        {"size": bytes, "base64": the input's bytes | null, "omitted": why not | null,
                    "converted": "UTF-16LE" ... when the input was wide text (the spans are in its UTF-8)}
                   when the body was read out of the input line by line (`Capture.segments`);
    row "file_span": [start, end]: the bytes of the input the frame came from (whole lines for a log,
                   the frame's own bytes for curl -v output);
    "har":         {"entries": [EntryInfo.to_dict(), ...], "entry": the index folded, "noun": "HAR entry" |
                   "cassette interaction" | "trace log record"}, for a HAR, a VCR cassette or a claude-trace /
                   claude-tap log of more than one exchange.
"""

from __future__ import annotations

import base64
from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from ..services import Loaded
from ..services._encodings import decode_wide_text
from ..services.capture import Segment

__all__ = ["MAX_FILE_BYTES", "SpanMap", "file_part", "har_part"]

#: The most bytes of an input the view carries for the raw pane's "file" mode (base64 in JSON).
MAX_FILE_BYTES = 8 * 1024 * 1024


class SpanMap:
    """Body ranges to the input's bytes, through a capture's segments (in body order)."""

    def __init__(self, segments: Sequence[Segment]) -> None:
        self.segments = segments
        self.starts = [segment[0] for segment in segments]

    def __bool__(self) -> bool:
        return bool(self.segments)

    def span(self, start: int, end: int) -> list[int] | None:
        """[file start, file end] of the body's bytes `start` to `end` (an empty range: where it is)."""
        first = max(0, bisect_right(self.starts, start) - 1)
        last = max(first, bisect_right(self.starts, max(start, end - 1)) - 1)
        segments = self.segments
        if not segments or (segments[last][1] <= start and end > start):
            return None
        b0, b1, f0, f1 = segments[first]
        # Copied as they are: the frame's own bytes; else (a log line) the whole line.
        file_start = f0 + min(max(0, start - b0), f1 - f0) if b1 - b0 == f1 - f0 else f0
        b0, b1, f0, f1 = segments[last]
        file_end = f0 + min(max(0, end - b0), f1 - f0) if b1 - b0 == f1 - f0 else f1
        return [file_start, max(file_start, file_end)]


def file_part(data: bytes, loaded: Loaded) -> dict[str, Any] | None:
    """The view's "file", when the body was read out of `data` line by line."""
    if not loaded.capture.segments:
        return None
    converted = None
    if any(note.code == "text-encoding" for note in loaded.capture.notes):
        wide = decode_wide_text(data)
        if wide is not None:
            data, converted = wide[0], wide[1].message.split(" text ", 1)[0].removeprefix("the input is ")
    part: dict[str, Any] = {"size": len(data), "base64": None, "omitted": None, "converted": converted}
    if len(data) > MAX_FILE_BYTES:
        part["omitted"] = (f"the file is {len(data):,} bytes, more than the {MAX_FILE_BYTES:,} the page shows "
                           "of a file's own bytes: the raw pane shows the stream body read out of it")
    else:
        part["base64"] = base64.b64encode(data).decode("ascii")
    return part


def har_part(loaded: Loaded) -> dict[str, Any] | None:
    """The view's "har": the exchanges to pick from, and the one folded (a file of one has no choice)."""
    capture = loaded.capture
    if len(capture.entries) < 2:
        return None
    return {"entries": [entry.to_dict() for entry in capture.entries], "entry": capture.entry,
            "noun": _NOUNS.get(capture.source, "entry")}


_NOUNS = {"har": "HAR entry", "cassette": "cassette interaction", "trace-log": "trace log record"}
