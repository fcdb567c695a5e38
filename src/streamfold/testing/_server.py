"""`start_server`: the replay server (`streamfold serve`) started in a thread for a client's test, as the
`streamfold_server` fixture hands it out, with the reference of what each request was served.

Strategy: the server is the real one (uvicorn on 127.0.0.1, port 0), so the client under test talks HTTP
as it would to the vendor. The reference is folded from the bytes the server actually sent on a request,
with the status and headers it sent, into a full `Result` with its frames, so that `assert_reply` can name
the frame a client got wrong. The replay package (and with it uvicorn) is imported only when a server is
started: a test run that never starts one does not pay for it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..result import Result

if TYPE_CHECKING:
    from ..fronts.serving import RunningServer
    from ..replay import Recording, ReplayServer

__all__ = ["SDK_BASE_PATHS", "StreamfoldServer", "start_server"]

#: What each SDK wants after the server's URL in its `base_url`: the part of the vendor's URL the SDK does
#: not add itself (OpenAI's clients add `/chat/completions` or `/responses` to `.../v1`; Anthropic's adds
#: `/v1/messages`; google-genai adds `v1beta/models/...`).
SDK_BASE_PATHS = {"openai": "/v1", "anthropic": "", "google-genai": "", "httpx": ""}


class StreamfoldServer:
    """A running replay server: where to point the client (`url`, `base_url_for`), what it was served
    (`expected`, `expected_for`, `requests`), and `stop()`. Made by `start_server` or the fixture."""

    def __init__(self, app: ReplayServer, running: RunningServer) -> None:
        self._app = app
        self._running = running
        #: The server's root, `http://127.0.0.1:PORT`: every path under it is answered from a capture.
        self.url = running.url
        #: The same root; an SDK that must have the vendor's path prefix gets it from `base_url_for`.
        self.base_url = running.url

    def base_url_for(self, sdk: str, *, capture: str | None = None) -> str:
        """The `base_url` to give `sdk` ("openai", "anthropic", "google-genai", "httpx"): the server's URL
        with the path the SDK expects there (OpenAI: `/v1`). `capture` names the capture to serve when the
        server has several (a `/@NAME` path prefix, which the server strips)."""
        if sdk not in SDK_BASE_PATHS:
            raise ValueError(f"base_url_for knows the SDKs {', '.join(SDK_BASE_PATHS)}, not {sdk!r}")
        if capture is not None and capture not in self.captures:
            raise ValueError(f"no capture {capture!r}: this server serves {', '.join(self.captures)}")
        prefix = "" if capture is None else f"/@{capture}"
        return f"{self.url}{prefix}{SDK_BASE_PATHS[sdk]}"

    @property
    def captures(self) -> list[str]:
        """The names of the captures served, in order (a request chooses among them as docs/replay.md says)."""
        return [recording.name for recording in self._app.recordings]

    @property
    def faults(self) -> tuple[str, ...]:
        """The fault SPECs every request is served with."""
        return tuple(fault.spec for fault in self._app.faults)

    @property
    def expected(self) -> Result:
        """The reference of the last request served: the fold of the bytes sent on it (a `Result` with its
        frames, for `assert_reply`). Raises LookupError when no request has been served."""
        served = self._app.log.get(None)
        if served is None:
            raise LookupError(f"no request has reached the replay server at {self.url} yet: point the client "
                              "at server.base_url (or base_url_for(...)) and make its request first")
        return served.folded()

    def expected_for(self, request: int) -> Result:
        """The reference of request `request` (its id: the `x-streamfold-request` response header, counted
        from 1). Raises LookupError for a request not served (or one of the oldest, past the last 100)."""
        served = self._app.log.get(request)
        if served is None:
            known = [entry.request for entry in self._app.log.entries()]
            raise LookupError(f"no request {request} on the replay server at {self.url}; it has {known}")
        return served.folded()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The requests served, oldest first, as `GET /_streamfold/requests` lists them: request id,
        capture, faults, status, planned and sent bytes, whether the response finished or the client left."""
        return [entry.summary() for entry in self._app.log.entries()]

    def stop(self) -> None:
        """Stop the server (the fixture does it at teardown)."""
        self._running.stop()

    def __enter__(self) -> StreamfoldServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"StreamfoldServer({self.url!r}, captures={self.captures!r}, faults={list(self.faults)!r})"


def _fault_specs(faults: str | Iterable[str]) -> list[str]:
    # One SPEC alone is the common case (`faults=fault` from `every_transparent_fault`): never its letters.
    return [faults] if isinstance(faults, str) else list(faults)


def _recordings(sources: Sequence[Any]) -> list[Recording]:
    from ..replay import Recording, read_sources, recording_of
    from ..services import Capture

    found: list[Recording] = []
    for position, source in enumerate(sources):
        if isinstance(source, Recording):
            found.append(source)
        elif isinstance(source, (bytes, bytearray)):
            found.append(recording_of(Capture(bytes(source), "raw"), f"capture-{position}"))
        elif isinstance(source, (str, os.PathLike)):
            found.extend(read_sources([os.fspath(source)]))
        else:
            raise TypeError(f"a capture to serve is a path, a `DB.sqlite#ID`, a directory, bytes or a Recording, "
                            f"not {type(source).__name__}")
    return found


def start_server(*sources: Any, faults: str | Iterable[str] = (), speed: str | float = "max",
                 seed: int = 0) -> StreamfoldServer:
    """Start the replay server on 127.0.0.1 serving `sources` (paths, directories, `DB.sqlite#ID`, a
    capture's bytes) with `faults` (SPECs, as `streamfold serve --fault`), paced by `speed` ("max" by
    default: no waiting; "original"; a factor), random faults drawn from `seed`. Raises `FaultError`
    when a fault cannot apply to a capture and `SourceError` when a source cannot be read (both
    ValueErrors). Stop it with `.stop()` or use it as a context manager."""
    from ..replay import ReplayServer, parse_fault
    from ..replay.server import start_in_thread

    if not sources:
        raise ValueError("start_server needs at least one capture to serve")
    app = ReplayServer(_recordings(sources), [parse_fault(spec) for spec in _fault_specs(faults)],
                       speed=speed, seed=seed)
    return StreamfoldServer(app, start_in_thread(app))
