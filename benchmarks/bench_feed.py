"""How fast the live `Folder` folds, fed 64 KiB chunks, against `fold()` and the floor.

bench_dialects.py asks whether `fold(data)` stays near the floor (split the frames, orjson-decode
each payload) in each dialect; this asks the same of a `Folder` fed the stream in 64 KiB chunks, as
a reader of a socket feeds it. Two rows of use: a caller that does not read what `feed()` returns
(a recorder that folds as bytes come and keeps the Result), and one that reads every event (`tail`,
a live view). The streams, the floor and the timing (CPU time, median of several rounds, the load
printed with them) are bench_dialects.py's.

    python benchmarks/bench_feed.py                     # 100k frames, every dialect
    python benchmarks/bench_feed.py --sizes 1k --only openai-chat,gemini
    python benchmarks/bench_feed.py --src /tmp/base/src # another checkout, for before/after
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from bench_dialects import DIALECTS, RUNS, SIZES, _tokens, floor, median_of, options

CHUNK = 64 * 1024


def feed(folder_class: Any, data: bytes, *, read: bool) -> int:
    """Feed `data` in 64 KiB chunks; with `read`, touch every event returned. Returns the event count read."""
    folder = folder_class()
    count = 0
    for start in range(0, len(data), CHUNK):
        events = folder.feed(data[start : start + CHUNK])
        if read:
            for _ in events:
                count += 1
    for _ in folder.finish():
        count += 1
    folder.close()
    return count


def main(argv: list[str] | None = None) -> int:
    args = options(argv, __doc__.splitlines()[0], "100k")
    import streamfold

    rows = args.only.split(",") if args.only else list(DIALECTS)
    print(f"streamfold from {Path(streamfold.__file__).parent.parent}, Python {sys.version.split()[0]}; "
          f"chunks of {CHUNK // 1024} KiB; CPU µs per frame, median of "
          + ", ".join(f"{RUNS[s]} ({s})" for s in args.sizes.split(",")) + f"; load average {os.getloadavg()[0]:.2f}")
    header = (f"{'dialect':18}{'frames':>8}{'floor':>8}{'fold':>8}{'feed':>8}{'+ read':>8}"
              f"{'fold ÷':>8}{'feed ÷':>8}{'+read ÷':>8}")
    print(header)
    print("-" * len(header))
    for size in args.sizes.split(","):
        for row_name in rows:
            name, generate = DIALECTS[row_name]
            data = generate(_tokens(SIZES[size], seed=SIZES[size]))
            result = streamfold.fold(data)
            if result.dialect != name or result.errors:
                print(f"{row_name:18}  INVALID ({result.dialect}, {len(result.errors)} errors)")
                continue
            del result  # a Result held while timing is heap every collection walks
            frames, runs = floor(data), RUNS[size]
            times = [median_of(timed, runs) / frames * 1e6 for timed in (
                lambda d=data: floor(d), lambda d=data: streamfold.fold(d),
                lambda d=data: feed(streamfold.Folder, d, read=False),
                lambda d=data: feed(streamfold.Folder, d, read=True))]
            floor_s = times[0]
            print(f"{row_name:18}{size:>8}" + "".join(f"{t:8.2f}" for t in times)
                  + "".join(f"{t / floor_s:8.2f}" for t in times[1:]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
