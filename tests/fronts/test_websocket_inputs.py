"""WebSocket captures at the fronts: a browser HAR's WebSocket entry becomes the `websocket`
capture with each message's time as its arrival time, `show --json`, `frames` and the page's
fold endpoint (a real server on 127.0.0.1) read it, and the 101 upgrade is no HTTP finding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from click.testing import CliRunner

import streamfold
from feeding import tr_fold
from streamfold.cli import cli
from streamfold.replay import plan_response, read_sources
from streamfold.services import load, read_capture
from streamfold.web.server import RunningServer

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "websocket"
HAR = CAPTURES / "responses-websocket-mode.har"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--color", "never", *args], env={"COLUMNS": "120"})
    return result.exit_code, result.stdout


def har_with(messages: Any, **entry: Any) -> bytes:
    socket = {"_resourceType": "websocket", "request": {"method": "GET", "url": "wss://x.test/v1/realtime"},
              "response": {"status": 101, "headers": [{"name": "Upgrade", "value": "websocket"}], "content": {}},
              "startedDateTime": "2025-12-02T00:00:00.000Z", "_webSocketMessages": messages, **entry}
    return json.dumps({"log": {"entries": [socket]}}).encode()


def test_the_har_socket_entry_is_picked_and_its_messages_are_the_capture() -> None:
    data = json.loads(HAR.read_text())
    entry = data["log"]["entries"][1]
    capture = read_capture(HAR.read_bytes())
    assert capture.source == "har" and capture.entry == 1 and capture.status == 101
    assert [(info.streamed, info.mime) for info in capture.entries] == [(False, "application/json"), (True, "websocket")]
    lines = capture.body.splitlines()
    assert [json.loads(line) for line in lines] == entry["_webSocketMessages"]
    # Times from the handshake (startedDateTime 00:00:00.412Z): the first message came 118 ms after it.
    assert capture.started == 0.0 and capture.reads is not None
    assert [offset for offset, _ in capture.reads] == [sum(len(line) + 1 for line in lines[:n])
                                                      for n in range(len(lines))]
    first_time = entry["_webSocketMessages"][0]["time"]
    expected = [round(message["time"] - first_time + 0.118, 3) for message in entry["_webSocketMessages"]]
    assert [round(seconds, 3) for _, seconds in capture.reads] == expected
    assert [note.code for note in capture.notes] == ["input-har", "websocket-messages"]


def test_the_upgrade_response_is_no_http_finding() -> None:
    loaded = load(HAR.read_bytes())
    codes = {d.code for d in loaded.result.diagnostics}
    assert loaded.result.transport == "websocket" and loaded.result.choices[0].content == "Bonjour !"
    assert not codes & {"http-status", "content-type", "buffered-response"}
    assert loaded.timing is not None and loaded.timing.ttft is not None and 0.1 < loaded.timing.ttft < 1.0


def test_times_count_from_the_first_message_when_the_start_is_unknown_or_later() -> None:
    messages = [{"type": "receive", "time": 100.0, "opcode": 1, "data": "{}"},
                {"type": "receive", "time": 100.5, "opcode": 1, "data": "{}"},
                {"type": "receive", "time": 100.25, "opcode": 1, "data": "{}"}]  # a clock step back is held
    capture = read_capture(har_with(messages, startedDateTime="not a date"))
    assert capture.started is None and [seconds for _, seconds in capture.reads or ()] == [0.0, 0.5, 0.5]


def test_malformed_messages_are_left_out_and_said() -> None:
    messages = ["text", {"type": "receive"}, {"type": "ping", "data": "x"},
                {"type": "receive", "time": 1.0, "opcode": "1", "data": '{"event_id":"e","type":"session.created"}'}]
    capture = read_capture(har_with(messages))
    assert len(capture.body.splitlines()) == 1 and json.loads(capture.body)["opcode"] == 1
    malformed = next(note for note in capture.notes if note.code == "har-malformed")
    assert "_webSocketMessages[0] is not an object" in malformed.message
    assert "_webSocketMessages[1]" in malformed.message and "_webSocketMessages[2]" in malformed.message
    assert "opcode '1'" in malformed.message


def test_a_socket_that_received_nothing_is_not_a_stream() -> None:
    sent_only = [{"type": "send", "time": 1.0, "opcode": 1, "data": '{"type":"response.create"}'}]
    data = har_with(sent_only)
    try:
        read_capture(data)
    except ValueError as error:
        assert "none is a streamed response" in str(error)
    else:  # pragma: no cover - the assertion says what went wrong
        raise AssertionError("a socket with no received message was read as a stream")


def test_a_jsonl_of_messages_keeps_its_times_as_arrival_times() -> None:
    data = (CAPTURES / "responses-two-lanes.jsonl").read_bytes()
    capture = read_capture(data)
    times = [json.loads(line)["time"] for line in data.splitlines()]
    assert capture.source == "raw" and capture.body == data
    assert [round(seconds, 6) for _, seconds in capture.reads or ()] == [round(t - times[0], 6) for t in times]


def test_show_json_and_frames_read_a_websocket_har() -> None:
    code, out = run("show", "--json", str(HAR))
    shown = json.loads(out)
    assert code == 0 and shown["transport"] == "websocket" and shown["dialect"] == "openai-responses"
    assert shown["choices"][0]["content"] == "Bonjour !" and shown["complete"] is True
    assert shown["frames"]["total"] == 12 and shown["frames"]["comments"] == 1  # the sent response.create
    code, out = run("frames", str(HAR))
    rows = out.splitlines()
    assert code == 0 and any(" send " in row and "response.create" in row for row in rows)
    assert any("output_text.delta [0:0] \"Bon\"" in row for row in rows)


def test_show_reads_a_realtime_session_har() -> None:
    code, out = run("show", str(CAPTURES / "realtime-session.har"))
    assert code == 0 and "openai-realtime · websocket · complete" in out
    assert "The capital of France is Paris." in out


def test_the_page_folds_a_websocket_har(server: RunningServer) -> None:
    data = (CAPTURES / "realtime-session.har").read_bytes()
    response = httpx.post(server.url + "api/fold", content=data, timeout=30)
    assert response.status_code == 200, response.text
    view = response.json()
    assert view["result"]["transport"] == "websocket" and view["result"]["dialect"] == "openai-realtime"
    assert view["result"]["choices"][0]["content"] == "The capital of France is Paris."
    assert view["har"]["entry"] == 1
    sent = [row for row in view["frames"] if row["event"] == "send"]
    assert len(sent) == 3 and all(row["kind"] == "comment" for row in sent)
    folded = tr_fold(read_capture(data).body)
    assert view["result"]["usage"] == folded.to_dict()["usage"] and view["result"]["id"] == folded.id


def test_the_replay_server_serves_a_socket_as_its_messages_over_http() -> None:
    (recording,) = read_sources([str(HAR)])
    plan = plan_response(recording)
    assert recording.transport == "websocket" and recording.status == 101
    assert plan.status == 200 and plan.body == read_capture(HAR.read_bytes()).body
    assert dict(plan.headers)["content-type"] == "application/jsonl"
    assert streamfold.fold(plan.body).choices[0].content == "Bonjour !"
