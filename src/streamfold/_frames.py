"""The value every framing parser produces: one `Frame` per SSE block, NDJSON
line, JSON-array element (and later, AWS event-stream message).

A frame is the unit a person debugs: it knows where it sits in the capture
(`offset`, `line`), what it carried (`event`, `data`, `id`, `retry`,
`comments`), its exact bytes (`raw`) and what was wrong inside it
(`issues`). Frames never raise and never hide bytes: a field the spec ignores
is still listed as an issue so the debugger can say "did you mean `data:`?".
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import repeat
from dataclasses import dataclass
from typing import Any, Final, Optional, Union, overload

__all__ = ["DEFAULT_MAX_FRAME_SIZE", "Frame", "FrameIssue", "FrameRecord", "FrameRun", "FrameSequence", "FrameStore",
           "Framer", "SplitRun", "make_frame"]

# A frame above this size is reported and dropped instead of buffered. It is
# far above any real chunk (a base64 partial image from the Responses API is a
# few MB) and keeps a hostile or broken capture from eating the machine.
DEFAULT_MAX_FRAME_SIZE = 32 * 1024 * 1024

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class FrameIssue:
    """Something wrong inside a frame that framing noticed.

    `code` is stable (`unknown-field`, `invalid-retry`, `invalid-id`,
    `invalid-utf8`, `frame-too-large`); `offset` and `line` point at the
    offending byte or line of the stream; `text` is the offending line.
    """

    code: str
    offset: int
    line: int
    message: str
    text: str = ""


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame of a stream, exactly as it was on the wire.

    `offset` is the byte offset of the frame's first line (a leading BOM
    counts), `line` its 1-based line number. `data` is None when the frame had
    no `data` line (comments, keep-alives, id/retry-only blocks), else the data
    lines joined with "\\n". `raw` are the frame's bytes; `terminated` is False
    for a final block the stream never finished (a spec-exact client drops it).
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


#: A frame as the framers build it: the `Frame` fields, in order, in a plain
#: tuple. Building a frozen dataclass costs more than decoding the frame's JSON,
#: so the fold loop works on records and `Frame`s are made where people look.
class DataLineRaw:
    """In a record's raw slot: the frame was one `data:` line and a blank line
    (LF), so its bytes are exactly `prefix + data + "\\n\\n"` and are rebuilt
    when a `Frame` is made instead of being kept twice."""

    __slots__ = ("prefix",)

    def __init__(self, prefix: bytes) -> None:
        self.prefix = prefix


DATA_SPACE = DataLineRaw(b"data: ")
DATA_TIGHT = DataLineRaw(b"data:")

FrameRecord = tuple[int, int, int, Optional[str], Optional[str], Optional[str], Optional[int],
                    tuple[str, ...], "bytes | DataLineRaw", bool, tuple[FrameIssue, ...],
                    tuple[tuple[str, Any], ...]]
INDEX: Final = 0
OFFSET: Final = 1
LINE: Final = 2
DATA: Final = 4
RAW: Final = 8
EVENT: Final = 3
TERMINATED: Final = 9
ISSUES: Final = 10
HEADERS: Final = 11


class FrameRun:
    """Consecutive frames a framer kept as the bytes they came in, made into
    records only when read. A long stream is mostly such runs: keeping one
    bytes object instead of a record and a decoded `data` string per frame
    is what keeps memory (and so the cost per frame) flat from 1k to 1M frames.
    """

    __slots__ = ("first", "count")
    #: Where the JSON starts in each of `pieces()` (after `data:` in SSE).
    payload_start = 0

    def __init__(self, first: int, count: int) -> None:
        #: Index of the run's first frame, and how many frames it holds.
        self.first = first
        self.count = count

    def pieces(self) -> list[bytes]:
        """Each frame's payload line, in order: the fold decodes its JSON from `payload_start` on."""
        raise NotImplementedError

    def event_lines(self) -> Iterable[bytes | None]:
        """Each frame's SSE `event:` line as bytes, or None, in order (for `Dialect.fold_fast`)."""
        return repeat(None, self.count)

    def record(self, index: int) -> FrameRecord:
        """The record of frame `index` (which must be in the run)."""
        raise NotImplementedError

    def records(self) -> Iterator[FrameRecord]:
        return (self.record(index) for index in range(self.first, self.first + self.count))

    def event(self, index: int) -> str | None:
        """The `event` field of frame `index`: `record(index)[EVENT]`, maybe cheaper."""
        return self.record(index)[EVENT]

    def release(self) -> None:
        """The fold is done with the run: drop what it held only for the fold."""


