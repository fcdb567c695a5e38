"""The stores the recorder opens by path: one `CaptureStore` per file in the
process, shared by every client made for it, flushed by `flush()` and closed
when the interpreter exits (atexit), so `http_client()` twice does not put two
writers on one file. A store whose writer failed is opened afresh by the next
client made for its path.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading

from ..store import CaptureStore, StoreError, default_db

__all__ = ["close_all", "flush", "shared_store"]

_lock = threading.Lock()
_open: dict[str, CaptureStore] = {}
_registered = False


def shared_store(db: str | os.PathLike[str] | None, *, keep_secrets: bool) -> CaptureStore:
    """The process's store for `db` (`default_db()` when None), opened on first use. Raises `StoreError`
    when the file cannot be a store, and `ValueError` when it is already open with another `keep_secrets`."""
    global _registered
    path = os.path.abspath(os.fspath(db) if db is not None else default_db())
    with _lock:
        store = _open.get(path)
        if store is not None and store.error is not None:
            _close_quietly(store)
            store = None
        if store is None:
            store = CaptureStore.open(path, keep_secrets=keep_secrets)
            _open[path] = store
            if not _registered:
                atexit.register(close_all)
                _registered = True
        elif store.keep_secrets != keep_secrets:
            raise ValueError(f"the capture store {path!r} is already open in this process with "
                             f"keep_secrets={store.keep_secrets}")
        return store


def flush() -> None:
    """Wait until everything the clients recorded into stores opened by path is committed (summaries
    included), so a reader in this or another process sees it. Raises `StoreError` if writing failed."""
    with _lock:
        stores = list(_open.values())
    for store in stores:
        store.flush()


def close_all() -> None:
    """Commit and close every store opened by path (run at exit; a client used after it records nothing)."""
    with _lock:
        stores = list(_open.values())
        _open.clear()
    for store in stores:
        _close_quietly(store)


def _close_quietly(store: CaptureStore) -> None:
    with contextlib.suppress(StoreError):  # already said by the recorder's warning; nothing left to save
        store.close()
