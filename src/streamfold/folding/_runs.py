"""The fold's speed tricks, kept apart from the plain path they must equal.

1. Runs. A framer hands on long stretches of simple frames as one run (see
   `framing._runs`). Each payload is decoded straight from its bytes, first by
   the dialect's fast decoder (msgspec Structs of its hot shapes, folded by
   `fold_fast` without dicts), then as plain JSON (`decode_bytes`); no record
   is made. A payload both refuse ([DONE], invalid JSON or UTF-8, NaN), or any
   payload while no dialect folds, takes the record and the plain path.
2. Pauses. A stretch of the stream that is not the fast decoder's shape
   (Anthropic thinking before the text, a vendor field on every chunk) makes it
   miss; every miss costs an exception, so it is paused, for twice as long each
   time.
3. Deferral. Without a line end nothing can complete in SSE or NDJSON, so
   small chunks wait (up to `DEFER_COUNT`), and byte-at-a-time feeding costs
   one comparison a byte.

`tests/folding/test_fast_paths.py` holds all three to the plain path: the same stream
folded whole equals it fed one frame at a time (records and dicts only).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._json import COMPLETE_SHALLOW, too_deep_bytes
from ..decoding import decode_bytes
from ..dialects import Dialect
from ..framing._records import FrameRecord, FrameRun, FrameStore

__all__ = ["DEFER_CHUNK", "DEFER_COUNT", "RunFolding"]

#: feed() keeps chunks shorter than DEFER_CHUNK, up to DEFER_COUNT of them, before framing.
DEFER_CHUNK = 256
DEFER_COUNT = 4096
# A dialect's fold of what its fast decoder returns (see Dialect.fold_fast).
_FoldFast = Callable[[Any, int, "bytes | None"], bool]


class RunFolding:
    """What `Folder` inherits to fold runs. It provides the store, the kinds, the dialect that
    folds now (or None) and the plain path for one record."""

    _frames: FrameStore
    _kinds: bytearray  # each frame's `trace.KIND_CODES`

    # Payloads the dialect's fast decoder refused since frame _fast_since. When too many are,
    # it is not tried again before frame _fast_paused_until, and each pause is twice as long
    # as the last. (Class values until a fold sets its own: a fold pays no __init__ for them.)
    _fast_misses = _fast_since = _fast_paused_until = 0
    _fast_pause = 256

    def _folding_dialect(self) -> Dialect | None:
        raise NotImplementedError

    def _fold_record(self, record: FrameRecord) -> None:
        raise NotImplementedError

    def _fold_run(self, run: FrameRun) -> None:
        """A run of data frames: each decoded straight from its bytes, no record made."""
        self._frames.add_run(run)
        # Every frame of the run is taken for JSON (code 0); the plain path corrects its frame's kind.
        self._kinds.extend(bytes(run.count))
        index, start = run.first, run.payload_start
        dialect, decode, fold_fast = self._fold_state(index)
        for event, piece in zip(run.event_lines(), run.pieces()):
            if decode is not None:
                try:
                    if fold_fast(decode(piece[start:]), index, event):
                        index += 1
                        continue
                except (ValueError, RecursionError):
                    pass
                if self._fast_missed(index):
                    decode = None
            if dialect is not None:
                payload = piece[start:]
                try:
                    value = decode_bytes(payload)
                except (ValueError, RecursionError):
                    pass
                else:
                    # Nested past the cap though msgspec took it: the plain path says so. The fast
                    # decoders need no such check: their Structs type every field to its end.
                    if len(payload) < COMPLETE_SHALLOW or not too_deep_bytes(payload):
                        dialect.fold(value, index)
                        index += 1
                        dialect, decode, fold_fast = self._fold_state(index)
                        continue
            self._fold_record(run.record(index))
            index += 1
            dialect, decode, fold_fast = self._fold_state(index)
        run.release()
        if self._frames.stream is not None:
            run.refer_to(self._frames.stream)

    def _fold_state(self, frame: int) -> tuple[Dialect | None, Callable[[bytes], Any] | None, _FoldFast]:
        """The dialect that folds payload `frame` (None before detection and after the terminal
        frame), its fast decoder if it is to be tried now (else None), and its fast fold."""
        dialect = self._folding_dialect()
        if dialect is None:
            return None, None, _no_fast_fold
        if frame < self._fast_paused_until:
            return dialect, None, _no_fast_fold
        return dialect, dialect.fast_decoder, dialect.fold_fast

    def _fast_missed(self, frame: int) -> bool:
        """A payload the fast decoder refused; True when the decoder is to be paused (more than
        one frame in eight missed since the last pause)."""
        self._fast_misses += 1
        if self._fast_misses > 16 and self._fast_misses * 8 > frame - self._fast_since:
            self._fast_paused_until = self._fast_since = frame + self._fast_pause
            self._fast_pause = min(2 * self._fast_pause, 1 << 16)
            self._fast_misses = 0
            return True
        return False


def _no_fast_fold(value: Any, frame: int, event: bytes | None) -> bool:
    return False
