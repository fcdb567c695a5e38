"""Running the page's app under uvicorn: from the command line (`serve`), or in
a background thread for tests and tools (`start_in_thread`).

The socket is bound here, before uvicorn starts, so that port 0 ("pick a free
one") gives a URL that can be printed and opened at once.
"""

from __future__ import annotations

import socket
import threading
import time
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import uvicorn

from .._sizes import parse_size
from ..fronts.serving import RunningServer, bind, run_in_thread
from .protocol import DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT, DEFAULT_KEEP_ALIVE, deadline_protocol

__all__ = ["RunningServer", "Timeouts", "bind", "parse_size", "serve", "start_in_thread", "url_for"]

def url_for(sock: socket.socket, host: str, token: str | None = None) -> str:
    """The address a browser should open: a loopback name on loopback, as the app requires there; off
    loopback the address bound (127.0.0.1 for every interface, which this machine's browser reaches) with
    the run's access token, which the page trades for a cookie."""
    port = sock.getsockname()[1]
    name = host.strip("[]")
    if name in ("0.0.0.0", "::", ""):
        shown = "127.0.0.1" if name != "::" else "[::1]"
    else:
        shown = f"[{name}]" if ":" in name else name
    return f"http://{shown}:{port}/" + (f"?token={token}" if token is not None else "")


@dataclass(frozen=True)
class Timeouts:
    """Seconds a client has: to send a request's headers, then its body; idle between requests."""

    header: float = DEFAULT_HEADER_TIMEOUT
    body: float = DEFAULT_BODY_TIMEOUT
    keep_alive: int = DEFAULT_KEEP_ALIVE


def _config(app: Any, timeouts: Timeouts) -> uvicorn.Config:
    # No proxy headers: nothing sits in front of this server, and X-Forwarded-* must not
    # change what the app believes about a request. The h11 protocol with read deadlines
    # (protocol.py); h11 itself refuses a request line plus headers over 16 KiB (400). uvicorn's logging is
    # left as the program set it (`streamfold web` sends it through `fronts.serving.log_through`).
    return uvicorn.Config(app, log_level="warning", access_log=False, proxy_headers=False, log_config=None,
                          server_header=False, lifespan="off", ws="none",
                          http=deadline_protocol(timeouts.header, timeouts.body),
                          timeout_keep_alive=timeouts.keep_alive)


def serve(app: Any, *, host: str = "127.0.0.1", port: int = 0, open_browser: bool = False,
          echo: Callable[[str], None] = print, timeouts: Timeouts = Timeouts(), token: str | None = None) -> None:
    """Serve until Ctrl+C, printing the URL first (and opening it with `open_browser`). `token`: the
    app's access token (off loopback), put in the URL printed."""
    sock = bind(host, port)
    url = url_for(sock, host, token)
    echo(f"streamfold web: {url}  (Ctrl+C to stop)")
    server = uvicorn.Server(_config(app, timeouts))
    if open_browser:
        def open_when_started() -> None:
            while not server.started and not server.should_exit:
                time.sleep(0.05)
            if server.started:
                webbrowser.open(url)
        threading.Thread(target=open_when_started, daemon=True).start()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def start_in_thread(app: Any, *, host: str = "127.0.0.1", port: int = 0, timeout: float = 10.0,
                    timeouts: Timeouts = Timeouts()) -> RunningServer:
    """Start `app` on host:port in a background thread and wait until it accepts requests."""
    sock = bind(host, port)
    return run_in_thread(uvicorn.Server(_config(app, timeouts)), sock, url_for(sock, host), name="streamfold-web",
                         timeout=timeout)
