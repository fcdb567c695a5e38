"""Logs an app writes while it streams: `2025-07-01 10:00:00,550 DEBUG app: chunk: {json}`, a
logger name and a free label (`chunk:`, `data:`, `delta:`, `event:`) before the JSON, comma or
dot milliseconds. The logged chunks fold as the stream they came from, their timestamps become
arrival times, and a log that holds no stream data is never called empty."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest

from feeding import tr_fold
from streamfold import fold
from streamfold.services import load

ROOT = Path(__file__).resolve().parents[2]
INPUTS = ROOT / "tests" / "inputs"
# examples/openai-tool-calls.sse as an app logs it (`%(asctime)s %(levelname)s %(name)s: %(message)s`).
OPENAI_LOG = INPUTS / "python-logging-app-chunk.log"
# An Anthropic Messages stream (text, then a tool call) logged event by event, with dot milliseconds.
ANTHROPIC_LOG = INPUTS / "python-logging-anthropic-events.log"


def gaps_ms(reads: tuple[tuple[int, float], ...] | None) -> list[int]:
    assert reads is not None
    return [round((later - earlier) * 1000) for (_, earlier), (_, later) in pairwise(reads)]


def test_an_openai_chat_stream_logged_with_a_logger_name_and_a_label_folds_as_the_stream_did() -> None:
    loaded = load(OPENAI_LOG.read_bytes())
    streamed = fold((ROOT / "examples" / "openai-tool-calls.sse").read_bytes())
    assert loaded.capture.source == "log" and len(loaded.result.frames) == 41 and loaded.result.complete
    (choice,) = loaded.result.choices
    assert choice.content == "I'll check the current weather in both cities."
    assert [(call.name, call.parsed) for call in choice.tool_calls] == [
        ("get_weather", {"location": "Lisbon, Portugal", "unit": "celsius"}),
        ("get_weather", {"location": "Porto, Portugal", "unit": "celsius"})]
    assert loaded.result.choices == streamed.choices and loaded.result.usage == streamed.usage
    assert tr_fold(loaded.capture.body).choices == streamed.choices  # however the rebuilt body is fed
    # Each logged chunk's time is its arrival time: 211 ms to the first word, 96 ms before the first tool call.
    assert loaded.capture.reads is not None and len(loaded.capture.reads) == 41
    assert gaps_ms(loaded.capture.reads)[:3] == [211, 18, 22] and gaps_ms(loaded.capture.reads)[9] == 96
    assert loaded.timing is not None and round(loaded.timing.arrivals[-1] - loaded.timing.arrivals[0], 3) == 1.012
    notes = {note.code: note.message for note in loaded.notes}
    assert notes["input-log"].startswith("log: 41 timestamps kept as arrival times")
    assert notes["log-lines-skipped"].endswith("(line 1, 2, 14, 45; by level: INFO 4)")
    assert {finding.code for finding in loaded.result.diagnostics} == {"input-log", "log-lines-skipped"}
    assert not loaded.result.errors


def test_an_anthropic_stream_logged_event_by_event_folds_with_its_event_names() -> None:
    loaded = load(ANTHROPIC_LOG.read_bytes())
    result = loaded.result
    assert result.dialect == "anthropic" and result.complete and len(result.frames) == 21
    (choice,) = result.choices
    assert choice.content == "I'll look up the current weather in San Francisco for you."
    (call,) = choice.tool_calls
    assert (call.id, call.name, call.parsed) == ("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather",
                                                 {"location": "San Francisco, CA", "unit": "fahrenheit"})
    assert choice.finish_reason == "tool_calls" and result.usage is not None and result.usage.output_tokens == 89
    # An app logs the SDK's events, which carry no SSE `event:` line: it is no proxy's fault, so no
    # event-type-missing; each frame is named by its event's type, as the stream sent it.
    assert {finding.code for finding in result.diagnostics} == {"input-log", "log-lines-skipped"}
    assert [result.frames[index].event for index in (0, 1, 20)] == ["message_start", "content_block_start",
                                                                     "message_stop"]
    assert gaps_ms(loaded.capture.reads)[10] == 301  # the wait before the tool call, to the millisecond
    assert loaded.timing is not None and loaded.timing.stalls == ()


def _record(created_ms: int, message: str) -> logging.LogRecord:
    record = logging.LogRecord("myapp.llm", logging.DEBUG, __file__, 1, message, None, None)
    record.created, record.msecs = created_ms / 1000, created_ms % 1000
    return record


@pytest.mark.parametrize("layout, date_format, label", [
    ("%(asctime)s %(levelname)s %(name)s: %(message)s", None, "chunk: "),
    ("%(asctime)s [%(levelname)s] %(name)s: %(message)s", None, "data: "),
    ("%(asctime)s %(levelname)-8s %(name)s: %(message)s", None, "delta: "),
    ("%(asctime)s.%(msecs)03d %(levelname)s %(name)s: %(message)s", "%Y-%m-%d %H:%M:%S", "received chunk: "),
    ("%(asctime)s - %(name)s - %(levelname)s - %(message)s", None, "chunk: "),
])
def test_python_logging_layouts_with_a_logger_name_and_a_label(layout: str, date_format: str | None,
                                                                label: str) -> None:
    formatter = logging.Formatter(layout, date_format)
    chunks = [line.removeprefix("data: ") for line in (INPUTS / "raw-body.sse").read_text().splitlines()
              if line.startswith("data: ")]
    start = 1_751_364_000_250
    lines = [formatter.format(_record(start, "calling gpt-4.1-mini (stream=True)"))]
    lines += [formatter.format(_record(start + 500 + 40 * index, label + chunk)) for index, chunk in enumerate(chunks)]
    loaded = load("\n".join(lines).encode() + b"\n")
    assert loaded.capture.source == "log" and loaded.result.complete
    assert loaded.result.choices[0].content == "The kettle is on; tea in five minutes."
    assert gaps_ms(loaded.capture.reads) == [40] * (len(chunks) - 1)


def test_a_log_that_holds_no_stream_data_is_not_called_empty(tmp_path: Path) -> None:
    lines = [f"2025-07-01 10:00:0{second},550 INFO app: request {second} sent, waiting" for second in range(8)]
    path = tmp_path / "quiet.log"
    path.write_text("\n".join(lines) + "\n")
    size = path.stat().st_size
    loaded = load(path.read_bytes())
    notes = {note.code: note.message for note in loaded.notes}
    assert notes["empty-input"] == (f"there was nothing to fold: no line of the log ({size:,} bytes) held stream "
                                    "data, so the stream body is empty")
    assert notes["input-log"].startswith("log: none of its 8 lines held stream data")
    assert loaded.input_size == size
    done = subprocess.run([sys.executable, "-m", "streamfold", "show", str(path)], capture_output=True, text=True,
                          timeout=60, env={"COLUMNS": "300", "NO_COLOR": "1", "PYTHONPATH": str(ROOT / "src")})
    assert done.returncode == 0 and f"no line of the log ({size:,} bytes) held stream data" in done.stdout
    assert "0 bytes" not in done.stdout and "no timestamps" not in done.stdout


def test_an_empty_stream_body_read_out_of_a_har_names_the_har_and_its_size() -> None:
    har = json.loads((INPUTS / "chrome-export.har").read_text())
    for entry in har["log"]["entries"]:
        entry["response"]["content"]["text"] = ""
    data = json.dumps(har).encode()
    message = {note.code: note.message for note in load(data).notes}.get("empty-input")
    assert message is not None and message.endswith(f"read out of the HAR ({len(data):,} bytes) is empty")


def _logged(lines: list[str], label: str) -> bytes:
    """Each payload line of a shipped capture as an app logs it, a frame every 100 ms."""
    return "".join(f"2025-07-01 10:00:{n // 10:02d},{n % 10 * 100:03d} DEBUG app: {label}{line}\n"
                   for n, line in enumerate(lines, 1)).encode()


def test_a_log_of_the_chunks_an_sdk_hands_out_is_not_called_cut_for_lacking_done() -> None:
    # An SDK never hands out `data: [DONE]`, so a log of its chunks never holds it: the reply ended when
    # its choice has a finish reason (as for a printed repr), and is cut only when it has none.
    payloads = [line[6:] for line in (ROOT / "examples" / "openai-plain-text.sse").read_text().splitlines()
                if line.startswith("data: {")]
    whole, cut = _logged(payloads, "chunk: "), _logged(payloads[:-3], "chunk: ")
    codes = {name: [d.code for d in load(data).result.diagnostics] for name, data in (("whole", whole), ("cut", cut))}
    assert load(whole).result.complete and "missing-terminal" not in codes["whole"]
    assert not load(cut).result.complete and codes["cut"].count("missing-terminal") == 1
    # A log of the stream's own SSE lines, [DONE] included, is the stream as it came: not rebuilt, not excused.
    sse_lines = (ROOT / "examples" / "openai-plain-text.sse").read_text().splitlines()
    assert not load(_logged([line for line in sse_lines if line.strip()], "")).capture.handed_out
    for data, complete in ((whole, True), (cut, False)):  # tail, reading the log line by line, agrees
        done = subprocess.run([sys.executable, "-m", "streamfold", "tail"], input=data, capture_output=True,
                              timeout=60)
        said = done.stdout.decode()
        assert ("· complete ·" in said) is complete and ("missing-terminal" in said) is not complete, said
