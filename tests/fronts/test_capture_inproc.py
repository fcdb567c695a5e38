"""`streamfold.capture`, the in-process recorder, with the real SDKs (openai, anthropic, google-genai) as
clients of a real upstream (uvicorn on 127.0.0.1) and a real SQLite store: what the SDK gets is unchanged,
what is stored is the bytes the transport received with the moments the SDK pulled them, and every way an
exchange ends is recorded as what it was."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from click.testing import CliRunner

import streamfold
import streamfold.capture
from proxy_upstream import ANTHROPIC, CAPTURES, OPENAI, RATE_LIMITED, Upstream, frames
from streamfold.capture import AsyncRecordingTransport, CaptureWarning, RecordingTransport
from streamfold.capture._stores import shared_store
from streamfold.cli import cli
from streamfold.fronts.serving import bind
from streamfold.store import CaptureStore, StoredExchange, StoreError, get_exchange, list_exchanges

httpx2 = pytest.importorskip("httpx2")
openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

KEY = "sk-test-inproc-Zq8vX2mT9sNotInTheStore"
GEMINI = (CAPTURES / "gemini" / "g1-cumulative-usage.sse").read_bytes()
MESSAGES = [{"role": "user", "content": "hi"}]


def text_of(body: bytes) -> str:
    return streamfold.fold(body).choices[0].content


class SdkUpstream(Upstream):
    """`Upstream`, reachable under a prefix an SDK can be pointed at (`/as/reset/chat/completions` is
    `/reset`), a Gemini stream at `...:streamGenerateContent`, and at `/lingering` the whole OpenAI stream
    with its body's end held back until the client leaves (what a slow network does to the chunked end)."""

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if path == "/as/lingering/chat/completions":
            while (await receive()).get("more_body"):
                pass
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/event-stream")]})
            for piece in frames(OPENAI):
                await send({"type": "http.response.body", "body": piece, "more_body": True})
            while (await receive())["type"] != "http.disconnect":
                pass
            self.left.set()
            return
        if path.startswith("/as/"):
            scope = {**scope, "path": "/" + path[4:].partition("/")[0]}
        elif path.endswith(":streamGenerateContent"):
            while (await receive()).get("more_body"):
                pass
            self.requests.append({"path": path, "headers": [(k.decode(), v.decode()) for k, v in scope["headers"]],
                                  "query": scope["query_string"]})
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/event-stream")]})
            for at in range(0, len(GEMINI), 400):
                await send({"type": "http.response.body", "body": GEMINI[at:at + 400], "more_body": True})
                await asyncio.sleep(0.005)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        await super().__call__(scope, receive, send)


