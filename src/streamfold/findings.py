"""Findings: errors (what went wrong in the stream) and diagnostics (what is
suspicious but decodable), each pointing at a frame, a byte offset and a line.
These types are pure values.

Every code is registered in `_codes` (kind, default severity, one-line doc,
vendor); `Code` is their type, so an unknown code is a mypy error. Messages
are for a person: they say what a client would do with the frame, in plain
words, and never cite internal trap ids.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from ._codes import CODES, Code, Kind, Severity

__all__ = ["BINARY_TRANSPORTS", "Code", "Diagnostic", "Kind", "Report", "Severity", "StreamError", "location"]

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

    code: Code
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

    code: Code
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
    def note(cls, code: Code, message: str, severity: Severity | None = None) -> Diagnostic:
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

    def __init__(self, frames: _Where | None = None, *, journal: list[tuple[str, Any, Any, Any]] | None = None) -> None:
        self._frames: _Where = _Nowhere() if frames is None else frames
        #: Where each finding is also written as ("finding", (), finding, frame), in the order
        #: things happened (the merger's journal, so feed() events keep that order).
        self._journal = journal
        self.errors: list[StreamError] = []
        self.diagnostics: list[Diagnostic] = []
        self._seen: set[Any] = set()
        #: Index into errors/diagnostics of what `drain()` has not returned yet.
        self._drained = (0, 0)
        #: The server sent an error inside the stream (the reply is not complete).
        self.server_failed = False

    def _where(self, frame: int | None, offset: int | None, line: int | None) -> tuple[int | None, int | None]:
        if frame is not None and 0 <= frame < len(self._frames):
            found_offset, found_line = self._frames.where(frame)
            return (found_offset if offset is None else offset, found_line if line is None else line)
        return offset, line

    def error(self, code: Code, frame: int | None, message: str, raw: str | None = None, *,
              offset: int | None = None, line: int | None = None) -> None:
        if code == "in-stream-error":
            self.server_failed = True
        offset, line = self._where(frame, offset, line)
        error = StreamError(code, message, frame, offset, line, raw)
        self.errors.append(error)
        if self._journal is not None:
            self._journal.append(("finding", (), error, frame))

    def diagnostic(self, code: Code, frame: int | None, message: str, *, severity: Severity | None = None,
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
        offset, line = self._where(frame, offset, line)
        diagnostic = Diagnostic(code, severity or CODES[code].severity, message, frame, offset, line, details)
        self.diagnostics.append(diagnostic)
        if self._journal is not None:
            self._journal.append(("finding", (), diagnostic, frame))

    def drain(self) -> tuple[list[StreamError], list[Diagnostic]]:
        """Findings added since the last drain (also in the journal, when there is one)."""
        errors_seen, diagnostics_seen = self._drained
        self._drained = (len(self.errors), len(self.diagnostics))
        return self.errors[errors_seen:], self.diagnostics[diagnostics_seen:]

    def __iter__(self) -> Iterator[StreamError | Diagnostic]:
        yield from self.errors
        yield from self.diagnostics


def is_error_kind(code: str) -> bool:
    """Does this code belong in `errors` (rather than `diagnostics`)?"""
    info = CODES.get(code)
    return info is not None and info.kind is Kind.ERROR
