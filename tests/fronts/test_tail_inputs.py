"""What `streamfold tail` reads and writes: the input format detected on the
first bytes as `show` detects it (services/live.py, fed however the bytes come),
and the marked text it writes into a pipe (reasoning apart from the reply)."""

from __future__ import annotations

import gzip
import io
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from feeding import chunkings
from streamfold.cli.tail_views import PipeView, Progress
from streamfold.events import TextDelta, ToolCallDone
from streamfold.services import read_capture
from streamfold.services.live import LiveInput

ROOT = Path(__file__).resolve().parents[2]
INPUTS = ROOT / "tests" / "inputs"
TAIL = [sys.executable, "-m", "streamfold", "tail"]
ENV = {**os.environ, "NO_COLOR": "1"}


def _live(chunks: list[bytes]) -> tuple[LiveInput, bytes]:
    live = LiveInput()
    body = b"".join(live.feed(chunk, float(i)) for i, chunk in enumerate(chunks))
    return live, body + live.close(float(len(chunks)))


@pytest.mark.parametrize("name", ["raw-body.sse", "curl-i.txt", "curl-v.txt", "timestamped.log"])
def test_an_input_unwrapped_as_it_comes_gives_what_show_reads(name: str) -> None:
    data = (INPUTS / name).read_bytes()
    capture = read_capture(data)
    for how, chunks in chunkings(data):
        live, body = _live(chunks)
        assert (live.kind, live.whole) == (capture.source, False), how
        assert body == capture.body, how
        held = live.capture()
        assert (held.status, held.response_headers) == (capture.status, capture.response_headers), how
        assert [note.message for note in held.notes] == [note.message for note in capture.notes], how
        if capture.source == "log":
            assert tuple(live.reads) == capture.reads, how  # the log's own timestamps


@pytest.mark.parametrize(("name", "kind"), [("chrome-export.har", "har"), ("trace-hex.txt", "curl-trace"),
                                            ("trace-ascii-time.txt", "curl-trace"),
                                            ("curl-raw-chunked.txt", "chunked")])
def test_an_input_that_cannot_be_unwrapped_piece_by_piece_is_read_whole(name: str, kind: str) -> None:
    data = (INPUTS / name).read_bytes()
    for how, chunks in chunkings(data):
        live, body = _live(chunks)
        assert (live.kind, live.whole, body, bytes(live.data)) == (kind, True, b"", data), how


def test_the_header_blocks_before_the_body_are_held_back_however_they_come() -> None:
    body = (ROOT / "examples" / "openai-plain-text.sse").read_bytes()
    data = (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + body)
    for how, chunks in chunkings(data):
        live, out = _live(chunks)
        assert out == body, how
        assert live.capture().status == 200 and live.capture().header("content-type") == "text/event-stream", how


