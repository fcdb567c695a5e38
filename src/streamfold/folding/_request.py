"""What the request said, as a dialect reads it: its headers, by lower-case name (the last of a repeated
one). A dialect whose stream's meaning depends on the request (the MCP protocol version a client asked
for) reads `Dialect.request_headers`; the bytes alone never need them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from ..dialects._base import NO_HEADERS

__all__ = ["Headers", "header_map"]

Headers = Mapping[str, str] | Iterable[tuple[str, str]]


def header_map(headers: Headers | None) -> Mapping[str, str]:
    """`headers` by lower-case name; raises TypeError for anything but a mapping or pairs of str."""
    if headers is None:
        return NO_HEADERS
    if isinstance(headers, (str, bytes)) or not isinstance(headers, (Mapping, Iterable)):
        raise TypeError(f"request_headers must be a mapping or (name, value) pairs of str, got {headers!r}")
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    out: dict[str, str] = {}
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(type(part) is str for part in pair)):
            raise TypeError(f"request_headers must be a mapping or (name, value) pairs of str, got {pair!r}")
        out[pair[0].lower()] = pair[1]
    return MappingProxyType(out) if out else NO_HEADERS