class SplitRun(FrameRun):
    """A run kept as one bytes object: `region` is its frames' bytes joined by `separator`
    (their terminator, not kept after the last one), each frame `lines_per_frame` lines.
    Where each frame starts is indexed only as far as a read asks; subclasses make a
    frame's record from its bytes (`_record`)."""

    __slots__ = ("offset", "line", "region", "lines_per_frame", "_starts")
    separator = b"\n"

    def __init__(self, first: int, count: int, offset: int, line: int, region: bytes, lines_per_frame: int) -> None:
        super().__init__(first, count)
        #: Stream offset and line of the first frame.
        self.offset = offset
        self.line = line
        self.region = region
        self.lines_per_frame = lines_per_frame
        self._starts = array("q", [0])

    def record(self, index: int) -> FrameRecord:
        position = index - self.first
        if not 0 <= position < self.count:
            raise IndexError(f"frame {index} is not in this run")
        region, separator = self.region, self.separator
        if position == self.count - 1 and len(self._starts) < self.count:
            # The end of a fold reads the last frame: find it from the end.
            start = region.rfind(separator) + len(separator) if self.count > 1 else 0
            piece = region[start:]
        else:
            start = self._start(position)
            piece = region[start : self._start(position + 1) - len(separator)]
        return self._record(piece, index, self.offset + start, self.line + self.lines_per_frame * position)

    def _start(self, position: int) -> int:
        """Where frame `position` starts in `region` (`count` for the end); indexed as far as asked."""
        starts, region, separator = self._starts, self.region, self.separator
        while len(starts) <= position:
            end = len(region) if len(starts) == self.count else region.find(separator, starts[-1])
            starts.append(end + len(separator))
        return starts[position]

    def records(self) -> Iterator[FrameRecord]:
        index, offset, line, step = self.first, self.offset, self.line, len(self.separator)
        for piece in self.region.split(self.separator):
            yield self._record(piece, index, offset, line)
            index += 1
            offset += len(piece) + step
            line += self.lines_per_frame

    def _record(self, piece: bytes, index: int, offset: int, line: int) -> FrameRecord:
        """The record of one frame, from its bytes (without the separator)."""
        raise NotImplementedError


#: What a framer hands the fold: one record, or a run of them.
FramerOutput = Union[FrameRecord, FrameRun]


