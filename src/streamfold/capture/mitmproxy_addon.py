"""The mitmproxy addon: `mitmdump -s "$(streamfold capture mitmproxy-addon)"` records the streamed LLM
replies that pass through mitmproxy into the capture store, for clients whose base URL cannot change
(signed Bedrock requests, CLIs with their own OAuth).

Strategy. mitmproxy buffers a response body by default; for a stream (a streamed content type, or a
request that asked to stream) the `responseheaders` hook sets `flow.response.stream` to a tee that
hands each chunk to `Exchange.read` with its arrival time and returns it unchanged, so the client gets
every chunk as it comes. The chunks the tee sees are the body as the upstream sent it: chunked
transfer-encoding removed, any Content-Encoding (gzip, br) left on, which is what the store keeps.
The exchange is begun at the `request` hook when the request already says it will be recorded, else
at `responseheaders`; either way every time is counted from mitmproxy's own timestamp of the
request's arrival. `response` ends it complete, `error` as client-cut / upstream-cut / failed from
which side's connection closed, and mitmproxy stopping (`done`, or the errors of the flows it
cuts on the way) ends what is still in flight as failed and closes the store. Responses that are
not streams are left to mitmproxy's buffering and, with `streamfold_all`, recorded whole as one
read at their end.

mitmdump runs this file in its own interpreter, which usually lacks streamfold: the package's parent
folder is then appended to `sys.path` (after mitmproxy's own packages). The store needs only the
standard library (msgspec is optional), so that is enough. Nothing here imports mitmproxy at module
level: the file is also imported by the tests of its rules, where mitmproxy is not installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import logging
import sys
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

if importlib.util.find_spec("streamfold") is None:  # mitmdump's interpreter, without streamfold installed
    sys.path.append(str(Path(__file__).resolve().parents[2]))

from streamfold.dialects.registry import stream_paths
from streamfold.store import CaptureStore, Exchange, StoreError, Summary, default_db, redact_url

__all__ = ["STREAM_TYPES", "StreamfoldRecorder", "addons", "asks_to_stream", "cut_outcome", "is_stream_type"]

log = logging.getLogger("streamfold")

#: Response content types that are streams whatever the request said.
STREAM_TYPES = frozenset({"text/event-stream", "application/x-ndjson", "application/ndjson", "application/jsonl",
                          "application/x-jsonl", "application/jsonlines", "application/x-jsonlines",
                          "application/vnd.amazon.eventstream"})
#: URL path endings of the vendors' streaming endpoints that take no `"stream": true` in the body (as
#: each dialect's spec declares them).
STREAM_PATHS = stream_paths()
#: mitmproxy's messages for a client that went away (HTTP/1 close, HTTP/2 RST_STREAM CANCEL).
CLIENT_GONE = ("Client disconnected.", "stream reset by client (CANCEL)")
STOPPED = "mitmproxy stopped before the exchange ended"
_CAN_READ = 1  # mitmproxy.connection.ConnectionState.CAN_READ


def is_stream_type(content_type: str) -> bool:
    """Whether a response `Content-Type` is one of the streamed formats (parameters ignored)."""
    return content_type.split(";", 1)[0].strip().lower() in STREAM_TYPES


def asks_to_stream(url: str, body: bytes) -> bool:
    """Whether a request asks for a streamed reply: a streaming endpoint (Gemini's
    `:streamGenerateContent`, `?alt=sse`, Bedrock's `invoke-with-response-stream` and `converse-stream`)
    or a JSON body whose top level has `"stream": true` (OpenAI, Anthropic, Ollama, ...)."""
    parts = urlsplit(url)
    if parts.path.endswith(STREAM_PATHS) or ("alt", "sse") in parse_qsl(parts.query):
        return True
    if b'"stream"' not in body:  # most bodies are decided without parsing them
        return False
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(document, dict) and document.get("stream") is True


def cut_outcome(*, killed: bool, client_closed: bool, server_closed: bool, message: str) -> str:
    """The store's outcome for a flow mitmproxy reported as an error: `client-cut` when the client's
    side closed (or reset its HTTP/2 stream), `upstream-cut` when the upstream's did, else `failed`
    (a flow killed in mitmproxy, an upstream never reached, a protocol error, a size limit)."""
    if killed:
        return "failed"
    if client_closed or message in CLIENT_GONE:
        return "client-cut"
    if server_closed:
        return "upstream-cut"
    return "failed"


class _Recording:
    """One flow being recorded: its exchange, once begun, and the clock its times count on."""

    def __init__(self, request_started: float, asked: bool) -> None:
        self.request_started = request_started  # mitmproxy's wall-clock timestamp of the request's arrival
        self.origin = time.monotonic() - (time.time() - request_started)
        self.asked = asked
        self.exchange: Exchange | None = None
        self.head_recorded = False
        self.streaming = False

    def now(self) -> float:
        return time.monotonic() - self.origin

    def at(self, timestamp: float | None) -> float:
        """A mitmproxy wall-clock timestamp as seconds after the request."""
        return self.now() if timestamp is None else max(0.0, timestamp - self.request_started)

    def tee(self, chunk: bytes) -> bytes:
        if self.exchange is not None:
            self.exchange.read(chunk, at=self.now())
        return chunk


class StreamfoldRecorder:
    """The addon. Options: `streamfold_db`, `streamfold_keep_secrets`, `streamfold_all`."""

    def __init__(self) -> None:
        self._options: Any = None
        self._master: Any = None
        self._store: CaptureStore | None = None
        self._stores: list[CaptureStore] = []  # every store opened, closed at `done`
        self._live: dict[str, _Recording] = {}  # by flow id
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- mitmproxy's hooks ----------------------------------------------------------------
    # The flows and the loader are mitmproxy's objects, typed Any: mypy runs without mitmproxy.

    def load(self, loader: Any) -> None:
        """Declare the options."""
        loader.add_option("streamfold_db", str, default_db(),
                          "The streamfold capture store to write (default: $STREAMFOLD_DB, else ./streamfold.sqlite).")
        loader.add_option("streamfold_keep_secrets", bool, False,
                          "Store credentials (Authorization, API keys, cookies) as sent instead of redacted.")
        loader.add_option("streamfold_all", bool, False,
                          "Record every response, not only streams and the replies to requests that asked to stream; "
                          "responses that are not streams stay buffered by mitmproxy and are stored whole.")
        self._master, self._options = loader.master, loader.master.options

    def configure(self, updated: set[str]) -> None:
        """Open the store named by the options (again when they change: flows in flight keep theirs)."""
        if self._store is not None and not updated & {"streamfold_db", "streamfold_keep_secrets"}:
            return
        path, keep = self._options.streamfold_db, self._options.streamfold_keep_secrets
        try:
            store = CaptureStore.open(path, keep_secrets=keep)
        except StoreError as exc:
            # Logged, not raised: no traceback, and mitmdump refuses to start on an error logged while it starts.
            # Changed later, the store before stays.
            log.error("streamfold: %s", exc)
            return
        self._store = store
        self._stores.append(store)
        log.info("streamfold: recording into %s", path)

    def running(self) -> None:
        """Remember mitmproxy's event loop: summary lines are logged on it."""
        self._loop = asyncio.get_running_loop()

    async def request(self, flow: Any) -> None:
        """Begin the exchange now when the request says it will be recorded, so it shows while it waits."""
        asked = asks_to_stream(flow.request.url, flow.request.get_content(strict=False) or b"")
        recording = _Recording(flow.request.timestamp_start or time.time(), asked)
        self._live[flow.id] = recording
        if asked or self._options.streamfold_all:
            await self._begin(flow, recording)

    async def responseheaders(self, flow: Any) -> None:
        """Record the head and, for a stream, tee the body through instead of letting mitmproxy buffer it."""
        recording = self._live.get(flow.id)
        if recording is None:  # a flow whose request hook ran before this addon was loaded
            return
        response = flow.response
        stream_type = is_stream_type(response.headers.get("content-type", ""))
        if recording.exchange is None:
            if not stream_type:
                self._live.pop(flow.id, None)  # neither asked nor a stream: not recorded
                return
            await self._begin(flow, recording)
            if recording.exchange is None:
                return
        self._record_head(flow, recording)
        # `stream` already True: mitmproxy's stream_large_bodies chose to stream it; tee that too.
        if stream_type or recording.asked or response.stream:
            recording.streaming = True
            earlier = response.stream
            if callable(earlier):  # another addon's transform: the store keeps what the upstream sent
                response.stream = lambda chunk: earlier(recording.tee(chunk))
            else:
                response.stream = recording.tee

    def response(self, flow: Any) -> None:
        """The response ended as the upstream meant it to: complete."""
        recording = self._live.pop(flow.id, None)
        if recording is None or recording.exchange is None:
            return
        self._record_head(flow, recording)
        end = recording.at(flow.response.timestamp_end)
        if not recording.streaming:
            recording.exchange.read(flow.response.raw_content or b"", at=end)
        self._end(flow, recording, "complete", None, end)

    def error(self, flow: Any) -> None:
        """The flow broke off: say which side cut it, as far as the connections tell."""
        recording = self._live.pop(flow.id, None)
        if recording is None or recording.exchange is None:
            return
        if flow.response is not None:
            self._record_head(flow, recording)
        message = flow.error.msg if flow.error is not None else "mitmproxy reported an error"
        if self._master is not None and self._master.should_exit.is_set():  # mitmproxy cut it, stopping
            self._end(flow, recording, "failed", f"{STOPPED} ({message})", recording.now())
            return
        server = flow.server_conn
        outcome = cut_outcome(killed=message == "Connection killed.",
                              client_closed=not flow.client_conn.state.value & _CAN_READ,
                              server_closed=server.timestamp_start is not None and not server.state.value & _CAN_READ,
                              message=message)
        self._end(flow, recording, outcome, message, recording.now())

    def done(self) -> None:
        """mitmproxy stops: what is in flight ends as failed, then every store is committed and closed."""
        for recording in self._live.values():
            if recording.exchange is not None:
                with contextlib.suppress(StoreError):
                    recording.exchange.end("failed", error=STOPPED, at=recording.now())
        self._live.clear()
        self._loop = None
        for store in self._stores:
            try:
                store.close()
            except StoreError as exc:
                log.error("streamfold: %s", exc)
        self._stores, self._store = [], None

    # -- recording ------------------------------------------------------------------------

    async def _begin(self, flow: Any, recording: _Recording) -> None:
        store = self._store
        if store is None:
            return
        request = flow.request
        headers = list(request.headers.items(multi=True))
        try:
            # begin() waits for the row id from the store's writer thread: not on mitmproxy's event loop.
            recording.exchange = await asyncio.to_thread(store.begin, request.method, request.url, headers,
                                                         request.raw_content or b"",
                                                         started=recording.request_started)
        except StoreError as exc:
            log.error("streamfold: not recorded: %s", exc)

    def _record_head(self, flow: Any, recording: _Recording) -> None:
        if recording.head_recorded or recording.exchange is None or flow.response is None:
            return
        recording.head_recorded = True
        response = flow.response
        recording.exchange.response(response.status_code, list(response.headers.items(multi=True)),
                                    at=recording.at(response.timestamp_start))

    def _end(self, flow: Any, recording: _Recording, outcome: str, error: str | None, at: float) -> None:
        exchange = recording.exchange
        if exchange is None:
            return
        try:
            future = exchange.end(outcome, error=error, at=at)
        except StoreError as exc:
            log.error("streamfold: not recorded: %s", exc)
            return
        status = flow.response.status_code if flow.response is not None else None
        url = flow.request.url if self._options.streamfold_keep_secrets else redact_url(flow.request.url)
        head = f"streamfold #{exchange.id} {flow.request.method} {url} {status or '-'}"
        future.add_done_callback(lambda done: self._say(head, outcome, done))

    def _say(self, head: str, outcome: str, done: Future[Summary | None]) -> None:
        """Log the exchange's line once its summary is folded (on the store's thread: handed to the loop)."""
        summary = None if done.exception() is not None else done.result()
        if summary is None:
            line = f"{head} {outcome}"
        else:
            ttfb, ttft = ("-" if value is None else f"{value:.3f}s" for value in (summary.ttfb, summary.ttft))
            line = (f"{head} {summary.dialect} {'complete' if summary.complete else 'incomplete'} ({outcome}) "
                    f"ttfb={ttfb} ttft={ttft} frames={summary.frames} findings={len(summary.findings)}")
        emit: Callable[[], None] = lambda: log.info(line)
        loop = self._loop
        if loop is None:
            emit()
            return
        try:
            loop.call_soon_threadsafe(emit)
        except RuntimeError:  # the loop closed while the summary was folded
            emit()


addons = [StreamfoldRecorder()]
