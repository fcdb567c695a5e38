"""`streamfold record` against a real upstream (uvicorn on 127.0.0.1) with real clients:
bytes passed through unchanged and as they arrive, every read stored, cuts and failures recorded."""

from __future__ import annotations

import os
import re
import select
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from proxy_rig import serving
from proxy_upstream import ANTHROPIC, OPENAI, RATE_LIMITED, Upstream, frames
from streamfold.fronts.serving import RunningServer as RunningProxy
from streamfold.proxy.app import RecordingProxy
from streamfold.proxy.server import start_in_thread
from streamfold.store import CaptureStore, get_exchange, list_exchanges

KEY = "sk-test-proxy-1234567890abcdef"


class Rig:
    def __init__(self, db: str, upstream: Upstream, proxy: RunningProxy, store: CaptureStore,
                 lines: list[str]) -> None:
        self.db, self.upstream, self.proxy, self.store, self.lines = db, upstream, proxy, store, lines

    def settle(self, count: int) -> None:
        deadline = time.monotonic() + 10
        while len(self.lines) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        self.store.flush()


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    upstream = Upstream()
    db = str(tmp_path / "captures.sqlite")
    lines: list[str] = []
    with serving(upstream) as target, CaptureStore.open(db) as store:
        proxy = start_in_thread(RecordingProxy(target, store, echo=lines.append))
        try:
            yield Rig(db, upstream, proxy, store, lines)
        finally:
            upstream.release.set()
            proxy.stop()


def test_a_stream_passes_through_unchanged_and_is_stored_read_by_read(rig: Rig) -> None:
    with httpx.stream("POST", f"{rig.proxy.url}/v1/chat/completions?api_key={KEY}", content=b'{"stream": true}',
                      headers={"Authorization": f"Bearer {KEY}"}) as response:
        got = b"".join(response.iter_raw())
        assert response.headers["x-upstream"] == "yes"
    assert got == OPENAI
    rig.settle(1)
    stored = get_exchange(rig.db)
    assert stored.body == OPENAI and stored.outcome == "complete" and stored.status == 200
    assert len(stored.chunks) > 1 and [at for _, at in stored.reads] == sorted(at for _, at in stored.reads)
    assert rig.upstream.requests[-1]["body"] == b'{"stream": true}'
    assert ("authorization", f"Bearer {KEY}") in rig.upstream.requests[-1]["headers"]
    row = list_exchanges(rig.db)[0]
    assert row["dialect"] == "openai-chat" and row["complete"] is True
    assert re.fullmatch(r"POST /v1/chat/completions 200 openai-chat complete ttfb=\S+ ttft=\S+ frames=\d+ finish=stop "
                        r"findings=0", rig.lines[0]), rig.lines[0]
    rig.store.close()
    for path in Path(rig.db).parent.glob("captures.sqlite*"):
        assert KEY.encode() not in path.read_bytes(), path


def test_the_first_read_reaches_the_client_while_the_upstream_still_waits(rig: Rig) -> None:
    with httpx.stream("GET", f"{rig.proxy.url}/hold") as response:
        reads = response.iter_raw()
        first = next(reads)
        assert first and not rig.upstream.release.is_set()
        rig.upstream.release.set()
        rest = b"".join(reads)
    assert first + rest == OPENAI


def test_429_gzip_reset_refused_and_absolute_form(rig: Rig) -> None:
    limited = httpx.get(f"{rig.proxy.url}/ratelimit")
    assert limited.status_code == 429 and limited.content == RATE_LIMITED
    with httpx.stream("GET", f"{rig.proxy.url}/gzip") as response:
        raw = b"".join(response.iter_raw())
        assert response.headers["content-encoding"] == "gzip"
    assert raw == rig.upstream.gzipped
    with pytest.raises(httpx.HTTPError), httpx.stream("GET", f"{rig.proxy.url}/reset") as response:
        b"".join(response.iter_raw())
    rig.settle(3)
    by_url = {row["url"].rsplit("/", 1)[1]: get_exchange(rig.db, row["id"]) for row in list_exchanges(rig.db)}
    assert by_url["ratelimit"].status == 429 and by_url["ratelimit"].body == RATE_LIMITED
    assert by_url["gzip"].body == rig.upstream.gzipped and by_url["gzip"].outcome == "complete"
    assert by_url["reset"].outcome == "upstream-cut"
    with socket.create_connection(("127.0.0.1", rig.proxy.sock.getsockname()[1])) as conn:
        conn.sendall(b"GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n")
        assert conn.recv(4096).startswith(b"HTTP/1.1 400")


