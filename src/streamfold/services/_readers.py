"""The input formats other than a raw body: detecting them, and reading a HAR,
`curl -v`/`-i` output, a `curl --trace`/`--trace-ascii` dump and a
timestamped log into a `Capture` (see `inputs.read_capture`)."""

from __future__ import annotations

import base64
import binascii
import json
import re
from datetime import datetime
from typing import Any

from .capture import Capture, InputError, Note

__all__ = ["detect", "from_curl_trace", "from_curl_verbose", "from_har", "from_log"]


# -- detection ------------------------------------------------------------------

_TRACE_LINE = re.compile(rb"^(?:\d\d:\d\d:\d\d\.\d+ )?(?:== Info:|=> Send|<= Recv)", re.MULTILINE)
_VERBOSE_LINE = re.compile(rb"^[<>*] ", re.MULTILINE)
_STATUS_LINE = re.compile(rb"^HTTP/[\d.]+ \d{3}")
_TIMESTAMP = re.compile(
    r"^\[?(?P<stamp>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?|\d\d:\d\d:\d\d(?:[.,]\d+)?)\]?"
    r"(?:\s+(?:[<>]|(?:chunk|DEBUG|INFO|TRACE)\b:?))*\s?")


def detect(data: bytes) -> str:
    head = data[:4096].lstrip()
    if head.startswith(b"{") and b'"log"' in head[:200] and b'"entries"' in data[:65536]:
        return "har"
    if len(_TRACE_LINE.findall(head)) >= 2:
        return "curl-trace"
    if _STATUS_LINE.match(head) or len(_VERBOSE_LINE.findall(head)) >= 3:
        return "curl-verbose"
    lines = [line for line in head.decode("utf-8", "replace").splitlines()[:8] if line.strip()]
    if len(lines) >= 2 and all(_TIMESTAMP.match(line) for line in lines[: min(len(lines), 4)]):
        return "log"
    return "raw"


# -- HAR ---------------------------------------------------------------------------

_STREAM_TYPES = ("text/event-stream", "application/x-ndjson", "application/jsonl", "application/vnd.amazon.eventstream")


def from_har(data: bytes, entry: str | None) -> Capture:
    try:
        har = json.loads(data)
        entries = har["log"]["entries"]
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"this looks like a HAR file but is not one: {exc}") from None
    streamed = [(i, e) for i, e in enumerate(entries) if _is_streamed(e)]
    if entry is not None:
        if entry.isdigit():
            chosen = [(i, e) for i, e in enumerate(entries) if i == int(entry)]
        else:
            chosen = [(i, e) for i, e in enumerate(entries) if entry in str(e.get("request", {}).get("url", ""))]
        if not chosen:
            listed = _list_entries(streamed or list(enumerate(entries)))
            raise InputError(f"no HAR entry matches {entry!r}; streamed entries: {listed}")
        streamed = chosen
    if not streamed:
        raise InputError(f"the HAR has {len(entries)} entries and none is a streamed response; "
                         f"pick one with --entry N: {_list_entries(list(enumerate(entries)))}")
    notes = []
    if len(streamed) > 1:
        notes.append(Note("har-entries", f"the HAR has {len(streamed)} streamed entries; using entry {streamed[-1][0]} "
                                         f"(the last). Others: {_list_entries(streamed[:-1])}. Pick with --entry"))
    index, chosen_entry = streamed[-1]
    response = chosen_entry.get("response", {})
    content = response.get("content", {})
    text = content.get("text")
    if text is None:
        raise InputError(f"HAR entry {index} has no response body (browsers leave streamed bodies out of some "
                         "HARs; export with content, or capture with curl -N)")
    if content.get("encoding") == "base64":
        try:
            body = base64.b64decode(text)
        except (binascii.Error, ValueError) as exc:
            raise InputError(f"HAR entry {index}: the base64 body does not decode: {exc}") from None
    else:
        body = str(text).encode("utf-8")
    request = chosen_entry.get("request", {})
    return Capture(
        body, "har",
        status=response.get("status"),
        response_headers=tuple((h.get("name", ""), h.get("value", "")) for h in response.get("headers", [])),
        request_headers=tuple((h.get("name", ""), h.get("value", "")) for h in request.get("headers", [])),
        url=request.get("url"),
        notes=(Note("input-har", f"read HAR entry {index}: {request.get('method', '')} {request.get('url', '')}"),
               *notes),
    )


