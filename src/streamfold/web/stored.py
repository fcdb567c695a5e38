"""The capture store behind `streamfold web --db PATH`: the list the page polls,
and one stored exchange folded with its real arrival times.

    GET /api/captures?since=VERSION&limit=N
        {"store": file name, "version": V, "captures": [list_exchanges rows, newest first], "more": bool}
        or, when nothing changed since VERSION, {"store", "version": V, "unchanged": true};
        an unusable store: {"store", "version", "error": why, "missing": bool} (404 missing, 422 otherwise)
    GET /api/captures/ID/fold   the view of `fold_view` (with frames=range: NDJSON, as POST /api/fold)
    GET /api/captures/ID/body   the stream body as the fold reads it (inflated), for the page's diff

Strategy: polling, not a push channel. The page asks every second; the answer
is the newest `limit` rows (one indexed query, cheap next to a fold) and a
version that is a hash of them, so an unchanged list costs the page nothing
to re-render and a changed one is whole (no cursor to get wrong when an
in-flight row grows or ends). The store is SQLite in WAL mode: each read
opens its own connection and sees what the recorder has committed, never
blocking it. Every call here blocks (sqlite): the app runs them in its
threadpool.
"""

from __future__ import annotations

import hashlib
import os
import shlex
from collections.abc import Callable, Sequence
from typing import Any

from .._sizes import format_size
from ..result import Result
from ..services.capture import Capture
from ..services.load import fold_capture
from ..store import StoredExchange, StoreError, get_exchange, list_exchanges
from .file_view import SpanMap
from .fold_view import encode, loaded_view
from .refusal import TooLargeError

__all__ = ["DEFAULT_LIST_LIMIT", "MAX_LIST_LIMIT", "CaptureTooLargeError", "StoreSource", "parse_id"]

#: Rows the page lists by default, and the most one request may ask for.
DEFAULT_LIST_LIMIT = 200
MAX_LIST_LIMIT = 2000

#: The largest id SQLite stores (a larger number cannot name a capture).
_MAX_ID = 2**63 - 1


class CaptureTooLargeError(StoreError, TooLargeError):
    """The stored capture is over the page's `--max-size` (as stored, or once inflated)."""


def parse_id(text: str) -> int | None:
    """A capture id from a URL part, or None when it is not one."""
    if not (text.isascii() and text.isdigit() and len(text) <= 19) or int(text) > _MAX_ID:
        return None
    return int(text)


class StoreSource:
    """The store at `path`, read afresh at every call (a recorder may be writing it)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.name = os.path.basename(self.path) or self.path

    def listing(self, since: str | None = None, limit: int = DEFAULT_LIST_LIMIT) -> tuple[int, dict[str, Any]]:
        """(HTTP status, answer) for `GET /api/captures` (see the module docstring)."""
        try:
            rows = list_exchanges(self.path, limit=limit + 1)
        except StoreError as exc:
            missing = not os.path.exists(self.path)
            answer = {"store": self.name, "error": str(exc), "missing": missing}
            return (404 if missing else 422), {**answer, "version": _version(encode(answer))}
        more = len(rows) > limit
        rows = rows[:limit]
        version = _version(encode(rows) + (b"+" if more else b""))
        if since == version:
            return 200, {"store": self.name, "version": version, "unchanged": True}
        return 200, {"store": self.name, "version": version, "captures": rows, "more": more}

    def view(self, capture_id: int, *, dialect: str | None, transport: str | None, max_size: int,
             lane: str | None = None,
             frames: str = "all", progress: Callable[[int, int], None] | None = None,
             keep: Callable[[Result, bytes, Sequence[float], SpanMap], str] | None = None) -> dict[str, Any]:
        """Capture `capture_id` folded as `show DB#ID` folds it, as the page's fold view plus "stored"
        (what the store says about the exchange). Raises `StoreError` (an `InputError`)."""
        exchange, capture = self._read(capture_id, max_size)
        loaded = fold_capture(capture, dialect=dialect, transport=transport, progress=progress, lane=lane)
        view = loaded_view(loaded, None, frames=frames, keep=keep)
        view["stored"] = {"id": exchange.id, "store": self.name, "method": exchange.method, "url": exchange.url,
                          "status": exchange.status, "outcome": exchange.outcome, "in_flight": exchange.outcome is None,
                          "started_at": exchange.started_at, "reads": len(exchange.reads),
                          "bytes": sum(map(len, exchange.chunks))}
        return view

    def body(self, capture_id: int, max_size: int) -> bytes:
        """The stream body of capture `capture_id` as the fold reads it (a compressed one inflated)."""
        return self._read(capture_id, max_size)[1].body

    def _read(self, capture_id: int, max_size: int) -> tuple[StoredExchange, Capture]:
        exchange = get_exchange(self.path, capture_id)
        capture = exchange.capture(max_size)  # a compressed body is inflated no further than the limit
        if any(note.code == "inflated-too-large" for note in capture.notes):
            raise CaptureTooLargeError(
                f"capture #{capture_id} was sent compressed and inflates to more than {format_size(max_size)}; this "
                f"page takes at most {format_size(max_size)} per capture, once inflated. Start it with a larger "
                f"limit, for example: streamfold web --db {shlex.quote(self.path)} --max-size "
                f"{format_size(_larger(max_size), compact=True)}")
        if len(capture.body) > max_size:
            size = len(capture.body)
            raise CaptureTooLargeError(
                f"capture #{capture_id} is {format_size(size)}; this page takes at most {format_size(max_size)} per "
                f"capture. Start it with a larger limit, for example: streamfold web --db {shlex.quote(self.path)} "
                f"--max-size {format_size(_larger(size), compact=True)}")
        return exchange, capture


def _version(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=12).hexdigest()


def _larger(size: int) -> int:
    suggestion = 1024 * 1024
    while suggestion <= size:
        suggestion *= 2
    return suggestion
