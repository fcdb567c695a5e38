"""`fleet fold`: read the inputs, fold their captures in batches on an engine,
write the tables, and say what was written.

    report = fold_fleet(["captures/", "proxy.sqlite"], "fleet/", engine=LocalEngine())

The reading happens here, lazily: an input's rows are read only when the engine
has room for another batch. A batch is committed (its files written, then the
ledger) as soon as it comes back, so an interrupted run loses only the
batches in flight, and the next run over the same directory folds only what
is not committed yet (`layout.py` says how it knows).
"""

from __future__ import annotations

import datetime
import functools
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow.compute as pc

from .. import __version__
from ..store.schema import StoreError
from .batch import fold_records
from .engines import Engine
from .layout import FleetDir
from .records import Done
from .sources import Failure, Input, expand, records_of

__all__ = ["BATCH_BYTES", "BATCH_SIZE", "FleetRun", "Progress", "fold_fleet"]

#: A batch closes at this many captures or this many bytes of input, whichever comes first: what one
#: worker holds at once (a capture larger than the bytes is a batch of its own).
BATCH_SIZE = 5000
BATCH_BYTES = 64 * 1024 * 1024


@dataclass
class FleetRun:
    """What one run did, for the last line, the exit status and the manifest."""

    out: str
    engine: str
    inputs: int = 0
    inputs_skipped: int = 0
    captures: int = 0
    unreadable: int = 0
    captures_skipped: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    stopped: str | None = None
    seconds: float = 0.0
    removed: int = 0

    def summary(self) -> str:
        written = ", ".join(f"{name} {count:,}" for name, count in self.rows.items() if count) or "nothing"
        parts = [f"folded {self.captures:,} capture{'s' * (self.captures != 1)} from {self.inputs:,} "
                 f"input{'s' * (self.inputs != 1)} into {self.out} in {self.seconds:.1f} s ({self.engine}): "
                 f"rows written: {written}"]
        if self.unreadable:
            parts.append(f"{self.unreadable:,} could not be read (their rows say why)")
        if self.removed:
            parts.append(f"{self.removed:,} files of an interrupted run removed (their captures folded again)")
        if self.inputs_skipped or self.captures_skipped:
            parts.append(f"already folded and unchanged: {self.inputs_skipped:,} inputs, "
                         f"{self.captures_skipped:,} captures")
        if self.failures:
            parts.append(f"{len(self.failures)} input{'s' * (len(self.failures) != 1)} failed")
        if self.stopped:
            parts.append(f"stopped: {self.stopped}")
        return "; ".join(parts)


#: `progress(bytes_done, bytes_total, captures_done)`.
Progress = Callable[[int, int, int], None]


def fold_fleet(sources: list[str], out: str, *, engine: Engine, frames: bool = False, strict: bool = False,
               batch_size: int = BATCH_SIZE, batch_bytes: int = BATCH_BYTES, progress: Progress | None = None,
               failed: Callable[[Failure], None] | None = None) -> FleetRun:
    """Fold every capture under `sources` into the fleet directory `out`. `failed` is called with each input
    that fails, as it fails; `strict` stops the run at the first failed input or unreadable capture."""
    started = time.perf_counter()
    run = FleetRun(out, engine.description)
    with FleetDir(out) as fleet:
        # The run's number first: part files sort by it, newest last, whatever the clock says.
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S")
        run_id = f"{len(fleet.manifest['runs']) + 1:06d}-{stamp}"
        run.removed = len(fleet.removed)
        inputs, failures = expand(sources, exclude=out)
        for failure in failures:
            _fail(run, failure, failed, strict)
        finished = fleet.finished_inputs()
        todo = [item for item in inputs if finished.get(item.key) != item.fingerprint]
        run.inputs, run.inputs_skipped = len(todo), len(inputs) - len(todo)
        entry: dict[str, Any] = {"id": run_id, "streamfold_version": __version__, "sources": sources,
                                 "engine": engine.description, "status": "running",
                                 "started": _now(), "frames": frames}
        fleet.manifest["runs"].append(entry)
        fleet.write_manifest()
        reader = _Reader(todo, fleet.done_captures() if todo else {}, batch_size, batch_bytes, run, failed, strict,
                         fleet.finish_input)
        total = sum(item.size for item in todo)
        try:
            if not run.stopped:
                for numbers, folded in engine.map(functools.partial(fold_records, frames=frames), reader.batches()):
                    number = numbers[0]
                    rows = fleet.commit(run_id, number, folded)
                    for name, count in rows.items():
                        run.rows[name] = run.rows.get(name, 0) + count
                    run.captures += folded.num_rows
                    unreadable = pc.sum(pc.equal(folded.column("outcome_class"), "unreadable")).as_py() or 0
                    run.unreadable += unreadable
                    reader.committed(numbers)
                    if progress is not None:
                        progress(reader.bytes_sent, total, run.captures)
                    if strict and unreadable and not run.stopped:
                        run.stopped = f"a capture could not be read (--strict); batch {number} was written"
                        reader.stop()
            entry["status"] = "stopped" if run.stopped else "finished"
        except BaseException:
            entry["status"] = "interrupted"
            raise
        finally:
            run.captures_skipped = reader.done.skipped
            run.seconds = time.perf_counter() - started
            entry.update(ended=_now(), captures=run.captures, unreadable=run.unreadable,
                         captures_skipped=run.captures_skipped, inputs=run.inputs, inputs_skipped=run.inputs_skipped,
                         failed_inputs=[{"input": f.input, "reason": f.reason} for f in run.failures],
                         stopped=run.stopped)
            fleet.write_manifest()
    return run


