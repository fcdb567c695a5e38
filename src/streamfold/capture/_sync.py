"""`RecordingTransport`: a sync httpx2 or httpx transport that hands each request
to the transport it wraps and records the exchange while the client reads it.

The response's byte stream is replaced by one that records each chunk the
client pulls (its bytes and the moment it came out of the inner transport)
and then yields it unchanged. Those chunks are the body as it came off the
connection: chunked transfer-encoding removed, any `Content-Encoding` still
on (the client decodes above the transport), which is what the store keeps.
The replacement stream subclasses the response library's own
`SyncByteStream`, since its client checks that, so one class serves httpx2
and httpx alike.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator
from typing import Any, cast

from ..store import CaptureStore
from ._recording import Recording, start

__all__ = ["RecordingTransport", "library_of", "recording_stream", "request_body", "whole_body"]


def library_of(response: Any) -> Any:
    """The module (`httpx2`, `httpx`) whose `Response` this is; None for another kind of response."""
    return sys.modules.get(type(response).__module__.partition(".")[0])


def whole_body(response: Any) -> bytes | None:
    """The body of a response the inner transport already read (a mock, an ASGI app), else None."""
    try:
        content = response.content
    except Exception:  # ResponseNotRead: a stream still to be read
        return None
    return content if isinstance(content, bytes) else None


class _RecordingSyncStream:
    """The inner stream's chunks, each recorded as the client pulls it."""

    def __init__(self, inner: Any, recording: Recording) -> None:
        self._inner, self._recording = inner, recording

    def __iter__(self) -> Iterator[bytes]:
        recording = self._recording
        try:
            for chunk in self._inner:
                recording.read(chunk)
                yield chunk
        except GeneratorExit:  # the client stopped iterating; close() says how it ended
            recording.closed_early()
            raise
        except BaseException as exc:
            recording.body_failed(exc)
            raise
        recording.body_ended()

    def close(self) -> None:
        try:
            if not self._recording.ended:
                self._recording.closed_early()
        finally:
            self._inner.close()


@functools.lru_cache(maxsize=8)
def _stream_class(base: type) -> type:
    return type("RecordingByteStream", (_RecordingSyncStream, base), {"__module__": __name__})


def recording_stream(response: Any, recording: Recording) -> Any:
    """The recording stream for `response`, of its library's `SyncByteStream` kind."""
    base = getattr(library_of(response), "SyncByteStream", None)
    cls = _stream_class(base) if isinstance(base, type) else _RecordingSyncStream
    return cast(Any, cls)(response.stream, recording)


def request_body(request: Any) -> bytes:
    """The request's body; a streamed one (an upload) is read into memory first so it can be stored."""
    try:
        return bytes(request.content)
    except Exception:  # RequestNotRead
        return bytes(request.read())


class RecordingTransport:
    """Wraps a sync transport (`httpx2.HTTPTransport`, `httpx.HTTPTransport`, or any object with
    `handle_request`) so that every exchange through it is written into `store`:

        client = httpx2.Client(transport=RecordingTransport(httpx2.HTTPTransport(retries=1), store))

    The client gets the inner transport's response and exceptions unchanged."""

    def __init__(self, inner: Any, store: CaptureStore) -> None:
        if not callable(getattr(inner, "handle_request", None)):
            raise TypeError(f"RecordingTransport wraps a sync transport (with handle_request), got {inner!r}")
        self.inner, self.store = inner, store

    def handle_request(self, request: Any) -> Any:
        """Send `request` through the inner transport, recording it; the response body is recorded as read."""
        recording = start(self.store, request.method, str(request.url), request.headers.raw, request_body(request))
        try:
            response = self.inner.handle_request(request)
        except BaseException as exc:
            recording.failed(exc)
            raise
        recording.response(response.status_code, response.headers.raw)
        content = whole_body(response)
        if content is not None:
            recording.read(content)
            recording.body_ended()
        else:
            response.stream = recording_stream(response, recording)
        return response

    def close(self) -> None:
        """Close the inner transport."""
        self.inner.close()

    def __enter__(self) -> RecordingTransport:
        self.inner.__enter__()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.inner.__exit__(*exc_info)
