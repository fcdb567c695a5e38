"""The page's way through a big capture: the result first, the frames by range.

    POST /api/fold?frames=range   answers NDJSON as it folds: `{"progress": bytes, "total": bytes}`
                                  lines, then `{"view": ...}` (the fold view without its rows, with
                                  "frame_count", "frame_kinds" and "fold_id") or `{"error": ...}`
    GET  /api/frames?fold=ID&start=S&count=N
                                  {"fold_id", "start", "total", "frames": rows S to S+N-1} (the rows
                                  of `fold_view.frame_views`; at most `MAX_RANGE` a request)

The server keeps the last folds asked for this way (`FoldStore`: as many as
`--max-folds`, the oldest dropped first), so a range of a fold that was
dropped gets 404 and the page folds the capture again.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from ..result import Result
from ..services import InputError
from .file_view import SpanMap
from .fold_view import encode, frame_views
from .limits import TooLargeError, error

__all__ = ["MAX_RANGE", "FoldStore", "fold_stream", "frames_range"]

#: The most rows one range request returns.
MAX_RANGE = 5000


class FoldStore:
    """The last `size` folds, by id: their Result, stream body, arrival times and where the body's
    pieces are in the input (threads add, the loop reads)."""

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self._folds: OrderedDict[str, tuple[Result, bytes, Sequence[float], SpanMap | None]] = OrderedDict()
        self._lock = threading.Lock()

    def keep(self, result: Result, body: bytes, arrivals: Sequence[float] = (), spans: SpanMap | None = None) -> str:
        fold_id = secrets.token_urlsafe(12)
        with self._lock:
            self._folds[fold_id] = (result, body, arrivals, spans)
            while len(self._folds) > self.size:
                self._folds.popitem(last=False)
        return fold_id

    def get(self, fold_id: str) -> tuple[Result, bytes, Sequence[float], SpanMap | None] | None:
        with self._lock:
            found = self._folds.get(fold_id)
            if found is not None:
                self._folds.move_to_end(fold_id)
            return found

    def __len__(self) -> int:
        return len(self._folds)


def fold_stream(work: Callable[[Callable[[int, int], None]], dict[str, Any]],
                done: Callable[[], None]) -> Response:
    """Run `work(progress)` in a thread and answer its progress, then its view, as NDJSON lines.
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
        except InputError as exc:
            put(encode({"error": str(exc), "status": 413 if isinstance(exc, TooLargeError) else 400}) + b"\n")
        except Exception as exc:
            put(encode({"error": f"streamfold failed on this capture: {type(exc).__name__}: {exc}",
                        "status": 500}) + b"\n")
        finally:
            put(None)

    task = loop.run_in_executor(None, run)

    async def lines() -> AsyncIterator[bytes]:
        try:
            while (line := await queue.get()) is not None:
                yield line
        finally:
            await task
            done()

    return StreamingResponse(lines(), media_type="application/x-ndjson")


async def frames_range(request: Request, store: FoldStore) -> Response:
    """GET /api/frames: the rows of a kept fold's frames `start` to `start + count - 1`."""
    params = request.query_params
    numbers = {}
    for name, default in (("start", "0"), ("count", str(MAX_RANGE))):
        value = params.get(name, default)
        if not (value.isascii() and value.isdigit() and len(value) <= 12):
            return error(400, f"{name} must be a whole number, got {value!r}")
        numbers[name] = int(value)
    fold_id = params.get("fold", "")
    found = store.get(fold_id)
    if found is None:
        return error(404, "this fold is no longer kept by the server (it keeps the last few); fold the capture again")
    result, body, arrivals, spans = found
    start, count = numbers["start"], min(numbers["count"], MAX_RANGE)
    rows, _ = await asyncio.to_thread(frame_views, result, body, start, start + count, arrivals, spans)
    return Response(encode({"fold_id": fold_id, "start": start, "total": len(result.frames), "frames": rows}),
                    media_type="application/json")
