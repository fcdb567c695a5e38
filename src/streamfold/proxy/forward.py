"""What is forwarded and what is not: the target URL, hop-by-hop headers and
the Host check."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

__all__ = ["HOP_BY_HOP", "Target", "forwarded_headers"]

#: Headers that belong to one connection, never forwarded (RFC 9110 7.6.1), plus Host (rewritten).
HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
                        "proxy-connection", "proxy-authenticate", "proxy-authorization"})



class Target:
    """The one upstream every request goes to: `http(s)://host[:port][/prefix]`."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the target must be an http:// or https:// URL with a host, got {url!r}")
        if parts.query or parts.fragment:
            raise ValueError(f"the target must not have a query or fragment, got {url!r}")
        self.url = url
        self.base = f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"

    def join(self, raw_path: bytes, query: bytes) -> str:
        """The upstream URL for a request whose origin-form target is `raw_path?query` (kept byte for byte)."""
        path = raw_path.decode("latin-1")
        return self.base + path + (f"?{query.decode('latin-1')}" if query else "")


def forwarded_headers(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    """The request's or response's headers minus Host and the hop-by-hop ones (and any that
    `Connection` names), in order, duplicates kept."""
    pairs = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in headers]
    named = {token.strip().lower() for name, value in pairs if name.lower() == "connection"
             for token in value.split(",")}
    return [(name, value) for name, value in pairs
            if (lower := name.lower()) not in HOP_BY_HOP and lower not in named and lower != "host"
            and not lower.startswith("proxy-")]

