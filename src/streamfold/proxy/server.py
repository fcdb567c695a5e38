"""Running the proxy under uvicorn: from `streamfold record` (`serve`) or in a
background thread for tests (`start_in_thread`). The socket is bound here,
before uvicorn starts, so port 0 gives a URL that is printed at once."""

from __future__ import annotations

from ..fronts.serving import RunningServer, bind, pass_through_server, run_in_thread, url_of
from .app import RecordingProxy

__all__ = ["serve", "start_in_thread"]


def serve(app: RecordingProxy, *, host: str, port: int) -> None:
    """Serve until Ctrl+C, printing the URL it listens on first."""
    sock = bind(host, port)
    app.host, app.port = host, sock.getsockname()[1]
    app.console.line(f"streamfold record: listening on {url_of(sock, host, app.token)} -> {app.target.url}")
    try:
        pass_through_server(app).run(sockets=[sock])
    finally:
        sock.close()


def start_in_thread(app: RecordingProxy, *, host: str = "127.0.0.1", port: int = 0,
                    timeout: float = 10.0) -> RunningServer:
    """Start the proxy on host:port in a background thread and wait until it accepts requests."""
    sock = bind(host, port)
    app.host, app.port = host, sock.getsockname()[1]
    return run_in_thread(pass_through_server(app), sock, url_of(sock, host, app.token), name="streamfold-record",
                         timeout=timeout)
