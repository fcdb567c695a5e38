"""Inputs read as they arrive (`streamfold tail`): the input format detected on the
first bytes with the same `detect` that `show` uses, and the stream body handed
on piece by piece as soon as it is known to be body.

- a raw body is handed on as it comes;
- `curl -i` output: the header block(s) (a `100 Continue` or a proxy's
  `200 Connection established` may come first) are held back and kept, the
  body after them handed on as it comes;
- whatever the wrapping, a body that `show` would call no stream (an HTML
  page, an error response, a binary file: `_wrong_input.recognise`, on its
  first bytes) is not folded piece by piece: `whole` is set, and the front
  `load`s the input as `show` does;
- `curl -v` output (stderr interleaved): its `*`, `>` and `<` lines are
  dropped line by line, the other lines are the body;
- a timestamped log: each line as `from_log` reads it, its timestamp kept as
  its arrival time;
- a HAR file, a VCR cassette, a claude-trace or claude-tap log, a `curl
  --trace` dump, a gzip body or a body still in chunked transfer-encoding
  cannot be unwrapped piece by piece: `whole` is set and the front reads the
  input to its end and `load`s it.

Pure computation: the caller says when each piece arrived (no clocks here).
"""

from __future__ import annotations

import re
from typing import Literal, overload

from ._encodings import decode_wide_text
from ._logs import LogReader
from ._readers import detect, from_curl_verbose
from ._trace_logs import looks_like_trace_log
from ._wrong_input import NOT_A_STREAM, recognise
from .capture import Capture, Note

__all__ = ["LiveInput"]

# The bytes detection may wait for before it decides (a HAR's "entries" may come later: see `detect`).
_HEAD = 4096
_HAR_HEAD = 65536
# Complete lines after which a body that no reader claims is raw.
_LINES = 4
# The first bytes of a body that only a raw stream starts with: an SSE field, a JSON chunk or array.
_RAW_START = re.compile(rb"(?:data:|event:|id:|retry:|:|\{\"|\[\s*[{\]\"]|\[\s*$)")
_CHUNK_SIZE_LINE = re.compile(rb"[0-9a-fA-F]{1,8}(?:;[^\r\n]*)?\r\n")
_HEADER_END = re.compile(rb"\r?\n\r?\n")
_STATUS = re.compile(rb"\s*HTTP/[\d.]+ \d{3}")
# What may still become a status line.
_STATUS_BEGUN = re.compile(rb"(?:H|HT|HTT|HTTP|HTTP/[\d.]*(?: \d{0,2})?)?")
_WHOLE = {"har": "a HAR file", "cassette": "a VCR cassette", "trace-log": "a claude-trace or claude-tap log",
          "curl-trace": "a curl --trace dump", "gzip": "a gzip body",
          "chunked": "a body in chunked transfer-encoding", "wide-text": "UTF-16 or UTF-32 text",
          "devtools": "Chrome DevTools EventStream rows", "sdk-repr": "a Python repr() of SDK objects",
          "not-a-stream": "not a stream (an HTML page, binary or nothing)"}
# Wide text without a byte-order mark is told by its first bytes' NULs: wait for this many.
_WIDE_HEAD = 8


