"""The input formats other than a raw body: detecting them, and reading
`curl -v`/`-i` output and a `curl --trace`/`--trace-ascii` dump into a
`Capture` (see `inputs.read_capture`; a HAR is `_har.py`'s, a log
`_logs.py`'s, a VCR cassette `_cassettes.py`'s, a claude-trace or claude-tap log `_trace_logs.py`'s).
A part that cannot be read is left out and reported with its
line; timestamps are kept from going backwards (`_logs.Clock`)."""

from __future__ import annotations

import re

from ..findings import Code, Severity
from ._cassettes import from_cassette, looks_like_cassette
from ._devtools import from_devtools, looks_like_devtools
from ._har import from_har
from ._logs import Clock, from_log, is_log_line
from ._sdk_repr import looks_like_sdk_repr
from ._trace_logs import from_trace_log, looks_like_trace_log
from .capture import Capture, Note, Segment

__all__ = ["detect", "from_cassette", "from_curl_trace", "from_curl_verbose", "from_devtools", "from_har", "from_log",
           "from_trace_log"]


# -- detection ------------------------------------------------------------------

_TRACE_LINE = re.compile(rb"^(?:\d\d:\d\d:\d\d\.\d+ )?(?:== Info:|=> Send|<= Recv)", re.MULTILINE)
_VERBOSE_LINE = re.compile(rb"^[<>*] ", re.MULTILINE)
_STATUS_LINE = re.compile(rb"^HTTP/[\d.]+ \d{3}")
#: A substring each match of `_TRACE_LINE` holds; a line start each match of `_VERBOSE_LINE` but one at the
#: head's start is (three matches need one of these).
_TRACE_MARKS = (b"== Info:", b"=> Send", b"<= Recv")
_VERBOSE_MARKS = (b"\n< ", b"\n> ", b"\n* ")


def _may_match(head: bytes, marks: tuple[bytes, ...]) -> bool:
    """Whether `head` holds one of `marks`: without one, a line pattern they stand for cannot match."""
    return any(mark in head for mark in marks)


def detect(data: bytes) -> str:
    head = data[:4096].lstrip()
    if head.startswith(b"{") and b'"log"' in head[:200] and b'"entries"' in data[:65536]:
        return "har"
    if looks_like_cassette(data[:4096]):
        return "cassette"
    if looks_like_trace_log(data[:4096]):
        return "trace-log"
    # Each line pattern is looked for only when a substring every match holds is there: a stream body has
    # none, and finding that costs a scan in C, not the regular expression tried at each of 4096 bytes.
    if _may_match(head, _TRACE_MARKS) and len(_TRACE_LINE.findall(head)) >= 2:
        return "curl-trace"
    if _STATUS_LINE.match(head) or (_may_match(head, _VERBOSE_MARKS) and len(_VERBOSE_LINE.findall(head)) >= 3):
        return "curl-verbose"
    lines = [line for line in head.decode("utf-8", "replace").splitlines()[:8] if line.strip()]
    if len(lines) >= 2 and all(is_log_line(line) for line in lines[: min(len(lines), 4)]):
        return "log"
    if looks_like_devtools(data):
        return "devtools"
    if looks_like_sdk_repr(data):
        return "sdk-repr"
    return "raw"


# -- curl -v / -i -------------------------------------------------------------------


