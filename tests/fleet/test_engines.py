"""The distributed engines as users run them: a Dask scheduler and two workers started as processes of their
own on 127.0.0.1, and a local Ray runtime started by `streamfold fleet fold --engine ray`. Each folds the same
inputs (the suite's captures and inputs, a JSONL of records, a capture store) into the same rows, every table,
as the local engine; the Dask workers are seen doing the work; an address nobody listens on is one line.

Ray costs a runtime's start-up (seconds): one `fleet fold --engine ray` run holds all Ray's checks.
"""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from store_helpers import BODIES, record
from streamfold.fleet.batch import INPUT_SCHEMA, fold_batch
from streamfold.fleet.engines import LocalEngine
from streamfold.fleet.query import open_fleet
from streamfold.fleet.run import fold_fleet
from streamfold.store import CaptureStore
from streamfold.tables import SCHEMA

pytest.importorskip("distributed")
import dask_client  # after the skip: it imports distributed
from dask_client import in_child

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[2]
#: The workers import streamfold from this checkout, as the test process does.
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
#: Small batches, so that the two workers share them.
BATCH = 64
CAPTURES = ROOT / "tests" / "captures"


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The suite's captures and inputs, a JSONL of capture records (one not JSON, one without a body) and a
    capture store."""
    where = tmp_path_factory.mktemp("sources")
    lines = [json.dumps({"id": f"line-{index}", "body": body.read_text(encoding="utf-8"), "status": 200,
                         "url": "https://api.openai.com/v1/chat/completions", "started_at": 1765078200.5 + index,
                         "arrivals": [[0, 0.25]]})
             for index, body in enumerate(sorted(CAPTURES.glob("openai/*.sse"))[:6])]
    lines.append(json.dumps({"id": "binary", "body_base64": base64.b64encode(BODIES[-1].read_bytes()).decode()}))
    lines += ['{"id": "cut', json.dumps({"id": "no-body", "status": 200})]
    (where / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with CaptureStore(str(where / "store.sqlite")) as store:
        for seed, body in enumerate(BODIES[:6]):
            record(store, body.read_bytes(), seed)
    return [str(CAPTURES), str(ROOT / "tests" / "inputs"), str(where / "records.jsonl"), str(where / "store.sqlite")]


def rows(fleet: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, sorted by capture id and then the whole row."""
    with open_fleet(fleet) as db:
        return {table: sorted(db.execute(f"SELECT * FROM {table}").fetchall(), key=lambda row: (row[0], repr(row)))
                for table in SCHEMA if table != "frames"}


def batches_committed(fleet: Path) -> int:
    lines = (fleet / "_fleet" / "ledger.jsonl").read_text(encoding="utf-8").splitlines()
    return sum("batch" in json.loads(line) for line in lines)


@pytest.fixture(scope="module")
def local_rows(sources: list[str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[Any, ...]]]:
    out = tmp_path_factory.mktemp("local") / "fleet"
    run = fold_fleet(sources, str(out), engine=LocalEngine(1), batch_size=BATCH)
    assert run.captures > 400 and run.unreadable >= 2 and not run.failures
    return rows(out)


def fold_record_input(path: Path) -> dict[str, Any]:
    return {**dict.fromkeys(INPUT_SCHEMA.names), "capture_id": path.name, "kind": "body", "data": path.read_bytes()}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    """`dask scheduler` and two `dask worker`s (no nanny: the worker is the process started here), each a process
    of its own, on 127.0.0.1."""
    where = tmp_path_factory.mktemp("dask")
    scheduler_file = where / "scheduler.json"
    logs = open(where / "dask.log", "wb")  # noqa: SIM115 - closed after the processes end
    started = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                 "--port", "0", "--no-dashboard", "--scheduler-file", str(scheduler_file)],
                                env=ENV, stdout=logs, stderr=logs)]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        workers = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                                     str(scheduler_file), "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                     "--host", "127.0.0.1"], env=ENV, stdout=logs, stderr=logs)
                   for _ in range(2)]
        started += workers
        address = json.loads(scheduler_file.read_text(encoding="utf-8"))["address"]
        in_child(dask_client.wait_for_workers, address, 2)
        yield address, workers
    finally:
        for process in reversed(started):  # the workers first: without its scheduler, a worker waits for it
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        logs.close()


