"""How fast a fleet reads a capture store in bulk: `exchange_rows` (every
exchange's metadata and summary, no body) beside `list_exchanges` (the
capture list, which the fleet would otherwise have used), `iter_exchanges`
(bodies through one connection) beside one `get_exchange` call per exchange,
and the migration of a schema-1 file of the same size to schema 2. The store
is the shipped examples recorded once each (summarized) and copied, rows and
reads, up to N exchanges. A benchmark, not a test: it never fails.

    .venv/bin/python benchmarks/bench_store_bulk.py                   # 100k exchanges, bodies of 10k
    .venv/bin/python benchmarks/bench_store_bulk.py --exchanges 10000 --bodies 1000
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from streamfold.store import CaptureStore, exchange_rows, get_exchange, iter_exchanges, list_exchanges
from streamfold.store.schema import _V2_COLUMNS

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.sse"))


def build(path: str, total: int) -> None:
    """The examples recorded once each, 200-byte reads, then copied under new ids up to `total`."""
    with CaptureStore.open(path) as store:
        for number, example in enumerate(EXAMPLES):
            body = example.read_bytes()
            exchange = store.begin("POST", f"https://gateway{number % 3}.example.com/v1/chat/completions", (),
                                   b'{"model": "gpt-4o-mini", "stream": true}', started=1_800_000_000.0 + number)
            exchange.response(200, [("content-type", "text/event-stream")], at=0.05)
            for offset in range(0, len(body), 200):
                exchange.read(body[offset : offset + 200], at=0.1 + offset / 1e5)
            exchange.end("complete", at=1.0)
    with contextlib.closing(sqlite3.connect(path)) as db:
        names = [row[1] for row in db.execute("PRAGMA table_info(exchanges)")][1:]
        read_names = [row[1] for row in db.execute("PRAGMA table_info(reads)")][1:]
        count = len(EXAMPLES)
        for shift in range(count, total, count):
            last = min(count, total - shift)
            db.execute(f"INSERT INTO exchanges SELECT id + {shift}, {', '.join(names)} FROM exchanges "
                       f"WHERE id <= {last}")
            db.execute(f"INSERT INTO reads SELECT exchange + {shift}, {', '.join(read_names)} FROM reads "
                       f"WHERE exchange <= {last}")
        db.commit()


def as_v1(path: str) -> None:
    """The same file as schema 1 wrote it: version 2's columns dropped, `user_version` 1."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        for name, _ in _V2_COLUMNS:
            db.execute(f"ALTER TABLE exchanges DROP COLUMN {name}")
        db.execute("PRAGMA user_version = 1")
        db.commit()
        db.execute("VACUUM")


def timed(label: str, work: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    result = work()
    print(f"  {label:<44} {time.perf_counter() - started:7.2f} s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exchanges", type=int, default=100_000)
    parser.add_argument("--bodies", type=int, default=10_000, help="how many exchanges to read with their bodies")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "fleet.sqlite")
        timed(f"build {options.exchanges:,} exchanges", lambda: build(path, options.exchanges))
        print(f"  store: {os.path.getsize(path) / 1e6:.0f} MB")
        ids = range(1, min(options.bodies, options.exchanges) + 1)
        rows = timed("exchange_rows (no bodies)", lambda: exchange_rows(path))
        timed("list_exchanges (the capture list)", lambda: list_exchanges(path))
        timed(f"iter_exchanges, {len(ids):,} bodies, one connection",
              lambda: sum(len(exchange.body) for exchange in iter_exchanges(path, ids)))
        timed(f"get_exchange x {len(ids):,}", lambda: sum(len(get_exchange(path, number).body) for number in ids))
        assert len(rows) == options.exchanges
        as_v1(path)
        timed("exchange_rows of the schema-1 file, as it is", lambda: exchange_rows(path))
        timed("migrate the schema-1 file to 2 (a writer opens it)", lambda: CaptureStore.open(path).close())


if __name__ == "__main__":
    main()