class Rig:
    def __init__(self, url: str, upstream: SdkUpstream, db: str) -> None:
        self.url, self.upstream, self.db = url, upstream, db

    def stored(self, exchange_id: int | None = None) -> StoredExchange:
        streamfold.capture.flush()
        return get_exchange(self.db, exchange_id)

    def rows(self) -> list[dict[str, Any]]:
        streamfold.capture.flush()
        return list_exchanges(self.db)

    def secrets_left(self) -> list[str]:
        streamfold.capture.flush()
        return [path.name for path in Path(self.db).parent.glob(Path(self.db).name + "*")
                if KEY.encode() in path.read_bytes()]


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    upstream = SdkUpstream()
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(upstream, log_level="critical", lifespan="off", ws="none", http="h11"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        yield Rig(f"http://127.0.0.1:{sock.getsockname()[1]}", upstream, str(tmp_path / "inproc.sqlite"))
    finally:
        upstream.release.set()
        upstream.left.set()
        server.should_exit = True
        thread.join(10)
        sock.close()


def assert_stored_as_received(stored: StoredExchange, body: bytes) -> None:
    assert stored.body == body
    assert len(stored.chunks) > 1
    times = [at for _, at in stored.reads]
    assert times == sorted(times) and times[-1] > times[0] > 0
    assert stored.response_at is not None and stored.response_at <= times[0]
    assert stored.ended_at is not None and stored.ended_at >= times[-1]


def test_the_openai_sdk_streams_through_http_client_and_every_read_is_stored(rig: Rig) -> None:
    with streamfold.capture.http_client(rig.db) as http, openai.OpenAI(base_url=f"{rig.url}/v1", api_key=KEY,
                                                                        http_client=http) as client:
        text = "".join(chunk.choices[0].delta.content or "" for chunk in
                       client.chat.completions.create(model="m", messages=MESSAGES, stream=True) if chunk.choices)
    assert text == text_of(OPENAI)
    stored = rig.stored()
    assert_stored_as_received(stored, OPENAI)
    assert stored.outcome == "complete" and stored.error is None and stored.status == 200
    assert stored.method == "POST" and stored.url == f"{rig.url}/v1/chat/completions"
    assert b'"stream":true' in stored.request_body.replace(b" ", b"") and b'"hi"' in stored.request_body
    assert ("authorization", "Bearer REDACTED") in [(name.lower(), value) for name, value in stored.request_headers]
    assert ("x-upstream", "yes") in stored.response_headers
    row = rig.rows()[0]
    folded = streamfold.fold(OPENAI)
    assert (row["dialect"], row["complete"], row["frames"], row["finish_reason"]) == (
        "openai-chat", True, len(folded.frames), "stop")
    assert row["findings"] == []
    assert rig.secrets_left() == []


def test_async_openai_through_async_http_client(rig: Rig) -> None:
    async def main() -> str:
        async with openai.AsyncOpenAI(base_url=f"{rig.url}/v1", api_key=KEY,
                                      http_client=streamfold.capture.async_http_client(rig.db)) as client:
            stream = await client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
            return "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])

    assert asyncio.run(main()) == text_of(OPENAI)
    stored = rig.stored()
    assert_stored_as_received(stored, OPENAI)
    assert stored.outcome == "complete"
    assert rig.rows()[0]["complete"] is True
    assert rig.secrets_left() == []


def test_the_anthropic_sdk_sync_and_async(rig: Rig) -> None:
    with anthropic.Anthropic(base_url=rig.url, api_key=KEY,
                             http_client=streamfold.capture.http_client(rig.db)) as client, \
            client.messages.stream(model="m", max_tokens=10, messages=MESSAGES) as stream:
        text = "".join(stream.text_stream)
    assert text == text_of(ANTHROPIC)

    async def main() -> str:
        async with anthropic.AsyncAnthropic(base_url=rig.url, api_key=KEY,
                                            http_client=streamfold.capture.async_http_client(rig.db)) as client, \
                client.messages.stream(model="m", max_tokens=10, messages=MESSAGES) as stream:
            return "".join([piece async for piece in stream.text_stream])

    assert asyncio.run(main()) == text
    rows = rig.rows()
    assert [(row["dialect"], row["outcome"], row["complete"]) for row in rows] == [("anthropic", "complete", True)] * 2
    for row in rows:
        stored = rig.stored(row["id"])
        assert_stored_as_received(stored, ANTHROPIC)
        # This SDK sends its key as `Authorization: Bearer` (older ones as x-api-key): redacted either way.
        assert ("authorization", "Bearer REDACTED") in [(name.lower(), value) for name, value in stored.request_headers]
    assert rig.secrets_left() == []


def test_one_client_shared_by_threads_records_each_exchange_apart(rig: Rig) -> None:
    texts: list[str] = []
    with openai.OpenAI(base_url=f"{rig.url}/v1", api_key=KEY,
                       http_client=streamfold.capture.http_client(rig.db)) as client:
        def ask() -> None:
            texts.append("".join(chunk.choices[0].delta.content or "" for chunk in
                                 client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
                                 if chunk.choices))

        threads = [threading.Thread(target=ask) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert texts == [text_of(OPENAI)] * 6
    rows = rig.rows()
    assert [(row["outcome"], row["complete"], row["bytes"]) for row in rows] == [("complete", True, len(OPENAI))] * 6
    for row in rows:
        assert_stored_as_received(rig.stored(row["id"]), OPENAI)


def test_an_sdk_that_closes_at_the_terminal_event_before_the_body_ends_is_complete(rig: Rig) -> None:
    """The SDK stops at `data: [DONE]` and closes; the chunked end never came: the reply did."""
    with openai.OpenAI(base_url=f"{rig.url}/as/lingering", api_key=KEY,
                       http_client=streamfold.capture.http_client(rig.db)) as client:
        text = "".join(chunk.choices[0].delta.content or "" for chunk in
                       client.chat.completions.create(model="m", messages=MESSAGES, stream=True) if chunk.choices)
    assert text == text_of(OPENAI)
    assert rig.upstream.left.wait(5)
    stored = rig.stored()
    assert stored.outcome == "complete" and stored.body == OPENAI
    assert rig.rows()[0]["findings"] == []


def test_a_client_that_breaks_out_early_is_client_cut(rig: Rig) -> None:
    with openai.OpenAI(base_url=f"{rig.url}/as/endless", api_key=KEY,
                       http_client=streamfold.capture.http_client(rig.db)) as client, \
            client.chat.completions.create(model="m", messages=MESSAGES, stream=True) as stream:
        for _chunk in stream:
            break
    assert rig.upstream.left.wait(5)
    stored = rig.stored()
    assert stored.outcome == "client-cut" and stored.body.startswith(b"data: ")
    assert rig.rows()[0]["complete"] is False


def test_an_upstream_reset_is_upstream_cut_and_the_sdk_sees_its_error(rig: Rig) -> None:
    with openai.OpenAI(base_url=f"{rig.url}/as/reset", api_key=KEY, max_retries=0,
                       http_client=streamfold.capture.http_client(rig.db)) as client:
        stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
        with pytest.raises(openai.APIConnectionError):
            list(stream)
    stored = rig.stored()
    assert stored.outcome == "upstream-cut" and stored.error is not None
    assert stored.error.startswith("RemoteProtocolError: ")
    assert stored.body == OPENAI[:stored.body.find(b"\n\n") + 2]


def test_connection_refused_is_failed_and_the_exception_reaches_the_caller_unchanged(tmp_path: Path) -> None:
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    db = str(tmp_path / "refused.sqlite")
    with streamfold.capture.http_client(db) as client, pytest.raises(httpx2.ConnectError) as raised:
        client.get(f"http://127.0.0.1:{port}/v1/models")
    assert type(raised.value) is httpx2.ConnectError
    with openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, max_retries=0,
                       http_client=streamfold.capture.http_client(db)) as sdk, pytest.raises(openai.APIConnectionError):
        sdk.models.list()
    streamfold.capture.flush()
    rows = list_exchanges(db)
    assert [(row["outcome"], row["status"]) for row in rows] == [("failed", None)] * 2
    assert all(get_exchange(db, row["id"]).error.startswith("ConnectError: ") for row in rows)  # type: ignore[union-attr]


def test_a_gzip_body_is_stored_as_sent_and_the_sdk_still_decodes_it(rig: Rig) -> None:
    with streamfold.capture.http_client(rig.db) as client, client.stream("GET", f"{rig.url}/gzip") as response:
        decoded = b"".join(response.iter_bytes())
    assert decoded == OPENAI
    with openai.OpenAI(base_url=f"{rig.url}/as/gzip", api_key=KEY,
                       http_client=streamfold.capture.http_client(rig.db)) as sdk:
        text = "".join(chunk.choices[0].delta.content or "" for chunk in
                       sdk.chat.completions.create(model="m", messages=MESSAGES, stream=True) if chunk.choices)
    assert text == text_of(OPENAI)
    rows = rig.rows()
    assert [(row["outcome"], row["dialect"], row["complete"]) for row in rows] == [
        ("complete", "openai-chat", True)] * 2
    for row in rows:
        stored = rig.stored(row["id"])
        assert_stored_as_received(stored, rig.upstream.gzipped)
        assert ("content-encoding", "gzip") in stored.response_headers


def test_a_rate_limited_reply_is_recorded_whole(rig: Rig) -> None:
    with openai.OpenAI(base_url=f"{rig.url}/as/ratelimit", api_key=KEY, max_retries=0,
                       http_client=streamfold.capture.http_client(rig.db)) as client, \
            pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    stored = rig.stored()
    assert (stored.status, stored.body, stored.outcome) == (429, RATE_LIMITED, "complete")


def test_each_read_reaches_the_client_as_it_arrives_and_is_stored_with_that_time(rig: Rig) -> None:
    with streamfold.capture.http_client(rig.db) as client:
        started = time.monotonic()
        with client.stream("GET", f"{rig.url}/hold") as response:
            reads = response.iter_raw()
            first = next(reads)
            assert first and not rig.upstream.release.is_set()
            time.sleep(0.3)
            released = time.monotonic() - started
            rig.upstream.release.set()
            rest = b"".join(reads)
    assert first + rest == OPENAI
    stored = rig.stored()
    assert stored.chunks[0] == first and stored.outcome == "complete"
    assert stored.reads[0][1] < released - 0.25 and stored.reads[1][1] > released - 0.05


def test_the_transport_wrapper_around_a_transport_of_your_own(rig: Rig) -> None:
    with CaptureStore.open(rig.db) as store:
        transport = RecordingTransport(httpx2.HTTPTransport(retries=1), store)
        with httpx2.Client(transport=transport) as http, openai.OpenAI(base_url=f"{rig.url}/v1", api_key=KEY,
                                                                        http_client=http) as client:
            chunks = list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True))
        assert chunks
        with pytest.raises(TypeError):
            RecordingTransport(object(), store)

        async def main() -> bytes:
            inner = httpx2.AsyncHTTPTransport(retries=1)
            async with httpx2.AsyncClient(transport=AsyncRecordingTransport(inner, store)) as http, \
                    http.stream("POST", f"{rig.url}/v1/messages", content=b"{}") as response:
                return b"".join([piece async for piece in response.aiter_raw()])

        assert asyncio.run(main()) == ANTHROPIC
        # httpx2's own test transport answers with the body already read: stored as one read.
        mock = httpx2.MockTransport(lambda request: httpx2.Response(429, content=RATE_LIMITED))
        with httpx2.Client(transport=RecordingTransport(mock, store)) as http:
            assert http.get("http://127.0.0.2:9/v1/models").content == RATE_LIMITED
        store.flush()
    rows = list_exchanges(rig.db)
    assert [(row["status"], row["outcome"]) for row in rows] == [(429, "complete"), (200, "complete"), (200, "complete")]
    assert [row["dialect"] for row in rows[1:]] == ["anthropic", "openai-chat"]
    assert get_exchange(rig.db, rows[2]["id"]).body == OPENAI
    assert get_exchange(rig.db, rows[0]["id"]).body == RATE_LIMITED


