"""The page's way through a big capture: the result first, the frames by range.

    fold with frames="range"      the fold view without its rows, with "frame_count", "frame_kinds" and
                                  "fold_id" (over HTTP: NDJSON progress lines first, see `app.py`)
    frames(fold_id, start, count) {"fold_id", "start", "total", "frames": rows S to S+N-1} (the rows
                                  of `fold_view.frame_views`; at most `MAX_RANGE` a request)

The folds asked for this way are kept (`FoldStore`: as many as `--max-folds`,
the oldest dropped first), so a range of a fold that was dropped is refused
(404) and the page folds the capture again.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ..result import Result
from .file_view import SpanMap
from .fold_view import frame_views
from .refusal import ApiError

__all__ = ["MAX_RANGE", "FoldStore", "frames_range"]

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


def frames_range(store: FoldStore, fold_id: str, start: str = "0", count: str = str(MAX_RANGE)) -> dict[str, Any]:
    """The rows of a kept fold's frames `start` to `start + count - 1` (numbers as the page's query has them)."""
    numbers = {}
    for name, value in (("start", start), ("count", count)):
        if not (value.isascii() and value.isdigit() and len(value) <= 12):
            raise ApiError(400, f"{name} must be a whole number, got {value!r}")
        numbers[name] = int(value)
    found = store.get(fold_id)
    if found is None:
        raise ApiError(404, "this fold is no longer kept by the server (it keeps the last few); fold the capture again")
    result, body, arrivals, spans = found
    first = numbers["start"]
    rows, _ = frame_views(result, body, first, first + min(numbers["count"], MAX_RANGE), arrivals, spans)
    return {"fold_id": fold_id, "start": first, "total": len(result.frames), "frames": rows}
