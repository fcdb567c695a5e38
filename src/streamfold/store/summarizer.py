"""The fold at the end of a recording: each ended exchange is folded as `show`
would fold it, made into the rows of `streamfold.tables`, and projected onto
the store's summary columns (`summary.py`). The writer thread only writes
what it is handed; folding happens here, on a thread of its own, one exchange
at a time, so the recording threads never fold either.

A big exchange is folded in a child process (`FoldProcess`): a fold on a
thread of the proxy's process holds the GIL for as long as it takes (seconds
for hundreds of MB), and every stream the proxy relays meanwhile waits for it
at each read and write. A small one is folded on the thread, in less time than
a process costs to ask.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from ..services.capture import Capture
from ..services.load import fold_capture
from ..tables import CaptureInfo, tables
from .stored import stored_capture
from .summary import Summary, summary_of

__all__ = ["FOLD_APART_BYTES", "FoldProcess", "Summarizer", "capture_tables", "serve_folds", "summarize",
           "summarize_recorded"]

#: An exchange of at least this many bytes is folded in the summarizer's child process (`FoldProcess`): the
#: fold of a smaller one (about a millisecond) is cheaper than handing it over.
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


class FoldProcess:
    """`summarize_recorded` in a child Python process (this interpreter, this `sys.path`, a lower priority),
    started when first needed and spoken to in pickles over its standard input and output. A plain child,
    not multiprocessing's spawn or forkserver: those run the parent's `__main__` again in the child, and the
    store is opened from scripts with no `if __name__ == "__main__"` guard. Where no process starts
    (Pyodide) or the child died, the fold runs in the caller's thread, so a summary is never lost."""

    def __init__(self) -> None:
        self._child: subprocess.Popen[bytes] | None = None
        self._usable = True

    def summarize(self, *arguments: Any) -> Summary:
        if self._usable:
            try:
                child = self._child or self._start()
                assert child.stdin is not None and child.stdout is not None
                pickle.dump(arguments, child.stdin, protocol=pickle.HIGHEST_PROTOCOL)
                child.stdin.flush()
                folded, value = pickle.load(child.stdout)
            # It did not start, it died, or the call does not pickle (TypeError): the fold is done here instead.
            except (OSError, EOFError, pickle.PickleError, ValueError, TypeError):
                self.close()
                self._usable = False
            else:
                if folded:
                    return value  # type: ignore[no-any-return]
                raise value  # what the fold raised there, as it would have here
        return summarize_recorded(*arguments)

    def _start(self) -> subprocess.Popen[bytes]:
        code = "import sys; sys.path[:] = sys.argv[1:]; from streamfold.store.summarizer import serve_folds; " \
               "serve_folds()"
        self._child = subprocess.Popen([sys.executable, "-c", code, *sys.path], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE)
        return self._child

    def close(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            with contextlib.suppress(OSError):
                child.stdin.close()  # type: ignore[union-attr]
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            child.stdout.close()  # type: ignore[union-attr]


def serve_folds() -> None:
    """The child of `FoldProcess`: folds each pickled call it reads, writes back (True, summary) or (False,
    what it raised), until its input ends. Yields the CPU to the streams in flight: on a busy machine a
    summary may wait, a relayed stream should not."""
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed goes to stderr, not into the replies
    if hasattr(os, "nice"):
        os.nice(10)
    calls = sys.stdin.buffer
    while True:
        try:
            arguments = pickle.load(calls)
        except EOFError:
            return
        try:
            reply: tuple[bool, Any] = (True, summarize_recorded(*arguments))
        except Exception as exc:  # a bug in folding: the parent's summarizer says it, as for its own folds
            reply = (False, exc)
        try:
            pickle.dump(reply, channel, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            pickle.dump((False, RuntimeError(repr(reply[1]))), channel, protocol=pickle.HIGHEST_PROTOCOL)
        channel.flush()


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
