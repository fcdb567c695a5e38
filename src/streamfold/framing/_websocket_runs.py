"""Runs of WebSocket messages: the WebSocket JSONL framer's speed trick, kept apart from it.

A Realtime capture is mostly lines of one shape: a received text message,
`{"type":"receive","time":...,"opcode":1,"data":"..."}`, whose `data` is the event's JSON. The
plain `WebSocketParser` decodes each line into a dict and makes a record of it, and the fold then
decodes its `data` again. `WebSocketRunParser` decodes a stretch of such lines in one call into
msgspec Structs (`Envelope`: declared whole, unknown fields refused, so a sent, binary or odd line
fails and the stretch is taken line by line) and hands them on as one `MessageLineRun`, whose
`pieces()` are the events' JSON as UTF-8 bytes; records are made when read, by the plain parser.
A line that names a `stream_id` (the Responses WebSocket mode's lanes) or any line the Struct
refuses goes to the plain parser, which says what is wrong with it.
`tests/folding/test_fast_path_realtime.py` holds both parsers to the same frames and results.

Importing this module raises ImportError without msgspec; the Folder then frames WebSocket
captures with the plain parser.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import msgspec

from ._records import FrameRecord, FramerOutput
from ._runs import LineRun
from .ndjson import line_record
from .websocket import WebSocketParser

__all__ = ["Envelope", "MessageLineRun", "WebSocketRunParser"]

_MIN_RUN = 8


class Envelope(msgspec.Struct, forbid_unknown_fields=True):
    """A received text message as `WebSocketParser` takes it without a finding (its `time` is
    read by `finite_seconds` when the record is made)."""

    type: Literal["receive"]
    data: str
    time: float | None = None
    opcode: Literal[1] = 1


_decode_line: Callable[[bytes], Envelope] = msgspec.json.Decoder(Envelope).decode
_decode_lines: Callable[[bytes], list[Envelope]] = msgspec.json.Decoder(list[Envelope]).decode
# The one parser that makes the records of runs: a run's lines name no lane, so its state is never read.
_RECORDS = WebSocketParser()


class WebSocketRunParser(WebSocketParser):
    """`WebSocketParser`, with stretches of received text messages taken as runs."""

    def _take_lines(self, lines: list[bytes], chunk: bytes, frames: list[FramerOutput]) -> None:
        # No CR, none blank or starting with whitespace, none too large, no lane: checked in C, over
        # the chunk; then the envelopes of all the lines in one call, if every one is plain.
        if len(lines) < _MIN_RUN or min(lines) < b"!" or len(chunk) > self.max_frame_size or 13 in chunk \
                or b"stream_id" in chunk:
            super()._take_lines(lines, chunk, frames)
            return
        try:
            envelopes = _decode_lines(b"[" + b",".join(lines) + b"]")
        except ValueError:
            self._take_line_by_line(lines, frames)
            return
        self._add_run(lines, [envelope.data.encode() for envelope in envelopes], frames)

    def _take_line_by_line(self, lines: list[bytes], frames: list[FramerOutput]) -> None:
        """Lines of which some are not plain: the plain ones in a row still make runs."""
        group: list[bytes] = []
        pieces: list[bytes] = []
        for line in lines:
            try:
                piece = _decode_line(line).data.encode()
            except ValueError:
                self._add_run(group, pieces, frames)
                group, pieces = [], []
                self._take_line(line, b"\n", frames)
                continue
            group.append(line)
            pieces.append(piece)
        self._add_run(group, pieces, frames)

    def _add_run(self, lines: list[bytes], pieces: list[bytes], frames: list[FramerOutput]) -> None:
        """Plain lines in a row: a run when there are enough of them, else records."""
        if len(lines) < _MIN_RUN:
            for line in lines:
                self._take_line(line, b"\n", frames)
            return
        run = MessageLineRun(self._index, self._offset, self._line, lines, pieces)
        frames.append(run)
        self._index += run.count
        self._offset += run.size + 1
        self._line += run.count


class MessageLineRun(LineRun):
    """Received text messages as the JSONL lines they came in; `pieces()` are their `data` as UTF-8
    bytes, and records are made when read, as `WebSocketParser` makes them."""

    __slots__ = ("_pieces",)

    def __init__(self, first: int, offset: int, line: int, lines: list[bytes], pieces: list[bytes]) -> None:
        super().__init__(first, offset, line, lines)
        self._pieces: list[bytes] | None = pieces  # held until the fold takes them

    def pieces(self) -> list[bytes]:
        pieces, self._pieces = self._pieces, None
        if pieces is None:
            return [_decode_line(line).data.encode() for line in super().pieces()]
        return pieces

    def release(self) -> None:
        super().release()
        self._pieces = None

    def _record(self, piece: bytes, index: int, offset: int, line: int) -> FrameRecord:
        return _RECORDS._message(line_record(piece, piece + b"\n", index, offset, line))
