"""Decoding: a frame's payload becomes JSON, the `[DONE]` sentinel, a
comment/keep-alive, an empty payload, glued documents, or invalid text.

This is the one decoding step, and the fold takes it: `decode_text` for a
frame's data as text, `decode_bytes` for a payload kept as bytes in a run
(which refuses what it cannot take as is; the frame then goes the text way,
which says why). Nothing here knows vendors. Invalid payloads are kept with
the decoder's message and position, so the rest of the stream still folds.

A line that is not JSON decodes too when a dialect declared its line format (`framing.hints`: the
Vercel AI SDK data stream's `0:"Hello"`): into that dialect's value, never a dict or list, so no
dialect of JSON payloads claims it by mistake.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, overload

from ._json import is_blank, iter_documents, loads_noting, loads_utf8, replacements
from .framing import Frame
from .framing.hints import line_formats

__all__ = ["GluedDocuments", "Payload", "PayloadKind", "decode_bytes", "decode_data", "decode_frame", "decode_text",
           "from_line_format"]

DONE_SENTINEL = "[DONE]"


class PayloadKind(str, enum.Enum):
    JSON = "json"
    #: The `[DONE]` sentinel of OpenAI-style streams.
    DONE = "done"
    #: No data at all: comments, keep-alives, event/id/retry-only blocks.
    COMMENT = "comment"
    #: A data field that is empty or whitespace (F8: `json.loads("")` fails in clients).
    EMPTY = "empty"
    #: Two or more JSON documents in one frame: a blank line was lost.
    GLUED = "glued"
    INVALID = "invalid"


@dataclass(frozen=True, slots=True)
class Payload:
    """What a frame carried. For GLUED, `value` is a sequence of (document, char offset) (`GluedDocuments`)."""

    kind: PayloadKind
    value: Any = None
    error: str | None = None
    #: Character position of the error in the frame's data.
    position: int | None = None


def from_line_format(data: str) -> bool:
    """Does `data` look like a line of a dialect's own line format (`framing.hints`), not JSON text?"""
    return any(line_format.matches(data) for line_format in line_formats())


COMMENT = Payload(PayloadKind.COMMENT)
DONE = Payload(PayloadKind.DONE)
EMPTY = Payload(PayloadKind.EMPTY)


def decode_frame(frame: Frame) -> Payload:
    """Decode one frame's data."""
    if frame.data is None:
        return COMMENT
    return decode_data(frame.data)


def decode_data(data: str) -> Payload:
    """Decode a frame's data (its `data` lines joined)."""
    kind, value = decode_text(data)
    if kind is PayloadKind.JSON:
        return value if type(value) is Payload else Payload(kind, value)
    return DONE if kind is PayloadKind.DONE else value


_JSON = PayloadKind.JSON
_DONE_PAIR = (PayloadKind.DONE, None)


def decode_text(data: str) -> tuple[PayloadKind, Any]:
    """The decoding step of the fold: (JSON, the value), (DONE, None), or, for anything that is
    not one document, (its kind, its `Payload`: glued documents, empty, invalid with the position).

    A document that is JSON only to a lenient decoder (NaN, Infinity, a number out of a double's
    range, a lone surrogate escape) is (JSON, a `Payload`) whose value has them replaced (None,
    U+FFFD) and whose `error` says what was replaced, for the fold to report."""
    if data == DONE_SENTINEL:
        return _DONE_PAIR
    try:
        value, replaced, surrogates = loads_noting(data)
    except ValueError as exc:
        for line_format in line_formats():
            if line_format.matches(data):
                try:
                    return _JSON, line_format.decode(data)
                except ValueError:
                    pass
        payload = _not_one_document(data, exc)
        return payload.kind, payload
    if replaced or surrogates:
        return _JSON, Payload(_JSON, value, replacements(replaced, surrogates))
    return _JSON, value


#: A payload kept as UTF-8 bytes (in a run) to its JSON value; raises ValueError for anything
#: `decode_text` would not return as is (invalid UTF-8, NaN, [DONE], ...).
decode_bytes = loads_utf8


def _not_one_document(data: str, exc: ValueError) -> Payload:
    stripped = data.strip()
    if not stripped:
        return EMPTY
    if stripped == DONE_SENTINEL:
        return DONE
    documents = split_glued(data)
    if documents is not None:
        return Payload(PayloadKind.GLUED, documents)
    if isinstance(exc, json.JSONDecodeError):
        return Payload(PayloadKind.INVALID, None, exc.msg, exc.pos)
    return Payload(PayloadKind.INVALID, None, str(exc), None)




def split_glued(data: str) -> GluedDocuments | None:
    """`data` as 2+ JSON documents (optionally each behind `data:`), or None.

    Covers a lost blank line (two `data:` lines joined by "\\n"), documents
    back to back on one line, and a `data:` prefix left inside the data.
    """
    count = end = 0
    for _, _, stop in iter_documents(data, data_prefix=True):
        count, end = count + 1, stop
    return GluedDocuments(data, count) if count >= 2 and is_blank(data, end) else None


class GluedDocuments(Sequence[tuple[Any, int]]):
    """The documents of a glued frame, each as (document, char offset in the data), decoded from the
    data each time they are read: a frame of a million documents is folded one document at a time,
    not held as a million values (100x its size for small ones)."""

    __slots__ = ("_count", "_data")

    def __init__(self, data: str, count: int) -> None:
        self._data = data
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[tuple[Any, int]]:
        return ((value, start) for value, start, _ in iter_documents(self._data, data_prefix=True))

    @overload
    def __getitem__(self, index: int) -> tuple[Any, int]: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[tuple[Any, int], ...]: ...
    def __getitem__(self, index: int | slice) -> tuple[Any, int] | tuple[tuple[Any, int], ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        position = index + self._count if index < 0 else index
        if not 0 <= position < self._count:
            raise IndexError(index)
        return next(islice(self, position, None))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<GluedDocuments: {self._count} documents>"
