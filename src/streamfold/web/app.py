"""The local web page's server: a Starlette app that serves the static page and
runs the core on what the page posts.

    GET  /                the page (static/index.html)
    GET  /static/...      app.js and its modules (static/js/), app.css, the icon
    GET  /api/meta        version, dialects, transports, size limit, the command line's FILE and --db store if any,
                          the finding codes that say the input is no stream
    GET  /api/capture     the bytes of the command line's FILE (read at each request, so a reload shows it anew)
    GET  /api/captures    the --db store's captures, newest first, and the ones after -> see stored.py
                          /ID/fold (a stored capture folded with its arrival times), /ID/body
    POST /api/fold        body: the capture's raw bytes; query: dialect, transport, entry (a HAR's), lane
                          -> see fold_view.py;
                          with frames=range: NDJSON progress, then the view without its rows -> see ranges.py
    GET  /api/frames      query: fold, start, count -> rows of a fold kept by frames=range -> see ranges.py
    POST /api/diff        body: left bytes then right bytes; query: left_size (bytes), dialect, transport -> see diff.py
    GET  /api/fleet       the --fleet directory's reports and filter values; /captures (a filtered page of its
                          captures, their outcome counts and latency histograms), /fold?id=CAPTURE_ID (one
                          opened again from where the fleet says and folded), /body?id= -> see fleet_view.py

Each endpoint is an adapter: the request's query and body to a `PageApi` call
(`api.py`, where the operations are, free of HTTP), its answer or `ApiError`
to a response. Only what a server needs is here: the fold slots and request
sizes (`limits.py`) and the NDJSON progress of a fold by range.

Everything stays on this machine. Who may ask (a loopback name on this port, or
off loopback the run's access token) and the security headers of every answer
are `access.py`'s.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from functools import partial
from pathlib import Path
from typing import Any, Literal

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .._sizes import format_size
from .access import CONTENT_SECURITY_POLICY, LOOPBACK_HOSTS, LocalOnly, is_loopback_host
from .api import DEFAULT_MAX_SIZE, ApiError, FoldOptions, PageApi, fold_options
from .fold_view import encode
from .limits import DEFAULT_MAX_FOLDS, FoldSlots, drain, read_body
from .limits import error as _error

__all__ = ["CONTENT_SECURITY_POLICY", "DEFAULT_MAX_FOLDS", "DEFAULT_MAX_SIZE", "LOOPBACK_HOSTS", "create_app",
           "format_size", "is_loopback_host"]

STATIC_DIR = Path(__file__).parent / "static"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def create_app(*, capture_path: str | os.PathLike[str] | None = None,
               max_size: int = DEFAULT_MAX_SIZE, max_folds: int = DEFAULT_MAX_FOLDS,
               db_path: str | os.PathLike[str] | None = None, open_stored: int | Literal["latest"] | None = None,
               token: str | None = None, fleet_path: str | os.PathLike[str] | None = None) -> ASGIApp:
    """The ASGI app. `capture_path`: a file the page opens on load; `max_size`: the largest
    request body accepted, in bytes (a diff's two captures count together; a gzip body
    counts inflated), and the largest stored capture folded; `max_folds`: how many folds or
    diffs run at once (more get 503). `db_path`: a capture store the page lists (it need not
    exist yet: a recorder may create it); `open_stored`: the stored capture the page opens on
    load (an id, or the latest). `token`: the run's access token, which every request must carry
    when the server is bound off loopback (`access.LocalOnly`); None on loopback. `fleet_path`: a fleet
    directory (`streamfold fleet fold`'s) the page reports on and opens captures of."""
    api = PageApi(capture_path=capture_path, max_size=max_size, kept_folds=max_folds, db_path=db_path,
                  open_stored=open_stored, fleet_path=fleet_path)
    slots = FoldSlots(max_folds)

    async def index(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html; charset=utf-8")

    async def meta(request: Request) -> Response:
        return Response(encode(api.meta()), media_type="application/json")

    async def opened_file(request: Request) -> Response:
        return await _answer(api.opened_file)

    async def folding(request: Request, work: Callable[[bytes, FoldOptions], Any]) -> Response:
        """Run `work(body, options)` in a thread, if a fold slot is free (503 when not), as JSON."""
        if not slots.take():
            await drain(request)
            return slots.refusal()
        try:
            options = _query_options(request)
            body = await read_body(request, max_size)
            if isinstance(body, Response):
                return body
            return await _answer(work, body, options)
        finally:
            slots.give_back()

    async def fold_endpoint(request: Request) -> Response:
        if request.query_params.get("frames") == "range":
            return await fold_by_range(request)
        return await folding(request, api.fold)

    async def fold_by_range(request: Request) -> Response:
        """The page's fold: progress as it folds, the view without its rows (they come by range)."""
        if not slots.take():
            await drain(request)
            return slots.refusal()
        try:
            options = _query_options(request)
            body = await read_body(request, max_size)
            if isinstance(body, Response):
                slots.give_back()
                return body
            # Read before the answer starts: a capture over the limit once inflated gets 413, as one over it as
            # sent does; an unusable one is said in the answer's last line, as whatever the fold finds.
            capture = await run_in_threadpool(api.read, body, options)
        except BaseException:
            slots.give_back()
            raise
        return _fold_stream(lambda progress: api.fold(body, options, frames="range", progress=progress,
                                                      capture=capture), slots.give_back)

    async def frames_endpoint(request: Request) -> Response:
        params = request.query_params
        return await _answer(partial(api.frames, params.get("fold", ""), **_given(params, "start", "count")))

    async def diff_endpoint(request: Request) -> Response:
        left_size = request.query_params.get("left_size", "")
        return await folding(request, lambda body, options: api.diff(body, left_size, options))

    async def captures_list(request: Request) -> Response:
        params = request.query_params
        status, answer = await run_in_threadpool(partial(api.captures, params.get("since"), **_given(params, "limit")))
        return Response(encode(answer), status_code=status, media_type="application/json")

    async def slotted_fold(request: Request, fold: Callable[..., Any], capture_id: Any) -> Response:
        """A capture the page names (stored, of a fleet) folded in one of the fold slots, its frames by range
        as a stream when asked."""
        options = _query_options(request)
        if not slots.take():
            return slots.refusal()
        if request.query_params.get("frames") == "range":
            return _fold_stream(lambda progress: fold(capture_id, options, frames="range", progress=progress),
                                slots.give_back)
        try:
            return await _answer(fold, capture_id, options)
        finally:
            slots.give_back()

    async def stored_fold(request: Request) -> Response:
        return await slotted_fold(request, api.stored_fold, api.stored_id(request.path_params["capture_id"]))

    async def stored_body(request: Request) -> Response:
        return await _answer(api.stored_body, api.stored_id(request.path_params["capture_id"]))

    async def fleet(request: Request) -> Response:
        return await _answer(api.fleet)

    async def fleet_captures(request: Request) -> Response:
        params = request.query_params
        return await _answer(partial(api.fleet_captures, **_given(params, "dialect", "model", "outcome", "finding",
                                                                  "offset", "limit")))

    async def fleet_fold(request: Request) -> Response:
        return await slotted_fold(request, api.fleet_fold, request.query_params.get("id", ""))

    async def fleet_body(request: Request) -> Response:
        return await _answer(api.fleet_body, request.query_params.get("id", ""))

    app = Starlette(routes=[
        Route("/", index),
        Route("/api/meta", _answering(meta)),
        Route("/api/capture", _answering(opened_file)),
        Route("/api/fold", _answering(fold_endpoint), methods=["POST"]),
        Route("/api/frames", _answering(frames_endpoint)),
        Route("/api/diff", _answering(diff_endpoint), methods=["POST"]),
        Route("/api/captures", _answering(captures_list)),
        Route("/api/captures/{capture_id}/fold", _answering(stored_fold)),
        Route("/api/captures/{capture_id}/body", _answering(stored_body)),
        Route("/api/fleet", _answering(fleet)),
        Route("/api/fleet/captures", _answering(fleet_captures)),
        Route("/api/fleet/fold", _answering(fleet_fold)),
        Route("/api/fleet/body", _answering(fleet_body)),
        Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
    ])
    return LocalOnly(app, token)


Endpoint = Callable[[Request], Awaitable[Response]]


def _answering(endpoint: Endpoint) -> Endpoint:
    """`endpoint`, with a refusal of the operations (`ApiError`) answered as its status and sentence."""
    async def answered(request: Request) -> Response:
        try:
            return await endpoint(request)
        except ApiError as exc:
            return _error(exc.status, exc.message)
    return answered


async def _answer(operation: Callable[..., Any], *args: Any) -> Response:
    """`operation(*args)` run in a thread: its bytes as they are, anything else as JSON."""
    def answered() -> Response:  # the operation and its encoding in one trip to the thread pool
        value = operation(*args)
        if isinstance(value, bytes):
            return Response(value, media_type="application/octet-stream")
        return Response(encode(value), media_type="application/json")

    return await run_in_threadpool(answered)


def _given(params: Mapping[str, str], *names: str) -> dict[str, str]:
    """The query parameters among `names` the request gave (the operation's defaults stand for the rest)."""
    return {name: params[name] for name in names if name in params}


def _query_options(request: Request) -> FoldOptions:
    params = request.query_params
    return fold_options(params.get("dialect"), params.get("transport"), params.get("entry"), params.get("lane"))


def _fold_stream(work: Callable[[Callable[[int, int], None]], dict[str, Any]],
                 done: Callable[[], None]) -> Response:
    """Run `work(progress)` in a thread and answer its progress, then its view, as NDJSON lines:
    `{"progress": bytes, "total": bytes}` lines, then `{"view": ...}` or `{"error": ..., "status": ...}`.
    `done()` is called once the work has ended (also when the client went away)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()

    def put(line: bytes | None) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, line)

    def progress(folded: int, total: int) -> None:
        put(encode({"progress": folded, "total": total}) + b"\n")

    def run() -> None:
        try:
            put(b'{"view":' + encode(work(progress)) + b"}\n")
        except ApiError as exc:
            put(encode({"error": exc.message, "status": exc.status}) + b"\n")
        except Exception as exc:
            put(encode({"error": f"streamfold failed on this capture: {type(exc).__name__}: {exc}",
                        "status": 500}) + b"\n")
        finally:
            put(None)
            # Here, not after the answer: a client that goes away cancels the answer, and the work (and
            # its slot) would never be given back.
            loop.call_soon_threadsafe(done)

    loop.run_in_executor(None, run)

    async def lines() -> AsyncIterator[bytes]:
        while (line := await queue.get()) is not None:
            yield line

    return StreamingResponse(lines(), media_type="application/x-ndjson")
