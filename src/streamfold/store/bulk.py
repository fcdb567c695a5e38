"""Reading a whole store at once, for a fleet: every exchange's metadata and
stored summary without a byte of any body (`exchange_rows`: the `reads`
table is never read), and the exchanges a caller picks, bodies and read times
included, through one connection (`iter_exchanges`).

    rows = exchange_rows("streamfold.sqlite")
    stale = [row["id"] for row in rows if row["summarized_by"] != SUMMARIZED_BY and not row["in_flight"]]
    for exchange in iter_exchanges("streamfold.sqlite", stale):
        rows = exchange_tables(exchange, f"streamfold.sqlite#{exchange.id}")

A damaged store is a `StoreError` naming the file; a damaged exchange is a
`DamagedCaptureError` (a `StoreError`) naming it too, with its `exchange_id`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .reader import StoredExchange, load_exchange, reading
from .rows import checked_select, damage_of, findings_of
from .summarizer import capture_tables

__all__ = ["EXCHANGE_COLUMNS", "exchange_rows", "exchange_tables", "iter_exchanges"]

#: The keys of each `exchange_rows` row besides `in_flight`: columns of `exchanges` (docs/store.md), none
#: of them a body or a header list.
EXCHANGE_COLUMNS = ("id", "started_at", "response_at", "ended_at", "method", "url", "host", "redacted", "status",
                    "outcome", "error", "body_bytes", "read_count", "request_model", "transport", "dialect",
                    "complete", "model", "response_id", "outcome_class", "ttfb", "ttft", "duration", "frames",
                    "finish_reason", "findings", "summarized_by")


def exchange_rows(path: str) -> list[dict[str, Any]]:
    """Every exchange of the store at `path`, by id, as a dict of `EXCHANGE_COLUMNS` and `in_flight`.
    `redacted` and `complete` are booleans, `findings` a list of codes; the summary's columns are None
    while an exchange is in flight, when its store did not summarize, and in a store of schema 1 (which
    is read as it is: `summarized_by` None says its summary predates the columns). Raises `StoreError`."""
    sql = f"SELECT {checked_select(EXCHANGE_COLUMNS)} FROM exchanges ORDER BY id"
    with reading(path) as db:
        found = db.execute(sql).fetchall()
    rows = []
    # A fleet's exchanges share a few lists of finding codes: each is parsed once (half the time of 100k rows).
    codes: dict[str, tuple[str, ...]] = {}
    for row in found:
        damage_of(path, row)
        values = dict(zip(EXCHANGE_COLUMNS, row, strict=False))
        values["redacted"] = bool(values["redacted"])
        if values["complete"] is not None:
            values["complete"] = bool(values["complete"])
        if (text := values["findings"]) is not None:
            if text not in codes:
                codes[text] = tuple(findings_of(path, values["id"], text) or ())
            values["findings"] = list(codes[text])
        values["in_flight"] = values["outcome"] is None
        rows.append(values)
    return rows


def iter_exchanges(path: str, ids: Iterable[int]) -> Iterator[StoredExchange]:
    """The exchanges `ids` of the store at `path`, in that order, bodies and read times included, read
    through one connection held open until the iterator is exhausted or closed. An unknown id or a
    damaged store raises `StoreError`; a damaged exchange raises `DamagedCaptureError` (its `exchange_id`):
    the ids after it can be read with another call."""
    with reading(path) as db:
        for exchange_id in ids:
            yield load_exchange(db, path, exchange_id)


def exchange_tables(exchange: StoredExchange, location: str, *, frames: bool = False,
                    fingerprint: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """The rows of `streamfold.tables` for a stored exchange (`location`: its `PATH#ID`, the capture id),
    folded and described as the recording's own summary was, so they say what its stored summary says
    (when `summarized_by` is current)."""
    return capture_tables(exchange.capture(), location, method=exchange.method, outcome=exchange.outcome,
                          started_at=exchange.started_at, request_model=exchange.request_model, frames=frames,
                          fingerprint=fingerprint)
