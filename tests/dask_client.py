"""What tests/fleet/test_engines.py asks of a Dask scheduler through distributed's own client, each run in a
process of its own (`in_child`).

distributed's client leaves its comms' sockets for the garbage collector to close, sometimes long after the
client is closed (its event loop's thread lets them go). In the suite's process their ResourceWarning, an error
under `filterwarnings = error`, would fail whichever later test the collection happened to fall in (it failed
`test_there_is_no_import_circle` once). In a child process of its own, the client's sockets end with it.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pyarrow as pa
from distributed import Client

from streamfold.fleet.batch import fold_records
from streamfold.fleet.dask_engine import DaskEngine
from streamfold.fleet.engines import Batch, EngineError
from streamfold.fleet.run import fold_fleet

T = TypeVar("T")

#: Spawned, not forked: a fork of the suite's process would carry its threads' state (and its servers' sockets).
_SPAWN = multiprocessing.get_context("spawn")


def in_child(function: Callable[..., T], *args: Any, timeout: float = 300) -> T:
    """`function(*args)` in a spawned process of its own; what it returns or raises comes back."""
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=_SPAWN) as pool:
        return pool.submit(function, *args).result(timeout=timeout)


def wait_for_workers(address: str, count: int) -> None:
    with Client(address, set_as_default=False, timeout=60) as client:
        client.wait_for_workers(count, timeout=60)


def fold_through_the_engine(address: str, sources: list[str], out: str, batch_size: int) -> dict[str, Any]:
    """`fold_fleet` with a `DaskEngine` on the scheduler at `address`: the workers' process ids, how many tasks
    each ran meanwhile, and the run's engine description."""

    def executed(dask_worker: Any) -> int:  # nested: sent to the workers by value (they cannot import this module)
        return int(dask_worker.state.executed_count)

    with Client(address, set_as_default=False) as client:
        pids = sorted(client.run(os.getpid).values())
        before = client.run(executed)
        engine = DaskEngine(address)
        try:
            run = fold_fleet(sources, out, engine=engine, batch_size=batch_size)
        finally:
            engine.close()
        after = client.run(executed)
    return {"pids": pids, "done": {worker: after[worker] - before[worker] for worker in after},
            "engine": run.engine}


def a_failing_batch(address: str) -> str:
    """The `EngineError` a batch whose fold raises on a worker ends the engine's map in (its message)."""

    def out_of_memory(batch: Batch) -> pa.Table:  # what a worker without streamfold, or out of memory, comes to
        raise MemoryError("the worker ran out of memory")

    engine = DaskEngine(address)
    try:
        list(engine.map(out_of_memory, iter([(7, [{"x": 1}])])))
    except EngineError as exc:
        return str(exc)
    finally:
        engine.close()
    return "no error"


def fold_while_a_worker_dies(address: str, doomed_pid: int, batches: list[tuple[int, list[dict[str, Any]]]],
                             ) -> tuple[list[str], dict[int, list[dict[str, Any]]]]:
    """The engine folds `batches` while the worker of process `doomed_pid` (a third, started by the caller) is
    killed as it folds one: the tasks it held when killed, and each batch's folded rows (a batch folded twice
    is an AssertionError)."""

    def fold_unless_doomed(batch: Batch) -> pa.Table:
        # The doomed worker is still folding when it is killed; the others are slow enough that batches wait
        # for a free worker, so the scheduler hands the idle newcomer some whatever its placement policy.
        time.sleep(60 if os.getpid() == doomed_pid else 0.5)
        return fold_records(batch)

    lost: list[str] = []
    folded: dict[int, list[dict[str, Any]]] = {}
    with Client(address, set_as_default=False) as client:
        client.wait_for_workers(3, timeout=60)
        victim = next(worker for worker, pid in client.run(os.getpid).items() if pid == doomed_pid)

        def kill_when_busy() -> None:
            deadline = time.monotonic() + 60
            while not lost and time.monotonic() < deadline:
                lost.extend(client.processing(workers=[victim]).get(victim, ()))
                time.sleep(0.1)
            time.sleep(0.5)  # from assigned to running
            os.kill(doomed_pid, 9)

        killer = threading.Thread(target=kill_when_busy)
        killer.start()
        engine = DaskEngine(address)
        try:
            for (number,), table in engine.map(fold_unless_doomed, iter(batches)):
                assert number not in folded
                folded[number] = table.to_pylist()
        finally:
            engine.close()
            killer.join()
    return [str(key) for key in lost], folded
