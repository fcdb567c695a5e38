"""Findings: errors (what went wrong in the stream) and diagnostics (what is
suspicious but decodable), each pointing at a frame, a byte offset and a line.
These types are pure values.

Every code is registered in `_codes` (kind, default severity, one-line doc,
vendor), a vendor's own from its dialect's spec; a finding made with a code that is
not is a test failure (tests/project/test_findings_registry.py). Messages
are for a person: they say what a client would do with the frame, in plain
words, and never cite internal trap ids.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from ._codes import CODES, Code, Kind, Severity

__all__ = ["BINARY_TRANSPORTS", "DEFAULT_MAX_FINDINGS_PER_CODE", "Code", "Diagnostic", "Kind", "Report", "Severity",
           "StreamError", "frame_ranges", "location"]

#: Findings of one code kept in full; past it they are counted, their frames listed as ranges
#: in one `findings-collapsed` diagnostic (a hostile stream can hold a finding per frame).
DEFAULT_MAX_FINDINGS_PER_CODE: Final = 100

#: Transports without lines: AWS event-stream is binary, its frames are length-prefixed messages
#: (their `line` is 0), so a place in it is a message and a byte.
BINARY_TRANSPORTS = frozenset({"aws-eventstream"})


def location(frame: int | None, offset: int | None, line: int | None, transport: str | None) -> str:
    """Where a finding (or a frame) is, as a person reads it: "frame 3, line 12"; on a binary
    transport "message 3, byte 668"; "" when it points nowhere."""
    where = []
    if transport in BINARY_TRANSPORTS:
        if frame is not None:
            where.append(f"message {frame}")
        if offset is not None:
            where.append(f"byte {offset}")
    else:
        if frame is not None:
            where.append(f"frame {frame}")
        if line is not None:
            where.append(f"line {line}")
    return ", ".join(where)


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

    @classmethod
    def from_dict(cls, value: dict[str, Any]) -> StreamError:
        return cls(value["code"], value["message"], value["frame"], value["offset"], value["line"], value.get("raw"))

    def __repr__(self) -> str:
        return f"streamfold.StreamError(code={self.code!r}, frame={self.frame}, message={self.message!r})"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """Something suspicious but decodable, with a stable `code`."""

    code: str
    severity: Severity
    message: str
    frame: int | None
    offset: int | None
    line: int | None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "severity": self.severity.value, "frame": self.frame,
                               "offset": self.offset, "line": self.line, "message": self.message}
        if self.details:
            out["details"] = self.details
        return out

    @classmethod
    def from_dict(cls, value: dict[str, Any]) -> Diagnostic:
        return cls(value["code"], Severity(value["severity"]), value["message"], value["frame"], value["offset"],
                   value["line"], dict(value.get("details") or {}))

    @classmethod
    def note(cls, code: str, message: str, severity: Severity | None = None) -> Diagnostic:
        """A finding about the input or the transport, pointing at no frame."""
        return cls(code, severity or CODES[code].severity, message, None, None, None)

    def __repr__(self) -> str:
        return (f"streamfold.Diagnostic(code={self.code!r}, severity={self.severity.value!r}, frame={self.frame}, "
                f"message={self.message!r})")


class _Where(Protocol):
    def __len__(self) -> int: ...
    def where(self, index: int) -> tuple[int, int]: ...


class _Nowhere:
    def __len__(self) -> int:
        return 0

    def where(self, index: int) -> tuple[int, int]:  # pragma: no cover - never called: no frames
        raise IndexError(index)


class Report:
    """Collects findings; resolves a frame index to its offset and line."""

    def __init__(self, frames: _Where | None = None, *, journal: list[tuple[str, Any, Any, Any]] | None = None,
                 max_per_code: int = DEFAULT_MAX_FINDINGS_PER_CODE) -> None:
        self._frames: _Where = _Nowhere() if frames is None else frames
        #: Findings of one code kept in full (`collapse()` sums up the rest).
        self.max_per_code = max_per_code
        self._kept: dict[str, int] = {}
        #: code -> the frame of each finding past the cap (-1: none), in order.
        self._dropped: dict[str, array[int]] = {}
        #: Where each finding is also written as ("finding", (), finding, frame), in the order
        #: things happened (the merger's journal, so feed() events keep that order).
        self._journal = journal
        self.errors: list[StreamError] = []
        self.diagnostics: list[Diagnostic] = []
        self._seen: set[Any] = set()
        #: Index into errors/diagnostics of what `drain()` has not returned yet.
        #: The server sent an error inside the stream (the reply is not complete).
        self.server_failed = False

    def _where(self, frame: int | None, offset: int | None, line: int | None) -> tuple[int | None, int | None]:
        if frame is not None and 0 <= frame < len(self._frames):
            found_offset, found_line = self._frames.where(frame)
            return (found_offset if offset is None else offset, found_line if line is None else line)
        return offset, line

    def error(self, code: str, frame: int | None, message: str, raw: str | None = None, *,
              offset: int | None = None, line: int | None = None) -> None:
        if code == "in-stream-error":
            self.server_failed = True
        if self._over_cap(code, frame):
            return
        offset, line = self._where(frame, offset, line)
        error = StreamError(code, message, frame, offset, line, raw)
        self.errors.append(error)
        if self._journal is not None:
            self._journal.append(("finding", (), error, frame))

    def diagnostic(self, code: str, frame: int | None, message: str, *, severity: Severity | None = None,
                   offset: int | None = None, line: int | None = None, once: Any = None,
                   **details: Any) -> None:
        """Record a diagnostic (at its code's default severity unless told); with `once`, only the
        first one for that key."""
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
        if self._over_cap(code, frame):
            return
        offset, line = self._where(frame, offset, line)
        diagnostic = Diagnostic(code, severity or CODES[code].severity, message, frame, offset, line, details)
        self.diagnostics.append(diagnostic)
        if self._journal is not None:
            self._journal.append(("finding", (), diagnostic, frame))

    def _over_cap(self, code: str, frame: int | None) -> bool:
        """Count a finding of `code`; True (it is not kept, only its frame) past the cap."""
        kept = self._kept.get(code, 0)
        if kept < self.max_per_code:
            self._kept[code] = kept + 1
            return False
        dropped = self._dropped.get(code)
        if dropped is None:
            dropped = self._dropped[code] = array("q")
        dropped.append(-1 if frame is None else frame)
        return True

    def collapse(self) -> None:
        """At the end of the stream: one `findings-collapsed` diagnostic per code that went past
        the cap, with the exact count and the frames of the findings not kept, as ranges."""
        for code, dropped in self._dropped.items():
            first = next((frame for frame in dropped if frame >= 0), None)
            listed = self._kept.get(code, 0)
            total = listed + len(dropped)
            offset, line = self._where(first, None, None)
            diagnostic = Diagnostic(
                "findings-collapsed", CODES["findings-collapsed"].severity,
                f"{total} findings {code!r}: the first {listed} are listed, the other {len(dropped)} "
                f"(from frame {first} on) only counted (max_findings_per_code={self.max_per_code})",
                first, offset, line,
                {"code": code, "count": total, "listed": listed, "frames": frame_ranges(dropped)})
            self.diagnostics.append(diagnostic)
            if self._journal is not None:
                self._journal.append(("finding", (), diagnostic, first))
        self._dropped.clear()

    def __iter__(self) -> Iterator[StreamError | Diagnostic]:
        yield from self.errors
        yield from self.diagnostics


def frame_ranges(frames: Iterable[int]) -> list[list[int]]:
    """Ascending runs of frame indexes as [first, last] pairs: [3, 4, 5, 9] -> [[3, 5], [9, 9]]
    (negative ones, "no frame", are left out)."""
    ranges: list[list[int]] = []
    for frame in frames:
        if frame < 0:
            continue
        if ranges and frame in (ranges[-1][1], ranges[-1][1] + 1):
            ranges[-1][1] = frame
        else:
            ranges.append([frame, frame])
    return ranges

