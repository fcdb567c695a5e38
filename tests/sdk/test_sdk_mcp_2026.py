"""Agreement with the official `mcp` SDK's own 2026-07-28 client, run as a program runs it: `mcp.Client(url)`
probes `server/discover`, adopts 2026-07-28 and sends its `tools/call` and `subscriptions/listen` to a real
server on 127.0.0.1 (a small ASGI app under uvicorn) that answers each with the bytes of a `v2026-*` capture.
What the client gets (the result, the InputRequiredResult and the requests it names, the change events, the
exception a dropped stream raises) must be what the fold says. Where the SDK does what the spec does not
(it resumes a cut stream with `Last-Event-ID`, it answers a server request on the stream with an error it
POSTs back, it takes a response whose id is not its request's), the test pins it; docs/dialects.md says it
in the `mcp` section."""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import uvicorn

import streamfold
from proxy_upstream import read_body
from streamfold.fronts.serving import RunningServer, bind, run_in_thread

anyio = pytest.importorskip("anyio")
pytest.importorskip("mcp_types._v2026_07_28", reason="the mcp SDK (2.3+) speaks 2026-07-28")
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.subscriptions import ResourceUpdated, SubscriptionLost, ToolsListChanged  # noqa: E402

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "mcp"
MODERN = "2026-07-28"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
# The captures' own values for what the client chooses: a server answers under the client's token and id.
TOKEN_KEY, CAPTURED_TOKEN = b'"progressToken":', b'"t1"'
SUBSCRIPTION_KEY, CAPTURED_SUBSCRIPTION = b'"%s":' % SUBSCRIPTION_ID.encode(), b"3"
# A 2026-07-28 result the client caches must say how long (SEP-2549): the SDK refuses a listing without both.
CACHE_HINTS = {"ttlMs": 0, "cacheScope": "private", "resultType": "complete"}
BOOKED = {"content": [{"type": "text", "text": "Booked."}], "resultType": "complete"}


@dataclass
class Exchange:
    """One HTTP request the server got: its method, its `Mcp-*` and `Last-Event-ID` headers, its JSON body."""

    verb: str
    headers: dict[str, str]
    body: Any


@dataclass
class ModernServer:
    """Streamable HTTP at 2026-07-28, as little of it as the SDK's client needs: `server/discover` and
    `tools/list` answered in JSON, a `tools/call` or `subscriptions/listen` with the bytes of `capture` as an
    SSE stream, the second round of an input-required call (it carries `requestState`) with a JSON result,
    a body without a method (the client's answer to a server request) with 202, a GET with 405, as the
    SDK's own modern server does. No session id: the version has none."""

    capture: bytes = b""
    seen: list[Exchange] = field(default_factory=list)

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        raw = await read_body(receive)
        headers = {name.decode(): value.decode() for name, value in scope["headers"]
                   if name.startswith(b"mcp-") or name == b"last-event-id"}
        body = json.loads(raw) if raw else None
        self.seen.append(Exchange(scope["method"], headers, body))
        if scope["method"] != "POST":
            await self._send(send, 405, b"", b"text/plain")
        elif "method" not in body:
            await self._send(send, 202, b"", b"text/plain")
        elif body["method"] == "server/discover":
            await self._answer(send, body, {"supportedVersions": [MODERN], "capabilities": {
                "tools": {"listChanged": True}, "resources": {"subscribe": True}}, **CACHE_HINTS})
        elif body["method"] == "tools/list":
            await self._answer(send, body, {"tools": [{"name": "book", "inputSchema": {"type": "object"}}],
                                            **CACHE_HINTS})
        elif "requestState" in body["params"]:
            await self._answer(send, body, BOOKED)
        else:
            await self._send(send, 200, self._as_answer_to(body), b"text/event-stream")

    def _as_answer_to(self, request: dict[str, Any]) -> bytes:
        """The capture under the progress token and subscription id this request chose; its response id is
        left as captured, which the SDK does not check (pinned below)."""
        token = json.dumps(request["params"]["_meta"].get("progressToken")).encode()
        subscription = json.dumps(request["id"]).encode()
        return (self.capture.replace(TOKEN_KEY + CAPTURED_TOKEN, TOKEN_KEY + token)
                .replace(SUBSCRIPTION_KEY + CAPTURED_SUBSCRIPTION, SUBSCRIPTION_KEY + subscription))

    async def _answer(self, send: Any, request: dict[str, Any], result: dict[str, Any]) -> None:
        await self._send(send, 200, json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode(),
                         b"application/json")

    @staticmethod
    async def _send(send: Any, status: int, body: bytes, content_type: bytes) -> None:
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", content_type)]})
        await send({"type": "http.response.body", "body": body, "more_body": False})

    def posted(self, method: str) -> list[Exchange]:
        return [seen for seen in self.seen if seen.verb == "POST" and seen.body.get("method") == method]


