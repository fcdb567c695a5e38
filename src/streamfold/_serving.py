"""What the two servers (the page's `web`, the proxy's `record`) share to run under uvicorn: a
socket bound before uvicorn starts (so port 0 gives a URL at once) and a server run in a daemon
thread for tests. Fronts never import each other; both import this."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

import uvicorn

__all__ = ["RunningServer", "bind", "run_in_thread"]


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


@dataclass
class RunningServer:
    """A uvicorn server running in a daemon thread; `stop()` ends it."""

    url: str
    server: uvicorn.Server
    thread: threading.Thread
    sock: socket.socket

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)
        self.sock.close()

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run_in_thread(server: uvicorn.Server, sock: socket.socket, url: str, *, name: str,
                  timeout: float = 10.0) -> RunningServer:
    """Run `server` on `sock` in a daemon thread (uvicorn leaves signals alone off the main thread)
    and wait until it accepts requests."""
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=name, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            sock.close()
            raise RuntimeError(f"{name} did not start")
        time.sleep(0.02)
    return RunningServer(url, server, thread, sock)
