"""Writing made-up exchanges into a capture store, for the store's tests. Not a test module."""

from __future__ import annotations

import random
from pathlib import Path

from streamfold.store import CaptureStore

__all__ = ["BODIES", "CAPTURES", "SECRET", "record", "split"]

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


