"""`fleet fold`: every capture the suite holds, folded into Parquet, reads back exactly as `tables()` makes
its rows from `show`'s fold; each kind of input becomes the captures it holds."""

from __future__ import annotations

import base64
import datetime
import gc
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fleet_helpers import ROOT, fold_here, in_order, jsonl, rows, sse
from store_helpers import BODIES, record
from streamfold.fleet import batch
from streamfold.fleet.arrow import folded_schema, split
from streamfold.fleet.batch import INPUT_SCHEMA, SLICE, fold_batch, fold_records
from streamfold.services.capture import InputError
from streamfold.services.load import load
from streamfold.store import CaptureStore
from streamfold.tables import SCHEMA, CaptureInfo, tables

UTC = datetime.timezone.utc
FILES = sorted(path for folder in ("captures", "inputs") for path in (ROOT / "tests" / folder).rglob("*")
               if path.is_file() and path.suffix != ".md")
CHAT = '{"id":"c1","model":"m-1","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}'
STOP = '{"id":"c1","model":"m-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}'


@pytest.fixture(scope="module")
def suite_fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fleet") / "out"
    run = fold_here([ROOT / "tests" / "captures", ROOT / "tests" / "inputs"], out)
    assert run.failures == [] and run.captures >= len(FILES)
    return out


def _expected(path: Path) -> dict[str, list[dict[str, object]]]:
    """What `tables()` makes of `show`'s fold of one single-capture file."""
    loaded = load(path.read_bytes())
    timing = loaded.timing
    info = CaptureInfo(source=loaded.capture.source, location=str(path), url=loaded.capture.url,
                       status=loaded.capture.status, body_bytes=len(loaded.capture.body),
                       read_count=len(loaded.capture.reads) if loaded.capture.reads else None,
                       ttfb=None if timing is None else timing.ttfb, ttft=None if timing is None else timing.ttft,
                       duration=None if timing is None else timing.duration)
    return tables(loaded.result, str(path), capture=info)


def test_every_capture_reads_back_as_tables_makes_it(suite_fleet: Path) -> None:
    folded = {name: {} for name in SCHEMA if name != "frames"}
    for name in folded:
        for row in rows(suite_fleet, name):
            folded[name].setdefault(row["capture_id"], []).append(row)
    checked = 0
    for path in FILES:
        try:
            expected = _expected(path)
        except InputError:
            continue
        if expected["captures"][0]["capture_id"] not in folded["captures"]:
            continue  # a file of many captures (a HAR, a cassette): its entries are checked below
        checked += 1
        for name, table in folded.items():
            got = table.get(str(path), [])
            want = in_order(name, [{**row, "fingerprint": None} for row in expected[name]])
            assert [{**row, "fingerprint": None} for row in got] == want, (path, name)
    assert checked > 300


def test_a_file_of_many_captures_gives_one_per_streamed_or_failed_entry(suite_fleet: Path) -> None:
    captures = {row["capture_id"]: row for row in rows(suite_fleet, "captures")}
    har = str(ROOT / "tests" / "inputs" / "base64-two-streams.har")
    assert [key for key in captures if key.startswith(har)] == [f"{har}#1", f"{har}#2"]
    for entry in ("1", "2"):
        row = captures[f"{har}#{entry}"]
        assert (row["location"], row["entry"], row["source"]) == (har, entry, "har")
    assert [(captures[f"{har}#{entry}"]["dialect"], captures[f"{har}#{entry}"]["outcome_class"])
            for entry in "12"] == [("openai-chat", "complete"), ("unknown", "errored")]


def test_an_input_no_reader_takes_is_one_unreadable_row_saying_why(suite_fleet: Path) -> None:
    path = str(ROOT / "tests" / "inputs" / "har-no-entries.har")
    (row,) = [row for row in rows(suite_fleet, "captures") if row["capture_id"] == path]
    assert row["outcome_class"] == "unreadable" and "holds no requests" in row["read_error"]


def test_jsonl_records_with_arrival_times_and_request_metadata(tmp_path: Path) -> None:
    body = sse(CHAT, STOP)
    arrivals = [[0, 0.5], [len(sse(CHAT, done=False)), 1.25]]
    source = jsonl(tmp_path / "records.jsonl", [
        {"id": "a", "body": body.decode(), "arrivals": arrivals, "method": "POST",
         "url": "https://gateway.example/v1/chat/completions", "model": "m", "started_at": "2026-12-01T10:00:00Z",
         "status": 200, "outcome": "complete", "response_headers": {"content-type": "text/event-stream"}},
        {"id": "b", "body_base64": base64.b64encode(sse(CHAT, done=False)).decode(), "started_at": 1765000000},
        "{not json",
        {"id": "d", "body_base64": "%%%"},
        {"id": "e"},
        [1, 2],
    ])
    out = tmp_path / "out"
    run = fold_here([source], out)
    assert (run.captures, run.unreadable, run.failures) == (6, 4, [])
    captures = {row["capture_id"].rpartition("#")[2].rpartition(":")[2]: row for row in rows(out, "captures")}
    first = captures["a"]
    assert (first["host"], first["request_model"], first["model"], first["status"], first["outcome_class"]) == (
        "gateway.example", "m", "m-1", 200, "complete")
    assert first["started_at"] == datetime.datetime(2026, 12, 1, 10, tzinfo=UTC)
    assert (first["ttfb"], first["ttft"], first["read_count"], first["entry"]) == (0.5, 0.5, 2, "1")
    assert captures["b"]["outcome_class"] == "upstream-cut"
    assert captures["b"]["started_at"] == datetime.datetime.fromtimestamp(1765000000, UTC)
    assert "line 3 is not JSON" in captures["3"]["read_error"]
    assert "not base64" in captures["d"]["read_error"]
    assert "no `body`" in captures["e"]["read_error"]
    assert "not a JSON object" in captures["6"]["read_error"]
    days = sorted(path.parent.parent.name for path in (out / "captures").rglob("*.parquet"))
    assert "day=2026-12-01" in days and "day=unknown" in days


