"""Running the page's app under uvicorn: from the command line (`serve`), or in
a background thread for tests and tools (`start_in_thread`).

The socket is bound here, before uvicorn starts, so that port 0 ("pick a free
one") gives a URL that can be printed and opened at once.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import uvicorn

from .._serving import RunningServer, bind, run_in_thread
from .._sizes import parse_size
from .protocol import DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT, DEFAULT_KEEP_ALIVE, deadline_protocol

__all__ = ["RunningServer", "Timeouts", "bind", "parse_size", "serve", "start_in_thread", "url_for"]

def url_for(sock: socket.socket, host: str) -> str:
    """The address a browser on this machine should open (a loopback name, as the app requires)."""
    port = sock.getsockname()[1]
    name = host.strip("[]")
    if is_loopback_address(name):
        shown = f"[{name}]" if ":" in name else name
    else:
        # Bound to every interface (or another address): the app still answers only loopback names.
        shown = "127.0.0.1"
    return f"http://{shown}:{port}/"


def is_loopback_address(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    # left as the program set it (`streamfold web` sends it through `_serving.log_through`).
    return uvicorn.Config(app, log_level="warning", access_log=False, proxy_headers=False, log_config=None,
                          server_header=False, lifespan="off", ws="none",
                          http=deadline_protocol(timeouts.header, timeouts.body),
                          timeout_keep_alive=timeouts.keep_alive)


def serve(app: Any, *, host: str = "127.0.0.1", port: int = 0, open_browser: bool = False,
          echo: Callable[[str], None] = print, timeouts: Timeouts = Timeouts()) -> None:
    """Serve until Ctrl+C, printing the URL first (and opening it with `open_browser`)."""
    sock = bind(host, port)
    url = url_for(sock, host)
    echo(f"streamfold web: {url}  (Ctrl+C to stop)")
    if not is_loopback_address(host.strip("[]")):
        echo(f"streamfold web: listening on {host}, but the page only answers requests addressed to "
             f"localhost, 127.0.0.1 or [::1]")
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
