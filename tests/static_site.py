"""The static page (`streamfold page build`) built once and served by a plain static file server on
127.0.0.1, for the browser tests. Not a test module."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from streamfold.web.page.bundle import build_files, write_build
from streamfold.web.page.runtime import Runtime, RuntimeUnavailableError, load_runtime

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext

__all__ = ["StaticSite", "build", "only_served", "runtime_or_skip", "serving_directory"]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serving_directory(directory: Path) -> Iterator[str]:
    """`directory` served as a static host serves it (http.server) on 127.0.0.1: its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def runtime_or_skip() -> Runtime:
    """The pinned runtime (cached, or fetched from the npm registry and PyPI), or the test skipped."""
    try:
        return load_runtime()
    except RuntimeUnavailableError as exc:
        pytest.skip(f"the page's runtime could not be had (the registries are unreachable?): {exc}")


def build(directory: Path, runtime: Runtime) -> Path:
    write_build(directory, build_files(runtime))
    return directory


class StaticSite:
    """The static page where a test takes the served page's `server`: its URL, no server behind it, and
    the browser profile its pages open in (`profile`)."""

    def __init__(self, url: str, profile: BrowserContext) -> None:
        self.url = url
        self.profile = profile


def only_served(server: object, why: str) -> None:
    """Skip the test on the static page, saying `why` (what it checks is the server's, or what the page
    cannot have in a browser)."""
    if isinstance(server, StaticSite):
        pytest.skip(f"not on the static page: {why}")