@pytest.fixture(scope="module")
def running() -> Any:
    app = ModernServer()
    sock = bind("127.0.0.1", 0)
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    server: RunningServer = run_in_thread(uvicorn.Server(config), sock,
                                          f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", name="mcp-2026")
    with server:
        yield app, server.url


@pytest.fixture
def serving(running: Any, request: pytest.FixtureRequest) -> tuple[ModernServer, str]:
    """The server answering with the capture the test names, its log emptied."""
    app, url = running
    app.capture = (CAPTURES / request.param).read_bytes()
    app.seen.clear()
    return app, url


@dataclass
class Heard:
    """What the client's callbacks saw during one call."""

    progress: list[tuple[float, float | None, str | None]] = field(default_factory=list)
    asked: list[Any] = field(default_factory=list)
    messages: list[Any] = field(default_factory=list)

    async def on_progress(self, done: float, total: float | None, message: str | None) -> None:
        self.progress.append((done, total, message))

    async def elicit(self, _context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params)
        return types.ElicitResult(action="accept", content={"ok": True})

    async def sample(self, _context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.asked.append(params)
        return types.CreateMessageResult(role="assistant", model="m", content=types.TextContent(type="text", text="-"))

    async def on_message(self, message: Any) -> None:
        self.messages.append(message)

    def client(self, url: str) -> Client:
        # With a sampling callback the client can sample: a request it refuses is refused for its version.
        return Client(url, elicitation_callback=self.elicit, sampling_callback=self.sample,
                      message_handler=self.on_message, read_timeout_seconds=5)


def call_tool(url: str, heard: Heard, *, drive_input: bool) -> Any:
    """What the client's `call_tool` returns: driving input rounds itself, or (`session.call_tool` with
    `allow_input_required`) handing the InputRequiredResult back."""

    async def run() -> Any:
        async with heard.client(url) as client:
            assert client.protocol_version == MODERN  # negotiated by server/discover, no initialize
            if drive_input:
                return await client.call_tool("book", {"slot": "10:00"}, progress_callback=heard.on_progress)
            return await client.session.call_tool("book", {"slot": "10:00"}, progress_callback=heard.on_progress,
                                                  allow_input_required=True)

    return anyio.run(run)


def folded_as_sent(app: ModernServer, method: str) -> streamfold.Result:
    """The fold of the capture, given the headers the SDK sent with its (first) request for it."""
    return streamfold.fold(app.capture, request_headers=app.posted(method)[0].headers)


def codes(result: streamfold.Result) -> list[str]:
    return sorted(d.code for d in result.diagnostics)


def expected(name: str) -> dict[str, Any]:
    return dict(json.loads((CAPTURES / name).with_suffix(".expect.json").read_text()))


@pytest.mark.parametrize("serving", ["v2026-input-required.sse"], indirect=True)
def test_an_input_required_result_is_what_the_sdk_hands_back(serving: tuple[ModernServer, str]) -> None:
    app, url = serving
    heard = Heard()
    got = call_tool(url, heard, drive_input=False)
    assert isinstance(got, types.InputRequiredResult)
    folded = folded_as_sent(app, "tools/call")
    # The SDK's client sends every header a 2026 request needs: the fold given them finds none missing.
    assert codes(folded) == sorted(expected("v2026-input-required.sse")["diagnostic_codes"])
    assert folded.choices[0].finish_reason_raw == "input_required" and not heard.asked
    assert got.model_dump(by_alias=True, mode="json", exclude_none=True) == folded.export()["result"]
    native = folded.native
    assert native is not None
    assert heard.progress == [(n["params"]["progress"], n["params"]["total"], n["params"]["message"])
                              for n in native["notifications"]]


@pytest.mark.parametrize("serving", ["v2026-input-required.sse"], indirect=True)
def test_the_sdk_fulfils_the_requests_the_fold_names_and_sends_the_call_again(
        serving: tuple[ModernServer, str]) -> None:
    app, url = serving
    heard = Heard()
    got = call_tool(url, heard, drive_input=True)
    assert got == types.CallToolResult.model_validate(BOOKED)
    asked = streamfold.fold(app.capture).export()["result"]
    assert [types.ElicitRequest.model_validate(r).params for r in asked["inputRequests"].values()] == heard.asked
    first, again = app.posted("tools/call")
    assert "requestState" not in first.body["params"]
    assert again.body["params"]["requestState"] == asked["requestState"]  # echoed byte for byte
    assert again.body["params"]["inputResponses"] == {"confirm": {"action": "accept", "content": {"ok": True}}}
    assert len(heard.progress) == 1  # the second round, a JSON answer, has none


@pytest.mark.parametrize("serving", ["v2026-request-on-stream.sse"], indirect=True)
def test_a_server_request_on_a_2026_stream_is_refused_and_the_result_still_arrives(
        serving: tuple[ModernServer, str]) -> None:
    app, url = serving
    heard = Heard()
    got = call_tool(url, heard, drive_input=True)
    folded = folded_as_sent(app, "tools/call")
    assert codes(folded) == ["request-on-stream"]
    assert isinstance(got, types.CallToolResult) and not got.is_error
    assert "\n".join(b.text for b in got.content if isinstance(b, types.TextContent)) == folded.choices[0].content
    # The SDK answers sampling/createMessage, which 2026-07-28 has no more, as a method it does not know,
    # with an error POSTed back: its sampling callback never sees the request the fold flags.
    native = folded.native
    assert native is not None and heard.asked == []
    refused = [seen.body for seen in app.seen if "method" not in seen.body]
    assert refused == [{"jsonrpc": "2.0", "id": native["requests"][0]["id"], "error": {
        "code": types.METHOD_NOT_FOUND, "message": "Method not found", "data": native["requests"][0]["method"]}}]
    # Pinned: the response says id 9, the SDK asked with its own id, and takes the result anyway (the
    # transport writes the request's id over the response's): a mismatch JSON-RPC forbids goes unseen.
    assert folded.id == "9" and app.posted("tools/call")[0].body["id"] != 9


def listen(url: str) -> tuple[Any, list[Any], BaseException | None]:
    """The filter the server honoured, the events `Client.listen` yields, and what it raised, if anything."""
    events: list[Any] = []
    honored: list[Any] = []

    async def run() -> BaseException | None:
        async with Client(url, read_timeout_seconds=5) as client:
            try:
                async with client.listen(tools_list_changed=True, resource_subscriptions=["file:///notes.md"]) as sub:
                    honored.append(sub.honored)
                    async for event in sub:
                        events.append(event)
            except SubscriptionLost as lost:
                return lost
        return None

    raised = anyio.run(run)
    return honored[0], events, raised


def events_folded(native: dict[str, Any]) -> tuple[types.SubscriptionFilter, list[Any]]:
    """The acknowledged filter and the change events, as the fold keeps them (notifications in order)."""
    notifications = native["notifications"]
    assert notifications[0]["method"] == "notifications/subscriptions/acknowledged"
    changes = {"notifications/tools/list_changed": lambda _: ToolsListChanged(),
               "notifications/resources/updated": lambda params: ResourceUpdated(uri=params["uri"])}
    return (types.SubscriptionFilter.model_validate(notifications[0]["params"]["notifications"]),
            [changes[n["method"]](n["params"]) for n in notifications[1:]])


@pytest.mark.parametrize("serving", ["v2026-listen-stream.sse"], indirect=True)
def test_a_listen_stream_gives_the_sdk_the_events_the_fold_keeps(serving: tuple[ModernServer, str]) -> None:
    app, url = serving
    honored, events, raised = listen(url)
    folded = folded_as_sent(app, "subscriptions/listen")
    assert raised is None and folded.complete and folded.choices[0].finish_reason == "stop" and not codes(folded)
    assert folded.native is not None and (honored, events) == events_folded(folded.native)
    assert events == [ToolsListChanged(), ResourceUpdated(uri="file:///notes.md")]


@pytest.mark.parametrize("serving", ["v2026-listen-stream-dropped.sse"], indirect=True)
def test_a_dropped_listen_stream_is_lost_for_the_sdk_after_it_tries_to_resume(
        serving: tuple[ModernServer, str]) -> None:
    app, url = serving
    honored, events, raised = listen(url)
    folded = folded_as_sent(app, "subscriptions/listen")
    assert isinstance(raised, SubscriptionLost) and not folded.complete
    assert codes(folded) == sorted(expected("v2026-listen-stream-dropped.sse")["diagnostic_codes"])
    assert folded.native is not None and (honored, events) == events_folded(folded.native)
    # Pinned: 2026-07-28 has no resumption, yet the SDK's transport, seeing SSE ids, asks to resume with
    # Last-Event-ID (two GETs, a second apart: this test's two seconds) before it gives the subscription up.
    last_id = [line for line in app.capture.decode().splitlines() if line.startswith("id: ")][-1][4:]
    assert [(seen.verb, seen.headers.get("last-event-id")) for seen in app.seen[2:]] == [("GET", last_id)] * 2
