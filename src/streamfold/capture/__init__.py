"""Recording from inside a Python program, no proxy: clients and transports
that tee every response into the capture store (docs/store.md) while the SDK
reads it unchanged.

    import streamfold.capture
    client = OpenAI(http_client=streamfold.capture.http_client())          # ./streamfold.sqlite
    client = AsyncAnthropic(http_client=streamfold.capture.async_http_client("runs.sqlite"))

`http_client` / `async_http_client` give httpx2 clients (the openai and
anthropic SDKs'), `httpx_client` / `async_httpx_client` plain httpx ones;
`record(client)` makes a client you already have record (an SDK's
`DefaultHttpxClient()`, say); `RecordingTransport` / `AsyncRecordingTransport`
wrap a transport you build yourself. The body is stored as the transport received it (any
Content-Encoding still on), each chunk with the moment the client pulled it.
A front like the command line and the page: it imports the store, never them.
"""

from __future__ import annotations

from ._async import AsyncRecordingTransport
from ._clients import async_http_client, async_httpx_client, http_client, httpx_client, record
from ._recording import CaptureWarning
from ._stores import flush
from ._sync import RecordingTransport

__all__ = ["AsyncRecordingTransport", "CaptureWarning", "RecordingTransport", "async_http_client",
           "async_httpx_client", "flush", "http_client", "httpx_client", "record"]
