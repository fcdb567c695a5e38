"""What the input readers make of the bytes a person has: a `Capture` (the
stream body, arrival times, HTTP headers) with `Note`s on what was done to
them, or an `InputError` saying why they cannot be used."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..findings import Code, Diagnostic, Severity

__all__ = ["Capture", "InputError", "Note"]


class InputError(ValueError):
    """The input cannot be used (e.g. a HAR with no streamed entry); the message says why."""


@dataclass(frozen=True, slots=True)
class Note:
    """Something the input layer did or noticed, for the report (becomes a diagnostic)."""

    code: Code
    message: str
    severity: Severity = Severity.INFO

    def diagnostic(self) -> Diagnostic:
        """The note as a finding that points at no frame."""
        return Diagnostic.note(self.code, self.message, self.severity)


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

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        for key, value in reversed(self.response_headers):
            if key.lower() == lowered:
                return value
        return None
