"""Framing hints: a dialect's line format that is not JSON (the Vercel AI SDK data stream's `T:JSON`
lines), declared in the dialect's spec and registered here when the dialect registry loads it.

The transport sniffer and the decoding step ask the registered formats, so neither names a vendor:
a capture whose first line is in such a format is framed one line a frame (`transport`), and a line
that is not JSON but matches is decoded by the format into the dialect's value (never a dict or list,
so no dialect of JSON payloads claims it by mistake).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["LineFormat", "line_formats", "register_line_format"]


@dataclass(frozen=True, slots=True)
class LineFormat:
    """A line protocol a dialect speaks instead of JSON text."""

    #: The dialect whose format it is.
    dialect: str
    #: How a capture in this format is framed ("ndjson": one line a frame).
    transport: str
    #: The first bytes of a capture (BOM and leading whitespace removed): True when they begin a line of
    #: this format, False when they cannot, None when more bytes are needed to tell (only while not `final`).
    sniff: Callable[[bytes, bool], bool | None]
    #: Does a frame's data look like a line of this format (which no JSON document does)?
    matches: Callable[[str], bool]
    #: A matching line's value; raises ValueError when the rest of the line does not decode.
    decode: Callable[[str], object]


# A tuple, replaced on registration: `line_formats()` is asked once per frame that is not JSON.
_FORMATS: tuple[LineFormat, ...] = ()


def register_line_format(line_format: LineFormat) -> None:
    """Add a dialect's line format (once: a second registration of the same dialect replaces the first)."""
    global _FORMATS
    _FORMATS = (*(known for known in _FORMATS if known.dialect != line_format.dialect), line_format)


def line_formats() -> tuple[LineFormat, ...]:
    return _FORMATS
