"""The mitmproxy addon inside a real `mitmdump` (its own interpreter, without streamfold on its path), between
real clients (httpx through the proxy, the openai SDK in reverse mode) and a real upstream (uvicorn on
127.0.0.1): streams passed on chunk by chunk and unchanged, every chunk stored, cuts told apart.

mitmdump is found through $STREAMFOLD_MITMDUMP, else on PATH; without it these tests skip. mitmproxy pins
an older h11 than the project, so it lives in a virtualenv of its own:
    python3 -m venv .venv-mitm && .venv-mitm/bin/pip install 'mitmproxy>=11'
    export STREAMFOLD_MITMDUMP=$PWD/.venv-mitm/bin/mitmdump
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from click.testing import CliRunner

import streamfold
from proxy_upstream import OPENAI, RATE_LIMITED, Upstream, frames
from streamfold.capture.command import ADDON
from streamfold.capture.mitmproxy_addon import asks_to_stream, cut_outcome, is_stream_type
from streamfold.fronts.serving import bind
from streamfold.launcher import cli
from streamfold.store import StoredExchange, get_exchange, list_exchanges
from tls_certificates import self_signed

KEY = "sk-test-mitm-1234567890abcdef"
MITMDUMP = os.environ.get("STREAMFOLD_MITMDUMP") or shutil.which("mitmdump")
needs_mitmdump = pytest.mark.skipif(
    MITMDUMP is None, reason="mitmdump not found: python3 -m venv .venv-mitm && .venv-mitm/bin/pip install "
                             "'mitmproxy>=11', then STREAMFOLD_MITMDUMP=$PWD/.venv-mitm/bin/mitmdump")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Mitmdump:
    """A `mitmdump -s ADDON` subprocess listening on 127.0.0.1: `regular` (a forward proxy) and, with a
    target, `reverse` (to the target). Its log is kept in a file for the failure messages."""

    def __init__(self, workdir: Path, db: Path, target: str | None, *extra: str) -> None:
        self.db, self.log = db, workdir / f"mitmdump-{time.monotonic_ns()}.log"
        self.regular, self.reverse = free_port(), free_port()
        modes = ["--mode", f"regular@{self.regular}"]
        if target is not None:
            modes += ["--mode", f"reverse:{target}@{self.reverse}"]
        # Without PYTHONPATH: the addon must make streamfold importable in mitmdump's interpreter itself.
        env = {name: value for name, value in os.environ.items()
               if name not in ("PYTHONPATH", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}
        assert MITMDUMP is not None
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [MITMDUMP, "--listen-host", "127.0.0.1", *modes, "--set", f"confdir={workdir / 'mitmconf'}",
                 "-s", str(ADDON), "--set", f"streamfold_db={db}", *extra],
                stdout=out, stderr=subprocess.STDOUT, env=env, cwd=workdir)

    def wait_listening(self) -> None:
        ports = [self.regular] + ([self.reverse] if "reverse" in " ".join(map(str, self.process.args)) else [])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"mitmdump exited with {self.process.returncode}:\n{self.output()}")
            try:
                for port in ports:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"mitmdump did not listen within 30 s:\n{self.output()}")

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def says(self, *texts: str) -> bool:
        """Whether the output comes to hold every one of `texts` within 15 s (mitmdump writes its lines
        after the exchange is stored, and through a buffer)."""
        deadline = time.monotonic() + 15
        while not all(text in self.output() for text in texts):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


class Rig:
    def __init__(self, upstream: Upstream, port: int, tls_port: int | None, mitm: Mitmdump, ca: Path) -> None:
        self.upstream, self.port, self.tls_port, self.mitm, self.ca = upstream, port, tls_port, mitm, ca
        self.origin = f"http://127.0.0.1:{port}"

    def client(self, **options: Any) -> httpx.Client:
        return httpx.Client(proxy=f"http://127.0.0.1:{self.mitm.regular}", trust_env=False, timeout=10, **options)

    def stored(self, marker: str) -> tuple[StoredExchange, dict[str, Any]]:
        """The exchange whose URL holds `marker`, once it ended and its summary was folded."""
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.mitm.db.exists():
                for row in list_exchanges(str(self.mitm.db)):
                    if marker in row["url"] and row["outcome"] is not None and row["dialect"] is not None:
                        return get_exchange(str(self.mitm.db), row["id"]), row
            time.sleep(0.05)
        raise AssertionError(f"no ended exchange with {marker!r} in the store:\n{self.mitm.output()}")

    def urls(self) -> list[str]:
        return [row["url"] for row in list_exchanges(str(self.mitm.db))]


@contextlib.contextmanager
def serving(upstream: Upstream, **tls: str) -> Iterator[int]:
    """`upstream` under uvicorn on 127.0.0.1, in a thread (over TLS given ssl_certfile and ssl_keyfile): its port."""
    sock = bind("127.0.0.1", 0)
    # A graceful shutdown would wait for a /hold whose client mitmproxy has gone: not long.
    server = uvicorn.Server(uvicorn.Config(upstream, log_level="critical", lifespan="off", ws="none", http="h11",
                                           timeout_graceful_shutdown=1, **tls))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        yield int(sock.getsockname()[1])
    finally:
        upstream.release.set()
        server.should_exit = True
        thread.join(10)
        sock.close()


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    """One mitmdump for the module (it takes a second or two to start), both modes, one store."""
    if MITMDUMP is None:
        pytest.skip(needs_mitmdump.kwargs["reason"])
    upstream = Upstream()
    workdir = tmp_path_factory.mktemp("mitm")
    tls = self_signed(workdir)
    with contextlib.ExitStack() as stack:
        port = stack.enter_context(serving(upstream))
        tls_port, trust = None, []
        if tls is not None:  # an HTTPS upstream too, whose certificate mitmproxy is told to trust
            tls_port = stack.enter_context(serving(Upstream(), ssl_certfile=str(tls[0]), ssl_keyfile=str(tls[1])))
            trust = ["--set", f"ssl_verify_upstream_trusted_ca={tls[0]}"]
        mitm = Mitmdump(workdir, workdir / "captures.sqlite", f"http://127.0.0.1:{port}", *trust)
        stack.callback(mitm.stop)
        mitm.wait_listening()
        yield Rig(upstream, port, tls_port, mitm, workdir / "mitmconf" / "mitmproxy-ca-cert.pem")


# -- the rules, without mitmproxy ------------------------------------------------------------


def test_which_responses_are_streams_and_which_requests_asked_for_one() -> None:
    assert is_stream_type("text/event-stream; charset=utf-8") and is_stream_type("application/x-ndjson")
    assert is_stream_type("Application/VND.Amazon.EventStream") and not is_stream_type("application/json")
    assert asks_to_stream("https://api.openai.com/v1/chat/completions", b'{"model": "m", "stream": true}')
    assert not asks_to_stream("https://api.openai.com/v1/chat/completions", b'{"model": "m", "stream": false}')
    assert not asks_to_stream("https://x/v1/chat", b'{"messages": [{"content": "say \\"stream\\": true"}]}')
    assert not asks_to_stream("https://x/v1/chat", b'["stream", true]') and not asks_to_stream("https://x/", b"")
    assert not asks_to_stream("https://x/v1/chat", b'{"stream": true')  # not JSON: not a request to stream
    assert asks_to_stream("https://g/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", b"{}")
    assert asks_to_stream("https://g/v1beta/models/m:generateContent?alt=sse", b"")
    assert asks_to_stream("https://bedrock-runtime.us-east-1.amazonaws.com/model/m/invoke-with-response-stream", b"")
    assert asks_to_stream("https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream", b"")
    assert not asks_to_stream("https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse", b"{}")


def test_which_side_cut_a_flow() -> None:
    def outcome(message: str = "x", **flags: bool) -> str:
        return cut_outcome(**{"killed": False, "client_closed": False, "server_closed": False, **flags},
                           message=message)

    assert outcome(client_closed=True) == "client-cut" and outcome("Client disconnected.") == "client-cut"
    assert outcome("stream reset by client (CANCEL)") == "client-cut"
    assert outcome(server_closed=True) == "upstream-cut"
    assert outcome(killed=True, client_closed=True) == "failed" and outcome("Connect call failed") == "failed"


def test_the_command_prints_the_shipped_addon_path_and_nothing_else() -> None:
    result = CliRunner().invoke(cli, ["capture", "mitmproxy-addon"])
    assert result.exit_code == 0, result.output
    path = Path(result.output.removesuffix("\n"))
    assert result.output.endswith("\n") and "\n" not in result.output[:-1]
    assert path.is_absolute() and path.is_file() and path == ADDON
    assert path.parent.parent == Path(streamfold.__file__).resolve().parent  # inside the package: in the wheel
    assert "mitmdump --listen-host 127.0.0.1 -s" in CliRunner().invoke(cli, ["capture", "mitmproxy-addon", "--help"]).output


# -- through a real mitmdump -----------------------------------------------------------------


@needs_mitmdump
def test_a_stream_through_the_proxy_is_passed_on_unchanged_and_stored_chunk_by_chunk(rig: Rig) -> None:
    with rig.client() as client, client.stream(
            "POST", f"{rig.origin}/v1/chat/completions?t=regular", content=b'{"model": "m", "stream": true}',
            headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}) as response:
        got = b"".join(response.iter_raw())
        assert response.status_code == 200 and response.headers["x-upstream"] == "yes"
    assert got == OPENAI
    assert ("authorization", f"Bearer {KEY}") in rig.upstream.requests[-1]["headers"]  # forwarded as sent
    stored, row = rig.stored("t=regular")
    assert stored.body == OPENAI and stored.outcome == "complete" and stored.status == 200
    assert stored.method == "POST" and stored.url == f"{rig.origin}/v1/chat/completions?t=regular"
    assert stored.request_body == b'{"model": "m", "stream": true}'
    assert len(stored.chunks) > 1 and [at for _, at in stored.reads] == sorted(at for _, at in stored.reads)
    assert row["dialect"] == "openai-chat" and row["complete"] is True
    assert ("authorization", "Bearer REDACTED") in [(k.lower(), v) for k, v in stored.request_headers]
    for path in rig.mitm.db.parent.glob("captures.sqlite*"):
        assert KEY.encode() not in path.read_bytes(), path
    assert rig.mitm.says("streamfold #", "openai-chat complete"), rig.mitm.output()


@needs_mitmdump
def test_https_through_the_proxy_with_mitmproxys_certificate_authority(rig: Rig) -> None:
    """What HTTPS_PROXY clients do: CONNECT, TLS to mitmproxy (its CA trusted), TLS on to the upstream."""
    if rig.tls_port is None:
        pytest.skip("cryptography is not installed: no certificate for the HTTPS upstream")
    url = f"https://127.0.0.1:{rig.tls_port}/v1/chat/completions?t=https"
    with rig.client(verify=ssl.create_default_context(cafile=str(rig.ca))) as client, \
            client.stream("POST", url, content=b'{"stream": true}', headers={"x-api-key": KEY}) as response:
        got = b"".join(response.iter_raw())
    assert got == OPENAI
    stored, row = rig.stored("t=https")
    assert stored.url == url and stored.body == OPENAI and len(stored.chunks) > 1 and stored.outcome == "complete"
    assert row["dialect"] == "openai-chat" and ("x-api-key", "REDACTED") in stored.request_headers


@needs_mitmdump
def test_the_first_chunk_reaches_the_client_while_the_upstream_still_waits(rig: Rig) -> None:
    """mitmproxy buffers a body unless told to stream it: this fails without the addon's tee."""
    with rig.client() as client, client.stream("GET", f"{rig.origin}/hold?t=hold") as response:
        chunks = response.iter_raw()
        first = next(chunks)
        assert first == frames(OPENAI)[0] and not rig.upstream.release.is_set()
        time.sleep(0.3)
        rig.upstream.release.set()
        rest = b"".join(chunks)
    assert first + rest == OPENAI
    stored, _ = rig.stored("t=hold")
    assert stored.body == OPENAI and stored.outcome == "complete"
    (_, first_at), (_, second_at) = stored.reads[0], stored.reads[1]
    assert second_at - first_at >= 0.25  # each chunk's own arrival time, not one time for the whole body


