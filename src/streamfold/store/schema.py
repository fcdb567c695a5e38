"""The capture store's SQLite schema, its version, and opening the file: created
readable by its owner only (0600, the -wal and -shm files too), in WAL mode so
readers see committed exchanges while a writer writes. docs/store.md documents
every table and column; a file of a newer schema is refused, never rewritten.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator

from ..services.capture import InputError

__all__ = ["SCHEMA_VERSION", "StoreError", "connect", "sqlite_message"]

#: `PRAGMA user_version` of the files this code writes. Bump it with a step in `_MIGRATIONS`.
SCHEMA_VERSION = 1
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

#: The SQL that takes a file from version N-1 to N, by N.
_MIGRATIONS = {1: _V1}


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
            mode = "rw" if create or os.access(path, os.W_OK) else "ro"  # a store one may only read is read
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
    if version < SCHEMA_VERSION:
        if not create:
            raise StoreError(f"{path!r} is an SQLite file with no capture store in it" if version == 0 else
                             f"the capture store {path!r} has the older schema version {version}: open it for "
                             "writing once (streamfold record) to bring it up to date")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("BEGIN IMMEDIATE")
        try:
            for step in range(version + 1, SCHEMA_VERSION + 1):
                for statement in _MIGRATIONS[step].split(";"):
                    if statement.strip():
                        connection.execute(statement)
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
