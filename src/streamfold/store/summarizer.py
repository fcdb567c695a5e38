"""The fold at the end of a recording: each ended exchange is folded as `show`
would fold it, made into the rows of `streamfold.tables`, and projected onto
the store's summary columns (`summary.py`). The writer thread only writes
what it is handed; folding happens here, on a thread of its own, one exchange
at a time, so the recording threads never fold either.

A big exchange is folded in a process of its own (`FoldProcess`): a fold on a
thread of the proxy's process holds the GIL for as long as it takes (seconds
for hundreds of MB), and every stream the proxy relays meanwhile waits for it
at each read and write. A small one is folded on the thread, in less time than
a process costs to ask.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from ..services.capture import Capture
from ..services.load import fold_capture
from ..tables import CaptureInfo, tables
from .stored import stored_capture
from .summary import Summary, summary_of

__all__ = ["FOLD_APART_BYTES", "FoldProcess", "Summarizer", "capture_tables", "summarize", "summarize_recorded"]

#: An exchange of at least this many bytes is folded in the summarizer's process: the fold of a smaller one
#: (about a millisecond) is cheaper than handing it over.
FOLD_APART_BYTES = 256 * 1024


def capture_tables(capture: Capture, capture_id: str, *, method: str | None = None, outcome: str | None = None,
                   started_at: float | None = None, request_model: str | None = None, frames: bool = False,
                   fingerprint: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """Fold `capture` as `show` does and return its rows (`streamfold.tables`, `frames` too when asked), with
    what the recording knows of it (where it is, the request, how it ended, its times) in the `captures` row."""
    loaded = fold_capture(capture)
    timing = loaded.timing
    info = CaptureInfo(source=capture.source, location=capture_id or None, method=method, url=capture.url,
                       request_model=request_model, started_at=started_at, status=capture.status, outcome=outcome,
                       ttfb=None if timing is None else timing.ttfb, ttft=None if timing is None else timing.ttft,
                       duration=None if timing is None else timing.duration, body_bytes=len(capture.body),
                       read_count=len(capture.reads) if capture.reads else None, fingerprint=fingerprint)
    return tables(loaded.result, capture_id, capture=info, frames=frames)


def summarize(capture: Capture, capture_id: str = "") -> Summary:
    """Fold `capture` as `show` does and keep what the capture list shows."""
    return summary_of(capture_tables(capture, capture_id)["captures"][0])


def summarize_recorded(exchange_id: int, location: str, chunks: Sequence[bytes], reads: Sequence[tuple[int, float]],
                       recorded: dict[str, Any], started_at: float | None, request_model: str | None = None) -> Summary:
    """The summary of one recorded exchange (`recorded`: the keywords of `stored_capture`), in the caller's
    thread. `location` (`PATH#ID`) is its capture id in the tables."""
    capture = stored_capture(exchange_id, chunks, reads, **recorded)
    rows = capture_tables(capture, location, method=recorded["method"], outcome=recorded["outcome"],
                          started_at=started_at, request_model=request_model)
    return summary_of(rows["captures"][0])


def _background() -> None:
    """The fold process yields the CPU to the streams in flight: on a busy machine a summary may wait, a
    relayed stream should not."""
    if hasattr(os, "nice"):
        os.nice(10)


class FoldProcess:
    """`summarize_recorded` in a child process, started when first needed; where there are no processes
    (Pyodide) or the child died, the fold runs in the caller's thread instead, so a summary is never lost."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._usable = True

    def summarize(self, *arguments: Any) -> Summary:
        if self._usable:
            try:
                if self._pool is None:
                    # forkserver: forking this process (the proxy's threads, its event loop) is not safe;
                    # spawn starts slower and works everywhere else.
                    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
                    self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context(method),
                                                     initializer=_background)
                return self._pool.submit(summarize_recorded, *arguments).result()
            except (BrokenProcessPool, OSError, NotImplementedError, ImportError):
                self.close()
                self._usable = False
        return summarize_recorded(*arguments)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


class Summarizer:
    """Folds each ended exchange on its own thread (in `FoldProcess` from `apart_bytes` bytes) and hands
    the summary to `write(exchange_id, summary)`. `passed_on(done)` is called, in order, for each
    `flush(done)`: after the summaries asked for before it."""

    def __init__(self, name: str, write: Callable[[int, Summary], None],
                 passed_on: Callable[[threading.Event], None], *, apart_bytes: int = FOLD_APART_BYTES) -> None:
        self._write, self._passed_on = write, passed_on
        self._apart_bytes = apart_bytes
        self._process = FoldProcess()
        self._asked: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def fold(self, exchange_id: int, location: str, chunks: Sequence[bytes], reads: Sequence[tuple[int, float]],
             recorded: dict[str, Any], started_at: float, request_model: str | None,
             future: Future[Summary | None]) -> None:
        """Fold one ended exchange (`recorded`: the keywords of `stored_capture`); `future` gets its summary."""
        self._asked.put(("fold", exchange_id, location, chunks, reads, recorded, started_at, request_model, future))

    def flush(self, done: threading.Event) -> None:
        self._asked.put(("flush", done))

    def close(self) -> None:
        """Fold what was asked for, then stop."""
        self._asked.put(("close",))
        self._thread.join()

    def _run(self) -> None:
        while True:
            asked = self._asked.get()
            if asked[0] == "close":
                self._process.close()
                return
            if asked[0] == "flush":
                self._passed_on(asked[1])
                continue
            exchange_id, chunks, future = asked[1], asked[3], asked[-1]
            try:
                if sum(map(len, chunks)) >= self._apart_bytes:
                    summary = self._process.summarize(*asked[1:-1])
                else:
                    summary = summarize_recorded(*asked[1:-1])
            except BaseException as exc:  # a bug in folding: the recorder's future says it; the store goes on
                future.set_exception(exc)
                continue
            self._write(exchange_id, summary)
            future.set_result(summary)
