"""streamfold's pytest plugin, registered by the package (`[project.entry-points.pytest11] streamfold`), so
that installing streamfold gives a test suite the `streamfold_server` fixture:

    def test_my_client(streamfold_server):
        server = streamfold_server("capture.sse", faults=["chunk:1"])
        reply = my_client(base_url=server.base_url_for("openai")).ask("hi")
        assert_reply(reply, server.expected)

Strategy: pytest loads this module in every run of every suite where streamfold is installed, used or
not, so it defines one fixture and imports nothing else: the replay server (and uvicorn) is loaded by
the first test that starts one. The fixture is a factory, because the capture and the faults are the
test's own (often a parameter); each server it starts is stopped at the test's teardown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ._server import StreamfoldServer

__all__ = ["streamfold_server"]

ServerFactory = Callable[..., "StreamfoldServer"]


@pytest.fixture
def streamfold_server() -> Iterator[ServerFactory]:
    """A factory: `streamfold_server(*captures, faults=(), speed="max", seed=0)` starts the replay server on
    127.0.0.1 serving the captures (paths, directories, `DB.sqlite#ID`, bytes) with the faults (SPECs, or
    one SPEC) and returns it: `.base_url`/`.base_url_for(sdk)` for the client, `.expected` (the reference of
    the last request served, for `assert_reply`), `.expected_for(id)`, `.requests`. Every server started
    is stopped when the test ends."""
    from ._server import start_server

    started: list[StreamfoldServer] = []

    def start(*captures: Any, faults: str | Iterable[str] = (), speed: str | float = "max",
              seed: int = 0) -> StreamfoldServer:
        server = start_server(*captures, faults=faults, speed=speed, seed=seed)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
