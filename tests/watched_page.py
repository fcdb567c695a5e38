"""A page of the browser tests, watched: every request it makes and every error its script throws, for the
checks that it asked nothing off this machine (or off its own origin) and that its script never threw.
Not a test module."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from playwright.sync_api import Page

__all__ = ["Watched"]


class Watched:
    def __init__(self, page: Page) -> None:
        self.page = page
        self.requests: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    def elsewhere(self, origin: str) -> list[str]:
        """The requests to anywhere but `origin` (`http://host:port/`), its blobs and data URLs."""
        return [url for url in self.requests if urlsplit(url)._replace(path="", query="", fragment="").geturl() + "/"
                != origin and not url.startswith(("data:", "blob:" + origin.rstrip("/")))]

    def check(self) -> None:
        """Nothing was asked of another machine, and the script never threw."""
        assert [url for url in self.requests if urlsplit(url).hostname != "127.0.0.1"] == [], \
            "the page asked for something off this machine"
        assert self.errors == [], "the page's script threw"
