"""What the input readers make of the bytes a person has: a `Capture` (the
stream body, arrival times, HTTP headers) with `Note`s on what was done to
them, or an `InputError` saying why they cannot be used."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..findings import Code, Diagnostic, Severity

__all__ = ["Capture", "EntryInfo", "InputError", "Note", "Segment"]

#: (body start, body end, file start, file end): bytes `body[b0:b1]` were read out of `file[f0:f1]`
#: (the same length when they were copied as they are, as curl -v's body lines are; a log line's
#: data becomes `data: ...` and its timestamp prefix is dropped, so there the lengths differ).
Segment = tuple[int, int, int, int]


class InputError(ValueError):
    """The input cannot be used (e.g. a HAR with no streamed entry); the message says why."""


@dataclass(frozen=True, slots=True)
class Note:
    """Something the input layer did or noticed, for the report (becomes a diagnostic)."""

    code: Code
    message: str
    severity: Severity = Severity.INFO
    #: The byte of the stream body it is about, when it is about one (where a too large body was cut).
    offset: int | None = None
    #: What a program reading the finding may want apart from its message (`--json`'s `details`).
    details: tuple[tuple[str, Any], ...] = ()

    def diagnostic(self) -> Diagnostic:
        """The note as a finding that points at no frame (at a byte of the body, when it has an offset)."""
        found = Diagnostic.note(self.code, self.message, self.severity)
        if self.details:
            found = dataclasses.replace(found, details=dict(self.details))
        return found if self.offset is None else dataclasses.replace(found, offset=self.offset)


@dataclass(frozen=True, slots=True)
class EntryInfo:
    """One entry of a HAR, as a picker lists it (read defensively: a missing field is empty or None)."""

    index: int
    method: str
    url: str
    status: int | None
    mime: str
    streamed: bool
    failed: bool

    def to_dict(self) -> dict[str, object]:
        return {"index": self.index, "method": self.method, "url": self.url, "status": self.status,
                "mime": self.mime, "streamed": self.streamed, "failed": self.failed}


@dataclass(frozen=True, slots=True)
class Capture:
    body: bytes
    #: What the input was: "raw", "har", "curl-verbose", "curl-trace", "log", ...
    source: str
    #: (body offset, seconds) for each read, when the input had arrival times.
    reads: tuple[tuple[int, float], ...] | None = None
    status: int | None = None
    response_headers: tuple[tuple[str, str], ...] = ()
    request_headers: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    notes: tuple[Note, ...] = field(default_factory=tuple)
    #: When the request was sent (same clock as `reads`), if the input says.
    started: float | None = None
    #: A HAR entry's own times, (name, seconds): "total", "first_byte" (from the request's start to the
    #: response's first byte) and "receive" (reading the body), those the HAR knows. Not per frame.
    entry_timing: tuple[tuple[str, float], ...] = ()
    #: Where each piece of `body` came from in the input (see `Segment`), in body order, for the
    #: line-based inputs (a log, curl -v/-i output); empty when the body is not pieces of the file.
    segments: tuple[Segment, ...] = ()
    #: A HAR's entries (every one the file holds), and the index of the one `body` is from.
    entries: tuple[EntryInfo, ...] = ()
    entry: int | None = None
    #: The body was rebuilt from the objects an SDK hands out (a `repr()`, a log of chunk objects), which
    #: never include the stream's end marker: the reply ended when every choice has its finish reason.
    handed_out: bool = False

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        for key, value in reversed(self.response_headers):
            if key.lower() == lowered:
                return value
        return None