def _is_streamed(entry: dict[str, Any]) -> bool:
    content = entry.get("response", {}).get("content", {})
    mime = str(content.get("mimeType", "")).lower()
    if any(kind in mime for kind in _STREAM_TYPES):
        return True
    text = str(content.get("text", ""))[:2000]
    return text.startswith(("data:", "event:", ":")) or "\ndata:" in text


def _list_entries(entries: list[tuple[int, dict[str, Any]]]) -> str:
    return "; ".join(f"[{i}] {e.get('request', {}).get('method', '')} {e.get('request', {}).get('url', '')}"[:120]
                     for i, e in entries[:10])


# -- curl -v / -i -------------------------------------------------------------------


def from_curl_verbose(data: bytes) -> Capture:
    """`curl -v` (stderr interleaved) or `curl -i` (headers, blank line, body)."""
    request_headers: list[tuple[str, str]] = []
    response_headers: list[tuple[str, str]] = []
    status = None
    body = bytearray()
    in_headers = bool(_STATUS_LINE.match(data.lstrip()))  # -i: headers first, without "< "
    for line in data.splitlines(keepends=True):
        stripped = line.rstrip(b"\r\n")
        if in_headers:
            if not stripped:
                in_headers = False
                continue
            status = _header_line(stripped, response_headers, status)
            continue
        if stripped.startswith(b"> "):
            _header_line(stripped[2:], request_headers, None)
        elif stripped.startswith(b"< "):
            status = _header_line(stripped[2:], response_headers, status)
        elif stripped == b"<" or stripped == b">" or stripped.startswith((b"* ", b"{ [", b"} [")):
            continue
        else:
            body += line
    return Capture(bytes(body), "curl-verbose", status=status, response_headers=tuple(response_headers),
                   request_headers=tuple(request_headers),
                   notes=(Note("input-curl", "curl -v/-i output: request and response headers were stripped from "
                                             "the body and kept for the transport checks"),))


