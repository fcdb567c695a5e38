"""`fleet fold --engine dask`: the batches folded by the workers of a Dask
`distributed` scheduler (the `dask` extra).

Given an address, it joins that scheduler (the workers need streamfold
installed, `pip install 'streamfold-core[fleet]'`); without one it starts a
local cluster of one single-threaded worker process per CPU. Batches are
submitted as earlier ones finish, two per worker at most, so a fleet of any
size holds only those in memory. A batch a worker dies on is run again by
distributed on another worker (the fold is pure, so the rows are the same).
"""

from __future__ import annotations

import logging
import os
from typing import Any

import pyarrow as pa
from distributed import Client, LocalCluster, as_completed

from .engines import CONNECT_SECONDS, Batches, EngineError, Fold, Folded, check_reachable

__all__ = ["DaskEngine"]


class DaskEngine:
    def __init__(self, address: str | None = None, *, workers: int | None = None,
                 timeout: float = CONNECT_SECONDS) -> None:
        self._cluster: LocalCluster | None = None
        if address:
            what = "the Dask scheduler"
            check_reachable(address, what, timeout=timeout)
            try:
                self._client = Client(address, set_as_default=False, timeout=timeout)
            except OSError as exc:  # it listens, but is not a scheduler that answers (TimeoutError is an OSError)
                raise EngineError(f"{what} {address}: {' '.join(str(exc).split())}") from None
            self.description = f"dask at {address}"
        else:
            count = max(1, workers or os.cpu_count() or 1)
            # Its workers' warnings (a task cancelled by Ctrl-C) would land on the command's stderr.
            self._cluster = LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                                         dashboard_address=None, host="127.0.0.1", silence_logs=logging.ERROR)
            try:
                self._client = Client(self._cluster, set_as_default=False)
            except BaseException:
                self._cluster.close()  # its worker processes would outlive the run
                raise
            self.description = f"dask, a local cluster of {count} worker{'s' * (count != 1)}"

    def map(self, fold: Fold, batches: Batches) -> Folded:
        in_flight = 2 * max(1, len(self._client.scheduler_info(n_workers=-1).get("workers", {})))
        numbers: dict[Any, int] = {}
        waiting: Any = as_completed(loop=self._client.loop)

        def submit_next() -> bool:
            for number, batch in batches:
                future = self._client.submit(fold, batch, pure=False)
                numbers[future.key] = number
                waiting.add(future)
                return True
            return False

        for _ in range(in_flight):
            if not submit_next():
                break
        for future in waiting:
            number = numbers.pop(future.key)
            try:
                table: pa.Table = future.result()
            except Exception as exc:  # the fold never raises on bad input: this is the cluster or the code
                raise EngineError(_worker_failure(number, exc)) from None
            future.release()
            submit_next()
            yield (number,), table

    def close(self) -> None:
        try:
            self._client.close()
        finally:
            if self._cluster is not None:
                self._cluster.close()


def _worker_failure(number: int, exc: BaseException) -> str:
    reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
    hint = (" (the workers need streamfold: pip install 'streamfold-core[fleet]')"
            if isinstance(exc, ModuleNotFoundError) else "")
    return f"a Dask worker could not fold batch {number}: {reason}{hint}"
