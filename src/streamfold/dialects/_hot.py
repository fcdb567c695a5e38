"""The fast way over a run for streams whose hot frames are deltas, each naming the message or
part it extends (AG-UI's content events, the UI message stream's text and reasoning deltas).

The target the last delta went to is kept "hot" while nothing but its deltas comes: its next deltas
wait in a list and are handed over in one call, with nothing looked up or checked again. A delta for
another target is the dialect's `_cold`, which folds it and makes its target hot, or refuses it for
`fold`; `fold` itself clears the hot target (anything it folds may close or change it).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Any, ClassVar

from ._base import Dialect

__all__ = ["HotDeltas"]


class HotDeltas(Dialect):
    """A dialect whose `fast` Structs are deltas with a `type`, an id and a `delta` text."""

    #: A decoded delta's target, `(type, id)` (an `operator.attrgetter`: made in C).
    hot_key: ClassVar[attrgetter[tuple[Any, Any]]]
    #: The target the last fast delta went to, while nothing but its deltas comes (`fold` clears it).
    _hot: tuple[str, str] | None = None

    def _cold(self, value: Any, frame: int) -> bool:
        """A delta for another target than the hot one: fold it as `fold` would (making its target hot
        when it appends), or return False, having changed nothing, for `fold`."""
        raise NotImplementedError

    def _extend_hot(self, texts: list[str], frames: list[int]) -> None:
        """The hot target's deltas that waited (none empty), added as `_cold` adds each."""
        raise NotImplementedError

    def fold_fast_run(self, pieces: Sequence[bytes], position: int, start: int, frame: int,
                      events: Sequence[bytes | None] | None) -> int:
        decode, key_of, at, first = self.fast_decoder, self.hot_key, position, frame - position
        assert decode is not None
        texts: list[str] = []  # the hot target's deltas that wait, and their frames
        frames: list[int] = []
        try:
            for at in range(position, len(pieces)):
                value = decode(pieces[at][start:])
                if key_of(value) == self._hot:
                    if value.delta:
                        texts.append(value.delta)
                        frames.append(first + at)
                    continue
                self._extend_hot(texts, frames)
                texts, frames = [], []
                if not self._cold(value, first + at):
                    return at - position
        except (ValueError, RecursionError):
            return at - position
        finally:
            self._extend_hot(texts, frames)
        return len(pieces) - position
