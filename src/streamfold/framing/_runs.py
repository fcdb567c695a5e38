"""Runs: the one speed trick of framing, kept apart from the parsers it speeds up.

A long stream is mostly frames of one simple shape: SSE blocks that are one
`data:` line (OpenAI chat, Gemini), or an `event:` line and a `data:` line
(Anthropic, Responses, Cohere), maybe with an `id:` or `retry:` line (MCP,
gateways that make streams resumable), and NDJSON lines that are frames as
they stand (Ollama). `SSERunParser` and `NDJSONRunParser` are the plain parsers of
`sse` and `ndjson` with one change: a stretch of such frames, checked in C
over the whole chunk, is handed on as one run (`DataRun`, `LineRun`) that
stays bytes; no record and no decoded string is made per frame until
something reads it, and then it is the record the plain parser makes. The
fold decodes a run's payloads straight from its bytes (`pieces()`).
`tests/folding/test_fast_paths.py` holds both parsers to the same frames.
"""

from __future__ import annotations

from ._records import DATA_SPACE, DATA_TIGHT, FrameRecord, FramerOutput, Rebuild, SplitRun, new_record
from .ndjson import NDJSONParser, line_record
from .sse import _MAX_RETRY_DIGITS, SSEParser

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

        A region whose blocks all have one layout of simple fields (one `data:` line, and at most
        one `event:`, `id:` and `retry:` line each, in the same order in every block) becomes one
        `DataRun`, checked in C over the whole region. Otherwise, blocks of one layout in a row
        still become runs, or records right here when there are few of them; any other block goes
        through the line-by-line interpretation, which gives the same record, only slower.
        """
        offset, line, index = self._offset, self._line, self._index
        if len(region) <= self.max_frame_size - 2:
            lines = region.split(b"\n")
            # Blocks and the blank lines between them at fixed places, each field's lines checked by
            # min/max against its name: compared in C, not once per block.
            period = _period(lines)
            if period and len(lines) >= period * _MIN_RUN - 1 and len(lines) % period == period - 1:
                layout = _layout(lines[: period - 1])
                if layout is not None and not any(lines[period - 1 :: period]) and _columns_hold(lines, layout):
                    run = _data_run(index, offset, line, region, layout, lines)
                    frames.append(run)
                    self._offset, self._line = offset + len(region) + 2, line + run.lines_per_frame * run.count
                    self._index = index + run.count
                    self._note_id(_last_id(lines, layout))
                    return
        limit = self.max_frame_size - 2
        group: list[bytes] = []  # blocks of one layout in a row, not framed yet
        group_layout: Layout | None = None
        group_at = (index, offset, line)
        for piece in region.split(b"\n\n"):
            layout = _block_layout(piece)
            if layout is not None and len(piece) <= limit:
                if layout != group_layout:
                    if group:
                        self._frame_group(group, group_layout, *group_at, frames)
                    group, group_layout, group_at = [], layout, (index, offset, line)
                group.append(piece)
                index += 1
                offset += len(piece) + 2
                line += len(layout) + 1
                continue
            if group:
                self._frame_group(group, group_layout, *group_at, frames)
                group, group_layout = [], None
            self._offset, self._line, self._index = offset, line, index
            self._take_lines((piece + b"\n\n").splitlines(keepends=True), frames)
            offset, line, index = self._offset, self._line, self._index
        if group:
            self._frame_group(group, group_layout, *group_at, frames)
        self._offset, self._line, self._index = offset, line, index

    def _frame_group(self, blocks: list[bytes], layout: Layout | None, index: int, offset: int, line: int,
                     frames: list[FramerOutput]) -> None:
        """Blocks of one layout in a row: a run when there are enough of them, else records."""
        assert layout is not None
        if len(blocks) >= _MIN_RUN:
            region = b"\n\n".join(blocks)
            if layout == _DATA_ONLY:
                frames.append(DataRun(index, offset, line, region, layout, blocks))
                return
            lines = region.split(b"\n")
            if _columns_hold(lines, layout):
                frames.append(_data_run(index, offset, line, region, layout, lines))
                self._note_id(_last_id(lines, layout))
                return
        for block in blocks:
            record = block_record(block, layout, index, offset, line)
            frames.append(record)
            self._note_id(record[5])
            index += 1
            offset += len(block) + 2
            line += len(layout) + 1

    def _note_id(self, event_id: str | None) -> None:
        """A run or record set the WHATWG last-event-id buffer (as `_interpret` does line by line)."""
        if event_id is not None:
            self.last_event_id = event_id


#: The fields of a block's lines, in order: exactly one `data`, at most one of each other.
Layout = tuple[bytes, ...]
_DATA_ONLY: Layout = (b"data",)
_EVENT_DATA: Layout = (b"event", b"data")
# Each simple field's line prefix, and the least bytes above every line that has it.
_BOUNDS = {b"data": (b"data:", b"data;"), b"event": (b"event:", b"event;"), b"id": (b"id:", b"id;"),
           b"retry": (b"retry:", b"retry;")}


def _period(lines: list[bytes]) -> int:
    """Lines per block (its fields and the blank line after them) if the first block is at most
    four fields long, else 0."""
    try:
        return lines.index(b"", 0, 5) + 1
    except ValueError:
        return 0


def _block_layout(piece: bytes) -> Layout | None:
    """The layout of one block (without its blank line); the two common ones found without splitting it."""
    if piece[:5] == b"data:" and _LF not in piece:
        return _DATA_ONLY
    if piece[:6] == b"event:" and piece.count(_LF) == 1 and piece[piece.find(b"\n") + 1 :][:5] == b"data:":
        return _EVENT_DATA
    return _layout(piece.split(b"\n"))


def _layout(fields: list[bytes]) -> Layout | None:
    """The layout of a block's lines, or None when they are not simple fields."""
    names = tuple(field[: field.find(b":")] if b":" in field else b"" for field in fields)
    if names.count(b"data") != 1 or len(set(names)) != len(names) or not all(name in _BOUNDS for name in names):
        return None
    return names


