"""The UI message stream's fast way over a run (`VercelUI` inherits it, `HotDeltas` walks the run):
text and reasoning deltas, decoded by `fast`, a stretch of one part's appended in one call, as `fold`
appends them one by one. `tests/folding/test_fast_path_ui_streams.py` holds it to the plain path."""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Any

from .._hot import HotDeltas

if TYPE_CHECKING:
    from ...merge import TextBuffer
    from .fast import PartDelta

__all__ = ["DeltaRuns"]

#: The part each delta type `fast` decodes appends to.
DELTA_PARTS = {"text-delta": "text", "reasoning-delta": "reasoning"}


class DeltaRuns(HotDeltas):
    """What the fast way reads of the dialect, and where the hot part's deltas go: its buffer, and the
    last run of its offsets there."""

    hot_key = attrgetter("type", "id")
    _open: dict[tuple[str, str], dict[str, Any]]
    _hot_buffer: TextBuffer | None = None
    _hot_run: list[int]

    def _buffer(self, kind: str) -> TextBuffer:
        raise NotImplementedError

    def _append(self, kind: str, part: dict[str, Any], piece: str, frame: int) -> None:
        raise NotImplementedError

    def _cold(self, value: PartDelta, frame: int) -> bool:
        """A delta for a part that is open: appended as `fold` appends it (nothing to report then), the
        part made hot. A delta for a part never opened is `fold`'s."""
        kind = DELTA_PARTS[value.type]
        part = self._open.get((kind, value.id))
        if part is None:
            return False
        if value.delta:
            self._append(kind, part, value.delta, frame)
            self._hot, self._hot_buffer, self._hot_run = self.hot_key(value), self._buffer(kind), part["runs"][-1]
        return True

    def _extend_hot(self, texts: list[str], frames: list[int]) -> None:
        """The hot part's deltas that waited, appended as `_append` appends each: its last run grows."""
        if texts:
            buffer = self._hot_buffer
            assert buffer is not None
            buffer.extend(texts, frames)
            self._hot_run[1] = buffer.length