class LiveInput:
    """The input of a live tail: `feed` each piece with the seconds it arrived at, fold what it
    returns; `close` at the end of the input. `reads` are the body's arrival times."""

    def __init__(self, input_format: str = "auto") -> None:
        self.kind: str | None = None
        #: The input must be read to its end and loaded whole (`kind` says what it is).
        self.whole = False
        #: (body offset, seconds) for the pieces of body handed on (a log's: its timestamps).
        self.reads: list[tuple[int, float]] = []
        self.data = bytearray()  # the input as it came, kept while it may be needed whole
        self._held = bytearray()  # input not yet handed on: the head while detecting, a partial line
        self._arrivals: list[tuple[int, float]] = []  # (offset in _held, seconds) of the pieces in it
        self._body = 0
        self._status: int | None = None
        self._headers: tuple[tuple[str, str], ...] = ()
        self._request: list[tuple[str, str]] = []
        self._in_head = False  # curl -i: inside the header block(s)
        self._verbose = False  # curl -v: every line is looked at
        self._blocks = 0  # curl -i: the header blocks read
        self._lines_read = 0  # a log's lines read so far
        self._log = LogReader()
        self._notes: list[Note] = []
        self._forced = input_format != "auto"
        #: Whether the body's first bytes were judged a stream (`_judge`); until then the input is kept.
        self._judged = self._forced
        if self._forced:
            self._start(input_format)

    @property
    def what(self) -> str:
        """What the input is, in words (for a status line)."""
        return _WHOLE.get(self.kind or "", self.kind or "not yet known")

    def feed(self, chunk: bytes, seconds: float) -> bytes:
        """The body bytes `chunk` completes (maybe none while the format is being detected)."""
        if self.whole or not self._judged:
            self.data += chunk
        if self.whole:
            return b""
        self._arrivals.append((len(self._held), seconds))
        self._held += chunk
        if self.kind is None:
            kind = _decide(bytes(self._held), final=False)
            if kind is None:
                return b""
            self._start(kind)
            if self.whole:
                return b""
        return self._drain(seconds, final=False)

    def settle(self, seconds: float) -> bytes:
        """Nothing has come for a while: decide the format (and whether the body is a stream) on what has
        come, and hand its body on."""
        if self.whole or not self._held or (self.kind is not None and self._judged):
            return b""
        if self.kind is None:
            self._start(_decide(bytes(self._held), final=True))
        return b"" if self.whole else self._drain(seconds, final=False, settled=True)

    def close(self, seconds: float) -> bytes:
        """The end of the input: whatever body is still held back."""
        if self.kind is None:
            self._start(_decide(bytes(self._held), final=True))
        if self.whole:
            return b""
        return self._drain(seconds, final=True)

    def capture(self) -> Capture:
        """What the input said besides the body (status, headers) and the notes on reading it."""
        notes = list(self._notes)
        if self.kind == "log":
            notes.extend(self._log.notes())
        elif self.kind == "curl-verbose":
            notes.append(Note("input-curl", "curl -v/-i output: request and response headers were stripped from "
                                            "the body and kept for the transport checks"))
        return Capture(b"", self.kind or "raw", status=self._status, response_headers=self._headers,
                       request_headers=tuple(self._request), notes=tuple(notes),
                       handed_out=self.kind == "log" and self._log.objects_only)

    # -- inside -------------------------------------------------------------------------

    def _start(self, kind: str) -> None:
        head = bytes(self._held).lstrip()
        if kind == "raw" and head[:2] == b"\x1f\x8b":
            kind = "gzip"
        elif kind == "raw" and _CHUNK_SIZE_LINE.match(head) and not self._forced:
            kind = "chunked"
        self.kind = kind
        self.whole = kind in _WHOLE
        if kind == "curl-verbose":
            self._in_head = True  # -i: header block(s) first; -v when no status line starts it
        if kind not in ("raw", "curl-verbose"):
            self._judged = True  # a log's lines, or read whole: `load` judges it
        if self._judged and not self.whole:
            self.data = bytearray()

    def _drain(self, seconds: float, *, final: bool, settled: bool = False) -> bytes:
        if self._in_head:
            self._read_head(final)
            if self._in_head:
                return b""
        if not self._judged:
            body = from_curl_verbose(bytes(self.data)).body if self.kind == "curl-verbose" else bytes(self._held)
            verdict = _judge(body, final=final or settled)
            if verdict is None:
                return b""  # held (and kept) until its first bytes tell
            if not verdict:  # no stream: read whole, so its one finding is said as `show` says it
                self.kind, self.whole = "not-a-stream", True
                return b""
            self._judged, self.data = True, bytearray()
        if self.kind == "log" or self._verbose:
            return self._lines(seconds, final)
        # Handed on as it is: each piece keeps the time it arrived at.
        for offset, at in self._arrivals:
            if offset < len(self._held):
                self.reads.append((self._body + offset, at))
        body, self._held, self._arrivals = bytes(self._held), bytearray(), []
        self._body += len(body)
        return body

    def _read_head(self, final: bool) -> None:
        """Take the header blocks off the front: a `100 Continue` or a proxy's CONNECT reply may come
        before the response's own; the first bytes that cannot begin a status line are the body."""
        while True:
            held = bytes(self._held)
            if not _STATUS.match(held):
                if not final and _STATUS_BEGUN.fullmatch(held.lstrip()):
                    return  # it may still be one
                self._in_head = False
                self._verbose = not self._blocks  # no status line first: curl -v, its lines marked
                return
            end = _HEADER_END.search(held)
            if end is None:
                if final:  # the input ended inside the headers
                    self._take_block(held)
                    self._drop(len(held))
                    self._in_head = False
                return
            self._take_block(held[: end.end()])
            self._drop(end.end())
            self._blocks += 1

    def _drop(self, size: int) -> None:
        """Take `size` bytes off the front of what is held (they were no body)."""
        del self._held[:size]
        before = [at for offset, at in self._arrivals if offset <= size]
        after = [(offset - size, at) for offset, at in self._arrivals if offset > size]
        self._arrivals = [(0, before[-1]), *after] if before and self._held else after

    def _take_block(self, block: bytes) -> None:
        read = from_curl_verbose(block)
        if read.status is not None:
            self._status, self._headers = read.status, read.response_headers

    def _lines(self, seconds: float, final: bool) -> bytes:
        lines = bytes(self._held).splitlines(keepends=True)
        keep = b""
        if lines and not final and (not lines[-1].endswith((b"\n", b"\r")) or lines[-1].endswith(b"\r")):
            keep = lines.pop()  # a partial line (or one whose \r may be followed by \n)
        self._held, self._arrivals = bytearray(keep), [(0, seconds)] if keep else []
        if not lines:
            return b""
        if self.kind == "log":
            return self._log_lines(lines)
        read = from_curl_verbose(b"".join(lines))
        self._request.extend(read.request_headers)
        if read.status is not None:
            self._status, self._headers = read.status, read.response_headers
        elif read.response_headers:
            self._headers = (*self._headers, *read.response_headers)
        if read.body:  # a line arrived when its last byte did
            self.reads.append((self._body, seconds))
        self._body += len(read.body)
        return read.body

    def _log_lines(self, lines: list[bytes]) -> bytes:
        out = bytearray()
        for line in lines:
            self._lines_read += 1
            frame, seconds = self._log.line(line.decode("utf-8", "replace").rstrip("\r\n"), self._lines_read)
            if seconds is not None:
                self.reads.append((self._body + len(out), seconds))
            out += frame
        self._body += len(out)
        return bytes(out)


