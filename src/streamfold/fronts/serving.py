"""What the servers (the page's `web`, the proxy's `record`, the replay server's `serve`) share to run
under uvicorn: a socket bound before uvicorn starts (so port 0 gives a URL at once), a server run in a
daemon thread for tests, the Host check of a server on loopback, the access token of a server bound
off loopback (`new_token`, `admit`), and the lines they print (`LineOutput`: never blocking the
server). Fronts never import each other; they import this."""

from __future__ import annotations

import collections
import hmac
import io
import ipaddress
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import unquote

if TYPE_CHECKING:  # only the servers' own modules load uvicorn: the replay vocabulary and the pytest plugin don't
    import uvicorn

__all__ = ["LOOPBACK_NAMES", "MAX_ECHOED", "TOKEN_HEADER", "TOKEN_PATH", "LineOutput", "RunningServer", "admit",
           "bind", "is_loopback_address", "is_loopback_host", "log_through", "new_token", "pass_through_server",
           "run_in_thread", "shorten", "split_host", "token_matches", "url_of"]

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


def split_host(host: str) -> tuple[str, str] | None:
    """A Host header as (name, port digits or ""), lowercased, an IPv6 name kept in its brackets; None
    when it is malformed (text after a bracketed name, a port that is no port number)."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host.partition("]")
        if rest and not rest.startswith(":"):
            return None
        name, given = name + "]", rest[1:]
    else:
        name, _, given = host.partition(":")
    if given and not (given.isascii() and given.isdigit() and len(given) <= 5):
        return None
    return name, given


def is_loopback_host(host: str, listen_host: str, port: int) -> bool:
    """Whether a Host header names this server: a loopback name (or the address it listens on) and its
    port. Anything else is a request meant for another host (or a DNS-rebinding page): refused."""
    parts = split_host(host)
    if parts is None or not parts[1] or int(parts[1]) != port:
        return False
    name = parts[0]
    own = listen_host.strip("[]").lower()
    return name in LOOPBACK_NAMES or name.strip("[]") == own


def is_loopback_address(host: str) -> bool:
    """Whether a listen address is this machine's loopback (`localhost`, 127.0.0.0/8, ::1): only programs on
    this machine reach a server bound there. Anything else (0.0.0.0, ::, a LAN address, a name) is off
    loopback: other machines may reach it, and it needs the run's access token."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


# -- the access token of a server bound off loopback ----------------------------------------

#: The request header a client may carry the token in (a script, a proxy's client that cannot change paths).
TOKEN_HEADER = "x-streamfold-token"
#: The path prefix a client may carry it in: `http://HOST:PORT/t/TOKEN/v1/...` as an SDK's base URL.
TOKEN_PATH = "/t/"

Scope = MutableMapping[str, Any]


def new_token() -> str:
    """A fresh access token for one run of a server (printed in its URL, never stored)."""
    return secrets.token_urlsafe(24)


def token_matches(given: str | bytes | None, token: str) -> bool:
    """Whether `given` is the token, compared in constant time."""
    if given is None:
        return False
    if isinstance(given, str):
        given = given.encode("utf-8", "surrogateescape")
    return hmac.compare_digest(given, token.encode())


def admit(scope: Scope, token: str | None, *, bearer: bool = False) -> Scope | None:
    """The request as the server should see it, or None when it must be refused (401).

    Without a token (a server on loopback) every request is admitted as it is. With one, the
    request must carry it: as the path prefix `/t/TOKEN` (taken off the path the app sees), in the
    `X-Streamfold-Token` header (taken out of the headers, so it is neither forwarded nor recorded),
    or, with `bearer` (the replay server, whose Authorization header goes nowhere), as
    `Authorization: Bearer TOKEN`."""
    if token is None:
        return scope
    raw_path: bytes = scope.get("raw_path") or scope["path"].encode("utf-8")
    headers: list[tuple[bytes, bytes]] = list(scope["headers"])
    carried = [value for name, value in headers if name.lower() == TOKEN_HEADER.encode()]
    admitted = any(token_matches(value, token) for value in carried)
    if bearer and not admitted:
        admitted = any(token_matches(value[7:].strip(), token) for name, value in headers
                       if name.lower() == b"authorization" and value[:7].lower() == b"bearer ")
    if raw_path.startswith(TOKEN_PATH.encode()):
        given, slash, rest = raw_path[len(TOKEN_PATH):].partition(b"/")
        if token_matches(given, token):
            admitted, raw_path = True, slash + rest or b"/"
            own, path = TOKEN_PATH + token, scope["path"]
            path = (path[len(own):] or "/") if path.startswith(own) else unquote(raw_path.decode("latin-1"))
            scope = {**scope, "raw_path": raw_path, "path": path}
    if not admitted:
        return None
    if carried:
        scope = {**scope, "headers": [(name, value) for name, value in headers
                                      if name.lower() != TOKEN_HEADER.encode()]}
    return scope


def url_of(sock: socket.socket, host: str, token: str | None = None) -> str:
    """The URL a server on `sock` (bound to `host`) answers at; with `token`, the base URL a client is given
    (the token as its path prefix)."""
    shown = host if ":" not in host or host.startswith("[") else f"[{host}]"
    return f"http://{shown}:{sock.getsockname()[1]}" + (f"{TOKEN_PATH}{token}" if token is not None else "")


