"""Read deadlines for the page's server: uvicorn's h11 protocol with a clock on
the request headers and one on the request body.

uvicorn closes a connection left idle after a response (`timeout_keep_alive`),
but a client that sends its request a byte every few seconds, or a body that
never completes, holds the connection (and its memory) for as long as it
likes. Here every request has `header_timeout` seconds, counted from the
connection's start (or the end of the previous response), to deliver its
headers, and then `body_timeout` seconds to deliver its body. Past a deadline
the client gets 408 Request Timeout and the connection is closed; a connection
that sent nothing at all (a browser's spare, opened ahead) is closed quietly.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from .._json import dumps_strict

__all__ = ["DEFAULT_BODY_TIMEOUT", "DEFAULT_HEADER_TIMEOUT", "DEFAULT_KEEP_ALIVE", "deadline_protocol"]

#: Seconds a request has to send its headers.
DEFAULT_HEADER_TIMEOUT = 10.0
#: Seconds a request has to send its body once the headers are in (64 MiB over loopback takes well under one).
DEFAULT_BODY_TIMEOUT = 60.0
#: Seconds an idle connection is kept open after a response.
DEFAULT_KEEP_ALIVE = 5


def deadline_protocol(header_timeout: float, body_timeout: float) -> type[asyncio.Protocol]:
    """The protocol class to give uvicorn (`Config(http=...)`), with these deadlines."""
    if not (header_timeout > 0 and body_timeout > 0):
        raise ValueError(f"the read timeouts must be positive, got {header_timeout!r} and {body_timeout!r}")

    class Protocol(DeadlineProtocol):
        pass

    Protocol.header_timeout, Protocol.body_timeout = header_timeout, body_timeout
    return Protocol


class DeadlineProtocol(H11Protocol):
    header_timeout = DEFAULT_HEADER_TIMEOUT
    body_timeout = DEFAULT_BODY_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_for: str | None = None  # "headers", "body" or None (the request is in)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def _watch(self) -> None:
        """Arm the clock for what the connection now waits for (each clock keeps running while it waits)."""
        if self.transport.is_closing():
            self._disarm()
            return
        state = self.conn.their_state
        waiting = "headers" if state is h11.IDLE else "body" if state is h11.SEND_BODY else None
        if waiting == self._waiting_for:
            return
        self._disarm()
        if waiting is not None:
            seconds = self.header_timeout if waiting == "headers" else self.body_timeout
            self._deadline = self.loop.call_later(seconds, self._expired)
            self._waiting_for = waiting

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline, self._waiting_for = None, None

    def _expired(self) -> None:
        waiting, self._deadline, self._waiting_for = self._waiting_for, None, None
        if self.transport.is_closing():
            return
        if waiting == "headers":
            started = bool(self.conn.trailing_data[0])  # bytes of a request that never completed
            if started and (self.cycle is None or self.cycle.response_complete):
                self.transport.write(_timeout_response(
                    f"the request's headers did not arrive within {self.header_timeout:g} seconds"))
        elif waiting == "body":
            message = f"the request's body did not arrive within {self.body_timeout:g} seconds"
            cycle = self.cycle
            if cycle is not None and not cycle.response_started:
                # The app is still waiting for the body: answer for it, and tell it the client is gone.
                self.transport.write(_timeout_response(message))
                cycle.response_started = cycle.response_complete = cycle.disconnected = True
                cycle.message_event.set()
        self.transport.close()


def _timeout_response(message: str) -> bytes:
    body = dumps_strict({"error": message}, ensure_ascii=True).encode()
    return (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
            b"cache-control: no-store\r\nx-content-type-options: nosniff\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