def test_a_client_that_leaves_cuts_the_upstream_request(rig: Rig) -> None:
    with httpx.stream("GET", f"{rig.proxy.url}/endless") as response:
        next(response.iter_raw())
    assert rig.upstream.left.wait(5)
    rig.settle(1)
    assert get_exchange(rig.db).outcome == "client-cut"


def test_connection_refused_is_a_502_recorded_as_failed(tmp_path: Path) -> None:
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    db = str(tmp_path / "c.sqlite")
    lines: list[str] = []
    with CaptureStore.open(db) as store, start_in_thread(RecordingProxy(f"http://127.0.0.1:{port}", store,
                                                                        echo=lines.append)) as proxy:
        response = httpx.get(f"{proxy.url}/v1/models")
        assert response.status_code == 502 and b"could not reach" in response.content
        store.flush()
    assert get_exchange(db).outcome == "failed"
    assert lines and lines[0].startswith(f"GET /v1/models 502 failed: could not reach http://127.0.0.1:{port}: ")


def test_the_openai_sdk_streams_through_the_proxy(rig: Rig) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=f"{rig.proxy.url}/v1", api_key=KEY)
    chunks = list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
                                                 stream=True))
    assert chunks
    rig.settle(1)
    assert get_exchange(rig.db).body == OPENAI


def test_the_anthropic_sdk_streams_through_the_proxy(rig: Rig) -> None:
    anthropic = pytest.importorskip("anthropic")  # 2.x sends with httpx2, not httpx: another client stack
    client = anthropic.Anthropic(base_url=rig.proxy.url, api_key=KEY, max_retries=0)
    stream = client.messages.create(model="claude-haiku-4-5", max_tokens=64, stream=True,
                                    messages=[{"role": "user", "content": "hi"}])
    text = "".join(event.delta.text for event in stream
                   if event.type == "content_block_delta" and event.delta.type == "text_delta")
    assert text == "<answer>42</answer>"
    rig.settle(1)
    stored = get_exchange(rig.db)
    assert stored.body == ANTHROPIC and stored.outcome == "complete"
    sent = dict(rig.upstream.requests[-1]["headers"])  # anthropic 2.x sends the key as a bearer token
    assert KEY in sent.get("x-api-key", "") + sent.get("authorization", "")
    assert KEY not in repr(stored.request_headers) and "REDACTED" in repr(stored.request_headers)
    assert rig.lines[0].startswith("POST /v1/messages 200 anthropic complete ")


CURL = shutil.which("curl")


@pytest.mark.skipif(CURL is None, reason="no curl on PATH")
def test_curl_gets_the_first_frame_before_the_upstream_finishes_and_every_byte(rig: Rig) -> None:
    assert CURL is not None
    first = frames(OPENAI)[0]
    with subprocess.Popen([CURL, "-sN", f"{rig.proxy.url}/hold"], stdout=subprocess.PIPE) as curl:
        assert curl.stdout is not None
        got = b""
        deadline = time.monotonic() + 10
        while len(got) < len(first) and time.monotonic() < deadline:
            if select.select([curl.stdout], [], [], 0.1)[0]:
                got += os.read(curl.stdout.fileno(), 65536)
        assert got == first and not rig.upstream.release.is_set()
        rig.upstream.release.set()
        got += curl.stdout.read()
    assert curl.returncode == 0 and got == OPENAI


def raw_request(rig: Rig, head: bytes) -> bytes:
    """The whole response to `head` sent on a socket of its own (the head, then content-length bytes)."""
    with socket.create_connection(("127.0.0.1", rig.proxy.sock.getsockname()[1]), timeout=5) as conn:
        conn.sendall(head)
        data = b""
        while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < int(
                re.search(rb"content-length: (\d+)", data, re.IGNORECASE).group(1)):  # type: ignore[union-attr]
            more = conn.recv(65536)
            if not more:
                break
            data += more
        return data