def test_record_makes_the_sdks_own_default_clients_record(rig: Rig) -> None:
    own = openai.DefaultHttpxClient()
    assert streamfold.capture.record(own, rig.db) is own
    assert streamfold.capture.record(own, rig.db) is own  # twice: still one recording per exchange
    with openai.OpenAI(base_url=f"{rig.url}/v1", api_key=KEY, http_client=own) as client:
        list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True))

    async def main() -> str:
        http = streamfold.capture.record(anthropic.DefaultAsyncHttpxClient(), rig.db)
        async with anthropic.AsyncAnthropic(base_url=rig.url, api_key=KEY, http_client=http) as client, \
                client.messages.stream(model="m", max_tokens=10, messages=MESSAGES) as stream:
            return "".join([piece async for piece in stream.text_stream])

    assert asyncio.run(main()) == text_of(ANTHROPIC)
    rows = rig.rows()
    assert [(row["dialect"], row["outcome"], row["complete"]) for row in rows] == [
        ("anthropic", "complete", True), ("openai-chat", "complete", True)]
    assert rig.stored(rows[1]["id"]).body == OPENAI
    with pytest.raises(TypeError, match="httpx2 or httpx client"):
        streamfold.capture.record(object(), rig.db)


def test_mounted_transports_are_recorded_too(rig: Rig) -> None:
    mounted = httpx2.HTTPTransport(retries=2)
    by_name = rig.url.replace("127.0.0.1", "localhost")
    with streamfold.capture.http_client(rig.db, mounts={by_name: mounted}) as client:
        assert client._transport_for_url(httpx2.URL(f"{by_name}/v1/messages")).inner is mounted
        with client.stream("POST", f"{by_name}/v1/messages", content=b"{}") as response:
            assert b"".join(response.iter_raw()) == ANTHROPIC
        assert client.get(f"{rig.url}/nowhere").status_code == 404
    rows = rig.rows()
    assert [(row["status"], row["outcome"], row["url"].split("/")[2]) for row in rows] == [
        (404, "complete", rig.url.split("/")[2]), (200, "complete", by_name.split("/")[2])]


