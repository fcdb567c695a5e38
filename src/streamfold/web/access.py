"""Who the page's server answers, and the headers every answer carries (`LocalOnly`).

On loopback (the default), the page is for the person at this machine's browser:
every request must be addressed to a loopback name on the server's own port (a page
elsewhere that points a DNS name at 127.0.0.1 gets 403: DNS rebinding), and requests
from other origins, another local port included, are refused.

Bound off loopback (`--host 0.0.0.0`), the Host check would keep nobody out (any
machine can send `Host: localhost:PORT`), so every request must carry the run's access
token instead, as Jupyter's does: the URL printed ends in `?token=TOKEN`, which the
server trades for a cookie of that port (HttpOnly, SameSite=Strict) and a redirect to
the same URL without it; a script may send `Authorization: Bearer TOKEN` or
`X-Streamfold-Token: TOKEN`. Without it: 401 with a sentence. The Host may then be any
name the machine is reached by; an Origin, when sent, must be that same host.

Every response carries a Content-Security-Policy that allows no other origin and no
inline script, so even a stream that smuggled markup into the page could not run or
load anything.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from ..fronts.serving import LOOPBACK_NAMES, TOKEN_HEADER, split_host, token_matches
from .limits import error

__all__ = ["CONTENT_SECURITY_POLICY", "LOOPBACK_HOSTS", "SECURITY_HEADERS", "LocalOnly", "cookie_name",
           "is_loopback_host"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'")

SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    # Captures can hold private prompts: keep responses out of every cache.
    (b"cache-control", b"no-store"),
]

LOOPBACK_HOSTS = LOOPBACK_NAMES  # the names the page answers to: the servers' own


def cookie_name(port: int | None) -> str:
    """The cookie that holds the token: one per port, since cookies are shared by every port of a host."""
    return f"streamfold-token-{port or 0}"


class LocalOnly:
    """ASGI middleware: refuse what this server must not answer (see the module docstring), and put
    the security headers on every response. `token`: the run's access token when bound off loopback."""

    def __init__(self, app: ASGIApp, token: str | None = None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        server = scope.get("server")
        port = server[1] if server else None

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*_without_security(message.get("headers", [])), *SECURITY_HEADERS]
            await send(message)

        refusal = _refusal(headers, port) if self.token is None else _other_origin(headers)
        if refusal is not None:
            await error(403, refusal)(scope, receive, send_with_headers)
            return
        if self.token is not None:
            given = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
            if token_matches(given.get("token"), self.token) and scope["path"] == "/" and scope["method"] == "GET":
                await _trade_for_cookie(scope, send_with_headers, given, self.token, port)
                return
            if not (token_matches(given.get("token"), self.token) or self._carried(headers, port)):
                await error(401, "this page is served on the network and answers only requests that carry its "
                                 "access token: open the URL `streamfold web` printed (it ends in ?token=...), or "
                                 "send the header Authorization: Bearer TOKEN")(scope, receive, send_with_headers)
                return
        await self.app(scope, receive, send_with_headers)

    def _carried(self, headers: dict[str, str], port: int | None) -> bool:
        assert self.token is not None
        bearer = headers.get("authorization", "")
        if bearer[:7].lower() == "bearer " and token_matches(bearer[7:].strip(), self.token):
            return True
        if token_matches(headers.get(TOKEN_HEADER), self.token):
            return True
        try:
            cookies = SimpleCookie(headers.get("cookie", ""))
        except CookieError:
            return False
        kept = cookies.get(cookie_name(port))
        return kept is not None and token_matches(kept.value, self.token)


async def _trade_for_cookie(scope: Scope, send: Send, query: dict[str, str], token: str, port: int | None) -> None:
    """`?token=` on a page's URL: the cookie, and the same URL without the token (out of the address bar
    and the history), so the page's own requests carry it from then on."""
    rest = urlencode([(name, value) for name, value in query.items() if name != "token"])
    location = scope.get("root_path", "") + scope["path"] + (f"?{rest}" if rest else "")
    cookie = f"{cookie_name(port)}={token}; Path=/; HttpOnly; SameSite=Strict"
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", location.encode("utf-8")), (b"set-cookie", cookie.encode("ascii")),
                            (b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def _refusal(headers: dict[str, str], port: int | None) -> str | None:
    """Why a request to a server on loopback is refused, or None. `port`: the one this server listens on
    (None: any).

    The Host must name this server (a loopback name and its own port: DNS
    rebinding points a foreign name, or another local server's page, here);
    an Origin, when sent, must be this server too, so a page served by
    another program on this machine (http://localhost:3000) cannot post here.
    """
    host = headers.get("host", "")
    if not is_loopback_host(host, port):
        return (f"this page only answers requests addressed to localhost, 127.0.0.1 or [::1]"
                f"{'' if port is None else f' on port {port}'}; the Host header was {host!r}")
    origin = headers.get("origin")
    if origin is not None:
        parts = urlsplit(origin)
        if parts.scheme != "http" or not is_loopback_host(parts.netloc, port) or origin.rstrip("/") != (
                f"{parts.scheme}://{parts.netloc}"):
            return f"requests from other origins are refused (Origin {origin!r})"
    return None


def _other_origin(headers: dict[str, str]) -> str | None:
    """Off loopback: an Origin, when sent, must be the host the request was sent to (the page's own)."""
    origin = headers.get("origin")
    if origin is not None and origin.rstrip("/").lower() != f"http://{headers.get('host', '')}".lower():
        return f"requests from other origins are refused (Origin {origin!r})"
    return None


def is_loopback_host(host: str, port: int | None = None) -> bool:
    """localhost, 127.0.0.1 or [::1], with or without a port; with `port`, the port must be it
    (no port in `host` means 80, HTTP's own)."""
    parts = split_host(host)
    if parts is None:
        return False
    name, given = parts
    if port is not None and (int(given) if given else 80) != port:
        return False
    return name in LOOPBACK_HOSTS


def _without_security(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    ours = {name for name, _ in SECURITY_HEADERS}
    return [(name, value) for name, value in headers if name.lower() not in ours]
