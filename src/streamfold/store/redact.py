"""Credentials taken out of what is recorded, before anything is written: the
header values and URL query parameters that carry them (docs/store.md has the
list). Request and response bodies are left as they are."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import unquote_plus

__all__ = ["REDACTED", "is_secret_name", "is_secret_parameter", "redact_headers", "redact_url"]

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
    "jwt", "bearer",
})
#: Names like these carry a credential wherever they appear: `x-foo-token`, `my_secret`, `x-acme-api-key`.
_SECRET_PART = re.compile(r"token|secret|passw|api[-_]?key|(^|[-_])key$|auth|credential|session|signature|jwt|bearer",
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
    byte for byte (nothing re-encoded). Parameters are split at `&` and at `;` (which some servers take
    as a separator too), in the query and in a fragment that holds parameters (OAuth's
    `#access_token=`); a name counts as the server decodes it (`is_secret_parameter`)."""
    url = re.sub(r"^([a-zA-Z][a-zA-Z0-9+.-]*://[^/@?#:]*):[^/@?#]*@", rf"\1:{REDACTED}@", url)
    before, hash_mark, fragment = url.partition("#")
    base, mark, query = before.partition("?")
    return f"{base}{mark}{_redact_parameters(query)}{hash_mark}{_redact_parameters(fragment)}"


def is_secret_parameter(name: str) -> bool:
    """Whether a URL query parameter named `name` (as written in the URL) carries a credential. The name
    is read as servers read it: percent-decoded (`+` a space), NULs, other control characters and
    blanks dropped, compatibility forms folded (NFKC), case ignored; and a `[...]` suffix (`key[]`,
    PHP's and Rails' arrays and hashes) names the parameter before it as well as what it holds
    (`auth[token]`)."""
    decoded = unicodedata.normalize("NFKC", unquote_plus(name, errors="replace"))
    cleaned = _IGNORED_IN_NAMES.sub("", decoded)
    base, bracket, rest = cleaned.partition("[")
    names = [base, *(_BRACKETED.findall(bracket + rest) if bracket else ())]
    return any(part and is_secret_name(part, query=True) for part in names)


#: Dropped from a parameter's name before it is matched: what servers strip or stop at.
_IGNORED_IN_NAMES = re.compile(r"[\x00-\x20\x7f-\x9f\s]+")
_BRACKETED = re.compile(r"\[([^\[\]]*)\]")
_PARAMETER_SEPARATOR = re.compile(r"([&;])")


def _redact_parameters(text: str) -> str:
    if "=" not in text:
        return text
    parts = _PARAMETER_SEPARATOR.split(text)  # the separators kept, at the odd places
    for position in range(0, len(parts), 2):
        name, equals, _value = parts[position].partition("=")
        if equals and is_secret_parameter(name):
            parts[position] = f"{name}={REDACTED}"
    return "".join(parts)
