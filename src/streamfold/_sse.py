"""Server-sent events framing: the WHATWG "event stream interpretation", exactly.

https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation

Strategy. Bytes are split into lines on CR, LF and CRLF only (never
`str.splitlines()`, which also splits on U+2028 and friends that JSON carries
unescaped). A line whose terminator has not arrived yet is kept as a list of
fragments and joined once, so a huge `data:` line fed in small pieces stays
linear. A CR that ends a read is held back until the next byte shows whether
it is half of a CRLF; this keeps `raw` (and therefore every offset) the same
however the bytes were chunked. Each complete line is decoded from UTF-8 on
its own (see `_utf8`), then interpreted.

Where a debugger must differ from a browser, it reports instead of dropping:
a block without `data` (comments, `event: ping`, id/retry only) is still a
frame with `data=None`; a final block with no blank line after it is a frame
with `terminated=False`; ignored fields become `FrameIssue`s.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from itertools import repeat

from ._frames import (DATA_SPACE, DATA_TIGHT, DEFAULT_MAX_FRAME_SIZE, EVENT, FrameIssue, FrameRecord, Framer,
                      FramerOutput, SplitRun)
from ._utf8 import decode

__all__ = ["DataRun", "SSEParser"]

_CR = 0x0D
_LF = 0x0A
_COLON = 0x3A
_KNOWN_FIELDS = ("data", "event", "id", "retry")
# Python refuses int() of longer digit strings (sys.int_info.default_max_str_digits).
_MAX_RETRY_DIGITS = 4300
# Fewer blocks than this in a region are made into records right away: a run
# only pays for itself when it saves many records.
_MIN_RUN = 8


class SSEParser(Framer):
    """Incremental, sans-I/O SSE splitter.

    `feed(chunk)` returns the frames that chunk completed; `close()` ends the
    stream and returns the final, possibly unterminated, frame. Nothing a
    stream contains makes these raise; only misuse does (`feed` after
    `close`, a `str` instead of bytes).
    """

    def __init__(self, *, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        super().__init__(max_frame_size=max_frame_size)
        #: The WHATWG last-event-id buffer: survives dispatch, per the spec.
        self.last_event_id = ""
        # The line being received: its fragments (without terminator) and
        # whether it ended in a CR whose LF may still come.
        self._partial: list[bytes] = []
        self._partial_size = 0
        self._held_cr = False
        # Where the next complete line starts.
        self._offset = 0
        self._line = 1
        self._reset_block()
        # Oversized block being skipped: its kept head, offset and line.
        self._skipping: tuple[bytes, int, int, int] | None = None

    def _reset_block(self) -> None:
        self._block_lines: list[bytes] = []
        self._block_size = 0
        self._block_offset = 0
        self._block_line = 0
        self._data: list[str] = []
        self._event: str | None = None
        self._id: str | None = None
        self._retry: int | None = None
        self._comments: list[str] = []
        self._issues: list[FrameIssue] = []

    # -- public API ---------------------------------------------------------

    def feed_records(self, chunk: bytes) -> list[FramerOutput]:
        """Take the next bytes of the stream; return the frames they completed, as records and runs."""
        chunk = self._accept(chunk)
        if not chunk:
            return []
        frames: list[FramerOutput] = []
        if self._at_stream_start:
            chunk = self._strip_bom(chunk)
            if not chunk:
                return frames
        if self._held_cr:
            # The held CR is a line end either way; an LF right after it
            # belongs to the same terminator.
            self._held_cr = False
            if chunk[0] == _LF:
                self._finish_partial(b"\r\n", frames)
                chunk = chunk[1:]
                if not chunk:
                    return frames
            else:
                self._finish_partial(b"\r", frames)
        if self._partial or self._block_lines or self._skipping is not None:
            # Finish the open block line by line; past its blank line, go fast.
            first = chunk.find(b"\n\n")
            if first < 0:
                self._take_chunk(chunk, frames)
                return frames
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
        return frames

    def _take_chunk(self, chunk: bytes, frames: list[FramerOutput]) -> None:
        """The general path: split into lines, join the first to the partial one, keep the tail."""
        if _LF not in chunk and _CR not in chunk:
            self._add_partial(chunk)
            return
        lines = chunk.splitlines(keepends=True)
        tail = lines.pop() if lines[-1][-1] != _LF else b""
        if lines:
            if self._partial or self._skipping is not None:
                first = lines[0]
                end = 2 if first.endswith(b"\r\n") else 1
                self._add_partial(first[:-end])
                self._finish_partial(first[-end:], frames)
                del lines[0]
            self._take_lines(lines, frames)
        if tail:
            if tail[-1] == _CR:
                # Could be half of a CRLF: decide when the next byte arrives.
                self._add_partial(tail[:-1])
                self._held_cr = True
            else:
                self._add_partial(tail)

    def close_records(self) -> list[FramerOutput]:
        """End the stream: flush a final line and block that never got their terminators."""
        self._end()
        frames: list[FramerOutput] = []
        self._add_partial(self._unfinished_bom())
        if self._held_cr:
            self._held_cr = False
            self._finish_partial(b"\r", frames)
        elif self._partial or self._partial_size:
            self._finish_partial(b"", frames)
        if self._skipping is not None:
            frames.append(self._oversized_frame(terminated=False))
        elif self._block_lines:
            frames.append(self._dispatch(terminated=False))
        return frames

    # -- lines --------------------------------------------------------------

    def _add_partial(self, fragment: bytes) -> None:
        if not fragment:
            return
        self._partial_size += len(fragment)
        if self._skipping is not None:
            return
        self._partial.append(fragment)
        if self._block_size + self._partial_size > self.max_frame_size:
            self._start_skipping()

    def _finish_partial(self, terminator: bytes, frames: list[FramerOutput]) -> None:
        """The line held in fragments got its terminator: interpret it."""
        size = self._partial_size + len(terminator)
        blank = self._partial_size == 0
        if self._skipping is not None:
            self._partial_size = 0
            self._skip_line(size, blank, frames)
            return
        line = b"".join(self._partial) + terminator
        self._partial.clear()
        self._partial_size = 0
        self._take_lines([line], frames)

    def _take_lines(self, lines: list[bytes], frames: list[FramerOutput]) -> None:
        """Interpret complete lines (each ends with its terminator, except at EOF)."""
        for line in lines:
            if self._skipping is not None:
                self._skip_line(len(line), line in (b"\n", b"\r\n", b"\r"), frames)
                continue
            length = len(line)
            if line[-1] == _LF:
                content = line[:-2] if length > 1 and line[-2] == _CR else line[:-1]
            elif line[-1] == _CR:
                content = line[:-1]
            else:
                content = line  # the unterminated last line, at close()
            if not content:
                # "If the line is empty (a blank line): Dispatch the event."
                if self._block_lines:
                    if self._block_size + length > self.max_frame_size:
                        # Only the dispatching blank line tips it over the limit.
                        self._start_skipping()
                        self._skip_line(length, True, frames)
                        continue
                    self._block_lines.append(line)
                    frames.append(self._dispatch(terminated=True))
                self._offset += length
                self._line += 1
                continue
            if not self._block_lines:
                self._block_offset = self._offset
                self._block_line = self._line
            self._block_lines.append(line)
            self._block_size += length
            if self._block_size > self.max_frame_size:
                self._start_skipping()
            else:
                self._interpret(content)
            self._offset += length
            self._line += 1

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

    def _interpret(self, content: bytes) -> None:
        text, issues = decode(content, self._offset, self._line)
        if issues:
            self._issues.extend(issues)
        if content[0] == _COLON:
            # "If the line starts with a U+003A COLON character: Ignore the line."
            self._comments.append(text[2:] if text[1:2] == " " else text[1:])
            return
        colon = text.find(":")
        if colon < 0:
            # "...the whole line as the field name, and the empty string as the field value."
            name, value = text, ""
        else:
            name = text[:colon]
            value = text[colon + 2 :] if text[colon + 1 : colon + 2] == " " else text[colon + 1 :]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\x00" in value:
                # "If the field value does not contain U+0000 NULL, then set the
                # last event ID buffer to the field value. Otherwise, ignore the field."
                self._issue("invalid-id", "id contains U+0000 NULL; the spec ignores the field", text)
            else:
                self._id = value
                self.last_event_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                if len(value) <= _MAX_RETRY_DIGITS:
                    self._retry = int(value)
                else:
                    # Valid per spec, but int() refuses it (and no client can wait that long).
                    self._issue("invalid-retry", f"retry value has {len(value)} digits; ignored", text)
            else:
                self._issue(
                    "invalid-retry",
                    f"retry value {value!r} is not made only of ASCII digits; the spec ignores it",
                    text,
                )
        else:
            self._issue("unknown-field", _unknown_field_message(name), text)

    def _issue(self, code: str, message: str, text: str) -> None:
        self._issues.append(FrameIssue(code, self._offset, self._line, message, text))

    def _dispatch(self, *, terminated: bool) -> FrameRecord:
        frame = (
            self._index,
            self._block_offset,
            self._block_line,
            self._event,
            "\n".join(self._data) if self._data else None,
            self._id,
            self._retry,
            tuple(self._comments),
            b"".join(self._block_lines),
            terminated,
            tuple(self._issues),
            (),
        )
        self._index += 1
        self._reset_block()
        return frame

    # -- oversized blocks ---------------------------------------------------

    def _start_skipping(self) -> None:
        """The block outgrew max_frame_size: keep its head, drop the rest until it ends.

        Offsets do not move here: lines already taken advanced them, and the
        line being received is counted when it completes (`_skip_line`).
        """
        if not self._block_lines:
            self._block_offset = self._offset
            self._block_line = self._line
        head = b"".join(self._block_lines + self._partial)[: self.max_frame_size]
        self._skipping = (head, self._block_offset, self._block_line, self._block_size)
        self._partial.clear()
        self._reset_block()

    def _skip_line(self, length: int, blank: bool, frames: list[FramerOutput]) -> None:
        assert self._skipping is not None
        head, offset, line, size = self._skipping
        self._skipping = (head, offset, line, size + length)
        self._offset += length
        self._line += 1
        if blank:
            frames.append(self._oversized_frame(terminated=True))

    def _oversized_frame(self, *, terminated: bool) -> FrameRecord:
        assert self._skipping is not None
        head, offset, line, size = self._skipping
        self._skipping = None
        issue = FrameIssue(
            "frame-too-large",
            offset,
            line,
            f"frame of {size} bytes exceeds max_frame_size={self.max_frame_size}; "
            f"its first {len(head)} bytes are kept in raw and the rest was dropped",
        )
        frame: FrameRecord = (self._index, offset, line, None, None, None, None, (), head, terminated, (issue,), ())
        self._index += 1
        return frame


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
        return self.record(index)[EVENT]

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
    return (index, offset, line, None, text, None, None, (), DATA_SPACE if spaced else DATA_TIGHT, True, (), ())


def event_block_record(piece: bytes, index: int, offset: int, line: int) -> FrameRecord:
    """The record of a block that is an `event:` line then a `data:` line (`piece`, without its "\\n\\n")."""
    name, _, data = piece.partition(b"\n")
    try:
        event = (name[7:] if name[6:7] == b" " else name[6:]).decode()
        text = (data[6:] if data[5:6] == b" " else data[5:]).decode()
    except UnicodeDecodeError:
        return _records_by_lines(piece, index, offset, line)
    return (index, offset, line, event, text, None, None, (), piece + b"\n\n", True, (), ())


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
    parser = SSEParser(max_frame_size=len(piece) + 2)
    parser._offset, parser._line, parser._index = offset, line, index
    frames: list[FramerOutput] = []
    parser._take_lines((piece + b"\n\n").splitlines(keepends=True), frames)
    record = frames[0]
    assert type(record) is tuple
    return record


def _unknown_field_message(name: str) -> str:
    hint = ""
    folded = name.strip().lower()
    if folded in _KNOWN_FIELDS:
        hint = f"; did you mean `{folded}:`? (field names are case-sensitive and exact)"
    else:
        close = difflib.get_close_matches(folded, _KNOWN_FIELDS, n=1, cutoff=0.6)
        if close:
            hint = f"; did you mean `{close[0]}:`?"
    return f"unknown field {name!r} is ignored by SSE clients{hint}"
