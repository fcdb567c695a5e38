#!/usr/bin/env python3
"""Benchmark: `streamfold serve --speed max` beside `python -m http.server` (streamfold issue 25).

Both serve the same large OpenAI Chat SSE capture (bench_fold.py's `gen_text`, written to a
temporary directory) on 127.0.0.1, each as its own process, in the same run; a real HTTP client
(curl, into /dev/null, and httpx's iter_raw) reads it whole, --runs times each, round-robin. Each
cell is the median MB/s over the runs; the bytes read are checked against the file. On a shared
machine the wall clock is noisy: the last column is the server's own CPU time per byte served
(MB per CPU second of its process, over all its reads), which the load barely moves.

This is a benchmark, not a test: it prints a table and never fails on its target
(serve at least half of http.server's MB/s).

Run:  .venv/bin/python benchmarks/bench_replay.py [--frames 100k] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path[:0] = [str(HERE), str(SRC)]

from bench_fold import gen_text  # noqa: E402
from bench_fronts import frames_of  # noqa: E402
from bench_proxy import cpu_seconds, stop  # noqa: E402

SEED = 20_241_130


def start(command: list[str], cwd: Path, url_of: Callable[[str], str | None],
          src: Path = SRC) -> tuple[subprocess.Popen[bytes], str]:
    """Start a server with streamfold from `src`; (it, its URL, read from the first line of its output that
    `url_of` finds one in)."""
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    assert process.stdout is not None
    for line in process.stdout:
        url = url_of(line.decode(errors="replace").strip())
        if url is not None:
            threading.Thread(target=lambda: [None for _ in process.stdout or ()], daemon=True).start()
            return process, url
    raise SystemExit(f"{command[:4]} printed no URL (exit {process.wait()})")


def with_curl(url: str, size: int) -> float:
    """MB/s of one GET read by curl into /dev/null (curl's own clock, from the request to the last byte)."""
    done = subprocess.run(["curl", "-s", "-o", os.devnull, "-w", "%{size_download} %{time_total}", url],
                          capture_output=True, text=True, check=True)
    got, seconds = done.stdout.split()
    assert int(got) == size, (url, got, size)
    return size / 1e6 / float(seconds)


def with_httpx(url: str, data: bytes) -> float:
    """MB/s of one GET read with httpx's iter_raw; the bytes are checked after the clock stops."""
    import httpx

    chunks = []
    started = time.perf_counter()
    with httpx.stream("GET", url, timeout=120) as response:
        chunks.extend(response.iter_raw(1 << 20))
    seconds = time.perf_counter() - started
    assert b"".join(chunks) == data, url
    return len(data) / 1e6 / seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", default="100k", help="frames of the capture served (100k: about 35 MB)")
    parser.add_argument("--runs", type=int, default=5, help="reads per server and client, the median is shown")
    parser.add_argument("--before", type=Path, default=None, metavar="SRC",
                        help="also serve with the streamfold of another checkout's src (its base commit, say)")
    args = parser.parse_args(argv)
    directory = Path(tempfile.mkdtemp(prefix="streamfold-bench-replay-"))
    try:
        path = directory / "capture.sse"
        data = gen_text(frames_of(args.frames), SEED)[0]
        path.write_bytes(data)
        serve = [sys.executable, "-m", "streamfold", "serve", path.name, "--speed", "max"]

        def serve_url(line: str) -> str | None:
            return f"{line}/v1/chat/completions" if line.startswith("http://") else None

        servers = {  # (the process, the URL of the capture on it)
            "streamfold serve --speed max": start(serve, directory, serve_url),
            **({} if args.before is None else {"the same, before": start(serve, directory, serve_url,
                                                                          args.before.resolve())}),
            "python -m http.server": start(
                [sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1"], directory,
                lambda line: f"http://127.0.0.1:{line.split('port ')[1].split(' ')[0]}/{path.name}"
                if "port " in line else None),
        }
        urls = {name: url for name, (_, url) in servers.items()}
        rates: dict[tuple[str, str], list[float]] = {}
        served = dict.fromkeys(urls, 0.0)  # the server's CPU seconds over its reads
        try:
            for _ in range(args.runs):
                for name, url in urls.items():
                    busy = cpu_seconds(servers[name][0].pid)
                    if shutil.which("curl"):
                        rates.setdefault((name, "curl"), []).append(with_curl(url, len(data)))
                    rates.setdefault((name, "httpx iter_raw"), []).append(with_httpx(url, data))
                    served[name] += cpu_seconds(servers[name][0].pid) - busy
        finally:
            for process, _ in servers.values():
                stop(process)
        print(f"{args.frames} frames, {len(data) / 1e6:.0f} MB; median of {args.runs} runs; python "
              f"{sys.version.split()[0]}; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the end")
        clients = list(dict.fromkeys(client for _, client in rates))
        for name in urls:
            reads = sum(len(rates[name, client]) for client in clients)
            rates[name, "server CPU"] = [reads * len(data) / 1e6 / max(served[name], 0.01)]
        clients.append("server CPU")
        rows = [("", *clients[:-1], "MB per server CPU s")]
        for name in urls:
            rows.append((name, *(f"{statistics.median(rates[name, client]):.0f} MB/s" for client in clients)))
        rows.append(("serve / http.server", *(
            f"{statistics.median(rates[next(iter(urls)), client]) / statistics.median(rates[list(urls)[-1], client]):.2f}"
            for client in clients)))
        widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
        for row in rows:
            print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
