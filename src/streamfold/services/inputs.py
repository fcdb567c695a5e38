"""Inputs: whatever a person has at hand becomes the stream's body bytes, plus
arrival times and HTTP headers when the input carries them.

UTF-16 or UTF-32 text (PowerShell's `>`) is decoded to UTF-8 first. Then
recognised, in this order: a HAR file (Polly.js recordings are HARs); a VCR
cassette (vcrpy, pytest-recording, Ruby's and R's VCR, go-vcr: `_cassettes.py`);
a claude-trace or claude-tap JSONL log (`_trace_logs.py`); a `curl --trace`/`--trace-ascii`
dump (with `--trace-time` per-read times); `curl -v` or `-i` output (headers
stripped and kept, the responses before the reply skipped); a log (a
timestamp prefix kept as arrival times, or Python logging's default formats);
rows copied from Chrome DevTools' EventStream tab (`_devtools.py`); a Python
`repr()` of SDK chunk objects (`_sdk_repr.py`); a gzip body; a body still in
HTTP chunked transfer-encoding (`curl --raw`); otherwise the raw body as it
is (SSE, NDJSON, JSONL of chunk objects, a JSON array, AWS event-stream
bytes, WebSocket messages one a line, whose times become arrival times).
Each unwrapping is reported as a note, so the debugger can say what it did
to the bytes. (A body that is no stream at all, or one non-streaming
reply, is `load`'s to say: `_wrong_input.py`, `_whole_reply.py`.)

Part of the services layer under the fronts: the core never imports it.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
import zlib

from ..findings import Severity
from ..framing import sniff
from ._encodings import decode_wide_text
from ._inflate import MAX_INFLATED, InflatedTooLargeError, Inflater
from ._not_streams import error_response
from ._readers import (
    detect,
    from_cassette,
    from_curl_trace,
    from_curl_verbose,
    from_devtools,
    from_har,
    from_log,
    from_trace_log,
)
from ._sdk_repr import from_sdk_repr
from ._websocket import message_reads
from ._wrong_input import is_html
from .capture import Capture, InputError, Note

__all__ = ["FORMATS", "MAX_INFLATED", "Capture", "InflatedTooLargeError", "InputError", "Note", "read_capture",
           "transport_notes"]

FORMATS = ("auto", "raw", "har", "cassette", "trace-log", "curl-verbose", "curl-trace", "log", "chunked")

def read_capture(data: bytes, *, input_format: str = "auto", entry: str | None = None,
                 max_inflated: int | None = None, refuse_larger: bool = False) -> Capture:
    """Turn the bytes a person has into a `Capture`. Raises `InputError` when they cannot be used.

    A gzip body is inflated to at most `max_inflated` bytes (`MAX_INFLATED`, 256 MiB, by
    default); past that, the rest is dropped and an `inflated-too-large` finding says where,
    or with `refuse_larger` (a server's request limit) `InflatedTooLargeError` is raised.
    """
    if max_inflated is not None and max_inflated < 1:
        raise ValueError(f"max_inflated must be positive, got {max_inflated!r}")
    if input_format not in FORMATS:
        raise InputError(f"unknown input format {input_format!r}; known: {', '.join(FORMATS)}")
    decoded = decode_wide_text(data) if input_format != "raw" else None
    if decoded is not None:
        data = decoded[0]
    kind = detect(data) if input_format == "auto" else input_format
    limit = MAX_INFLATED if max_inflated is None else max_inflated
    if kind == "har":
        capture = from_har(data, entry)
    elif kind == "cassette":
        capture = from_cassette(data, entry, max_inflated=limit, refuse_larger=refuse_larger)
    elif kind == "trace-log":
        capture = from_trace_log(data, entry, max_inflated=limit, refuse_larger=refuse_larger)
    elif kind == "curl-trace":
        capture = from_curl_trace(data)
    elif kind == "curl-verbose":
        capture = from_curl_verbose(data)
    elif kind == "log":
        capture = from_log(data)
    elif kind == "devtools":
        capture = from_devtools(data)
    else:
        rebuilt = from_sdk_repr(data) if kind == "sdk-repr" else None
        capture = Capture(data, "raw") if rebuilt is None else \
            Capture(rebuilt[0], "sdk-repr", notes=(rebuilt[1],), handed_out=True)
        if rebuilt is None and sniff(data[:65536], final=True) == "websocket":
            capture = dataclasses.replace(capture, reads=message_reads(data))
    if decoded is not None:
        capture = dataclasses.replace(capture, notes=(decoded[1], *capture.notes))
    return _unwrap_body(capture, force_chunked=kind == "chunked", max_inflated=limit, refuse_larger=refuse_larger)


# -- body encodings --------------------------------------------------------------------

# A run of '.' that stands for line feeds: before an SSE field or comment, or at the end of a read.
# Matched from a run's first dot only, so a long run of dots costs its length, not its square.
_DOTS_BEFORE_FIELD = re.compile(rb"(?<!\.)\.+(?=data:|event:|id:|retry:|: |\Z)")
_CHUNK_SIZE_LINE = re.compile(rb"([0-9a-fA-F]{1,8})(;[^\r\n]*)?\r\n")  # used with match(): anchored


def _unwrap_body(capture: Capture, *, force_chunked: bool, max_inflated: int, refuse_larger: bool) -> Capture:
    body, notes = capture.body, list(capture.notes)
    if body[:2] == b"\x1f\x8b":
        inflater = Inflater("gzip", max_inflated)
        try:
            inflater.feed(body)
        except zlib.error as exc:
            notes.append(Note("gzip-body", f"the body starts like gzip but does not decompress ({exc}); kept as is",
                              Severity.WARNING))
        else:
            if inflater.over and refuse_larger:
                raise inflater.refusal()
            body = inflater.body()
            notes.append(inflater.note())
            if inflater.over:
                notes.append(inflater.limit_note())
    reads = capture.reads
    if force_chunked or (_CHUNK_SIZE_LINE.match(body) and _looks_chunked(body)):
        unwrapped, complete, framing = _dechunk(body)
        if unwrapped is not None:
            body = unwrapped
            if reads:
                moved = _body_offsets([offset for offset, _ in reads], framing)
                reads = tuple((offset, seconds) for offset, (_, seconds) in zip(moved, reads))
            # A trace shows the wire, so chunk sizes are expected there; in a saved body they are a mistake.
            expected = capture.source == "curl-trace"
            notes.append(Note("chunked-transfer-encoding",
                              "the body still carried HTTP chunked transfer-encoding (chunk sizes in hex); it was "
                              "unwrapped" + ("" if complete else ", and the last chunk was cut off"),
                              Severity.INFO if expected else Severity.WARNING))
    if capture.source == "curl-trace" and any(note.code == "trace-ascii" for note in notes):
        runs = [len(match.group()) for match in _DOTS_BEFORE_FIELD.finditer(body)]
        body, guessed = _DOTS_BEFORE_FIELD.sub(lambda match: b"\n" * len(match.group()), body), sum(runs)
        if guessed:
            notes.append(Note("trace-ascii-lossy",
                              f"--trace-ascii prints line feeds and other control bytes as '.', so {guessed} of them "
                              "were guessed back from the SSE structure; use --trace (hex) or curl -N for exact bytes",
                              Severity.WARNING))
    if body is capture.body and len(notes) == len(capture.notes):
        return capture
    # An inflated or unwrapped body is no longer pieces of the file: where they came from is dropped.
    segments = capture.segments if body is capture.body else ()
    return dataclasses.replace(capture, body=body, reads=reads, notes=tuple(notes), segments=segments)


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


def _body_offsets(raw_offsets: list[int], framing: list[tuple[int, int]]) -> list[int]:
    """Where each byte of the chunked stream lands once the framing is removed. The spans are in stream
    order and never overlap, so only the last one that starts before an offset can hold it: a bisection
    per offset and a running total, not a sum over every span per offset (a long trace has many of both)."""
    starts = [start for start, _ in framing]
    removed_before = [0]  # removed_before[k]: bytes of framing in the first k spans
    for start, end in framing:
        removed_before.append(removed_before[-1] + end - start)
    out = []
    for offset in raw_offsets:
        spans = bisect.bisect_left(starts, offset)  # the spans that start before the offset
        removed = removed_before[spans]
        if spans:
            start, end = framing[spans - 1]
            removed -= end - min(end, offset)  # the last one may hold the offset: only its part before counts
        out.append(offset - removed)
    return out


# -- transport checks --------------------------------------------------------------------

_STREAM_CONTENT_TYPES = ("text/event-stream", "application/x-ndjson", "application/jsonl", "application/json",
                         "application/vnd.amazon.eventstream", "application/stream+json")


def transport_notes(capture: Capture, body_transport: str | None = None) -> list[Note]:
    """What the HTTP status and headers say about the stream, when they are known.

    `body_transport` is what the body turned out to be ("sse", "ndjson", ...): an SSE body sent
    with another Content-Type is flagged, since clients pick their parser by the Content-Type.
    """
    notes: list[Note] = []
    if body_transport == "websocket" or capture.status == 101:
        return notes  # a 101 upgrade without a Content-Type is how a WebSocket starts: nothing to flag
    if capture.status is not None and not 200 <= capture.status < 300:
        # An HTML page's text or an error response's is no help here (their findings say what they hold).
        said = is_html(capture.body) or error_response(capture.body) is not None
        snippet = "" if said else f" ({capture.body[:300].decode('utf-8', 'replace').strip()!r})"
        notes.append(Note("http-status", f"the response status was {capture.status}, not 200: the body is the "
                                         f"server's error, not a reply{snippet}", Severity.ERROR))
    if not capture.response_headers:
        return notes
    content_type = (capture.header("content-type") or "").split(";")[0].strip().lower()
    if not content_type:
        notes.append(Note("content-type", "the response had no Content-Type; browsers and some clients buffer "
                                          "such a stream (Firefox waits for text/event-stream)", Severity.WARNING))
    elif body_transport == "sse" and content_type != "text/event-stream" and len(capture.body.strip()) > 0:
        notes.append(Note("content-type", f"the body is SSE but the response Content-Type is {content_type!r}, not "
                                          "text/event-stream: clients that pick their parser by the Content-Type "
                                          "take the wrong one (a browser's EventSource refuses the stream, "
                                          "@microsoft/fetch-event-source throws by default"
                                          + (", a client that reads JSON whole waits for the end, then fails to "
                                             "parse it" if "json" in content_type else "") + ")", Severity.WARNING))
    elif content_type not in _STREAM_CONTENT_TYPES:
        notes.append(Note("content-type", f"the response Content-Type is {content_type!r}, not text/event-stream or "
                                          "NDJSON: clients may not treat it as a stream", Severity.WARNING))
    encoding = capture.header("content-encoding")
    if encoding and encoding.lower() != "identity":
        notes.append(Note("content-encoding", f"the stream was sent with Content-Encoding {encoding!r}: compression "
                                              "makes proxies and middleware buffer a stream until it ends "
                                              "(tower-rs/tower-http#419, Kludex/starlette#2753)", Severity.WARNING))
    if capture.header("content-length") is not None:
        notes.append(Note("buffered-response", "the response had a Content-Length, so it was sent whole, not "
                                               "streamed: something between the model and the client buffered it",
                          Severity.WARNING))
    accel = (capture.header("x-accel-buffering") or "").lower()
    if accel == "yes" or ("nginx" in (capture.header("server") or "").lower() and accel != "no"):
        notes.append(Note("proxy-buffering", "the response went through nginx without `X-Accel-Buffering: no`; "
                                             "nginx buffers proxied responses by default (proxy_buffering on)",
                          Severity.INFO))
    return notes
