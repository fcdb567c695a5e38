"""Records and runs: how framers hand frames to the fold without making a
`Frame` per frame. The only module that knows a record's positions.

A record is a `Frame`'s fields, in order, in a plain tuple: building a frozen
dataclass costs more than decoding the frame's JSON, so the fold works on
records and `Frame`s are made where people look. A run (`FrameRun`) is a
stretch of frames a framer kept as the bytes they came in; its records are made
only when something reads them. `FrameStore` holds every frame of a stream by
index, and is what dialects read frames through (the `FrameView` protocol).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, Protocol, overload

from ._block import comments_of
from .frame import Frame, FrameIssue

__all__ = ["DATA_SPACE", "DATA_TIGHT", "FrameRecord", "FrameRun", "FrameSequence", "FrameStore", "FrameView",
           "FramerOutput", "PackedRun", "Rebuild", "SplitRun", "expand", "fold_fields", "make_frame", "new_record"]


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

#: Many comments are held as one string, joined by "\n" (see `_block.comments_of`).
FrameRecord = tuple[int, int, int, str | None, str | None, str | None, int | None,
                    "tuple[str, ...] | str", "bytes | DataLineRaw", bool, tuple[FrameIssue, ...],
                    tuple[tuple[str, Any], ...]]
_INDEX: Final = 0
_OFFSET: Final = 1
_LINE: Final = 2
_EVENT: Final = 3
_DATA: Final = 4
_RAW: Final = 8
_TERMINATED: Final = 9
_HEADERS: Final = 11


def new_record(index: int, offset: int, line: int, event: str | None, data: str | None, id: str | None,
               retry: int | None, comments: tuple[str, ...] | str, raw: bytes | DataLineRaw, terminated: bool,
               issues: tuple[FrameIssue, ...], headers: tuple[tuple[str, Any], ...]) -> FrameRecord:
    """A record, with the `Frame` fields in their order (framers off the hot path build them here)."""
    return (index, offset, line, event, data, id, retry, comments, raw, terminated, issues, headers)


def fold_fields(record: FrameRecord) -> tuple[int, str | None, tuple[FrameIssue, ...]]:
    """What the fold reads of a record: its index, its data and its issues."""
    return record[0], record[4], record[10]


class FrameRun:
    """Consecutive frames a framer kept as the bytes they came in, made into
    records only when read. A long stream is mostly such runs: keeping one
    bytes object instead of a record and a decoded `data` string per frame
    is what keeps memory (and so the cost per frame) flat from 1k to 1M frames.
    """

    __slots__ = ("count", "first")
    #: Where the JSON starts in each of `pieces()` (after `data:` in SSE).
    payload_start = 0

    def __init__(self, first: int, count: int) -> None:
        #: Index of the run's first frame, and how many frames it holds.
        self.first = first
        self.count = count

    def pieces(self) -> list[bytes]:
        """Each frame's payload line, in order: the fold decodes its JSON from `payload_start` on."""
        raise NotImplementedError

    def event_lines(self) -> list[bytes] | None:
        """Each frame's event line as bytes, in order (for `Dialect.fold_fast_run`); None when the run's frames
        have none."""
        return None

    def record(self, index: int) -> FrameRecord:
        """The record of frame `index` (which must be in the run)."""
        raise NotImplementedError

    def records(self) -> Iterator[FrameRecord]:
        return (self.record(index) for index in range(self.first, self.first + self.count))

    def event(self, index: int) -> str | None:
        """The `event` field of frame `index` (a subclass may find it without making the record)."""
        return self.record(index)[_EVENT]

    def headers(self, index: int) -> tuple[tuple[str, Any], ...]:
        """The transport headers of frame `index` (a subclass may find them without making the record)."""
        return self.record(index)[_HEADERS]

    def release(self) -> None:
        """The fold is done with the run: drop what it held only for the fold."""

    def refer_to(self, stream: bytes) -> None:
        """The fold was given the whole stream in `stream`: hold the run's bytes as a place in it
        instead of a copy, where the run can (a run of records packed from their bytes keeps them)."""