def pass_through_server(app: Callable[..., Awaitable[None]]) -> uvicorn.Server:
    """uvicorn for a raw ASGI app whose responses must leave as the app sends them (the proxy's, the
    replay server's): h11, so each body message is its own chunk; no Server or Date header of uvicorn's.
    uvicorn's logging is left as the program set it (no `log_config`): a command sends it through
    `log_through`, a test's server to the usual last-resort stderr."""
    import uvicorn  # here, not at the top: only a server that runs loads it

    return uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, proxy_headers=False,
                                         server_header=False, date_header=False, lifespan="off", ws="none",
                                         http="h11", log_config=None))


#: The most characters of a name a client chose (a path, a capture's name, a method) a line echoes.
MAX_ECHOED = 200


def shorten(text: str, limit: int = MAX_ECHOED) -> str:
    """`text` cut to `limit` characters, the cut marked with an ellipsis: a client's 60 KB path is not
    printed whole."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class LineOutput:
    """What a server prints (its URL first, then a line per request or exchange), written to `stream` by
    a thread of its own, so that an output nobody reads never blocks serving.

    Why not write directly: once a pipe's buffer is full (64 KiB on Linux) a write blocks until someone
    reads, and a server that prints from its event loop then stops answering for good (`streamfold serve`
    did after ~700 requests when its caller read only the URL line). Why not print nothing on a pipe: a
    pipe (`| tee`, a CI log, a test harness) is where these lines are wanted. So the lines wait in a
    bounded backlog (`backlog` bytes) and the thread writes them as the output takes them; a line that
    finds the backlog full is dropped and counted, and the count is written in its place once the output
    moves again. The thread writes to the file descriptor (no Python-level lock it could hold forever);
    a stream without one (a test's) is written as it is.
    """

    def __init__(self, stream: TextIO, *, backlog: int = 256 * 1024) -> None:
        self.stream = stream
        self.backlog = backlog
        self.encoding = getattr(stream, "encoding", None) or "utf-8"
        stream.flush()  # what was printed before goes first
        try:
            self._fd: int | None = stream.fileno()
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            self._fd = None
        self._pending: collections.deque[bytes] = collections.deque()
        self._waiting = 0  # bytes queued or being written
        self._dropped = 0
        self._closed = self._broken = False
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None

    @property
    def dropped(self) -> int:
        """Lines dropped since the last count was written (the output was not being read)."""
        return self._dropped

    def line(self, text: str) -> None:
        """Print `text` and a newline, without waiting for the output."""
        self.write(text + "\n")

    def write(self, text: str) -> int:
        """Queue `text` (a whole line or block: what is dropped is dropped whole)."""
        data = text.encode(self.encoding, "backslashreplace")
        with self._lock:
            if self._broken or self._closed:
                return len(text)
            if self._dropped:
                note = (f"[streamfold: {self._dropped} line{'s' * (self._dropped != 1)} dropped: the output was "
                        "not being read]\n").encode(self.encoding)
                if self._waiting + len(note) + len(data) > self.backlog:
                    self._dropped += 1
                    return len(text)
                data, self._dropped = note + data, 0
            elif self._waiting + len(data) > self.backlog:
                self._dropped += 1
                return len(text)
            self._pending.append(data)
            self._waiting += len(data)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="streamfold-output", daemon=True)
                self._thread.start()
            self._lock.notify()
        return len(text)

    def flush(self) -> None:
        """Nothing to do: lines go out as the output takes them (a file-like object's method)."""

    def fileno(self) -> int:
        if self._fd is None:
            raise io.UnsupportedOperation("fileno")
        return self._fd

    def isatty(self) -> bool:
        return self._fd is not None and os.isatty(self._fd)

    def close(self, timeout: float = 2.0) -> None:
        """Stop taking lines; wait up to `timeout` seconds for those queued to go out."""
        deadline = time.monotonic() + timeout
        with self._lock:
            self._closed = True
            self._lock.notify()
            while self._waiting and not self._broken and time.monotonic() < deadline:
                self._lock.wait(max(0.0, deadline - time.monotonic()))

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._pending and not self._closed:
                    self._lock.wait()
                if not self._pending:
                    return
                batch = b"".join(self._pending)
                self._pending.clear()
            try:
                self._send(batch)
            except OSError:  # the reader went away (EPIPE) or the output is gone: nothing more can be said
                with self._lock:
                    self._broken = True
                    self._pending.clear()
                    self._waiting = 0
                    self._lock.notify_all()
                return
            with self._lock:
                self._waiting -= len(batch)
                self._lock.notify_all()

    def _send(self, data: bytes) -> None:
        if self._fd is None:
            self.stream.write(data.decode(self.encoding))
            self.stream.flush()
            return
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]


class _LineHandler(logging.Handler):
    def __init__(self, output: LineOutput) -> None:
        super().__init__()
        self.output = output

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.output.line(self.format(record))
        except Exception:  # logging's rule: a handler never raises into the code that logs (handleError says it)
            self.handleError(record)


def log_through(output: LineOutput) -> None:
    """Send uvicorn's own warnings and errors (one per invalid request, an app's exception) through
    `output`: a client that sends bad requests by the thousand must not freeze a server whose stderr
    nobody reads, as its lines would once the pipe is full."""
    handler = _LineHandler(output)
    handler.setFormatter(logging.Formatter("%(levelname)s:  %(message)s"))
    logger = logging.getLogger("uvicorn")
    for old in list(logger.handlers):
        if isinstance(old, _LineHandler):
            logger.removeHandler(old)
    logger.addHandler(handler)
    logger.propagate = False
