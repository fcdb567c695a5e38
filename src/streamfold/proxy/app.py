"""The recording proxy as a raw ASGI app: each request is checked (origin-form,
not CONNECT, addressed to this proxy), forwarded to the target with httpx, and
the response passed back as it arrives (what has come in by the time the
last piece went out is passed on as one), while the store records it and the console
(`console.py`) shows it in flight and then one line for it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import Future
from typing import Any

import httpx

from ..fronts.serving import admit, is_loopback_host
from ..store import CaptureStore, Exchange, Summary
from .console import Console, InFlight, exchange_line
from .forward import Target, forwarded_headers

__all__ = ["RecordingProxy", "UpstreamCutError"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class UpstreamCutError(Exception):
    """Raised to the server after the upstream broke off a body: the client's connection is
    closed too, so the client sees the cut instead of a clean end."""


class _QuietCuts(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], UpstreamCutError))


logging.getLogger("uvicorn.error").addFilter(_QuietCuts())


class RecordingProxy:
    """Forwards every request to `target`, records each exchange in `store`, and prints one line per
    exchange once its summary is folded: to `console` (live lines on a terminal), else to `echo`.
    `port`/`host`: where it listens (for the Host check; set by the server once bound)."""

    def __init__(self, target: str, store: CaptureStore, *, host: str = "127.0.0.1", port: int | None = None,
                 echo: Callable[[str], None] = print, console: Console | None = None,
                 read_timeout: float | None = 600.0, token: str | None = None) -> None:
        self.target = Target(target)
        self.store = store
        self.host, self.port = host, port
        #: The access token every request must carry when the proxy is bound off loopback (`fronts.serving.admit`);
        #: None on loopback, where the Host check is what keeps other pages out.
        self.token = token
        self.console = console if console is not None else Console(echo)
        self.read_timeout = read_timeout
        #: The ids of the exchanges this proxy began recording, in order (what `record` says when it stops).
        self.recorded: list[int] = []
        self._client: httpx.AsyncClient | None = None

    def client(self) -> httpx.AsyncClient:
        if self._client is None:  # made on the server's event loop, at the first request
            # No idle upstream connections kept: none is left open when the server stops.
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=self.read_timeout),
                                             follow_redirects=False,
                                             limits=httpx.Limits(max_keepalive_connections=0))
        return self._client

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        admitted = admit(scope, self.token)
        if admitted is None:
            await _plain(send, 401, "this proxy is served on the network and forwards only requests that carry its "
                                    "access token: use the base URL `streamfold record` printed (http://HOST:PORT/t/"
                                    "TOKEN/...) or send the header X-Streamfold-Token: TOKEN")
            return
        scope = admitted
        refusal = self._refusal(scope)
        if refusal is not None:
            await _plain(send, *refusal)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        raw_path = scope.get("raw_path") or scope["path"].encode("utf-8")
        url = self.target.join(raw_path, scope.get("query_string", b""))
        headers = forwarded_headers(scope["headers"])
        method = scope["method"]
        exchange = await asyncio.to_thread(self.store.begin, method, url, headers, bytes(body))
        self.recorded.append(exchange.id)
        flight = self.console.begin(method, raw_path.decode("latin-1"))
        try:
            await self._forward(exchange, flight, url, headers, bytes(body), receive, send)
        except UpstreamCutError:
            raise  # ended and recorded: its line is on the way
        except BaseException:
            self.console.drop(flight)  # no end was recorded, so no finished line will take its place
            raise

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        if scope["method"] == "CONNECT":
            return 405, "this is a reverse proxy for one target; CONNECT is not supported"
        raw_path = scope.get("raw_path") or scope["path"].encode("utf-8")
        if not raw_path.startswith(b"/"):
            return 400, (f"this reverse proxy forwards only to {self.target.url}; send the path alone "
                         "(GET /v1/...), not an absolute URL")
        host = next((value.decode("latin-1") for name, value in scope["headers"] if name == b"host"), "")
        # Off loopback the token admitted the request, whatever name the client reached this machine by.
        if self.token is None and self.port is not None and not is_loopback_host(host, self.host, self.port):
            return 400, (f"this proxy answers requests addressed to it (127.0.0.1:{self.port}) and forwards "
                         f"them to {self.target.url}; the Host header was {host!r}")
        return None

    async def _forward(self, exchange: Exchange, flight: InFlight, url: str, headers: list[tuple[str, str]],
                       body: bytes, receive: Receive, send: Send) -> None:
        client = self.client()
        request = client.build_request(flight.method, url, headers=headers, content=body)
        sent = {name.lower() for name, _ in headers}
        for name in ("accept", "accept-encoding", "connection", "user-agent"):  # httpx's defaults, not the client's
            if name not in sent and name in request.headers:
                del request.headers[name]
        try:
            response = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            reason = f"could not reach {self.target.url}: {_reason(exc)}"
            self._end(exchange, flight, 502, "failed", f"streamfold record {reason}", reason)
            await _plain(send, 502, f"streamfold record {reason}")
            return
        try:
            status = response.status_code
            response_headers = forwarded_headers(response.headers.raw)
            exchange.response(status, response_headers)
            flight.status = status
            await send({"type": "http.response.start", "status": status,
                        "headers": [(name.encode("latin-1"), value.encode("latin-1"))
                                    for name, value in response_headers]})
            outcome, why = await _relay(response, exchange, flight, receive, send)
        finally:
            await response.aclose()
        error = f"the upstream broke off the body: {why}" if outcome == "upstream-cut" else why
        self._end(exchange, flight, status, outcome, error, why)
        if outcome == "upstream-cut":
            raise UpstreamCutError(error)

    def _end(self, exchange: Exchange, flight: InFlight, status: int | None, outcome: str,
             error: str | None, reason: str | None) -> None:
        """Record the end; the line is printed once the summary is folded (on the store's thread)."""
        future = exchange.end(outcome, error=error)

        def done(result: Future[Summary | None]) -> None:
            summary = None if result.exception() is not None else result.result()
            self.console.finish(flight, exchange_line(flight.method, flight.path, status, outcome, summary,
                                                      reason))

        future.add_done_callback(done)


async def _relay(response: httpx.Response, exchange: Exchange, flight: InFlight, receive: Receive,
                 send: Send) -> tuple[str, str | None]:
    """Pass each upstream read on as it arrives; stop when the client goes away. The outcome, and
    why in a few words when it is not complete."""
    async def stream() -> tuple[str, str | None]:
        batches = _Batches(response)
        try:
            async for chunk in batches:
                exchange.read(chunk)
                flight.bytes += len(chunk)
                flight.reads += 1
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            await batches.aclose()  # the client left (cancelled): stop reading the upstream
        if batches.error is not None:
            return "upstream-cut", _reason(batches.error)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return "complete", None

    async def disconnect() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    relay, watch = asyncio.ensure_future(stream()), asyncio.ensure_future(disconnect())
    try:
        await asyncio.wait({relay, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
    if relay.done():
        return relay.result()
    relay.cancel()  # the client went away: stop reading, and the caller closes the upstream request
    with contextlib.suppress(asyncio.CancelledError):
        await relay
    return "client-cut", "the client closed the connection before the body ended"


class _Batches:
    """The upstream's body as what has arrived by the time the last batch was passed on: a task reads
    `aiter_raw` (one piece per HTTP chunk the upstream wrote) and the relay takes every piece parsed
    so far as one. Nothing waits for more data; a burst of tiny chunks that came in one socket read
    is one read for the store and one send to the client instead of hundreds. At most `limit` bytes
    wait, so a slow client still slows the upstream down. `error`: how the upstream broke off, if it did."""

    def __init__(self, response: httpx.Response, limit: int = 1 << 20) -> None:
        self.error: httpx.HTTPError | None = None
        self._pending: list[bytes] = []
        self._size, self._limit, self._done = 0, limit, False
        self._arrived, self._room = asyncio.Event(), asyncio.Event()
        self._room.set()
        self._reader = asyncio.ensure_future(self._read(response))

    async def _read(self, response: httpx.Response) -> None:
        try:
            async for chunk in response.aiter_raw():
                self._pending.append(chunk)
                self._size += len(chunk)
                self._arrived.set()
                if self._size >= self._limit:
                    self._room.clear()
                    await self._room.wait()
        except httpx.HTTPError as exc:
            self.error = exc
        finally:
            self._done = True
            self._arrived.set()

    def __aiter__(self) -> _Batches:
        return self

    async def aclose(self) -> None:
        """Stop reading (if it has not stopped) and wait until the reading task is over."""
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):  # closed under its feet: nothing to keep
            await self._reader

    async def __anext__(self) -> bytes:
        while not self._pending:
            if self._done:
                raise StopAsyncIteration
            self._arrived.clear()
            await self._arrived.wait()
        pending, self._pending, self._size = self._pending, [], 0
        self._room.set()
        return pending[0] if len(pending) == 1 else b"".join(pending)


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text[0].lower() + text[1:] if text else text


async def _plain(send: Send, status: int, sentence: str) -> None:
    data = (sentence + "\n").encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(data)).encode("ascii"))]})
    await send({"type": "http.response.body", "body": data, "more_body": False})
