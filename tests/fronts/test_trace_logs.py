"""claude-trace and claude-tap JSONL logs (tests/inputs/claude-trace.jsonl, claude-tap.jsonl, in the
formats `streamfold.services._trace_logs` cites) read as HAR files are: each line an exchange,
the streamed one folded, the others listed and picked with --entry, the model of the request said,
the recorded (already shortened) keys never printed."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from feeding import tr_fold
from streamfold.services import InputError, read_capture
from streamfold.services.live import LiveInput
from streamfold.services.load import load

INPUTS = Path(__file__).resolve().parents[1] / "inputs"
TRACE = (INPUTS / "claude-trace.jsonl").read_bytes()
TAP = (INPUTS / "claude-tap.jsonl").read_bytes()
ANTHROPIC = (INPUTS.parent / "captures" / "anthropic" / "a3-a6-thinking-then-tool-use.sse").read_bytes()
RAW = (INPUTS / "raw-body.sse").read_bytes()


def notes(capture: Any) -> dict[str, str]:
    return {note.code: note.message for note in capture.notes}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "streamfold", *args], capture_output=True, text=True, timeout=120)


def test_claude_trace_s_streamed_pair_is_folded_and_the_others_listed() -> None:
    capture = read_capture(TRACE)
    assert capture.source == "trace-log" and capture.entry == 1 and capture.body == ANTHROPIC
    assert notes(capture)["input-recording"] == (
        "read trace log record 1 (claude-trace): POST https://api.anthropic.com/v1/messages?beta=true "
        "(model claude-sonnet-4-5)")
    assert [(e.index, e.status, e.streamed, e.mime) for e in capture.entries] == [
        (0, 200, False, "application/json"), (1, 200, True, "text/event-stream; charset=utf-8"), (2, None, False, "")]
    assert capture.status == 200 and capture.header("cf-ray") == "8f00aa-OSL"
    folded = tr_fold(capture.body)
    assert folded.choices[0].tool_calls[0].arguments == '{"city": "Oslo"}'


def test_claude_trace_s_json_reply_and_orphaned_request() -> None:
    reply = load(TRACE, entry="0")
    assert reply.result.choices[0].content == "#" and reply.result.model == "claude-3-5-haiku-20241022"
    exported = reply.result.export()  # a reply read whole has no usage object as sent: rebuilt from its counts
    assert isinstance(exported, dict) and exported["usage"] == {"input_tokens": 8, "output_tokens": 1}
    with pytest.raises(InputError, match=r"trace log record 2: the request has no response \(ORPHANED_REQUEST"):
        read_capture(TRACE, entry="2")


def test_claude_tap_s_parsed_events_are_rebuilt_into_the_stream_they_were() -> None:
    first = read_capture(TAP, entry="0")
    assert notes(first)["input-recording"].startswith("read trace log record 0 (claude-tap): POST "
                                                      "https://api.anthropic.com/v1/messages?beta=true")
    original, rebuilt = tr_fold(ANTHROPIC), tr_fold(first.body)
    assert rebuilt.to_dict()["choices"] == original.to_dict()["choices"]
    assert rebuilt.usage == original.usage and rebuilt.complete
    last = load(TAP)
    assert last.capture.entry == 1 and last.result.choices[0].content == tr_fold(RAW).choices[0].content
    said = [d.message for d in last.result.diagnostics if d.code == "input-recording"]
    assert any("rebuilt from its 12 sse_events" in message and "[DONE]" in message for message in said)


def test_a_claude_tap_websocket_record_becomes_one_json_line_a_message() -> None:
    events = [{"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
              {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "Hi"},
              {"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "output": []}}]
    record = {"timestamp": "2026-11-30T01:00:00Z", "request_id": "req_ws", "turn": 1, "duration_ms": 5,
              "request": {"method": "WEBSOCKET", "path": "/v1/responses", "headers": {}, "body": {"model": "gpt-5"}},
              "response": {"status": 101, "headers": {}, "body": None, "ws_events": events}}
    capture = read_capture(json.dumps(record, separators=(",", ":")).encode() + b"\n")
    assert capture.body.decode().splitlines() == [json.dumps(event, ensure_ascii=False) for event in events]
    assert "(model gpt-5)" in notes(capture)["input-recording"]


def test_the_cli_lists_and_picks_records_and_prints_no_key() -> None:
    path = str(INPUTS / "claude-trace.jsonl")
    outputs = [run("show", path), run("show", "--json", "--entry", "0", path), run("frames", path),
               run("export", path), run("show", "--entry", "9", path)]
    for done in outputs:
        assert "sk-ant" not in done.stdout + done.stderr and "Bearer" not in done.stdout + done.stderr
    show, reply, frames, export, missing = outputs
    assert show.returncode == 0 and "read trace log record 1 (claude-trace)" in show.stdout
    assert json.loads(reply.stdout)["choices"][0]["content"] == "#"
    assert "content_block_delta" in frames.stdout and json.loads(export.stdout)["stop_reason"] == "tool_use"
    assert missing.returncode == 2 and missing.stderr.startswith(
        "streamfold: no trace log record matches '9'; streamed records: [1] POST https://api.anthropic.com/")


def test_tail_knows_a_log_whose_first_line_is_longer_than_its_head() -> None:
    live = LiveInput()
    live.feed(TRACE[:5000], 0.0)  # no line ended yet: the first record is a whole request
    assert live.kind == "trace-log" and live.whole


@pytest.mark.parametrize("data, said", [
    (b'{"request":{"timestamp":1,"method":"POST"}}\nnot json\n', "none is a streamed response"),
    (b'{"request":{"timestamp":1}}\n' + b"[" * 100_000 + b"\n", "none is a streamed response"),
    (b'{"request":{"timestamp":1},"response":{"status_code":"200","body_raw":7}}\n', "none is a streamed"),
])
def test_broken_logs_are_said_in_a_sentence(data: bytes, said: str) -> None:
    with pytest.raises(InputError, match=said):
        read_capture(data)


def test_lines_that_are_no_record_are_left_out_and_said() -> None:
    capture = read_capture(b"garbage\n" + TRACE + b"[1, 2]\n", input_format="trace-log")
    assert capture.body == ANTHROPIC and capture.entry == 2
    assert "lines 1, 5 of the log are no record" in notes(capture)["recording-malformed"]


def test_events_nested_to_the_parser_s_limit_never_raise() -> None:
    for depth in range(940, 1010, 3):  # around the recursion limit: parsed, then written back as SSE
        nested = b"[" * depth + b"]" * depth
        line = (b'{"request":{"timestamp":1},"response":{"status_code":200,"headers":{"content-type":'
                b'"text/event-stream"},"sse_events":[{"event":"x","data":' + nested + b'}]}}\n')
        with contextlib.suppress(InputError):  # said in a sentence; anything else fails the test
            load(line)