class SplitRun(FrameRun):
    """A run kept as bytes: its frames' bytes joined by `separator` (their terminator, not kept
    after the last one), each frame `lines_per_frame` lines. Those bytes are the framer's copy
    (`region`) until the fold is done with the run; then, when the fold was given the whole
    stream in one buffer, a place in that buffer (`refer_to`), so a trace does not hold the
    input twice. Where each frame starts is indexed only as far as a read asks; subclasses make
    a frame's record from its bytes (`_record`)."""

    __slots__ = ("_base", "_buffer", "_end", "_starts", "line", "lines_per_frame", "offset")
    separator = b"\n"

    def __init__(self, first: int, count: int, offset: int, line: int, region: bytes, lines_per_frame: int) -> None:
        super().__init__(first, count)
        #: Stream offset and line of the first frame.
        self.offset = offset
        self.line = line
        # The run's bytes are _buffer[_base:_end].
        self._buffer, self._base, self._end = region, 0, len(region)
        self.lines_per_frame = lines_per_frame
        self._starts = array("q", [0])

    @property
    def size(self) -> int:
        """How many bytes the run spans (its last frame's terminator not counted)."""
        return self._end - self._base

    @property
    def region(self) -> bytes:
        """The run's bytes (a copy, when they are a place in a larger buffer)."""
        buffer = self._buffer
        return buffer if self._base == 0 and self._end == len(buffer) else buffer[self._base : self._end]

    def refer_to(self, stream: bytes) -> None:
        """Hold the run's bytes as their place in `stream` (the whole stream: its byte 0 is offset 0)."""
        self._buffer, self._base, self._end = stream, self.offset, self.offset + self.size

    def record(self, index: int) -> FrameRecord:
        position = index - self.first
        if not 0 <= position < self.count:
            raise IndexError(f"frame {index} is not in this run")
        buffer, base, separator = self._buffer, self._base, self.separator
        if position == self.count - 1 and len(self._starts) < self.count:
            # The end of a fold reads the last frame: find it from the end.
            start = buffer.rfind(separator, base, self._end) - base + len(separator) if self.count > 1 else 0
            piece = buffer[base + start : self._end]
        else:
            start = self._start(position)
            piece = buffer[base + start : base + self._start(position + 1) - len(separator)]
        return self._record(piece, index, self.offset + start, self.line + self.lines_per_frame * position)

    def _start(self, position: int) -> int:
        """Where frame `position` starts in the run (`count` for the end); indexed as far as asked."""
        starts, buffer, base, end, separator = self._starts, self._buffer, self._base, self._end, self.separator
        while len(starts) <= position:
            found = end if len(starts) == self.count else buffer.find(separator, base + starts[-1], end)
            starts.append(found - base + len(separator))
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
FramerOutput = FrameRecord | FrameRun

#: A transport's framing of one frame again from its raw bytes, index, offset and line: the
#: record its framer made, or None when the bytes alone do not make it (see `PackedRun`).
Rebuild = Callable[[bytes, int, int, int], "FrameRecord | None"]


class PackedRun(FrameRun):
    """Consecutive frames the framer handed over as records (comments, stray lines, frames
    with issues, invalid JSON), packed back into their bytes once folded: a record costs
    some 300 bytes however small its frame, so a hostile stream of tiny frames would
    cost 40x its size. Each record is made again by framing its bytes (`rebuild`) when
    read; only records that come out equal are packed."""

    __slots__ = ("_blob", "_dataless", "_ends", "_lines", "_offsets", "_rebuild")

    def __init__(self, records: Sequence[FrameRecord], rebuild: Rebuild) -> None:
        super().__init__(records[0][_INDEX], len(records))
        raws = [record[_RAW] for record in records]
        self._blob = b"".join(raw for raw in raws if type(raw) is bytes)
        self._ends = array("q")
        end = 0
        for raw in raws:
            end += len(raw) if type(raw) is bytes else 0
            self._ends.append(end)
        self._offsets = array("q", [record[_OFFSET] for record in records])
        self._lines = array("q", [record[_LINE] for record in records])
        #: Positions of the frames without data (`FrameStore.dataless`).
        self._dataless = array("q", [position for position, record in enumerate(records) if record[_DATA] is None])
        self._rebuild = rebuild

    def raw(self, position: int) -> bytes:
        return self._blob[self._ends[position - 1] if position else 0 : self._ends[position]]

    def record(self, index: int) -> FrameRecord:
        position = index - self.first
        if not 0 <= position < self.count:
            raise IndexError(f"frame {index} is not in this run")
        record = self._rebuild(self.raw(position), index, self._offsets[position], self._lines[position])
        assert record is not None  # it was packed because it came out equal
        return record

    def dataless(self) -> Iterator[tuple[int, bytes]]:
        for position in self._dataless:
            yield self.first + position, self.raw(position)


#: Records in a row before the store packs them, and the fewest worth a `PackedRun`.
_PACK_BATCH = 1024
_MIN_PACK = 64


def expand(output: Sequence[FramerOutput]) -> list[Frame]:
    """The `Frame`s of what a framer returned."""
    frames = []
    for item in output:
        if type(item) is tuple:
            frames.append(make_frame(item))
        else:
            assert isinstance(item, FrameRun)
            frames.extend(make_frame(record) for record in item.records())
    return frames


def make_frame(record: FrameRecord) -> Frame:
    """The `Frame` of a record, with its raw bytes rebuilt if they were not kept."""
    raw = record[_RAW]
    if isinstance(raw, DataLineRaw):
        raw = raw.prefix + (record[_DATA] or "").encode() + b"\n\n"
    return Frame(record[0], record[1], record[2], record[3], record[4], record[5], record[6],
                 comments_of(record[7]), raw, record[9], record[10], record[11])


