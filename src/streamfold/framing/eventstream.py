"""AWS event-stream framing (Bedrock `ConverseStream`, `InvokeModelWithResponseStream`).

Binary and length-prefixed, not text (reference §2.3): each message is

    total_len u32 | headers_len u32 | prelude_crc u32 | headers | payload | message_crc u32

with big-endian integers and CRC32 (zlib's) over the 8-byte prelude and over
everything before the message CRC. Messages are cut by their declared length,
never by scanning for braces (trap F10, Kuberwastaken/claurst#238).

A bad message CRC is an issue on that frame, whose length is still trusted.
A bad prelude CRC means the length cannot be trusted: the bytes up to the
next valid prelude become one frame with a `bad-prelude` issue, and framing
resumes there, so the rest still decodes. `:message-type` `exception` and
`error` messages (in-band errors inside the HTTP 200) carry an issue the fold
turns into an in-stream error. `line` is 0: a binary stream has no lines.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from typing import Any

from ._records import FrameRecord, FramerOutput, new_record
from .frame import DEFAULT_MAX_FRAME_SIZE, FrameIssue
from .framer import Framer
from .utf8 import decode

__all__ = ["EventStreamParser", "looks_like_eventstream", "message_record", "parse_headers"]

_PRELUDE = struct.Struct(">III")
_CRC = struct.Struct(">I")
_MIN_MESSAGE = 16  # prelude (12) + message CRC (4)


def _prelude_ok(buf: bytes | bytearray, start: int) -> bool:
    if len(buf) - start < 12:
        return False
    total, headers, crc = _PRELUDE.unpack_from(buf, start)
    return bool(total >= _MIN_MESSAGE and headers <= total - _MIN_MESSAGE
                and zlib.crc32(bytes(buf[start : start + 8])) == crc)


def looks_like_eventstream(head: bytes) -> bool:
    """A plausible prelude: a sane length and a matching prelude CRC."""
    return _prelude_ok(head, 0)


class EventStreamParser(Framer):
    """Incremental, sans-I/O splitter of AWS event-stream messages into frames.

    Each frame's `event` is the `:event-type` header (or `:exception-type`),
    `data` the payload as text, `headers` every header as (name, value).
    """

    def __init__(self, *, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        super().__init__(max_frame_size=max_frame_size)
        self._buf = bytearray()
        self._base = 0  # stream offset of _buf[0]
        # An oversized message being skipped: (offset, declared length, bytes still to drop).
        self._skipping: tuple[int, int, int] | None = None
        self._resync_from = 0  # where the search for the next valid prelude resumes

    def feed_records(self, chunk: bytes) -> list[FramerOutput]:
        chunk = self._accept(chunk)
        frames: list[FramerOutput] = []
        if chunk:
            self._buf += chunk
            self._run(frames)
        return frames

    def close_records(self) -> list[FrameRecord]:
        self._end()
        frames: list[FrameRecord] = []
        if self._skipping is not None:
            offset, total, _ = self._skipping
            frames.append(self._issue_frame(offset, b"", "frame-too-large",
                                            f"message of {total} bytes exceeds max_frame_size={self.max_frame_size} "
                                            "and the stream ended inside it", terminated=False))
        elif self._buf:
            raw = bytes(self._buf)
            expected = _PRELUDE.unpack_from(raw)[0] if _prelude_ok(raw, 0) else None
            detail = f"{len(raw)} of its {expected} bytes" if expected else f"{len(raw)} bytes without a valid prelude"
            frames.append(self._issue_frame(self._base, raw, "truncated-message",
                                            f"the stream ended inside a message ({detail} arrived)",
                                            terminated=False))
            self._consume(len(raw))
        return frames

    def _run(self, frames: list[FramerOutput]) -> None:
        while self._step(frames):
            pass

    def _step(self, frames: list[FramerOutput]) -> bool:
        """Take the next message (or bad stretch, or what is left of an oversized message);
        False when the buffer holds nothing more to take yet."""
        buf = self._buf
        if self._skipping is not None:
            offset, total, left = self._skipping
            dropped = min(left, len(buf))
            self._consume(dropped)
            if dropped < left:
                self._skipping = (offset, total, left - dropped)
                return False
            self._skipping = None
            frames.append(self._issue_frame(offset, b"", "frame-too-large",
                                            f"message of {total} bytes exceeds max_frame_size="
                                            f"{self.max_frame_size}; it was dropped"))
        if len(buf) < 12:
            return False
        if not _prelude_ok(buf, 0):
            # Lost sync: everything up to the next valid prelude is one bad frame.
            # The search resumes where it stopped, so garbage fed slowly stays linear.
            start = max(1, self._resync_from)
            next_start = next((i for i in range(start, len(buf) - 11) if _prelude_ok(buf, i)), None)
            if next_start is None:
                self._resync_from = max(1, len(buf) - 11)
                if len(buf) > self.max_frame_size:
                    next_start = len(buf) - 11  # keep a possible prelude start, drop the rest
                else:
                    return False  # wait: the next prelude may still arrive
            raw = bytes(buf[:next_start])
            frames.append(self._issue_frame(self._base, raw, "bad-prelude",
                                            f"{len(raw)} bytes at offset {self._base} do not start a valid "
                                            "message (prelude CRC mismatch); skipped to the next valid message"))
            self._consume(next_start)
            return True
        total, headers_len, _ = _PRELUDE.unpack_from(buf, 0)
        if total > self.max_frame_size:
            self._skipping = (self._base, total, total)
            return True
        if len(buf) < total:
            return False
        frames.append(message_record(bytes(buf[:total]), headers_len, self._index, self._base))
        self._index += 1
        self._consume(total)
        return True

    def _issue_frame(self, offset: int, raw: bytes, code: str, message: str, *, terminated: bool = True) -> FrameRecord:
        record = new_record(self._index, offset, 0, None, None, None, None, (), raw, terminated,
                               (FrameIssue(code, offset, 0, message),), ())
        self._index += 1
        return record

    def _consume(self, count: int) -> None:
        self._base += count
        self._resync_from = 0
        del self._buf[:count]


def message_record(raw: bytes, headers_len: int, index: int, offset: int) -> FrameRecord:
    """The record of one message (`raw`, whose prelude is valid), with what is wrong in it."""
    issues: list[FrameIssue] = []
    (message_crc,) = _CRC.unpack_from(raw, len(raw) - 4)
    if zlib.crc32(raw[:-4]) != message_crc:
        issues.append(FrameIssue("crc-mismatch", offset, 0,
                                 f"message at offset {offset}: CRC32 of the message does not match its "
                                 "trailer; the bytes were damaged, decoded as they are"))
    headers, header_issue = parse_headers(raw[12 : 12 + headers_len])
    if header_issue:
        issues.append(FrameIssue("bad-headers", offset, 0, header_issue))
    names = dict(headers)
    kind = names.get(":message-type")
    event = names.get(":event-type") or names.get(":exception-type")
    if kind == "exception":
        body = raw[12 + headers_len : -4].decode("utf-8", "replace")
        issues.append(FrameIssue("eventstream-exception", offset, 0,
                                 f"the server sent an exception inside the HTTP 200 stream: "
                                 f"{names.get(':exception-type')}", body))
    elif kind == "error":
        issues.append(FrameIssue("eventstream-exception", offset, 0,
                                 f"the server sent an error inside the HTTP 200 stream: "
                                 f"{names.get(':error-code')}: {names.get(':error-message')}"))
    payload = raw[12 + headers_len : -4]
    text, utf8_issues = decode(payload, offset + 12 + headers_len, 0) if payload else ("", ())
    issues.extend(utf8_issues)
    return new_record(index, offset, 0, None if event is None else str(event), text if payload else None,
                      None, None, (), raw, True, tuple(issues), headers)


#: Header blocks already parsed: a stream repeats a few (one per event type), and a block is
#: immutable bytes, so its parse is shared. Bounded, as a hostile stream may make each one new.
_PARSED: dict[bytes, tuple[tuple[tuple[str, Any], ...], str | None]] = {}
_PARSED_KEPT = 256


def parse_headers(block: bytes) -> tuple[tuple[tuple[str, Any], ...], str | None]:
    """Headers as (name, value), and a message when a malformed one stopped the parse."""
    parsed = _PARSED.get(block)
    if parsed is None:
        headers, issue = _parse_headers(block)
        parsed = (tuple(headers), issue)
        if len(_PARSED) >= _PARSED_KEPT:
            _PARSED.clear()
        _PARSED[block] = parsed
    return parsed


def _parse_headers(block: bytes) -> tuple[list[tuple[str, Any]], str | None]:
    """Headers as (name, value); a malformed one stops the parse with a message."""
    headers: list[tuple[str, Any]] = []
    pos, end = 0, len(block)
    try:
        while pos < end:
            name_len = block[pos]
            name = block[pos + 1 : pos + 1 + name_len].decode("utf-8", "replace")
            pos += 1 + name_len
            kind = block[pos]
            pos += 1
            value: Any
            if kind in (0, 1):
                value = kind == 0
            elif kind in _FIXED:
                fmt = _FIXED[kind]
                (value,) = struct.unpack_from(fmt, block, pos)
                pos += struct.calcsize(fmt)
            elif kind in (6, 7):
                (length,) = struct.unpack_from(">H", block, pos)
                data = block[pos + 2 : pos + 2 + length]
                if len(data) != length:
                    raise ValueError("value runs past the headers")
                value = data.decode("utf-8", "replace") if kind == 7 else data
                pos += 2 + length
            elif kind == 9:
                value = str(uuid.UUID(bytes=bytes(block[pos : pos + 16])))
                pos += 16
            else:
                return headers, f"header {name!r} has unknown value type {kind}; the headers after it were not read"
            headers.append((name, value))
    except (IndexError, struct.error, ValueError) as exc:
        return headers, f"malformed header at byte {pos} of the header block: {exc}"
    return headers, None


# Header value types with a fixed width: byte, int16, int32, int64, timestamp (ms).
_FIXED = {2: ">b", 3: ">h", 4: ">i", 5: ">q", 8: ">q"}