def from_curl_verbose(data: bytes) -> Capture:
    """`curl -v` (stderr interleaved) or `curl -i` (headers, blank line, body).

    When curl printed more than one response (an interim `100 Continue`, a
    proxy's reply to CONNECT, a redirect followed with -L), the last one is
    the reply: the others are skipped and said.
    """
    request_headers: list[tuple[str, str]] = []
    response_headers: list[tuple[str, str]] = []
    statuses: list[str] = []
    status = None
    body = bytearray()
    segments: list[Segment] = []  # the body lines, as they are, with where they are in `data`
    in_headers = bool(_STATUS_LINE.match(data.lstrip()))  # -i: headers first, without "< "
    after_head = False  # -i: a head just ended; another one may follow it (curl prints every response's)
    at = 0
    for line in data.splitlines(keepends=True):
        at += len(line)
        stripped = line.rstrip(b"\r\n")
        if after_head:
            if not stripped and status is not None and status < 200:
                continue
            after_head = False
            in_headers = bool(_STATUS_LINE.match(stripped))
        if in_headers:
            if not stripped:
                in_headers, after_head = False, True
                continue
            status = _header_line(stripped, response_headers, status, statuses)
            continue
        if stripped.startswith(b"> "):
            if _REQUEST_LINE.match(stripped[2:]):
                request_headers.clear()  # a CONNECT to a proxy came first: keep the last request's headers
            _header_line(stripped[2:], request_headers, None)
        elif stripped.startswith(b"< "):
            status = _header_line(stripped[2:], response_headers, status, statuses)
        elif stripped == b"<" or stripped == b">" or stripped.startswith((b"* ", b"{ [", b"} [")):
            continue
        else:
            if segments and segments[-1][1] == len(body) and segments[-1][3] == at - len(line):
                segments[-1] = (segments[-1][0], len(body) + len(line), segments[-1][2], at)
            else:
                segments.append((len(body), len(body) + len(line), at - len(line), at))
            body += line
    notes = [Note("input-curl", "curl -v/-i output: request and response headers were stripped from the body and "
                                "kept for the transport checks")]
    skipped = _skipped_responses(statuses)
    if skipped is not None:
        notes.append(skipped)
    return Capture(bytes(body), "curl-verbose", status=status, response_headers=tuple(response_headers),
                   request_headers=tuple(request_headers), notes=tuple(notes), segments=tuple(segments))


_REQUEST_LINE = re.compile(rb"^[A-Z]+ \S+ HTTP/[\d.]+\s*$")
_STATUS_TEXT = re.compile(r"HTTP/[\d.]+ (\d{3})")


def _header_line(line: bytes, headers: list[tuple[str, str]], status: int | None,
                 statuses: list[str] | None = None) -> int | None:
    text = line.decode("utf-8", "replace")
    match = _STATUS_TEXT.match(text)
    if match:
        headers.clear()  # a 100 Continue or a redirect came first: keep the last response's headers
        if statuses is not None:
            statuses.append(text.strip())
        return int(match.group(1))
    name, sep, value = text.partition(":")
    if sep:
        headers.append((name.strip(), value.strip()))
    return status


def _skipped_responses(statuses: list[str]) -> Note | None:
    """A note on the responses curl printed before the final one, or None when there was only one."""
    if len(statuses) < 2:
        return None
    described = []
    for line in statuses[:-1][:5]:
        code = int(line.split()[1])
        kind = ("an interim response" if code < 200 else
                "a proxy's reply to CONNECT (the tunnel, not the reply)" if code < 300 else
                "a redirect" if code < 400 else "an earlier response")
        described.append(f"{kind} `{line[:60]}`")
    more = f", and {len(statuses) - 6} more" if len(statuses) > 6 else ""
    return Note("skipped-responses", f"curl printed {len(statuses)} responses; the reply is the last one "
                                     f"(`{statuses[-1][:60]}`): skipped {', '.join(described)}{more}")


# -- curl --trace / --trace-ascii ----------------------------------------------------

_TRACE_HEADER = re.compile(
    rb"^(?:(?P<time>\d\d:\d\d:\d\d\.\d+) )?(?P<dir><=|=>) (?P<kind>Recv|Send) (?P<what>header|data|SSL data), "
    rb"(?P<size>\d+) bytes")
_TRACE_ROW = re.compile(rb"^(?P<offset>[0-9a-f]{4,}): (?P<rest>.*)$", re.IGNORECASE)
_HEX_ROW_WIDTH = 16 * 3  # "%02x " for each of the 16 bytes of a --trace row, then the ASCII column


