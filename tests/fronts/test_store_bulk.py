"""Reading a store in bulk, for a fleet (issue 23, part 5): `exchange_rows` lists every exchange's
metadata and summary without touching the `reads` table, `iter_exchanges` reads the exchanges asked
for through one connection exactly as `get_exchange` reads each, and a damaged store is a `StoreError`
naming the file (a `DamagedCaptureError` naming the exchange where one exchange is damaged), never
another exception."""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from store_helpers import BODIES, record
from streamfold.store import (
    SUMMARIZED_BY,
    CaptureStore,
    DamagedCaptureError,
    StoreError,
    exchange_rows,
    exchange_tables,
    get_exchange,
    iter_exchanges,
    list_exchanges,
    read_stored,
)
from streamfold.store.summary import SUMMARY_COLUMNS, column_values, summary_of

PAGE = 4096


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "fleet.sqlite")
    with CaptureStore.open(path) as store:
        for seed, body in enumerate(BODIES[:6]):
            record(store, body.read_bytes(), seed, url=f"https://api{seed % 2}.example.com/v1/chat")
    return path


def change(db: str, *statements: str) -> None:
    with contextlib.closing(sqlite3.connect(db)) as connection:
        for statement in statements:
            connection.execute(statement)
        connection.commit()


def copies(db: str, total: int) -> None:
    """Grow the store to `total` exchanges by copying its rows (reads too) under new ids."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        (count,) = connection.execute("SELECT COUNT(*) FROM exchanges").fetchone()
        names = [row[1] for row in connection.execute("PRAGMA table_info(exchanges)")][1:]
        read_names = [row[1] for row in connection.execute("PRAGMA table_info(reads)")][1:]
        for shift in range(count, total, count):
            connection.execute(f"INSERT INTO exchanges SELECT id + {shift}, {', '.join(names)} FROM exchanges "
                               f"WHERE id <= {min(count, total - shift)}")
            connection.execute(f"INSERT INTO reads SELECT exchange + {shift}, {', '.join(read_names)} FROM reads "
                               f"WHERE exchange <= {min(count, total - shift)}")
        connection.commit()


def test_exchange_rows_lists_10k_exchanges_without_touching_reads(db: str) -> None:
    copies(db, 10_000)
    listed = exchange_rows(db)
    assert [row["id"] for row in listed] == list(range(1, 10_001))
    assert {row["host"] for row in listed} == {"api0.example.com", "api1.example.com"}
    assert all(row["model"] and row["outcome_class"] and row["summarized_by"] for row in listed)
    with contextlib.closing(sqlite3.connect(db)) as connection:
        if not connection.execute("SELECT 1 FROM pragma_module_list WHERE name = 'dbstat'").fetchone():
            pytest.skip("this SQLite has no dbstat to find the reads table's pages with")
        pages = [row[0] for row in connection.execute("SELECT pageno FROM dbstat WHERE name = 'reads'")]
    # Every page of the reads table becomes garbage: anything that reads a body now fails.
    with open(db, "r+b") as handle:
        for page in pages:
            handle.seek((page - 1) * PAGE)
            handle.write(random.Random(page).randbytes(PAGE))
    with pytest.raises(StoreError, match=r"fleet\.sqlite"):
        get_exchange(db, 1)
    assert exchange_rows(db) == listed


def test_exchange_rows_say_what_the_list_says(db: str) -> None:
    listed = {row["id"]: row for row in list_exchanges(db)}
    for row in exchange_rows(db):
        shown = listed[row["id"]]
        for mine, theirs in (("body_bytes", "bytes"), ("read_count", "reads"), ("findings", "findings"),
                             ("model", "model"), ("outcome_class", "outcome_class"), ("dialect", "dialect"),
                             ("complete", "complete"), ("ttft", "ttft"), ("in_flight", "in_flight")):
            assert row[mine] == shown[theirs], (row["id"], mine)
        assert row["redacted"] is True and row["request_model"] is None  # record() sends no model


def test_iter_exchanges_equals_get_exchange_through_one_connection(db: str) -> None:
    order = [4, 1, 6, 1, 3]
    each = [get_exchange(db, number) for number in order]
    reading = iter_exchanges(db, order)
    assert next(reading) == each[0]
    # The file moves away: a reader that opened it again by name would find nothing, the one connection
    # reads on from the file it holds.
    os.rename(db, f"{db}.moved")
    assert list(reading) == each[1:]
    with pytest.raises(StoreError, match="no capture store"):
        next(iter_exchanges(db, [1]))


def test_exchange_tables_say_what_the_stored_summary_says(db: str) -> None:
    """What a fleet writes for a stored exchange and what the recording summarized agree, column for column."""
    change(db, "UPDATE exchanges SET request_model = 'gpt-4o' WHERE id = 3")  # as if the request had said so
    with contextlib.closing(sqlite3.connect(db)) as connection:
        stored = {row[0]: row[1:] for row in connection.execute(f"SELECT id, {', '.join(SUMMARY_COLUMNS)} FROM exchanges")}
    for exchange in iter_exchanges(db, sorted(stored)):
        rows = exchange_tables(exchange, f"{db}#{exchange.id}", frames=True, fingerprint="f")
        captures = rows["captures"][0]
        assert column_values(summary_of(captures)) == stored[exchange.id]
        assert (captures["location"], captures["fingerprint"], captures["method"]) == (f"{db}#{exchange.id}", "f", "POST")
        assert captures["request_model"] == ("gpt-4o" if exchange.id == 3 else None)
        assert len(rows["frames"]) == captures["frames_total"] > 0
    assert {row[-1] for row in stored.values()} == {SUMMARIZED_BY}


def test_an_unknown_id_is_a_store_error_saying_which_exist(db: str) -> None:
    with pytest.raises(StoreError, match=r"no capture #99 .* 6 captures"):
        list(iter_exchanges(db, [1, 99]))


def test_a_damaged_exchange_names_itself_and_the_others_still_read(db: str) -> None:
    change(db, "UPDATE reads SET sizes = x'0100' WHERE exchange = 2")
    reading = iter_exchanges(db, [1, 2, 3])
    assert next(reading).id == 1
    with pytest.raises(DamagedCaptureError, match="capture #2 ") as caught:
        next(reading)
    assert caught.value.exchange_id == 2 and repr(db) in str(caught.value)
    assert [exchange.id for exchange in iter_exchanges(db, [3, 4])] == [3, 4]
    assert len(exchange_rows(db)) == 6  # no body read


Damage = Callable[[str], None]
#: A value of the wrong type or shape in one row, and which readers read that column.
ROW_DAMAGE: dict[str, tuple[str, tuple[str, ...]]] = {
    "started_at as text": ("UPDATE exchanges SET started_at = 'yesterday' WHERE id = 2", ("list", "rows", "one")),
    "a body as text": ("UPDATE exchanges SET request_body = 'hello' WHERE id = 2", ("one",)),
    "a time no calendar holds": ("UPDATE exchanges SET started_at = 1e300 WHERE id = 2", ("list",)),
    "headers not JSON": ("UPDATE exchanges SET request_headers = '[[\"a\"' WHERE id = 2", ("one",)),
    "headers not pairs": ("UPDATE exchanges SET response_headers = '[1, 2]' WHERE id = 2", ("one",)),
    "findings not a list": ("UPDATE exchanges SET findings = '{\"a\": 1}' WHERE id = 2", ("list", "rows")),
    "a status as a blob": ("UPDATE exchanges SET status = x'00' WHERE id = 2", ("list", "rows", "one")),
    "a read offset as text": ("UPDATE reads SET offset = 'x' WHERE exchange = 2", ("one",)),
}
READERS: dict[str, Callable[[str], Any]] = {
    "list": list_exchanges, "rows": exchange_rows, "one": lambda db: list(iter_exchanges(db, [1, 2, 3])),
}


@pytest.mark.parametrize("damage", list(ROW_DAMAGE))
def test_a_damaged_value_is_a_damaged_capture_error_naming_the_exchange(db: str, damage: str) -> None:
    statement, readers = ROW_DAMAGE[damage]
    change(db, statement)
    for name, reader in READERS.items():
        if name not in readers:
            reader(db)  # it does not read that column: it reads on
            continue
        with pytest.raises(DamagedCaptureError) as caught:
            reader(db)
        assert caught.value.exchange_id == 2 and "capture #2 " in str(caught.value) and repr(db) in str(caught.value)
    if "one" in readers:
        with pytest.raises(DamagedCaptureError):
            read_stored(db, 2)


def every_reader(db: str) -> None:
    """Each reader, in turn: what it reads is thrown away; a `StoreError` is what damage may raise."""
    for reader in (list_exchanges, exchange_rows, lambda path: list(iter_exchanges(path, range(1, 7))),
                   lambda path: get_exchange(path).capture()):
        with contextlib.suppress(StoreError):
            reader(db)


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.9])
def test_a_truncated_store_is_a_store_error_naming_it(db: str, cut: float) -> None:
    data = Path(db).read_bytes()
    Path(db).write_bytes(data[: int(len(data) * cut)])
    failures = []
    for reader in (list_exchanges, exchange_rows, lambda path: list(iter_exchanges(path, range(1, 7)))):
        try:
            reader(db)
        except StoreError as exc:
            failures.append(str(exc))
    assert failures and all(repr(db) in message for message in failures)


@pytest.mark.parametrize("seed", range(24))
def test_garbage_bytes_anywhere_raise_nothing_but_a_store_error(db: str, seed: int) -> None:
    data = bytearray(Path(db).read_bytes())
    rng = random.Random(seed)
    for _ in range(rng.choice((1, 8, 64))):
        start = rng.randrange(100, len(data))  # past the file header: SQLite's own check covers it
        data[start : start + rng.choice((1, 4, 64))] = rng.randbytes(rng.choice((1, 4, 64)))
    Path(db).write_bytes(bytes(data[: len(data)]))
    every_reader(db)
