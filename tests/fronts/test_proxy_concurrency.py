"""Many streams through the recording proxy at once (benchmarks/bench_proxy.py runs this at 50 x 10k):
each frame its own write at the upstream, every byte at every client and in the store, in order,
nothing of one stream in another's."""

from __future__ import annotations

import asyncio
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx

from proxy_rig import serving
from streamfold.proxy.app import RecordingProxy
from streamfold.proxy.server import start_in_thread
from streamfold.store import CaptureStore, get_exchange, list_exchanges

STREAMS, FRAMES = 10, 500


def frame(stream: int, index: int) -> bytes:
    return b'data: {"choices":[{"index":0,"delta":{"content":"s%d f%d %s"}}]}\n\n' % (
        stream, index, b"abcdefghij"[: index % 10])


def expected(stream: int) -> bytes:
    return b"".join(frame(stream, index) for index in range(FRAMES)) + b"data: [DONE]\n\n"


async def frames_upstream(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
    """/frames?stream=S: FRAMES frames of stream S, each its own write, then [DONE]."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    stream = int(parse_qs(scope["query_string"].decode())["stream"][0])
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    for index in range(FRAMES):
        await send({"type": "http.response.body", "body": frame(stream, index), "more_body": True})
        if index % 16 == 0:
            await asyncio.sleep(0)  # the streams' writes interleave
    await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": False})


async def read_all(base: str) -> list[bytes]:
    limits = httpx.Limits(max_connections=STREAMS, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        async def one(stream: int) -> bytes:
            got = bytearray()
            async with client.stream("POST", f"{base}/frames?stream={stream}", content=b"{}") as response:
                assert response.status_code == 200
                async for chunk in response.aiter_raw():
                    got += chunk
            return bytes(got)

        return list(await asyncio.gather(*(one(stream) for stream in range(STREAMS))))


def test_concurrent_streams_arrive_whole_and_in_order_at_every_client_and_in_the_store(tmp_path: Path) -> None:
    db = str(tmp_path / "many.sqlite")
    lines: list[str] = []
    with serving(frames_upstream) as target, CaptureStore.open(db) as store, \
            start_in_thread(RecordingProxy(target, store, echo=lines.append)) as proxy:
        got = asyncio.run(read_all(proxy.url))
        deadline = time.monotonic() + 30
        while len(lines) < STREAMS and time.monotonic() < deadline:
            time.sleep(0.05)
        store.flush()
    assert [len(body) for body in got] == [len(expected(stream)) for stream in range(STREAMS)]
    assert got == [expected(stream) for stream in range(STREAMS)]
    rows = list_exchanges(db)
    assert len(rows) == STREAMS and len(lines) == STREAMS
    reads = 0
    for row in rows:
        stored = get_exchange(db, row["id"])
        stream = int(stored.url.rsplit("=", 1)[1])
        assert stored.outcome == "complete" and stored.body == expected(stream), stream
        offsets = [offset for offset, _ in stored.reads]
        assert offsets == sorted(set(offsets)) and offsets[0] == 0 and b"".join(stored.chunks) == stored.body
        assert row["dialect"] == "openai-chat" and row["complete"] is True and row["frames"] >= FRAMES
        reads += len(stored.reads)
    # The upstream writes 16 frames between yields: what came in together went on together.
    assert reads < STREAMS * FRAMES
    assert all(line.startswith("POST /frames 200 openai-chat complete ") for line in lines), lines