def test_a_body_is_handed_on_before_the_next_line_comes() -> None:
    live = LiveInput()
    assert live.feed(b'data: {"a": 1}\n\n', 0.0) == b'data: {"a": 1}\n\n'  # an SSE field: raw at once
    assert live.reads == [(0, 0.0)]
    headers = LiveInput()
    assert headers.feed(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n", 0.0) == b""
    assert headers.feed(b"data: 1\n\n", 1.5) == b"data: 1\n\n"  # the body, the moment it comes
    assert headers.reads == [(0, 1.5)]
    undecided = LiveInput()
    assert undecided.feed(b"hello", 0.0) == b""  # not yet known what it is
    assert undecided.settle(0.5) == b"hello" and undecided.kind == "raw"  # nothing more came: raw


def test_curl_i_output_is_tailed_live_through_a_pipe() -> None:
    body = (ROOT / "examples" / "openai-plain-text.sse").read_bytes()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"
    read_end, feed = os.pipe()
    tail = subprocess.Popen(TAIL, stdin=read_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    os.close(read_end)
    assert tail.stdout is not None
    seen = b""
    try:
        os.write(feed, head)
        time.sleep(0.3)
        os.write(feed, body[: body.index(b"\n\n", 2000) + 2])  # some frames; the rest later
        deadline = time.monotonic() + 30
        while b"Server-sent" not in seen and time.monotonic() < deadline:
            if select.select([tail.stdout], [], [], 0.1)[0]:
                seen += os.read(tail.stdout.fileno(), 4096)
        assert b"Server-sent" in seen, "the body after curl's headers was not shown as it came"
        os.write(feed, body[body.index(b"\n\n", 2000) + 2 :])
    finally:
        os.close(feed)
    rest, errors = tail.communicate(timeout=30)
    out = (seen + rest).decode()
    assert tail.returncode == 0, errors
    assert "HTTP/1.1" not in out and " 0 invalid" in out  # the headers were no frame
    assert "input-curl" in out and "content-type" in out and "'text/plain'" in out  # kept for the checks


@pytest.mark.parametrize("name", ["timestamped.log", "chrome-export.har", "trace-ascii-time.txt", "curl-i.txt"])
def test_tail_shows_what_show_shows(name: str) -> None:
    show = subprocess.run([sys.executable, "-m", "streamfold", "show", str(INPUTS / name)], capture_output=True,
                          env=ENV, check=True, timeout=60).stdout.decode()
    with (INPUTS / name).open("rb") as source:
        tail = subprocess.run(TAIL, stdin=source, capture_output=True, env=ENV, check=True, timeout=60).stdout.decode()
    summary = show.splitlines()
    assert all(line in tail for line in summary), (show, tail)  # the times too: the file's own


# -- into a pipe: the reply, reasoning marked ---------------------------------------------


def _piped(*events: object, reasoning: str = "mark") -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    with PipeView(out, err, reasoning) as view:
        for event in events:
            view.show([event], Progress(0.0), 0.0)  # type: ignore[list-item]
    return out.getvalue(), err.getvalue()


def test_every_line_of_reasoning_is_marked_however_its_deltas_break() -> None:
    out, err = _piped(TextDelta(1, 0, "reasoning", "first li"), TextDelta(2, 0, "reasoning", "ne\nsecond"),
                      TextDelta(3, 0, "reasoning", " line\n\nthird"), TextDelta(4, 0, "content", "The reply"),
                      TextDelta(5, 0, "content", " goes on.\nTwo lines."),
                      ToolCallDone(6, 0, 0, "get_weather", {"city": "Paris"}, None),
                      TextDelta(7, 0, "refusal", "No."))
    assert err == ""
    assert out == ("[reasoning] first line\n[reasoning] second line\n[reasoning] \n[reasoning] third\n"
                   "The reply goes on.\nTwo lines.\n"
                   '[tool call 0 get_weather: {"city": "Paris"}]\n'
                   "[refusal] No.\n\n")


def test_reasoning_can_go_to_stderr_or_nowhere() -> None:
    events = (TextDelta(1, 0, "reasoning", "thinking"), TextDelta(2, 0, "content", "answer"))
    assert _piped(*events, reasoning="stderr") == ("answer\n\n", "thinking")
    assert _piped(*events, reasoning="hide") == ("answer\n\n", "")


def test_a_piped_tail_marks_the_reasoning_and_leaves_the_reply_as_it_is() -> None:
    with (ROOT / "examples" / "openai-reasoning.sse").open("rb") as source:
        done = subprocess.run(TAIL, stdin=source, capture_output=True, check=True, env=ENV, timeout=60)
    lines = done.stdout.decode().split("\n")
    assert lines[0] == ("[reasoning] The user asks why the sky is blue. That's Rayleigh scattering: shorter "
                        "wavelengths scatter much more. Mention sunsets and keep it short.")
    assert lines[1].startswith("The sky looks blue because air molecules scatter") and "[reasoning]" not in lines[1]
    assert done.stderr == b""


@pytest.mark.parametrize("data", [b"23:59:59.9 data: 1\n00:00:00.1 data: 2\n12:00:00 data: 3\n",
                                  b"12:00:02 data: 1\n12:00:01 data: 2\n12:00:03 {\"a\": 1}\n"],
                         ids=["midnight", "backwards"])
def test_a_logs_clock_is_read_as_the_log_reader_reads_it(data: bytes) -> None:
    capture = read_capture(data)
    for how, chunks in chunkings(data):
        live, body = _live(chunks)
        assert (body, tuple(live.reads)) == (capture.body, capture.reads), how
        assert [note.code for note in live.capture().notes] == [note.code for note in capture.notes], how


@pytest.mark.parametrize("data", [b"", b"  \n\n", b"HTTP/1.1 200 OK\r\nX: y", b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.",
                                  b"\x00\x00\x01\x02binary", b"== Info: x\n", b"{\n  \"log\": {", b"\x1f\x8bnot gzip",
                                  b"[", b"* Trying\n< HTTP/1.1 200 OK\n< X"])
def test_a_cut_or_odd_input_never_raises_and_keeps_its_bytes(data: bytes) -> None:
    for how, chunks in chunkings(data):
        live = LiveInput()
        body = b"".join([*(live.feed(chunk, 0.0) + live.settle(0.0) for chunk in chunks), live.close(1.0)])
        assert body or live.whole or live.kind == "curl-verbose" or not data.strip(), how
        if live.whole:
            assert bytes(live.data) == data, how


def test_tail_of_nothing_says_so() -> None:
    done = subprocess.run(TAIL, input=b"", capture_output=True, env=ENV, timeout=60)
    assert done.returncode == 0 and "received nothing" in done.stdout.decode()


def test_a_gzip_body_is_read_whole_and_folded() -> None:
    body = (ROOT / "examples" / "openai-plain-text.sse").read_bytes()
    done = subprocess.run(TAIL, input=gzip.compress(body), capture_output=True, env=ENV, timeout=60)
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr
    assert "Server-sent events keep one HTTP response open" in out and "gzip-body" in out


def test_a_har_without_a_streamed_entry_is_refused_in_one_line() -> None:
    har = b'{"log": {"version": "1.2", "entries": []}}'
    done = subprocess.run(TAIL, input=har, capture_output=True, env=ENV, timeout=60)
    assert done.returncode == 2 and done.stderr.decode().count("\n") == 1 and b"Traceback" not in done.stderr


@pytest.mark.parametrize(("data", "kind"), [
    ((INPUTS / "devtools-eventstream.tsv").read_bytes(), "devtools"),
    ((INPUTS / "sdk-repr-openai.txt").read_bytes(), "sdk-repr"),
    ((INPUTS / "utf16-powershell.sse").read_bytes(), "wide-text"),
    ((INPUTS / "raw-body.sse").read_bytes().decode().encode("utf-16-be"), "wide-text"),
    (b"<html>\n<head><title>502 Bad Gateway</title></head>\n<body><h1>502 Bad Gateway</h1></body>\n</html>\n",
     "not-a-stream"),
    (bytes(range(256)) * 8, "not-a-stream"),
])
def test_a_paste_that_is_no_stream_of_bytes_is_read_whole(data: bytes, kind: str) -> None:
    # Rebuilt from the whole paste by `load`, as `show` reads it; never handed on as a body.
    for how, chunks in chunkings(data):
        live, body = _live(chunks)
        assert (live.kind, live.whole, body, bytes(live.data)) == (kind, True, b"", data), how


@pytest.mark.parametrize(("data", "code"), [
    (b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body></body></html>\n", "html-page"),
    (bytes(range(256)) * 8, "not-text"),
])
def test_tail_of_what_is_no_stream_says_what_it_is(data: bytes, code: str) -> None:
    """One finding, as `show` gives, not a warning per line or per bad byte."""
    out = subprocess.run(TAIL, input=data, capture_output=True, env=ENV, check=True, timeout=60).stdout.decode()
    assert code in out and "unknown-field" not in out and "invalid-utf8" not in out
    assert len(out.splitlines()) <= 12, out
