"""The store commits a summary that was folded after its exchange's own end was committed: a reader sees
it within a tick, without anyone calling `flush()` (a recorder in another process never does)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from streamfold.store import CaptureStore, get_exchange, list_exchanges


def rows(db: str) -> dict[int, dict[str, Any]]:
    return {row["id"]: row for row in list_exchanges(db)}


CHUNK = b'data: {"choices": [{"index": 0, "delta": {"content": "hi"}}]}\n\n'


def test_a_summary_folded_after_the_end_was_committed_is_committed_too(tmp_path: Path) -> None:
    db = str(tmp_path / "c.sqlite")
    with CaptureStore.open(db) as store:
        for _ in range(10):  # the fold of 1000 frames often outlasts the time to the next tick
            exchange = store.begin("POST", "http://127.0.0.1/v1/chat/completions", (), b'{"stream": true}')
            exchange.response(200, [("content-type", "text/event-stream")])
            for _ in range(1000):
                exchange.read(CHUNK)
            summary = exchange.end("complete").result(timeout=10)
            assert summary is not None and summary.dialect == "openai-chat"
            deadline = time.monotonic() + 2
            while (row := rows(db).get(exchange.id, {})).get("dialect") is None and time.monotonic() < deadline:
                time.sleep(0.02)
            assert row.get("dialect") == "openai-chat", row
            assert get_exchange(db, exchange.id).outcome == "complete"
