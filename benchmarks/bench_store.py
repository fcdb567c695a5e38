"""How fast the capture store takes reads: N threads each record one exchange of
R reads (an OpenAI SSE chunk each, as a recording proxy would hand them over)
into one store. Prints the rate of `Exchange.read` calls, their latency
(median, p99, max: the time a recording thread spends in the store per read),
when everything was committed and every stream's summary folded (on the
store's own summary thread). A benchmark, not a test: it never fails.

    .venv/bin/python benchmarks/bench_store.py                      # 50 streams x 10k reads
    .venv/bin/python benchmarks/bench_store.py --streams 5 --reads 1000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import Future

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from streamfold.store import CaptureStore, Summary, list_exchanges


def _chunk(index: int) -> bytes:
    payload = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
               "choices": [{"index": 0, "delta": {"content": f" word{index}"}, "finish_reason": None}]}
    return f"data: {json.dumps(payload)}\n\n".encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, default=50)
    parser.add_argument("--reads", type=int, default=10_000)
    parser.add_argument("--no-summary", action="store_true", help="do not fold a summary at end()")
    parser.add_argument("--baseline", action="store_true",
                        help="the same threads appending each chunk to a list instead of calling read(): what the "
                             "threads cost without the store")
    parser.add_argument("--pace", type=float, default=0.0, metavar="SECONDS",
                        help="each stream sends a read every SECONDS (as a live stream does) instead of as fast as "
                             "it can; then the report says how late the reads ran behind that schedule")
    options = parser.parse_args()
    chunks = [_chunk(i) for i in range(options.reads)] + [b"data: [DONE]\n\n"]
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "bench.sqlite")
        store = CaptureStore.open(path, summarize=not options.no_summary)
        latencies: list[list[float]] = [[] for _ in range(options.streams)]
        folds: list[float] = [0.0] * options.streams
        late: list[float] = [0.0] * options.streams
        ended: list[Future[Summary | None] | None] = [None] * options.streams
        barrier = threading.Barrier(options.streams + 1)

        def record(slot: int) -> None:
            exchange = store.begin("POST", "http://127.0.0.1/v1/chat/completions",
                                   [("authorization", "Bearer sk-x")], b"{}")
            exchange.response(200, [("content-type", "text/event-stream")])
            barrier.wait()
            own = latencies[slot]
            clock = time.perf_counter
            kept: list[bytes] = []
            begun = clock()
            for index, chunk in enumerate(chunks):
                if options.pace:
                    due = begun + index * options.pace
                    wait = due - clock()
                    if wait > 0:
                        time.sleep(wait)
                    late[slot] = max(late[slot], clock() - due)
                before = clock()
                if options.baseline:
                    kept.append(chunk)
                else:
                    exchange.read(chunk)
                own.append(clock() - before)
            before = clock()
            ended[slot] = exchange.end("complete")
            folds[slot] = clock() - before

        threads = [threading.Thread(target=record, args=(slot,)) for slot in range(options.streams)]
        for thread in threads:
            thread.start()
        started = time.perf_counter()  # the threads wait at the barrier: they may all run before this one does
        barrier.wait()
        for thread in threads:
            thread.join()
        recorded = time.perf_counter() - started
        for future in ended:
            assert future is not None
            future.result()
        summarized = time.perf_counter() - started
        store.close()
        committed = time.perf_counter() - started
        rows = list_exchanges(path)
        size = os.path.getsize(path)
    total = options.streams * len(chunks)
    every = sorted(value for own in latencies for value in own)
    print(f"{options.streams} streams x {len(chunks)} reads ({total:,} reads, "
          f"{sum(map(len, chunks)) * options.streams / 1e6:.1f} MB), summary {'off' if options.no_summary else 'on'}"
          + (", BASELINE: no read() calls" if options.baseline else ""))
    print(f"  read() calls: {total / recorded:,.0f} reads/s across all threads (recording took {recorded:.2f} s)")
    print(f"  read() latency: median {statistics.median(every) * 1e6:.1f} µs, "
          f"p99 {every[int(0.99 * len(every))] * 1e6:.1f} µs, max {every[-1] * 1e3:.2f} ms")
    if options.pace:
        print(f"  paced at one read per {options.pace * 1e3:g} ms per stream: the latest read ran "
              f"{max(late) * 1e3:.1f} ms behind its schedule (median over streams "
              f"{statistics.median(late) * 1e3:.1f} ms)")
    print(f"  all committed {committed:.2f} s after the start: {total / committed:,.0f} reads/s stored")
    print(f"  end(): median {statistics.median(folds) * 1e6:.0f} µs (the summary is folded on the store's thread)")
    if not options.no_summary:
        print(f"  every summary folded {summarized:.2f} s after the start")
    print(f"  store: {len(rows)} exchanges, {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
