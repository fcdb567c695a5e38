"""The text buffers the merger APPENDs to: each piece with the frame it came in and the running
ends, so any character of the reply can be traced to its frame (`frame_at`, `fragments`).

`TextBuffer` is the one a dialect appends to (`add`, and `extend` for a run of hot frames);
`WholeText` is a text that arrived whole, in one frame; the shared `NO_TEXT` is the text of a path
parsed before anything was appended. `Merger` turns either into a `TextBuffer` before it appends.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from ._paths import Path

if TYPE_CHECKING:
    from ._toolargs import ParsedArguments

__all__ = ["NO_TEXT", "TextBuffer", "WholeText"]


#: The provenance of every buffer that has no piece yet (empty, and never appended to).
_NO_POSITIONS: array[int] = array("q")


class TextBuffer:
    """An APPEND buffer with provenance: pieces, the frame of each, running ends."""

    __slots__ = ("_journal", "_path", "ends", "frames", "length", "parsed", "pieces")

    def __init__(self, path: Path, journal: list[tuple[str, Path, Any, int]] | None = None) -> None:
        self.pieces: list[str] = []
        # Machine integers, not int objects: provenance costs 16 bytes a piece. Until the first piece the
        # buffer shares one empty pair (never appended to: `add` makes its own), so the many buffers that
        # stay empty (a tool call sent without arguments) cost none.
        self.frames = self.ends = _NO_POSITIONS
        self.length = 0
        #: The PARSE-AT-END outcome, None until parsed (or after a later append).
        self.parsed: ParsedArguments | None = None
        self._path = path
        self._journal = journal

    def add(self, text: str, frame: int) -> None:
        """APPEND: a dialect may hold the buffer of a hot path and call this directly."""
        if not text:
            return
        if not self.length:
            self.frames, self.ends = array("q"), array("q")
        self.pieces.append(text)
        self.frames.append(frame)
        self.length += len(text)
        self.ends.append(self.length)
        self.parsed = None
        if self._journal is not None:
            self._journal.append(("append", self._path, text, frame))

    def extend(self, texts: list[str], frames: list[int]) -> None:
        """`add` of each text (none empty) at its frame, in order, in one call: a dialect's run of
        hot frames, where a call a piece is a tenth of the fold."""
        if type(self) is not TextBuffer:  # a read-only or dropping buffer: its own `add` says what it does
            for text, frame in zip(texts, frames):
                self.add(text, frame)
            return
        if not texts:
            return
        if not self.length:
            self.frames, self.ends = array("q"), array("q")
        self.pieces += texts
        self.frames.extend(frames)
        ends = accumulate(map(len, texts), initial=self.length)
        next(ends)
        self.ends.extend(ends)
        self.length = self.ends[-1]
        self.parsed = None
        if self._journal is not None:
            path = self._path
            self._journal.extend(("append", path, text, frame) for text, frame in zip(texts, frames))

    def text(self) -> str:
        if len(self.pieces) > 1:
            # Join once and keep the result: later reads are free.
            joined = "".join(self.pieces)
            self.pieces[:] = [joined]
            return joined
        return self.pieces[0] if self.pieces else ""

    @property
    def first_frame(self) -> int:
        return self.frames[0]

    @property
    def last_frame(self) -> int:
        return self.frames[-1]

    def frame_at(self, offset: int) -> int | None:
        """The frame that produced character `offset` (None if out of range)."""
        if offset < 0 or offset >= self.length:
            return None
        return self.frames[bisect_right(self.ends, offset)]

    def fragments(self) -> list[tuple[str, int]]:
        """(piece, frame) pairs as they arrived, rebuilt from the running ends."""
        joined = self.text()
        starts = [0, *self.ends[:-1]]
        return [(joined[s:e], f) for s, e, f in zip(starts, self.ends, self.frames)]


class WholeText(TextBuffer):
    """A text that arrived whole, in one frame (a Gemini function call's serialised args): the
    one piece and its frame, without the list and the two arrays of provenance (~250 bytes a
    call less). `Merger` turns it into a `TextBuffer` before anything is appended to it."""

    __slots__ = ("_frame", "_text")

    def __init__(self, path: Path, text: str, frame: int) -> None:
        self._text, self._frame = text, frame
        self.length = len(text)
        self.parsed = None
        self._path, self._journal = path, None

    # Read-only views made when read (by the result's provenance, rarely): the slots stay unset.
    @property
    def frames(self) -> array[int]:  # type: ignore[override]
        return array("q", (self._frame,))

    @property
    def ends(self) -> array[int]:  # type: ignore[override]
        return array("q", (self.length,))

    @property
    def first_frame(self) -> int:
        return self._frame

    @property
    def last_frame(self) -> int:
        return self._frame

    def add(self, text: str, frame: int) -> None:
        raise TypeError("a WholeText is not appended to: Merger.append() makes it a TextBuffer first")

    def text(self) -> str:
        return self._text

    def frame_at(self, offset: int) -> int | None:
        return self._frame if 0 <= offset < self.length else None

    def fragments(self) -> list[tuple[str, int]]:
        return [(self._text, self._frame)]

    def grown(self, journal: list[tuple[str, Path, Any, int]] | None) -> TextBuffer:
        """The same text as a `TextBuffer`, to append to (its piece is not journalled again)."""
        buffer = TextBuffer(self._path, None)
        buffer.add(self._text, self._frame)
        buffer._journal = journal
        return buffer


class _NoText(TextBuffer):
    """The text of a path parsed before anything was appended to it (a tool call sent without
    arguments): one shared, read-only empty buffer, not a buffer and its path's parse kept per call
    (~250 bytes a call, many thousands in a run of bare calls). `Merger` puts a `TextBuffer` in its
    place before anything is appended."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(())  # type: ignore[arg-type]  # (shared by every path: it has none of its own)

    def add(self, text: str, frame: int) -> None:
        raise TypeError("the shared empty text is not appended to: Merger.append() makes a TextBuffer first")


NO_TEXT = _NoText()
