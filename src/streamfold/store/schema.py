"""The capture store's SQLite schema, its version, and opening the file: created
readable by its owner only (0600, the -wal and -shm files too), in WAL mode so
readers see committed exchanges while a writer writes. docs/store.md documents
every table and column; a file of a newer schema is refused, never rewritten,
and a file of an older one is migrated only when opened for writing: a reader
reads it as it is, the columns it lacks reading as NULL.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

from ..services._exchanges import model_of
from ..services.capture import InputError

__all__ = ["SCHEMA_VERSION", "StoreError", "connect", "request_host", "sqlite_message"]

#: `PRAGMA user_version` of the files this code writes. Bump it with a step in `_MIGRATIONS`.
SCHEMA_VERSION = 2
#: The first 16 bytes of every SQLite 3 database file.
SQLITE_MAGIC = b"SQLite format 3\x00"

_V1 = """
CREATE TABLE exchanges (
    id INTEGER PRIMARY KEY,
    started_at REAL NOT NULL,
    method TEXT NOT NULL,
    url TEXT NOT NULL,
    request_headers TEXT NOT NULL,
    request_body BLOB NOT NULL,
    redacted INTEGER NOT NULL,
    status INTEGER,
    response_headers TEXT,
    response_at REAL,
    outcome TEXT,
    error TEXT,
    ended_at REAL,
    body_bytes INTEGER,
    read_count INTEGER,
    transport TEXT,
    dialect TEXT,
    complete INTEGER,
    ttft REAL,
    duration REAL,
    frames INTEGER,
    finish_reason TEXT,
    findings TEXT
);
CREATE INDEX exchanges_newest ON exchanges (started_at DESC, id DESC);
CREATE TABLE reads (
    exchange INTEGER NOT NULL REFERENCES exchanges (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    count INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    first_at REAL NOT NULL,
    last_at REAL NOT NULL,
    data BLOB NOT NULL,
    sizes BLOB NOT NULL,
    times BLOB NOT NULL,
    PRIMARY KEY (exchange, seq)
) WITHOUT ROWID;
"""

#: What version 2 added to `exchanges`: what the request says of itself (written when the exchange
#: begins) and what the fold says of the reply (written with the rest of the summary).
_V2_COLUMNS = (("host", "TEXT"), ("request_model", "TEXT"), ("model", "TEXT"), ("response_id", "TEXT"),
               ("outcome_class", "TEXT"), ("ttfb", "REAL"), ("summarized_by", "TEXT"))


def request_host(url: str) -> str | None:
    """The host a request went to (the `host` column), None for a URL that names none."""
    try:
        return urlsplit(url).hostname
    except ValueError:  # a bad port, an unclosed bracket
        return None


def _script(sql: str) -> Callable[[sqlite3.Connection], None]:
    def run(connection: sqlite3.Connection) -> None:
        for statement in sql.split(";"):
            if statement.strip():
                connection.execute(statement)
    return run


def _to_v2(connection: sqlite3.Connection) -> None:
    """The new columns; `host` and `request_model` filled from what every exchange already holds (the
    request), the fold's columns left NULL: only folding the body again could fill them."""
    for name, sql_type in _V2_COLUMNS:
        connection.execute(f"ALTER TABLE exchanges ADD COLUMN {name} {sql_type}")
    last = -1
    while True:  # a few hundred requests at a time: a store's request bodies may not fit in memory at once
        requests = connection.execute("SELECT id, url, request_body FROM exchanges WHERE id > ? ORDER BY id "
                                      "LIMIT 500", (last,)).fetchall()
        if not requests:
            return
        connection.executemany("UPDATE exchanges SET host = ?, request_model = ? WHERE id = ?",
                               [(request_host(url) if isinstance(url, str) else None,
                                 model_of(body) if isinstance(body, (bytes, str)) else None, exchange_id)
                                for exchange_id, url, body in requests])
        last = requests[-1][0]


#: The step that takes a file from version N-1 to N, by N; each runs inside one transaction.
_MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _script(_V1), 2: _to_v2}

#: How a reader sees an `exchanges` table of version 1 as the current one, without changing the file:
#: a TEMP view (it lives in the connection, not the file) that shadows the table, since SQLite looks a
#: name up in `temp` before `main`. Its columns are named, not `*`, so a writer migrating the file
#: while the reader holds it open cannot make the view's columns change under it.
_V1_COLUMNS = ("id, started_at, method, url, request_headers, request_body, redacted, status, response_headers, "
               "response_at, outcome, error, ended_at, body_bytes, read_count, transport, dialect, complete, ttft, "
               "duration, frames, finish_reason, findings")
_READ_V1_AS_CURRENT = (f"CREATE TEMP VIEW exchanges AS SELECT {_V1_COLUMNS}, "
                       + ", ".join(f"NULL AS {name}" for name, _ in _V2_COLUMNS) + " FROM main.exchanges")


