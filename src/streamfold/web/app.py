"""The local web page's server: a Starlette app that serves the static page and
runs the core on what the page posts.

    GET  /                the page (static/index.html)
    GET  /static/...      app.js, app.css, the icon
    GET  /api/meta        version, dialects, transports, size limit, the command line's FILE and --db store if any,
                          the finding codes that say the input is no stream
    GET  /api/capture     the bytes of the command line's FILE (read at each request, so a reload shows it anew)
    GET  /api/captures    the --db store's captures, newest first, and the ones after -> see stored.py
                          /ID/fold (a stored capture folded with its arrival times), /ID/body
    POST /api/fold        body: the capture's raw bytes; query: dialect, transport, entry (a HAR's) -> see fold_view.py;
                          with frames=range: NDJSON progress, then the view without its rows -> see ranges.py
    GET  /api/frames      query: fold, start, count -> rows of a fold kept by frames=range -> see ranges.py
    POST /api/diff        body: left bytes then right bytes; query: left_size (bytes), dialect, transport -> see diff.py

Everything stays on this machine. Who may ask (a loopback name on this port, or
off loopback the run's access token) and the security headers of every answer
are `access.py`'s.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any, Literal

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .. import __version__
from ..dialects import DIALECTS
from ..framing.sniff import TRANSPORTS
from ..services import NOT_A_STREAM, InputError
from .access import CONTENT_SECURITY_POLICY, LOOPBACK_HOSTS, LocalOnly, is_loopback_host
from .diff import diff_captures
from .fold_view import build_fold_view, encode, read_posted
from .limits import DEFAULT_MAX_FOLDS, FoldSlots, TooLargeError, drain, format_size, read_body
from .limits import error as _error
from .ranges import FoldStore, fold_stream, frames_range
from .stored import DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, CaptureTooLargeError, StoreSource, parse_id

__all__ = ["CONTENT_SECURITY_POLICY", "DEFAULT_MAX_FOLDS", "DEFAULT_MAX_SIZE", "LOOPBACK_HOSTS", "create_app",
           "format_size", "is_loopback_host"]

STATIC_DIR = Path(__file__).parent / "static"

DEFAULT_MAX_SIZE = 64 * 1024 * 1024

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def create_app(*, capture_path: str | os.PathLike[str] | None = None,
               max_size: int = DEFAULT_MAX_SIZE, max_folds: int = DEFAULT_MAX_FOLDS,
               db_path: str | os.PathLike[str] | None = None, open_stored: int | Literal["latest"] | None = None,
               token: str | None = None) -> ASGIApp:
    """The ASGI app. `capture_path`: a file the page opens on load; `max_size`: the largest
    request body accepted, in bytes (a diff's two captures count together; a gzip body
    counts inflated), and the largest stored capture folded; `max_folds`: how many folds or
    diffs run at once (more get 503). `db_path`: a capture store the page lists (it need not
    exist yet: a recorder may create it); `open_stored`: the stored capture the page opens on
    load (an id, or the latest). `token`: the run's access token, which every request must carry
    when the server is bound off loopback (`access.LocalOnly`); None on loopback."""
    if max_size < 1:
        raise ValueError(f"max_size must be positive, got {max_size!r}")
    if open_stored is not None and db_path is None:
        raise ValueError("open_stored needs db_path: the store it is in")
    capture = Path(capture_path) if capture_path is not None else None
    store = StoreSource(db_path) if db_path is not None else None
    slots = FoldSlots(max_folds)
    kept = FoldStore(max_folds)

    async def index(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html; charset=utf-8")

    async def meta(request: Request) -> Response:
        described = None
        if capture is not None:
            try:
                described = {"name": capture.name, "size": capture.stat().st_size}
            except OSError as exc:
                described = {"name": capture.name, "error": _reason(exc)}
        listed = None if store is None else {"name": store.name, "open": open_stored}
        return JSONResponse({"version": __version__, "dialects": sorted(DIALECTS), "transports": list(TRANSPORTS),
                             "max_size": max_size, "capture": described, "store": listed,
                             "not_a_stream": sorted(NOT_A_STREAM)})

    async def capture_bytes(request: Request) -> Response:
        if capture is None:
            return _error(404, "no capture was given on the command line")
        try:
            body = await run_in_threadpool(capture.read_bytes)
        except OSError as exc:
            return _error(404, f"cannot read {capture.name!r}: {_reason(exc)}")
        return Response(body, media_type="application/octet-stream")

    async def folding(request: Request, work: Callable[[bytes, dict[str, str | None]], Any]) -> Response:
        """Run `work(body, options)` in a thread, if a fold slot is free (503 when not), as JSON."""
        if not slots.take():
            await drain(request)
            return slots.refusal()
        try:
            prepared = await _options_and_body(request, max_size)
            if isinstance(prepared, Response):
                return prepared
            options, body = prepared
            try:
                view = await run_in_threadpool(work, body, options)
            except InputError as exc:
                return _error(413 if isinstance(exc, TooLargeError) else 400, str(exc))
            return Response(await run_in_threadpool(encode, view), media_type="application/json")
        finally:
            slots.give_back()

    async def fold_endpoint(request: Request) -> Response:
        if request.query_params.get("frames") == "range":
            return await fold_by_range(request)
        return await folding(request, lambda body, options: build_fold_view(
            body, dialect=options["dialect"], transport=options["transport"], entry=options["entry"],
            max_inflated=max_size))

    async def fold_by_range(request: Request) -> Response:
        """The page's fold: progress as it folds, the view without its rows (they come by range)."""
        if not slots.take():
            await drain(request)
            return slots.refusal()
        try:
            prepared = await _options_and_body(request, max_size)
        except BaseException:
            slots.give_back()
            raise
        if isinstance(prepared, Response):
            slots.give_back()
            return prepared
        options, body = prepared
        # Read before the answer starts: a capture over the limit once inflated gets 413, as one over it as
        # sent does; an unusable one is said in the answer's last line, as whatever the fold finds.
        try:
            capture = await run_in_threadpool(read_posted, body, entry=options["entry"], max_size=max_size)
        except TooLargeError as exc:
            slots.give_back()
            return _error(413, str(exc))
        except InputError:
            capture = None
        except BaseException:
            slots.give_back()
            raise
        return fold_stream(lambda progress: build_fold_view(
            body, dialect=options["dialect"], transport=options["transport"], entry=options["entry"],
            max_inflated=max_size, frames="range", progress=progress, keep=kept.keep, capture=capture),
            slots.give_back)

    async def frames_endpoint(request: Request) -> Response:
        return await frames_range(request, kept)

    async def diff_endpoint(request: Request) -> Response:
        left_size = request.query_params.get("left_size", "")

        def work(body: bytes, options: dict[str, str | None]) -> Any:
            # isdigit() alone takes '²' and other digits int() refuses; the length bounds int()'s digit limit.
            if not (left_size.isascii() and left_size.isdigit() and len(left_size) <= 20) or int(left_size) > len(body):
                raise InputError(f"left_size must be the byte length of the left capture (0 to {len(body)}), "
                                 f"got {left_size!r}")
            split = int(left_size)
            return diff_captures(body[:split], body[split:], max_inflated=max_size, dialect=options["dialect"],
                                 transport=options["transport"])
        return await folding(request, work)

    async def captures_list(request: Request) -> Response:
        if store is None:
            return _error(404, _NO_STORE)
        limit = request.query_params.get("limit", str(DEFAULT_LIST_LIMIT))
        if not (limit.isascii() and limit.isdigit() and len(limit) <= 6 and 1 <= int(limit) <= MAX_LIST_LIMIT):
            return _error(400, f"limit must be a number of captures from 1 to {MAX_LIST_LIMIT}, got {limit!r}")
        status, answer = await run_in_threadpool(store.listing, request.query_params.get("since"), int(limit))
        return Response(encode(answer), status_code=status, media_type="application/json")

    async def stored_fold(request: Request) -> Response:
        found = _stored_id(request, store)
        if isinstance(found, Response):
            return found
        source, capture_id = found
        options = _fold_options(request)
        if isinstance(options, Response):
            return options
        dialect, transport = options["dialect"], options["transport"]
        if not slots.take():
            return slots.refusal()
        if request.query_params.get("frames") == "range":
            return fold_stream(lambda progress: source.view(
                capture_id, dialect=dialect, transport=transport, max_size=max_size, frames="range",
                progress=progress, keep=kept.keep), slots.give_back)
        try:
            view = await run_in_threadpool(source.view, capture_id, dialect=dialect, transport=transport,
                                           max_size=max_size)
            return Response(await run_in_threadpool(encode, view), media_type="application/json")
        except InputError as exc:
            return _error(413 if isinstance(exc, CaptureTooLargeError) else 404, str(exc))
        finally:
            slots.give_back()

    async def stored_body(request: Request) -> Response:
        found = _stored_id(request, store)
        if isinstance(found, Response):
            return found
        source, capture_id = found
        try:
            body = await run_in_threadpool(source.body, capture_id, max_size)
        except InputError as exc:
            return _error(413 if isinstance(exc, CaptureTooLargeError) else 404, str(exc))
        return Response(body, media_type="application/octet-stream")

    app = Starlette(routes=[
        Route("/", index),
        Route("/api/meta", meta),
        Route("/api/capture", capture_bytes),
        Route("/api/fold", fold_endpoint, methods=["POST"]),
        Route("/api/frames", frames_endpoint),
        Route("/api/diff", diff_endpoint, methods=["POST"]),
        Route("/api/captures", captures_list),
        Route("/api/captures/{capture_id}/fold", stored_fold),
        Route("/api/captures/{capture_id}/body", stored_body),
        Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
    ])
    return LocalOnly(app, token)


