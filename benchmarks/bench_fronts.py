#!/usr/bin/env python3
"""Benchmark: the fronts on big captures (streamfold issue 11).

Times, on OpenAI Chat SSE captures from bench_fold.py's `gen_text` (written to
a temporary directory, never into the repository):

  frames: first row / whole      `streamfold frames FILE` as a subprocess: seconds to its first
                                 byte of output, and to its end (the table; then --jsonl)
  show: default / --full         `streamfold show FILE` (long texts clipped) and `show --full`
  page: fold / first range       a real server: POST /api/fold?frames=range until the view
                                 line, then GET /api/frames for the first 2000 rows; beside
                                 it, POST /api/fold with every row (what the page used to ask)

side by side with what a person would use instead where there is one:
`grep -c '^data:'` to count frames, `jq -c .` over the same stream as NDJSON,
`jq -j` to join the reply. Each cell is the best of --runs runs (the machine may
be shared). "startup" is the first row of `frames` on a 3-frame capture: Python
and the imports, which every command's first row includes.

This is a benchmark, not a test: it prints a table and never fails.

Run:  .venv/bin/python benchmarks/bench_fronts.py [--sizes 10k,100k] [--show-size 100k] [--runs 3]
      (the defaults take about a minute on 2 cores; --show-size 1500k is a 500 MB capture)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path[:0] = [str(HERE), str(SRC)]

from bench_fold import gen_text  # noqa: E402

SEED = 20_241_130
RANGE = 2000


def frames_of(label: str) -> int:
    return int(float(label[:-1]) * {"k": 1_000, "m": 1_000_000}[label[-1]]) if label[-1] in "km" else int(label)


def streamfold(*args: str) -> list[str]:
    return [sys.executable, "-m", "streamfold", *args]


def run(command: list[str], stdin: Path | None = None) -> tuple[float, float]:
    """(seconds to the first byte of output, seconds to the end) of one run of `command`."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "NO_COLOR": "1", "COLUMNS": "120"}
    started = time.perf_counter()
    with open(stdin or os.devnull, "rb") as given:
        process = subprocess.Popen(command, stdin=given, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        assert process.stdout is not None
        process.stdout.read(1)
        first = time.perf_counter() - started
        while process.stdout.read(1 << 20):
            pass
        process.wait()
    return first, time.perf_counter() - started


def best(runs: int, measure: Callable[[], tuple[float, float]]) -> tuple[float, float]:
    results = [measure() for _ in range(runs)]
    return min(r[0] for r in results), min(r[1] for r in results)


def as_ndjson(sse: Path, out: Path) -> None:
    """The same stream as NDJSON (the data lines, `[DONE]` left out): what `jq` reads."""
    with sse.open("rb") as source, out.open("wb") as target:
        for line in source:
            if line.startswith(b"data: {"):
                target.write(line[6:])


def page_times(path: Path, runs: int) -> dict[str, float]:
    import httpx

    from streamfold.web.app import create_app
    from streamfold.web.server import start_in_thread

    data = path.read_bytes()
    times: dict[str, list[float]] = {"fold": [], "range": [], "whole": [], "whole_mb": []}
    with start_in_thread(create_app(max_size=len(data) + 1024)) as server, httpx.Client(timeout=600) as client:
        for _ in range(runs):
            started = time.perf_counter()
            view = None
            with client.stream("POST", f"{server.url}api/fold?frames=range", content=data) as response:
                for line in response.iter_lines():
                    if line.startswith('{"view":'):
                        view = json.loads(line)["view"]
            times["fold"].append(time.perf_counter() - started)
            assert view is not None
            started = time.perf_counter()
            rows = client.get(f"{server.url}api/frames", params={"fold": view["fold_id"], "start": 0, "count": RANGE})
            rows.json()
            times["range"].append(time.perf_counter() - started)
        started = time.perf_counter()
        whole = client.post(f"{server.url}api/fold", content=data)
        whole.json()
        times["whole"].append(time.perf_counter() - started)
        times["whole_mb"].append(len(whole.content) / 1e6)
    return {key: min(values) for key, values in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10k,100k", help="frames of the captures for frames and the page")
    parser.add_argument("--show-size", default="100k", help="frames of the capture for show (1500k: ~500 MB)")
    parser.add_argument("--runs", type=int, default=3, help="runs per cell, the best is shown")
    parser.add_argument("--dir", default=None, help="where the captures go (default: a temporary directory)")
    args = parser.parse_args(argv)
    directory = Path(args.dir or tempfile.mkdtemp(prefix="streamfold-bench-fronts-"))
    directory.mkdir(parents=True, exist_ok=True)
    jq = shutil.which("jq")
    grep = shutil.which("grep")
    captures: dict[str, Path] = {}
    for label in dict.fromkeys([*args.sizes.split(","), args.show_size]):
        path = directory / f"text-{label}.sse"
        if not path.exists():
            data, _ = gen_text(frames_of(label), SEED)
            path.write_bytes(data)
        captures[label] = path
        if jq:
            as_ndjson(path, path.with_suffix(".ndjson"))
    rows: list[tuple[str, str, str]] = []
    tiny = directory / "tiny.sse"
    tiny.write_bytes(gen_text(3, SEED)[0])
    startup = best(args.runs, lambda: run(streamfold("frames", str(tiny))))[0]
    rows.append(("startup (frames of a 3-frame capture: first row)", f"{startup:.2f} s", ""))

    def sized(label: str) -> str:
        return f"{label} frames, {captures[label].stat().st_size / 1e6:.0f} MB"

    for label in args.sizes.split(","):
        path = captures[label]
        first, whole = best(args.runs, lambda path=path: run(streamfold("frames", str(path))))
        count = best(args.runs, lambda path=path: run([grep, "-c", "^data:", str(path)]))[1] if grep else None
        rows.append((f"frames, {sized(label)}: first row / whole", f"{first:.2f} s / {whole:.2f} s",
                     f"grep -c '^data:' {count:.2f} s" if count is not None else ""))
        first, whole = best(args.runs, lambda path=path: run(streamfold("frames", "--jsonl", str(path))))
        instead = ""
        if jq:
            seconds = best(args.runs, lambda path=path: run([jq, "-c", "."], stdin=path.with_suffix(".ndjson")))[1]
            instead = f"jq -c . < ndjson {seconds:.2f} s"
        rows.append((f"frames --jsonl, {sized(label)}: first row / whole", f"{first:.2f} s / {whole:.2f} s", instead))
    path = captures[args.show_size]
    clipped = best(args.runs, lambda: run(streamfold("show", str(path))))[1]
    full = best(1, lambda: run(streamfold("show", "--full", str(path))))[1]
    as_json = best(args.runs, lambda: run(streamfold("show", "--json", str(path))))[1]
    instead = ""
    if jq:
        seconds = best(args.runs, lambda: run([jq, "-j", ".choices[0].delta.content // empty"],
                                              stdin=path.with_suffix(".ndjson")))[1]
        instead = f"jq -j .choices[0].delta.content {seconds:.2f} s"
    rows.append((f"show, {sized(args.show_size)}: default / --full (1 run)", f"{clipped:.2f} s / {full:.2f} s",
                 instead))
    rows.append((f"show --json, {sized(args.show_size)}", f"{as_json:.2f} s", ""))
    for label in args.sizes.split(","):
        times = page_times(captures[label], args.runs)
        rows.append((f"page API, {sized(label)}: fold / first {RANGE} rows",
                     f"{times['fold']:.2f} s / {times['range']:.2f} s",
                     f"every row at once (before): {times['whole']:.2f} s, {times['whole_mb']:.0f} MB"))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    header = ("", "streamfold", "instead")
    print(f"best of {args.runs} runs each; captures in {directory}")
    print("  ".join(text.ljust(width) for text, width in zip(header, widths)).rstrip())
    for row in rows:
        print("  ".join(text.ljust(width) for text, width in zip(row, widths)).rstrip())
    if not args.dir:
        shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
