"""The capture store on a real SQLite file: writing exchanges (the recorders' API),
reading them back as captures with their arrival times, the summary columns,
WAL readers during a write, the schema version, 0600 files and redaction."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
import zlib
from pathlib import Path

import pytest

from store_helpers import BODIES, CAPTURES, SECRET, record, split
from streamfold.services import InputError, load
from streamfold.services.load import fold_capture
from streamfold.store import (
    SCHEMA_VERSION,
    CaptureStore,
    StoreError,
    get_exchange,
    list_exchanges,
    parse_ref,
    read_stored,
    redact_headers,
    redact_url,
)


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "captures.sqlite")


def test_each_stored_capture_folds_like_its_bytes_with_the_reads_as_arrival_times(db: str) -> None:
    with CaptureStore.open(db) as store:
        ids = [record(store, path.read_bytes(), seed) for seed, path in enumerate(BODIES)]
    assert len(ids) == len(BODIES) >= 8
    for seed, (exchange_id, path) in enumerate(zip(ids, BODIES, strict=True)):
        capture = read_stored(db, exchange_id)
        direct = load(path.read_bytes(), input_format="raw").result
        stored = fold_capture(capture)
        assert capture.body == path.read_bytes()
        assert stored.result.choices == direct.choices and stored.result.errors == direct.errors
        assert [d for d in stored.result.diagnostics if d.frame is not None] == list(direct.diagnostics)
        offsets, times = [], []
        position = 0
        for chunk, at in split(path.read_bytes(), seed):
            offsets.append(position)
            times.append(at)
            position += len(chunk)
        assert capture.reads == tuple(zip(offsets, times, strict=True)) and capture.started == 0.0
        assert stored.timing is not None and stored.timing.arrivals[-1] == times[-1]


def test_the_list_is_newest_first_with_the_summary_show_would_give(db: str) -> None:
    body = (CAPTURES / "openai" / "a2-tool-call-empty-arguments.sse").read_bytes()
    with CaptureStore.open(db) as store:
        first = record(store, body, 1)
        second = record(store, body[: len(body) // 2], 2, outcome="upstream-cut")
    rows = list_exchanges(db)
    assert [row["id"] for row in rows] == [second, first]
    loaded = fold_capture(read_stored(db, first))
    assert loaded.timing is not None
    top, bottom = rows[1], rows[0]
    assert top["dialect"] == loaded.result.dialect == "openai-chat" and top["complete"] is True
    assert top["ttft"] == loaded.timing.ttft and top["duration"] == loaded.timing.duration
    assert top["frames"] == loaded.result.frame_counts["total"] and top["bytes"] == len(body)
    assert top["finish_reason"] == "tool_calls" and top["outcome"] == "complete" and top["status"] == 200
    assert bottom["complete"] is False and bottom["outcome"] == "upstream-cut"
    assert "store-unfinished" in bottom["findings"] and "input-store" not in bottom["findings"]
    assert parse_ref(db) == (db, None) and read_stored(db).body == body[: len(body) // 2]  # alone: the latest


def test_a_reader_sees_committed_exchanges_while_the_writer_is_mid_exchange(db: str) -> None:
    body = (CAPTURES / "openai" / "a2-tool-call-empty-arguments.sse").read_bytes()
    store = CaptureStore.open(db)
    try:
        done = record(store, body, 1)
        live = store.begin("POST", "https://api.example.com/v1/live", (), b"")
        live.response(200, [("content-type", "text/event-stream")])
        live.read(body[:100], at=0.1)
        store.flush()
        rows = {row["id"]: row for row in list_exchanges(db)}  # another connection, while the writer holds its own
        assert rows[done]["outcome"] == "complete"
        assert rows[live.id]["in_flight"] is True and rows[live.id]["outcome"] is None
        assert rows[live.id]["bytes"] == 100 and rows[live.id]["dialect"] is None
        assert read_stored(db, live.id).body == body[:100]
        assert "still in flight" in " ".join(note.message for note in read_stored(db, live.id).notes)
        live.read(body[100:], at=0.2)
        live.end("complete")
        store.flush()
        assert list_exchanges(db)[0]["dialect"] == "openai-chat"
    finally:
        store.close()


def test_many_threads_record_at_once_and_every_byte_lands_in_order(db: str) -> None:
    bodies = [(CAPTURES / "openai" / "a2-tool-call-empty-arguments.sse").read_bytes() * 3 for _ in range(20)]
    ids: list[int] = [0] * len(bodies)
    with CaptureStore.open(db) as store:
        def work(slot: int) -> None:
            exchange = store.begin("GET", f"http://127.0.0.1/{slot}", (), b"")
            for index in range(0, len(bodies[slot]), 13):
                exchange.read(bodies[slot][index : index + 13])
            exchange.end("complete")
            ids[slot] = exchange.id

        threads = [threading.Thread(target=work, args=(slot,)) for slot in range(len(bodies))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(set(ids)) == len(bodies)
    for slot, exchange_id in enumerate(ids):
        stored = get_exchange(db, exchange_id)
        assert stored.url == f"http://127.0.0.1/{slot}" and stored.body == bodies[slot]
        assert [offset for offset, _ in stored.reads] == list(range(0, len(bodies[slot]), 13))
        assert all(a <= b for (_, a), (_, b) in zip(stored.reads, stored.reads[1:], strict=False))


def test_a_begin_waits_out_a_writer_slower_than_its_poll(db: str) -> None:
    """Another process holding the file's write lock keeps the writer thread from answering `begin` for
    longer than `begin` polls (0.5 s): it polls again. (Before Python 3.11 the future's timeout was not
    the builtin `TimeoutError`; CI under load once lost a recording thread to it.)"""
    with CaptureStore.open(db) as store:
        store.begin("GET", "http://127.0.0.1/first").end("complete")
        store.flush()
        other = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN EXCLUSIVE")
        release = threading.Timer(1.2, other.execute, ("COMMIT",))
        release.start()
        try:
            exchange = store.begin("GET", "http://127.0.0.1/second")
        finally:
            release.join()
            other.close()
        exchange.end("complete")
    assert sorted(row["url"] for row in list_exchanges(db)) == ["http://127.0.0.1/first", "http://127.0.0.1/second"]


def test_reads_are_batched_not_committed_one_by_one(db: str) -> None:
    with CaptureStore.open(db) as store:
        exchange = store.begin("GET", "http://127.0.0.1/", (), b"")
        for _ in range(2000):
            exchange.read(b"data: {}\n\n")
        exchange.end("complete")
    connection = sqlite3.connect(db)
    rows, reads = connection.execute("SELECT COUNT(*), SUM(count) FROM reads").fetchone()
    connection.close()
    assert reads == 2000 and rows < 20  # the reads of one commit are one row
    stored = get_exchange(db)
    assert len(stored.reads) == 2000 and stored.chunks == (b"data: {}\n\n",) * 2000
    assert [offset for offset, _ in stored.reads] == list(range(0, 20000, 10))


def test_damaged_read_rows_are_a_store_error(db: str) -> None:
    with CaptureStore.open(db) as store:
        record(store, b"data: {}\n\n" * 50)
    connection = sqlite3.connect(db)
    connection.execute("UPDATE reads SET sizes = x'0100'")
    connection.commit()
    connection.close()
    with pytest.raises(StoreError, match="damaged: the reads of capture #1 at body offset 0 do not add up"):
        read_stored(db)


def test_files_are_readable_by_their_owner_only(db: str) -> None:
    old = os.umask(0o022)
    try:
        store = CaptureStore.open(db)
        try:
            record(store, b"data: {}\n\n")
            store.flush()
            reader = sqlite3.connect(db)  # a reader keeps the -wal and -shm files in place
            reader.execute("SELECT COUNT(*) FROM exchanges").fetchone()
            for name in (db, f"{db}-wal", f"{db}-shm"):
                assert os.path.exists(name), name
                assert stat.S_IMODE(os.stat(name).st_mode) == 0o600, name
            reader.close()
        finally:
            store.close()
        assert os.umask(0o022) == 0o022  # the process umask was given back
    finally:
        os.umask(old)


def test_a_newer_schema_is_refused_and_left_alone(db: str) -> None:
    CaptureStore.open(db).close()
    connection = sqlite3.connect(db)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    before = Path(db).read_bytes()
    for opening in (lambda: CaptureStore.open(db), lambda: list_exchanges(db)):
        with pytest.raises(StoreError, match=f"schema version {SCHEMA_VERSION + 1}, newer .*upgrade streamfold"):
            opening()
    assert Path(db).read_bytes() == before


@pytest.mark.parametrize("content", [b"", b"not a database at all\n" * 10, b"SQLite format 3\x00" + b"\x00" * 90])
def test_a_file_that_is_not_a_store_is_an_input_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "x.sqlite"
    path.write_bytes(content)
    with pytest.raises(InputError, match=r"capture store|SQLite"):
        read_stored(str(path))


def test_another_sqlite_file_is_not_taken_for_a_store(tmp_path: Path) -> None:
    path = str(tmp_path / "other.db")
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE t (x)")
    connection.commit()
    connection.close()
    for opening in (lambda: CaptureStore.open(path), lambda: list_exchanges(path)):
        with pytest.raises(StoreError, match="not a streamfold capture store"):
            opening()


def test_an_unknown_id_says_which_ids_exist(db: str) -> None:
    with CaptureStore.open(db) as store:
        ids = [record(store, b"data: {}\n\n", seed) for seed in range(3)]
    with pytest.raises(StoreError, match=r"no capture #99 .* 3 captures: #1, #2, #3") as caught:
        read_stored(db, 99)
    assert ids == [1, 2, 3] and isinstance(caught.value, InputError)
    with pytest.raises(StoreError, match="must be a capture id"):
        parse_ref(f"{db}#latest")


def test_credentials_appear_nowhere_in_the_files(db: str) -> None:
    headers = (("Authorization", f"Bearer {SECRET}"), ("x-api-key", SECRET), ("x-goog-api-key", SECRET),
               ("Cookie", f"session={SECRET}"), ("X-Custom-Token", SECRET), ("Content-Type", "application/json"))
    store = CaptureStore.open(db)
    try:
        exchange = store.begin("POST", f"https://user:{SECRET}@api.example.com/v1?key={SECRET}&alt=sse&"
                                       f"api_key={SECRET}&access_token={SECRET}&sig={SECRET}", headers, b"{}")
        exchange.response(200, [("Set-Cookie", f"id={SECRET}; Path=/"), ("content-type", "text/event-stream")])
        exchange.read(b"data: {}\n\n")
        exchange.end("failed", "upstream reset")
        store.flush()
        files = [Path(name) for name in (db, f"{db}-wal") if os.path.exists(name)]
        assert any(path.name.endswith("-wal") for path in files)
        assert all(SECRET.encode() not in path.read_bytes() for path in files)
    finally:
        store.close()
    assert SECRET.encode() not in Path(db).read_bytes()
    stored = get_exchange(db)
    assert dict(stored.request_headers)["Authorization"] == "Bearer REDACTED"
    assert dict(stored.request_headers)["Content-Type"] == "application/json" and stored.redacted
    assert "alt=sse" in stored.url and "key=REDACTED" in stored.url and "user:REDACTED@" in stored.url


def test_keep_secrets_keeps_them(db: str) -> None:
    with CaptureStore.open(db, keep_secrets=True) as store:
        store.begin("GET", f"https://api.example.com/?key={SECRET}", (("x-api-key", SECRET),), b"").end("complete")
    stored = get_exchange(db)
    assert SECRET in stored.url and dict(stored.request_headers)["x-api-key"] == SECRET and not stored.redacted


def test_redaction_keeps_what_is_not_a_credential() -> None:
    kept = (("Idempotency-Key", "abc"), ("anthropic-ratelimit-tokens-remaining", "100"), ("Accept", "*/*"))
    assert redact_headers(kept) == kept
    assert redact_headers((("Authorization", "Basic dXNlcjpwYXNz"),)) == (("Authorization", "Basic REDACTED"),)
    assert redact_url("https://h/v1?max_tokens=5&KEY=x&a=%20b#frag") == "https://h/v1?max_tokens=5&KEY=REDACTED&a=%20b#frag"


def test_the_api_is_misused_loudly(db: str) -> None:
    with CaptureStore.open(db) as store:
        exchange = store.begin("GET", "http://127.0.0.1/", (), b"")
        with pytest.raises(ValueError, match="outcome must be one of"):
            exchange.end("finished")
        exchange.end("client-cut")
        with pytest.raises(ValueError, match="already ended"):
            exchange.end("complete")
    with pytest.raises(StoreError, match="closed"):
        store.begin("GET", "http://127.0.0.1/", (), b"")
    assert json.loads(json.dumps(list_exchanges(db)))[0]["outcome"] == "client-cut"


def test_a_failed_write_is_raised_to_the_recorder_not_lost_silently(db: str) -> None:
    store = CaptureStore.open(db)
    exchange = store.begin("GET", "http://127.0.0.1/", (), b"")
    store.flush()
    other = sqlite3.connect(db, timeout=10)
    other.execute("DROP TABLE reads")  # the file changed under the writer: its next insert fails
    other.commit()
    other.close()
    exchange.read(b"data: {}\n\n")
    with pytest.raises(StoreError, match=r"writing the capture store .* failed: no such table: reads"):
        store.flush()
    exchange.read(b"data: {}\n\n")  # reads after that are not queued; end() says it
    with pytest.raises(StoreError, match="failed"):
        exchange.end("complete")
    with pytest.raises(StoreError, match="failed"):
        store.begin("GET", "http://127.0.0.1/", (), b"")
    with pytest.raises(StoreError, match="failed"):
        store.close()


def test_a_store_one_may_only_read_is_read(db: str) -> None:
    with CaptureStore.open(db) as store:
        record(store, b"data: {}\n\n")
    os.chmod(db, 0o400)
    try:
        if os.access(db, os.W_OK):
            pytest.skip("running as a user who may write any file (root)")
        assert list_exchanges(db)[0]["outcome"] == "complete"
    finally:
        os.chmod(db, 0o600)


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_compressed_body_is_inflated_read_by_read(db: str, encoding: str) -> None:
    body = (CAPTURES / "openai" / "a2-tool-call-empty-arguments.sse").read_bytes()
    packer = zlib.compressobj(wbits=16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS)
    reads, at = [], 0.0
    for start in range(0, len(body), 200):  # each read carries what the server flushed after 200 bytes
        at += 0.1
        reads.append((packer.compress(body[start : start + 200]) + packer.flush(zlib.Z_SYNC_FLUSH), at))
    reads.append((packer.flush(), at + 0.1))
    with CaptureStore.open(db) as store:
        exchange = store.begin("POST", "https://api.example.com/v1/chat", (), b"")
        exchange.response(200, [("content-type", "text/event-stream"), ("content-encoding", encoding)])
        for chunk, seconds in reads:
            exchange.read(chunk, at=seconds)
        summary = exchange.end("complete").result()
    capture = read_stored(db)
    assert capture.body == body and summary is not None and summary.dialect == "openai-chat" and summary.complete
    assert capture.reads is not None
    assert [offset for offset, _ in capture.reads] == [*range(0, len(body), 200), len(body)]
    loaded = fold_capture(capture)
    assert loaded.result.choices == load(body).result.choices
    assert any(note.code == "gzip-body" for note in capture.notes)
    assert get_exchange(db).body == b"".join(chunk for chunk, _ in reads)  # stored as received


def test_end_returns_at_once_and_the_summary_follows(db: str) -> None:
    body = (CAPTURES / "openai" / "a2-tool-call-empty-arguments.sse").read_bytes()
    with CaptureStore.open(db) as store:
        exchange = store.begin("POST", "https://api.example.com/v1/chat", (), b"")
        exchange.read(body, at=0.5)
        future = exchange.end("complete", at=0.6)
        summary = future.result(timeout=30)
        assert summary is not None and summary.dialect == "openai-chat" and summary.ttft == 0.5
        store.flush()
        assert list_exchanges(db)[0]["dialect"] == "openai-chat"
    with CaptureStore(db, summarize=False) as store:
        exchange = store.begin("POST", "https://api.example.com/v1/chat", (), b"")
        exchange.read(body)
        assert exchange.end("complete").result() is None
    newest = list_exchanges(db)[0]
    assert newest["outcome"] == "complete" and newest["dialect"] is None and newest["bytes"] == len(body)
