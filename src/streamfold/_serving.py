"""What the servers (the page's `web`, the proxy's `record`, the replay server's `serve`) share to run
under uvicorn: a socket bound before uvicorn starts (so port 0 gives a URL at once), a server run in a
daemon thread for tests, and the Host check of a server on loopback. Fronts never import each other;
they import this."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only the servers' own modules load uvicorn: the replay vocabulary and the pytest plugin don't
    import uvicorn

__all__ = ["LOOPBACK_NAMES", "RunningServer", "bind", "is_loopback_host", "run_in_thread"]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})


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


def is_loopback_host(host: str, listen_host: str, port: int) -> bool:
    """Whether a Host header names this server: a loopback name (or the address it listens on) and its
    port. Anything else is a request meant for another host (or a DNS-rebinding page): refused."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host.partition("]")
        name += "]"
        if rest and not rest.startswith(":"):
            return False
        given = rest[1:]
    else:
        name, _, given = host.partition(":")
    if not (given.isascii() and given.isdigit() and len(given) <= 5) or int(given) != port:
        return False
    own = listen_host.strip("[]").lower()
    return name in LOOPBACK_NAMES or name.strip("[]") == own
