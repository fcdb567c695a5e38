"""The page's server under load and hostile clients, against a real uvicorn server on
127.0.0.1 with real sockets: read deadlines for headers and body, the limit on
concurrent folds, gzip bodies limited on their inflated size, and the Host and
Origin checks for the server's own port.

Deadlines are small here (1 s); every timing assertion has a generous margin.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from streamfold.services.inputs import read_capture
from streamfold.web.app import create_app
from streamfold.web.server import RunningServer, Timeouts, start_in_thread

SHORT = Timeouts(header=1.0, body=1.0, keep_alive=1)
MARGIN = 10.0  # "closed within 10 s when the deadline is 1 s"


@pytest.fixture()
def server() -> Iterator[RunningServer]:
    with start_in_thread(create_app(), timeouts=SHORT) as running:
        yield running


def port_of(server: RunningServer) -> int:
    return int(server.url.rsplit(":", 1)[1].strip("/"))


def connect(server: RunningServer) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port_of(server)), timeout=MARGIN + 5)
    return sock


def read_until_closed(sock: socket.socket, *, trickle: bytes = b"", every: float = 0.25) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and how long that took.
    With `trickle`, one byte of it is sent every `every` seconds meanwhile (a slow client)."""
    started = time.monotonic()
    received = bytearray()
    sock.settimeout(every)
    while time.monotonic() - started < MARGIN + 5:
        if trickle:
            try:
                sock.sendall(trickle[:1])
            except OSError:
                trickle = b""
            trickle = trickle[1:]
        try:
            data = sock.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            break
        if not data:
            break
        received += data
    return bytes(received), time.monotonic() - started


def status_of(response: bytes) -> int | None:
    return int(response.split(b" ", 2)[1]) if response.startswith(b"HTTP/1.1 ") else None


# -- read deadlines ---------------------------------------------------------------

def test_headers_sent_a_byte_at_a_time_get_408_after_the_deadline(server: RunningServer) -> None:
    request = f"GET /api/meta HTTP/1.1\r\nHost: 127.0.0.1:{port_of(server)}\r\n".encode() + b"X-Slow: " + b"y" * 200
    with connect(server) as sock:
        response, elapsed = read_until_closed(sock, trickle=request)
    assert status_of(response) == 408, response
    assert b"headers did not arrive within 1 seconds" in response
    assert 0.5 < elapsed < MARGIN


def test_a_body_that_never_completes_gets_408_after_the_deadline(server: RunningServer) -> None:
    with connect(server) as sock:
        sock.sendall(f"POST /api/fold HTTP/1.1\r\nHost: 127.0.0.1:{port_of(server)}\r\n"
                     f"Content-Length: 100000\r\n\r\ndata: {{".encode())
        response, elapsed = read_until_closed(sock, trickle=b"x" * 200)
    assert status_of(response) == 408, response
    assert json.loads(response.partition(b"\r\n\r\n")[2])["error"] == (
        "the request's body did not arrive within 1 seconds")
    assert 0.5 < elapsed < MARGIN


def test_a_connection_that_sends_nothing_is_closed_quietly(server: RunningServer) -> None:
    with connect(server) as sock:
        response, elapsed = read_until_closed(sock)
    assert response == b"" and elapsed < MARGIN


def test_a_hundred_slow_connections_are_all_closed_and_the_server_still_answers(server: RunningServer) -> None:
    socks = [connect(server) for _ in range(100)]
    try:
        for sock in socks:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 12")
        time.sleep(0.5)
        # Held open, the slow clients do not stop others from being served.
        assert httpx.get(server.url + "api/meta", timeout=MARGIN).status_code == 200
        deadline = time.monotonic() + MARGIN
        closed = 0
        for sock in socks:
            sock.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                while sock.recv(65536):
                    pass
                closed += 1
            except OSError:
                pass
        assert closed == 100
    finally:
        for sock in socks:
            sock.close()
    assert httpx.get(server.url + "api/meta", timeout=MARGIN).status_code == 200


def test_a_keep_alive_connection_gets_its_next_request_served(server: RunningServer) -> None:
    """The deadlines apply per request: a connection reused within them is served each time."""
    with httpx.Client(timeout=MARGIN) as client:
        for _ in range(3):
            assert client.get(server.url + "api/meta").status_code == 200
            time.sleep(0.3)