def test_a_proxy_from_the_environment_is_still_used(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """The client is built as httpx2 builds it, so HTTP_PROXY still applies (a transport passed in would
    have turned it off); the upstream plays the proxy and sees the absolute-form request."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", rig.url)
    with streamfold.capture.http_client(rig.db) as client:
        assert client.get("http://127.0.0.2:9/v1/models").status_code == 404
    assert rig.upstream.requests[-1]["path"] == "http://127.0.0.2:9/v1/models"
    stored = rig.stored()
    assert (stored.url, stored.status, stored.body) == ("http://127.0.0.2:9/v1/models", 404, b"no such path")


def test_plain_httpx_clients_and_google_genai(rig: Rig) -> None:
    genai = pytest.importorskip("google.genai")
    with streamfold.capture.httpx_client(rig.db) as http:
        assert isinstance(http, httpx.Client)
        client = genai.Client(api_key=KEY, http_options=genai.types.HttpOptions(base_url=rig.url, httpx_client=http))
        text = "".join(chunk.text or "" for chunk in
                       client.models.generate_content_stream(model="gemini-2.5-pro", contents="hi"))
        with http.stream("POST", f"{rig.url}/v1/chat/completions", content=b"{}") as response:
            next(response.iter_raw())  # and leaves at once: not the whole reply

    async def main() -> bytes:
        async with streamfold.capture.async_httpx_client(rig.db) as http, \
                http.stream("POST", f"{rig.url}/v1/messages", content=b"{}") as response:
            return b"".join([piece async for piece in response.aiter_raw()])

    assert asyncio.run(main()) == ANTHROPIC
    assert text == text_of(GEMINI)
    assert ("x-goog-api-key", KEY) in rig.upstream.requests[0]["headers"]
    rows = rig.rows()
    assert [(row["dialect"], row["outcome"], row["complete"]) for row in rows] == [
        ("anthropic", "complete", True), ("openai-chat", "client-cut", False), ("gemini", "complete", True)]
    assert_stored_as_received(rig.stored(rows[2]["id"]), GEMINI)
    assert rig.secrets_left() == []


def test_streamfold_show_reads_what_was_recorded(rig: Rig) -> None:
    with openai.OpenAI(base_url=f"{rig.url}/v1", api_key=KEY,
                       http_client=streamfold.capture.http_client(rig.db)) as client:
        list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True))
    exchange_id = rig.stored().id
    result = CliRunner().invoke(cli, ["show", f"{rig.db}#{exchange_id}"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    assert text_of(OPENAI)[:60] in " ".join(result.stdout.split())
    assert "openai-chat" in result.stdout


def test_a_store_that_fails_warns_once_and_the_sdk_still_gets_its_reply(rig: Rig) -> None:
    store = CaptureStore.open(rig.db)
    store.close()
    with openai.OpenAI(base_url=f"{rig.url}/v1", api_key=KEY,
                       http_client=streamfold.capture.http_client(store=store)) as client:
        with pytest.warns(CaptureWarning, match="could not record"):
            first = list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            second = list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True))
    assert [w for w in caught if issubclass(w.category, CaptureWarning)] == []
    assert len(first) == len(second) > 1


def test_stores_by_path_are_shared_and_misuse_raises(tmp_path: Path) -> None:
    db = str(tmp_path / "shared.sqlite")
    assert shared_store(db, keep_secrets=False) is shared_store(Path(db), keep_secrets=False)
    with pytest.raises(ValueError, match="keep_secrets"):
        streamfold.capture.http_client(db, keep_secrets=True)
    with CaptureStore.open(str(tmp_path / "own.sqlite")) as store, pytest.raises(ValueError, match="not both"):
        streamfold.capture.http_client(db, store=store)
    (tmp_path / "notes.sqlite").write_text("not a database, some notes\n" * 100)
    with pytest.raises(StoreError):
        streamfold.capture.http_client(str(tmp_path / "notes.sqlite"))


def test_without_httpx2_the_error_names_the_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "httpx2", None)
    with pytest.raises(ImportError, match="pip install httpx2"):
        streamfold.capture.http_client(str(tmp_path / "x.sqlite"))


def test_a_read_timeout_and_a_cancelled_task_are_the_client_giving_up(rig: Rig) -> None:
    with streamfold.capture.http_client(rig.db, timeout=httpx2.Timeout(5, read=0.2)) as client, \
            pytest.raises(httpx2.ReadTimeout), client.stream("GET", f"{rig.url}/hold") as response:
        b"".join(response.iter_raw())
    timed_out = rig.stored()
    assert timed_out.outcome == "client-cut" and timed_out.error is not None
    assert timed_out.error.startswith("ReadTimeout") and timed_out.body == frames(OPENAI)[0]

    async def reader(got_first: asyncio.Event) -> None:
        async with streamfold.capture.async_http_client(rig.db) as client, \
                client.stream("GET", f"{rig.url}/hold") as response:
            async for _piece in response.aiter_raw():
                got_first.set()

    async def main() -> None:
        got_first = asyncio.Event()
        task = asyncio.ensure_future(reader(got_first))
        await asyncio.wait_for(got_first.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    cancelled = rig.stored()
    assert cancelled.id != timed_out.id and cancelled.outcome == "client-cut"
    assert cancelled.body == frames(OPENAI)[0]


def test_a_program_that_just_exits_has_its_exchanges_committed(rig: Rig) -> None:
    """The store opened by path is closed at exit: no flush, no close in the program, nothing lost."""
    program = (f"import openai, streamfold.capture\n"
               f"client = openai.OpenAI(base_url={rig.url + '/v1'!r}, api_key={KEY!r},\n"
               f"                       http_client=streamfold.capture.http_client())\n"
               f"for _ in range(2):\n"
               f"    list(client.chat.completions.create(model='m', messages={MESSAGES!r}, stream=True))\n")
    source = str(Path(streamfold.__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "STREAMFOLD_DB": rig.db, "PYTHONPATH": source})
    assert done.returncode == 0, done.stderr
    rows = list_exchanges(rig.db)
    assert [(row["outcome"], row["dialect"], row["complete"]) for row in rows] == [
        ("complete", "openai-chat", True)] * 2
    assert get_exchange(rig.db).body == OPENAI