class FrameStore(Sequence[FrameRecord]):
    """Every frame of a stream so far, as records, indexed by frame index.

    A run takes one slot per frame, each pointing at the run, and its records
    are made when read; `Frame`s are made later still (see `FrameSequence`).
    """

    __slots__ = ("_loose_from", "_slots", "rebuild", "records", "stream")

    def __init__(self) -> None:
        self._slots: list[FramerOutput] = []
        #: The whole stream, when the fold was given it in one buffer (`fold()`): runs are held
        #: as places in it once folded (`FrameRun.refer_to`), not as copies of their bytes.
        self.stream: bytes | None = None
        #: The transport's `Rebuild`, once known: with it, long stretches of records are packed.
        self.rebuild: Rebuild | None = None
        #: Where the records not yet considered for packing start.
        self._loose_from = 0
        #: How many records (frames not in a framer's run) were appended.
        self.records = 0

    def append(self, record: FrameRecord) -> None:
        self._slots.append(record)
        self.records += 1
        if self.rebuild is not None and len(self._slots) - self._loose_from >= _PACK_BATCH:
            self._pack()

    def add_run(self, run: FrameRun) -> None:
        if self.rebuild is not None and len(self._slots) - self._loose_from >= _MIN_PACK:
            self._pack()
        self._slots.extend([run] * run.count)
        self._loose_from = len(self._slots)

    def _pack(self) -> None:
        """Pack the loose records into `PackedRun`s: those whose bytes frame again to the same record."""
        rebuild, slots = self.rebuild, self._slots
        assert rebuild is not None
        stretch: list[FrameRecord] = []
        for index in range(self._loose_from, len(slots)):
            record = slots[index]
            if type(record) is tuple and type(record[_RAW]) is bytes and \
                    rebuild(record[_RAW], index, record[_OFFSET], record[_LINE]) == record:
                stretch.append(record)
                continue
            self._packed(stretch)
            stretch = []
        self._packed(stretch)
        self._loose_from = len(slots)

    def _packed(self, stretch: list[FrameRecord]) -> None:
        if len(stretch) >= _MIN_PACK:
            run = PackedRun(stretch, self.rebuild)  # type: ignore[arg-type]
            self._slots[run.first : run.first + run.count] = [run] * run.count

    def clear(self) -> None:
        """Let go of every frame (a fold that keeps no trace, once it has ended)."""
        self._slots = []
        self._loose_from = 0
        self.stream = None

    def replace_last(self, record: FrameRecord) -> None:
        """The last frame again, now complete (SSE: its raw got the LF after a CR)."""
        assert type(self._slots[-1]) is tuple and self._slots[-1][_INDEX] == record[_INDEX]
        self._slots[-1] = record

    # -- the FrameView of dialects and the fold: read without making records of runs ------

    def event(self, index: int) -> str | None:
        """The `event` field of frame `index` (its `:event-type` in a binary stream)."""
        slot = self._slots[index]
        if type(slot) is tuple:
            return slot[_EVENT]
        assert isinstance(slot, FrameRun)
        return slot.event(index)

    def headers(self, index: int) -> tuple[tuple[str, Any], ...]:
        """The transport headers of frame `index` (AWS event-stream); () for text framings."""
        slot = self._slots[index]
        if type(slot) is tuple:
            return slot[_HEADERS]
        assert isinstance(slot, FrameRun)
        return slot.headers(index)

    def raw(self, index: int) -> bytes:
        """The bytes of frame `index`, as they came."""
        return make_frame(self[index]).raw

    def dataless(self) -> Iterator[tuple[int, bytes]]:
        """(index, raw bytes) of each frame without data (comments, keep-alives, stray lines).
        Every frame a framer's run holds has data, so only records and packed records are read."""
        slots, position = self._slots, 0
        while position < len(slots):
            slot = slots[position]
            if type(slot) is tuple:
                if slot[_DATA] is None and type(slot[_RAW]) is bytes:
                    yield slot[_INDEX], slot[_RAW]
                position += 1
            else:
                assert isinstance(slot, FrameRun)
                if isinstance(slot, PackedRun):
                    yield from slot.dataless()
                position += slot.count

    def where(self, index: int) -> tuple[int, int]:
        """The byte offset and line of frame `index`."""
        record = self[index]
        return record[_OFFSET], record[_LINE]

    def terminated(self, index: int) -> bool:
        """Did frame `index` get its terminator (a blank line, a newline, a closing bracket)?"""
        return self[index][_TERMINATED]

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


class FrameView(Protocol):
    """What a dialect may read of the frames: how many there are so far, and of frame i its
    event name, transport headers, raw bytes and whether it got its terminator (a stream with no
    end event ends where the server closed it after a whole frame); and which frames had no data.
    Nothing else of framing (records, runs, stores) is a dialect's business."""

    def __len__(self) -> int: ...
    def event(self, index: int) -> str | None: ...
    def headers(self, index: int) -> tuple[tuple[str, Any], ...]: ...
    def raw(self, index: int) -> bytes: ...
    def terminated(self, index: int) -> bool: ...
    def dataless(self) -> Iterator[tuple[int, bytes]]: ...
