"""Opaque state: the values a client must keep from a streamed reply and send
back unchanged with the next request, or that request fails (Anthropic
thinking `signature` and `redacted_thinking` data, Gemini `thoughtSignature`,
OpenAI Responses reasoning items' `id` and `encrypted_content`, OpenRouter
`reasoning_details`, Gemini's OpenAI layer's `extra_content`).

Strategy: each dialect names its opaque values in its own export
(`DialectSpec.opaque_state`), so what a non-streaming request would have
returned is the reference; the frame that carried each value is the last
frame whose data holds it (signatures are replaced, so the last one counts).
Whether a client kept a value is asked of what the client built, whatever
its shape: the value must appear under one of the names it travels by, at
any depth, as the same string (or, for an SDK that decodes base64, as the
same bytes). These types are pure values.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .result import Result

__all__ = ["Kept", "Opaque", "find_carrier", "kept", "values_named"]


@dataclass(frozen=True, slots=True)
class Opaque:
    """One opaque value of a reply. `path` says where it is in the dialect's export
    (`content[0].signature`); `names` are the keys it travels under in a client's object."""

    what: str
    path: str
    value: str
    names: tuple[str, ...]
    #: The choice (candidate) it belongs to.
    choice: int = 0
    #: The frame that carried it (None in a Result without frames, or when no frame holds it whole).
    frame: int | None = None

    def at_frame(self, frame: int | None) -> Opaque:
        return replace(self, frame=frame)


class Kept(Enum):
    """What a client did with one opaque value."""

    #: The same value is there.
    KEPT = "kept"
    #: A value is there under its name, but another one (appended instead of replaced, cut, re-encoded).
    CHANGED = "changed"
    #: No value of that name is there.
    DROPPED = "dropped"


def find_carrier(result: Result, value: str) -> int | None:
    """The last frame whose data holds `value` whole, else the last whose decoded payload does."""
    frames = result.frames
    for frame in reversed(frames):
        if frame.data is not None and value in frame.data:
            return frame.index
    for frame in reversed(frames):  # a payload wrapped in the framing (base64 in AWS event-stream)
        if frame.data is not None:
            try:
                decoded = json.dumps(result.payload(frame.index).value, ensure_ascii=False)
            except (TypeError, ValueError, RecursionError):
                continue
            if value in decoded:
                return frame.index
    return None


def values_named(client: Any, names: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    """Every (name, value) held under one of `names` in a client's object (dicts and lists, at any depth)."""
    stack = [client]
    seen = 0
    while stack and seen < 1_000_000:  # a bound on hostile input: this many containers at most
        value = stack.pop()
        seen += 1
        if isinstance(value, Mapping):
            for key, inner in value.items():
                if key in names:
                    yield key, inner
                if isinstance(inner, (Mapping, list, tuple)):
                    stack.append(inner)
        elif isinstance(value, (list, tuple)):
            stack.extend(inner for inner in value if isinstance(inner, (Mapping, list, tuple)))


#: Names that other values go by too (every object has an `id`): another value under one of them is
#: taken for this one only when it looks like it (a piece of it, or it with more).
_SHARED_NAMES = frozenset({"id", "data"})


def kept(client: Any, item: Opaque) -> tuple[Kept, Any]:
    """Whether `client` kept `item`, and the value it holds instead when it changed it."""
    changed: Any = None
    for name, found in values_named(client, item.names):
        if _same(found, item.value):
            return Kept.KEPT, found
        if changed is None and _instead(name, found, item.value):
            changed = found
    return (Kept.DROPPED, None) if changed is None else (Kept.CHANGED, changed)


def _instead(name: str, found: Any, value: str) -> bool:
    """Whether `found` is this value, changed, rather than some other value of the same name."""
    if isinstance(found, (bytes, bytearray)):
        return bool(found) and name not in _SHARED_NAMES
    if not isinstance(found, str) or not found:
        return False
    if name not in _SHARED_NAMES:
        return True
    return value in found or (len(found) >= 8 and found in value) or found[:8] == value[:8]


def _same(found: Any, value: str) -> bool:
    if isinstance(found, str):
        return found == value
    if isinstance(found, (bytes, bytearray)):  # google-genai decodes thought_signature to bytes
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                if decode(value + "=" * (-len(value) % 4)) == bytes(found):
                    return True
            except (binascii.Error, ValueError):
                continue
    return False
