"""Runs of AWS event-stream messages: the event-stream framer's speed trick, kept apart from it.

A Bedrock stream is mostly messages of one shape: a valid prelude, three string headers
(`:event-type`, `:content-type`, `:message-type` `event`), a JSON payload, a valid message CRC.
`EventStreamRunParser` is the plain `EventStreamParser` with one change: a stretch of such
messages is walked prelude to prelude (both CRCs checked by `zlib.crc32`, each distinct header
block parsed once) and handed on as one `MessageRun` that stays bytes. No record is made per
message until something reads one, and then it is the record the plain parser makes
(`eventstream.message_record`); the fold decodes each payload straight from its bytes
(`pieces()`). A message that is anything else (a CRC mismatch, headers that do not parse, an
exception, an empty payload, one too large) ends the run and goes to the plain parser, which says
what is wrong with it.
`tests/folding/test_fast_path_bedrock.py` holds both parsers to the same frames and results.
"""

from __future__ import annotations

import struct
import zlib
from array import array
from collections.abc import Iterator
from typing import Any

from ._records import FrameRecord, FramerOutput, FrameRun
from .eventstream import EventStreamParser, message_record, parse_headers

__all__ = ["EventStreamRunParser", "MessageRun"]

_PRELUDE = struct.Struct(">III")
_CRC = struct.Struct(">I")
# Fewer messages than this in a row are left to the plain parser: a run pays for itself only
# when it saves many records.
_MIN_RUN = 8
_SMALLEST = 17  # prelude (12), one payload byte, message CRC (4)
# A run is found in at most this many bytes at a time (each try copies them), and after tries in
# a row that found too few, up to this many messages go to the plain parser before the next.
_WINDOW = 64 * 1024
_MAX_PAUSE = 1024

#: What a run keeps of a message's header block: its headers, its event name, and that name as
#: bytes (for `Dialect.fold_fast`). Shared by every message with the same block.
Kind = tuple[tuple[tuple[str, Any], ...], str, bytes]
_KINDS: dict[bytes, Kind | None] = {}
_KINDS_KEPT = 256
#: Preludes (total length, headers length, CRC) whose CRC was checked: a stream repeats the few
#: lengths its messages have, and looking one up costs less than computing its CRC again.
_VALID_PRELUDES: set[tuple[int, int, int]] = set()
_VALID_KEPT = 4096


def _kind(block: bytes) -> Kind | None:
    """The `Kind` of a header block if the plain parser finds nothing to say about it (it parses,
    `:message-type` is `event`, `:event-type` names the event), else None."""
    if block in _KINDS:
        return _KINDS[block]
    headers, issue = parse_headers(block)
    names = dict(headers)
    event = names.get(":event-type")
    kind: Kind | None = None
    if issue is None and names.get(":message-type") == "event" and type(event) is str and event:
        kind = (headers, event, event.encode())
    if len(_KINDS) >= _KINDS_KEPT:
        _KINDS.clear()
    _KINDS[block] = kind
    return kind


