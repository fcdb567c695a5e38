"""The one generic merger. Dialects say *where* (a path) and *how* (a rule);
the merger owns the state and the rules (reference/dialects.md §0):

- APPEND (`append`): string concatenation in arrival order; None and "" are no-ops, and a
  value that is not a string (a number, a bool, a list where text belongs) is not appended
  but handed to `rejected`, which the dialect reports. The same holds for SET-ONCE and
  REPLACE at the paths whose value the contract says is a string (ids, model, role, a tool
  call's name, the finish reason).
- SET-ONCE (`set_once`): the first non-empty value wins ("" and "null" are empty).
- REPLACE (`replace`): the last non-None value wins; None never clears.
- WHOLE (`whole`): an item that arrives complete; a copy with the same path replaces it.
- PARSE-AT-END (`parse`): an APPEND buffer parsed once, when its block closes or the stream ends.

Paths are tuples. The canonical ones, shared by every dialect and read by the
result builder:

    ("id",) ("model",) ("created",) ("usage",)
    (choice, "role") (choice, "content") (choice, "reasoning") (choice, "refusal")
    (choice, "finish_reason") (choice, "error")
    (choice, "tool", key, "id" | "name" | "arguments")
    (choice, "block", key)   a dialect's own content block: {"type", "index"}, REPLACEd at its
                             start and its stop, so its frames span the block
    ("dialect", name)        a value only the dialect's native snapshot reads

`Path` spells these as types (`TopPath`, `ChoicePath`, `ToolPath`, ...), so mypy
rejects a path the result builder would never read.

Every APPEND buffer remembers which frame gave each piece (provenance), so a
character of the reply can be traced back to its frame. Pieces are collected
and joined once; nothing re-copies a growing string.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable
from typing import Any, Literal, TypeAlias

from ._toolargs import ParsedArguments, parse_arguments

__all__ = ["BlockPath", "ChoiceField", "ChoicePath", "DialectPath", "Merger", "ParsedArguments", "Path", "TextBuffer",
           "ToolCallPath", "ToolField", "ToolKey", "ToolPath", "TopField", "TopPath"]

# The canonical paths as types, so a misspelt field is a type error, not a
# silent private path that the result builder never reads.
TopField: TypeAlias = Literal["id", "model", "created", "usage"]
ChoiceField: TypeAlias = Literal["role", "content", "reasoning", "refusal", "finish_reason", "error"]
ToolField: TypeAlias = Literal["id", "name", "arguments"]
#: A tool call's key within its choice: the order a dialect first saw it in, or the vendor's index.
ToolKey: TypeAlias = int

TopPath: TypeAlias = tuple[TopField]
ChoicePath: TypeAlias = tuple[int, ChoiceField]
ToolCallPath: TypeAlias = tuple[int, Literal["tool"], ToolKey]
ToolPath: TypeAlias = tuple[int, Literal["tool"], ToolKey, ToolField]
BlockPath: TypeAlias = tuple[int, Literal["block"], int]
#: A value a dialect keeps for its own native snapshot; the result builder never reads it.
DialectPath: TypeAlias = tuple[Literal["dialect"], str]
Path: TypeAlias = TopPath | ChoicePath | ToolPath | BlockPath | DialectPath
_EMPTY = (None, "", "null")
#: The last field of each path whose value is text in the Result.
_STRING_FIELDS = frozenset({"id", "model", "role", "finish_reason", "name"})


class TextBuffer:
    """An APPEND buffer with provenance: pieces, the frame of each, running ends."""

    __slots__ = ("_journal", "_path", "ends", "frames", "length", "parsed", "pieces")

    def __init__(self, path: Path, journal: list[tuple[str, Path, Any, int]] | None = None) -> None:
        self.pieces: list[str] = []
        # Machine integers, not int objects: provenance costs 16 bytes a piece.
        self.frames = array("q")
        self.ends = array("q")
        self.length = 0
        #: The PARSE-AT-END outcome, None until parsed (or after a later append).
        self.parsed: ParsedArguments | None = None
        self._path = path
        self._journal = journal

    def add(self, text: str, frame: int) -> None:
        """APPEND: a dialect may hold the buffer of a hot path and call this directly."""
        if not text:
            return
        self.pieces.append(text)
        self.frames.append(frame)
        self.length += len(text)
        self.ends.append(self.length)
        self.parsed = None
        if self._journal is not None:
            self._journal.append(("append", self._path, text, frame))

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


class Merger:
    """Applies merge rules by path and records where every value came from."""

    def __init__(self, *, journal: bool = False) -> None:
        self.texts: dict[Path, TextBuffer] = {}
        #: path -> [value, first frame, last frame]
        self.values: dict[Path, list[Any]] = {}
        #: Changes since the last drain, for `Folder.feed()`'s return value.
        self.journal: list[tuple[str, Path, Any, int]] | None = [] if journal else None
        #: Called with (path, value, frame) for a value `append` refuses because it is not text.
        self.rejected: Callable[[Path, Any, int], None] | None = None

    def append(self, path: Path, text: str | None, frame: int) -> None:
        if type(text) is not str:
            if text is not None and self.rejected is not None:
                self.rejected(path, text, frame)
            return
        if not text:
            return
        buffer = self.texts.get(path)
        if buffer is None:
            buffer = self.texts[path] = TextBuffer(path, self.journal)
        buffer.add(text, frame)

    def replace_text(self, path: Path, pieces: Iterable[tuple[str, int]]) -> TextBuffer:
        """REPLACE for text: the vendor's final, authoritative text (TGI `generated_text`, LM Studio
        `chat.end`, a Responses `.done`, llama.cpp text rebuilt from token bytes) takes the place
        of the streamed join. Returns the new buffer.

        Each piece keeps its frame (provenance). The replacement is not journalled
        (a live consumer already received the streamed pieces and the result holds
        the final text); appends after it are.
        """
        buffer = self.texts[path] = TextBuffer(path, None)
        for text, frame in pieces:
            buffer.add(text, frame)
        buffer._journal = self.journal
        return buffer

    def buffer(self, path: Path) -> TextBuffer:
        """The APPEND buffer at `path` (created empty), for a dialect's hot path."""
        buffer = self.texts.get(path)
        if buffer is None:
            buffer = self.texts[path] = TextBuffer(path, self.journal)
        return buffer

    def set_once(self, path: Path, value: Any, frame: int) -> Any:
        """Keep the first non-empty value; return the value now held (or None)."""
        slot = self.values.get(path)
        if slot is not None:
            return slot[0]
        if value in _EMPTY:
            return None
        if type(value) is not str and path[-1] in _STRING_FIELDS:
            if self.rejected is not None:
                self.rejected(path, value, frame)
            return None
        self.values[path] = [value, frame, frame]
        if self.journal is not None:
            self.journal.append(("set", path, value, frame))
        return value

    def replace(self, path: Path, value: Any, frame: int) -> None:
        if value is None:
            return
        if type(value) is not str and path[-1] in _STRING_FIELDS:
            if self.rejected is not None:
                self.rejected(path, value, frame)
            return
        slot = self.values.get(path)
        if slot is None:
            self.values[path] = [value, frame, frame]
        else:
            slot[0] = value
            slot[2] = frame
        if self.journal is not None:
            self.journal.append(("set", path, value, frame))

    whole = replace

    def get(self, path: Path, default: Any = None) -> Any:
        slot = self.values.get(path)
        return default if slot is None else slot[0]

    def frames_of(self, path: Path) -> tuple[int, int] | None:
        """First and last frame that touched a value or text path."""
        buffer = self.texts.get(path)
        if buffer is not None and buffer.frames:
            return buffer.first_frame, buffer.last_frame
        slot = self.values.get(path)
        return None if slot is None else (slot[1], slot[2])

    def text(self, path: Path) -> str | None:
        buffer = self.texts.get(path)
        return None if buffer is None else buffer.text()

    def parse(self, path: Path, frame: int) -> ParsedArguments:
        """PARSE-AT-END: parse the buffer at `path` (an absent buffer is `{}`)."""
        buffer = self.buffer(path)
        if buffer.parsed is None:
            buffer.parsed = parse_arguments(buffer.text(), buffer.fragments)
            if self.journal is not None:
                self.journal.append(("parsed", path, buffer.parsed, frame))
        return buffer.parsed

    def drain(self) -> list[tuple[str, Path, Any, int]]:
        if not self.journal:
            return []
        out = self.journal[:]
        self.journal.clear()  # buffers hold this same list
        return out
