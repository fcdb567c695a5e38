"""Agreement with the official `mcp` SDK's client, run as a program runs it: `streamable_http_client` and
`ClientSession` against a real MCP server on 127.0.0.1 (a small ASGI app under uvicorn) that answers
`initialize` and then a `tools/call` with a capture's bytes. What `call_tool` returns (the text content,
`structuredContent`, `isError`, the progress its callback saw) must be what the fold says; where the SDK
raises (an error response) the fold must carry the same error."""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import pytest
import uvicorn

import streamfold
from proxy_upstream import read_body
from streamfold.fronts.serving import RunningServer, bind, run_in_thread

anyio = pytest.importorskip("anyio")
mcp_types = pytest.importorskip("mcp.types")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "mcp"
# The captures whose stream answers a tools/call the way a server would (one response, `message` events).
TOOL_CALLS = ["tool-result-with-progress.sse", "structured-content.sse", "tool-error.sse",
              "sampling-request-then-result.sse"]


class MCPServer:
    """Streamable HTTP, as little of it as a client needs: `initialize` and `tools/list` answered in JSON,
    notifications with 202, `tools/call` with the bytes of `body` as an SSE stream."""

    def __init__(self) -> None:
        self.body = b""

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        raw = await read_body(receive)
        if scope["method"] != "POST":
            await self._send(send, 405, b"", b"text/plain")
            return
        request = json.loads(raw)
        if request.get("method") == "initialize":
            answer = {"jsonrpc": "2.0", "id": request["id"], "result": {
                "protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "captures", "version": "1.0.0"}}}
            await self._send(send, 200, json.dumps(answer).encode(), b"application/json")
        elif request.get("method") == "tools/list":  # the SDK lists the tools to check a result's schema
            tools = {"tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}]}
            answer = {"jsonrpc": "2.0", "id": request["id"], "result": tools}
            await self._send(send, 200, json.dumps(answer).encode(), b"application/json")
        elif "id" not in request:
            await self._send(send, 202, b"", b"text/plain")
        else:
            # A server sends progress under the token the request gave (the capture's is the spec's "abc123").
            token = (request.get("params") or {}).get("_meta", {}).get("progressToken")
            body = self.body if token is None else self.body.replace(b'"abc123"', json.dumps(token).encode())
            await self._send(send, 200, body, b"text/event-stream")

    @staticmethod
    async def _send(send: Any, status: int, body: bytes, content_type: bytes) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", content_type), (b"mcp-session-id", b"s-1")]})
        await send({"type": "http.response.body", "body": body, "more_body": False})


@pytest.fixture(scope="module")
def server() -> Any:
    app = MCPServer()
    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    running: RunningServer = run_in_thread(uvicorn.Server(config), sock, f"http://127.0.0.1:{port}/mcp",
                                           name="mcp-server")
    with running:
        yield app, running.url


def call_tool(url: str, timeout: float = 10) -> tuple[Any, list[tuple[float, float | None, str | None]]]:
    """What the SDK's `call_tool` returns (or the error it raises), and what its progress callback saw."""
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def run() -> Any:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            try:
                return await session.call_tool("get_weather", {"location": "New York"}, read_timeout_seconds=timeout,
                                               progress_callback=on_progress)
            except MCPError as error:
                return error

    return anyio.run(run), progress


@pytest.mark.parametrize("name", TOOL_CALLS)
def test_the_sdk_gets_the_reply_the_fold_gives(server: Any, name: str) -> None:
    app, url = server
    app.body = (CAPTURES / name).read_bytes()
    got, _ = call_tool(url)
    assert isinstance(got, mcp_types.CallToolResult)
    folded = streamfold.fold(app.body)
    choice = folded.choices[0]
    texts = [block.text for block in got.content if isinstance(block, mcp_types.TextContent)]
    assert "\n".join(texts) == choice.content
    assert got.is_error is (choice.finish_reason == "error")
    exported = mcp_types.CallToolResult.model_validate(folded.export()["result"])
    assert exported.structured_content == got.structured_content
    assert exported.content == got.content


def test_the_sdk_sees_the_progress_the_fold_keeps_in_order(server: Any) -> None:
    app, url = server
    app.body = (CAPTURES / "tool-result-with-progress.sse").read_bytes()
    _, progress = call_tool(url)
    native = streamfold.fold(app.body).native
    assert native is not None
    kept = [(n["params"]["progress"], n["params"].get("total"), n["params"].get("message"))
            for n in native["notifications"] if n["method"] == "notifications/progress"]
    assert progress == kept == [(50, 100, "Reticulating splines..."), (100, 100, "Done")]


def test_an_error_response_is_what_the_sdk_raises(server: Any) -> None:
    app, url = server
    app.body = (CAPTURES / "protocol-error.sse").read_bytes()
    got, _ = call_tool(url)
    assert isinstance(got, MCPError) and got.error.code == -32602
    folded = streamfold.fold(app.body)
    assert not folded.complete and got.error.message in folded.errors[0].message


def test_an_error_event_never_reaches_the_sdk(server: Any) -> None:
    # The trap `event-error.sse` shows: the SDK reads only `message` events, so it waits out its timeout.
    app, url = server
    app.body = (CAPTURES / "event-error.sse").read_bytes()
    got, progress = call_tool(url, timeout=1)
    assert isinstance(got, MCPError) and got.error.code == mcp_types.REQUEST_TIMEOUT
    assert progress == [(10, 100, "Starting")]
    folded = streamfold.fold(app.body)
    assert [error.code for error in folded.errors] == ["in-stream-error"]
    assert "upstream timed out" in folded.errors[0].message