@needs_mitmdump
def test_a_gzip_stream_is_stored_as_the_upstream_sent_it(rig: Rig) -> None:
    """The tee sees the body still content-encoded (mitmproxy decodes only on demand): stored as sent."""
    with rig.client() as client, client.stream("GET", f"{rig.origin}/gzip?t=gzip",
                                               headers={"Accept-Encoding": "gzip"}) as response:
        raw = b"".join(response.iter_raw())
        assert response.headers["content-encoding"] == "gzip"
    assert raw == rig.upstream.gzipped
    stored, row = rig.stored("t=gzip")
    assert stored.body == rig.upstream.gzipped and len(stored.chunks) > 1
    assert row["dialect"] == "openai-chat" and row["complete"] is True  # inflated when read back


@needs_mitmdump
def test_a_429_to_a_request_that_asked_to_stream_is_recorded_and_other_replies_are_not(rig: Rig) -> None:
    with rig.client() as client:
        plain = client.post(f"{rig.origin}/ratelimit?t=plain-429", content=b'{"model": "m"}')
        limited = client.post(f"{rig.origin}/ratelimit?t=stream-429", content=b'{"model": "m", "stream": true}')
    assert plain.status_code == limited.status_code == 429 and limited.content == RATE_LIMITED
    stored, _ = rig.stored("t=stream-429")
    assert stored.status == 429 and stored.body == RATE_LIMITED and stored.outcome == "complete"
    assert ("retry-after", "7") in stored.response_headers
    assert not [url for url in rig.urls() if "t=plain-429" in url]  # not a stream, not asked: not recorded