class StoreError(InputError):
    """The capture store cannot be used (not a store, a newer schema, an unknown id); the message says why."""


#: What reading a damaged file raises. SQLite's message may quote the damaged bytes (a schema entry's
#: name, its SQL) and the sqlite3 module decodes it as UTF-8 without a fallback: a byte that is not
#: UTF-8 there turns the DatabaseError into a UnicodeDecodeError.
UNREADABLE = (sqlite3.DatabaseError, UnicodeDecodeError)


def sqlite_message(exc: sqlite3.DatabaseError | UnicodeDecodeError) -> str:
    """SQLite's message for `exc`, on one line, the damaged bytes of an undecodable one shown as U+FFFD."""
    if isinstance(exc, UnicodeDecodeError):
        text = bytes(exc.object).decode("utf-8", "replace")
    else:
        text = str(exc)
    # Python 3.10's sqlite3 drops a message it cannot decode and raises a DatabaseError without one.
    return " ".join(text.split())[:300] or "the file is damaged (SQLite's reason was not readable text)"


def connect(path: str, *, create: bool) -> sqlite3.Connection:
    """A connection to the store at `path`, at `SCHEMA_VERSION`. `create`: make the file (0600) when it
    is missing and bring an older one up to date; otherwise a missing file is a `StoreError`.
    """
    existed = os.path.exists(path)
    if not existed and not create:
        raise StoreError(f"no capture store at {path!r}")
    if existed and not create:
        _check_header(path)
    try:
        with _owner_only():
            if not existed:
                os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
            mode = "rw" if create or os.access(path, os.W_OK) else _read_only(path)
            connection = sqlite3.connect(f"file:{_uri_path(path)}?mode={mode}", uri=True, timeout=10.0,
                                         check_same_thread=False, isolation_level=None)
            try:
                _prepare(connection, path, create=create)
            except BaseException:
                connection.close()
                raise
            if create:
                _restrict(path)
    except UNREADABLE as exc:
        raise StoreError(f"{path!r} is not a capture store streamfold can read: {sqlite_message(exc)}") from None
    except OSError as exc:
        raise StoreError(f"cannot open the capture store {path!r}: {exc.strerror or exc}") from None
    return connection


def _read_only(path: str) -> str:
    """The URI mode for a store one may only read. SQLite opens a WAL file read-only by making its -wal and
    -shm files and leaves them behind; with no -wal there nothing writes the file (a writer's -wal lasts as
    long as its connection), so it is opened immutable, and nothing is made beside it."""
    return "ro" if os.path.exists(f"{path}-wal") else "ro&immutable=1"


def _check_header(path: str) -> None:
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise StoreError(f"cannot read the capture store {path!r}: {exc.strerror or exc}") from None
    if not head:
        raise StoreError(f"{path!r} is an empty file, not a capture store")
    if head != SQLITE_MAGIC:
        raise StoreError(f"{path!r} is not a capture store: it is not an SQLite file")


def _prepare(connection: sqlite3.Connection, path: str, *, create: bool) -> None:
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise StoreError(f"the capture store {path!r} has schema version {version}, newer than this streamfold "
                         f"knows ({SCHEMA_VERSION}): upgrade streamfold to read it (the file was left as it is)")
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if version == 0 and tables:
        raise StoreError(f"{path!r} is an SQLite file but not a streamfold capture store "
                         f"(it has tables {', '.join(sorted(tables)[:5])} and no store schema version)")
    if version < SCHEMA_VERSION and not create:
        if version == 0:
            raise StoreError(f"{path!r} is an SQLite file with no capture store in it")
        connection.execute(_READ_V1_AS_CURRENT)  # the only older version there is: read it as it is
    elif version < SCHEMA_VERSION:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("BEGIN IMMEDIATE")
        try:
            # Read again inside the transaction: another writer may have migrated the file meanwhile.
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            for step in range(version + 1, SCHEMA_VERSION + 1):
                _MIGRATIONS[step](connection)
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
    elif create:
        connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    connection.execute("PRAGMA foreign_keys = ON")


@contextlib.contextmanager
def _owner_only() -> Iterator[None]:
    """Files created inside (the store, its -wal and -shm) are readable by their owner only."""
    previous = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(previous)


def _restrict(path: str) -> None:
    """0600 on the store and its -wal/-shm files that this user owns (SQLite copies the file's mode; this
    also mends a file made before by another tool)."""
    for name in (path, f"{path}-wal", f"{path}-shm"):
        with contextlib.suppress(OSError):
            if os.stat(name).st_uid == os.getuid() and os.stat(name).st_mode & 0o077:
                os.chmod(name, 0o600)


def _uri_path(path: str) -> str:
    """`path` for an SQLite URI: '?' and '#' would end it, '%' starts an escape."""
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
