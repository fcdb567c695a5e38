"""Reading the capture store: a reference to a stored capture (`PATH.sqlite#ID`,
or `PATH.sqlite` alone for the latest), the list of exchanges newest first,
and one exchange as the `Capture` the fronts fold, with its real arrival
times. Reads only: safe while a recorder writes (WAL)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ..services.capture import Capture
from .rows import DamagedCaptureError, checked_select, damage_of, findings_of, pairs_of
from .schema import SQLITE_MAGIC, UNREADABLE, StoreError, connect, sqlite_message
from .stored import MAX_INFLATED, stored_capture

__all__ = ["DEFAULT_DB", "StoredExchange", "default_db", "get_exchange", "list_exchanges",
           "load_exchange", "parse_ref", "read_stored", "reading"]

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
def reading(path: str) -> Iterator[sqlite3.Connection]:
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
    #: The model the request asked for (None in a store of schema 1, and when the request did not say).
    request_model: str | None = None

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


#: What a `StoredExchange` is made of, in the order of its fields (before its reads).
_COLUMNS = ("id", "started_at", "method", "url", "request_headers", "request_body", "redacted", "status",
            "response_headers", "response_at", "ended_at", "outcome", "error", "request_model")
_SELECT = f"SELECT {checked_select(_COLUMNS)} FROM exchanges"


def get_exchange(path: str, exchange_id: int | None = None) -> StoredExchange:
    """Exchange `exchange_id` of the store at `path` (the latest when None). Raises `StoreError`."""
    with reading(path) as db:
        row = None
        if exchange_id is None:
            row = db.execute(f"{_SELECT} ORDER BY started_at DESC, id DESC LIMIT 1").fetchone()
            if row is None:
                raise StoreError(f"the capture store {path!r} holds no captures yet")
            exchange_id = row[0]
        return load_exchange(db, path, exchange_id, row)


def load_exchange(db: sqlite3.Connection, path: str, exchange_id: int,
                  row: Sequence[Any] | None = None) -> StoredExchange:
    """Exchange `exchange_id` through the open connection `db` (`row`: its row, when already read)."""
    if row is None:
        row = db.execute(f"{_SELECT} WHERE id = ?", (exchange_id,)).fetchone()
        if row is None:
            raise StoreError(f"no capture #{exchange_id} in {path!r}: {_which(db)}")
    damage_of(path, row)
    try:
        runs = db.execute("SELECT count, offset, data, sizes, times FROM reads WHERE exchange = ? ORDER BY seq",
                          (exchange_id,)).fetchall()
    except UNREADABLE as exc:  # a damaged page of its reads: the other exchanges may still read
        raise DamagedCaptureError(
            path, exchange_id, f"the reads of capture #{exchange_id} cannot be read: {sqlite_message(exc)}") from None
    reads, chunks = _unpack(runs, path, exchange_id)
    return StoredExchange(row[0], row[1], row[2], row[3], pairs_of(path, exchange_id, "request headers", row[4]),
                          bytes(row[5]), bool(row[6]), row[7],
                          pairs_of(path, exchange_id, "response headers", row[8]), row[9], row[10], row[11],
                          row[12], reads, chunks, row[13])


def _unpack(runs: list[tuple[int, int, bytes, bytes, bytes]], path: str,
            exchange_id: int) -> tuple[tuple[tuple[int, float], ...], tuple[bytes, ...]]:
    """Each row holds `count` reads: their bytes joined in `data`, their sizes (uint32) and arrival times
    (float64), little-endian."""
    reads: list[tuple[int, float]] = []
    chunks: list[bytes] = []
    for count, offset, data, packed_sizes, packed_times in runs:
        sizes, times = array("I"), array("d")
        fits = (isinstance(count, int) and isinstance(offset, int) and isinstance(data, bytes)
                and isinstance(packed_sizes, bytes) and isinstance(packed_times, bytes)
                and len(packed_sizes) == count * sizes.itemsize and len(packed_times) == count * times.itemsize)
        if fits:
            sizes.frombytes(packed_sizes)
            times.frombytes(packed_times)
            if sys.byteorder != "little":
                sizes.byteswap()
                times.byteswap()
        if not fits or sum(sizes) != len(data):
            raise DamagedCaptureError(
                path, exchange_id, f"the reads of capture #{exchange_id} at body offset {offset} do not add up")
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


#: What `list_exchanges` reads of each exchange; one in flight has no sizes yet: its reads are counted.
_LISTED = ("id", "started_at", "method", "url", "status", "outcome", "error", "ended_at", "body_bytes", "read_count",
           "transport", "dialect", "complete", "ttft", "duration", "frames", "finish_reason", "findings", "model",
           "outcome_class")
_IN_FLIGHT = {"body_bytes": "COALESCE(body_bytes, (SELECT SUM(length(data)) FROM reads WHERE exchange = id))",
              "read_count": "COALESCE(read_count, (SELECT SUM(count) FROM reads WHERE exchange = id))"}


def list_exchanges(path: str, *, limit: int | None = None) -> list[dict[str, Any]]:
    """The exchanges newest first, as JSON objects (`streamfold captures --json`). One still in flight has
    outcome None and no summary yet; one of a store of schema 1 has no model and no outcome class."""
    sql = f"SELECT {checked_select(_LISTED, _IN_FLIGHT)} FROM exchanges ORDER BY started_at DESC, id DESC"
    with reading(path) as db:
        rows = db.execute(sql + (" LIMIT ?" if limit is not None else ""),
                          (limit,) if limit is not None else ()).fetchall()
    listed = []
    for row in rows:
        damage_of(path, row)
        values = dict(zip(_LISTED, row, strict=False))
        listed.append({
            "id": values["id"], "started": _iso_time(path, values["id"], values["started_at"]),
            "started_at": values["started_at"], "method": values["method"], "url": values["url"],
            "status": values["status"], "outcome": values["outcome"], "in_flight": values["outcome"] is None,
            "error": values["error"], "ended_at": values["ended_at"], "bytes": values["body_bytes"] or 0,
            "reads": values["read_count"] or 0, "transport": values["transport"], "dialect": values["dialect"],
            "complete": None if values["complete"] is None else bool(values["complete"]), "ttft": values["ttft"],
            "duration": values["duration"], "frames": values["frames"], "finish_reason": values["finish_reason"],
            "findings": findings_of(path, values["id"], values["findings"]) or [], "model": values["model"],
            "outcome_class": values["outcome_class"]})
    return listed


def _iso_time(path: str, exchange_id: int, started_at: float) -> str:
    """`started_at` (Unix seconds) as ISO 8601 UTC, to the millisecond."""
    try:
        return datetime.fromtimestamp(started_at, timezone.utc).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):  # a time no calendar holds: the row is damaged
        raise DamagedCaptureError(
            path, exchange_id, f"capture #{exchange_id} started at {started_at!r}, which is no time") from None
