"""A real upstream for the recording proxy's tests: a small raw ASGI app, served
by uvicorn on 127.0.0.1 in a thread, that streams captures with delays, answers
429, streams gzip, resets mid-body, and notices when its client goes away."""

from __future__ import annotations

import asyncio
import gzip
import threading
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

CAPTURES = Path(__file__).resolve().parent / "captures"
OPENAI = (CAPTURES / "openai" / "o3-usage-only-final-chunk.sse").read_bytes()
ANTHROPIC = (CAPTURES / "anthropic" / "a5-ping-before-first-delta.sse").read_bytes()
RATE_LIMITED = b'{"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}'


async def read_body(receive: Any) -> bytes:
    """An ASGI request's whole body."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


def frames(body: bytes) -> list[bytes]:
    """The body cut after each blank line (one SSE event per piece)."""
    pieces, start = [], 0
    while (end := body.find(b"\n\n", start)) != -1:
        pieces.append(body[start:end + 2])
        start = end + 2
    if start < len(body):
        pieces.append(body[start:])
    return pieces


class Upstream:
    """Paths: /v1/chat/completions (OpenAI SSE), /v1/messages (Anthropic SSE), /hold (one frame, then waits
    for `release`), /ratelimit (429 JSON), /gzip (gzip-encoded SSE), /reset (half a body, then the connection
    dropped), /endless (frames until the client leaves; `left` is set then). `requests` keeps each one's head."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.left = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.gzipped = gzip.compress(OPENAI)

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await read_body(receive)
        self.requests.append({"method": scope["method"], "path": scope["path"], "query": scope["query_string"],
                              "headers": [(k.decode(), v.decode()) for k, v in scope["headers"]], "body": body})
        path = scope["path"]

        async def start(status: int, headers: list[tuple[bytes, bytes]]) -> None:
            await send({"type": "http.response.start", "status": status, "headers": headers})

        async def chunk(data: bytes, more: bool = True) -> None:
            await send({"type": "http.response.body", "body": data, "more_body": more})

        sse = [(b"content-type", b"text/event-stream"), (b"x-upstream", b"yes")]
        if path in ("/v1/chat/completions", "/v1/messages"):
            await start(200, sse)
            for piece in frames(OPENAI if path == "/v1/chat/completions" else ANTHROPIC):
                await chunk(piece)
                await asyncio.sleep(0.01)
            await chunk(b"", more=False)
        elif path == "/hold":
            await start(200, sse)
            pieces = frames(OPENAI)
            await chunk(pieces[0])
            while not self.release.is_set():
                await asyncio.sleep(0.01)
            for piece in pieces[1:]:
                await chunk(piece)
            await chunk(b"", more=False)
        elif path == "/ratelimit":
            await start(429, [(b"content-type", b"application/json"), (b"retry-after", b"7"),
                              (b"content-length", str(len(RATE_LIMITED)).encode())])
            await chunk(RATE_LIMITED, more=False)
        elif path == "/gzip":
            await start(200, [*sse, (b"content-encoding", b"gzip")])
            data = self.gzipped
            for at in range(0, len(data), 64):
                await chunk(data[at:at + 64])
                await asyncio.sleep(0.005)
            await chunk(b"", more=False)
        elif path == "/reset":
            await start(200, sse)
            await chunk(frames(OPENAI)[0])
            await asyncio.sleep(0.05)
            raise ConnectionResetError("the upstream drops the connection mid-body")
        elif path == "/endless":
            await start(200, sse)

            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                self.left.set()

            watcher = asyncio.ensure_future(watch())
            try:
                while not self.left.is_set():
                    await chunk(b'data: {"choices": [{"index": 0, "delta": {"content": "x"}}]}\n\n')
                    await asyncio.sleep(0.02)
            finally:
                watcher.cancel()
        else:
            await start(404, [(b"content-type", b"text/plain")])
            await chunk(b"no such path", more=False)
