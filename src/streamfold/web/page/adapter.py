"""The page's operations answered inside the browser: what the Web Worker (static/worker.js) calls,
under Pyodide, for each method of the page's backend (static/js/backend.js). It is to the worker what
`app.py` is to the server: an adapter over `PageApi`, adding only what a worker needs (a dropped
capture store written to the runtime's memory, every answer as bytes with its kind).

    answer(method, args, body, progress) -> (kind, bytes)

kind "json": the answer's JSON (UTF-8); "bytes": a capture's bytes as they are; "error": the sentence
to show (a refusal's, or what failed). `args` are the method's arguments from the page (text, numbers,
None), `body` a capture's bytes, `progress(folded, total)` told as a fold goes.

What needs a server is not here: the command line's FILE, a live --db store, a fleet. `meta()` says so.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from ..api import DEFAULT_MAX_SIZE, ApiError, PageApi, fold_options
from ..fold_view import encode

__all__ = ["MAX_SIZE", "UNAVAILABLE", "answer"]

#: The largest capture the page folds (a diff's two count together), as the served page's default:
#: a capture is held three times as it folds (the page's copy, the worker's, Python's).
MAX_SIZE = DEFAULT_MAX_SIZE

#: What the served page does that this one cannot, and where to have it.
UNAVAILABLE = ("a live capture list (streamfold web --db), fleets (streamfold web --fleet), recording "
               "(streamfold record) and replaying (streamfold serve) need the streamfold program: "
               "pip install streamfold")

#: Where a dropped capture store is written: the runtime's memory, gone with the worker.
_STORES = "/tmp/streamfold-stores"

Progress = Callable[[int, int], None]
_api = PageApi(max_size=MAX_SIZE)
_stores_opened = 0


def answer(method: str, args: Iterable[Any], body: Any = None, progress: Progress | None = None) -> tuple[str, bytes]:
    """`method(*args)` of the page's backend, answered; `body`: bytes, or a JavaScript Uint8Array
    (Pyodide's proxy of it), copied once into Python's memory."""
    operation = _OPERATIONS.get(method)
    if operation is None:
        return "error", f"the page asked for {method!r}, which this worker does not answer".encode()
    if body is not None and not isinstance(body, bytes):
        body = body.to_bytes()
    try:
        value = operation(list(args), body, progress)
    except ApiError as exc:
        return "error", exc.message.encode()
    except Exception as exc:  # a bug must reach the page as a sentence, and the worker stay up
        return "error", f"streamfold failed on this capture: {type(exc).__name__}: {exc}".encode()
    if isinstance(value, bytes):
        return "bytes", value
    return "json", encode(value)


def _meta(args: list[Any], body: bytes | None, progress: Progress | None) -> dict[str, Any]:
    return {**_api.meta(), "page": {"unavailable": UNAVAILABLE}}


def _fold(args: list[Any], body: bytes | None, progress: Progress | None) -> dict[str, Any]:
    options = fold_options(*args[1:5])
    if args[0] is not None:  # a capture of the dropped store
        return _api.stored_fold(int(args[0]), options, frames="range", progress=progress)
    data = body or b""
    return _api.fold(data, options, frames="range", progress=progress, capture=_api.read(data, options))


def _frames(args: list[Any], body: bytes | None, progress: Progress | None) -> dict[str, Any]:
    return _api.frames(*(str(value) for value in args))


def _diff(args: list[Any], body: bytes | None, progress: Progress | None) -> dict[str, Any]:
    return _api.diff(body or b"", str(args[0]), fold_options(*args[1:3]))


def _open_store(args: list[Any], body: bytes | None, progress: Progress | None) -> dict[str, Any]:
    """A dropped capture store, written where SQLite can open it; the page lists it from then on."""
    global _stores_opened
    _stores_opened += 1
    name = os.path.basename(str(args[0])) or "captures.sqlite"
    directory = os.path.join(_STORES, str(_stores_opened))  # its own directory: the store keeps its name
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    with open(path, "wb") as file:
        file.write(body or b"")
    _api.use_store(path)
    return {"name": name, "open": None}


def _captures(args: list[Any], body: bytes | None, progress: Progress | None) -> dict[str, Any]:
    return _api.captures(args[0])[1]


def _stored_body(args: list[Any], body: bytes | None, progress: Progress | None) -> bytes:
    return _api.stored_body(int(args[0]))


_OPERATIONS: dict[str, Callable[[list[Any], bytes | None, Progress | None], Any]] = {
    "meta": _meta, "fold": _fold, "frames": _frames, "diff": _diff, "openStore": _open_store,
    "captures": _captures, "storedBody": _stored_body,
}
