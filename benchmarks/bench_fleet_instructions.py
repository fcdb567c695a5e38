#!/usr/bin/env python3
"""Benchmark: the fleet's overhead over a bare loop of the fold, in instructions a capture (cachegrind).

`bench_fleet.py` measures CPU seconds; on a shared machine they move by ±20% from one run to the next,
more than the overhead being measured. Instructions do not: each run below is counted by valgrind's
cachegrind, and a capture's cost is the difference between two sizes (1,000 and 3,000 by default), so what
a run pays once (imports, the fleet directory, pyarrow's first array importing pandas) cancels out:

- `bare`: `fold_capture(read_capture(data))` over the files' bytes, read before the count starts to matter
  (the same bytes read in a run that folds nothing are subtracted);
- `files`: `fold_fleet` over a directory of one file a capture, `--jobs 1`, in the process: listing,
  reading, the fold, `tables()`, Arrow, Parquet, the ledger;
- `jsonl`: the same over one JSONL file of capture records.

Each run takes a minute or two under valgrind; two run at once. Needs `valgrind` on PATH.

Run:  .venv/bin/python benchmarks/bench_fleet_instructions.py [--sizes 1000,3000]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))

MODES = ("bare", "files", "jsonl")


def child(where: Path, mode: str, fold: bool) -> None:
    """One counted run: the imports every mode makes, then (when `fold`) the mode's work."""
    from bench_fleet import fold_capture, read_capture
    from streamfold.fleet import batch
    from streamfold.fleet.engines import LocalEngine
    from streamfold.fleet.run import fold_fleet
    from streamfold.services.capture import InputError

    if mode == "bare":
        bodies = [path.read_bytes() for path in sorted((where / "files").rglob("*")) if path.is_file()]
        for data in bodies if fold else ():
            with contextlib.suppress(InputError):
                fold_capture(read_capture(data))
        return
    out = where / f"out-{mode}"
    shutil.rmtree(out, ignore_errors=True)
    batch.freeze_what_lives_on = True  # as the `fleet fold` command does
    if fold:
        fold_fleet([str(where / ("files" if mode == "files" else "records.jsonl"))], str(out), engine=LocalEngine(1))


def counted(where: Path, mode: str, fold: bool) -> int:
    with tempfile.NamedTemporaryFile(prefix="cachegrind-") as out:
        done = subprocess.run(
            ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out.name}",
             sys.executable, __file__, "--child", str(where), mode, "fold" if fold else "imports"],
            capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise SystemExit(f"cachegrind said no count:\n{done.stderr[-2000:]}")
    return int(found[1].replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,3000", help="two fleet sizes (comma-separated)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(Path(options.child[0]), options.child[1], options.child[2] == "fold")
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    from bench_fleet import generate

    small, large = (int(value) for value in options.sizes.split(","))
    with tempfile.TemporaryDirectory(prefix="bench-fleet-instructions-") as root:
        places = {}
        for size in (small, large):
            places[size] = Path(root) / str(size)
            places[size].mkdir()
            generate(size, places[size])
        runs = [(size, mode, fold) for size in (small, large) for mode in MODES for fold in (False, True)
                if fold or mode != "jsonl"]  # files' and jsonl's runs that fold nothing are the same run
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            counts = dict(zip(runs, pool.map(lambda run: counted(places[run[0]], run[1], run[2]), runs)))
    print(f"instructions a capture, the difference between {small:,} and {large:,} captures "
          "(cachegrind, PYTHONHASHSEED=0)")
    print(f"{'run':8} {'k instructions':>15} {'over bare':>10}")
    per: dict[str, float] = {}
    for mode in MODES:
        imports = "files" if mode == "jsonl" else mode
        worked = [counts[size, mode, True] - counts[size, imports, False] for size in (small, large)]
        per[mode] = (worked[1] - worked[0]) / (large - small)
        over = "" if mode == "bare" else f"{per[mode] / per['bare'] - 1:+.1%}"
        print(f"{mode:8} {per[mode] / 1000:>15,.1f} {over:>10}", flush=True)


if __name__ == "__main__":
    main()
