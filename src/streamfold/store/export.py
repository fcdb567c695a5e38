"""A stored exchange written out for other tools: the body as received (raw), a
HAR file of one entry (with timings), or a `curl --trace --trace-time`-style
dump (hex, every byte, each read with its time) that `streamfold` and
anything that reads curl traces take back with the same arrival times."""

from __future__ import annotations

import base64
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import urlsplit

from .._json import dumps_strict
from .reader import StoredExchange

__all__ = ["FORMATS", "export", "to_har", "to_trace"]

FORMATS = ("raw", "har", "trace")


def export(exchange: StoredExchange, fmt: str) -> bytes:
    if fmt == "raw":
        return exchange.body
    if fmt == "har":
        return to_har(exchange)
    if fmt == "trace":
        return to_trace(exchange)
    raise ValueError(f"unknown export format {fmt!r}; known: {', '.join(FORMATS)}")


def _start(exchange: StoredExchange) -> datetime:
    return datetime.fromtimestamp(exchange.started_at, timezone.utc)


def _har_headers(headers: tuple[tuple[str, str], ...]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in headers]


def _text(data: bytes) -> dict[str, Any]:
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"text": base64.b64encode(data).decode("ascii"), "encoding": "base64"}


def to_har(exchange: StoredExchange) -> bytes:
    """A HAR 1.2 log of the one entry. Times in milliseconds: `wait` until the response head (or the
    first read), `receive` from then to the end; the reads' own times are in `_reads` ([offset, s])."""
    decoded = exchange.capture()  # HAR content is the decoded body (its headers say how it was sent)
    body = decoded.body
    head = exchange.response_at if exchange.response_at is not None else (
        exchange.reads[0][1] if exchange.reads else 0.0)
    end = exchange.ended_at if exchange.ended_at is not None else (exchange.reads[-1][1] if exchange.reads else head)
    content_type = next((value for name, value in exchange.response_headers if name.lower() == "content-type"), "")
    request_type = next((value for name, value in exchange.request_headers if name.lower() == "content-type"), "")
    query = urlsplit(exchange.url).query
    request: dict[str, Any] = {
        "method": exchange.method, "url": exchange.url, "httpVersion": "HTTP/1.1", "cookies": [],
        "headers": _har_headers(exchange.request_headers),
        "queryString": [{"name": name, "value": value} for name, _, value in
                        (part.partition("=") for part in query.split("&") if part)],
        "headersSize": -1, "bodySize": len(exchange.request_body)}
    if exchange.request_body:
        request["postData"] = {"mimeType": request_type, **_text(exchange.request_body)}
    entry = {
        "startedDateTime": _start(exchange).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "time": round(end * 1000, 3),
        "request": request,
        "response": {
            "status": exchange.status if exchange.status is not None else 0, "statusText": "",
            "httpVersion": "HTTP/1.1", "cookies": [], "headers": _har_headers(exchange.response_headers),
            "content": {"size": len(body), "mimeType": content_type, **_text(body)},
            "redirectURL": "", "headersSize": -1, "bodySize": len(body)},
        "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0,
                    "wait": round(head * 1000, 3), "receive": round(max(0.0, end - head) * 1000, 3)},
        "comment": f"streamfold capture #{exchange.id}" + (f", {exchange.outcome}" if exchange.outcome else
                                                           ", in flight") + "".join(
            f"; {note.message}" for note in decoded.notes if note.code == "inflated-too-large"),
        "_reads": [[offset, at] for offset, at in decoded.reads or ()],
    }
    if exchange.error:
        entry["_error"] = exchange.error
    har = {"log": {"version": "1.2", "creator": {"name": "streamfold", "version": _version()}, "entries": [entry]}}
    return (dumps_strict(har, indent=1) + "\n").encode("utf-8", "surrogatepass")


def _version() -> str:
    from .. import __version__

    return __version__


def to_trace(exchange: StoredExchange) -> bytes:
    """`curl --trace - --trace-time` as curl writes it: the request, then each response header line and
    each body read as a block of hex rows, stamped with its time of day (UTC)."""
    start = _start(exchange)
    out: list[str] = []

    def stamp(seconds: float) -> str:
        return (start + timedelta(seconds=seconds)).strftime("%H:%M:%S.%f")

    def block(seconds: float, label: str, data: bytes) -> None:
        out.append(f"{stamp(seconds)} {label}, {len(data)} bytes (0x{len(data):x})")
        for row in range(0, len(data), 16):
            part = data[row : row + 16]
            ascii_column = "".join(chr(byte) if 0x20 <= byte < 0x7F else "." for byte in part)
            out.append(f"{row:04x}: {' '.join(f'{byte:02x}' for byte in part):<47} {ascii_column}")

    parts = urlsplit(exchange.url)
    out.append(f"{stamp(0.0)} == Info: streamfold capture #{exchange.id}: {exchange.method} {_line(exchange.url)}")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    request_head = f"{exchange.method} {target} HTTP/1.1\r\n" + "".join(
        f"{name}: {value}\r\n" for name, value in exchange.request_headers) + "\r\n"
    block(0.0, "=> Send header", request_head.encode("utf-8", "surrogateescape"))
    if exchange.request_body:
        block(0.0, "=> Send data", exchange.request_body)
    head_at = exchange.response_at if exchange.response_at is not None else (
        exchange.reads[0][1] if exchange.reads else 0.0)
    if exchange.status is not None:
        block(head_at, "<= Recv header", f"HTTP/1.1 {exchange.status} \r\n".encode())
        for name, value in exchange.response_headers:
            if name.lower() == "transfer-encoding":
                continue  # the stored body is the decoded one: no chunk sizes in it
            block(head_at, "<= Recv header", f"{name}: {value}\r\n".encode("utf-8", "surrogateescape"))
        block(head_at, "<= Recv header", b"\r\n")
    for (_, seconds), data in zip(exchange.reads, exchange.chunks, strict=True):
        block(seconds, "<= Recv data", data)
    if exchange.outcome is None:
        out.append(f"{stamp(exchange.reads[-1][1] if exchange.reads else head_at)} == Info: still in flight")
    elif exchange.outcome != "complete":
        end = exchange.ended_at if exchange.ended_at is not None else head_at
        reason = f": {_line(exchange.error)}" if exchange.error else ""
        out.append(f"{stamp(end)} == Info: {exchange.outcome}{reason}")
    return ("\n".join(out) + "\n").encode("utf-8", "surrogateescape")


def _line(text: str) -> str:
    return " ".join(text.split()) if any(char in text for char in "\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029") else text
