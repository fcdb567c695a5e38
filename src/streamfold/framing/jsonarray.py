"""Streamed JSON array framing (Gemini `streamGenerateContent` without `alt=sse`).

The body is `[`, then complete objects separated by `,` (vendors put `\\r\\n`
around them and pretty-print each object), then `]`. It is only valid JSON
once the `]` arrives, so elements are cut out as they complete: a small
scanner follows bracket depth and string/escape state, jumping between the
bytes that matter with a regex, and resumes where it stopped on the next
`feed` (never rescanning, so one element fed a byte at a time stays linear).

The same scanner also frames a bare sequence of JSON objects (a
pretty-printed error body, concatenated JSON), since `[`, `,` and `]` are
simply skipped between elements. Anything else between elements is cut at the
end of its line into a frame of its own, which decoding will report.
"""

from __future__ import annotations

import re

from ._records import FrameRecord, new_record
from .frame import DEFAULT_MAX_FRAME_SIZE, FrameIssue
from .framer import Framer
from .utf8 import decode

__all__ = ["JSONArrayParser"]

_BOM = b"\xef\xbb\xbf"
_BETWEEN = re.compile(rb"[^ \t\r\n,]")
# A run of opening or of closing brackets is one step of the scanner (deep nesting is not a loop per byte).
_STRUCTURE = re.compile(rb'[{\[]+|[}\]]+|"')
_STRING_END = re.compile(rb'["\\]')
# Junk between elements ends where a separator, bracket or line end begins.
_JUNK_END = re.compile(rb"[,\[\]{\r\n]")

_OUTSIDE, _ELEMENT, _STRING, _JUNK = range(4)