def test_parquet_with_a_body_column(tmp_path: Path) -> None:
    table = pa.table({"id": ["x", "y"], "body": [sse(CHAT, STOP), b"<!doctype html><html><title>502 Bad Gateway</title></html>"],
                      "url": ["https://api.openai.com/v1/chat/completions", None]})
    pq.write_table(table, tmp_path / "bodies.parquet")
    pq.write_table(pa.table({"text": ["no body here"]}), tmp_path / "nobody.parquet")
    out = tmp_path / "out"
    run = fold_here([tmp_path / "bodies.parquet", tmp_path / "nobody.parquet"], out)
    assert [str(failure) for failure in run.failures] == [
        f"{tmp_path / 'nobody.parquet'}: cannot be read: has no `body` column (its columns: text)"]
    found = {row["capture_id"]: row for row in rows(out, "captures")}
    x, y = found[f"{tmp_path / 'bodies.parquet'}#x"], found[f"{tmp_path / 'bodies.parquet'}#y"]
    assert (x["dialect"], x["outcome_class"], x["host"], x["entry"]) == ("openai-chat", "complete", "api.openai.com", "0")
    assert y["outcome_class"] == "not-a-stream"


def test_a_capture_store_each_ended_exchange_with_its_times(tmp_path: Path) -> None:
    path = tmp_path / "proxy.sqlite"
    with CaptureStore.open(str(path)) as store:
        ids = [record(store, body.read_bytes(), seed) for seed, body in enumerate(BODIES[:4], 1)]
        cut = record(store, BODIES[0].read_bytes(), 9, outcome="client-cut")
        flight = store.begin("POST", "https://api.example.com/v1/chat", (), b"{}", started=1_800_000_100.0)
        flight.response(200, [("content-type", "text/event-stream")], at=0.1)
    out = tmp_path / "out"
    run = fold_here([path], out)
    assert run.captures == 5  # the one in flight waits for a later run
    found = {row["capture_id"]: row for row in rows(out, "captures")}
    for exchange_id in ids:
        row = found[f"{path}#{exchange_id}"]
        assert (row["source"], row["location"], row["entry"], row["host"]) == (
            "store", f"{path}#{exchange_id}", str(exchange_id), "api.example.com")
        assert row["ttfb"] is not None and row["read_count"] > 0 and row["started_at"].year == 2027
    assert found[f"{path}#{cut}"]["outcome_class"] == "client-cut"


def test_fold_batch_is_arrow_in_arrow_out_and_split_is_its_inverse() -> None:
    records = [{**dict.fromkeys(INPUT_SCHEMA.names), "capture_id": f"b{index}", "kind": "body",
                "data": sse(CHAT, STOP)} for index in range(3)]
    batch = pa.Table.from_pylist(records, schema=INPUT_SCHEMA)
    folded = fold_batch(batch.to_batches()[0], frames=True)
    assert folded.schema == folded_schema(frames=True) and folded.num_rows == 3
    tables_ = split(folded.slice(1, 2))  # a sliced batch splits as well: offsets are honoured
    assert [row["capture_id"] for row in tables_["choices"].to_pylist()] == ["b1", "b2"]
    assert tables_["frames"].num_rows == 2 * 3
    assert tables_["captures"].column("finding_codes").to_pylist() == [[], []]


def test_fold_records_folds_what_fold_batch_folds_over_every_capture_and_input() -> None:
    """The local engine folds a batch's records as they are (`fold_records`), Ray and Spark an Arrow table of
    them (`fold_batch`): over every capture and input file the suite holds, in slices that end mid-batch, the
    folded rows are the same, in the same order."""
    paths = sorted(path for folder in (ROOT / "tests" / "captures", ROOT / "tests" / "inputs")
                   for path in folder.rglob("*") if path.is_file())
    records = [{**dict.fromkeys(INPUT_SCHEMA.names), "capture_id": str(path), "kind": "file",
                "data": path.read_bytes()} for path in paths]
    assert len(records) > SLICE
    by_records = fold_records(records, frames=True)
    assert by_records.num_rows >= len(records)
    assert by_records.to_pylist() == fold_batch(pa.Table.from_pylist(records, schema=INPUT_SCHEMA),
                                                frames=True).to_pylist()
    assert fold_records([]).schema == folded_schema() and fold_records([]).num_rows == 0


