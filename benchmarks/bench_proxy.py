#!/usr/bin/env python3
"""Benchmark: the recording proxy (`streamfold record`, issue 12) on loopback.

Three processes, as in real use: an upstream (a raw ASGI app under uvicorn,
this script run with --upstream), the proxy (`python -m streamfold record
--target UPSTREAM --port 0 --db TMP` from this checkout's src), and the
clients (httpx, here). Each section runs the same client straight against the
upstream and then through the proxy:

  latency       a stream of frames written every --every seconds (5 ms), each
                carrying the upstream's CLOCK_MONOTONIC at the write (the clock is
                the machine's, shared by the processes); per read, its arrival
                minus that time. Median and p99, direct and through the proxy,
                and the difference: what the proxy adds per read (targets: median
                <= 1 ms, p99 <= 5 ms)
  throughput    one stream of --bulk-mb MB of SSE frames written as fast as the
                upstream can, read with iter_raw; MB/s (target through the proxy:
                >= 50 MB/s)
  while folding the throughput stream, then the latency stream, again right after a bulk
                stream ended, while the proxy's store folds its summary
  concurrency   --streams streams of --frames frames at once (asyncio, one
                AsyncClient), each frame its own write: every byte at every
                client and in the store, in order, identical to what the upstream
                generated; the time, and whether all matched

This is a benchmark, not a test: it prints a table and never fails on its
targets (tests/fronts/test_proxy_concurrency.py asserts the concurrency check
at a small size).

--before SRC runs the latency and throughput sections through a second proxy started from
another checkout's src (a worktree of the base commit), in the same run.

Run:  .venv/bin/python benchmarks/bench_proxy.py                     # ~1-2 min on 2 cores
      .venv/bin/python benchmarks/bench_proxy.py --bulk-mb 20 --streams 10 --frames 1000 --ticks 200
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path[:0] = [str(SRC)]

#: One SSE frame of the throughput stream: an ordinary chat.completion.chunk, ~190 bytes.
BULK_FRAME = (b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o",'
              b'"choices":[{"index":0,"delta":{"content":" word"},"finish_reason":null}]}\n\n')


def frame(stream: int, index: int) -> bytes:
    """Frame `index` of concurrency stream `stream`: the upstream writes it, the checker expects it."""
    return (b'data: {"choices":[{"index":0,"delta":{"content":"s%d f%d %s"}}]}\n\n'
            % (stream, index, b"abcdefghij"[: index % 10]))


def expected(stream: int, frames: int) -> bytes:
    return b"".join(frame(stream, index) for index in range(frames)) + b"data: [DONE]\n\n"


# -- the upstream (its own process) ------------------------------------------------------


async def upstream(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
    """/ticks?n=&every= (timestamped frames on a schedule), /bulk?mb= (as fast as it can), /frames?stream=&n=."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    query = {name: values[0] for name, values in parse_qs(scope["query_string"].decode()).items()}
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})

    async def body(data: bytes, more: bool = True) -> None:
        await send({"type": "http.response.body", "body": data, "more_body": more})

    if scope["path"] == "/ticks":
        every, begun = float(query["every"]), time.monotonic()
        for index in range(int(query["n"])):
            wait = begun + index * every - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            await body(b'data: {"seq":%d,"t":%d}\n\n' % (index, time.monotonic_ns()))
    elif scope["path"] == "/bulk":
        block = BULK_FRAME * (65536 // len(BULK_FRAME))
        for _ in range(int(float(query["mb"]) * 1e6) // len(block)):
            await body(block)
    elif scope["path"] == "/frames":
        stream = int(query["stream"])
        for index in range(int(query["n"])):
            await body(frame(stream, index))
            if index % 64 == 0:
                await asyncio.sleep(0)  # let the other streams write too
    await body(b"data: [DONE]\n\n", more=False)


def serve_upstream() -> None:
    import uvicorn

    from streamfold.fronts.serving import bind

    sock = bind("127.0.0.1", 0)
    print(f"http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    uvicorn.Server(uvicorn.Config(upstream, log_level="warning", lifespan="off", ws="none", http="h11",
                                  access_log=False)).run(sockets=[sock])


# -- the clients ----------------------------------------------------------------------------


def latencies(base: str, ticks: int, every: float) -> list[float]:
    """Seconds from each frame's write at the upstream to the end of the read that brought it."""
    import httpx

    delays: list[float] = []
    with httpx.stream("GET", f"{base}/ticks?n={ticks}&every={every}", timeout=60) as response:
        for chunk in response.iter_raw():
            arrived = time.monotonic_ns()
            delays.extend((arrived - int(sent)) / 1e9 for sent in re.findall(rb'"t":(\d+)', chunk))
    assert len(delays) == ticks, (len(delays), ticks)
    return delays


def throughput(base: str, megabytes: float) -> tuple[float, int]:
    """MB/s of one bulk stream read with iter_raw, and its size."""
    import httpx

    size = 0
    started = time.perf_counter()
    with httpx.stream("GET", f"{base}/bulk?mb={megabytes}", timeout=120) as response:
        for chunk in response.iter_raw(65536):
            size += len(chunk)
    return size / 1e6 / (time.perf_counter() - started), size


def concurrent(base: str, streams: int, frames: int) -> tuple[float, list[bytes]]:
    """Seconds for `streams` streams at once, and what each client got."""
    import httpx

    async def run() -> list[bytes]:
        limits = httpx.Limits(max_connections=streams, max_keepalive_connections=0)
        async with httpx.AsyncClient(timeout=120, limits=limits) as client:
            async def one(stream: int) -> bytes:
                got = bytearray()
                async with client.stream("GET", f"{base}/frames?stream={stream}&n={frames}") as response:
                    async for chunk in response.aiter_raw():
                        got += chunk
                return bytes(got)

            return list(await asyncio.gather(*(one(stream) for stream in range(streams))))

    started = time.perf_counter()
    got = asyncio.run(run())
    return time.perf_counter() - started, got


def stored_bodies(db: str, streams: int) -> dict[int, tuple[str | None, bytes]]:
    """Each /frames exchange's outcome and body as the store holds it (its reads joined in order)."""
    from streamfold.store import get_exchange

    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = connection.execute("SELECT id, url FROM exchanges WHERE url LIKE '%/frames?%'").fetchall()
    finally:
        connection.close()
    found: dict[int, tuple[str | None, bytes]] = {}
    for exchange_id, url in rows:
        stored = get_exchange(db, exchange_id)
        found[int(re.search(r"stream=(\d+)", url).group(1))] = (stored.outcome, stored.body)  # type: ignore[union-attr]
    assert len(found) == streams, (len(found), streams)
    return found


def start(command: list[str], src: Path = SRC) -> tuple[subprocess.Popen[bytes], str]:
    """Start a server process with streamfold from `src`; (it, the first line it prints). Its later output
    is drained on a thread."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, env=env)
    assert process.stdout is not None
    first = process.stdout.readline().decode().strip()
    if not first:
        raise SystemExit(f"{command[:4]} printed nothing (exit {process.wait()})")
    threading.Thread(target=lambda: [None for _ in process.stdout or ()], daemon=True).start()
    return process, first


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(2)  # Ctrl+C: the proxy commits its store and closes it
    try:
        process.wait(300)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def settled(db: str, count: int, seconds: float = 600.0) -> None:
    """Wait until the proxy's store has `count` exchanges with their summaries folded: a section then
    starts with the proxy idle, not folding the last section's streams."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            try:
                done = connection.execute("SELECT count(*) FROM exchanges WHERE dialect IS NOT NULL").fetchone()[0]
            finally:
                connection.close()
        except sqlite3.Error:
            done = 0
        if done >= count:
            return
        time.sleep(0.1)
    raise SystemExit(f"the proxy's store did not fold {count} summaries in {seconds:.0f} s")


def signed_ms(seconds: float) -> str:
    """A difference in milliseconds with its sign (the proxy can come out ahead within the noise)."""
    return f"{seconds * 1000:+.2f} ms"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ticks", type=int, default=400, help="frames of the latency stream")
    parser.add_argument("--every", type=float, default=0.005, help="seconds between the latency stream's frames")
    parser.add_argument("--bulk-mb", type=float, default=200, help="megabytes of the throughput stream")
    parser.add_argument("--streams", type=int, default=50, help="concurrent streams")
    parser.add_argument("--frames", type=int, default=10_000, help="frames per concurrent stream")
    parser.add_argument("--latency-runs", type=int, default=3, help="runs of the latency stream (each its p99)")
    parser.add_argument("--before", type=Path, default=None, metavar="SRC",
                        help="also measure latency and throughput through a proxy run from another checkout's src "
                             "(its base commit, say), in the same run")
    parser.add_argument("--keep", action="store_true", help="keep the proxy's store (a temporary directory)")
    parser.add_argument("--upstream", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.upstream:
        with contextlib.suppress(KeyboardInterrupt):
            serve_upstream()
        return 0
    directory = tempfile.mkdtemp(prefix="streamfold-bench-proxy-")
    try:
        return measure(args, directory)
    finally:
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)


def proxy_of(target: str, db: str, src: Path = SRC) -> tuple[subprocess.Popen[bytes], str]:
    """`streamfold record` from `src` in front of `target`, storing into `db`; (it, its URL)."""
    proxy, listening = start([sys.executable, "-m", "streamfold", "record", "--target", target, "--port", "0",
                              "--db", db], src)
    return proxy, listening.split(" on ", 1)[1].split(" ", 1)[0]


def latency_rows(args: argparse.Namespace, target: str, through: str, label: str) -> list[tuple[str, str, str, str]]:
    """Median and p99 per read of --latency-runs runs, direct and through the proxy at `through`: the median
    of each over the runs, and the p99s the proxy added in each run."""
    runs = []
    for _ in range(args.latency_runs):
        direct, proxied = latencies(target, args.ticks, args.every), latencies(through, args.ticks, args.every)
        runs.append((statistics.median(direct), statistics.median(proxied), statistics.quantiles(direct, n=100)[98],
                     statistics.quantiles(proxied, n=100)[98]))
    median = [statistics.median(run[column] for run in runs) for column in range(4)]
    added = ", ".join(signed_ms(run[3] - run[2]) for run in runs)
    return [(f"latency per read{label}, {args.ticks} frames every {args.every * 1e3:g} ms: median", ms(median[0]),
             ms(median[1]), f"{signed_ms(median[1] - median[0])} (target <= 1 ms)"),
            (f"latency per read{label}: p99 (median of {args.latency_runs} runs)", ms(median[2]), ms(median[3]),
             f"{signed_ms(median[3] - median[2])}; each run {added} (target <= 5 ms)")]


def throughput_rows(args: argparse.Namespace, target: str, through: str, proxy: subprocess.Popen[bytes],
                    label: str) -> list[tuple[str, str, str, str]]:
    """One bulk stream direct and through the proxy (MB/s, the proxy's CPU), then through it again at once,
    while its store folds the summary of the stream just relayed: what a stream in flight gets while
    another, big one ends."""
    rate, size = throughput(target, args.bulk_mb)
    busy = cpu_seconds(proxy.pid)
    proxied_rate, proxied_size = throughput(through, args.bulk_mb)
    busy = cpu_seconds(proxy.pid) - busy
    contended_rate, _ = throughput(through, args.bulk_mb)
    delays = latencies(through, args.ticks, args.every)  # while the last one's summary is folded, again
    return [(f"throughput{label}, one stream of {size / 1e6:.0f} MB", f"{rate:.0f} MB/s", f"{proxied_rate:.0f} MB/s",
             f"proxy CPU {busy:.2f} s = {size / 1e6 / busy:.0f} MB per CPU second (target >= 50 MB/s)"
             + ("" if proxied_size == size else f"; CUT: {proxied_size} bytes of {size}")),
            (f"the same{label}, while the last one's summary is folded", "", f"{contended_rate:.0f} MB/s",
             "the same stream, right after the last one ended"),
            (f"latency per read{label}, while the last one's summary is folded: median / p99", "",
             f"{ms(statistics.median(delays))} / {ms(statistics.quantiles(delays, n=100)[98])}",
             "the latency stream, right after that one ended")]


def measure(args: argparse.Namespace, directory: str) -> int:
    """Every section, then the table."""
    db = os.path.join(directory, "bench.sqlite")
    up, target = start([sys.executable, __file__, "--upstream"])
    proxy, through = proxy_of(target, db)
    rows: list[tuple[str, str, str, str]] = []
    want = [expected(stream, args.frames) for stream in range(args.streams)]
    try:
        rows += latency_rows(args, target, through, "")
        settled(db, args.latency_runs)

        direct_seconds, direct_got = concurrent(target, args.streams, args.frames)
        busy = cpu_seconds(proxy.pid)
        seconds, got = concurrent(through, args.streams, args.frames)
        busy = cpu_seconds(proxy.pid) - busy
        clients_ok = got == want and direct_got == want
        megabytes = sum(map(len, want)) / 1e6
        rows.append((f"{args.streams} streams x {args.frames:,} frames at once ({megabytes:.0f} MB)",
                     f"{direct_seconds:.2f} s", f"{seconds:.2f} s",
                     f"proxy CPU {busy:.2f} s; every byte at every client: {'yes' if clients_ok else 'NO'}"))
        settled(db, args.latency_runs + args.streams)

        rows += throughput_rows(args, target, through, proxy, "")
        if args.before is not None:
            before_db = os.path.join(directory, "before.sqlite")
            before, before_through = proxy_of(target, before_db, args.before.resolve())
            try:
                rows += latency_rows(args, target, before_through, " (before)")
                settled(before_db, args.latency_runs)
                rows += throughput_rows(args, target, before_through, before, " (before)")
            finally:
                stop(before)
    finally:
        stop(proxy)
        stop(up)
    stored = stored_bodies(db, args.streams)
    store_ok = all(stored[stream] == ("complete", want[stream]) for stream in range(args.streams))
    rows.append((f"the {args.streams} streams in the proxy's store", "", "", "every byte, in order: "
                 + ("yes" if store_ok else "NO")))
    print(f"streamfold record on loopback; python {sys.version.split()[0]}; {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f} at the end")
    header = ("", "direct", "through the proxy", "")
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(4)]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    print(f"the proxy's store: {os.path.getsize(db) / 1e6:.0f} MB" + (f" at {db}" if args.keep else " (deleted)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