def _header_line(line: bytes, headers: list[tuple[str, str]], status: int | None) -> int | None:
    text = line.decode("utf-8", "replace")
    match = re.match(r"HTTP/[\d.]+ (\d{3})", text)
    if match:
        headers.clear()  # a 100 Continue or a redirect came first: keep the last response's headers
        return int(match.group(1))
    name, sep, value = text.partition(":")
    if sep:
        headers.append((name.strip(), value.strip()))
    return status


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
    guessed back from the SSE structure and the guess is reported.
    """
    hex_mode = bool(re.search(rb"^[0-9a-f]{4}: (?:[0-9a-f]{2} ){16}", data, re.MULTILINE | re.IGNORECASE))
    body = bytearray()
    head = bytearray()
    reads: list[tuple[int, float]] = []
    blocks = _trace_blocks(data)
    sent = re.search(rb"^(\d\d:\d\d:\d\d\.\d+) => Send header", data, re.MULTILINE)
    for what, size, stamp, rows in blocks:
        content = _trace_bytes(rows, size, hex_mode)
        if what == "header":
            head += content
            continue
        if stamp is not None:
            reads.append((len(body), stamp))
        body += content
    status, headers = _parse_response_head(bytes(head))
    notes = [Note("input-curl-trace", f"curl {'--trace' if hex_mode else '--trace-ascii'} dump: the received body "
                  f"was rebuilt from {sum(1 for b in blocks if b[0] == 'data')} read(s)"
                  + (", with their times" if reads else ""))]
    if not hex_mode:
        # Dots are repaired once the body is unwrapped (chunk sizes count them as bytes).
        notes.append(Note("trace-ascii", "the dump is --trace-ascii: control bytes were printed as '.'"))
    return Capture(bytes(body), "curl-trace", reads=tuple(reads) or None, status=status,
                   response_headers=headers, notes=tuple(notes),
                   started=_seconds(sent.group(1).decode()) if sent and reads else None)


def _trace_blocks(data: bytes) -> list[tuple[str, int, float | None, list[tuple[int, bytes]]]]:
    """The received blocks: (header|data, declared size, time or None, rows as (offset, text))."""
    blocks: list[tuple[str, int, float | None, list[tuple[int, bytes]]]] = []
    rows: list[tuple[int, bytes]] | None = None
    for line in data.splitlines():
        match = _TRACE_HEADER.match(line)
        if match:
            rows = None
            if match.group("dir") == b"<=" and match.group("what") in (b"header", b"data"):
                rows = []
                stamp = match.group("time")
                blocks.append((match.group("what").decode(), int(match.group("size")),
                               _seconds(stamp.decode()) if stamp else None, rows))
            continue
        row = _TRACE_ROW.match(line)
        if rows is not None and row:
            rows.append((int(row.group("offset"), 16), row.group("rest")))
    return blocks


def _trace_bytes(rows: list[tuple[int, bytes]], size: int, hex_mode: bool) -> bytes:
    out = bytearray()
    for position, (offset, text) in enumerate(rows):
        if hex_mode:
            out += bytes.fromhex(text[:_HEX_ROW_WIDTH].decode("ascii", "replace").replace(" ", ""))
            continue
        following = rows[position + 1][0] if position + 1 < len(rows) else size
        out += text
        if following - offset == len(text) + 2:
            out += b"\r\n"  # curl broke the row at a CRLF and consumed it
    return bytes(out)


def _parse_response_head(head: bytes) -> tuple[int | None, tuple[tuple[str, str], ...]]:
    headers: list[tuple[str, str]] = []
    status = None
    for line in head.splitlines():
        status = _header_line(line.rstrip(b"\r"), headers, status)
    return status, tuple(headers)


# -- timestamped logs ------------------------------------------------------------------


def from_log(data: bytes) -> Capture:
    """Log lines with a timestamp prefix: strip it, keep it as the line's arrival time.

    A line whose rest is a bare JSON object (a logged chunk) becomes an SSE
    `data:` frame, a logged `data:` line ends its event, other lines are kept
    as they are.
    """
    body = bytearray()
    reads: list[tuple[int, float]] = []
    objects = 0
    for raw_line in data.decode("utf-8", "replace").splitlines():
        match = _TIMESTAMP.match(raw_line)
        if not match:
            body += raw_line.encode() + b"\n"
            continue
        rest = raw_line[match.end():]
        seconds = _seconds(match.group("stamp"))
        if seconds is not None:
            reads.append((len(body), seconds))
        if rest.startswith("{"):
            objects += 1
            body += b"data: " + rest.encode() + b"\n\n"
        elif rest.startswith("data:"):
            # Logs print one event per line and drop the blank line that ended it.
            body += rest.encode() + b"\n\n"
        else:
            body += rest.encode() + b"\n"
    notes = [Note("input-log", f"timestamped log: {len(reads)} timestamps kept as arrival times"
                               + (f"; {objects} logged JSON chunks turned into SSE data frames" if objects else ""))]
    return Capture(bytes(body), "log", reads=tuple(reads) or None, notes=tuple(notes))


def _seconds(stamp: str) -> float | None:
    stamp = stamp.replace(",", ".")
    try:
        if "T" in stamp or "-" in stamp[:5]:
            return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        hours, minutes, seconds = stamp.split(":")
        return int(hours) * 3600 + int(minutes) * 60 + float(seconds)
    except ValueError:
        return None
