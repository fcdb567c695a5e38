"""What is forwarded and what is not: the target URL, hop-by-hop headers and
the Host check."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

__all__ = ["HOP_BY_HOP", "Target", "forwarded_headers", "is_own_host"]

#: Headers that belong to one connection, never forwarded (RFC 9110 7.6.1), plus Host (rewritten).
HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
                        "proxy-connection", "proxy-authenticate", "proxy-authorization"})

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})


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


def is_own_host(host: str, listen_host: str, port: int) -> bool:
    """Whether a Host header names this proxy: a loopback name (or the address it listens on) and its port."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host.partition("]")
        name += "]"
        if rest and not rest.startswith(":"):
            return False
        given = rest[1:]
    else:
        name, _, given = host.partition(":")
    if not (given.isascii() and given.isdigit() and len(given) <= 5) or int(given) != port:
        return False
    own = listen_host.strip("[]").lower()
    return name in LOOPBACK_NAMES or name.strip("[]") == own

