"""One exchange as the in-process recorder sees it: the request a transport was
handed, the response head it returned, each chunk the client pulled from the
body, and how the body ended.

The transports (`_sync`, `_async`) call `start`, then the `Recording`'s
methods; nothing here ever raises into the client's request. A store that
cannot take the exchange (closed, disk full, a bug) is said once per store in
a `CaptureWarning` and the request goes on unrecorded.

How the body ended, from what the transport saw:

- its end arrived (the chunks ran out): `complete`;
- reading it raised: `upstream-cut` with the error's sentence (a timeout or an
  interrupt is the client giving up: `client-cut`);
- the client closed it first. The SDKs close the response as soon as they
  parse the stream's terminal event (`data: [DONE]`, `message_stop`), usually
  before the transport has pulled the chunked body's closing `0\\r\\n\\r\\n`,
  so "closed before the end" alone would call every SDK call cut. The body
  read so far decides instead: all of a `Content-Length`, or a stream the fold
  finds complete, is `complete`; anything else is `client-cut`. The fold runs
  in the closing thread, once, only on this path (about a millisecond for a
  typical reply), and its summary is the one the store keeps: it does not fold
  the exchange again.
"""

from __future__ import annotations

import threading
import warnings
import weakref
from collections.abc import Iterable
from typing import Any

from ..store import CaptureStore, Exchange, Summary

__all__ = ["CaptureWarning", "Recording", "error_sentence", "start"]


class CaptureWarning(UserWarning):
    """The in-process recorder could not write into its store; requests go on, unrecorded."""


_warned_lock = threading.Lock()
_warned: weakref.WeakSet[CaptureStore] = weakref.WeakSet()


def _warn_once(store: CaptureStore, exc: BaseException) -> None:
    with _warned_lock:
        if store in _warned:
            return
        _warned.add(store)
    warnings.warn(f"streamfold.capture could not record into {store.path!r} ({type(exc).__name__}: {exc}); "
                  "requests go on unrecorded", CaptureWarning, stacklevel=4)


def error_sentence(exc: BaseException) -> str:
    """`ConnectError: [Errno 111] Connection refused`: the exception's class and message, on one line."""
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _pairs(raw: Iterable[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(name.decode("latin-1"), value.decode("latin-1")) for name, value in raw]


def _gives_up(exc: BaseException) -> bool:
    """A timeout, an interrupt or a cancellation: the client stopped waiting, the upstream did not cut."""
    return not isinstance(exc, Exception) or any(cls.__name__.endswith(("Timeout", "TimeoutException", "TimeoutError"))
                                                 for cls in type(exc).__mro__)


class Recording:
    """The recording of one exchange; every method is safe to call whatever the store does."""

    def __init__(self, store: CaptureStore, exchange: Exchange | None) -> None:
        self._store, self._exchange = store, exchange
        self._headers: list[tuple[str, str]] = []
        self._length: int | None = None
        self._chunks: list[bytes] = []
        self._reads: list[tuple[int, float]] = []
        self._size = 0

    @property
    def ended(self) -> bool:
        """Whether the exchange has ended (or was never recorded)."""
        return self._exchange is None

    def response(self, status: int, raw_headers: Iterable[tuple[bytes, bytes]]) -> None:
        """The response head, as the inner transport returned it."""
        if self._exchange is None:
            return
        self._headers = _pairs(raw_headers)
        self._length = next((int(value) for name, value in self._headers
                             if name.lower() == "content-length" and value.strip().isdigit()), None)
        self._safely(lambda exchange: exchange.response(status, self._headers))

    def read(self, chunk: bytes) -> None:
        """One chunk of the body, as the client pulls it (before any decompression)."""
        exchange = self._exchange
        if exchange is None or not chunk:
            return
        try:
            at = exchange.seconds()
            exchange.read(chunk, at=at)
        except Exception as exc:  # never the client's problem
            self._give_up(exc)
            return
        self._chunks.append(chunk)
        self._reads.append((self._size, at))
        self._size += len(chunk)

    def body_ended(self) -> None:
        """The inner stream ran out: the whole body arrived."""
        self._end("complete")

    def body_failed(self, exc: BaseException) -> None:
        """Reading the body raised `exc` (passed on to the client unchanged)."""
        self._end("client-cut" if _gives_up(exc) else "upstream-cut", error_sentence(exc))

    def closed_early(self) -> None:
        """The client closed the body before the transport saw its end (see the module's docstring)."""
        exchange = self._exchange
        if exchange is None:
            return
        arrived, summary = self._reply_arrived(exchange)
        self._end("complete" if arrived else "client-cut", summary=summary)

    def failed(self, exc: BaseException) -> None:
        """The request got no response (connection refused, TLS, timeout...): `failed`."""
        self._end("failed", error_sentence(exc))

    def _reply_arrived(self, exchange: Exchange) -> tuple[bool, Summary | None]:
        """Whether the whole reply arrived, and the summary of it as `complete` when it took a fold to tell."""
        if self._length is not None:
            return self._size >= self._length, None
        if not self._chunks:
            return False, None
        try:
            summary = exchange.summarize(self._chunks, self._reads, "complete")
        except Exception:  # a fold bug must not break the client: say cut, the store's own fold says more
            return False, None
        return summary.complete, summary if summary.complete else None

    def _end(self, outcome: str, error: str | None = None, *, summary: Summary | None = None) -> None:
        self._safely(lambda exchange: exchange.end(outcome, error, summary=summary))
        self._exchange, self._chunks, self._reads = None, [], []

    def _safely(self, step: Any) -> None:
        exchange = self._exchange
        if exchange is None:
            return
        try:
            step(exchange)
        except Exception as exc:
            self._give_up(exc)

    def _give_up(self, exc: BaseException) -> None:
        self._exchange, self._chunks, self._reads = None, [], []
        _warn_once(self._store, exc)


def start(store: CaptureStore, method: str, url: str, raw_headers: Iterable[tuple[bytes, bytes]],
          body: bytes) -> Recording:
    """Begin recording a request; a store that refuses it gives a `Recording` that records nothing."""
    try:
        exchange: Exchange | None = store.begin(method, url, _pairs(raw_headers), body)
    except Exception as exc:
        _warn_once(store, exc)
        exchange = None
    return Recording(store, exchange)