def test_dask_workers_fold_what_the_local_engine_folds(
        sources: list[str], local_rows: dict[str, list[tuple[Any, ...]]],
        dask_cluster: tuple[str, list[subprocess.Popen[bytes]]], tmp_path: Path) -> None:
    address, workers = dask_cluster
    seen = in_child(dask_client.fold_through_the_engine, address, sources, str(tmp_path / "api"), BATCH)
    # The worker processes the scheduler knows are the two started above, not a cluster of the engine's own.
    assert seen["pids"] == sorted(worker.pid for worker in workers)
    assert seen["engine"] == f"dask at {address}"
    assert rows(tmp_path / "api") == local_rows
    # Each batch was folded by a worker, and both workers took a share.
    done = seen["done"]
    assert sum(done.values()) == batches_committed(tmp_path / "api") > 2
    assert all(count > 0 for count in done.values()), done

    command = [sys.executable, "-m", "streamfold", "fleet", "fold", *sources, "--out", str(tmp_path / "cli"),
               "--engine", "dask", "--scheduler", address, "--batch-size", str(BATCH)]
    finished = subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    assert finished.stderr == ""
    assert f"(dask at {address})" in finished.stdout
    assert rows(tmp_path / "cli") == local_rows


def test_a_dask_worker_that_fails_a_batch_ends_the_run_in_one_sentence(
        dask_cluster: tuple[str, list[subprocess.Popen[bytes]]]) -> None:
    message = in_child(dask_client.a_failing_batch, dask_cluster[0])
    assert re.match(r"^a Dask worker could not fold batch 7: MemoryError: the worker ran", message), message


def test_a_worker_killed_mid_run_costs_nothing_but_time(
        dask_cluster: tuple[str, list[subprocess.Popen[bytes]]]) -> None:
    """A third worker joins, is killed while it folds a batch, and the run goes on: distributed runs that batch
    again on the others, and every batch comes back folded exactly once, as the local engine folds it."""
    address, _ = dask_cluster
    doomed = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                               "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"], env=ENV,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    inputs = [fold_record_input(path) for path in sorted(CAPTURES.glob("*/*.sse"))[:48]]
    batches = [(number, inputs[number * 4:number * 4 + 4]) for number in range(12)]
    try:
        lost, folded = in_child(dask_client.fold_while_a_worker_dies, address, doomed.pid, batches)
    finally:
        doomed.kill()
        doomed.wait()
    assert lost
    assert sorted(folded) == list(range(len(batches)))
    for number, batch in batches:
        assert folded[number] == fold_batch(pa.Table.from_pylist(batch, schema=INPUT_SCHEMA)).to_pylist()


def test_a_scheduler_nobody_listens_on_is_one_line_at_once(tmp_path: Path) -> None:
    address = f"tcp://127.0.0.1:{free_port()}"
    started = time.monotonic()
    finished = subprocess.run([sys.executable, "-m", "streamfold", "fleet", "fold", str(CAPTURES / "openai"),
                               "--out", str(tmp_path / "fleet"), "--engine", "dask", "--scheduler", address],
                              env=ENV, capture_output=True, text=True, timeout=60)
    # distributed's own client retries for 30 s and ends in a traceback of chained errors.
    assert time.monotonic() - started < 20
    assert finished.returncode == 1
    assert finished.stdout == ""
    assert finished.stderr == f"Error: the Dask scheduler {address}: nothing listens there (Connection refused)\n"


def test_ray_folds_what_the_local_engine_folds_and_keeps_the_console_quiet(
        sources: list[str], local_rows: dict[str, list[tuple[Any, ...]]], tmp_path: Path) -> None:
    pytest.importorskip("ray")
    command = [sys.executable, "-m", "streamfold", "fleet", "fold", *sources, "--out", str(tmp_path / "fleet"),
               "--engine", "ray", "--batch-size", str(BATCH)]
    finished = subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    # Ray's token-auth notice, its progress bars' warning and each dataset's "execution finished" stay in its logs.
    assert finished.stderr == ""
    assert "(ray, a local runtime of" in finished.stdout
    assert finished.stdout.count("\n") == 1
    assert rows(tmp_path / "fleet") == local_rows
