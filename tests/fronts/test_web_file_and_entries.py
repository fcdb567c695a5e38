"""The page's last two gaps of issue 11, below the browser: a HAR's entries to pick from (and
`entry` honoured by both fold endpoints), and where each frame of a log or of curl -v/-i output
is in the file (`Capture.segments`, the rows' `file_span`, the view's "file"), for the raw
pane's "file" mode. The browser side is tests/fronts/test_web_file_pane.py."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from feeding import tr_fold
from streamfold.services._logs import LogReader, line_spans
from streamfold.services._readers import detect
from streamfold.services.inputs import read_capture
from streamfold.web import file_view
from streamfold.web.app import create_app
from streamfold.web.fold_view import build_fold_view

INPUTS = Path(__file__).resolve().parents[1] / "inputs"
LOCAL = "http://127.0.0.1"
LINE_INPUTS = sorted(path for path in INPUTS.iterdir() if detect(path.read_bytes()) in ("log", "curl-verbose"))


def test_the_line_based_inputs_are_all_here() -> None:
    names = {path.name for path in LINE_INPUTS}
    assert {"timestamped.log", "python-logging-asctime.log", "python-logging-basic.log", "python-logging-named.log",
            "curl-v.txt", "curl-i.txt", "curl-v-proxy-100-continue.txt"} <= names


def log_lines_by_body(data: bytes) -> list[tuple[int, int, int, int]]:
    """(body start, body end, file start, file end) of each log line that holds stream data, worked out
    without the segments: each line through the log reader, and its place found by splitting the file."""
    reader, produced, at = LogReader(), [], 0
    spans = line_spans(data)
    for number, (line, span) in enumerate(zip(data.decode("utf-8", "replace").splitlines(), spans, strict=True), 1):
        piece, _ = reader.line(line, number)
        if piece:
            produced.append((at, at + len(piece), *span))
            at += len(piece)
    return produced


@pytest.mark.parametrize("path", [path for path in LINE_INPUTS if detect(path.read_bytes()) == "log"],
                         ids=lambda path: path.name)
def test_each_log_frame_maps_back_to_exactly_the_lines_that_made_it(path: Path) -> None:
    data = path.read_bytes()
    capture = read_capture(data)
    assert capture.source == "log" and capture.segments
    result = tr_fold(capture.body)  # the same frames whole, byte by byte and in random chunks
    spans = file_view.SpanMap(capture.segments)
    lines = log_lines_by_body(data)
    assert [segment[2:] for segment in capture.segments] == [line[2:] for line in lines]
    for frame in result.frames:
        made_it = [line for line in lines if line[0] < max(frame.end, frame.offset + 1) and line[1] > frame.offset]
        assert made_it, f"frame {frame.index} came from no line"
        assert spans.span(frame.offset, frame.end) == [made_it[0][2], made_it[-1][3]]
        own = data[made_it[0][2] : made_it[-1][3]].decode()
        # The file's own line: its prefix (a timestamp or a level) kept, the data it logged in it.
        assert own.split("\n")[0][:1].isalnum() and not own.startswith("data:")
        # A logged event object comes after the `event:` line its `type` names: its data line is the logged one.
        raw_lines = frame.raw.decode().split("\n")
        message = next((line for line in raw_lines if line.startswith("data:")), raw_lines[0])
        message = message.removeprefix("data: ").removeprefix("data:")
        assert message.strip() in own


@pytest.mark.parametrize("path", [path for path in LINE_INPUTS if detect(path.read_bytes()) == "curl-verbose"],
                         ids=lambda path: path.name)
def test_each_curl_frame_maps_back_to_its_own_bytes_in_the_file(path: Path) -> None:
    data = path.read_bytes()
    capture = read_capture(data)
    assert capture.source == "curl-verbose" and capture.segments
    result = tr_fold(capture.body)
    spans = file_view.SpanMap(capture.segments)
    for body_start, body_end, file_start, file_end in capture.segments:
        assert capture.body[body_start:body_end] == data[file_start:file_end]  # copied as they are
    assert sum(end - start for start, end, _, _ in capture.segments) == len(capture.body)
    for frame in result.frames:
        start, end = spans.span(frame.offset, frame.end) or (0, 0)
        assert data[start:end] == frame.raw == capture.body[frame.offset : frame.end]


def test_a_body_the_readers_did_not_copy_has_no_segments() -> None:
    # A HAR's body is JSON-escaped or base64 inside the file; a raw body is the file itself.
    for name in ("chrome-export.har", "base64-two-streams.har", "raw-body.sse", "curl-raw-chunked.txt",
                 "trace-hex.txt"):
        assert read_capture((INPUTS / name).read_bytes()).segments == (), name
        assert "file" not in build_fold_view((INPUTS / name).read_bytes()), name


def test_the_fold_view_carries_the_file_and_each_row_its_span() -> None:
    data = (INPUTS / "timestamped.log").read_bytes()
    view = build_fold_view(data)
    assert view["file"]["size"] == len(data) and view["file"]["omitted"] is None
    assert base64.b64decode(view["file"]["base64"]) == data
    first = view["frames"][0]
    start, end = first["file_span"]
    assert data[start:end].decode() == data.decode().splitlines()[0]
    assert data[start:end].startswith(b"16:58:35.441 > chunk {")


def test_a_file_over_the_limit_is_not_carried_and_the_view_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    data = (INPUTS / "timestamped.log").read_bytes()
    monkeypatch.setattr(file_view, "MAX_FILE_BYTES", 1000)
    part = build_fold_view(data)["file"]
    assert part["base64"] is None and "more than the 1,000 the page shows" in part["omitted"]


def test_a_wide_text_log_s_spans_are_in_its_utf8_and_the_view_says_it_was_decoded() -> None:
    text = (INPUTS / "timestamped.log").read_text(encoding="utf-8")
    view = build_fold_view(b"\xff\xfe" + text.encode("utf-16-le"))
    assert view["file"]["converted"] == "UTF-16LE"
    decoded = base64.b64decode(view["file"]["base64"])
    assert decoded == text.encode()
    start, end = view["frames"][2]["file_span"]
    assert decoded[start:end].decode() == text.splitlines()[2]


# -- a HAR's entries ------------------------------------------------------------------------------------


def test_the_view_lists_a_har_s_entries_and_the_one_used() -> None:
    view = build_fold_view((INPUTS / "base64-two-streams.har").read_bytes())
    har = view["har"]
    assert [(entry["index"], entry["method"], entry["status"], entry["streamed"]) for entry in har["entries"]] == [
        (0, "GET", 200, False), (1, "POST", 200, True), (2, "POST", 429, True)]
    assert har["entries"][1]["url"] == "https://chat.example.test/v1/chat/completions"
    assert har["entries"][0]["mime"].startswith("application/json")
    assert har["entry"] == 2  # the last streamed one, as the CLI picks
    picked = build_fold_view((INPUTS / "base64-two-streams.har").read_bytes(), entry="1")
    assert picked["har"]["entry"] == 1
    assert picked["result"]["choices"][0]["content"] == "The kettle is on; tea in five minutes."
    assert view["result"]["choices"] == [] or view["result"]["choices"][0]["content"] != (
        picked["result"]["choices"][0]["content"])


def test_a_har_of_one_entry_has_no_picker_and_an_untyped_entry_is_listed_as_it_can_be() -> None:
    one = {"log": {"entries": [{"request": {"method": "POST", "url": "https://x.test/v1"},
                                "response": {"status": 200, "content": {"mimeType": "text/event-stream",
                                                                        "text": "data: {}\n\ndata: [DONE]\n\n"}}}]}}
    assert "har" not in build_fold_view(json.dumps(one).encode())
    odd: dict[str, Any] = {"request": {"method": 7, "url": ["no"]}, "response": {"status": "x", "content": []}}
    two = {"log": {"entries": [odd, *one["log"]["entries"]]}}
    listed = build_fold_view(json.dumps(two).encode())["har"]["entries"]
    assert listed[0] == {"index": 0, "method": "", "url": "", "status": None, "mime": "", "streamed": False,
                         "failed": False}


def test_a_har_with_no_streamed_entry_keeps_its_picker_on_the_failed_one() -> None:
    entries = [{"request": {"method": "GET", "url": "https://x.test/models"},
                "response": {"status": 200, "content": {"mimeType": "application/json", "text": "{}"}}},
               {"request": {"method": "POST", "url": "https://x.test/v1/chat"},
                "response": {"status": 429, "content": {"mimeType": "application/json",
                                                        "text": '{"error": {"message": "slow down"}}'}}}]
    view = build_fold_view(json.dumps({"log": {"entries": entries}}).encode())
    assert view["har"]["entry"] == 1 and [entry["failed"] for entry in view["har"]["entries"]] == [False, True]


def test_both_fold_endpoints_honour_entry() -> None:
    client = TestClient(create_app(), base_url=LOCAL)
    data = (INPUTS / "base64-two-streams.har").read_bytes()
    whole = client.post("/api/fold", content=data, params={"entry": "1"})
    assert whole.status_code == 200 and whole.json()["har"]["entry"] == 1
    assert whole.json()["result"]["choices"][0]["content"] == "The kettle is on; tea in five minutes."
    ranged = client.post("/api/fold", content=data, params={"frames": "range", "entry": "1"})
    view = json.loads(ranged.text.splitlines()[-1])["view"]
    assert view["har"]["entry"] == 1 and view["result"] == whole.json()["result"]
    default = json.loads(client.post("/api/fold", content=data, params={"frames": "range"}).text.splitlines()[-1])
    assert default["view"]["har"]["entry"] == 2
    missing = client.post("/api/fold", content=data, params={"entry": "9"})
    assert missing.status_code == 400 and "no HAR entry matches '9'" in missing.json()["error"]
    assert client.post("/api/fold", content=data, params={"entry": "x" * 3000}).status_code == 400


def test_the_rows_by_range_carry_the_file_spans() -> None:
    client = TestClient(create_app(), base_url=LOCAL)
    data = (INPUTS / "python-logging-named.log").read_bytes()
    view = json.loads(client.post("/api/fold", content=data, params={"frames": "range"}).text.splitlines()[-1])["view"]
    rows = client.get("/api/frames", params={"fold": view["fold_id"], "start": "0", "count": "100"}).json()["frames"]
    assert rows == build_fold_view(data)["frames"]
    assert all(isinstance(row["file_span"], list) for row in rows)