class JSONArrayParser(Framer):
    """Incremental, sans-I/O splitter of a streamed JSON array into its elements."""

    def __init__(self, *, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        super().__init__(max_frame_size=max_frame_size)
        #: True once the array's closing `]` was seen.
        self.saw_end = False
        self._opened = False
        self._buf = bytearray()
        self._base = 0  # stream offset of _buf[0]
        self._line = 1  # line number of _buf[0]
        self._after_cr = False  # the byte before _buf[0] was a CR
        self._scan = 0  # where scanning resumes in _buf
        self._state = _OUTSIDE
        self._depth = 0
        self._at_stream_start = True
        # An element over max_frame_size: (kept head, offset, line, bytes dropped so far).
        self._oversized: tuple[bytes, int, int, int] | None = None

    def feed_records(self, chunk: bytes) -> list[FrameRecord]:
        """Take the next bytes of the stream; return the elements they completed, as records."""
        chunk = self._accept(chunk)
        frames: list[FrameRecord] = []
        if chunk:
            self._buf += chunk
            self._run(frames, final=False)
        return frames

    def close_records(self) -> list[FrameRecord]:
        """End the stream: an element still open becomes an unterminated frame."""
        self._end()
        frames: list[FrameRecord] = []
        self._run(frames, final=True)
        if self._oversized is not None:
            frames.append(self._oversized_frame(len(self._buf), terminated=False))
        elif self._state != _OUTSIDE and self._buf:
            frames.append(self._element(len(self._buf), terminated=False))
        self._state = _OUTSIDE
        return frames

    def _run(self, frames: list[FrameRecord], *, final: bool) -> None:
        buf = self._buf
        if self._at_stream_start:
            if len(buf) < 3 and _BOM.startswith(bytes(buf)) and not final:
                return
            self._at_stream_start = False
            if buf.startswith(_BOM):
                self._consume(3, count_lines=False)
        pos = self._scan
        end = len(buf)
        while pos < end:
            state = self._state
            if state == _OUTSIDE:
                found = _BETWEEN.search(buf, pos)
                if found is None:
                    pos = end
                    break
                pos = found.start()
                byte = buf[pos]
                if byte == 0x5B and not self._opened:  # "["
                    self._opened = True
                    pos += 1
                    continue
                if byte == 0x5D:  # "]"
                    self.saw_end = True
                    pos += 1
                    continue
                # An element (or junk) starts here: drop what came before so
                # that elements always begin at _buf[0].
                self._consume(pos)
                end = len(buf)
                pos = 0
                if byte in (0x7B, 0x5B):  # "{" "["
                    self._state, self._depth = _ELEMENT, 1
                    pos = 1
                elif byte == 0x22:  # a string element
                    self._state, self._depth = _STRING, 0
                    pos = 1
                else:
                    self._state = _JUNK
            elif state == _ELEMENT:
                found = _STRUCTURE.search(buf, pos)
                if found is None:
                    pos = end
                    break
                start, pos = found.span()
                byte = buf[start]
                if byte == 0x22:
                    self._state = _STRING
                elif byte in (0x7B, 0x5B):
                    self._depth += pos - start
                elif pos - start < self._depth:
                    self._depth -= pos - start
                else:  # the element closes inside this run
                    pos = self._complete(start + self._depth, frames)
                    self._depth = 0
                    end = len(buf)
            elif state == _STRING:
                found = _STRING_END.search(buf, pos)
                if found is None:
                    pos = end
                    break
                if buf[found.start()] == 0x5C:  # backslash: skip the escaped byte
                    if found.start() + 1 >= end:
                        pos = found.start()
                        break
                    pos = found.start() + 2
                    continue
                pos = found.end()
                self._state = _ELEMENT
                if self._depth == 0:
                    pos = self._complete(pos, frames)
                    end = len(buf)
            else:  # _JUNK runs to the next separator, bracket or line end
                found = _JUNK_END.search(buf, pos)
                if found is None:
                    pos = end
                    break
                pos = self._complete(found.start(), frames)
                end = len(buf)
        self._scan = pos
        if self._state == _OUTSIDE:
            self._consume(pos)
            self._scan = 0
        elif self._oversized is not None:
            self._drop(pos)
        elif pos > self.max_frame_size:
            self._oversized = (bytes(buf[: self.max_frame_size]), self._base, self._line, 0)
            self._drop(pos)

    def _complete(self, stop: int, frames: list[FrameRecord]) -> int:
        """The element ending at `stop` is complete: emit it and drop its bytes."""
        if self._oversized is None and stop > self.max_frame_size:
            self._oversized = (bytes(self._buf[: self.max_frame_size]), self._base, self._line, 0)
        if self._oversized is not None:
            frames.append(self._oversized_frame(stop, terminated=True))
        else:
            frames.append(self._element(stop, terminated=True))
        self._state = _OUTSIDE
        return 0

    def _element(self, stop: int, *, terminated: bool) -> FrameRecord:
        raw = bytes(self._buf[:stop])
        offset, line = self._base, self._line
        text, issues = decode(raw, offset, line)
        self._consume(stop)
        frame = new_record(self._index, offset, line, None, text, None, None, (), raw, terminated, issues, ())
        self._index += 1
        return frame

    def _drop(self, stop: int) -> None:
        """Discard the scanned part of an oversized element, remembering how much."""
        assert self._oversized is not None
        head, offset, line, dropped = self._oversized
        self._consume(stop)
        self._oversized = (head, offset, line, dropped + stop)
        self._scan = 0

    def _oversized_frame(self, stop: int, *, terminated: bool) -> FrameRecord:
        assert self._oversized is not None
        head, offset, line, dropped = self._oversized
        self._oversized = None
        self._consume(stop)
        size = dropped + stop
        issue = FrameIssue(
            "frame-too-large",
            offset,
            line,
            f"element of {size} bytes exceeds max_frame_size={self.max_frame_size}; "
            f"its first {len(head)} bytes are kept in raw and the rest was dropped",
        )
        frame = new_record(self._index, offset, line, None, None, None, None, (), head, terminated, (issue,), ())
        self._index += 1
        return frame

    def _consume(self, count: int, *, count_lines: bool = True) -> None:
        if count <= 0:
            return
        buf = self._buf
        if count_lines:
            crlf = buf.count(b"\r\n", 0, count)
            if self._after_cr and buf[0] == 0x0A:
                crlf += 1  # a CRLF split across two consumed regions
            self._line += buf.count(b"\n", 0, count) + buf.count(b"\r", 0, count) - crlf
        self._after_cr = buf[count - 1] == 0x0D
        self._base += count
        del buf[:count]