def _fold_options(request: Request) -> dict[str, str | None] | Response:
    dialect = request.query_params.get("dialect") or None
    transport = request.query_params.get("transport") or None
    if dialect is not None and dialect not in DIALECTS:
        return _error(400, f"unknown dialect {dialect!r}; known: {', '.join(sorted(DIALECTS))}")
    if transport is not None and transport not in TRANSPORTS:
        return _error(400, f"unknown transport {transport!r}; known: {', '.join(TRANSPORTS)}")
    entry = request.query_params.get("entry") or None
    if entry is not None and len(entry) > _MAX_ENTRY:
        return _error(400, f"entry must be an entry's number (a HAR entry, a cassette interaction, a trace log "
                          f"record) or a part of its URL, at most {_MAX_ENTRY} characters")
    return {"dialect": dialect, "transport": transport, "entry": entry}


# The longest `entry` option taken (a part of a URL).
_MAX_ENTRY = 2000


async def _options_and_body(request: Request, max_size: int) -> tuple[dict[str, str | None], bytes] | Response:
    """What both fold endpoints start with: the dialect/transport options and the capture, or the error."""
    options = _fold_options(request)
    if isinstance(options, Response):
        return options
    body = await read_body(request, max_size)
    if isinstance(body, Response):
        return body
    return options, body


_NO_STORE = "no capture store was given: start the page with streamfold web --db PATH"


def _stored_id(request: Request, store: StoreSource | None) -> tuple[StoreSource, int] | Response:
    """The store and the capture id a /api/captures/ID/... request names, or the refusal."""
    if store is None:
        return _error(404, _NO_STORE)
    text = request.path_params["capture_id"]
    capture_id = parse_id(text)
    if capture_id is None:
        return _error(404, f"a capture id is a number, got {text!r}")
    return store, capture_id


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)