class Framer:
    """The public face every framer shares: bytes in, `Frame`s out.

    Subclasses implement `feed_records` and `close_records`, keep the stream
    offset of their next line in `_offset`, and call `_strip_bom` on each chunk.
    """

    _offset = 0
    _at_stream_start = True
    _bom_prefix = b""

    def __init__(self, *, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        if max_frame_size < 1:
            raise ValueError(f"max_frame_size must be positive, got {max_frame_size!r}")
        self.max_frame_size = max_frame_size
        self._closed = False
        self._index = 0

    def _accept(self, chunk: bytes) -> bytes:
        """Check a chunk handed to feed(): only misuse raises."""
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise TypeError(f"feed() takes bytes, got {type(chunk).__name__}")
        if self._closed:
            raise RuntimeError("feed() after close(): the stream has ended")
        return bytes(chunk)

    def _end(self) -> None:
        if self._closed:
            raise RuntimeError("close() called twice")
        self._closed = True

    def _strip_bom(self, chunk: bytes) -> bytes:
        """"One leading U+FEFF BYTE ORDER MARK character must be ignored", whatever the chunking.

        Held bytes that might still be a BOM come back with the next chunk.
        """
        if not self._at_stream_start:
            return chunk
        head = self._bom_prefix + chunk
        if len(head) < 3 and _BOM.startswith(head):
            self._bom_prefix = head
            return b""
        self._at_stream_start = False
        self._bom_prefix = b""
        if head.startswith(_BOM):
            self._offset += 3
            return head[3:]
        return head

    def _unfinished_bom(self) -> bytes:
        """At close: bytes held as a possible BOM that never completed are data."""
        self._at_stream_start = False
        held, self._bom_prefix = self._bom_prefix, b""
        return held

    def feed_records(self, chunk: bytes) -> Sequence[FramerOutput]:
        raise NotImplementedError

    def close_records(self) -> Sequence[FramerOutput]:
        raise NotImplementedError

    def feed(self, chunk: bytes) -> list[Frame]:
        """Take the next bytes of the stream; return the frames they completed."""
        return [make_frame(record) for record in _expand(self.feed_records(chunk))]

    def close(self) -> list[Frame]:
        """End the stream; return what was still open (an unterminated final frame)."""
        return [make_frame(record) for record in _expand(self.close_records())]


def _expand(output: Sequence[FramerOutput]) -> Iterator[FrameRecord]:
    for item in output:
        if type(item) is tuple:
            yield item
        else:
            assert isinstance(item, FrameRun)
            yield from item.records()


def make_frame(record: FrameRecord) -> Frame:
    """The `Frame` of a record, with its raw bytes rebuilt if they were not kept."""
    raw = record[RAW]
    if isinstance(raw, DataLineRaw):
        raw = raw.prefix + (record[DATA] or "").encode() + b"\n\n"
    return Frame(record[0], record[1], record[2], record[3], record[4], record[5], record[6], record[7],
                 raw, record[9], record[10], record[11])


class FrameStore(Sequence[FrameRecord]):
    """Every frame of a stream so far, as records, indexed by frame index.

    A run takes one slot per frame, each pointing at the run, and its records
    are made when read; `Frame`s are made later still (see `FrameSequence`).
    """

    __slots__ = ("_slots",)

    def __init__(self) -> None:
        self._slots: list[FramerOutput] = []

    def append(self, record: FrameRecord) -> None:
        self._slots.append(record)

    def add_run(self, run: FrameRun) -> None:
        self._slots.extend([run] * run.count)

    def records_outside_runs(self) -> Iterator[FrameRecord]:
        """The records of the frames no run holds. Every frame a run holds has data, so
        this is where to look for frames without any (comments, keep-alives, stray lines)."""
        return (slot for slot in self._slots if type(slot) is tuple)

    def event(self, index: int) -> str | None:
        """`self[index][EVENT]`, without making the record of a frame in a run."""
        slot = self._slots[index]
        if type(slot) is tuple:
            return slot[EVENT]
        assert isinstance(slot, FrameRun)
        return slot.event(index)

    def __len__(self) -> int:
        return len(self._slots)

    @overload
    def __getitem__(self, index: int) -> FrameRecord: ...
    @overload
    def __getitem__(self, index: slice) -> list[FrameRecord]: ...
    def __getitem__(self, index: int | slice) -> FrameRecord | list[FrameRecord]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._slots)))]
        slot = self._slots[index]
        if type(slot) is tuple:
            return slot
        assert isinstance(slot, FrameRun)
        return slot.record(index if index >= 0 else index + len(self._slots))

    def __iter__(self) -> Iterator[FrameRecord]:
        slots, position = self._slots, 0
        while position < len(slots):
            slot = slots[position]
            if type(slot) is tuple:
                yield slot
                position += 1
            else:
                assert isinstance(slot, FrameRun)
                yield from slot.records()
                position += slot.count


class FrameSequence(Sequence[Frame]):
    """A read-only list of frames, made from records when accessed."""

    __slots__ = ("_records",)

    def __init__(self, records: Sequence[FrameRecord]) -> None:
        self._records = records

    def __len__(self) -> int:
        return len(self._records)

    @overload
    def __getitem__(self, index: int) -> Frame: ...
    @overload
    def __getitem__(self, index: slice) -> list[Frame]: ...
    def __getitem__(self, index: int | slice) -> Frame | list[Frame]:
        if isinstance(index, slice):
            return [make_frame(record) for record in self._records[index]]
        return make_frame(self._records[index])

    def __iter__(self) -> Iterator[Frame]:
        return (make_frame(record) for record in self._records)

    def __eq__(self, other: Any) -> bool:
        # Records of equal frames may differ (raw kept or rebuilt), so compare frames.
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __repr__(self) -> str:
        return f"<FrameSequence of {len(self)} frames>"
