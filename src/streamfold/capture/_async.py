"""`AsyncRecordingTransport`: `RecordingTransport` for async clients
(`httpx2.AsyncClient`, `httpx.AsyncClient`), the same recording on the
event loop's thread.

The recording calls are the store's cheap ones (`read` appends to a list);
`begin` waits for the store's writer thread to hand out the row id, well
under a millisecond when the disk keeps up. A task cancelled while it reads
the body is the client giving up (`client-cut`).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from typing import Any, cast

from ..store import CaptureStore
from ._recording import Recording, start
from ._sync import library_of, whole_body

__all__ = ["AsyncRecordingTransport"]


class _RecordingAsyncStream:
    """The inner stream's chunks, each recorded as the client pulls it."""

    def __init__(self, inner: Any, recording: Recording) -> None:
        self._inner, self._recording = inner, recording

    async def __aiter__(self) -> AsyncIterator[bytes]:
        recording = self._recording
        try:
            async for chunk in self._inner:
                recording.read(chunk)
                yield chunk
        except GeneratorExit:  # the client stopped iterating; aclose() says how it ended
            recording.closed_early()
            raise
        except BaseException as exc:
            recording.body_failed(exc)
            raise
        recording.body_ended()

    async def aclose(self) -> None:
        try:
            if not self._recording.ended:
                self._recording.closed_early()
        finally:
            await self._inner.aclose()


@functools.lru_cache(maxsize=8)
def _stream_class(base: type) -> type:
    return type("AsyncRecordingByteStream", (_RecordingAsyncStream, base), {"__module__": __name__})


def _recording_stream(response: Any, recording: Recording) -> Any:
    base = getattr(library_of(response), "AsyncByteStream", None)
    cls = _stream_class(base) if isinstance(base, type) else _RecordingAsyncStream
    return cast(Any, cls)(response.stream, recording)


async def _request_body(request: Any) -> bytes:
    try:
        return bytes(request.content)
    except Exception:  # RequestNotRead: a streamed upload, read into memory so it can be stored
        return bytes(await request.aread())


class AsyncRecordingTransport:
    """Wraps an async transport (`httpx2.AsyncHTTPTransport`, `httpx.AsyncHTTPTransport`, or any object
    with `handle_async_request`) so that every exchange through it is written into `store`:

        client = httpx2.AsyncClient(transport=AsyncRecordingTransport(httpx2.AsyncHTTPTransport(), store))

    The client gets the inner transport's response and exceptions unchanged."""

    def __init__(self, inner: Any, store: CaptureStore) -> None:
        if not callable(getattr(inner, "handle_async_request", None)):
            raise TypeError(f"AsyncRecordingTransport wraps an async transport (with handle_async_request), "
                            f"got {inner!r}")
        self.inner, self.store = inner, store

    async def handle_async_request(self, request: Any) -> Any:
        """Send `request` through the inner transport, recording it; the response body is recorded as read."""
        body = await _request_body(request)
        recording = start(self.store, request.method, str(request.url), request.headers.raw, body)
        try:
            response = await self.inner.handle_async_request(request)
        except BaseException as exc:
            recording.failed(exc)
            raise
        recording.response(response.status_code, response.headers.raw)
        content = whole_body(response)
        if content is not None:
            recording.read(content)
            recording.body_ended()
        else:
            response.stream = _recording_stream(response, recording)
        return response

    async def aclose(self) -> None:
        """Close the inner transport."""
        await self.inner.aclose()

    async def __aenter__(self) -> AsyncRecordingTransport:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.inner.__aexit__(*exc_info)
