"""Writing exchanges into the capture store, for the recording proxy, the
in-process recorder and the mitmproxy addon.

    store = CaptureStore.open("streamfold.sqlite")
    w = store.begin("POST", url, headers, body)       # one per exchange, from any thread
    w.response(200, response_headers)
    w.read(chunk)                                     # each read as it arrives: cheap, never waits on disk
    summary = w.end("complete")                       # or "client-cut", "upstream-cut", "failed", error=...
    store.close()

One writer thread owns the SQLite connection: `read` only puts the chunk on
its queue. The thread inserts reads in batches and commits at most every
`flush_seconds` (or every `flush_reads` reads), never once per read. A
`CaptureStore` is shared by every thread; an `Exchange` belongs to the one
thread that records it. Credentials in headers and the URL are redacted
before they reach the queue unless `keep_secrets`.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future
from typing import Any

from .redact import redact_headers, redact_url
from .schema import StoreError, connect
from .summary import OUTCOMES, Summary, stored_capture, summarize

__all__ = ["CaptureStore", "Exchange"]

_Op = tuple[Any, ...]


class CaptureStore:
    """The store, open for writing. Use `CaptureStore.open(path)`; close it (or use `with`) when done."""

    def __init__(self, path: str, *, keep_secrets: bool = False, summarize: bool = True,
                 flush_seconds: float = 0.05, flush_reads: int = 5000) -> None:
        self.path = path
        self.keep_secrets = keep_secrets
        self.summarize = summarize
        self._connection = connect(path, create=True)
        self._queue: queue.SimpleQueue[_Op] = queue.SimpleQueue()
        self._flush_seconds = flush_seconds
        self._flush_reads = flush_reads
        self._error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=f"streamfold-store {path}", daemon=True)
        self._thread.start()

    @classmethod
    def open(cls, path: str, *, keep_secrets: bool = False, summarize: bool = True) -> CaptureStore:
        """Open (or create, readable by its owner only) the store at `path`. Raises `StoreError`."""
        return cls(path, keep_secrets=keep_secrets, summarize=summarize)

    def __enter__(self) -> CaptureStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def begin(self, method: str, url: str, headers: Iterable[tuple[str, str]] = (), body: bytes = b"", *,
              started: float | None = None) -> Exchange:
        """Record a new exchange: the request as sent. `started` is its wall-clock start (`time.time()`,
        now by default); the arrival times of its reads count from the moment `begin` is called."""
        self._check()
        clock = time.monotonic()
        pairs = tuple((str(name), str(value)) for name, value in headers)
        if not self.keep_secrets:
            pairs, url = redact_headers(pairs), redact_url(url)
        row = (time.time() if started is None else started, method, url, json.dumps(pairs), bytes(body),
               int(not self.keep_secrets))
        future: Future[int] = Future()
        self._queue.put(("begin", row, future))
        while True:
            try:
                exchange_id = future.result(timeout=0.5)
                break
            except TimeoutError:
                self._check()  # the writer thread stopped before it took this exchange
        return Exchange(self, exchange_id, method, url, pairs, clock)

    def flush(self) -> None:
        """Wait until everything recorded so far is committed (readers see it)."""
        self._check()
        done = threading.Event()
        self._queue.put(("flush", done))
        while not done.wait(0.1):
            self._check()

    def close(self) -> None:
        """Commit what is left and close the file. Raises `StoreError` if writing failed."""
        if not self._closed:
            self._closed = True
            self._queue.put(("close",))
            self._thread.join()
            self._connection.close()
        if self._error is not None:
            raise StoreError(f"writing the capture store {self.path!r} failed: {self._error}") from self._error

    @property
    def error(self) -> BaseException | None:
        """What stopped the writer thread, if something did (the recorded data after it is lost)."""
        return self._error

    def _check(self) -> None:
        if self._error is not None:
            raise StoreError(f"writing the capture store {self.path!r} failed: {self._error}") from self._error
        if self._closed:
            raise StoreError(f"the capture store {self.path!r} is closed")

    def _put(self, op: _Op) -> None:
        self._queue.put(op)

    # -- the writer thread -------------------------------------------------------------

    def _run(self) -> None:
        db = self._connection
        reads: list[tuple[int, int, int, float, bytes]] = []
        updates: list[tuple[str, tuple[Any, ...]]] = []
        first_pending: float | None = None
        try:
            while True:
                timeout = None if first_pending is None else max(0.0, first_pending + self._flush_seconds
                                                                 - time.monotonic())
                try:
                    op = self._queue.get(timeout=timeout)
                except queue.Empty:
                    op = ("tick",)
                kind = op[0]
                if kind in ("read", "begin", "update") and first_pending is None:
                    db.execute("BEGIN")
                    first_pending = time.monotonic()
                if kind == "read":
                    reads.append(op[1])
                elif kind == "update":
                    updates.append((op[1], op[2]))
                elif kind == "begin":
                    try:
                        cursor = db.execute("INSERT INTO exchanges (started_at, method, url, request_headers, "
                                            "request_body, redacted) VALUES (?, ?, ?, ?, ?, ?)", op[1])
                    except BaseException as exc:
                        op[2].set_exception(exc)
                        raise
                    op[2].set_result(int(cursor.lastrowid or 0))
                due = first_pending is not None and (
                    kind in ("flush", "close", "tick") or len(reads) >= self._flush_reads
                    or time.monotonic() - first_pending >= self._flush_seconds)
                if due:
                    reads.sort()  # by (exchange, seq): runs of one exchange go into the B-tree together
                    db.executemany("INSERT INTO reads (exchange, seq, offset, at, data) VALUES (?, ?, ?, ?, ?)",
                                   reads)
                    for sql, values in updates:
                        db.execute(sql, values)
                    db.execute("COMMIT")
                    reads, updates, first_pending = [], [], None
                if kind == "flush":
                    op[1].set()
                elif kind == "close":
                    return
        except BaseException as exc:  # kept for the recording threads to raise
            self._error = exc
            while True:  # answer whoever waits, so no recording thread hangs
                try:
                    op = self._queue.get_nowait()
                except queue.Empty:
                    return
                if op[0] == "begin":
                    op[2].set_exception(StoreError(f"writing the capture store failed: {exc}"))
                elif op[0] == "flush":
                    op[1].set()


class Exchange:
    """One exchange being recorded. Not shared between threads: the thread that began it records it."""

    def __init__(self, store: CaptureStore, exchange_id: int, method: str, url: str,
                 request_headers: tuple[tuple[str, str], ...], clock: float) -> None:
        self.id = exchange_id
        self._store = store
        self._method, self._url, self._request_headers = method, url, request_headers
        self._clock = clock
        self._chunks: list[bytes] = []
        self._reads: list[tuple[int, float]] = []
        self._size = 0
        self._status: int | None = None
        self._response_headers: tuple[tuple[str, str], ...] = ()
        self._ended = False

    def seconds(self) -> float:
        """Seconds since the exchange began (the clock of `at`)."""
        return time.monotonic() - self._clock

    def response(self, status: int, headers: Iterable[tuple[str, str]] = (), *, at: float | None = None) -> None:
        """The response's status and headers, when they arrived (`at`, seconds after the start)."""
        pairs = tuple((str(name), str(value)) for name, value in headers)
        if not self._store.keep_secrets:
            pairs = redact_headers(pairs)
        self._status, self._response_headers = status, pairs
        self._store._put(("update", "UPDATE exchanges SET status = ?, response_headers = ?, response_at = ? "
                                    "WHERE id = ?", (status, json.dumps(pairs), self._at(at), self.id)))

    def read(self, chunk: bytes, *, at: float | None = None) -> None:
        """One read of the response body as it arrived (`at`: seconds after the start, now by default)."""
        if not chunk:
            return
        data = bytes(chunk)
        seconds = self._at(at)
        if self._store._error is None:  # once writing failed, reads are not queued (end() says so)
            self._store._put(("read", (self.id, len(self._reads), self._size, seconds, data)))
        self._reads.append((self._size, seconds))
        self._chunks.append(data)
        self._size += len(data)

    def end(self, outcome: str = "complete", error: str | None = None, *, at: float | None = None) -> Summary | None:
        """How the exchange ended; folds the body for the summary columns (unless the store was opened
        with `summarize=False`) and returns that summary. Raises `StoreError` if writing the store failed."""
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
        if self._ended:
            raise ValueError(f"exchange {self.id} has already ended")
        self._ended = True
        ended = self._at(at)
        summary = None
        if self._store.summarize:
            capture = stored_capture(self.id, self._chunks, self._reads, status=self._status,
                                     response_headers=self._response_headers,
                                     request_headers=self._request_headers, url=self._url, method=self._method,
                                     outcome=outcome, error=error)
            summary = summarize(capture)
        columns: tuple[Any, ...] = (outcome, error, ended, self._size, len(self._reads))
        if summary is not None:
            columns += (summary.transport, summary.dialect, int(summary.complete), summary.ttft, summary.duration,
                        summary.frames, summary.finish_reason, json.dumps(list(summary.findings)))
        else:
            columns += (None,) * 8
        self._store._put(("update", "UPDATE exchanges SET outcome = ?, error = ?, ended_at = ?, body_bytes = ?, "
                                    "read_count = ?, transport = ?, dialect = ?, complete = ?, ttft = ?, "
                                    "duration = ?, frames = ?, finish_reason = ?, findings = ? WHERE id = ?",
                          (*columns, self.id)))
        self._chunks = []
        self._store._check()
        return summary

    def _at(self, at: float | None) -> float:
        return self.seconds() if at is None else float(at)
