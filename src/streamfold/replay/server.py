"""Running the replay server under uvicorn: from `streamfold serve` (`serve`) or in a background
thread for tests and fixtures (`start_in_thread`). The socket is bound here, before uvicorn starts,
so port 0 gives a URL that is printed at once (the first line of `streamfold serve`'s output)."""

from __future__ import annotations

from collections.abc import Callable

from ..fronts.serving import RunningServer, bind, pass_through_server, run_in_thread, url_of
from .app import ReplayServer

__all__ = ["serve", "start_in_thread"]


def serve(app: ReplayServer, *, host: str, port: int, echo: Callable[[str], None]) -> None:
    """Serve until Ctrl+C; the URL it listens on is the first line `echo` gets."""
    sock = bind(host, port)
    app.host, app.port = host, sock.getsockname()[1]
    echo(url_of(sock, host, app.token))
    try:
        pass_through_server(app).run(sockets=[sock])
    finally:
        sock.close()


def start_in_thread(app: ReplayServer, *, host: str = "127.0.0.1", port: int = 0,
                    timeout: float = 10.0) -> RunningServer:
    """Start the replay server on host:port in a background thread and wait until it accepts requests."""
    sock = bind(host, port)
    app.host, app.port = host, sock.getsockname()[1]
    return run_in_thread(pass_through_server(app), sock, url_of(sock, host, app.token), name="streamfold-serve",
                         timeout=timeout)
