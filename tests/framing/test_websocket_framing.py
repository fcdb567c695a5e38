"""The `websocket` transport: a frame is one message of a JSONL of `_webSocketMessages` records,
the same however the bytes are fed; sent messages, binary ones, other `stream_id` lanes and lines
that are no message each become what the module docstring says; sniffing takes these records and
nothing else's NDJSON."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

import streamfold
from feeding import tr_fold, tr_framer
from streamfold.framing import TRANSPORTS, WebSocketParser, sniff
from streamfold.framing.websocket import is_message, message_line

CAPTURES = Path(__file__).resolve().parents[1] / "captures"
JSONL_CAPTURES = sorted([*(CAPTURES / "websocket").glob("*.jsonl"), *(CAPTURES / "openai-realtime").glob("*.jsonl")])


def event(kind: str, **fields: object) -> str:
    return json.dumps({"type": kind, **fields})


def chat_body() -> bytes:
    created = {"id": "resp_1", "object": "response", "status": "in_progress", "model": "m", "output": []}
    return b"".join([
        message_line("send", event("response.create", model="m"), 10.0),
        message_line("receive", event("response.created", sequence_number=0, response=created), 10.25),
        message_line("receive", event("response.output_text.delta", sequence_number=1, item_id="i", output_index=0,
                                      content_index=0, delta="Hé"), 10.5),
        message_line("receive", event("response.completed", sequence_number=2,
                                      response={**created, "status": "completed"}), 10.75),
    ])


def test_websocket_is_a_transport() -> None:
    assert "websocket" in TRANSPORTS


def test_each_message_is_one_frame_with_its_direction_time_and_place() -> None:
    body = chat_body()
    frames = tr_framer(WebSocketParser, body)
    lines = body.splitlines(keepends=True)
    assert len(frames) == 4
    offset = 0
    for number, (frame, line) in enumerate(zip(frames, lines, strict=True), 1):
        assert (frame.offset, frame.line, frame.raw, frame.terminated) == (offset, number, line, True)
        offset += len(line)
    sent, *received = frames
    assert sent.event == "send" and sent.data is None
    assert json.loads(sent.comments[0]) == {"type": "response.create", "model": "m"}
    assert dict(sent.headers) == {"direction": "send", "time": 10.0, "opcode": 1}
    assert [json.loads(frame.data or "")["type"] for frame in received] == [
        "response.created", "response.output_text.delta", "response.completed"]
    assert [dict(frame.headers)["time"] for frame in received] == [10.25, 10.5, 10.75]
    assert all(frame.event is None and frame.issues == () for frame in received)


def test_a_messages_jsonl_folds_the_received_events_and_skips_the_sent_ones() -> None:
    result = tr_fold(chat_body())
    assert (result.transport, result.dialect, result.complete) == ("websocket", "openai-responses", True)
    assert result.choices[0].content == "Hé"
    assert [kind.value for kind in result.frame_kinds] == ["comment", "json", "json", "json"]
    assert not result.errors


@pytest.mark.parametrize("path", JSONL_CAPTURES, ids=lambda path: path.name)
def test_the_jsonl_captures_frame_the_same_however_fed(path: Path) -> None:
    data = path.read_bytes()
    frames = tr_framer(WebSocketParser, data)
    assert len(frames) == data.count(b"\n")
    assert sniff(data[:4096]) == "websocket"
    tr_fold(data)


def test_a_second_stream_id_lane_is_listed_once_and_not_folded() -> None:
    def delta(lane: str, text: str, seq: int) -> bytes:
        return message_line("receive", event("response.output_text.delta", sequence_number=seq, item_id="i",
                                             output_index=0, content_index=0, delta=text, stream_id=lane))
    body = delta("a", "one", 0) + delta("b", "two", 0) + delta("a", " three", 1) + delta("b", " four", 1)
    frames = tr_framer(WebSocketParser, body)
    assert [frame.data is not None for frame in frames] == [True, False, True, False]
    assert [[issue.code for issue in frame.issues] for frame in frames] == [[], ["websocket-other-stream"], [], []]
    assert "stream_id 'b'" in frames[1].issues[0].message and "'a'" in frames[1].issues[0].message
    assert json.loads(frames[3].comments[0])["delta"] == " four"  # the other lane's text is kept, not folded
    assert dict(frames[3].headers)["stream_id"] == "b"
    result = streamfold.fold(body)
    assert result.choices[0].content == "one three"
    assert [d.code for d in result.diagnostics if d.code == "websocket-other-stream"] == ["websocket-other-stream"]


def test_messages_without_a_stream_id_belong_to_the_followed_lane() -> None:
    body = (message_line("receive", event("response.output_text.delta", sequence_number=0, item_id="i",
                                          output_index=0, content_index=0, delta="x", stream_id="a"))
            + message_line("receive", event("error", sequence_number=1, code="server_error", message="boom")))
    frames = tr_framer(WebSocketParser, body)
    assert all(frame.data is not None and not frame.issues for frame in frames)


def test_a_binary_message_is_said_and_not_folded() -> None:
    body = message_line("receive", base64.b64encode(b"\x00\x01\x02").decode(), 1.0, opcode=2)
    body += message_line("receive", "@@not base64@@", 1.0, opcode=2)
    frames = tr_framer(WebSocketParser, body)
    assert [frame.data for frame in frames] == [None, None]
    assert [frame.issues[0].code for frame in frames] == ["websocket-binary", "websocket-binary"]
    assert "3 bytes" in frames[0].issues[0].message and "not valid base64" in frames[1].issues[0].message
    result = streamfold.fold(body)
    assert result.transport == "websocket" and not result.errors


def test_a_binary_message_holding_a_json_object_is_read_as_its_text() -> None:
    """Gemini Live sends every message so; bytes that only look like JSON at first stay binary."""
    body = message_line("receive", base64.b64encode(b' {"setupComplete":{}}').decode(), 1.0, opcode=2)
    body += message_line("receive", base64.b64encode(b"{\xff\xfe").decode(), 1.0, opcode=2)
    frames = tr_framer(WebSocketParser, body)
    assert frames[0].data == ' {"setupComplete":{}}' and not frames[0].issues and ("opcode", 2) in frames[0].headers
    assert frames[1].data is None and [issue.code for issue in frames[1].issues] == ["websocket-binary"]


def test_a_line_that_is_no_message_is_an_error_frame_and_the_rest_still_folds() -> None:
    body = chat_body()
    lines = body.splitlines(keepends=True)
    broken = b"".join([lines[0], b'{"type":"receive","time":1}\n', b"not json at all\n", *lines[1:]])
    frames = tr_framer(WebSocketParser, broken)
    assert [frame.issues[0].code for frame in frames[1:3]] == ["websocket-bad-message"] * 2
    assert frames[2].line == 3 and frames[2].offset == len(lines[0]) + len(b'{"type":"receive","time":1}\n')
    result = tr_fold(broken)
    # As an SSE frame that is not JSON: an error at its line; the reply the server ended is still complete.
    assert result.choices[0].content == "Hé" and result.complete is True
    assert [error.code for error in result.errors] == ["websocket-bad-message", "websocket-bad-message"]
    assert [error.line for error in result.errors] == [2, 3]


def test_a_last_line_without_its_line_feed_is_still_a_message() -> None:
    body = chat_body()[:-1]
    frames = tr_framer(WebSocketParser, body)
    assert frames[-1].terminated is False and json.loads(frames[-1].data or "")["type"] == "response.completed"
    result = streamfold.fold(body)
    assert result.complete and "unterminated-final-frame" in {d.code for d in result.diagnostics}


@pytest.mark.parametrize("line, expected", [
    (b'{"type":"receive","time":1.5,"opcode":1,"data":"{}"}\n', "websocket"),
    (b'{"type":"send","data":"hello"}\n', "websocket"),
    # Anything more or less than a message record is someone's NDJSON, and stays theirs.
    (b'{"type":"receive","data":"{}","extra":1}\n', "ndjson"),
    (b'{"type":"receive","data":{"x":1}}\n', "ndjson"),
    (b'{"type":"message","data":"x"}\n', "ndjson"),
    (b'{"model":"llama3","message":{"role":"assistant","content":"Hi"},"done":false}\n', "ndjson"),
    (b'{"type":"content-delta","index":0,"delta":{"message":{"content":{"text":"Hi"}}}}\n', "ndjson"),
])
def test_sniffing_takes_message_records_and_nothing_else(line: bytes, expected: str) -> None:
    assert sniff(line, final=True) == expected


def test_every_ndjson_capture_keeps_its_transport() -> None:
    for path in sorted(CAPTURES.rglob("*.ndjson")) + sorted(CAPTURES.rglob("*.jsonl")):
        data = path.read_bytes()
        first = json.loads(data.splitlines()[0])
        assert (streamfold.fold(data).transport == "websocket") == is_message(first), path.name


def test_message_line_round_trips_what_it_writes() -> None:
    line = message_line("receive", 'a "quoted" \u00e9 \ud83d\ude00 text', 3.25)
    assert line.endswith(b"\n") and b"\n" not in line[:-1]
    value = json.loads(line)
    assert is_message(value) and value == {"type": "receive", "time": 3.25, "opcode": 1,
                                           "data": 'a "quoted" \u00e9 \ud83d\ude00 text'}
