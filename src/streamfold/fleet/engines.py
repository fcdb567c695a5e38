"""The engines that map the fold (`batch.fold_records`) over a fleet's batches.

Every engine has one method: `map(fold, batches)` takes the function and an
iterator of `(number, records)` (a batch's rows of `batch.INPUT_SCHEMA` as
dicts; Ray Data, which carries Arrow, makes them a table and back) and yields
`(numbers, folded table)` as they
finish, in any order (`numbers`: the batches the folded table holds; Ray Data
folds a window of batches at once), with only a few batches in flight: the reader behind the
iterator never runs far ahead, so memory is bounded by the batches in flight,
not by the fleet. The driver writes what comes back; an engine never writes.

- `local` (the default): a process pool on this machine, no server. One job
  folds in this process (what `bench_fleet.py` compares against a bare loop).
- `dask`: a `distributed` scheduler's workers (`dask_engine.py`).
- `ray`: Ray Data's `map_batches` (`ray_engine.py`).
"""

from __future__ import annotations

import multiprocessing
import os
import socket
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Protocol
from urllib.parse import urlsplit

import pyarrow as pa

__all__ = ["CONNECT_SECONDS", "Batch", "Batches", "Engine", "EngineError", "Fold", "Folded", "LocalEngine", "bounded",
           "check_reachable"]

#: A batch's input records: dicts with `batch.INPUT_SCHEMA`'s columns.
Batch = Sequence[dict[str, Any]]
Fold = Callable[[Batch], pa.Table]
Batches = Iterator[tuple[int, Batch]]
Folded = Iterator[tuple[tuple[int, ...], pa.Table]]

#: How long joining a cluster may take before the run gives up: Dask's own default waits 30 s and Ray's
#: retries for minutes, both printing tracebacks or C++ logs, where a wrong address deserves one line now.
CONNECT_SECONDS = 10.0


class EngineError(Exception):
    """The engine cannot be used (nobody listens at the address given, the cluster refused us); the message
    says why, on one line."""


def check_reachable(address: str, what: str, *, timeout: float = CONNECT_SECONDS) -> None:
    """Raise `EngineError` unless something accepts a TCP connection at `address` (`tcp://host:port`,
    `ray://host:port`, `host:port`) within `timeout`. Addresses with no host and port (Ray's `auto`, Dask's
    `inproc://`) are left to the engine."""
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        raise EngineError(f"{what} {address!r} is not an address (expected host:port)") from None
    if not host or port is None:
        return
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except socket.gaierror as exc:
        raise EngineError(f"{what} {address}: unknown host {host!r} ({exc.strerror})") from None
    except TimeoutError:
        raise EngineError(f"{what} {address}: no answer in {timeout:g} s") from None
    except OSError as exc:
        raise EngineError(f"{what} {address}: nothing listens there ({exc.strerror or exc})") from None


class Engine(Protocol):
    #: What the manifest and the last line call it (`local, 2 processes`, `dask at tcp://...`).
    description: str

    def map(self, fold: Fold, batches: Batches) -> Folded: ...

    def close(self) -> None: ...


class LocalEngine:
    """A pool of `jobs` processes (os.cpu_count() by default); with one job, the fold runs in this process."""

    def __init__(self, jobs: int | None = None) -> None:
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.description = f"local, {self.jobs} process{'es' if self.jobs > 1 else ''}"
        self._pool: ProcessPoolExecutor | None = None

    def map(self, fold: Fold, batches: Batches) -> Folded:
        if self.jobs == 1:
            for number, batch in batches:
                yield (number,), fold(batch)
            return
        if self._pool is None:
            # forkserver: a fork of this process (its threads, the progress bar's) is not safe; spawn is slow.
            method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
            self._pool = ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context(method),
                                             initializer=_own_worker)
        yield from bounded(self._pool.submit, fold, batches, in_flight=2 * self.jobs)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None


def _own_worker() -> None:
    """A pool worker is the fleet's own process: its batches fold with what lives on frozen (`batch`)."""
    from . import batch

    batch.freeze_what_lives_on = True


def bounded(submit: Callable[..., Future[pa.Table]], fold: Fold, batches: Batches, *, in_flight: int) -> Folded:
    """Submit batches as earlier ones finish, at most `in_flight` at a time; yield each as it finishes."""
    running: dict[Future[pa.Table], int] = {}
    exhausted = False
    while True:
        while not exhausted and len(running) < in_flight:
            try:
                number, batch = next(batches)
            except StopIteration:
                exhausted = True
                break
            running[submit(fold, batch)] = number
        if not running:
            return
        finished, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in finished:
            yield (running.pop(future),), future.result()