def _fail(run: FleetRun, failure: Failure, failed: Callable[[Failure], None] | None, strict: bool) -> None:
    run.failures.append(failure)
    if failed is not None:
        failed(failure)
    if strict and run.stopped is None:
        run.stopped = f"an input failed (--strict): {failure}"


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class _Reader:
    """Reads the inputs into batches, and knows which inputs are whole once which batches are committed."""

    def __init__(self, inputs: list[Input], done: Mapping[str, str | None], batch_size: int, batch_bytes: int,
                 run: FleetRun, failed: Callable[[Failure], None] | None, strict: bool,
                 whole: Callable[[str, str, int], None]) -> None:
        self.inputs, self.done = inputs, Done(done)
        self.batch_size, self.batch_bytes = batch_size, batch_bytes
        self.run, self.failed, self.strict = run, failed, strict
        self.fingerprints = {item.key: item.fingerprint for item in inputs}
        self.bytes_sent = 0
        #: Called, in this thread, as soon as an input is whole: every capture of it committed.
        self._whole = whole
        #: input -> the batches holding its captures not committed yet, and its captures so far;
        #: an input is in `read_whole` once all its rows were read without failing.
        self._pending: dict[str, set[int]] = {}
        self._counts: dict[str, int] = {}
        self._read_whole: set[str] = set()
        self._stopped = False

    def stop(self) -> None:
        self._stopped = True

    def batches(self) -> Iterator[tuple[int, list[dict[str, Any]]]]:
        records: list[dict[str, Any]] = []
        size, number = 0, 0
        for item in self.inputs:
            self._pending[item.key], self._counts[item.key] = set(), 0
            try:
                for record in records_of(item, self.done):
                    if self._stopped or self.run.stopped:
                        return
                    records.append(record)
                    self._pending[item.key].add(number)
                    self._counts[item.key] += 1
                    size += len(record["data"] or b"")
                    if len(records) >= self.batch_size or size >= self.batch_bytes:
                        yield number, self._sent(records, size)
                        records, size, number = [], 0, number + 1
                self._read_whole.add(item.key)
            except (OSError, ValueError, StoreError) as exc:  # the input broke while read: its rows so far stay
                reason = getattr(exc, "strerror", None) or str(exc)
                _fail(self.run, Failure(item.key, f"cannot be read: {' '.join(reason.split())[:300]}"), self.failed,
                      self.strict)
            if not self._pending[item.key] and item.key in self._read_whole:
                del self._pending[item.key]  # its batches are committed (or it had nothing left to fold)
                self._whole(item.key, item.fingerprint, self._counts[item.key])
        if records and not (self._stopped or self.run.stopped):
            yield number, self._sent(records, size)

    def _sent(self, records: list[dict[str, Any]], size: int) -> list[dict[str, Any]]:
        self.bytes_sent += size
        return records

    def committed(self, done: tuple[int, ...]) -> None:
        """Batches `done` are committed: the inputs they complete are whole."""
        for key, numbers in list(self._pending.items()):
            numbers.difference_update(done)
            if not numbers and key in self._read_whole:
                self._whole(key, self.fingerprints[key], self._counts[key])
                del self._pending[key]
