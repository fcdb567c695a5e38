"""What the page's browser tests share: the page's server on 127.0.0.1, the static page's build served
from 127.0.0.1 (`static_site`), and Debian's Chromium
(/usr/bin/chromium) driven by Playwright. A test that takes `browser` is skipped, with the reason,
when playwright or the browser is missing:
    apt-get install -y chromium && pip install playwright     (never `playwright install`)
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from proxy_rig import serving
from proxy_upstream import Upstream
from static_site import StaticSite, build, runtime_or_skip, serving_directory
from streamfold.web.app import create_app
from streamfold.web.server import RunningServer, start_in_thread

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


#: The modules whose browser tests run on the static page too. Each page there starts Python in its worker
#: (about 2 s, its memory restored from the profile's cache): every browser module twice took CI past its
#: ten minutes, so the static page gets the page's main module (paste, open, the four stages, diff, export,
#: the XSS captures, the requests it makes), beside test_page_static.py's own. STREAMFOLD_STATIC_PAGE=all runs
#: every browser module on both (about three more minutes on two cores).
STATIC_TOO = frozenset({"test_web_browser", "test_web_websocket_browser"})
STATIC_ALL = os.environ.get("STREAMFOLD_STATIC_PAGE") == "all"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test of the page in a browser runs on the served page and, in `STATIC_TOO`, on the static one
    (`server` is either); a test of the server alone, on the server."""
    if ("server" in metafunc.fixturenames and {"page", "browser"} & set(metafunc.fixturenames)
            and (STATIC_ALL or metafunc.module.__name__.rpartition(".")[2] in STATIC_TOO)):
        metafunc.parametrize("server", ["served", "static"], indirect=True, scope="module")


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest) -> Iterator[RunningServer | StaticSite]:
    """The page: the local server's (`streamfold web`), or the static page (`streamfold page build`) on a
    static file server, its pages opened in the module's kept browser profile."""
    if getattr(request, "param", "served") == "static":
        yield StaticSite(request.getfixturevalue("static_site"), request.getfixturevalue("static_profile"))
        return
    with start_in_thread(create_app()) as running:
        yield running


@pytest.fixture(scope="session")
def static_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The static page (`streamfold page build`), built once a session: its folder."""
    return build(tmp_path_factory.mktemp("page") / "site", runtime_or_skip())


@pytest.fixture(scope="session")
def static_site(static_build: Path) -> Iterator[str]:
    """The static page served from 127.0.0.1 by a plain static file server: its URL."""
    with serving_directory(static_build) as url:
        yield url


@pytest.fixture(scope="module")
def static_profile(browser: Browser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    """A browser profile on disk for a module's tests of the static page: its HTTP cache, the WebAssembly
    V8 compiled and Cache Storage (Python's kept memory) are kept, so every page after the first starts
    Python in about 2 s, as a person's later visits do."""
    context = browser.browser_type.launch_persistent_context(
        str(tmp_path_factory.mktemp("profile")), executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
        viewport={"width": 1400, "height": 900}, accept_downloads=True)
    yield context
    context.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if sync_playwright is None:
        pytest.skip("playwright is not installed (pip install playwright)")
    if not CHROMIUM.exists():
        pytest.skip("no browser at /usr/bin/chromium (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def upstream() -> Iterator[tuple[Upstream, str]]:
    """A scripted upstream on 127.0.0.1 (tests/proxy_upstream.py) and its URL, for the recording proxy."""
    app = Upstream()
    try:
        with serving(app) as url:
            yield app, url
    finally:
        app.release.set()