@needs_mitmdump
def test_an_upstream_that_drops_the_connection_is_an_upstream_cut(rig: Rig) -> None:
    with pytest.raises(httpx.HTTPError), rig.client() as client, \
            client.stream("GET", f"{rig.origin}/reset?t=reset") as response:
        b"".join(response.iter_raw())
    stored, _ = rig.stored("t=reset")
    assert stored.outcome == "upstream-cut" and stored.body == frames(OPENAI)[0] and stored.status == 200
    assert stored.error


@needs_mitmdump
def test_a_client_that_leaves_is_a_client_cut(rig: Rig) -> None:
    with rig.client() as client, client.stream("GET", f"{rig.origin}/endless?t=endless") as response:
        assert next(response.iter_raw())
    assert rig.upstream.left.wait(10), rig.mitm.output()
    stored, _ = rig.stored("t=endless")
    assert stored.outcome == "client-cut" and stored.body


@needs_mitmdump
def test_an_upstream_that_cannot_be_reached_is_failed(rig: Rig) -> None:
    with rig.client() as client:
        response = client.post(f"http://127.0.0.1:{free_port()}/v1/chat/completions?t=refused",
                               content=b'{"stream": true}')
    assert response.status_code == 502
    stored, _ = rig.stored("t=refused")
    assert stored.outcome == "failed" and stored.status is None and stored.error


