"""Running the replay server under uvicorn: from `streamfold serve` (`serve`) or in a background
thread for tests and fixtures (`start_in_thread`). The socket is bound here, before uvicorn starts,
so port 0 gives a URL that is printed at once (the first line of `streamfold serve`'s output)."""

from __future__ import annotations

import socket
from collections.abc import Callable

import uvicorn

from .._serving import RunningServer, bind, run_in_thread
from .app import ReplayServer

__all__ = ["serve", "start_in_thread"]


def _server(app: ReplayServer) -> uvicorn.Server:
    # h11: each ASGI body message goes out as its own chunk, so the planned writes stay writes.
    # No Server or Date header of uvicorn's: the capture's headers are what is served.
    return uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, proxy_headers=False,
                                         server_header=False, date_header=False, lifespan="off", ws="none",
                                         http="h11"))


def _url(sock: socket.socket, host: str) -> str:
    shown = host if ":" not in host or host.startswith("[") else f"[{host}]"
    return f"http://{shown}:{sock.getsockname()[1]}"


def serve(app: ReplayServer, *, host: str, port: int, echo: Callable[[str], None]) -> None:
    """Serve until Ctrl+C; the URL it listens on is the first line `echo` gets."""
    sock = bind(host, port)
    app.host, app.port = host, sock.getsockname()[1]
    echo(_url(sock, host))
    try:
        _server(app).run(sockets=[sock])
    finally:
        sock.close()


def start_in_thread(app: ReplayServer, *, host: str = "127.0.0.1", port: int = 0,
                    timeout: float = 10.0) -> RunningServer:
    """Start the replay server on host:port in a background thread and wait until it accepts requests."""
    sock = bind(host, port)
    app.host, app.port = host, sock.getsockname()[1]
    return run_in_thread(_server(app), sock, _url(sock, host), name="streamfold-serve", timeout=timeout)
