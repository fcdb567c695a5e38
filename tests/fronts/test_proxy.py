"""`streamfold record` against a real upstream (uvicorn on 127.0.0.1) with real clients:
bytes passed through unchanged and as they arrive, every read stored, cuts and failures recorded."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from proxy_upstream import OPENAI, RATE_LIMITED, Upstream
from streamfold._serving import RunningServer as RunningProxy
from streamfold._serving import bind
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
    sock = bind("127.0.0.1", 0)
    upserver = uvicorn.Server(uvicorn.Config(upstream, log_level="critical", lifespan="off", ws="none", http="h11"))
    thread = threading.Thread(target=upserver.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not upserver.started:
        time.sleep(0.02)
    db = str(tmp_path / "captures.sqlite")
    store = CaptureStore.open(db)
    lines: list[str] = []
    proxy = start_in_thread(RecordingProxy(f"http://127.0.0.1:{sock.getsockname()[1]}", store, echo=lines.append))
    try:
        yield Rig(db, upstream, proxy, store, lines)
    finally:
        upstream.release.set()
        proxy.stop()
        upserver.should_exit = True
        thread.join(10)
        sock.close()
        store.close()


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
    assert "openai-chat complete" in rig.lines[0]
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
    with CaptureStore.open(db) as store, start_in_thread(RecordingProxy(f"http://127.0.0.1:{port}", store,
                                                                        echo=lambda line: None)) as proxy:
        response = httpx.get(f"{proxy.url}/v1/models")
        assert response.status_code == 502 and b"could not reach" in response.content
        store.flush()
    assert get_exchange(db).outcome == "failed"


def test_the_openai_sdk_streams_through_the_proxy(rig: Rig) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=f"{rig.proxy.url}/v1", api_key=KEY)
    chunks = list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
                                                 stream=True))
    assert chunks
    rig.settle(1)
    assert get_exchange(rig.db).body == OPENAI