@needs_mitmdump
def test_the_openai_sdk_streams_through_the_reverse_proxy(rig: Rig) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{rig.mitm.reverse}/v1", api_key=KEY,
                           default_query={"t": "sdk"})
    chunks = list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
                                                 stream=True))
    assert chunks
    stored, row = rig.stored("t=sdk")
    assert stored.body == OPENAI and stored.url == f"{rig.origin}/v1/chat/completions?t=sdk"  # the upstream's URL
    assert json.loads(stored.request_body)["stream"] is True
    assert row["dialect"] == "openai-chat" and row["complete"] is True
    assert ("authorization", "Bearer REDACTED") in [(k.lower(), v) for k, v in stored.request_headers]


@needs_mitmdump
def test_streamfold_all_records_a_whole_reply_and_stopping_ends_a_stream_in_flight_as_failed(tmp_path: Path) -> None:
    hold = Upstream()  # its own /hold, released only when the test ends
    with serving(hold) as port:
        mitm = Mitmdump(tmp_path, tmp_path / "stop.sqlite", f"http://127.0.0.1:{port}", "--set", "streamfold_all=true")
        try:
            mitm.wait_listening()
            with httpx.Client(trust_env=False, timeout=10) as client:
                assert client.get(f"http://127.0.0.1:{mitm.reverse}/ratelimit").content == RATE_LIMITED
                with client.stream("GET", f"http://127.0.0.1:{mitm.reverse}/hold") as response:
                    chunks = response.iter_raw()  # kept: a generator dropped closes the response, a client cut
                    assert next(chunks)
                    mitm.stop()
                    assert mitm.process.returncode is not None
        finally:
            mitm.stop()
    whole, held = (get_exchange(str(mitm.db), row["id"]) for row in reversed(list_exchanges(str(mitm.db))))
    assert whole.url.endswith("/ratelimit") and whole.status == 429 and whole.outcome == "complete"
    assert whole.chunks == (RATE_LIMITED,)  # buffered by mitmproxy as usual, stored as one read at its end
    assert held.outcome == "failed" and "mitmproxy stopped" in (held.error or "")
    assert held.body == frames(OPENAI)[0]


@needs_mitmdump
def test_a_file_that_is_not_a_store_stops_mitmdump_with_the_reason(tmp_path: Path) -> None:
    bad = tmp_path / "notes.sqlite"
    bad.write_bytes(b"this is not an SQLite file, it is notes" * 100)
    mitm = Mitmdump(tmp_path, bad, None)
    try:
        mitm.process.wait(30)
    finally:
        mitm.stop()
    assert mitm.process.returncode == 1
    assert f"streamfold: '{bad}' is not a capture store" in mitm.output() and "Traceback" not in mitm.output()
    assert bad.read_bytes().startswith(b"this is not an SQLite file")