def from_curl_trace(data: bytes) -> Capture:
    """Rebuild the received body (and per-read times) from a curl trace dump.

    `--trace` rows hold the exact bytes in hex. `--trace-ascii` rows hold the
    bytes as text, break at CRLF (consumed; the row offsets show where) and
    print every other control byte, LF included, as '.': those dots are
    guessed back from the SSE structure and the guess is reported. A row or
    block header that cannot be read is left out and reported with its line.
    """
    hex_mode = bool(re.search(rb"^[0-9a-f]{4}: (?:[0-9a-f]{2} ){16}", data, re.MULTILINE | re.IGNORECASE))
    body = bytearray()
    head = bytearray()
    reads: list[tuple[int, float]] = []
    trace = _Trace(data)
    for what, size, stamp, rows in trace.blocks:
        content = _trace_bytes(rows, size, hex_mode, trace.problems)
        if what == "header":
            head += content
            continue
        if stamp is not None:
            reads.append((len(body), stamp))
        body += content
    statuses: list[str] = []
    status, headers = _parse_response_head(bytes(head), statuses)
    skipped = _skipped_responses(statuses)
    notes = [Note("input-curl-trace", f"curl {'--trace' if hex_mode else '--trace-ascii'} dump: the received body "
                  f"was rebuilt from {sum(1 for b in trace.blocks if b[0] == 'data')} read(s)"
                  + (", with their times" if reads else ""))]
    if skipped is not None:
        notes.append(skipped)
    if not hex_mode:
        # Dots are repaired once the body is unwrapped (chunk sizes count them as bytes).
        notes.append(Note("trace-ascii", "the dump is --trace-ascii: control bytes were printed as '.'"))
    if trace.problems:
        notes.append(_listed_note("trace-malformed", "parts of the curl trace could not be read and were left out",
                                  trace.problems))
    notes.extend(trace.clock.notes())
    return Capture(bytes(body), "curl-trace", reads=tuple(reads) or None, status=status,
                   response_headers=headers, notes=tuple(notes),
                   started=trace.sent if reads else None)


_Block = tuple[str, int | None, float | None, list[tuple[int, int, bytes]]]
# A declared block size longer than this many digits is not read (it would be no real read's size).
_MAX_SIZE_DIGITS = 15


class _Trace:
    """The received blocks of a trace: (header|data, declared size or None, time or None, rows as
    (line, offset, text)); when the request was sent; what could not be read, by line."""

    def __init__(self, data: bytes) -> None:
        self.blocks: list[_Block] = []
        self.problems: list[str] = []
        self.clock = Clock()
        self.sent: float | None = None
        rows: list[tuple[int, int, bytes]] | None = None
        for number, line in enumerate(data.splitlines(), 1):
            match = _TRACE_HEADER.match(line)
            if match:
                rows = None
                stamp = match.group("time")
                seconds = self.clock.read(stamp.decode(), number) if stamp else None
                if match.group("dir") == b"=>" and match.group("what") == b"header" and self.sent is None:
                    self.sent = seconds  # the first stamped request header: when the request was sent
                if match.group("dir") == b"<=" and match.group("what") in (b"header", b"data"):
                    rows = []
                    self.blocks.append((match.group("what").decode(), self._size(match.group("size"), number),
                                        seconds, rows))
                continue
            row = _TRACE_ROW.match(line)
            if rows is not None and row:
                rows.append((number, int(row.group("offset"), 16), row.group("rest")))

    def _size(self, digits: bytes, line: int) -> int | None:
        if len(digits) > _MAX_SIZE_DIGITS:
            self.problems.append(f"line {line}: a block size of {len(digits)} digits (ignored)")
            return None
        return int(digits)


def _trace_bytes(rows: list[tuple[int, int, bytes]], size: int | None, hex_mode: bool,
                 problems: list[str]) -> bytes:
    out = bytearray()
    for position, (line, offset, text) in enumerate(rows):
        if hex_mode:
            row = _hex_row(text)
            if row is None:
                problems.append(f"line {line}: a row that is not hex ({text[:24].decode('ascii', 'replace')!r}…)")
            else:
                out += row
            continue
        following = rows[position + 1][1] if position + 1 < len(rows) else size
        out += text
        if following is not None and following - offset == len(text) + 2:
            out += b"\r\n"  # curl broke the row at a CRLF and consumed it
    return bytes(out)


def _hex_row(text: bytes) -> bytes | None:
    """The bytes of a --trace row ("%02x " each, then the ASCII column), or None when it is not one."""
    tokens = text[:_HEX_ROW_WIDTH].split()
    if not all(len(token) == 2 for token in tokens):
        return None
    try:
        return bytes.fromhex(b"".join(tokens).decode("ascii"))
    except ValueError:
        return None


def _parse_response_head(head: bytes, statuses: list[str]) -> tuple[int | None, tuple[tuple[str, str], ...]]:
    headers: list[tuple[str, str]] = []
    status = None
    for line in head.splitlines():
        status = _header_line(line.rstrip(b"\r"), headers, status, statuses)
    return status, tuple(headers)


def _listed_note(code: Code, summary: str, problems: list[str]) -> Note:
    listed = "; ".join(problems[:8]) + (f"; and {len(problems) - 8} more" if len(problems) > 8 else "")
    return Note(code, f"{summary}: {listed}", Severity.WARNING)
