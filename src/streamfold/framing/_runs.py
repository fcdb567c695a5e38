"""Runs: the one speed trick of framing, kept apart from the parsers it speeds up.

A long stream is mostly frames of one simple shape: SSE blocks that are one
`data:` line (OpenAI chat, Gemini), or an `event:` line and a `data:` line
(Anthropic, Responses, Cohere), and NDJSON lines that are frames as they stand
(Ollama). `SSERunParser` and `NDJSONRunParser` are the plain parsers of
`sse` and `ndjson` with one change: a stretch of such frames, checked in C
over the whole chunk, is handed on as one run (`DataRun`, `LineRun`) that
stays bytes; no record and no decoded string is made per frame until
something reads it, and then it is the record the plain parser makes. The
fold decodes a run's payloads straight from its bytes (`pieces()`).
`tests/folding/test_fast_paths.py` holds both parsers to the same frames.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat

from ._records import DATA_SPACE, DATA_TIGHT, FrameRecord, FramerOutput, Rebuild, SplitRun, new_record
from .ndjson import NDJSONParser, line_record
from .sse import SSEParser

__all__ = ["REBUILD", "DataRun", "LineRun", "NDJSONRunParser", "SSERunParser"]

_CR = 0x0D
_LF = 0x0A
# Fewer frames than this in a region are made into records right away: a run
# only pays for itself when it saves many records.
_MIN_RUN = 8


class SSERunParser(SSEParser):
    """`SSEParser`, with regions of simple blocks (LF line ends only) taken as runs."""

    def _take(self, chunk: bytes, frames: list[FramerOutput]) -> None:
        if self._partial or self._block_lines or self._skipping is not None:
            # Finish the open block line by line; past its blank line, go fast.
            first = chunk.find(b"\n\n")
            if first < 0:
                self._take_chunk(chunk, frames)
                return
            self._take_chunk(chunk[: first + 2], frames)
            chunk = chunk[first + 2 :]
        cut = chunk.rfind(b"\n\n")
        if cut >= 0:
            region = chunk[:cut]
            if _CR not in region:
                self._take_blocks(region, frames)
                chunk = chunk[cut + 2 :]
        if chunk:
            self._take_chunk(chunk, frames)

    def _take_blocks(self, region: bytes, frames: list[FramerOutput]) -> None:
        """Blocks separated by blank lines, with LF line ends only (each piece plus "\\n\\n").

        A region made only of one-`data:`-line blocks, or only of `event:`-
        then-`data:` blocks, becomes one `DataRun`, checked in C over the whole
        region. Otherwise, one-`data:`-line blocks in a row still become runs;
        an `event:`-then-`data:` block becomes a record right here; any other
        block goes through the line-by-line interpretation, which gives the
        same record, only slower.
        """
        offset, line, index = self._offset, self._line, self._index
        if len(region) <= self.max_frame_size - 2:
            lines = region.split(b"\n")
            # Blocks and the blank lines between them at fixed places, each line checked by
            # min/max of the lines against its field name: compared in C, not once per block.
            run = None
            if len(lines) >= 2 * _MIN_RUN - 1 and len(lines) % 2 and not any(lines[1::2]):
                blocks = lines[::2]
                if min(blocks) >= b"data:" and max(blocks) < b"data;":
                    run = DataRun(index, offset, line, region, blocks)
            elif len(lines) >= 3 * _MIN_RUN - 1 and len(lines) % 3 == 2 and not any(lines[2::3]):
                # The other common stream (Anthropic, Responses, Cohere): `event:` and `data:` lines.
                names, blocks = lines[0::3], lines[1::3]
                if (min(names) >= b"event:" and max(names) < b"event;"
                        and min(blocks) >= b"data:" and max(blocks) < b"data;" and _utf8(b"\n".join(names))):
                    # (The fold checks the data lines' UTF-8 as it decodes them, not the event names.)
                    run = DataRun(index, offset, line, region, blocks, names)
            if run is not None:
                frames.append(run)
                self._offset, self._line = offset + len(region) + 2, line + run.lines_per_frame * run.count
                self._index = index + run.count
                return
        limit = self.max_frame_size - 2
        group: list[bytes] = []  # one-data-line blocks in a row, not framed yet
        group_at = (index, offset, line)
        for piece in region.split(b"\n\n"):
            if piece[:5] == b"data:" and _LF not in piece and len(piece) <= limit:
                if not group:
                    group_at = (index, offset, line)
                group.append(piece)
                index += 1
                offset += len(piece) + 2
                line += 2
                continue
            if group:
                _frame_group(group, *group_at, frames)
                group = []
            if (piece[:6] == b"event:" and piece.count(_LF) == 1 and len(piece) <= limit
                    and piece.partition(b"\n")[2][:5] == b"data:" and _CR not in piece):
                # The other common block (Anthropic, Responses, Cohere): `event: x` then one `data:` line.
                frames.append(event_block_record(piece, index, offset, line))
                index += 1
                offset += len(piece) + 2
                line += 3
                continue
            self._offset, self._line, self._index = offset, line, index
            self._take_lines((piece + b"\n\n").splitlines(keepends=True), frames)
            offset, line, index = self._offset, self._line, self._index
        if group:
            _frame_group(group, *group_at, frames)
        self._offset, self._line, self._index = offset, line, index


class DataRun(SplitRun):
    """SSE blocks that are each one `data:` line, or each an `event:` line and a `data:`
    line, with LF line ends, kept as the bytes they came in: `region` is the blocks joined
    by their blank lines, without the last one. Records are made when read, the same
    records the line-by-line path makes (a block with invalid UTF-8 goes through it, for
    its finding)."""

    __slots__ = ("_blocks", "_names")
    separator = b"\n\n"
    payload_start = 5  # after `data:` (the space, if any, is JSON whitespace)

    def __init__(self, first: int, offset: int, line: int, region: bytes, blocks: list[bytes],
                 names: list[bytes] | None = None) -> None:
        super().__init__(first, len(blocks), offset, line, region, 2 if names is None else 3)
        # The data lines and `event:` lines, split when the run was found, held until the fold takes them.
        self._blocks: list[bytes] | None = blocks
        self._names = names

    def pieces(self) -> list[bytes]:
        """The `data:` line of each block."""
        blocks, self._blocks = self._blocks, None
        if blocks is not None:
            return blocks
        lines = self.region.split(b"\n")
        return lines[::2] if self.lines_per_frame == 2 else lines[1::3]

    def event_lines(self) -> Iterable[bytes | None]:
        """The `event:` line of each block (None for every block of a data-only run)."""
        if self.lines_per_frame == 2:
            return repeat(None, self.count)
        return self.region.split(b"\n")[0::3] if self._names is None else self._names

    def event(self, index: int) -> str | None:
        if self.lines_per_frame == 2:
            return None
        if self._names is not None:
            name = self._names[index - self.first]
            try:
                return (name[7:] if name[6:7] == b" " else name[6:]).decode()
            except UnicodeDecodeError:
                pass
        return super().event(index)

    def release(self) -> None:
        self._blocks = self._names = None

    def _record(self, piece: bytes, index: int, offset: int, line: int) -> FrameRecord:
        if self.lines_per_frame == 2:
            return data_line_record(piece, index, offset, line)
        return event_block_record(piece, index, offset, line)


def _frame_group(blocks: list[bytes], index: int, offset: int, line: int, frames: list[FramerOutput]) -> None:
    """One-`data:`-line blocks in a row: a run when there are enough of them, else records."""
    if len(blocks) >= _MIN_RUN:
        frames.append(DataRun(index, offset, line, b"\n\n".join(blocks), blocks))
        return
    for block in blocks:
        frames.append(data_line_record(block, index, offset, line))
        index += 1
        offset += len(block) + 2
        line += 2


def data_line_record(piece: bytes, index: int, offset: int, line: int) -> FrameRecord:
    """The record of a block that is one `data:` line (`piece`, without its "\\n\\n")."""
    spaced = piece[5:6] == b" "
    try:
        text = piece[6:].decode() if spaced else piece[5:].decode()
    except UnicodeDecodeError:
        return _records_by_lines(piece, index, offset, line)
    return new_record(index, offset, line, None, text, None, None, (), DATA_SPACE if spaced else DATA_TIGHT,
                      True, (), ())


def event_block_record(piece: bytes, index: int, offset: int, line: int) -> FrameRecord:
    """The record of a block that is an `event:` line then a `data:` line (`piece`, without its "\\n\\n")."""
    name, _, data = piece.partition(b"\n")
    try:
        event = (name[7:] if name[6:7] == b" " else name[6:]).decode()
        text = (data[6:] if data[5:6] == b" " else data[5:]).decode()
    except UnicodeDecodeError:
        return _records_by_lines(piece, index, offset, line)
    return new_record(index, offset, line, event, text, None, None, (), piece + b"\n\n", True, (), ())


def _utf8(data: bytes) -> bool:
    if data.isascii():
        return True
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def _records_by_lines(piece: bytes, index: int, offset: int, line: int) -> FrameRecord:
    """The record of one block (`piece`, without its "\\n\\n") by the line-by-line interpretation."""
    record = _rebuild_sse(piece + b"\n\n", index, offset, line)
    assert record is not None  # one complete block makes one record
    return record


class NDJSONRunParser(NDJSONParser):
    """`NDJSONParser`, with stretches of lines that are each a frame as they stand taken as runs."""

    def _take_lines(self, lines: list[bytes], chunk: bytes, frames: list[FramerOutput]) -> None:
        # No CR, none blank or starting with whitespace, none too large: the checks run in C, over the list.
        if len(lines) >= _MIN_RUN and min(lines) >= b"!" and len(chunk) <= self.max_frame_size and 13 not in chunk:
            run = LineRun(self._index, self._offset, self._line, lines)
            frames.append(run)
            self._index += run.count
            self._offset += run.size + 1
            self._line += run.count
            return
        super()._take_lines(lines, chunk, frames)


class LineRun(SplitRun):
    """NDJSON lines that are each a frame as they stand (see `NDJSONParser.feed_records`),
    kept as the bytes they came in; records are made when read, as `_take_line` makes them."""

    __slots__ = ("_lines",)

    def __init__(self, first: int, offset: int, line: int, lines: list[bytes]) -> None:
        super().__init__(first, len(lines), offset, line, b"\n".join(lines), 1)
        self._lines: list[bytes] | None = lines  # held until the fold takes them

    def pieces(self) -> list[bytes]:
        lines, self._lines = self._lines, None
        return self.region.split(b"\n") if lines is None else lines

    def release(self) -> None:
        self._lines = None

    def _record(self, piece: bytes, index: int, offset: int, line: int) -> FrameRecord:
        return line_record(piece, piece + b"\n", index, offset, line)


def _rebuild_sse(raw: bytes, index: int, offset: int, line: int) -> FrameRecord | None:
    """An SSE block's record, framed again from its bytes (`PackedRun`)."""
    parser = SSEParser(max_frame_size=len(raw) + 2)
    parser._offset, parser._line, parser._index = offset, line, index
    frames: list[FramerOutput] = []
    parser._take_lines(raw.splitlines(keepends=True), frames)
    return frames[0] if len(frames) == 1 and type(frames[0]) is tuple else None


def _rebuild_ndjson(raw: bytes, index: int, offset: int, line: int) -> FrameRecord | None:
    """An NDJSON line's record, framed again from its bytes (`PackedRun`)."""
    if not raw.endswith(b"\n"):
        return None
    parser = NDJSONParser(max_frame_size=len(raw))
    parser._offset, parser._line, parser._index = offset, line, index
    frames: list[FramerOutput] = []
    parser._take_line(raw[:-1], b"\n", frames)
    return frames[0] if len(frames) == 1 and type(frames[0]) is tuple else None


#: transport -> how its records are framed again from their bytes, for `FrameStore` packing.
REBUILD: dict[str, Rebuild] = {"sse": _rebuild_sse, "ndjson": _rebuild_ndjson}
