"""NDJSON framing (Ollama native, Cohere v1): one JSON document per `\\n`-ended line.

A trailing CR is stripped, whitespace-only lines are skipped, and a last line
without its `\\n` is reported at `close()` as a frame with `terminated=False`.
Fragments of the line being received are joined once, so a long line fed in
small pieces stays linear.
"""

from __future__ import annotations

from ._records import FrameRecord, FramerOutput, new_record
from .frame import DEFAULT_MAX_FRAME_SIZE, FrameIssue
from .framer import Framer
from .utf8 import decode

__all__ = ["NDJSONParser"]


class NDJSONParser(Framer):
    """Incremental, sans-I/O NDJSON splitter with the same API as `SSEParser`."""

    def __init__(self, *, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        super().__init__(max_frame_size=max_frame_size)
        self._partial: list[bytes] = []
        self._partial_size = 0
        self._oversized_head: bytes | None = None
        self._offset = 0
        self._line = 1

    def feed_records(self, chunk: bytes) -> list[FramerOutput]:
        """Take the next bytes of the stream; return the lines they completed, as records and runs."""
        chunk = self._accept(chunk)
        frames: list[FramerOutput] = []
        chunk = self._strip_bom(chunk)
        if not chunk:
            return frames
        if 10 not in chunk:  # no LF: nothing completes
            self._add_partial(chunk)
            return frames
        lines = chunk.split(b"\n")
        tail = lines.pop()
        if self._partial or self._oversized_head is not None:
            self._add_partial(lines[0])
            self._take_line(self._take_partial(), b"\n", frames)
            del lines[0]
        self._take_lines(lines, chunk, frames)
        self._add_partial(tail)
        return frames

    def _take_lines(self, lines: list[bytes], chunk: bytes, frames: list[FramerOutput]) -> None:
        """Complete lines (without their LF) from `chunk`; `_runs.NDJSONRunParser` keeps long
        stretches of them as runs, this takes them one by one."""
        for line in lines:
            self._take_line(line, b"\n", frames)

    def close_records(self) -> list[FramerOutput]:
        """End the stream: a last line without `\\n` becomes an unterminated frame."""
        self._end()
        frames: list[FramerOutput] = []
        self._add_partial(self._unfinished_bom())
        if self._partial_size:
            self._take_line(self._take_partial(), b"", frames)
        return frames

    def _add_partial(self, fragment: bytes) -> None:
        if not fragment:
            return
        if self._oversized_head is None and self._partial_size + len(fragment) > self.max_frame_size:
            self._oversized_head = b"".join([*self._partial, fragment])[: self.max_frame_size]
            self._partial.clear()
        elif self._oversized_head is None:
            self._partial.append(fragment)
        self._partial_size += len(fragment)

    def _take_partial(self) -> bytes:
        line = b"".join(self._partial)
        self._partial.clear()
        return line

    def _take_line(self, line: bytes, terminator: bytes, frames: list[FramerOutput]) -> None:
        # An oversized line was not kept, so its size is the running count.
        length = (self._partial_size if self._oversized_head is not None else len(line)) + len(terminator)
        self._partial_size = 0
        if self._oversized_head is None and length > self.max_frame_size:
            self._oversized_head = line[: self.max_frame_size]
        offset, number = self._offset, self._line
        self._offset += length
        self._line += 1
        if self._oversized_head is not None:
            head, self._oversized_head = self._oversized_head, None
            issue = FrameIssue(
                "frame-too-large",
                offset,
                number,
                f"line of {length} bytes exceeds max_frame_size={self.max_frame_size}; "
                f"its first {len(head)} bytes are kept in raw and the rest was dropped",
            )
            frames.append(new_record(self._index, offset, number, None, None, None, None, (), head, bool(terminator),
                                     (issue,), ()))
            self._index += 1
            return
        content = line[:-1] if line.endswith(b"\r") else line
        if not content.strip(b" \t\r\n"):
            return
        frames.append(line_record(content, line + terminator, self._index, offset, number))
        self._index += 1


def line_record(content: bytes, raw: bytes, index: int, offset: int, number: int) -> FrameRecord:
    """The record of a line that is a frame: `content` (without line end) decoded, `raw` as it came
    (terminated when it ends with its LF)."""
    text, issues = decode(content, offset, number)
    return new_record(index, offset, number, None, text, None, None, (), raw, raw.endswith(b"\n"), issues, ())
