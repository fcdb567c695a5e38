"""Server-sent events framing: the WHATWG "event stream interpretation", exactly.

https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation

Strategy. Bytes are split into lines on CR, LF and CRLF only (never
`str.splitlines()`, which also splits on U+2028 and friends that JSON carries
unescaped). A line whose terminator has not arrived yet is kept as a list of
fragments and joined once, so a huge `data:` line fed in small pieces stays
linear. A CR that ends a read is held back until the next byte shows whether
it is half of a CRLF; this keeps `raw` (and therefore every offset) the same
however the bytes were chunked. When that CR ends a blank line the frame is
complete already ("a single CR" ends a line): `held_frame()` gives it, for the
fold to use at once. Each complete line is decoded from UTF-8 on its own (see
`utf8`), then interpreted.

This module is the spec, read top to bottom. The fold uses
`_runs.SSERunParser`, the same parser with one speed trick: long regions of
simple blocks are kept as runs (tests hold both to the same frames).

Where a debugger must differ from a browser, it reports instead of dropping:
a block without `data` (comments, `event: ping`, id/retry only) is still a
frame with `data=None`; a final block with no blank line after it is a frame
with `terminated=False` (made of its complete lines); ignored fields become
`FrameIssue`s. A final line with no line end is discarded as the spec says
(nothing of it is interpreted, it is in no frame) and reported in
`stream_issues` ("unterminated-final-line").
"""

from __future__ import annotations

import difflib

from ._block import GROUP, CappedIssues, comments_for_record, join_tail
from ._records import FrameRecord, FramerOutput, new_record
from .frame import DEFAULT_MAX_FRAME_SIZE, FrameIssue
from .framer import Framer
from .utf8 import decode

__all__ = ["SSEParser"]

_CR = 0x0D
_LF = 0x0A
_COLON = 0x3A
_KNOWN_FIELDS = ("data", "event", "id", "retry")
# Python refuses int() of longer digit strings (sys.int_info.default_max_str_digits).
_MAX_RETRY_DIGITS = 4300


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
        # The block's lines, data lines, comments and issues: none kept as an object per line (`_block`).
        self._block_lines: list[bytes] = []
        self._block_groups = 0
        self._block_size = 0
        self._block_offset = 0
        self._block_line = 0
        self._data: list[str] = []
        self._data_groups = 0
        self._event: str | None = None
        self._id: str | None = None
        self._retry: int | None = None
        self._comments: list[str] = []
        self._comment_groups = 0
        self._issues: CappedIssues | None = None

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
        self._take(chunk, frames)
        return frames

    def _take(self, chunk: bytes, frames: list[FramerOutput]) -> None:
        """Interpret a chunk (after the BOM and a held CR). `_runs.SSERunParser` takes long
        regions of simple blocks its own way; this is the spec's way, line by line."""
        self._take_chunk(chunk, frames)

    def _take_chunk(self, chunk: bytes, frames: list[FramerOutput]) -> None:
        """Split into lines, join the first to the partial one, keep the tail."""
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

    def held_frame(self) -> FrameRecord | None:
        """A CR ended the last chunk and the blank line it ends dispatches the block: "a single
        CR" is a line end, so the frame is complete, whatever comes next. Only its raw is not:
        an LF next would be the second half of a CRLF, and is part of it. This is its record as
        the next byte (or close) will give it, with the CR alone; None when no frame waits so."""
        if not self._held_cr or self._partial or self._skipping is not None or not self._block_lines:
            return None
        if self._block_size + 2 > self.max_frame_size:
            return None  # "\r\n" would make it too large: that frame will not be this one
        return new_record(self._index, self._block_offset, self._block_line, self._event,
                          "\n".join(self._data) if self._data else None, self._id, self._retry,
                          comments_for_record(self._comments, self._comment_groups),
                          b"".join(self._block_lines) + b"\r", True, self._listed_issues(), ())

    def close_records(self) -> list[FramerOutput]:
        """End the stream: flush a final line and block that never got their terminators."""
        self._end()
        frames: list[FramerOutput] = []
        self._add_partial(self._unfinished_bom())
        if self._held_cr:
            self._held_cr = False
            self._finish_partial(b"\r", frames)
        elif self._partial_size:
            if self._skipping is not None and self._skipping[3] > self.max_frame_size:
                self._finish_partial(b"", frames)  # in a block already too large: its frame says what was dropped
            else:
                self._discard_partial(frames)
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

    def _discard_partial(self, frames: list[FramerOutput]) -> None:
        """At close, a line whose terminator never came: "Once the end of the file is reached,
        any pending data must be discarded." It is not interpreted (no data, comment, id or
        retry comes of it) and is in no frame; `stream_issues` says where it was and what it held."""
        size = self._partial_size
        line = b"".join(self._partial)
        self._partial.clear()
        self._partial_size = 0
        if self._skipping is not None:
            # Only this line made the block too large: its complete lines are the frame after all.
            head, self._offset, self._line, block = self._skipping
            self._skipping = None
            self._take_lines(head[:block].splitlines(keepends=True), frames)
            line = head[block:]
        text, _ = decode(line, self._offset, self._line)
        shown = text if len(text) <= 80 else text[:77] + "..."
        self.stream_issues = (FrameIssue(
            "unterminated-final-line", self._offset, self._line,
            f"the stream ended in the middle of line {self._line} (byte {self._offset}): its {size} bytes "
            f"{shown!r} have no line end, so they were discarded, as the SSE spec says (a spec-exact client, such "
            "as a browser's EventSource, never sees them)",
            text),)
        self._offset += size

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
            if len(self._block_lines) - self._block_groups > GROUP:
                self._block_groups = join_tail(self._block_lines, self._block_groups, b"")
            self._block_size += length
            if self._block_size > self.max_frame_size:
                self._start_skipping()
            else:
                self._interpret(content)
            self._offset += length
            self._line += 1

    def _interpret(self, content: bytes) -> None:
        text, issues = decode(content, self._offset, self._line)
        if issues:
            if self._issues is None:
                self._issues = CappedIssues()
            self._issues.extend(issues)
        if content[0] == _COLON:
            # "If the line starts with a U+003A COLON character: Ignore the line."
            self._comments.append(text[2:] if text[1:2] == " " else text[1:])
            if len(self._comments) - self._comment_groups > GROUP:
                self._comment_groups = join_tail(self._comments, self._comment_groups, "\n")
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
            if len(self._data) - self._data_groups > GROUP:
                self._data_groups = join_tail(self._data, self._data_groups, "\n")
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
        if self._issues is None:
            self._issues = CappedIssues()
        self._issues.add(FrameIssue(code, self._offset, self._line, message, text))

    def _listed_issues(self) -> tuple[FrameIssue, ...]:
        return () if self._issues is None else self._issues.listed()

    def _dispatch(self, *, terminated: bool) -> FrameRecord:
        frame = new_record(
            self._index,
            self._block_offset,
            self._block_line,
            self._event,
            "\n".join(self._data) if self._data else None,
            self._id,
            self._retry,
            comments_for_record(self._comments, self._comment_groups),
            b"".join(self._block_lines),
            terminated,
            self._listed_issues(),
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
        frame = new_record(self._index, offset, line, None, None, None, None, (), head, terminated, (issue,), ())
        self._index += 1
        return frame


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
