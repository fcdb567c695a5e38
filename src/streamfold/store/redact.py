"""Credentials taken out of what is recorded, before anything is written: the
header values and URL query parameters that carry them (docs/store.md has the
list). Request and response bodies are left as they are."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["REDACTED", "is_secret_name", "redact_headers", "redact_url"]

REDACTED = "REDACTED"

#: Header names (lower case) whose values are credentials.
SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie", "set-cookie",
    "x-amz-security-token", "x-auth-token", "x-csrf-token", "x-xsrf-token", "ocp-apim-subscription-key",
    "x-functions-key", "x-vercel-oidc-token",
})
#: Query parameter names (lower case) whose values are credentials.
SECRET_PARAMETERS = frozenset({
    "key", "api_key", "api-key", "apikey", "access_token", "token", "sig", "signature", "code", "password",
    "x-amz-signature", "x-amz-credential", "x-amz-security-token", "client_secret", "refresh_token", "id_token",
})
#: Names like these carry a credential wherever they appear: `x-foo-token`, `my_secret`, `x-acme-api-key`.
_SECRET_PART = re.compile(r"token|secret|passw|api[-_]?key|(^|[-_])key$|auth|credential|session|signature",
                          re.IGNORECASE)
#: Names the pattern above matches that carry no credential.
_NOT_SECRET = frozenset({"idempotency-key", "x-idempotency-key", "max_tokens", "max-tokens", "tokens",
                         "anthropic-ratelimit-tokens-limit", "anthropic-ratelimit-tokens-remaining",
                         "anthropic-ratelimit-tokens-reset", "x-ratelimit-limit-tokens",
                         "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens",
                         "anthropic-ratelimit-input-tokens-limit", "anthropic-ratelimit-input-tokens-remaining",
                         "anthropic-ratelimit-input-tokens-reset", "anthropic-ratelimit-output-tokens-limit",
                         "anthropic-ratelimit-output-tokens-remaining", "anthropic-ratelimit-output-tokens-reset"})
#: Authorization schemes kept in front of the redacted credential, so "Bearer" vs "Basic" still shows.
_SCHEMES = frozenset({"bearer", "basic", "token", "digest", "aws4-hmac-sha256", "negotiate", "apikey"})


def is_secret_name(name: str, *, query: bool = False) -> bool:
    """Whether a header (or, with `query`, a URL query parameter) of this name carries a credential."""
    lowered = name.strip().lower()
    if lowered in _NOT_SECRET or "ratelimit" in lowered:
        return False
    return lowered in (SECRET_PARAMETERS if query else SECRET_HEADERS) or bool(_SECRET_PART.search(lowered))


def redact_headers(headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    out = []
    for name, value in headers:
        if is_secret_name(name):
            scheme = value.strip().split(" ", 1)[0]
            value = f"{scheme} {REDACTED}" if scheme.lower() in _SCHEMES and " " in value.strip() else REDACTED
        out.append((name, value))
    return tuple(out)


def redact_url(url: str) -> str:
    """`url` with the values of credential query parameters and a password in it replaced; the rest kept
    byte for byte (nothing re-encoded)."""
    url = re.sub(r"^([a-zA-Z][a-zA-Z0-9+.-]*://[^/@?#:]*):[^/@?#]*@", rf"\1:{REDACTED}@", url)
    base, mark, rest = url.partition("?")
    if not mark:
        return url
    query, hash_mark, fragment = rest.partition("#")
    parts = []
    for part in query.split("&"):
        name, equals, _value = part.partition("=")
        parts.append(f"{name}={REDACTED}" if equals and is_secret_name(_unquote(name), query=True) else part)
    return f"{base}?{'&'.join(parts)}{hash_mark}{fragment}"


def _unquote(name: str) -> str:
    from urllib.parse import unquote_plus

    return unquote_plus(name)
