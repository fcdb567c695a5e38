"""`fleet fold --engine dask`: the batches folded by the workers of a Dask
`distributed` scheduler (the `dask` extra).

Given an address, it joins that scheduler (the workers need streamfold
installed, `pip install 'streamfold-core[fleet]'`); without one it starts a
local cluster of one single-threaded worker process per CPU. Batches are
submitted as earlier ones finish, two per worker at most, so a fleet of any
size holds only those in memory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from distributed import Client, LocalCluster, as_completed

from .engines import Batches, Fold, Folded

__all__ = ["DaskEngine"]


class DaskEngine:
    def __init__(self, address: str | None = None, *, workers: int | None = None) -> None:
        self._cluster: LocalCluster | None = None
        if address:
            self._client = Client(address, set_as_default=False)
            self.description = f"dask at {address}"
        else:
            count = max(1, workers or os.cpu_count() or 1)
            self._cluster = LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                                         dashboard_address=None, host="127.0.0.1")
            self._client = Client(self._cluster, set_as_default=False)
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
        for future in _finished(waiting):
            table: pa.Table = future.result()
            number = numbers.pop(future.key)
            future.release()
            submit_next()
            yield (number,), table

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def _finished(waiting: Any) -> Iterator[Any]:
    yield from waiting
