"""Writing made-up exchanges into a capture store, for the store's tests. Not a test module."""

from __future__ import annotations

import contextlib
import random
import sqlite3
import sys
from array import array
from pathlib import Path

from streamfold.store import CaptureStore
from streamfold.store.schema import _V1
from streamfold.store.stored import stored_capture
from streamfold.store.summarizer import summarize
from streamfold.store.summary import column_values

__all__ = ["BODIES", "CAPTURES", "SECRET", "V1_REQUEST", "V1_URL", "record", "split", "v1_store"]

SECRET = "sk-live-Zq8vX2mT9sKeyThatMustNotLeak"
CAPTURES = Path(__file__).resolve().parent / "captures"
BODIES = sorted([*CAPTURES.glob("openai/*.sse"), *CAPTURES.glob("anthropic/*.sse"), *CAPTURES.glob("gemini/*.sse"),
                 *CAPTURES.glob("bedrock/*.bin")])[:12]


def split(body: bytes, seed: int) -> list[tuple[bytes, float]]:
    """Made-up read boundaries and arrival times (seconds after the request started, increasing)."""
    rng = random.Random(seed)
    reads, at, position = [], 0.05, 0
    while position < len(body):
        size = rng.choice((1, 7, 64, 300, 4096))
        at += rng.choice((0.001, 0.02, 0.3))
        reads.append((body[position : position + size], round(at, 6)))
        position += size
    return reads


def record(store: CaptureStore, body: bytes, seed: int = 1, *, url: str = "https://api.example.com/v1/chat",
           headers: tuple[tuple[str, str], ...] = (), outcome: str = "complete", error: str | None = None) -> int:
    exchange = store.begin("POST", url, headers, b'{"stream": true}', started=1_800_000_000.0 + seed)
    exchange.response(200, [("content-type", "text/event-stream")], at=0.04)
    for chunk, at in split(body, seed):
        exchange.read(chunk, at=at)
    exchange.end(outcome, error, at=99.0)
    return exchange.id




#: The request every exchange of `v1_store` was sent with.
V1_URL = "https://gateway.example.com:8443/v1/chat/completions?key=REDACTED"
V1_REQUEST = b'{"model": "gpt-4o-mini", "stream": true, "messages": []}'


def v1_store(path: str, bodies: list[bytes]) -> list[int]:
    """A store as streamfold wrote it at schema 1 (the v1 DDL, WAL, `user_version` 1): each body as a
    complete exchange, its reads in rows of up to 5 as the writer packs them, its summary folded."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("PRAGMA journal_mode = WAL")
        db.executescript(_V1)
        db.execute("PRAGMA user_version = 1")
        db.execute("BEGIN")
        for number, body in enumerate(bodies, 1):
            reads = split(body, number)
            headers = (("content-type", "text/event-stream"),)
            offsets = [sum(len(chunk) for chunk, _ in reads[:index]) for index in range(len(reads))]
            capture = stored_capture(number, [chunk for chunk, _ in reads], list(zip(offsets, [at for _, at in reads],
                                                                                    strict=True)),
                                     status=200, response_headers=headers, request_headers=(), url=V1_URL,
                                     method="POST", outcome="complete", error=None)
            summary = column_values(summarize(capture))[:8]  # the columns schema 1 had
            db.execute("INSERT INTO exchanges VALUES (?, ?, 'POST', ?, '[]', ?, 1, 200, ?, 0.04, 'complete', NULL, "
                       "99.0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (number, 1_700_000_000.0 + number, V1_URL, V1_REQUEST, '[["content-type", "text/event-stream"]]',
                        len(body), len(reads), *summary))
            for seq in range(0, len(reads), 5):
                run = reads[seq : seq + 5]
                sizes, times = array("I", [len(chunk) for chunk, _ in run]), array("d", [at for _, at in run])
                if sys.byteorder != "little":
                    sizes.byteswap()
                    times.byteswap()
                db.execute("INSERT INTO reads VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (number, seq, len(run), offsets[seq], run[0][1], run[-1][1],
                            b"".join(chunk for chunk, _ in run), sizes.tobytes(), times.tobytes()))
        db.execute("COMMIT")
    return list(range(1, len(bodies) + 1))
