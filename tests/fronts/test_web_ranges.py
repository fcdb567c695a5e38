"""The page's way through a big capture (issue 11: a 100k-frame capture's `/api/fold` was 56 MB
of JSON and the page took 18.5 s): `POST /api/fold?frames=range` answers its progress as
NDJSON, then the view without the rows; `GET /api/frames` serves the rows of a kept fold by
range, the same rows `frame_views` makes for the whole view."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from streamfold.web.app import create_app
from streamfold.web.ranges import MAX_RANGE

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = [ROOT / "examples" / "openai-broken.sse", *sorted((ROOT / "tests" / "captures").rglob("*.sse"))[::5],
            ROOT / "tests" / "inputs" / "curl-v.txt"]
LOCAL = "http://127.0.0.1"


def chat(count: int) -> bytes:
    chunk = ('data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
             '"delta":{"content":"w%d "},"finish_reason":null}]}\n\n')
    return b"".join((chunk % index).encode() for index in range(count)) + b"data: [DONE]\n\n"


def by_range(client: TestClient, data: bytes, **query: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The NDJSON lines of a fold by range: its progress lines, and its last line."""
    response = client.post("/api/fold", content=data, params={"frames": "range", **query})
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in response.text.splitlines()]
    return lines[:-1], lines[-1]


def test_the_rows_by_range_are_the_rows_of_the_whole_view() -> None:
    client = TestClient(create_app(), base_url=LOCAL)
    for path in CAPTURES:
        data = path.read_bytes()
        whole = client.post("/api/fold", content=data).json()
        _, last = by_range(client, data)
        view = last["view"]
        assert "frames" not in view and view["frame_count"] == len(whole["frames"]), path
        assert view["frame_kinds"] == "".join(row["kind"][0] if row["kind"] != "empty" else "e"
                                              for row in whole["frames"])
        assert {key: value for key, value in view.items() if key not in ("frame_count", "frame_kinds", "fold_id",
                                                                       "timing")} == {
            key: value for key, value in whole.items() if key not in ("frames", "timing")}, path
        rows = []
        for start in range(0, view["frame_count"], 3):
            answer = client.get("/api/frames", params={"fold": view["fold_id"], "start": start, "count": 3}).json()
            assert answer["start"] == start and answer["total"] == view["frame_count"]
            rows += answer["frames"]
        assert rows == whole["frames"], path


def test_progress_is_reported_in_bytes_as_it_folds() -> None:
    data = chat(20_000)  # ~2.4 MB: a few 1 MiB slices
    progress, last = by_range(TestClient(create_app(), base_url=LOCAL), data)
    assert len(progress) >= 2 and all(line["total"] == len(data) for line in progress)
    done = [line["progress"] for line in progress]
    assert done == sorted(done) and done[-1] == len(data) and done[0] < len(data)
    assert last["view"]["frame_count"] == 20_001


def test_a_range_is_at_most_max_range_rows_and_past_the_end_is_empty() -> None:
    client = TestClient(create_app(), base_url=LOCAL)
    _, last = by_range(client, chat(MAX_RANGE + 10))
    fold = last["view"]["fold_id"]
    rows = client.get("/api/frames", params={"fold": fold, "start": 0, "count": MAX_RANGE * 2}).json()["frames"]
    assert len(rows) == MAX_RANGE and rows[-1]["index"] == MAX_RANGE - 1
    tail = client.get("/api/frames", params={"fold": fold, "start": MAX_RANGE, "count": 100}).json()["frames"]
    assert [row["index"] for row in tail] == list(range(MAX_RANGE, MAX_RANGE + 11))
    assert tail[-1]["summary"] == "[DONE]"
    assert client.get("/api/frames", params={"fold": fold, "start": 10**9}).json()["frames"] == []


@pytest.mark.parametrize("query", [{"start": "-1"}, {"count": "x"}, {"start": "1e3"}, {"count": "²"}])
def test_a_range_with_a_wrong_number_is_400(query: dict[str, str]) -> None:
    client = TestClient(create_app(), base_url=LOCAL)
    _, last = by_range(client, chat(5))
    response = client.get("/api/frames", params={"fold": last["view"]["fold_id"], **query})
    assert response.status_code == 400 and "whole number" in response.json()["error"]


def test_the_server_keeps_the_last_max_folds_folds() -> None:
    client = TestClient(create_app(max_folds=2), base_url=LOCAL)
    folds = [by_range(client, chat(count))[1]["view"]["fold_id"] for count in (3, 4, 5)]
    first = client.get("/api/frames", params={"fold": folds[0]})
    assert first.status_code == 404 and "fold the capture again" in first.json()["error"]
    assert [len(client.get("/api/frames", params={"fold": fold}).json()["frames"]) for fold in folds[1:]] == [5, 6]
    assert client.get("/api/frames", params={"fold": "no-such-fold"}).status_code == 404


def test_the_fold_slot_is_given_back_after_a_fold_by_range() -> None:
    client = TestClient(create_app(max_folds=1), base_url=LOCAL)
    for _ in range(3):
        assert "view" in by_range(client, chat(10))[1]
    assert client.post("/api/fold", content=chat(3)).status_code == 200


def test_unusable_input_is_the_last_line_with_its_reason() -> None:
    client = TestClient(create_app(), base_url=LOCAL)
    broken = b'{"log": {"entries": [' + b"x" * 10 + b"]}}"
    _, last = by_range(client, broken)
    assert last["status"] == 400 and "HAR" in last["error"] and "view" not in last
    refused = client.post("/api/fold", content=b"data: {}\n\n", params={"frames": "range", "dialect": "nope"})
    assert refused.status_code == 400 and "unknown dialect" in refused.json()["error"]


@pytest.mark.parametrize("origin", ["https://evil.example", "http://localhost:3000", "null"])
def test_the_new_endpoints_refuse_other_origins(origin: str) -> None:
    client = TestClient(create_app(), base_url=LOCAL)
    _, last = by_range(client, chat(5))
    fold = last["view"]["fold_id"]
    for response in (client.get("/api/frames", params={"fold": fold}, headers={"Origin": origin}),
                     client.post("/api/fold", params={"frames": "range"}, content=chat(5), headers={"Origin": origin})):
        assert response.status_code == 403 and "other origins" in response.json()["error"]
        assert "frames" not in response.text


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1.nip.io", "localhost:8080"])
def test_the_new_endpoints_refuse_foreign_hosts(host: str) -> None:
    client = TestClient(create_app(), base_url=LOCAL)
    _, last = by_range(client, chat(5))
    fold = last["view"]["fold_id"]
    for response in (client.get("/api/frames", params={"fold": fold}, headers={"Host": host}),
                     client.post("/api/fold", params={"frames": "range"}, content=chat(5), headers={"Host": host})):
        assert response.status_code == 403 and "localhost, 127.0.0.1 or [::1]" in response.json()["error"]


def test_rows_by_range_are_strict_json_with_the_streams_markup_as_text() -> None:
    client = TestClient(create_app(), base_url=LOCAL)
    data = b'event: <script>alert(1)</script>\ndata: {"x":"</script><img src=x onerror=alert(1)>"}\n\n'
    _, last = by_range(client, data)
    response = client.get("/api/frames", params={"fold": last["view"]["fold_id"]})
    assert response.headers["content-type"] == "application/json"
    assert response.headers["content-security-policy"].startswith("default-src 'self'")
    (row,) = response.json()["frames"]
    assert row["event"] == "<script>alert(1)</script>" and "<img src=x" in row["raw"]
