"""Issue 20, part 3: `streamfold serve` froze for good once its stdout pipe was full (after ~700
requests when the caller read only the URL line, or after one request with a 60 KB `/@NAME` path).
A server's lines never block serving now: they go out through a bounded backlog on a thread of their
own (`fronts.serving.LineOutput`), what does not fit is dropped and counted, and echoed names are cut to
200 characters. `streamfold record` printed from the same places, and every server's uvicorn wrote
a warning per invalid request to stderr, which froze `streamfold web` the same way (after ~1,600
invalid requests with its stderr unread).

Each test runs the real command in a subprocess whose pipes nobody reads after the first line.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from proxy_rig import read_line, record_process, serving, stop
from proxy_upstream import Upstream
from streamfold.fronts.serving import MAX_ECHOED, LineOutput, shorten
from streamfold.proxy.console import Console

#: Real servers and `streamfold` processes over sockets and pipes (tests/conftest.py: CI runs them on one Python).
pytestmark = pytest.mark.server

REPLY = 'data: {"choices":[{"index":0,"delta":{"content":"%s"}}]}\n\ndata: [DONE]\n\n'
LONG_NAME = "x" * 60_000
WAIT = 60.0  # liveness, not speed: a frozen server never answers



def drain(fd: int, quiet: float = 1.0) -> bytes:
    """Everything the pipe holds and what comes until it has been quiet for `quiet` seconds."""
    out = b""
    while select.select([fd], [], [], quiet)[0]:
        piece = os.read(fd, 1 << 16)
        if not piece:
            break
        out += piece
    return out


def pipelined(port: int, requests: list[bytes]) -> bytes:
    """Send every request on one connection at once (HTTP/1.1 pipelining, the last one asking to close)
    and read every answer, until the server closes the connection."""
    last = requests[-1]
    assert last.endswith(b"\r\n\r\n")
    requests = [*requests[:-1], last[:-2] + b"Connection: close\r\n\r\n"]
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as sock:
        sender = threading.Thread(target=sock.sendall, args=(b"".join(requests),), daemon=True)
        sender.start()
        received = bytearray()
        while piece := sock.recv(1 << 16):
            received += piece
        sender.join(WAIT)
    assert received.count(b"HTTP/1.1 ") == len(requests), f"{received.count(b'HTTP/1.1 ')} answers"
    return bytes(received)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """`python -m streamfold serve a.sse b.sse`, its stdout a pipe read for the URL line only."""
    names = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.sse"
        path.write_text(REPLY % name)
        names.append(str(path))
    process = subprocess.Popen([sys.executable, "-m", "streamfold", "serve", *names, "--speed", "max"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stdout is not None
        url = read_line(process.stdout.fileno(), WAIT)
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url), url
        yield process, int(url.rsplit(":", 1)[1])
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=WAIT)


def test_serve_answers_2000_requests_and_a_60_kb_path_with_its_stdout_unread(
        served: tuple[subprocess.Popen[bytes], int]) -> None:
    process, port = served
    host = f"Host: 127.0.0.1:{port}\r\n".encode()
    long = pipelined(port, [b"GET /@" + LONG_NAME.encode() + b"/v1/chat/completions HTTP/1.1\r\n" + host + b"\r\n"])
    assert long.startswith(b"HTTP/1.1 404 ")
    answer = json.loads(long.partition(b"\r\n\r\n")[2])
    assert f"no capture is named '{shorten(LONG_NAME)}'" in answer["error"]["message"]  # cut to 200 characters
    # Served and missed requests, the missed ones naming a 5 KB capture: about 600 KB of lines (cut), more
    # than the pipe (64 KiB) and the backlog (256 KiB) hold.
    flood = [b"POST /@a/v1/chat/completions HTTP/1.1\r\n" + host + b"Content-Length: 0\r\n\r\n" if i % 2 else
             b"GET /@" + b"y" * 5000 + b"/v1 HTTP/1.1\r\n" + host + b"\r\n" for i in range(2000)]
    answers = pipelined(port, flood)
    assert answers.count(b"HTTP/1.1 200 ") == 1000 and answers.count(b"HTTP/1.1 404 ") == 1000
    assert b'"content":"a"' in answers  # the capture itself was served
    assert process.poll() is None
    # Read now: what waited comes out, each line short; the next line says how many were dropped, and
    # every line is accounted for: the listing (3), the 60 KB path's, the 2,000, and the last request's.
    assert process.stdout is not None
    said = drain(process.stdout.fileno()).decode().splitlines()
    assert said[0].startswith("seed ") and max(len(line) for line in said) < 3 * MAX_ECHOED
    assert said[3].startswith(f"GET /@{'x' * 100}") and said[3].count("…") == 2
    pipelined(port, [b"GET /nowhere HTTP/1.1\r\n" + host + b"\r\n"])
    after = drain(process.stdout.fileno()).decode()
    dropped = re.fullmatch(r"\[streamfold: (\d+) lines dropped: the output was not being read\]\n"
                           r"GET /nowhere 404: no capture was recorded at /nowhere and the path names no dialect\n",
                           after)
    assert dropped, after
    assert len(said) + int(dropped.group(1)) + 1 == 3 + 1 + 2000 + 1
    process.send_signal(signal.SIGINT)
    assert process.wait(WAIT) in (0, 1, -signal.SIGINT, 128 + signal.SIGINT)


def test_web_answers_after_thousands_of_invalid_requests_with_its_stderr_unread() -> None:
    """uvicorn logs a warning per invalid request: 2,000 of them are more than a pipe holds."""
    process = subprocess.Popen([sys.executable, "-m", "streamfold", "web", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stdout is not None and process.stderr is not None
        port = int(re.search(r":(\d+)/", read_line(process.stdout.fileno(), WAIT)).group(1))  # type: ignore[union-attr]
        for _ in range(2000):
            with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as sock:
                sock.sendall(b"\x00 not HTTP\r\n\r\n")
                assert sock.recv(1000).startswith(b"HTTP/1.1 400 ")
        answer = pipelined(port, [f"GET /api/meta HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()])
        assert answer.startswith(b"HTTP/1.1 200 ")
        warned = drain(process.stderr.fileno()).decode()
        assert "WARNING:  Invalid HTTP request received." in warned and "lines dropped" not in warned
    finally:
        process.kill()
        process.communicate(timeout=WAIT)


@pytest.fixture
def upstream() -> Iterator[str]:
    app = Upstream()
    try:
        with serving(app) as url:
            yield url
    finally:
        app.release.set()


def test_record_answers_requests_with_60_kb_paths_and_prints_them_cut(upstream: str, tmp_path: Path) -> None:
    process = record_process(upstream, str(tmp_path / "record.sqlite"), subprocess.PIPE)
    try:
        assert process.stdout is not None
        match = re.match(r"streamfold record: listening on http://127\.0\.0\.1:(\d+) ", read_line(
            process.stdout.fileno()))
        assert match
        port = int(match.group(1))
        host = f"Host: 127.0.0.1:{port}\r\n".encode()
        for _ in range(3):  # 180 KB of path: more than the pipe holds, were it printed whole
            answer = pipelined(port, [b"GET /" + LONG_NAME.encode() + b" HTTP/1.1\r\n" + host + b"\r\n"])
            assert answer.startswith(b"HTTP/1.1 ")
        answer = pipelined(port, [b"GET /v1/chat/completions HTTP/1.1\r\n" + host + b"\r\n"])
        assert answer.startswith(b"HTTP/1.1 200 ")
        time.sleep(0.5)  # the exchange's line comes once its summary is folded
        lines = drain(process.stdout.fileno()).decode().splitlines()
        cut = [line for line in lines if line.startswith("GET /xxx")]
        assert len(cut) == 3 and all(line.startswith(f"GET {shorten('/' + LONG_NAME)} ") and len(line) < 3 * MAX_ECHOED
                                     for line in cut), lines
    finally:
        stop(process)


def test_the_record_console_never_waits_on_a_pipe_nobody_reads() -> None:
    """5,000 finished exchanges' lines into a real pipe whose reader never reads (64 KiB fill it)."""
    reader, writer = os.pipe()
    try:
        with os.fdopen(os.dup(writer), "w") as stream:
            output = LineOutput(stream, backlog=64 * 1024)
            console = Console(output.line, out=output, live=False)
            finished = threading.Event()

            def exchanges() -> None:
                for index in range(5000):
                    flight = console.begin("POST", f"/v1/chat/completions?n={index}")
                    console.finish(flight, f"POST /v1/chat/completions 200 openai-chat complete n={index}")
                finished.set()

            threading.Thread(target=exchanges, daemon=True).start()
            assert finished.wait(WAIT), "the console waited on the pipe"
            os.close(writer)
            writer = -1
            said = drain(reader)  # the backlog follows as the pipe empties, then its notes of what was dropped
            assert said.startswith(b"POST /v1/chat/completions 200 openai-chat complete n=0\n")
            # Every line is either written or counted as dropped (in a note, or still pending one): the
            # sum is exact, and 5,000 lines (~350 KB) cannot fit a 64 KiB pipe and a 64 KiB backlog.
            noted = sum(int(n) for n in re.findall(rb"\[streamfold: (\d+) lines? dropped", said))
            shown = said.count(b" openai-chat complete n=")
            assert shown + noted + output.dropped == 5000 and noted + output.dropped > 0, (shown, noted)
            console.close()
            output.close(timeout=0.1)
    finally:
        os.close(reader)
        if writer != -1:
            os.close(writer)


def test_shorten_marks_the_cut() -> None:
    assert shorten("abc") == "abc" and shorten("x" * MAX_ECHOED) == "x" * MAX_ECHOED
    assert shorten("x" * 60_000) == "x" * (MAX_ECHOED - 1) + "…"