def test_connect_and_another_host_are_refused_and_never_forwarded(rig: Rig) -> None:
    connect = raw_request(rig, b"CONNECT api.openai.com:443 HTTP/1.1\r\nHost: api.openai.com:443\r\n\r\n")
    assert connect.startswith(b"HTTP/1.1 405") and b"CONNECT is not supported" in connect
    port = rig.proxy.sock.getsockname()[1]
    other = httpx.get(f"{rig.proxy.url}/v1/models", headers={"Host": f"api.openai.com:{port}"})
    assert other.status_code == 400 and b"the Host header was 'api.openai.com:" in other.content
    elsewhere = httpx.get(f"{rig.proxy.url}/v1/models", headers={"Host": "localhost:1"})
    assert elsewhere.status_code == 400
    assert rig.upstream.requests == [] and list_exchanges(rig.db) == []


def test_a_large_request_body_is_forwarded_and_stored_byte_for_byte(rig: Rig) -> None:
    body = os.urandom(5 * 1024 * 1024)
    response = httpx.post(f"{rig.proxy.url}/v1/files", content=body,
                          headers={"content-type": "application/octet-stream"}, timeout=30)
    assert response.status_code == 404 and response.content == b"no such path"
    assert rig.upstream.requests[-1]["body"] == body
    assert ("content-length", str(len(body))) in rig.upstream.requests[-1]["headers"]
    rig.settle(1)
    assert get_exchange(rig.db).request_body == body


def test_a_key_in_the_query_reaches_the_upstream_but_not_the_store(rig: Rig) -> None:
    query = f"alt=sse&key={KEY}&x=%2Fa%20b"
    response = httpx.get(f"{rig.proxy.url}/v1beta/models/m:streamGenerateContent?{query}")
    assert response.status_code == 404
    assert rig.upstream.requests[-1]["query"] == query.encode()
    assert rig.upstream.requests[-1]["path"] == "/v1beta/models/m:streamGenerateContent"
    rig.settle(1)
    url = get_exchange(rig.db).url
    assert url.endswith("/v1beta/models/m:streamGenerateContent?alt=sse&key=REDACTED&x=%2Fa%20b")
    assert KEY not in url and KEY not in "".join(rig.lines)


def test_head_get_and_delete_are_forwarded_with_their_method(rig: Rig) -> None:
    head = httpx.head(f"{rig.proxy.url}/v1/files/f-1")
    got = httpx.get(f"{rig.proxy.url}/v1/files/f-1")
    deleted = httpx.delete(f"{rig.proxy.url}/v1/files/f-1")
    assert (head.status_code, head.content) == (404, b"")
    assert (got.status_code, got.content) == (404, b"no such path")
    assert (deleted.status_code, deleted.content) == (404, b"no such path")
    assert [(request["method"], request["path"]) for request in rig.upstream.requests] == [
        ("HEAD", "/v1/files/f-1"), ("GET", "/v1/files/f-1"), ("DELETE", "/v1/files/f-1")]
    rig.settle(3)
    assert sorted(row["method"] for row in list_exchanges(rig.db)) == ["DELETE", "GET", "HEAD"]
    assert sorted(line.split(" ", 1)[0] for line in rig.lines) == ["DELETE", "GET", "HEAD"]


def test_the_exchange_lines_of_cuts_and_failures(rig: Rig) -> None:
    with pytest.raises(httpx.HTTPError), httpx.stream("GET", f"{rig.proxy.url}/reset") as response:
        b"".join(response.iter_raw())
    rig.settle(1)
    assert re.fullmatch(r"GET /reset 200 openai-chat incomplete ttfb=\S+ ttft=\S+ frames=\d+ finish=- findings=\d+.* "
                        r"upstream cut: .+", rig.lines[0]), rig.lines[0]
    with httpx.stream("GET", f"{rig.proxy.url}/endless") as response:
        next(response.iter_raw())
    rig.settle(2)
    assert re.match(r"GET /endless 200 openai-chat incomplete \(client cut\) ttfb=\S+ ttft=", rig.lines[1]), rig.lines[1]