class EventStreamRunParser(EventStreamParser):
    """`EventStreamParser`, with stretches of plain event messages taken as runs."""

    #: Messages the plain parser takes before a run is tried again, and how many it takes after
    #: the next try that finds too few (doubled each time, so a stream of other messages does
    #: not pay a try per message).
    _plain_left = 0
    _pause = 1

    def _run(self, frames: list[FramerOutput]) -> None:
        while True:
            if self._plain_left <= 0 and self._skipping is None and len(self._buf) >= _MIN_RUN * _SMALLEST:
                self._take_run(frames)
            if not self._step(frames):
                return
            self._plain_left -= 1

    def _take_run(self, frames: list[FramerOutput]) -> None:
        """A run of the plain event messages at the head of the buffer (up to `_WINDOW` bytes of it),
        if there are enough of them; else the plain parser takes as many as were walked, and the
        one that stopped the walk, and more after each try in a row that finds too few."""
        buf, max_size = self._buf, self.max_frame_size
        # A copy of the head of the buffer: slicing bytes is cheaper than slicing a view of it.
        window = bytes(buf[:_WINDOW]) if len(buf) > _WINDOW else bytes(buf)
        unpack_prelude, unpack_crc, crc32, kind_of = _PRELUDE.unpack_from, _CRC.unpack_from, zlib.crc32, _KINDS.get
        kinds, pieces, valid = [], [], _VALID_PRELUDES
        position, size = 0, len(window)
        last_block, last_length = b"", -1
        kind: Kind = ((), "", b"")  # (the first message always finds its own)
        while size - position >= _SMALLEST:
            prelude = unpack_prelude(window, position)
            total, headers_len, prelude_crc = prelude
            end, payload = position + total, position + 12 + headers_len
            # A payload of at least one byte (an empty one is a dataless frame), all of it here.
            if end > size or payload >= end - 4 or total > max_size:
                break
            if prelude not in valid:
                if crc32(window[position : position + 8]) != prelude_crc:
                    break
                if len(valid) >= _VALID_KEPT:
                    valid.clear()
                valid.add(prelude)
            if crc32(window[position : end - 4]) != unpack_crc(window, end - 4)[0]:
                break
            # Most messages repeat the header block of the one before (one per event type).
            if headers_len != last_length or not window.startswith(last_block, position + 12):
                last_block = window[position + 12 : payload]
                last_length = headers_len
                found = kind_of(last_block) or _kind(last_block)
                if found is None:
                    break
                kind = found
            kinds.append(kind)
            pieces.append(window[payload : end - 4])
            position = end
        if len(kinds) < _MIN_RUN:
            self._plain_left = max(len(kinds) + 1, self._pause)
            self._pause = min(2 * self._pause, _MAX_PAUSE)
            return
        self._pause = 1
        region = window if position == size else window[:position]
        frames.append(MessageRun(self._index, self._base, region, kinds, pieces))
        self._index += len(kinds)
        self._consume(position)


class MessageRun(FrameRun):
    """Event-stream messages of valid CRCs and plain event headers, kept as the bytes they came
    in (`region`); records are made when read, the same records the plain parser makes."""

    __slots__ = ("_base", "_buffer", "_found_ends", "_kinds", "_pieces", "offset")

    def __init__(self, first: int, offset: int, region: bytes, kinds: list[Kind], pieces: list[bytes]) -> None:
        super().__init__(first, len(kinds))
        #: Stream offset of the first message.
        self.offset = offset
        # The run's bytes are _buffer[_base:]; where each message ends is found when a record is read.
        self._buffer, self._base = region, 0
        self._found_ends: array[int] | None = None
        self._kinds = kinds
        self._pieces: list[bytes] | None = pieces  # each payload, held until the fold takes them

    def pieces(self) -> list[bytes]:
        """Each message's payload."""
        pieces, self._pieces = self._pieces, None
        if pieces is None:
            return [raw[12 + _PRELUDE.unpack_from(raw)[1] : -4] for raw in self._raws()]
        return pieces

    def event_lines(self) -> list[bytes]:
        """Each message's `:event-type`, as bytes."""
        return [kind[2] for kind in self._kinds]

    def event(self, index: int) -> str | None:
        return self._kinds[self._position(index)][1]

    def headers(self, index: int) -> tuple[tuple[str, Any], ...]:
        return self._kinds[self._position(index)][0]

    def record(self, index: int) -> FrameRecord:
        position = self._position(index)
        ends = self._ends()
        start = ends[position - 1] if position else 0
        raw = self._buffer[self._base + start : self._base + ends[position]]
        return message_record(raw, _PRELUDE.unpack_from(raw)[1], index, self.offset + start)

    def records(self) -> Iterator[FrameRecord]:
        start = 0
        for index, (raw, end) in enumerate(zip(self._raws(), self._ends()), self.first):
            yield message_record(raw, _PRELUDE.unpack_from(raw)[1], index, self.offset + start)
            start = end

    def release(self) -> None:
        self._pieces = None

    def refer_to(self, stream: bytes) -> None:
        self._buffer, self._base = stream, self.offset

    def _ends(self) -> array[int]:
        """Where each message ends in the run, walked from prelude to prelude (once)."""
        if self._found_ends is None:
            ends, position, buffer, base = array("q"), 0, self._buffer, self._base
            for _ in range(self.count):
                position += _PRELUDE.unpack_from(buffer, base + position)[0]
                ends.append(position)
            self._found_ends = ends
        return self._found_ends

    def _raws(self) -> Iterator[bytes]:
        buffer, base, start = self._buffer, self._base, 0
        for end in self._ends():
            yield buffer[base + start : base + end]
            start = end

    def _position(self, index: int) -> int:
        position = index - self.first
        if not 0 <= position < self.count:
            raise IndexError(f"frame {index} is not in this run")
        return position
