"""`streamfold web --db PATH`: the page's server over a real SQLite capture store
written by `CaptureStore` (the recorders' writer): the list newest first, its
version while a recorder writes (a real uvicorn server on 127.0.0.1), an
exchange in flight, a stored capture folded with its recorded arrival times,
the refusals, and the command line.

The page itself, in a real browser, is test_web_store_browser.py's.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
from bisect import bisect_right
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

import streamfold
from store_helpers import BODIES, record, split
from streamfold.launcher import cli
from streamfold.store import CaptureStore
from streamfold.web.app import create_app
from streamfold.web.server import start_in_thread

LOCAL = "http://127.0.0.1"


def expected_arrivals(body: bytes, reads: list[tuple[bytes, float]]) -> list[float]:
    """When each frame arrived, worked out from the reads as recorded: the time of the read
    that delivered the frame's last byte (the store counts from the request's start, 0.0)."""
    starts, position = [], 0
    for chunk, _ in reads:
        starts.append(position)
        position += len(chunk)
    return [reads[bisect_right(starts, max(frame.end - 1, frame.offset)) - 1][1]
            for frame in streamfold.fold(body).frames]


@pytest.fixture()
def db(tmp_path: Path) -> Iterator[str]:
    path = str(tmp_path / "captures.sqlite")
    with CaptureStore(path) as store:
        for seed, body in enumerate(BODIES[:3], start=1):
            record(store, body.read_bytes(), seed)
    yield path


def client_for(db: str | Path, **options: Any) -> TestClient:
    return TestClient(create_app(db_path=db, **options), base_url=LOCAL)


def listing(client: TestClient | httpx.Client, **query: str) -> dict[str, Any]:
    response = client.get("/api/captures", params=query)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


# -- the list -----------------------------------------------------------------------

def test_the_list_is_newest_first_with_what_each_exchange_folded_to(db: str) -> None:
    answer = listing(client_for(db))
    assert answer["store"] == "captures.sqlite" and answer["more"] is False
    rows = answer["captures"]
    assert [row["id"] for row in rows] == [3, 2, 1]  # started one second apart, the last newest
    for row, body in zip(rows, reversed(BODIES[:3]), strict=True):
        folded = streamfold.fold(body.read_bytes())
        assert (row["method"], row["url"], row["status"]) == ("POST", "https://api.example.com/v1/chat", 200)
        assert row["in_flight"] is False and row["outcome"] == "complete"
        assert row["dialect"] == folded.dialect and row["complete"] == folded.complete
        assert row["frames"] == len(folded.frames) and row["bytes"] == len(body.read_bytes())
        assert isinstance(row["ttft"], float) and isinstance(row["findings"], list)


def test_limit_keeps_the_newest_and_says_there_are_more(db: str) -> None:
    client = client_for(db)
    answer = listing(client, limit="2")
    assert [row["id"] for row in answer["captures"]] == [3, 2] and answer["more"] is True
    for bad in ("0", "-1", "x", "2001", "9" * 40):
        response = client.get("/api/captures", params={"limit": bad})
        assert response.status_code == 400 and "limit" in response.json()["error"]


def test_the_version_holds_until_a_recorder_writes_and_the_new_capture_comes_first(db: str) -> None:
    """A real server reading the store while a `CaptureStore` writes it (WAL: neither waits)."""
    with start_in_thread(create_app(db_path=db)) as server, httpx.Client(base_url=server.url) as http, \
            CaptureStore(db) as store:
        first = listing(http)
        again = listing(http, since=first["version"])
        assert again == {"store": "captures.sqlite", "version": first["version"], "unchanged": True}
        new_id = record(store, BODIES[4].read_bytes(), seed=9)
        store.flush()
        changed = listing(http, since=first["version"])
        assert changed["version"] != first["version"] and "unchanged" not in changed
        assert [row["id"] for row in changed["captures"]] == [new_id, 3, 2, 1]
        assert listing(http, since=changed["version"])["unchanged"] is True


def test_an_exchange_in_flight_shows_as_in_flight_and_folds_what_has_arrived(tmp_path: Path) -> None:
    path = str(tmp_path / "live.sqlite")
    body = (BODIES[0]).read_bytes()
    reads = split(body, 3)
    half = len(reads) // 2
    with CaptureStore(path) as store:
        client = client_for(path)
        exchange = store.begin("POST", "https://api.example.com/v1/messages", (), b"{}", started=time.time())
        exchange.response(200, [("content-type", "text/event-stream")], at=0.04)
        for chunk, at in reads[:half]:
            exchange.read(chunk, at=at)
        store.flush()
        row = listing(client)["captures"][0]
        arrived = sum(len(chunk) for chunk, _ in reads[:half])
        assert row["in_flight"] is True and row["outcome"] is None and row["dialect"] is None
        assert row["bytes"] == arrived and row["reads"] == half
        view = client.get(f"/api/captures/{exchange.id}/fold").json()
        assert view["stored"]["in_flight"] is True and view["capture"]["size"] == arrived
        assert "store-unfinished" in [d["code"] for d in view["result"]["diagnostics"]]
        version = listing(client)["version"]
        for chunk, at in reads[half:]:
            exchange.read(chunk, at=at)
        exchange.end("complete", at=2.0)
        store.flush()
        ended = listing(client, since=version)["captures"][0]
        assert ended["in_flight"] is False and ended["outcome"] == "complete" and ended["bytes"] == len(body)
        assert ended["frames"] == len(streamfold.fold(body).frames)


# -- a stored capture folded ------------------------------------------------------------

def test_a_stored_capture_folds_with_its_recorded_arrival_times(db: str) -> None:
    client = client_for(db)
    body = BODIES[1].read_bytes()
    arrivals = expected_arrivals(body, split(body, 2))
    view = client.get("/api/captures/2/fold").json()
    assert view["arrivals"] == arrivals
    assert [row["time"] for row in view["frames"]] == [round(at, 6) for at in arrivals]
    assert view["capture"]["source"] == "store" and view["capture"]["size"] == len(body)
    # The first byte of the body, counted from the request's start as the recorder timed it.
    assert view["stream_timing"]["first_byte"] == split(body, 2)[0][1]
    assert view["stored"] == {"id": 2, "store": "captures.sqlite", "method": "POST",
                              "url": "https://api.example.com/v1/chat", "status": 200, "outcome": "complete",
                              "in_flight": False, "started_at": 1_800_000_002.0, "reads": len(split(body, 2)),
                              "bytes": len(body)}
    # The same fold as the bytes pasted: only the times and the store's own note differ.
    pasted = client.post("/api/fold", content=body).json()
    assert view["result"]["choices"] == pasted["result"]["choices"]
    assert view["provenance"] == pasted["provenance"] and "arrivals" not in pasted


def test_the_page_s_fold_by_range_carries_the_stored_times_to_every_row(db: str) -> None:
    client = client_for(db)
    body = BODIES[2].read_bytes()
    arrivals = expected_arrivals(body, split(body, 3))
    lines = [json.loads(line) for line in client.get("/api/captures/3/fold?frames=range").text.splitlines()]
    assert all("progress" in line for line in lines[:-1])
    view = lines[-1]["view"]
    assert "frames" not in view and view["frame_count"] == len(arrivals) and view["arrivals"] == arrivals
    rows = client.get("/api/frames", params={"fold": view["fold_id"], "start": "0", "count": "5000"}).json()["frames"]
    assert [row["time"] for row in rows] == [round(at, 6) for at in arrivals]


def test_a_gzip_reply_is_stored_as_sent_and_shown_inflated(tmp_path: Path) -> None:
    path = str(tmp_path / "gz.sqlite")
    body = BODIES[0].read_bytes()
    packed = gzip.compress(body)
    with CaptureStore(path) as store:
        exchange = store.begin("POST", "https://api.example.com/v1/messages", (), b"{}")
        exchange.response(200, [("content-type", "text/event-stream"), ("content-encoding", "gzip")], at=0.01)
        for start in range(0, len(packed), 50):
            exchange.read(packed[start : start + 50], at=0.1 + start / 1000)
        exchange.end("complete", at=1.0)
    client = client_for(path)
    assert client.get(f"/api/captures/{exchange.id}/body").content == body
    view = client.get(f"/api/captures/{exchange.id}/fold").json()
    assert view["result"]["choices"] == streamfold.fold(body).to_dict()["choices"]
    assert len(view["arrivals"]) == len(view["frames"]) and view["stored"]["bytes"] == len(packed)


# -- refusals -------------------------------------------------------------------------

def test_without_db_there_is_no_list(tmp_path: Path) -> None:
    client = TestClient(create_app(), base_url=LOCAL)
    assert client.get("/api/meta").json()["store"] is None
    for url in ("/api/captures", "/api/captures/1/fold", "/api/captures/1/body"):
        response = client.get(url)
        assert response.status_code == 404 and "--db" in response.json()["error"]
    with pytest.raises(ValueError, match="db_path"):
        create_app(open_stored=1)


def test_a_store_that_does_not_exist_yet_is_said_and_listed_once_written(tmp_path: Path) -> None:
    path = tmp_path / "later.sqlite"
    client = client_for(path)
    response = client.get("/api/captures")
    assert response.status_code == 404
    assert response.json()["missing"] is True and "no capture store at" in response.json()["error"]
    with CaptureStore(str(path)) as store:
        record(store, BODIES[0].read_bytes())
    assert [row["id"] for row in listing(client)["captures"]] == [1]


@pytest.mark.parametrize("content", [b"", b"data: not a store\n\n", b"SQLite format 3\x00" + b"\x00" * 200])
def test_a_file_that_is_not_a_store_is_said(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_bytes(content)
    response = client_for(path).get("/api/captures")
    assert response.status_code == 422
    answer = response.json()
    assert answer["missing"] is False and "notes.sqlite" in answer["error"] and "captures" not in answer


def test_an_unknown_or_malformed_id_is_404_with_what_the_store_holds(db: str) -> None:
    client = client_for(db)
    response = client.get("/api/captures/99/fold")
    assert response.status_code == 404 and "no capture #99" in response.json()["error"]
    assert "#1, #2, #3" in response.json()["error"]
    for bad in ("abc", "1.5", "-1", "9" * 25, "%31%00"):
        for what in ("fold", "body"):
            response = client.get(f"/api/captures/{bad}/{what}")
            assert response.status_code == 404, (bad, what)
    # By range the answer has begun: the error is its last line.
    last = json.loads(client.get("/api/captures/99/fold?frames=range").text.splitlines()[-1])
    assert "no capture #99" in last["error"]


def test_a_stored_capture_over_max_size_is_refused_with_the_option_to_raise_it(db: str) -> None:
    client = client_for(db, max_size=100)
    for what in ("fold", "body"):
        response = client.get(f"/api/captures/1/{what}")
        assert response.status_code == 413 and "--max-size" in response.json()["error"]


def test_the_store_s_endpoints_keep_the_page_s_guards(db: str) -> None:
    client = client_for(db)
    response = client.get("/api/captures", headers={"host": "evil.example:80"})
    assert response.status_code == 403
    response = client.get("/api/captures/1/fold", headers={"origin": "http://localhost:3000"})
    assert response.status_code == 403
    response = client.get("/api/captures")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["cache-control"] == "no-store"
    assert client.get("/api/captures/1/fold", params={"dialect": "nope"}).status_code == 400


# -- the command ------------------------------------------------------------------------

def test_the_command_refuses_what_is_not_a_store(tmp_path: Path, db: str) -> None:
    runner = CliRunner()
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    fake = tmp_path / "fake.sqlite"
    fake.write_text("data: {}\n\n")
    other = tmp_path / "other.sqlite"
    with CaptureStore(str(other)) as store:
        record(store, BODIES[0].read_bytes())
    for arguments, said in [
        (["--db", str(text)], "not a capture store"),
        (["--db", str(tmp_path)], "capture store"),
        ([str(fake)], "not a capture store"),
        ([f"{db}#x"], "must be a capture id"),
        ([str(tmp_path / "missing.sqlite#1")], "no capture store at"),
        (["--db", db, f"{other}#1"], "another store"),
    ]:
        result = runner.invoke(cli, ["web", *arguments])
        assert result.exit_code == 2, (arguments, result.output)
        assert said in result.output, (arguments, result.output)


def serve_command(*arguments: str) -> Iterator[str]:
    """Run `streamfold web ARGUMENTS` and yield its URL; stop it afterwards."""
    process = subprocess.Popen([sys.executable, "-m", "streamfold", "web", *arguments, "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        lines = []
        while not (lines and lines[-1].startswith("streamfold web: http")):
            line = process.stdout.readline()
            assert line, process.stderr.read() if process.stderr else ""
            lines.append(line)
        yield lines[-1].split()[2]
    finally:
        process.terminate()
        process.wait(10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def test_web_db_ref_opens_that_capture_and_lists_its_store(db: str) -> None:
    for url in serve_command(f"{db}#2"):
        meta = httpx.get(f"{url}api/meta").json()
        assert meta["store"] == {"name": "captures.sqlite", "open": 2} and meta["capture"] is None
        assert [row["id"] for row in httpx.get(f"{url}api/captures").json()["captures"]] == [3, 2, 1]
        assert httpx.get(f"{url}api/captures/2/fold").json()["stored"]["id"] == 2
    for url in serve_command(db):
        assert httpx.get(f"{url}api/meta").json()["store"] == {"name": "captures.sqlite", "open": "latest"}


def test_web_db_waits_for_a_store_a_recorder_has_not_written_yet(tmp_path: Path) -> None:
    path = tmp_path / "soon.sqlite"
    for url in serve_command("--db", str(path), str(BODIES[0])):
        meta = httpx.get(f"{url}api/meta").json()
        assert meta["store"] == {"name": "soon.sqlite", "open": None} and meta["capture"]["name"] == BODIES[0].name
        assert httpx.get(f"{url}api/captures").json()["missing"] is True
        with CaptureStore(str(path)) as store:
            record(store, BODIES[0].read_bytes())
        assert [row["id"] for row in httpx.get(f"{url}api/captures").json()["captures"]] == [1]
