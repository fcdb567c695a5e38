#!/usr/bin/env python3
"""Benchmark: `streamfold fleet fold` beside a bare loop of the fold over the same captures, in one run.

For each size (10k and 100k by default) it generates captures of mixed dialects (the small captures of
tests/captures: OpenAI chat and Responses, Anthropic, Gemini, Bedrock's binary event stream), 1% of them
broken (bad bytes spliced in, the stream cut in half, a tool call's arguments made invalid JSON), written as
one file each and as one JSONL of records, and measures:

- `bare`: `fold_capture(read_capture(data))` over the files' bytes (read beforehand), in this process:
  the fold alone;
- `fleet fold --jobs 1` over the files and over the JSONL, in this process (and with batches four times the
  default): the fold plus the fleet's own work (listing, reading, `tables()`, Arrow, Parquet, the ledger).
  Its overhead is the goal (< 15%), each row's against a bare loop run just before it (a load that changes
  over minutes would skew a comparison with the first one). A JSONL record's body skips `read_capture`'s
  telling of the input's format, which the bare loop pays (about a fifth of it);
- `--jobs 2` (the process pool), and the peak RSS of its worker processes (flat from 10k to 100k?);
- Dask (a local cluster of 2 worker processes) and Ray (a local runtime of 2 CPUs), start-up apart;
- the report's queries (DuckDB over the fleet, through `fleet.query.open_fleet`; `fleet.report` too when it
  exists), and the Parquet bytes per capture.

It ends with an extrapolation to 2M captures on 32 cores and what was not measured. A benchmark, not a
test: it prints tables and never fails. Progress goes to stderr, the tables to stdout.

Run:  .venv/bin/python benchmarks/bench_fleet.py [--sizes 10000,100000] [--engines dask,ray] [--profile]
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import cProfile
import importlib.util
import json
import os
import pstats
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from streamfold.fleet import batch
from streamfold.fleet.engines import Engine, LocalEngine
from streamfold.fleet.query import open_fleet
from streamfold.fleet.run import BATCH_SIZE, fold_fleet
from streamfold.services.capture import InputError
from streamfold.services.inputs import read_capture
from streamfold.services.load import fold_capture

CAPTURES = Path(__file__).resolve().parents[1] / "tests" / "captures"
#: A batch size beside the default, to show what a batch's fixed costs (a Parquet file per table and
#: partition, a ledger line) weigh.
BIG_BATCH = 4 * BATCH_SIZE
DIALECTS = ("openai", "openai-responses", "anthropic", "gemini", "bedrock")
#: The report's questions, as the `fleet report` command asks them (GROUP BY over the captures and a child).
QUERIES = {
    "outcomes by dialect, model, host": "SELECT dialect, model, host, outcome_class, count(*) FROM captures "
                                        "GROUP BY ALL ORDER BY 5 DESC",
    "tool-argument failures by model": "SELECT c.model, count(*) AS calls, count(t.error) AS invalid FROM tool_calls t "
                                       "JOIN captures c USING (capture_id) GROUP BY ALL ORDER BY invalid DESC",
    "truncation, missing usage by provider": "SELECT c.dialect, avg((NOT c.complete)::INT) AS cut, "
                                             "avg((u.capture_id IS NULL)::INT) AS no_usage FROM captures c "
                                             "LEFT JOIN usage u USING (capture_id) GROUP BY ALL",
    "ttfb, ttft p50/p95 by model": "SELECT model, quantile_cont(ttfb, 0.5), quantile_cont(ttfb, 0.95), "
                                   "quantile_cont(ttft, 0.5), quantile_cont(ttft, 0.95) FROM captures GROUP BY ALL",
    "top finding codes, an example each": "SELECT code, count(*), any_value(capture_id) FROM findings "
                                          "GROUP BY ALL ORDER BY 2 DESC LIMIT 20",
}


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# -- the captures ---------------------------------------------------------------------------------------------

def bases() -> list[tuple[str, bytes]]:
    """The small captures of the dialects (name, bytes): what the generated fleet cycles through."""
    found = []
    for dialect in DIALECTS:
        for path in sorted((CAPTURES / dialect).iterdir()):
            if path.suffix in (".sse", ".bin") and path.stat().st_size <= 16_384:
                found.append((f"{dialect}-{path.name}", path.read_bytes()))
    return found


def broken(index: int, data: bytes) -> bytes:
    """One of three breakages, in turn: bad bytes spliced in, the stream cut in half, invalid tool arguments."""
    kind = index // 100 % 3
    if kind == 0:
        middle = len(data) // 2
        return data[:middle] + b"\xff\xfe\x00\x9c not a frame \x00" + data[middle:]
    if kind == 1:
        return data[: len(data) // 2]
    return data.replace(b'"arguments":"{', b'"arguments":"{{', 1).replace(b'"partial_json":"{', b'"partial_json":"{{', 1)


def generate(count: int, where: Path) -> tuple[Path, Path, int]:
    """`count` captures as files under `where/files/` and as `where/records.jsonl`; the bytes written."""
    base = bases()
    files = where / "files"
    total = 0
    with open(where / "records.jsonl", "w", encoding="utf-8") as records:
        for index in range(count):
            name, data = base[index % len(base)]
            if index % 100 == 99:
                data = broken(index, data)
            folder = files / f"{index // 1000:04d}"
            if index % 1000 == 0:
                folder.mkdir(parents=True)
            (folder / f"{index:07d}-{name}").write_bytes(data)
            try:
                body: dict[str, str] = {"body": data.decode()}
            except UnicodeDecodeError:
                body = {"body_base64": base64.b64encode(data).decode()}
            records.write(json.dumps({"id": f"c{index}", **body}) + "\n")
            total += len(data)
    return files, where / "records.jsonl", total


# -- measuring --------------------------------------------------------------------------------------------------

class Workers:
    """The processes under this one (a pool's workers, a Dask cluster's, a Ray runtime's), sampled every 50 ms
    while open: the largest RSS any of them reached, and the CPU time they spent meanwhile (from the first
    sample of each, so an engine's start-up before `with` is not counted)."""

    def __init__(self) -> None:
        self.peak = 0
        self._first: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    @property
    def cpu(self) -> float:
        return sum(self._last[pid] - self._first[pid] for pid in self._last)

    def _sample(self) -> None:
        me = psutil.Process()
        while True:
            for child in me.children(recursive=True):
                with contextlib.suppress(psutil.Error):  # it ended between the listing and the look
                    times = child.cpu_times()
                    self._first.setdefault(child.pid, times.user + times.system)
                    self._last[child.pid] = times.user + times.system
                    self.peak = max(self.peak, child.memory_info().rss)
            if self._stop.wait(0.05):
                return

    def __enter__(self) -> Workers:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


class Clocks:
    """Wall time and this process's CPU time over a `with` block. On a shared machine the CPU time is the
    fairer measure of an in-process run: other processes' load stretches the wall clock, not it."""

    wall = cpu = 0.0

    def __enter__(self) -> Clocks:
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *_: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self._wall, time.process_time() - self._cpu


def bare_loop(files: Path) -> tuple[Clocks, int]:
    """The fold alone: the captures' bytes read into memory first, then folded one after the other."""
    bodies = [path.read_bytes() for path in sorted(files.rglob("*")) if path.is_file()]
    with Clocks() as clocks:
        for data in bodies:
            with contextlib.suppress(InputError):  # as the fleet does, it costs its row, not the run
                fold_capture(read_capture(data))
    return clocks, len(bodies)


def fleet_fold(source: Path, out: Path, engine: Engine, batch_size: int = BATCH_SIZE) -> tuple[Clocks, int]:
    shutil.rmtree(out, ignore_errors=True)
    batch.freeze_what_lives_on = True  # as in the `fleet fold` command, which this process stands for
    try:
        with Clocks() as clocks:
            run = fold_fleet([str(source)], str(out), engine=engine, batch_size=batch_size)
    finally:
        engine.close()
    return clocks, run.captures


def started_engine(make: Callable[[], Engine]) -> tuple[Engine, float]:
    started = time.perf_counter()
    engine = make()
    return engine, time.perf_counter() - started


def parquet_bytes(out: Path) -> int:
    return sum(path.stat().st_size for path in out.rglob("*.parquet"))


def report_seconds(out: Path) -> tuple[Clocks, Clocks | None]:
    with Clocks() as queries, open_fleet(out) as db:
        for sql in QUERIES.values():
            db.execute(sql).fetchall()
    if importlib.util.find_spec("streamfold.fleet.report") is None:
        return queries, None
    import io
    from contextlib import redirect_stdout

    from click.testing import CliRunner

    from streamfold.fleet.command import fleet

    with Clocks() as report, redirect_stdout(io.StringIO()):
        CliRunner().invoke(fleet, ["report", str(out)])
    return queries, report


def profile_fleet(files: Path, out: Path) -> None:
    """Where `fleet fold --jobs 1` spends its time, by the functions that add the most of their own."""
    shutil.rmtree(out, ignore_errors=True)
    profiler = cProfile.Profile()
    profiler.enable()
    fold_fleet([str(files)], str(out), engine=LocalEngine(1))
    profiler.disable()
    stats = pstats.Stats(profiler)
    print("\nprofile of fleet fold --jobs 1 (cumulative seconds of the fleet's stages):")
    wanted = {"fold_capture": "the fold (services.load.fold_capture)", "read_capture": "reading (read_capture)",
              "tables": "tables()", "nest": "Arrow: nest", "split": "Arrow: split",
              "write_table": "Parquet: write_table", "commit": "FleetDir.commit (Parquet + ledger)",
              "records_of": "the inputs' records (sources)", "expand": "listing the inputs (expand)",
              "_table": "input batches (Table.from_pylist)", "to_pylist": "batch.to_pylist",
              "finish_inputs": "ledger: finished inputs", "fold_fleet": "all of fold_fleet"}
    seen: dict[str, float] = {}
    for (filename, _, function), row in stats.stats.items():  # type: ignore[attr-defined]
        if function in wanted and ("streamfold" in filename or "pyarrow" in filename):
            seen[wanted[function]] = max(seen.get(wanted[function], 0.0), row[3])
    for name, seconds in sorted(seen.items(), key=lambda item: -item[1]):
        print(f"  {name:44} {seconds:8.2f} s")


# -- the run ----------------------------------------------------------------------------------------------------

def rows_for(count: int, where: Path, engines: list[str], profile: bool) -> Iterator[dict[str, Any]]:
    say(f"{count:,}: generating")
    files, jsonl, written = generate(count, where)
    say(f"{count:,}: {written / count:,.0f} bytes a capture; a first fleet run in this process, then the bare loop")
    warm = where / "warm"
    warm.mkdir()
    for path in sorted(next(files.iterdir()).iterdir())[:20]:
        shutil.copy(path, warm)
    clocks, captures = fleet_fold(warm, where / "fleet-warm", LocalEngine(1))
    # What a process pays once, whatever the fleet's size: importing what a run uses (pyarrow's first array
    # imports pandas when it is installed), the directory and manifest. Paid here, it is not in the rows below.
    yield {"run": "fleet fold --jobs 1, first run (20 files)", "captures": captures, "clocks": clocks, "cores": 1}
    shutil.rmtree(where / "fleet-warm")
    bare, folded = bare_loop(files)
    yield {"run": "bare loop fold_capture(read_capture)", "captures": folded, "clocks": bare, "cores": 1}
    say(f"{count:,}: fleet fold --jobs 1 (files)")
    clocks, captures = fleet_fold(files, where / "fleet-1", LocalEngine(1))
    out = where / "fleet-1"
    yield {"run": "fleet fold --jobs 1, files", "captures": captures, "clocks": clocks, "cores": 1,
           "overhead": clocks.cpu / bare.cpu - 1, "parquet": parquet_bytes(out) / captures}
    say(f"{count:,}: fleet fold --jobs 1 (JSONL), the bare loop again just before it")
    bare = bare_loop(files)[0]
    clocks, captures = fleet_fold(jsonl, where / "fleet-jsonl", LocalEngine(1))
    yield {"run": "fleet fold --jobs 1, one JSONL", "captures": captures, "clocks": clocks, "cores": 1,
           "overhead": clocks.cpu / bare.cpu - 1}
    shutil.rmtree(where / "fleet-jsonl")
    say(f"{count:,}: fleet fold --jobs 1 --batch-size {BIG_BATCH} (files), the bare loop again just before it")
    bare = bare_loop(files)[0]
    clocks, captures = fleet_fold(files, where / "fleet-big", LocalEngine(1), batch_size=BIG_BATCH)
    yield {"run": f"fleet fold --jobs 1 --batch-size {BIG_BATCH}, files", "captures": captures, "clocks": clocks,
           "cores": 1, "overhead": clocks.cpu / bare.cpu - 1, "parquet": parquet_bytes(where / "fleet-big") / captures}
    shutil.rmtree(where / "fleet-big")
    say(f"{count:,}: fleet fold --jobs 2")
    engine = LocalEngine(2)
    with Workers() as workers:
        clocks, captures = fleet_fold(files, where / "fleet-2", engine)
    yield {"run": "fleet fold --jobs 2, files", "captures": captures, "clocks": clocks, "cores": 2,
           "workers": workers.cpu, "rss": workers.peak}
    shutil.rmtree(where / "fleet-2")
    for name in engines:
        say(f"{count:,}: {name}")
        make = _engine_maker(name)
        if make is None:
            yield {"run": f"{name}: not installed", "captures": 0, "clocks": Clocks(), "cores": 2}
            continue
        engine, start_up = started_engine(make)
        with Workers() as workers:
            clocks, captures = fleet_fold(files, where / f"fleet-{name}", engine)
        yield {"run": f"{name}, 2 workers, files", "captures": captures, "clocks": clocks, "cores": 2,
               "start": start_up, "workers": workers.cpu, "rss": workers.peak}
        shutil.rmtree(where / f"fleet-{name}")
    say(f"{count:,}: the report's queries")
    queries, report = report_seconds(out)
    yield {"run": f"report: {len(QUERIES)} queries over the fleet", "captures": captures, "clocks": queries,
           "cores": 1}
    if report is not None:
        yield {"run": "streamfold fleet report", "captures": captures, "clocks": report, "cores": 1}
    if profile:
        profile_fleet(files, where / "fleet-profile")
    shutil.rmtree(files)


def _engine_maker(name: str) -> Callable[[], Engine] | None:
    if name == "dask" and importlib.util.find_spec("distributed"):
        from streamfold.fleet.dask_engine import DaskEngine

        return lambda: DaskEngine(workers=2)
    if name == "ray" and importlib.util.find_spec("ray"):
        from streamfold.fleet.ray_engine import RayEngine

        return lambda: RayEngine(cpus=2)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="how many captures (comma-separated)")
    parser.add_argument("--engines", default="dask,ray", help="distributed engines to run beside the local one")
    parser.add_argument("--profile", action="store_true", help="profile fleet fold --jobs 1 at each size")
    options = parser.parse_args()
    engines = [name for name in options.engines.split(",") if name]
    print(f"{'size':>8} {'run':42} {'captures':>9} {'wall s':>7} {'cpu s':>7} {'workers':>7} {'captures/cpu s':>14} "
          f"{'overhead':>8} {'start s':>7} {'RSS/worker':>10} {'Parquet B/capture':>17}")
    results: dict[int, list[dict[str, Any]]] = {}
    for count in (int(value) for value in options.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="bench-fleet-") as where:
            results[count] = []
            for row in rows_for(count, Path(where), engines, options.profile):
                results[count].append(row)
                print(f"{count:>8,} {row['run']:42} {row['captures']:>9,} {row['clocks'].wall:>7.2f} "
                      f"{row['clocks'].cpu:>7.2f} {_cell(row, 'workers', '{:.2f}'):>7} {per_core(row):>14,.0f} "
                      f"{_cell(row, 'overhead', '{:+.1%}'):>8} "
                      f"{_cell(row, 'start', '{:.1f}'):>7} "
                      f"{_cell(row, 'rss', lambda value: f'{value / 2**20:,.0f} MB'):>10} "
                      f"{_cell(row, 'parquet', '{:,.0f}'):>17}", flush=True)
    extrapolate(results)


def per_core(row: dict[str, Any]) -> float:
    """Captures a second of CPU: this process's CPU time for a run in it, its and its workers' for a pool's (on
    a shared machine, the wall clock says more about the neighbours than about the run)."""
    seconds = row["clocks"].cpu + row.get("workers", 0.0)
    return row["captures"] / seconds if seconds else 0.0


def _cell(row: dict[str, Any], key: str, shape: str | Callable[[Any], str]) -> str:
    if key not in row:
        return ""
    return shape(row[key]) if callable(shape) else shape.format(row[key])


def extrapolate(results: dict[int, list[dict[str, Any]]]) -> None:
    largest, smallest = max(results), min(results)
    rows = {row["run"]: row for row in results[largest]}
    one, two = rows["fleet fold --jobs 1, files"], rows["fleet fold --jobs 2, files"]
    # A pool's cost against the in-process run's, in CPU a capture (its driver's and workers'): what 32 cores
    # lose to the pool's shipping of batches, on a machine whose wall clock is shared.
    scaling = per_core(two) / per_core(one)
    minutes = 2_000_000 / (per_core(one) * 32 * min(1.0, scaling)) / 60
    # The driver alone reads the inputs and writes the Parquet: its CPU time a capture in the pool's run bounds
    # how fast any number of workers can go.
    driver = two["captures"] / two["clocks"].cpu
    parquet = one["parquet"] * 2_000_000
    report = f"report: {len(QUERIES)} queries over the fleet"
    # The queries' cost past a fixed part (opening the views): their growth between the sizes, per capture.
    small = next(row["clocks"].wall for row in results[smallest] if row["run"] == report)
    large = rows[report]["clocks"].wall
    # One size gives no growth to extrapolate from: the queries' time is then said for that size alone.
    per_capture = (large - small) / (largest - smallest) if largest > smallest else 0.0
    queries = large + max(0.0, per_capture) * (2_000_000 - largest)
    said = (f"report's queries, growing as they did from {smallest:,} to {largest:,}, take about {queries:,.1f} s."
            if largest > smallest else f"report's queries took {large:.1f} s on {largest:,} (one size: not "
            "extrapolated).")
    print(f"\n2M captures on 32 cores, from the {largest:,} run: {per_core(one):,.0f} captures/s a core "
          f"(fleet fold --jobs 1, CPU time); the pool of 2 spent {1 / scaling:.2f}x its CPU a capture, so 32 "
          f"processes at that cost fold 2M in about {minutes:,.1f} min, into about {parquet / 2**30:,.2f} GB of "
          f"Parquet; the {said} "
          f"But the driver, reading and writing for the pool, used {two['clocks'].cpu:.1f} CPU s for "
          f"{two['captures']:,} captures: one driver feeds at most about {driver:,.0f} captures/s, 2M in "
          f"{2_000_000 / driver / 60:,.1f} min, whatever the workers; past that, several runs over parts of the "
          f"inputs (one fleet directory each) or Dask/Ray with the reading moved to the workers.")
    print("Not measured: 32 real cores (memory bandwidth; the driver is the one reader and Parquet writer, see "
          "its cpu s beside a pool's wall s), captures larger than these few KB (the fold does ~600/s on 40 KB "
          "ones), object stores (s3://) and their latency, Dask or Ray across machines (network, 64 MB batches "
          "serialised), and the ledger of a 2M-capture fleet (read once a run).")


if __name__ == "__main__":
    main()
