"""Reading the capture store: a reference to a stored capture (`PATH.sqlite#ID`,
or `PATH.sqlite` alone for the latest), the list of exchanges newest first,
and one exchange as the `Capture` the fronts fold, with its real arrival
times. Reads only: safe while a recorder writes (WAL)."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import sys
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ..services.capture import Capture
from .schema import SQLITE_MAGIC, UNREADABLE, StoreError, connect, sqlite_message
from .stored import MAX_INFLATED, stored_capture

__all__ = ["DEFAULT_DB", "StoredExchange", "default_db", "get_exchange", "list_exchanges", "parse_ref",
           "read_stored"]

#: The store used when none is named: `$STREAMFOLD_DB`, else this file in the current directory.
DEFAULT_DB = "streamfold.sqlite"
#: File names taken as a store even before they exist (a typo then says "no capture store at ...").
_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def default_db() -> str:
    return os.environ.get("STREAMFOLD_DB") or DEFAULT_DB


def parse_ref(text: str) -> tuple[str, int | None] | None:
    """(store path, exchange id or None for the latest) when `text` names a stored capture, else None.

    `PATH.sqlite#12`, `PATH.sqlite` (also .sqlite3, .db, or any SQLite file). Raises `StoreError` for
    a `#` part that is not an id."""
    path, mark, fragment = text.rpartition("#")
    if mark and (path.lower().endswith(_SUFFIXES) or _is_sqlite(path)):
        if not (fragment.isascii() and fragment.isdigit()):
            raise StoreError(f"{text!r}: the part after '#' must be a capture id (a number, see "
                             f"`streamfold captures --db {path}`)")
        return path, int(fragment)
    if text.lower().endswith(_SUFFIXES) or _is_sqlite(text):
        return text, None
    return None


def _is_sqlite(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(16) == SQLITE_MAGIC
    except OSError:
        return False


@contextlib.contextmanager
def _reading(path: str) -> Iterator[sqlite3.Connection]:
    connection = connect(path, create=False)
    try:
        yield connection
    except UNREADABLE as exc:
        raise StoreError(f"the capture store {path!r} cannot be read: {sqlite_message(exc)}") from None
    finally:
        connection.close()


@dataclass(frozen=True, slots=True)
class StoredExchange:
    id: int
    #: Wall-clock start (Unix seconds).
    started_at: float
    method: str
    url: str
    request_headers: tuple[tuple[str, str], ...]
    request_body: bytes
    redacted: bool
    status: int | None
    response_headers: tuple[tuple[str, str], ...]
    #: Seconds after the start: the response head, the end (None while in flight).
    response_at: float | None
    ended_at: float | None
    #: complete | client-cut | upstream-cut | failed, None while in flight.
    outcome: str | None
    error: str | None
    #: (body offset, seconds after the start) of each read.
    reads: tuple[tuple[int, float], ...]
    #: Each read's bytes, in order.
    chunks: tuple[bytes, ...]

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    def capture(self, max_inflated: int = MAX_INFLATED) -> Capture:
        """The exchange as the `Capture` every front folds (a compressed body inflated to at most
        `max_inflated` bytes)."""
        return stored_capture(self.id, self.chunks, self.reads, status=self.status,
                              response_headers=self.response_headers, request_headers=self.request_headers,
                              url=self.url, method=self.method, outcome=self.outcome, error=self.error,
                              max_inflated=max_inflated)


_COLUMNS = ("id, started_at, method, url, request_headers, request_body, redacted, status, response_headers, "
            "response_at, ended_at, outcome, error")


def get_exchange(path: str, exchange_id: int | None = None) -> StoredExchange:
    """Exchange `exchange_id` of the store at `path` (the latest when None). Raises `StoreError`."""
    with _reading(path) as db:
        if exchange_id is None:
            row = db.execute(f"SELECT {_COLUMNS} FROM exchanges ORDER BY started_at DESC, id DESC LIMIT 1").fetchone()
            if row is None:
                raise StoreError(f"the capture store {path!r} holds no captures yet")
        else:
            row = db.execute(f"SELECT {_COLUMNS} FROM exchanges WHERE id = ?", (exchange_id,)).fetchone()
            if row is None:
                raise StoreError(f"no capture #{exchange_id} in {path!r}: {_which(db)}")
        runs = db.execute("SELECT count, offset, data, sizes, times FROM reads WHERE exchange = ? ORDER BY seq",
                          (row[0],)).fetchall()
    reads, chunks = _unpack(runs, path, row[0])
    return StoredExchange(row[0], row[1], row[2], row[3], _pairs(row[4]), bytes(row[5]), bool(row[6]), row[7],
                          _pairs(row[8]), row[9], row[10], row[11], row[12], reads, chunks)


def _unpack(runs: list[tuple[int, int, bytes, bytes, bytes]], path: str,
            exchange_id: int) -> tuple[tuple[tuple[int, float], ...], tuple[bytes, ...]]:
    """Each row holds `count` reads: their bytes joined in `data`, their sizes (uint32) and arrival times
    (float64), little-endian."""
    reads: list[tuple[int, float]] = []
    chunks: list[bytes] = []
    for count, offset, data, packed_sizes, packed_times in runs:
        sizes, times = array("I"), array("d")
        fits = (isinstance(count, int) and isinstance(data, bytes) and isinstance(packed_sizes, bytes)
                and isinstance(packed_times, bytes) and len(packed_sizes) == count * sizes.itemsize
                and len(packed_times) == count * times.itemsize)
        if fits:
            sizes.frombytes(packed_sizes)
            times.frombytes(packed_times)
            if sys.byteorder != "little":
                sizes.byteswap()
                times.byteswap()
        if not fits or sum(sizes) != len(data):
            raise StoreError(f"the capture store {path!r} is damaged: the reads of capture #{exchange_id} at "
                             f"body offset {offset} do not add up")
        position = 0
        for size, at in zip(sizes, times, strict=True):
            reads.append((offset + position, at))
            chunks.append(bytes(data[position : position + size]))
            position += size
    return tuple(reads), tuple(chunks)


def read_stored(path: str, exchange_id: int | None = None, *, max_inflated: int = MAX_INFLATED) -> Capture:
    """The stored exchange as the `Capture` every front folds."""
    return get_exchange(path, exchange_id).capture(max_inflated)


def _which(db: sqlite3.Connection) -> str:
    ids = [row[0] for row in db.execute("SELECT id FROM exchanges ORDER BY id")]
    if not ids:
        return "it holds no captures yet"
    if len(ids) <= 12:
        return f"it holds {len(ids)} capture{'s' if len(ids) > 1 else ''}: #{', #'.join(map(str, ids))}"
    return f"it holds {len(ids)} captures, #{ids[0]} to #{ids[-1]} (list them: streamfold captures --db PATH)"


def _pairs(text: str | None) -> tuple[tuple[str, str], ...]:
    if not text:
        return ()
    return tuple((str(name), str(value)) for name, value in json.loads(text))


def list_exchanges(path: str, *, limit: int | None = None) -> list[dict[str, Any]]:
    """The exchanges newest first, as JSON objects (`streamfold captures --json`). One still in flight has
    outcome None and no summary yet."""
    sql = ("SELECT id, started_at, method, url, status, outcome, error, ended_at, "
           "COALESCE(body_bytes, (SELECT SUM(length(data)) FROM reads WHERE exchange = id)), "
           "COALESCE(read_count, (SELECT SUM(count) FROM reads WHERE exchange = id)), "
           "transport, dialect, complete, ttft, duration, frames, finish_reason, findings "
           "FROM exchanges ORDER BY started_at DESC, id DESC")
    with _reading(path) as db:
        rows = db.execute(sql + (" LIMIT ?" if limit is not None else ""),
                          (limit,) if limit is not None else ()).fetchall()
    return [{"id": row[0], "started": datetime.fromtimestamp(row[1], timezone.utc).isoformat(timespec="milliseconds"),
             "started_at": row[1], "method": row[2], "url": row[3], "status": row[4], "outcome": row[5],
             "in_flight": row[5] is None, "error": row[6], "ended_at": row[7], "bytes": row[8] or 0,
             "reads": row[9] or 0, "transport": row[10], "dialect": row[11],
             "complete": None if row[12] is None else bool(row[12]), "ttft": row[13], "duration": row[14],
             "frames": row[15], "finish_reason": row[16], "findings": json.loads(row[17]) if row[17] else []}
            for row in rows]
