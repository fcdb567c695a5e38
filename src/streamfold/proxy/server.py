"""Running the proxy under uvicorn: from `streamfold record` (`serve`) or in a
background thread for tests (`start_in_thread`). The socket is bound here,
before uvicorn starts, so port 0 gives a URL that is printed at once."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

import uvicorn

from .app import RecordingProxy

__all__ = ["RunningProxy", "bind", "serve", "start_in_thread"]


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


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
    app.echo(f"streamfold record: listening on {_url(sock, host)} -> {app.target.url}")
    try:
        _server(app).run(sockets=[sock])
    finally:
        sock.close()


@dataclass
class RunningProxy:
    """A proxy running in a daemon thread; `stop()` ends it."""

    url: str
    server: uvicorn.Server
    thread: threading.Thread
    sock: socket.socket

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)
        self.sock.close()

    def __enter__(self) -> RunningProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_in_thread(app: RecordingProxy, *, host: str = "127.0.0.1", port: int = 0,
                    timeout: float = 10.0) -> RunningProxy:
    """Start the proxy on host:port in a background thread and wait until it accepts requests."""
    sock = bind(host, port)
    app.host, app.port = host, sock.getsockname()[1]
    server = _server(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="streamfold-record", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            sock.close()
            raise RuntimeError("the recording proxy did not start")
        time.sleep(0.02)
    return RunningProxy(_url(sock, host), server, thread, sock)
