"""Writing exchanges into the capture store, for the recording proxy, the
in-process recorder and the mitmproxy addon.

    store = CaptureStore.open("streamfold.sqlite")
    w = store.begin("POST", url, headers, body)       # one per exchange, from any thread
    w.response(200, response_headers)
    w.read(chunk)                                     # each read as it arrives: cheap, never waits on disk
    w.end("complete")                                 # or "client-cut", "upstream-cut", "failed", error=...
    store.close()

One writer thread owns the SQLite connection. `read` only appends the chunk
to its exchange's pending list (under the exchange's own lock); every
`flush_seconds` (sooner when an exchange has 4 MiB waiting) the thread takes
each exchange's pending reads as one row and commits them all at once, never
once per read. A `CaptureStore` is shared by every thread; an `Exchange`
belongs to the one thread that records it. Credentials in headers and the URL are redacted
before they reach the writer unless `keep_secrets`.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from array import array
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout  # not the builtin before Python 3.11
from typing import Any

from .._json import dumps_strict
from ..services._exchanges import model_of
from .redact import redact_headers, redact_url
from .schema import StoreError, connect, request_host
from .summarizer import Summarizer, summarize_recorded
from .summary import OUTCOMES, SUMMARY_COLUMNS, Summary, column_values

__all__ = ["CaptureStore", "Exchange"]

_Op = tuple[Any, ...]
#: An exchange with this many bytes of reads waiting wakes the writer before its next tick.
_DUE_BYTES = 4 * 1024 * 1024


class CaptureStore:
    """The store, open for writing. Use `CaptureStore.open(path)`; close it (or use `with`) when done."""

    def __init__(self, path: str, *, keep_secrets: bool = False, summarize: bool = True,
                 flush_seconds: float = 0.05) -> None:
        self.path = path
        self.keep_secrets = keep_secrets
        self.summarize = summarize
        self._connection = connect(path, create=True)
        self._queue: queue.SimpleQueue[_Op] = queue.SimpleQueue()
        self._flush_seconds = flush_seconds
        self._error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=f"streamfold-store {path}", daemon=True)
        self._thread.start()
        # Summaries are folded one at a time by the summarizer: the recording threads never fold, and
        # the writer thread only writes the columns it is handed.
        self._summarizer = Summarizer(f"streamfold-store-summary {path}", self._write_summary,
                                      lambda done: self._queue.put(("flush", done)))

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
        request_model = model_of(bytes(body))
        row = (time.time() if started is None else started, method, url, dumps_strict(pairs, ensure_ascii=True),
               bytes(body), int(not self.keep_secrets), request_host(url), request_model)
        future: Future[int] = Future()
        exchange = Exchange(self, method, url, pairs, clock, row[0], request_model)
        self._queue.put(("begin", row, future, exchange))
        while True:
            try:
                exchange.id = future.result(timeout=0.5)
                return exchange
            except FutureTimeout:
                self._check()  # the writer thread stopped before it took this exchange

    def flush(self) -> None:
        """Wait until everything recorded so far is committed (readers see it)."""
        self._check()
        done = threading.Event()
        self._summarizer.flush(done)  # after the summaries asked for so far
        while not done.wait(0.1):
            self._check()

    def close(self) -> None:
        """Commit what is left and close the file. Raises `StoreError` if writing failed."""
        if not self._closed:
            self._closed = True
            self._summarizer.close()
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

    def _write_summary(self, exchange_id: int, summary: Summary) -> None:
        """Hand a summary's columns to the writer thread (the summarizer's `write`)."""
        assignments = ", ".join(f"{column} = ?" for column in SUMMARY_COLUMNS)
        self._queue.put(("update", f"UPDATE exchanges SET {assignments} WHERE id = ?",
                         (*column_values(summary), exchange_id), 0))

    # -- the writer thread -------------------------------------------------------------

    def _run(self) -> None:
        db = self._connection
        live: dict[int, Exchange] = {}  # begun, and not yet swept since they ended
        updates: list[tuple[str, tuple[Any, ...]]] = []
        ended: list[int] = []
        in_transaction = False
        last_commit = time.monotonic()
        try:
            while True:
                # A summary folded after its exchange left `live` is still to commit: wait for the tick, not forever.
                timeout = None if not live and not in_transaction and not updates else max(
                    0.0, last_commit + self._flush_seconds - time.monotonic())
                try:
                    op = self._queue.get(timeout=timeout)
                except queue.Empty:
                    op = ("tick",)
                kind = op[0]
                if kind == "begin":
                    if not in_transaction:
                        db.execute("BEGIN")
                        in_transaction = True
                    try:
                        cursor = db.execute("INSERT INTO exchanges (started_at, method, url, request_headers, "
                                            "request_body, redacted, host, request_model) "
                                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", op[1])
                    except BaseException as exc:
                        op[2].set_exception(exc)
                        raise
                    exchange_id = int(cursor.lastrowid or 0)
                    live[exchange_id] = op[3]
                    op[2].set_result(exchange_id)
                elif kind == "update":
                    updates.append((op[1], op[2]))
                    if op[3]:
                        ended.append(op[3])
                if kind in ("flush", "close", "due") or time.monotonic() - last_commit >= self._flush_seconds:
                    rows = [row for exchange in live.values() if (row := exchange._take()) is not None]
                    if rows or updates or in_transaction:
                        if not in_transaction:
                            db.execute("BEGIN")
                        db.executemany("INSERT INTO reads (exchange, seq, count, offset, first_at, last_at, data, "
                                       "sizes, times) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
                        for sql, values in updates:
                            db.execute(sql, values)
                        db.execute("COMMIT")
                        in_transaction = False
                    for exchange_id in ended:
                        live.pop(exchange_id, None)
                    updates, ended, last_commit = [], [], time.monotonic()
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

    def __init__(self, store: CaptureStore, method: str, url: str, request_headers: tuple[tuple[str, str], ...],
                 clock: float, started: float, request_model: str | None = None) -> None:
        self.id = 0
        # Reads not yet written, and how many reads and bytes were: the writer thread takes them (`_take`).
        self._lock = threading.Lock()
        self._pending: list[tuple[bytes, float]] = []
        self._pending_bytes = 0
        self._written = (0, 0)
        self._store = store
        self._method, self._url, self._request_headers = method, url, request_headers
        self._clock, self._started, self._request_model = clock, started, request_model
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
                                    "WHERE id = ?",
                          (status, dumps_strict(pairs, ensure_ascii=True), self._at(at), self.id), 0))

    def read(self, chunk: bytes, *, at: float | None = None) -> None:
        """One read of the response body as it arrived (`at`: seconds after the start, now by default)."""
        if not chunk:
            return
        data = bytes(chunk)
        seconds = self._at(at)
        if self._store._error is None:  # once writing failed, reads are not kept for it (end() says so)
            with self._lock:
                self._pending.append((data, seconds))
                self._pending_bytes += len(data)
                due = self._pending_bytes >= _DUE_BYTES
            if due:
                self._store._put(("due",))
        self._reads.append((self._size, seconds))
        if self._store.summarize:  # kept for the summary fold at the end
            self._chunks.append(data)
        self._size += len(data)

    def summarize(self, chunks: Sequence[bytes], reads: Sequence[tuple[int, float]], outcome: str,
                  error: str | None = None) -> Summary:
        """The summary the store would keep had the exchange ended as `outcome` after `chunks` (read at
        `reads`: body offset, seconds), folded now in the calling thread. A caller that must fold anyway
        (the in-process recorder, to tell whether the reply arrived) hands it to `end`, which then does
        not fold again."""
        return summarize_recorded(self.id, self.location, chunks, reads, self._recorded(outcome, error),
                                  self._started, self._request_model)

    @property
    def location(self) -> str:
        """`PATH#ID`: where every front opens this capture again."""
        return f"{self._store.path}#{self.id}"

    def end(self, outcome: str = "complete", error: str | None = None, *, at: float | None = None,
            summary: Summary | None = None) -> Future[Summary | None]:
        """How the exchange ended. Returns at once; the summary (what `show` would say: dialect, complete,
        TTFT, ...) is folded on the store's summary thread and written to its columns, and the returned
        future gives it (None when the store was opened with `summarize=False`). A `summary` the caller
        already made (`summarize`) is written as it is instead. Raises `StoreError` if writing the store
        failed."""
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
        if self._ended:
            raise ValueError(f"exchange {self.id} has already ended")
        self._store._check()
        self._ended = True
        self._store._put(("update", "UPDATE exchanges SET outcome = ?, error = ?, ended_at = ?, body_bytes = ?, "
                                    "read_count = ? WHERE id = ?",
                          (outcome, error, self._at(at), self._size, len(self._reads), self.id), self.id))
        future: Future[Summary | None] = Future()
        if summary is not None:
            self._store._write_summary(self.id, summary)
            future.set_result(summary)
        elif self._store.summarize:
            self._store._summarizer.fold(self.id, self.location, self._chunks, self._reads,
                                         self._recorded(outcome, error), self._started, self._request_model,
                                         future)
        else:
            future.set_result(None)
        self._chunks, self._reads = [], []
        return future

    def _recorded(self, outcome: str, error: str | None) -> dict[str, Any]:
        """What `stored_capture` takes of this exchange besides its reads."""
        return {"status": self._status, "response_headers": self._response_headers,
                "request_headers": self._request_headers, "url": self._url, "method": self._method,
                "outcome": outcome, "error": error}

    def _take(self) -> tuple[int, int, int, int, float, float, bytes, bytes, bytes] | None:
        """The reads recorded since the last call, as one `reads` row (the writer thread's)."""
        with self._lock:
            if not self._pending:
                return None
            pending, self._pending, self._pending_bytes = self._pending, [], 0
        seq, offset = self._written
        data = b"".join(chunk for chunk, _ in pending)
        sizes, times = array("I", [len(chunk) for chunk, _ in pending]), array("d", [at for _, at in pending])
        if sys.byteorder != "little":
            sizes.byteswap()
            times.byteswap()
        self._written = (seq + len(pending), offset + len(data))
        return (self.id, seq, len(pending), offset, pending[0][1], pending[-1][1], data, sizes.tobytes(),
                times.tobytes())

    def _at(self, at: float | None) -> float:
        return self.seconds() if at is None else float(at)
