"""The local web page's server: a Starlette app that serves the static page and
runs the core on what the page posts.

    GET  /                the page (static/index.html)
    GET  /static/...      app.js, app.css, the icon
    GET  /api/meta        version, dialects, transports, size limit, the command line's FILE if any
    GET  /api/capture     the bytes of the command line's FILE (read at each request, so a reload shows it anew)
    POST /api/fold        body: the capture's raw bytes; query: dialect, transport -> see fold_view.py
    POST /api/diff        body: left bytes then right bytes; query: left_size (bytes), dialect, transport -> see diff.py

Everything stays on this machine. The page is meant for the person at this
machine's browser only, so every request must be addressed to a loopback
name (a web page elsewhere that points a DNS name at 127.0.0.1 gets 403:
DNS rebinding), requests from other origins are refused, and every response
carries a Content-Security-Policy that allows no other origin and no inline
script, so even a stream that smuggled markup into the page could not run
or load anything.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .. import __version__
from ..dialects import DIALECTS
from ..framing.sniff import TRANSPORTS
from ..services import InputError
from .diff import diff_captures
from .fold_view import build_fold_view, encode

__all__ = ["CONTENT_SECURITY_POLICY", "DEFAULT_MAX_SIZE", "LOOPBACK_HOSTS", "create_app", "format_size"]

STATIC_DIR = Path(__file__).parent / "static"

DEFAULT_MAX_SIZE = 64 * 1024 * 1024

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'")

SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    # Captures can hold private prompts: keep responses out of every cache.
    (b"cache-control", b"no-store"),
]

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def create_app(*, capture_path: str | os.PathLike[str] | None = None,
               max_size: int = DEFAULT_MAX_SIZE) -> ASGIApp:
    """The ASGI app. `capture_path`: a file the page opens on load; `max_size`: the largest
    request body accepted, in bytes (a diff's two captures count together)."""
    if max_size < 1:
        raise ValueError(f"max_size must be positive, got {max_size!r}")
    capture = Path(capture_path) if capture_path is not None else None

    async def index(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html; charset=utf-8")

    async def meta(request: Request) -> Response:
        described = None
        if capture is not None:
            try:
                described = {"name": capture.name, "size": capture.stat().st_size}
            except OSError as exc:
                described = {"name": capture.name, "error": _reason(exc)}
        return JSONResponse({"version": __version__, "dialects": sorted(DIALECTS), "transports": list(TRANSPORTS),
                             "max_size": max_size, "capture": described})

    async def capture_bytes(request: Request) -> Response:
        if capture is None:
            return _error(404, "no capture was given on the command line")
        try:
            body = await run_in_threadpool(capture.read_bytes)
        except OSError as exc:
            return _error(404, f"cannot read {capture.name!r}: {_reason(exc)}")
        return Response(body, media_type="application/octet-stream")

    async def fold_endpoint(request: Request) -> Response:
        prepared = await _options_and_body(request, max_size)
        if isinstance(prepared, Response):
            return prepared
        options, body = prepared
        try:
            view = await run_in_threadpool(build_fold_view, body, **options)
        except InputError as exc:
            return _error(400, str(exc))
        return Response(await run_in_threadpool(encode, view), media_type="application/json")

    async def diff_endpoint(request: Request) -> Response:
        prepared = await _options_and_body(request, max_size)
        if isinstance(prepared, Response):
            return prepared
        options, body = prepared
        left_size = request.query_params.get("left_size", "")
        # isdigit() alone takes '²' and other digits int() refuses; the length bounds int()'s digit limit.
        if not (left_size.isascii() and left_size.isdigit() and len(left_size) <= 20) or int(left_size) > len(body):
            return _error(400, f"left_size must be the byte length of the left capture (0 to {len(body)}), "
                               f"got {left_size!r}")
        split = int(left_size)
        try:
            view = await run_in_threadpool(diff_captures, body[:split], body[split:], **options)
        except InputError as exc:
            return _error(400, str(exc))
        return Response(await run_in_threadpool(encode, view), media_type="application/json")

    app = Starlette(routes=[
        Route("/", index),
        Route("/api/meta", meta),
        Route("/api/capture", capture_bytes),
        Route("/api/fold", fold_endpoint, methods=["POST"]),
        Route("/api/diff", diff_endpoint, methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
    ])
    return LocalOnly(app)


class LocalOnly:
    """ASGI middleware: refuse what is not addressed to this machine by a loopback name
    or comes from another origin, and put the security headers on every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        refusal = _refusal(headers)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*_without_security(message.get("headers", [])), *SECURITY_HEADERS]
            await send(message)

        if refusal is not None:
            await _error(403, refusal)(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)


def _refusal(headers: dict[str, str]) -> str | None:
    host = headers.get("host", "")
    if not is_loopback_host(host):
        return (f"this page only answers requests addressed to localhost, 127.0.0.1 or [::1]; "
                f"the Host header was {host!r}")
    origin = headers.get("origin")
    if origin is not None:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not is_loopback_host(parts.netloc):
            return f"requests from other origins are refused (Origin {origin!r})"
    return None


def is_loopback_host(host: str) -> bool:
    """localhost, 127.0.0.1 or [::1], with or without a port."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host.partition("]")
        name += "]"
        port = rest.removeprefix(":")
        if rest and not rest.startswith(":"):
            return False
    else:
        name, _, port = host.partition(":")
    if port and not port.isdigit():
        return False
    return name in LOOPBACK_HOSTS


def _without_security(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    ours = {name for name, _ in SECURITY_HEADERS}
    return [(name, value) for name, value in headers if name.lower() not in ours]


def _fold_options(request: Request) -> dict[str, str | None] | Response:
    dialect = request.query_params.get("dialect") or None
    transport = request.query_params.get("transport") or None
    if dialect is not None and dialect not in DIALECTS:
        return _error(400, f"unknown dialect {dialect!r}; known: {', '.join(sorted(DIALECTS))}")
    if transport is not None and transport not in TRANSPORTS:
        return _error(400, f"unknown transport {transport!r}; known: {', '.join(TRANSPORTS)}")
    return {"dialect": dialect, "transport": transport}


async def _options_and_body(request: Request, max_size: int) -> tuple[dict[str, str | None], bytes] | Response:
    """What both fold endpoints start with: the dialect/transport options and the capture, or the error."""
    options = _fold_options(request)
    if isinstance(options, Response):
        return options
    body = await _read_body(request, max_size)
    if isinstance(body, Response):
        return body
    return options, body


async def _read_body(request: Request, max_size: int) -> bytes | Response:
    """The request body, or a 413 once it is known to be over the limit.

    The rest of an oversize body is read and dropped (up to `_DRAIN_LIMIT`)
    rather than left unread: a browser still uploading when the connection
    closes reports a network error instead of our message.
    """
    declared = request.headers.get("content-length", "")
    size = int(declared) if declared.isascii() and declared.isdigit() and len(declared) <= 20 else None
    body = bytearray()
    received = 0
    async for chunk in request.stream():
        received += len(chunk)
        if received > max_size or (size is not None and size > max_size):
            if received > _DRAIN_LIMIT:
                break
            body.clear()
            continue
        body += chunk
    if received > max_size or (size is not None and size > max_size):
        return _too_large(max(received, size or 0), max_size)
    return bytes(body)


#: How much of an oversize body is read to reply cleanly before the connection is dropped.
_DRAIN_LIMIT = 1024 * 1024 * 1024


def _too_large(size: int, max_size: int) -> Response:
    suggestion = 1024 * 1024
    while suggestion < max(size + 1, 2 * max_size):
        suggestion *= 2
    return _error(413, f"The capture is {format_size(size)}; this server accepts at most {format_size(max_size)} "
                       f"per request. Start it with a larger limit, for example: "
                       f"streamfold web --max-size {format_size(suggestion, compact=True)}")


def format_size(size: int, *, compact: bool = False) -> str:
    """1536 -> '1.5 KiB' ('2KiB' with compact: rounded up, no space, as `--max-size` takes it)."""
    units = ("B", "KiB", "MiB", "GiB", "TiB")
    value, unit = float(size), 0
    while value >= 1024 and unit < len(units) - 1:
        value, unit = value / 1024, unit + 1
    if compact:
        return f"{math.ceil(value)}{units[unit]}"
    return f"{value:.0f} {units[unit]}" if value == int(value) else f"{value:.1f} {units[unit]}"


def _error(status: int, message: str) -> Response:
    return Response(json.dumps({"error": message}, ensure_ascii=False), status_code=status,
                    media_type="application/json")


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)
