"""The store's summary columns are a projection of the table rows (`streamfold.tables`) of the capture
as every front reads it again, and a summary its caller already folded is written as it is."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import sqlite3
from pathlib import Path

import pytest

from store_helpers import BODIES, CAPTURES, record, split
from streamfold.store import CaptureStore, list_exchanges, read_stored
from streamfold.store.summarizer import capture_tables
from streamfold.store.summary import SUMMARY_COLUMNS, column_values, summary_of


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "captures.sqlite")


def stored_columns(db: str, exchange_id: int) -> tuple[object, ...]:
    with contextlib.closing(sqlite3.connect(db)) as connection:
        row: tuple[object, ...] = connection.execute(
            f"SELECT {', '.join(SUMMARY_COLUMNS)} FROM exchanges WHERE id = ?", (exchange_id,)).fetchone()
    return row


def test_the_summary_columns_project_the_captures_row_of_the_stored_capture(db: str) -> None:
    cut = (CAPTURES / "openai" / "a2-tool-call-empty-arguments.sse").read_bytes()
    with CaptureStore.open(db) as store:
        ids = [record(store, path.read_bytes(), seed) for seed, path in enumerate(BODIES)]
        ids.append(record(store, cut[: len(cut) // 2], 99, outcome="upstream-cut"))
    listed = {row["id"]: row for row in list_exchanges(db)}
    for exchange_id in ids:
        row = listed[exchange_id]
        rows = capture_tables(read_stored(db, exchange_id), f"{db}#{exchange_id}", method="POST",
                              outcome=row["outcome"], started_at=row["started_at"])
        captures = rows["captures"][0]
        assert stored_columns(db, exchange_id) == column_values(summary_of(captures)), exchange_id
        assert captures["body_bytes"] == row["bytes"] and captures["read_count"] == row["reads"]
        assert (captures["location"], captures["source"], captures["host"], captures["status"]) == (
            f"{db}#{exchange_id}", "store", "api.example.com", 200)
        assert captures["started_at"] == datetime.datetime.fromtimestamp(row["started_at"], datetime.timezone.utc)
    assert listed[ids[-1]]["outcome"] == "upstream-cut" and "store-unfinished" in listed[ids[-1]]["findings"]


def test_a_summary_the_caller_folded_is_written_as_it_is(db: str) -> None:
    body = (CAPTURES / "openai" / "a2-tool-call-empty-arguments.sse").read_bytes()
    for summarize in (True, False):
        with CaptureStore(db, summarize=summarize) as store:
            exchange = store.begin("POST", "https://api.example.com/v1/chat", (), b"")
            exchange.response(200, [("content-type", "text/event-stream")])
            chunks, reads, offset = [], [], 0
            for chunk, at in split(body, 3):
                exchange.read(chunk, at=at)
                chunks.append(chunk)
                reads.append((offset, at))
                offset += len(chunk)
            folded = exchange.summarize(chunks, reads, "complete")
            assert folded.dialect == "openai-chat" and folded.complete and folded.ttft is not None
            # A summary no fold would make: what the columns hold can only have come from the caller.
            handed = dataclasses.replace(folded, dialect="made-up", findings=("from-the-caller",))
            assert exchange.end("complete", summary=handed).result(timeout=10) is handed
        assert stored_columns(db, exchange.id) == column_values(handed)
        assert list_exchanges(db)[0]["dialect"] == "made-up"
