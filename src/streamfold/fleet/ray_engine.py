"""`fleet fold --engine ray`: the batches folded by Ray Data (the `ray` extra).

`map_batches` maps the same pure function over Arrow tables (`batch_format=
"pyarrow"`; each batch's records made a table of `INPUT_SCHEMA`, and back into
records on the worker), a window of batches at a time: each window is a dataset
of its batches, folded by Ray's workers, and comes back as one table, so the reader
never runs more than a window ahead. Given an address, it joins that cluster;
without one it starts a local Ray runtime.

Ray speaks on the console (a token-auth notice, the progress bars' warning,
each dataset's "execution finished"): `fleet fold` prints only what the user
asked for, so Ray's logger and Ray Data's console handler keep only errors;
Ray Data's log file (`/tmp/ray/session_latest/logs/ray-data.log`) still has everything.
"""

from __future__ import annotations

import functools
import logging
import os
from itertools import islice

import pyarrow as pa
import ray
import ray.data

from .batch import INPUT_SCHEMA
from .engines import CONNECT_SECONDS, Batch, Batches, EngineError, Fold, Folded, check_reachable

__all__ = ["RayEngine"]


class RayEngine:
    def __init__(self, address: str | None = None, *, cpus: int | None = None,
                 timeout: float = CONNECT_SECONDS) -> None:
        _quiet_console()
        self._started = not ray.is_initialized()
        if self._started:
            if address and address not in ("auto", "local"):
                check_reachable(address, "the Ray cluster", timeout=timeout)
            try:
                # Ray's own logger at errors: `configure_logging=False` would leave its notices to Python's
                # last-resort handler, which prints them.
                ray.init(address=address or None, num_cpus=None if address else (cpus or os.cpu_count()),
                         include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
            except (ConnectionError, TimeoutError) as exc:
                raise EngineError(f"the Ray cluster {address}: {' '.join(str(exc).split())[:300]}") from None
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
            dataset = ray.data.from_arrow([pa.Table.from_pylist(records, schema=INPUT_SCHEMA) for _, records in window])
            folded = dataset.map_batches(functools.partial(_fold_table, fold), batch_format="pyarrow", batch_size=None,
                                         zero_copy_batch=True)
            try:
                tables = [pa.table(batch) for batch in folded.iter_batches(batch_format="pyarrow", batch_size=None)]
            except ray.exceptions.RayError as exc:  # the fold never raises on bad input: this is the cluster
                first = " ".join(str(exc).split())[:300]
                raise EngineError(f"Ray could not fold batches {window[0][0]}-{window[-1][0]}: {first}") from None
            yield tuple(number for number, _ in window), pa.concat_tables(tables) if tables else _empty(fold, window)

    def close(self) -> None:
        if self._started and ray.is_initialized():
            ray.shutdown()


def _quiet_console() -> None:
    """Raise Ray Data's console handler to errors (its file handler keeps everything)."""
    for handler in logging.getLogger("ray.data").handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            handler.setLevel(logging.ERROR)


def _fold_table(fold: Fold, table: pa.Table) -> pa.Table:
    return fold(table.to_pylist())


def _empty(fold: Fold, window: list[tuple[int, Batch]]) -> pa.Table:
    return fold([])
