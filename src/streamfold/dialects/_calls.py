"""Finding the earlier call a whole tool call repeats, in O(log n) per call.

Gemini and Ollama send function calls whole, and a server may send one again
(G3, B3): a repeat is a call with the same id, or, when either side has no
id, the same content. Scanning every earlier call for each new one made a
stream of n distinct calls cost n² (4000 calls took seconds); this index keeps
the keys of the calls by content, sorted, so the first match is the head of a
list.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Hashable

__all__ = ["CallIndex", "content_key"]

_SCALARS = (str, int, float, bool, type(None))


def content_key(*values: object) -> Hashable:
    """A dict key for a call's content: its values as they are when they are scalars, else (a name or
    an id of the wrong type, a list, an object) their type and repr, so nothing unhashable reaches the index."""
    return tuple(value if type(value) in _SCALARS else (type(value).__name__, repr(value)) for value in values)


class CallIndex:
    """The keys of whole tool calls by content: all of them, and those without an id."""

    __slots__ = ("_all", "_idless")

    def __init__(self) -> None:
        self._all: dict[Hashable, list[int]] = {}
        self._idless: dict[Hashable, list[int]] = {}

    def add(self, key: int, content: Hashable, has_id: bool) -> None:
        insort(self._all.setdefault(content, []), key)
        if not has_id:
            insort(self._idless.setdefault(content, []), key)

    def remove(self, key: int, content: Hashable, has_id: bool) -> None:
        _discard(self._all, content, key)
        if not has_id:
            _discard(self._idless, content, key)

    def first(self, content: Hashable, has_id: bool) -> int | None:
        """The smallest key with this content that a call with (`has_id`) or without an id repeats:
        a call with an id repeats only calls that had none (calls with ids match by id)."""
        keys = (self._idless if has_id else self._all).get(content)
        return keys[0] if keys else None


def _discard(index: dict[Hashable, list[int]], content: Hashable, key: int) -> None:
    keys = index.get(content)
    if keys is None:
        return
    position = bisect_left(keys, key)
    if position < len(keys) and keys[position] == key:
        del keys[position]
        if not keys:
            del index[content]