@overload
def _decide(head: bytes, *, final: Literal[True]) -> str: ...


@overload
def _decide(head: bytes, *, final: bool) -> str | None: ...


def _decide(head: bytes, *, final: bool) -> str | None:
    """The input format of a stream that starts with `head`, or None while more bytes may change it."""
    if decode_wide_text(head[:4096]) is not None:
        return "wide-text"  # read whole: decoded first, then detected
    if final:
        return detect(head)
    if len(head) < _WIDE_HEAD and head[:1] == b"\x00":
        return None  # UTF-16BE or UTF-32BE text, or AWS event-stream (its prelude is longer anyway)
    if looks_like_trace_log(head[:_HEAD]):
        return "trace-log"  # its first line, a whole request, is often longer than the head
    # Only whole lines: a line cut short may still turn out a trace's or a log's.
    lines = head[: max(head.rfind(b"\n"), head.rfind(b"\r")) + 1]
    found = detect(lines) if lines.strip() else "raw"
    if found != "raw":
        return found
    stripped = head.lstrip()
    if stripped[:1] == b"{" and b'"log"' in stripped[:200]:
        return None if len(head) < _HAR_HEAD else found  # maybe a HAR whose "entries" have not come yet
    if len(head) >= _HEAD or _RAW_START.match(stripped) or (stripped and stripped[0] < 0x09):
        return "raw"  # nothing else starts so (AWS event-stream starts with its length's zero byte)
    if len([line for line in stripped.splitlines()[:-1] if line.strip()]) >= _LINES:
        return "raw"
    return None


def _judge(body: bytes, *, final: bool) -> bool | None:
    """Whether a body that starts with `body` is a stream (False: `show` would call it none: an HTML
    page, an error response, a binary file), or None while its first bytes cannot tell yet."""
    stripped = body.lstrip()
    if not stripped:
        return True if final else None  # blank first bytes may still become a stream
    found = recognise(body)
    if found is not None and found.code in NOT_A_STREAM:
        return False
    if final or len(body) >= _HEAD or _RAW_START.match(stripped) or stripped[0] < 0x09:
        return True
    return True if len([line for line in stripped.splitlines()[:-1] if line.strip()]) >= _LINES else None
