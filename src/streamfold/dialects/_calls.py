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
    """The keys of whole tool calls by content, those with an id apart from those without.

    A content's keys are one int, or a sorted list once a second call has that content: a stream
    of distinct calls (the usual one, and the hostile one) holds no list per call."""

    __slots__ = ("_idless", "_with_id")

    def __init__(self) -> None:
        self._idless: dict[Hashable, int | list[int]] = {}
        self._with_id: dict[Hashable, int | list[int]] = {}

    def add(self, key: int, content: Hashable, has_id: bool) -> None:
        index = self._with_id if has_id else self._idless
        keys = index.get(content)
        if keys is None:
            index[content] = key
        elif type(keys) is int:
            index[content] = sorted((keys, key))
        else:
            assert isinstance(keys, list)
            insort(keys, key)

    def remove(self, key: int, content: Hashable, has_id: bool) -> None:
        index = self._with_id if has_id else self._idless
        keys = index.get(content)
        if keys is None:
            return
        if type(keys) is int:
            if keys == key:
                del index[content]
            return
        assert isinstance(keys, list)
        position = bisect_left(keys, key)
        if position < len(keys) and keys[position] == key:
            del keys[position]
            if len(keys) == 1:
                index[content] = keys[0]

    def first(self, content: Hashable, has_id: bool) -> int | None:
        """The smallest key with this content that a call with (`has_id`) or without an id repeats:
        a call with an id repeats only calls that had none (calls with ids match by id)."""
        idless = _first(self._idless.get(content))
        if has_id:
            return idless
        with_id = _first(self._with_id.get(content))
        if idless is None or with_id is None:
            return with_id if idless is None else idless
        return min(idless, with_id)


def _first(keys: int | list[int] | None) -> int | None:
    if keys is None or type(keys) is int:
        return keys
    assert isinstance(keys, list)
    return keys[0]
