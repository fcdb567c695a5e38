"""Fleets: fold many captures into the tables of `streamfold.tables`, as Parquet,
and ask them questions in SQL (the `fleet` extra: pyarrow and DuckDB).

- `batch.py`: the pure function every engine maps, `fold_batch` (Arrow in, Arrow out);
- `arrow.py`: the table schema in Arrow, and the folded batch split into tables;
- `sources.py`, `records.py`: what a user points at, read into batches;
- `engines.py` (+ `dask_engine.py`, `ray_engine.py`): who folds the batches;
- `layout.py`: the fleet directory (Parquet partitions, the ledger, the manifest);
- `run.py`: `fold_fleet`, the driver; `command.py`: `streamfold fleet`.

Nothing here imports the command line or the page; `command.py` is the one
click module, added to the `streamfold` program by `streamfold.launcher`.
"""
