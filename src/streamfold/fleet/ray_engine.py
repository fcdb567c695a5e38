"""`fleet fold --engine ray`: the batches folded by Ray Data (the `ray` extra).

`map_batches` maps the same pure function over Arrow tables (`batch_format=
"pyarrow"`), a window of batches at a time: each window is a dataset of its
batches, folded by Ray's workers, and comes back as one table, so the reader
never runs more than a window ahead. Given an address, it joins that cluster;
without one it starts a local Ray runtime.
"""

from __future__ import annotations

import os
from itertools import islice

import pyarrow as pa
import ray

from .engines import Batches, Fold, Folded

__all__ = ["RayEngine"]


class RayEngine:
    def __init__(self, address: str | None = None, *, cpus: int | None = None) -> None:
        self._started = not ray.is_initialized()
        if self._started:
            ray.init(address=address or None, num_cpus=None if address else (cpus or os.cpu_count()),
                     include_dashboard=False, log_to_driver=False, configure_logging=False)
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.print_on_execution_start = False
        self._window = 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.description = f"ray at {address}" if address else f"ray, a local runtime of {self._window // 2} CPUs"

    def map(self, fold: Fold, batches: Batches) -> Folded:
        while True:
            window = list(islice(batches, self._window))
            if not window:
                return
            dataset = ray.data.from_arrow([table for _, table in window])
            folded = dataset.map_batches(fold, batch_format="pyarrow", batch_size=None, zero_copy_batch=True)
            tables = [pa.table(batch) for batch in folded.iter_batches(batch_format="pyarrow", batch_size=None)]
            yield tuple(number for number, _ in window), pa.concat_tables(tables) if tables else _empty(fold, window)

    def close(self) -> None:
        if self._started and ray.is_initialized():
            ray.shutdown()


def _empty(fold: Fold, window: list[tuple[int, pa.Table]]) -> pa.Table:
    return fold(window[0][1].slice(0, 0))