def _columns_hold(lines: list[bytes], layout: Layout) -> bool:
    """Each block's lines (`lines`: the blocks and blank lines between them) are the fields of
    `layout` in order, and the fields the fold does not decode itself hold what the line parser
    takes without a finding: UTF-8 event names and ids, ids without NUL, retries of ASCII digits."""
    period = len(layout) + 1
    for column, name in enumerate(layout):
        values = lines[column::period]
        low, high = _BOUNDS[name]
        if not (min(values) >= low and max(values) < high):
            return False
        if name == b"retry":
            if not all(_valid_retry(_field_value(field)) for field in values):
                return False
        elif name != b"data":
            joined = b"\n".join(values)
            if not _utf8(joined) or (name == b"id" and b"\x00" in joined):
                return False
    return True


class DataRun(SplitRun):
    """SSE blocks of one layout of simple fields (`Layout`: one `data:` line, maybe an `event:`,
    `id:` and `retry:` line), with LF line ends, kept as the bytes they came in: `region` is the
    blocks joined by their blank lines, without the last one. Records are made when read, the
    same records the line-by-line path makes (a block with invalid UTF-8 goes through it, for its
    finding)."""

    __slots__ = ("_blocks", "_names", "layout")
    separator = b"\n\n"
    payload_start = 5  # after `data:` (the space, if any, is JSON whitespace)

    def __init__(self, first: int, offset: int, line: int, region: bytes, layout: Layout, blocks: list[bytes],
                 names: list[bytes] | None = None) -> None:
        super().__init__(first, len(blocks), offset, line, region, len(layout) + 1)
        self.layout = layout
        # The data lines and `event:` lines, split when the run was found, held until the fold takes them.
        self._blocks: list[bytes] | None = blocks
        self._names = names

    def pieces(self) -> list[bytes]:
        """The `data:` line of each block."""
        blocks, self._blocks = self._blocks, None
        return self._column(b"data") if blocks is None else blocks

    def event_lines(self) -> list[bytes] | None:
        """The `event:` line of each block; None for a run without them."""
        if b"event" not in self.layout:
            return None
        return self._column(b"event") if self._names is None else self._names

    def event(self, index: int) -> str | None:
        if b"event" not in self.layout:
            return None
        if self._names is not None:
            name = self._names[index - self.first]
            try:
                return _field_value(name).decode()
            except UnicodeDecodeError:
                pass
        return super().event(index)

    def release(self) -> None:
        self._blocks = self._names = None

    def _column(self, name: bytes) -> list[bytes]:
        return self.region.split(b"\n")[self.layout.index(name) :: self.lines_per_frame]

    def _record(self, piece: bytes, index: int, offset: int, line: int) -> FrameRecord:
        return block_record(piece, self.layout, index, offset, line)


def _data_run(index: int, offset: int, line: int, region: bytes, layout: Layout, lines: list[bytes]) -> DataRun:
    """The run of `region`, whose `lines` (split at LF) are blocks of `layout` and the blank lines between them."""
    period = len(layout) + 1
    names = lines[layout.index(b"event") :: period] if b"event" in layout else None
    return DataRun(index, offset, line, region, layout, lines[layout.index(b"data") :: period], names)


def _last_id(lines: list[bytes], layout: Layout) -> str | None:
    """The id the last block of `lines` sets (checked to be UTF-8 without NUL), if its layout has one."""
    if b"id" not in layout:
        return None
    return _field_value(lines[len(lines) - len(layout) + layout.index(b"id")]).decode()


def _valid_retry(value: bytes) -> bool:
    """Does the line parser take this `retry:` value without a finding? (`bytes.isdigit` is ASCII only.)"""
    return value.isdigit() and len(value) <= _MAX_RETRY_DIGITS


def _field_value(field: bytes) -> bytes:
    """What follows a field line's colon, less one space (the line's field name is known to be a simple one)."""
    value = field[field.find(b":") + 1 :]
    return value[1:] if value[:1] == b" " else value


def block_record(piece: bytes, layout: Layout, index: int, offset: int, line: int) -> FrameRecord:
    """The record of a block of `layout` (`piece`, without its "\\n\\n")."""
    if layout == _DATA_ONLY:
        return data_line_record(piece, index, offset, line)
    if layout == _EVENT_DATA:
        return event_block_record(piece, index, offset, line)
    fields: dict[bytes, str] = {}
    try:
        for field in piece.split(b"\n"):
            fields[field[: field.find(b":")]] = _field_value(field).decode()
    except UnicodeDecodeError:
        return _records_by_lines(piece, index, offset, line)
    event_id, retry = fields.get(b"id"), fields.get(b"retry")
    if ((event_id is not None and "\x00" in event_id)
            or (retry is not None and not _valid_retry(retry.encode()))):
        return _records_by_lines(piece, index, offset, line)  # for its finding
    return new_record(index, offset, line, fields.get(b"event"), fields[b"data"], event_id,
                      None if retry is None else int(retry), (), piece + b"\n\n", True, (), ())


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
        event = _field_value(name).decode()
        text = _field_value(data).decode()
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
