"""The contract every framer keeps: bytes in, frames out, incrementally and
sans-I/O; nothing a stream contains makes it raise, only misuse does.

A framer implements `feed_records` and `close_records`, which return records
and runs (see `_records`); the public `feed` and `close` turn them into
`Frame`s. It keeps the stream offset of its next line in `_offset` and calls
`_strip_bom` on each chunk.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._records import FrameRecord, FramerOutput, expand
from .frame import DEFAULT_MAX_FRAME_SIZE, Frame, FrameIssue

__all__ = ["Framer"]

_BOM = b"\xef\xbb\xbf"


class Framer:
    """The public face every framer shares: `feed(bytes) -> list[Frame]`, `close() -> list[Frame]`."""

    _offset = 0
    _at_stream_start = True
    _bom_prefix = b""
    #: A CR ended the last chunk: whether it is half of a CRLF is known only with the next byte.
    _held_cr = False
    #: What `close()` found that belongs to no frame (SSE: a final line without a line end, discarded).
    stream_issues: tuple[FrameIssue, ...] = ()

    def __init__(self, *, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        if max_frame_size < 1:
            raise ValueError(f"max_frame_size must be positive, got {max_frame_size!r}")
        self.max_frame_size = max_frame_size
        self._closed = False
        self._index = 0

    def feed(self, chunk: bytes) -> list[Frame]:
        """Take the next bytes of the stream; return the frames they completed."""
        return expand(self.feed_records(chunk))

    def close(self) -> list[Frame]:
        """End the stream; return what was still open (an unterminated final frame)."""
        return expand(self.close_records())

    def feed_records(self, chunk: bytes) -> Sequence[FramerOutput]:
        raise NotImplementedError

    def held_frame(self) -> FrameRecord | None:
        """The frame the held CR (`_held_cr`) has already completed, if it has, as `feed` will
        give it except for its raw; None otherwise. (SSE only: the other framings end a frame on LF.)"""
        return None

    def close_records(self) -> Sequence[FramerOutput]:
        raise NotImplementedError

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
