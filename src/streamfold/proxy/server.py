"""Running the proxy under uvicorn: from `streamfold record` (`serve`) or in a
background thread for tests (`start_in_thread`). The socket is bound here,
before uvicorn starts, so port 0 gives a URL that is printed at once."""

from __future__ import annotations

import socket

import uvicorn

from .._serving import RunningServer, bind, run_in_thread
from .app import RecordingProxy

__all__ = ["serve", "start_in_thread"]


def _server(app: RecordingProxy) -> uvicorn.Server:
    # No Server or Date header of uvicorn's: the upstream's pass through unchanged.
    return uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, proxy_headers=False,
                                         server_header=False, date_header=False, lifespan="off", ws="none",
                                         http="h11"))


def _url(sock: socket.socket, host: str) -> str:
    shown = host if ":" not in host or host.startswith("[") else f"[{host}]"
    return f"http://{shown}:{sock.getsockname()[1]}"


def serve(app: RecordingProxy, *, host: str, port: int) -> None:
    """Serve until Ctrl+C, printing the URL it listens on first."""
    sock = bind(host, port)
    app.host, app.port = host, sock.getsockname()[1]
    app.console.line(f"streamfold record: listening on {_url(sock, host)} -> {app.target.url}")
    try:
        _server(app).run(sockets=[sock])
    finally:
        sock.close()


def start_in_thread(app: RecordingProxy, *, host: str = "127.0.0.1", port: int = 0,
                    timeout: float = 10.0) -> RunningServer:
    """Start the proxy on host:port in a background thread and wait until it accepts requests."""
    sock = bind(host, port)
    app.host, app.port = host, sock.getsockname()[1]
    return run_in_thread(_server(app), sock, _url(sock, host), name="streamfold-record", timeout=timeout)