def test_a_batch_folds_with_what_was_alive_frozen_and_leaves_the_collector_as_it_was(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """In a process the fleet owns (`freeze_what_lives_on`), `fold_records` freezes what is alive (the garbage
    collector then walks only what the fold makes) and unfreezes it after; a process that froze objects of
    its own keeps them frozen; a caller's process is left alone."""
    record = {**dict.fromkeys(INPUT_SCHEMA.names), "capture_id": "a", "kind": "file", "data": sse(CHAT, STOP)}
    frozen_while_folding: list[int] = []
    real = batch.fold_capture
    monkeypatch.setattr(batch, "fold_capture",  # the real fold, seen from inside
                        lambda capture: frozen_while_folding.append(gc.get_freeze_count()) or real(capture))
    assert gc.get_freeze_count() == 0
    assert fold_records([record]).num_rows == 1 and frozen_while_folding == [0]
    monkeypatch.setattr(batch, "freeze_what_lives_on", True)
    assert fold_records([record]).num_rows == 1
    assert frozen_while_folding[1] > 0 and gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert fold_records([record]).num_rows == 1 and gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_urls_through_fsspec(tmp_path: Path) -> None:
    fsspec = pytest.importorskip("fsspec", reason="URLs are read through fsspec (the `remote` extra)")
    memory = fsspec.filesystem("memory")
    memory.pipe("/fleet-test/streams/a.sse", sse(CHAT, STOP))
    memory.pipe("/fleet-test/streams/nested/b.sse", sse(CHAT, done=False))
    memory.pipe("/fleet-test/records.jsonl", b'{"id": "r", "body": "data: {}\\n\\n"}\n')
    try:
        out = tmp_path / "out"
        run = fold_here(["memory://fleet-test/streams/", "memory://fleet-test/records.jsonl",
                         "memory://fleet-test/none/", "nosuchprotocol://x/y"], out)
        found = {row["capture_id"]: row for row in rows(out, "captures")}
        assert sorted(found) == ["memory:///fleet-test/records.jsonl#r", "memory:///fleet-test/streams/a.sse",
                                 "memory:///fleet-test/streams/nested/b.sse"]
        assert found["memory:///fleet-test/streams/a.sse"]["outcome_class"] == "complete"
        assert [failure.input for failure in run.failures] == ["memory://fleet-test/none/", "nosuchprotocol://x/y"]
        assert all(failure.reason.startswith("cannot read it") for failure in run.failures)
        again = fold_here(["memory://fleet-test/streams/"], out)
        assert (again.captures, again.inputs_skipped) == (0, 2)
    finally:
        memory.rm("/fleet-test", recursive=True)


def test_a_stored_capture_s_rows_are_what_the_store_s_own_fold_makes(tmp_path: Path) -> None:
    """The fleet's rows of a stored exchange equal `store.bulk.exchange_tables`, the rows the recording's
    summary is a projection of: a fleet and the store say the same thing about a capture."""
    from streamfold.store.bulk import exchange_rows, exchange_tables, iter_exchanges

    path = tmp_path / "proxy.sqlite"
    with CaptureStore.open(str(path)) as store:
        for seed, body in enumerate(BODIES[:6], 1):
            record(store, body.read_bytes(), seed, outcome="client-cut" if seed == 3 else "complete")
    out = tmp_path / "out"
    fold_here([path], out)
    listed = {row["id"]: row for row in exchange_rows(str(path))}
    for stored in iter_exchanges(str(path), sorted(listed)):
        location = f"{path}#{stored.id}"
        fingerprint = f"{listed[stored.id]['ended_at']}:{listed[stored.id]['body_bytes']}"
        expected = exchange_tables(stored, location, fingerprint=fingerprint)
        expected["captures"][0]["entry"] = str(stored.id)
        for name in ("captures", "choices", "tool_calls", "findings", "usage"):
            got = [row for row in rows(out, name) if row["capture_id"] == location]
            assert got == in_order(name, expected[name]), (stored.id, name)


def test_a_damaged_exchange_is_one_unreadable_row_and_the_others_fold(tmp_path: Path) -> None:
    import contextlib
    import sqlite3

    path = tmp_path / "proxy.sqlite"
    with CaptureStore.open(str(path)) as store:
        ids = [record(store, body.read_bytes(), seed) for seed, body in enumerate(BODIES[:3], 1)]
    # closing(): a connection's own `with` commits but leaves it open, which 3.13 reports as a ResourceWarning
    # (an error here) in whichever test the garbage collector next runs in.
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE reads SET sizes = x'0102' WHERE exchange = ?", (ids[1],))
    out = tmp_path / "out"
    run = fold_here([path], out)
    assert (run.captures, run.unreadable, run.failures) == (3, 1, [])
    found = {row["capture_id"]: row for row in rows(out, "captures")}
    damaged = found[f"{path}#{ids[1]}"]
    assert damaged["outcome_class"] == "unreadable" and "damaged" in damaged["read_error"]
    assert found[f"{path}#{ids[2]}"]["outcome_class"] != "unreadable"
