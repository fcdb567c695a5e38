"""The value every framer produces: one `Frame` per SSE block, NDJSON line,
JSON-array element or AWS event-stream message.

A frame is the unit a person debugs: it knows where it sits in the capture
(`offset`, `line`), what it carried (`event`, `data`, `id`, `retry`,
`comments`), its exact bytes (`raw`) and what was wrong inside it
(`issues`). Frames never raise and never hide bytes: a field the spec ignores
is still listed as an issue so the debugger can say "did you mean `data:`?".
These types are pure values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_MAX_FRAME_SIZE", "MAX_LISTED_ISSUES", "Frame", "FrameIssue"]

# A frame above this size is reported and dropped instead of buffered. It is
# far above any real chunk (a base64 partial image from the Responses API is a
# few MB) and keeps a hostile or broken capture from eating the machine.
DEFAULT_MAX_FRAME_SIZE = 32 * 1024 * 1024

# Issues of one code listed in a frame (and invalid UTF-8 runs in one of its lines); one more issue of
# the code counts the rest. A block of a million bad lines is one frame, and an issue object per line
# would cost 30-80x the bytes.
MAX_LISTED_ISSUES = 100


@dataclass(frozen=True, slots=True)
class FrameIssue:
    """Something wrong inside a frame that framing noticed.

    `code` is stable (`unknown-field`, `invalid-retry`, `invalid-id`,
    `invalid-utf8`, `frame-too-large`, ...); `offset` and `line` point at the
    offending byte or line of the stream; `text` is the offending line.
    """

    code: str
    offset: int
    line: int
    message: str
    text: str = ""

    def __repr__(self) -> str:
        return (f"streamfold.FrameIssue(code={self.code!r}, offset={self.offset}, line={self.line}, "
                f"message={self.message!r})")


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame of a stream, exactly as it was on the wire.

    `offset` is the byte offset of the frame's first line (a leading BOM
    counts), `line` its 1-based line number (0 in a binary stream). `data` is
    None when the frame had no `data` line (comments, keep-alives, id/retry-only
    blocks), else the data lines joined with "\\n". `raw` are the frame's bytes;
    `terminated` is False for a final block the stream never finished (a
    spec-exact client drops it).
    """

    index: int
    offset: int
    line: int
    event: str | None
    data: str | None
    id: str | None
    retry: int | None
    comments: tuple[str, ...]
    raw: bytes
    terminated: bool = True
    issues: tuple[FrameIssue, ...] = ()
    #: Transport headers of the frame (AWS event-stream: `:event-type`, ...); () for text framings.
    headers: tuple[tuple[str, Any], ...] = ()

    @property
    def end(self) -> int:
        """Byte offset just past the frame's last byte in the stream."""
        return self.offset + len(self.raw)

    def __repr__(self) -> str:
        return (f"streamfold.Frame(index={self.index}, offset={self.offset}, line={self.line}, event={self.event!r}, "
                f"data={self.data!r}, terminated={self.terminated}, issues={[i.code for i in self.issues]})")
