"""The fold's speed tricks, kept apart from the plain path they must equal.

1. Runs. A framer hands on long stretches of simple frames as one run (see
   `framing._runs`). Each payload is decoded straight from its bytes, first by
   the dialect's fast decoder (msgspec Structs of its hot shapes, folded by
   `fold_fast_run`, a stretch at a time, without dicts), then as plain JSON (`decode_bytes`); no record
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

from .._json import COMPLETE_SHALLOW, too_deep_bytes
from ..decoding import decode_bytes
from ..dialects import Dialect
from ..framing._records import FrameRecord, FrameRun, FrameStore

__all__ = ["DEFER_CHUNK", "DEFER_COUNT", "RunFolding"]

#: feed() keeps chunks shorter than DEFER_CHUNK, up to DEFER_COUNT of them, before framing.
DEFER_CHUNK = 256
DEFER_COUNT = 4096


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
        first, start = run.first, run.payload_start
        pieces, events = run.pieces(), run.event_lines()
        position, count = 0, len(pieces)
        dialect, fast = self._fold_state(first)
        while position < count:
            if fast:
                assert dialect is not None
                position += dialect.fold_fast_run(pieces, position, start, first + position, events)
                if position == count:
                    break
                # The payload it stopped at: refused by the fast decoder or by `fold_fast`.
                if self._fast_missed(first + position):
                    fast = False
            index = first + position
            if dialect is not None:
                payload = pieces[position][start:]
                try:
                    value = decode_bytes(payload)
                except (ValueError, RecursionError):
                    pass
                else:
                    # Nested past the cap though msgspec took it: the plain path says so. The fast
                    # decoders need no such check: their Structs type every field to its end.
                    if len(payload) < COMPLETE_SHALLOW or not too_deep_bytes(payload):
                        dialect.fold(value, index)
                        position += 1
                        dialect, fast = self._fold_state(index + 1)
                        continue
            self._fold_record(run.record(index))
            position += 1
            dialect, fast = self._fold_state(index + 1)
        run.release()
        if self._frames.stream is not None:
            run.refer_to(self._frames.stream)

    def _fold_state(self, frame: int) -> tuple[Dialect | None, bool]:
        """The dialect that folds payload `frame` (None before detection and after the terminal
        frame), and whether its fast way is to be tried now (it has one, and it is not paused)."""
        dialect = self._folding_dialect()
        if dialect is None:
            return None, False
        return dialect, dialect.fast_decoder is not None and frame >= self._fast_paused_until

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
