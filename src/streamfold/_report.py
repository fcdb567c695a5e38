"""Findings: errors (what went wrong in the stream) and diagnostics (what is
suspicious but decodable), each pointing at a frame, a byte offset and a line.

Codes are stable; messages are for a person and say what a client would do
with the frame, not just what the bytes were.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any

from ._frames import LINE, OFFSET, FrameRecord

__all__ = ["Diagnostic", "Report", "StreamError"]


@dataclass(frozen=True, slots=True)
class StreamError:
    """A frame that failed to decode, or an error the server sent inside the stream."""

    code: str
    message: str
    frame: int | None
    offset: int | None
    line: int | None
    raw: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"frame": self.frame, "offset": self.offset, "line": self.line,
                "code": self.code, "message": self.message, "raw": self.raw}


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """Something suspicious but decodable, with a stable `code`."""

    code: str
    severity: str  # "error" | "warning" | "info"
    message: str
    frame: int | None
    offset: int | None
    line: int | None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "severity": self.severity, "frame": self.frame,
                               "offset": self.offset, "line": self.line, "message": self.message}
        if self.details:
            out["details"] = self.details
        return out


class Report:
    """Collects findings; resolves a frame index to its offset and line."""

    def __init__(self, frames: Sequence[FrameRecord]) -> None:
        self._frames = frames
        self.errors: list[StreamError] = []
        self.diagnostics: list[Diagnostic] = []
        self._seen: set[Any] = set()
        #: Index into errors/diagnostics of what `drain()` has not returned yet.
        self._drained = (0, 0)

    def _where(self, frame: int | None, offset: int | None, line: int | None) -> tuple[int | None, int | None]:
        if frame is not None and 0 <= frame < len(self._frames):
            found = self._frames[frame]
            return (found[OFFSET] if offset is None else offset, found[LINE] if line is None else line)
        return offset, line

    def error(self, code: str, frame: int | None, message: str, raw: str | None = None, *,
              offset: int | None = None, line: int | None = None) -> None:
        offset, line = self._where(frame, offset, line)
        self.errors.append(StreamError(code, message, frame, offset, line, raw))

    def diagnostic(self, code: str, frame: int | None, message: str, *, severity: str = "warning",
                   offset: int | None = None, line: int | None = None, once: Any = None,
                   **details: Any) -> None:
        """Record a diagnostic; with `once`, only the first one for that key."""
        if once is not None:
            key = (code, once)
            try:
                if key in self._seen:
                    return
                self._seen.add(key)
            except TypeError:  # a key built from payload values that cannot be hashed
                key = (code, repr(once))
                if key in self._seen:
                    return
                self._seen.add(key)
        offset, line = self._where(frame, offset, line)
        self.diagnostics.append(Diagnostic(code, severity, message, frame, offset, line, details))

    def drain(self) -> tuple[list[StreamError], list[Diagnostic]]:
        """Findings added since the last drain."""
        errors_seen, diagnostics_seen = self._drained
        self._drained = (len(self.errors), len(self.diagnostics))
        return self.errors[errors_seen:], self.diagnostics[diagnostics_seen:]