def test_a_body_timeout_is_no_error_in_the_server_log(server: RunningServer) -> None:
    """The app still reading the body is told the client is gone, and answers nothing more."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("uvicorn.error")
    logger.addHandler(handler)
    try:
        with connect(server) as sock:
            sock.sendall(f"POST /api/diff?left_size=1 HTTP/1.1\r\nHost: 127.0.0.1:{port_of(server)}\r\n"
                         f"Content-Length: 50\r\n\r\nxx".encode())
            response, _ = read_until_closed(sock)
        assert status_of(response) == 408
        assert httpx.get(server.url + "api/meta", timeout=MARGIN).status_code == 200
    finally:
        logger.removeHandler(handler)
    assert [record.getMessage() for record in records if record.levelno >= logging.WARNING] == []


# -- concurrent folds ---------------------------------------------------------------

def chunk(i: int) -> bytes:
    body = {"id": "c", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": {"content": f"w{i} "}, "finish_reason": None}]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def test_past_max_folds_a_fold_gets_503_with_a_sentence_and_retry_after() -> None:
    with start_in_thread(create_app(max_folds=1), timeouts=Timeouts(header=5, body=30)) as server:
        capture = chunk(0) + b"data: [DONE]\n\n"
        with connect(server) as holder:
            # A fold whose body is still arriving holds its slot.
            holder.sendall(f"POST /api/fold HTTP/1.1\r\nHost: 127.0.0.1:{port_of(server)}\r\n"
                           f"Content-Length: {len(capture)}\r\n\r\n".encode() + capture[:10])
            time.sleep(0.3)
            for path in ("api/fold", "api/diff?left_size=0"):
                busy = httpx.post(server.url + path, content=capture, timeout=MARGIN)
                assert busy.status_code == 503
                assert busy.json()["error"] == "streamfold is folding 1 capture already; try again in a moment"
                assert busy.headers["retry-after"] == "2"
                assert busy.headers["content-security-policy"]  # still the page's own response
            # The rest of the page is still served.
            assert httpx.get(server.url + "api/meta", timeout=MARGIN).status_code == 200
            holder.sendall(capture[10:])
            response = holder.recv(65536)
            assert status_of(response) == 200
        # The slot is given back: the next fold is served.
        assert httpx.post(server.url + "api/fold", content=capture, timeout=MARGIN).status_code == 200


def test_a_client_that_goes_away_while_its_capture_folds_gives_its_slot_back() -> None:
    """The page's fold answers progress lines while it folds; a tab closed meanwhile cancels the answer,
    and the fold's slot must still come back when the fold ends (with --max-folds 1, every later fold
    would get 503 until the server restarted)."""
    data = b"".join(chunk(i) for i in range(60_000)) + b"data: [DONE]\n\n"
    small = chunk(0) + b"data: [DONE]\n\n"
    with start_in_thread(create_app(max_folds=1), timeouts=Timeouts(header=5, body=30)) as server:
        with connect(server) as client:
            client.sendall(f"POST /api/fold?frames=range HTTP/1.1\r\nHost: 127.0.0.1:{port_of(server)}\r\n"
                           f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
            assert status_of(client.recv(65536)) == 200  # the answer has begun: the fold is running
        # The client is gone; once its fold ends, the slot is free again.
        deadline = time.monotonic() + 120
        while (answer := httpx.post(server.url + "api/fold?frames=range", content=small,
                                    timeout=MARGIN)).status_code == 503:
            assert time.monotonic() < deadline, "the slot of the abandoned fold never came back"
            time.sleep(0.2)
        assert answer.status_code == 200
        assert b'"view"' in answer.content


def test_the_page_answers_while_a_big_fold_runs() -> None:
    data = b"".join(chunk(i) for i in range(60_000)) + b"data: [DONE]\n\n"
    with start_in_thread(create_app()) as server:
        results: list[httpx.Response] = []
        fold = threading.Thread(target=lambda: results.append(
            httpx.post(server.url + "api/fold", content=data, timeout=120)))
        started = time.monotonic()
        fold.start()
        latencies = []
        try:
            while fold.is_alive() and time.monotonic() - started < 120:
                asked = time.monotonic()
                assert httpx.get(server.url + "api/meta", timeout=MARGIN).status_code == 200
                latencies.append(time.monotonic() - asked)
                time.sleep(0.05)
        finally:
            fold.join(120)
        took = time.monotonic() - started
        assert results and results[0].status_code == 200
        assert results[0].json()["result"]["choices"][0]["content"].startswith("w0 w1 ")
        assert len(latencies) >= 3, "the fold was too quick to show anything"
        # A page blocked by the fold would answer only when it ends (a wait as long as the fold); on a busy
        # machine everything is slower, the fold too, so the bound grows with it.
        assert max(latencies) < max(3.0, took / 3), (took, latencies)


# -- gzip bodies ----------------------------------------------------------------------

def test_a_gzip_body_is_limited_on_its_inflated_size() -> None:
    limit = 1024 * 1024
    bomb = gzip.compress(b"data: " + b"x" * (64 * limit), compresslevel=9)  # 64 KiB that inflates to 64 MiB
    assert len(bomb) < 100 * 1024
    with start_in_thread(create_app(max_size=limit)) as server:
        refused = httpx.post(server.url + "api/fold", content=bomb, headers={"Content-Encoding": "gzip"},
                             timeout=MARGIN)
        assert refused.status_code == 413
        message = refused.json()["error"]
        assert "gzip-compressed" in message and "inflates to more than 1 MiB" in message
        assert "--max-size 2MiB" in message
        # Within the limit, a gzip body is inflated and folded.
        capture = chunk(1) + b"data: [DONE]\n\n"
        view = httpx.post(server.url + "api/fold", content=gzip.compress(capture),
                          headers={"Content-Encoding": "gzip"}, timeout=MARGIN).json()
        assert view["result"]["choices"][0]["content"] == "w1 "
        assert view["capture"]["size"] == len(capture)
        # Sent without the header, the bytes still start like gzip: the input reader inflates them,
        # and the same limit holds on what they inflate to (tests/fronts/test_hostile_d_inflate.py: a HAR's too).
        refused = httpx.post(server.url + "api/fold", content=bomb, timeout=MARGIN)
        assert refused.status_code == 413 and refused.json()["error"] == message
        assert httpx.post(server.url + "api/fold", content=b"x", headers={"Content-Encoding": "br"},
                          timeout=MARGIN).status_code == 415


def test_the_input_readers_cap_what_gzip_inflates_to() -> None:
    body = chunk(1) * 1000
    compressed = gzip.compress(body)
    capped = read_capture(compressed, max_inflated=1000)
    assert capped.body == body[:1000]
    assert [note.code for note in capped.notes] == ["gzip-body", "inflated-too-large"]
    note = capped.notes[1]
    assert "more than 1000 B (1,000 bytes)" in note.message and note.offset == 1000
    assert f"of the {len(compressed):,} compressed bytes" in note.message
    whole = read_capture(compressed, max_inflated=len(body))
    assert whole.body == body and "more than" not in whole.notes[0].message
    assert loaded_body(compressed, 5000) == body[:5000]


def loaded_body(data: bytes, max_inflated: int) -> bytes:
    from streamfold.services import load

    return load(data, max_inflated=max_inflated).capture.body


# -- Host and Origin: this server's own port -------------------------------------------

def test_the_real_server_answers_only_its_own_port(server: RunningServer) -> None:
    port = port_of(server)
    other = port + 1 if port < 65535 else port - 1
    capture = chunk(1)
    for name in ("127.0.0.1", "localhost", "[::1]"):
        ok = httpx.post(server.url + "api/fold", content=capture, timeout=MARGIN,
                        headers={"Host": f"{name}:{port}", "Origin": f"http://{name}:{port}"})
        assert ok.status_code == 200, name
        refused = httpx.post(server.url + "api/fold", content=capture, timeout=MARGIN,
                             headers={"Origin": f"http://{name}:{other}"})
        assert refused.status_code == 403 and "other origins" in refused.json()["error"], name
        rebound = httpx.get(server.url + "api/meta", headers={"Host": f"{name}:{other}"}, timeout=MARGIN)
        assert rebound.status_code == 403 and f"on port {port}" in rebound.json()["error"], name


# -- the command's options --------------------------------------------------------------

def test_the_command_takes_the_limits_and_its_defaults_are_the_servers() -> None:
    from click.testing import CliRunner

    from streamfold.launcher import cli
    from streamfold.web.command import web
    from streamfold.web.limits import DEFAULT_MAX_FOLDS
    from streamfold.web.protocol import DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT

    defaults = {param.name: param.default for param in web.params}
    assert (defaults["header_timeout"], defaults["body_timeout"], defaults["max_folds"]) == (
        DEFAULT_HEADER_TIMEOUT, DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_FOLDS)
    runner = CliRunner()
    for bad in (["--header-timeout", "0"], ["--body-timeout", "-1"], ["--max-folds", "0"]):
        assert runner.invoke(cli, ["web", *bad]).exit_code == 2, bad
    shown = runner.invoke(cli, ["web", "--help"]).output
    assert "--header-timeout" in shown and "--body-timeout" in shown and "--max-folds" in shown


def test_the_command_line_deadline_closes_a_slow_client() -> None:
    process = subprocess.Popen([sys.executable, "-m", "streamfold", "web", "--port", "0", "--header-timeout", "1"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", process.stdout.readline())
        assert match
        deadline = time.monotonic() + MARGIN
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", int(match.group(1))), timeout=MARGIN + 5)
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        with sock:
            response, elapsed = read_until_closed(sock, trickle=b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"y" * 100)
        assert status_of(response) == 408 and elapsed < MARGIN
    finally:
        process.terminate()
        process.wait(10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
