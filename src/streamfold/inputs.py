"""Inputs: whatever a person has at hand becomes the stream's body bytes, plus
arrival times and HTTP headers when the input carries them.

Recognised, in this order: a HAR file; a `curl --trace`/`--trace-ascii`
dump (with `--trace-time` per-read times); `curl -v` or `-i` output (headers
stripped and kept); log lines with a timestamp prefix (kept as arrival
times); a gzip body; a body still in HTTP chunked transfer-encoding
(`curl --raw`); otherwise the raw body as it is (SSE, NDJSON, JSONL of chunk
objects, a JSON array, AWS event-stream bytes). Each unwrapping is reported
as a note, so the debugger can say what it did to the bytes.

This is a front: the core never imports it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["FORMATS", "Capture", "InputError", "Note", "read_capture", "transport_notes"]

FORMATS = ("auto", "raw", "har", "curl-verbose", "curl-trace", "log", "chunked")

# Bodies larger than this are not gunzipped (a zip bomb would eat the machine).
_MAX_INFLATED = 1024 * 1024 * 1024


class InputError(ValueError):
    """The input cannot be used (e.g. a HAR with no streamed entry); the message says why."""


@dataclass(frozen=True, slots=True)
class Note:
    """Something the input layer did or noticed, for the report (becomes a diagnostic)."""

    code: str
    message: str
    severity: str = "info"


@dataclass(frozen=True, slots=True)
class Capture:
    body: bytes
    #: What the input was: "raw", "har", "curl-verbose", "curl-trace", "log", ...
    source: str
    #: (body offset, seconds) for each read, when the input had arrival times.
    reads: tuple[tuple[int, float], ...] | None = None
    status: int | None = None
    response_headers: tuple[tuple[str, str], ...] = ()
    request_headers: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    notes: tuple[Note, ...] = field(default_factory=tuple)
    #: When the request was sent (same clock as `reads`), if the input says.
    started: float | None = None

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        for key, value in reversed(self.response_headers):
            if key.lower() == lowered:
                return value
        return None


def read_capture(data: bytes, *, input_format: str = "auto", entry: str | None = None) -> Capture:
    """Turn the bytes a person has into a `Capture`. Raises `InputError` when they cannot be used."""
    if input_format not in FORMATS:
        raise InputError(f"unknown input format {input_format!r}; known: {', '.join(FORMATS)}")
    kind = _detect(data) if input_format == "auto" else input_format
    if kind == "har":
        capture = _from_har(data, entry)
    elif kind == "curl-trace":
        capture = _from_curl_trace(data)
    elif kind == "curl-verbose":
        capture = _from_curl_verbose(data)
    elif kind == "log":
        capture = _from_log(data)
    else:
        capture = Capture(data, "raw")
    return _unwrap_body(capture, force_chunked=kind == "chunked")


# -- detection ------------------------------------------------------------------

_TRACE_LINE = re.compile(rb"^(?:\d\d:\d\d:\d\d\.\d+ )?(?:== Info:|=> Send|<= Recv)", re.M)
_VERBOSE_LINE = re.compile(rb"^[<>*] ", re.M)
_STATUS_LINE = re.compile(rb"^HTTP/[\d.]+ \d{3}")
_TIMESTAMP = re.compile(
    r"^\[?(?P<stamp>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?|\d\d:\d\d:\d\d(?:[.,]\d+)?)\]?"
    r"(?:\s+(?:[<>]|(?:chunk|DEBUG|INFO|TRACE)\b:?))*\s?")


def _detect(data: bytes) -> str:
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


def _from_har(data: bytes, entry: str | None) -> Capture:
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
            raise InputError(f"no HAR entry matches {entry!r}; streamed entries: {_list_entries(streamed or list(enumerate(entries)))}")
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
        notes=(Note("input-har", f"read HAR entry {index}: {request.get('method', '')} {request.get('url', '')}"), *notes),
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


def _from_curl_verbose(data: bytes) -> Capture:
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
_TRACE_ROW = re.compile(rb"^(?P<offset>[0-9a-f]{4,}): (?P<rest>.*)$", re.I)
_HEX_ROW_WIDTH = 16 * 3  # "%02x " for each of the 16 bytes of a --trace row, then the ASCII column


def _from_curl_trace(data: bytes) -> Capture:
    """Rebuild the received body (and per-read times) from a curl trace dump.

    `--trace` rows hold the exact bytes in hex. `--trace-ascii` rows hold the
    bytes as text, break at CRLF (consumed; the row offsets show where) and
    print every other control byte, LF included, as '.': those dots are
    guessed back from the SSE structure and the guess is reported.
    """
    hex_mode = bool(re.search(rb"^[0-9a-f]{4}: (?:[0-9a-f]{2} ){16}", data, re.M | re.I))
    body = bytearray()
    head = bytearray()
    reads: list[tuple[int, float]] = []
    blocks = _trace_blocks(data)
    sent = re.search(rb"^(\d\d:\d\d:\d\d\.\d+) => Send header", data, re.M)
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


# A '.' that stands for a line feed: before an SSE field or comment, or at the end of a read.
_FIELD_AFTER_DOT = re.compile(rb"\.(?=\.*(?:data:|event:|id:|retry:|: )|\.*\Z)")


def _parse_response_head(head: bytes) -> tuple[int | None, tuple[tuple[str, str], ...]]:
    headers: list[tuple[str, str]] = []
    status = None
    for line in head.splitlines():
        status = _header_line(line.rstrip(b"\r"), headers, status)
    return status, tuple(headers)


# -- timestamped logs ------------------------------------------------------------------


def _from_log(data: bytes) -> Capture:
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


# -- body encodings --------------------------------------------------------------------

_CHUNK_SIZE_LINE = re.compile(rb"([0-9a-fA-F]{1,8})(;[^\r\n]*)?\r\n")  # used with match(): anchored


def _unwrap_body(capture: Capture, *, force_chunked: bool) -> Capture:
    body, notes = capture.body, list(capture.notes)
    if body[:2] == b"\x1f\x8b":
        try:
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            body = inflater.decompress(body, _MAX_INFLATED)
            notes.append(Note("gzip-body", "the body was gzip-compressed and was decompressed"
                              + ("" if inflater.eof else " (it was cut off: only the part that arrived)"), "warning"))
        except zlib.error as exc:
            notes.append(Note("gzip-body", f"the body starts like gzip but does not decompress ({exc}); kept as is",
                              "warning"))
    reads = capture.reads
    if force_chunked or (_CHUNK_SIZE_LINE.match(body) and _looks_chunked(body)):
        unwrapped, complete, framing = _dechunk(body)
        if unwrapped is not None:
            body = unwrapped
            if reads:
                reads = tuple((_body_offset(offset, framing), seconds) for offset, seconds in reads)
            # A trace shows the wire, so chunk sizes are expected there; in a saved body they are a mistake.
            expected = capture.source == "curl-trace"
            notes.append(Note("chunked-transfer-encoding",
                              "the body still carried HTTP chunked transfer-encoding (chunk sizes in hex); it was "
                              "unwrapped" + ("" if complete else ", and the last chunk was cut off"),
                              "info" if expected else "warning"))
    if body is capture.body and len(notes) == len(capture.notes):
        return capture
    if capture.source == "curl-trace" and any(note.code == "trace-ascii" for note in notes):
        body, guessed = _FIELD_AFTER_DOT.subn(b"\n", body)
        if guessed:
            notes.append(Note("trace-ascii-lossy",
                              f"--trace-ascii prints line feeds and other control bytes as '.', so {guessed} of them "
                              "were guessed back from the SSE structure; use --trace (hex) or curl -N for exact bytes",
                              "warning"))
    return Capture(body, capture.source, reads, capture.status, capture.response_headers,
                   capture.request_headers, capture.url, tuple(notes), capture.started)


def _looks_chunked(body: bytes) -> bool:
    match = _CHUNK_SIZE_LINE.match(body)
    assert match is not None
    size = int(match.group(1), 16)
    end = match.end() + size
    return size > 0 and (body[end : end + 2] == b"\r\n" or end >= len(body))


def _dechunk(body: bytes) -> tuple[bytes | None, bool, list[tuple[int, int]]]:
    """Unwrap chunked transfer-encoding: (body, whether the 0-chunk came, the framing spans removed)."""
    out = bytearray()
    framing: list[tuple[int, int]] = []
    pos = 0
    while pos < len(body):
        match = _CHUNK_SIZE_LINE.match(body, pos)
        if not match:
            return (bytes(out), False, framing) if out else (None, False, framing)
        framing.append((pos, match.end()))
        size = int(match.group(1), 16)
        start = match.end()
        if size == 0:
            framing.append((start, len(body)))
            return bytes(out), True, framing
        out += body[start : start + size]
        if start + size >= len(body):
            return bytes(out), False, framing
        framing.append((start + size, min(start + size + 2, len(body))))
        pos = start + size + 2
    return bytes(out), False, framing


def _body_offset(raw_offset: int, framing: list[tuple[int, int]]) -> int:
    """Where a byte of the chunked stream lands once the framing is removed."""
    removed = sum(min(end, raw_offset) - start for start, end in framing if start < raw_offset)
    return raw_offset - removed


# -- transport checks --------------------------------------------------------------------

_STREAM_CONTENT_TYPES = ("text/event-stream", "application/x-ndjson", "application/jsonl", "application/json",
                         "application/vnd.amazon.eventstream", "application/stream+json")


def transport_notes(capture: Capture) -> list[Note]:
    """What the HTTP status and headers say about the stream, when they are known."""
    notes: list[Note] = []
    if capture.status is not None and not 200 <= capture.status < 300:
        snippet = capture.body[:300].decode("utf-8", "replace").strip()
        notes.append(Note("http-status", f"the response status was {capture.status}, not 200: the body is the "
                                         f"server's error, not a reply ({snippet!r})", "error"))
    if not capture.response_headers:
        return notes
    content_type = (capture.header("content-type") or "").split(";")[0].strip().lower()
    if not content_type:
        notes.append(Note("content-type", "the response had no Content-Type; browsers and some clients buffer "
                                          "such a stream (Firefox waits for text/event-stream)", "warning"))
    elif content_type not in _STREAM_CONTENT_TYPES:
        notes.append(Note("content-type", f"the response Content-Type is {content_type!r}, not text/event-stream or "
                                          "NDJSON: clients may not treat it as a stream", "warning"))
    encoding = capture.header("content-encoding")
    if encoding and encoding.lower() != "identity":
        notes.append(Note("content-encoding", f"the stream was sent with Content-Encoding {encoding!r}: compression "
                                              "makes proxies and middleware buffer a stream until it ends "
                                              "(tower-rs/tower-http#419, Kludex/starlette#2753)", "warning"))
    if capture.header("content-length") is not None:
        notes.append(Note("buffered-response", "the response had a Content-Length, so it was sent whole, not "
                                               "streamed: something between the model and the client buffered it",
                          "warning"))
    accel = (capture.header("x-accel-buffering") or "").lower()
    if accel == "yes" or ("nginx" in (capture.header("server") or "").lower() and accel != "no"):
        notes.append(Note("proxy-buffering", "the response went through nginx without `X-Accel-Buffering: no`; "
                                             "nginx buffers proxied responses by default (proxy_buffering on)", "info"))
    return notes
