"""Store schema 2 (issue 23, part 5): what a fleet needs of each exchange without folding its body again
(the model and id the reply reports, the outcome class, TTFB, the request's host and model, what made
the summary). A writer migrates a schema-1 file, atomically; a reader reads one as it is, changing not
a byte of it; a recording fills the new columns with what the table rows say of the same capture."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from proxy_rig import SOURCES, read_line, record_process, serving, stop
from proxy_upstream import Upstream
from store_helpers import BODIES, V1_REQUEST, v1_store
from streamfold.store import (
    SCHEMA_VERSION,
    SUMMARIZED_BY,
    CaptureStore,
    StoreError,
    exchange_rows,
    get_exchange,
    iter_exchanges,
    list_exchanges,
    read_stored,
)
from streamfold.store.schema import _V2_COLUMNS
from streamfold.store.summarizer import capture_tables
from streamfold.tables import TABLES_SCHEMA_VERSION

ENV = {**os.environ, "PYTHONPATH": SOURCES, "NO_COLOR": "1", "COLUMNS": "100"}
ENV.pop("STREAMFOLD_DB", None)
STREAMFOLD = [sys.executable, "-m", "streamfold"]
NEW = [name for name, _ in _V2_COLUMNS]
#: The columns the fold fills: NULL in a migrated file until a fold fills them.
FOLDED = ("model", "response_id", "outcome_class", "ttfb", "summarized_by")


def listening_on(line: str) -> str:
    """The proxy's URL, from `streamfold record`'s first line."""
    found = re.match(r"^streamfold record: listening on (http://127\.0\.0\.1:\d+) -> ", line)
    assert found is not None, line
    return found.group(1)


def sql(db: str, query: str, *args: object) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(db)) as connection:
        return connection.execute(query, args).fetchall()


def v1_file(tmp_path: Path, count: int = 3) -> str:
    db = str(tmp_path / "old.sqlite")
    v1_store(db, [path.read_bytes() for path in BODIES[:count]])
    return db


def snapshot(db: str) -> dict[str, object]:
    """Every byte of the store and which files lie beside it."""
    return {"sha256": hashlib.sha256(Path(db).read_bytes()).hexdigest(), "mtime": os.stat(db).st_mtime_ns,
            "beside": sorted(name for name in os.listdir(os.path.dirname(db)) if name != os.path.basename(db))}


def test_a_writer_migrates_a_v1_file_keeping_every_exchange_and_filling_what_the_requests_say(tmp_path: Path) -> None:
    db = v1_file(tmp_path)
    before = sql(db, "SELECT * FROM exchanges ORDER BY id")
    reads_before = sql(db, "SELECT * FROM reads ORDER BY exchange, seq")
    bodies = [get_exchange(db, number).body for number in (1, 2, 3)]
    CaptureStore.open(db).close()
    assert sql(db, "PRAGMA user_version") == [(SCHEMA_VERSION,)] == [(2,)]
    after = sql(db, "SELECT * FROM exchanges ORDER BY id")
    assert [row[: len(before[0])] for row in after] == before  # the v1 columns, value for value
    assert sql(db, "SELECT * FROM reads ORDER BY exchange, seq") == reads_before
    assert sql(db, f"SELECT {', '.join(NEW)} FROM exchanges ORDER BY id") == [
        ("gateway.example.com", "gpt-4o-mini", None, None, None, None, None)] * 3
    assert [get_exchange(db, number).body for number in (1, 2, 3)] == bodies
    assert {get_exchange(db, number).request_model for number in (1, 2, 3)} == {"gpt-4o-mini"}
    # Migrated once: opening it again changes nothing.
    CaptureStore.open(db).close()
    assert sql(db, "SELECT * FROM exchanges ORDER BY id") == after


def test_a_migration_that_fails_half_way_leaves_the_file_at_v1(tmp_path: Path) -> None:
    db = v1_file(tmp_path)
    # Fails at the migration's second step (filling host and request_model), after the columns were added.
    sql_script = "CREATE TRIGGER no_updates BEFORE UPDATE ON exchanges BEGIN SELECT RAISE(ABORT, 'refused'); END"
    with contextlib.closing(sqlite3.connect(db)) as connection:
        connection.execute(sql_script)
        connection.commit()
        columns_before = connection.execute("PRAGMA table_info(exchanges)").fetchall()
    with pytest.raises(StoreError, match="refused"):
        CaptureStore.open(db)
    assert sql(db, "PRAGMA user_version") == [(1,)]
    assert sql(db, "PRAGMA table_info(exchanges)") == columns_before
    assert [row["id"] for row in list_exchanges(db)] == [3, 2, 1]  # still read as a v1 file


def test_a_newer_schema_is_refused_by_readers_and_writers_alike(tmp_path: Path) -> None:
    db = v1_file(tmp_path)
    with contextlib.closing(sqlite3.connect(db)) as connection:
        connection.execute("PRAGMA user_version = 3")
    before = snapshot(db)
    for opening in (lambda: CaptureStore.open(db), lambda: list_exchanges(db), lambda: exchange_rows(db)):
        with pytest.raises(StoreError, match="schema version 3, newer than this streamfold knows"):
            opening()
    assert snapshot(db) == before


def test_every_reader_reads_a_v1_file_as_it_is_and_changes_not_a_byte(tmp_path: Path) -> None:
    db = v1_file(tmp_path)
    before = snapshot(db)
    assert before["beside"] == []
    listed = list_exchanges(db)
    assert [row["id"] for row in listed] == [3, 2, 1]
    assert all(row["dialect"] == "anthropic" and row["model"] is None and row["outcome_class"] is None
               for row in listed)
    rows = exchange_rows(db)
    assert [row["id"] for row in rows] == [1, 2, 3]
    assert all(row[name] is None for row in rows for name in NEW) and all(row["frames"] for row in rows)
    assert [exchange.body for exchange in iter_exchanges(db, [3, 1])] == [BODIES[2].read_bytes(),
                                                                            BODIES[0].read_bytes()]
    assert read_stored(db, 2).body == BODIES[1].read_bytes() and get_exchange(db).request_model is None
    for command in (["captures", "--db", db], ["captures", "--db", db, "--json"], ["show", "--json", f"{db}#2"]):
        done = subprocess.run([*STREAMFOLD, *command], capture_output=True, env=ENV, timeout=120)
        assert done.returncode == 0, done.stderr
    assert snapshot(db) == before
    assert sql(db, "PRAGMA user_version") == [(1,)]


def test_the_capture_list_shows_model_and_outcome_and_a_v1_file_shows_them_empty(tmp_path: Path) -> None:
    old = v1_file(tmp_path, 1)
    new = str(tmp_path / "new.sqlite")
    with CaptureStore.open(new) as store:
        exchange = store.begin("POST", "https://api.example.com/v1/messages", (), V1_REQUEST)
        exchange.response(200, [("content-type", "text/event-stream")])
        exchange.read(BODIES[0].read_bytes())
        exchange.end("complete")
    listed = {}
    for db in (old, new):
        done = subprocess.run([*STREAMFOLD, "captures", "--db", db], capture_output=True, env=ENV, timeout=120)
        header, line = done.stdout.decode().splitlines()
        # Cells are padded apart by two spaces at least; within a cell ("time (UTC)", "51 ms") by one.
        listed[db] = dict(zip(re.split(r" {2,}", header.strip()), re.split(r" {2,}", line.strip()), strict=True))
        assert json.loads(subprocess.run([*STREAMFOLD, "captures", "--db", db, "--json"], capture_output=True,
                                         env=ENV, timeout=120).stdout)[0]["model"] == (
            None if db == old else "claude-haiku-4-5-20251001")
    assert (listed[old]["model"], listed[old]["outcome"]) == ("-", "-")
    assert (listed[new]["model"], listed[new]["outcome"]) == ("claude-haiku-4-5-202510…", "complete")


def test_a_read_only_v1_file_is_read_and_left_as_it_is(tmp_path: Path) -> None:
    db = v1_file(tmp_path)
    os.chmod(db, 0o400)
    try:
        before = snapshot(db)
        assert [row["id"] for row in exchange_rows(db)] == [1, 2, 3]
        assert [exchange.id for exchange in iter_exchanges(db, [1, 2, 3])] == [1, 2, 3]
        assert list_exchanges(db)[0]["outcome_class"] is None
        assert snapshot(db) == before  # no -wal, no -shm left beside it (read as immutable when one may not write)
    finally:
        os.chmod(db, 0o600)


def test_a_v1_file_read_by_one_process_while_streamfold_record_migrates_and_writes_it(tmp_path: Path) -> None:
    db = v1_file(tmp_path)
    app = Upstream()
    with serving(app) as target:
        held = iter_exchanges(db, [1, 2, 3])  # one connection, opened on the v1 file and held
        assert next(held).id == 1
        process = record_process(target, db, subprocess.PIPE)
        try:
            assert process.stdout is not None
            proxy = listening_on(read_line(process.stdout.fileno()))
            assert sql(db, "PRAGMA user_version") == [(2,)]  # the writer migrated it on opening
            assert next(held).id == 2  # the held connection reads on, as it began: a v1 table
            for _ in range(2):
                response = httpx.post(f"{proxy}/v1/chat/completions", content=b'{"model": "gpt-4.1", "stream": true}',
                                      timeout=30)
                assert response.status_code == 200
                read_line(process.stdout.fileno())  # the exchange's line: it ended
                # Another process lists the store while the writer holds it open.
                listed = subprocess.run([*STREAMFOLD, "captures", "--db", db, "--json"], capture_output=True,
                                        env=ENV, timeout=120)
                assert listed.returncode == 0, listed.stderr
            assert next(held).id == 3
            held.close()  # gives its connection back
        finally:
            err = stop(process)
    rows = {row["id"]: row for row in json.loads(listed.stdout)}
    assert sorted(rows) == [1, 2, 3, 4, 5], err
    assert [rows[number]["model"] for number in (1, 2, 3)] == [None] * 3
    assert {rows[number]["outcome_class"] for number in (4, 5)} == {"complete"}
    assert {row["request_model"] for row in exchange_rows(db) if row["id"] > 3} == {"gpt-4.1"}


def test_a_recording_fills_the_new_columns_with_what_the_tables_say_of_the_same_capture(tmp_path: Path) -> None:
    db = str(tmp_path / "recorded.sqlite")
    app = Upstream()
    with serving(app) as target:
        process = record_process(target, db, subprocess.PIPE)
        try:
            assert process.stdout is not None
            proxy = listening_on(read_line(process.stdout.fileno()))
            for path, model in (("/v1/chat/completions", "gpt-4o"), ("/v1/messages", "claude-sonnet-4-5"),
                                ("/ratelimit", "gpt-4o-mini")):
                httpx.post(f"{proxy}{path}", content=json.dumps({"model": model, "stream": True}).encode(),
                           timeout=30)
                read_line(process.stdout.fileno())
        finally:
            stop(process)
    rows = exchange_rows(db)
    assert len(rows) == 3
    for row in rows:
        stored = get_exchange(db, row["id"])
        captures = capture_tables(stored.capture(), f"{db}#{row['id']}", method=stored.method, outcome=row["outcome"],
                                  started_at=stored.started_at, request_model=stored.request_model)["captures"][0]
        for name in ("model", "response_id", "outcome_class", "ttfb", "ttft", "host", "request_model"):
            assert row[name] == captures[name], (row["id"], name)
        assert row["summarized_by"] == SUMMARIZED_BY == f"streamfold {__import__('streamfold').__version__} tables {TABLES_SCHEMA_VERSION}"
    assert [(row["host"], row["request_model"]) for row in rows] == [
        ("127.0.0.1", "gpt-4o"), ("127.0.0.1", "claude-sonnet-4-5"), ("127.0.0.1", "gpt-4o-mini")]
    assert [row["outcome_class"] for row in rows] == ["complete", "complete", "errored"]
    assert rows[0]["model"] and rows[0]["response_id"] and rows[0]["ttfb"] is not None


def test_the_migration_fills_every_row_of_a_large_file(tmp_path: Path) -> None:
    db = v1_file(tmp_path, 1)
    with contextlib.closing(sqlite3.connect(db)) as connection:  # 1,201 exchanges: more than one step of the fill
        names = [row[1] for row in connection.execute("PRAGMA table_info(exchanges)")][1:]
        for shift in range(1, 1201):
            connection.execute(f"INSERT INTO exchanges SELECT id + {shift}, {', '.join(names)} FROM exchanges "
                               "WHERE id = 1")
        connection.execute("UPDATE exchanges SET request_body = CAST('{\"model\": \"m-' || id || '\"}' AS BLOB), "
                           "url = 'http://h' || (id % 7) || '.example/v1' WHERE id > 1")
        connection.commit()
    CaptureStore.open(db).close()
    filled = sql(db, "SELECT id, host, request_model FROM exchanges ORDER BY id")
    assert len(filled) == 1201 and filled[0][1:] == ("gateway.example.com", "gpt-4o-mini")
    assert all((host, model) == (f"h{number % 7}.example", f"m-{number}") for number, host, model in filled[1:])
