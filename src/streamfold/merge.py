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

from collections.abc import Callable, Iterable
from typing import Any, Final, Literal

from ._paths import (
    BlockPath,
    ChoiceField,
    ChoicePath,
    DialectPath,
    Path,
    ToolCallPath,
    ToolField,
    ToolKey,
    ToolPath,
    TopField,
    TopPath,
)
from ._textbuffer import NO_TEXT, TextBuffer, WholeText
from ._toolargs import ParsedArguments, parse_arguments

__all__ = ["DEFAULT_MAX_CHOICES", "DEFAULT_MAX_TOOL_CALLS", "EMPTY_VALUES", "BlockPath", "CapHit", "ChoiceField",
           "ChoicePath", "DialectPath", "Merger", "ParsedArguments", "Path", "TextBuffer", "ToolCallPath", "ToolField",
           "ToolKey", "ToolPath", "TopField", "TopPath", "WholeText"]

#: What SET-ONCE takes for no value: dialects test ids and names against the same.
EMPTY_VALUES: Final = (None, "", "null")
#: The last field of each path whose value is text in the Result.
_STRING_FIELDS = frozenset({"id", "model", "role", "finish_reason", "name"})

#: How many choices a stream may open, and tool calls a choice: past them, what a further
#: choice or call sends is dropped (one finding says so), so a stream that opens a new one
#: in every frame cannot grow the result without bound.
DEFAULT_MAX_CHOICES: Final = 1000
DEFAULT_MAX_TOOL_CALLS: Final = 10_000


class _Dropped(TextBuffer):
    """The buffer of a choice or tool call past the caps: a dialect may hold and read it like
    any buffer, but it is not the merger's, so nothing of it reaches the result or the events.
    (Its first text gives the frame of a cap hit the merger had no frame for: `Merger.buffer`.)"""

    __slots__ = ("_merger",)

    def __init__(self, merger: Merger, path: Path) -> None:
        super().__init__(path)
        self._merger = merger

    def add(self, text: str, frame: int) -> None:
        if self._merger._pending:
            self._merger.flush_caps(frame)
        super().add(text, frame)


#: What a cap calls when it is first hit: (code, frame, message).
CapHit = Callable[[Literal["choices-capped", "tool-calls-capped"], int, str], None]


class Merger:
    """Applies merge rules by path and records where every value came from.

    `max_choices` and `max_tool_calls` (per choice) bound what a stream can open: a path of
    a further choice or call is not created (its writes are dropped) and `on_cap` is told,
    once per cap and choice."""

    def __init__(self, *, journal: bool = False, max_choices: int = DEFAULT_MAX_CHOICES,
                 max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS, on_cap: CapHit | None = None) -> None:
        self.texts: dict[Path, TextBuffer] = {}
        #: path -> (value, first frame, last frame): a tuple, not a list (~70 bytes a value less)
        self.values: dict[Path, tuple[Any, int, int]] = {}
        #: Changes since the last drain, for `Folder.feed()`'s return value.
        self.journal: list[tuple[str, Path, Any, int]] | None = [] if journal else None
        #: Journalled sets of a path ending in "name" (the journal's reader looks for tool names when it moves).
        self.names_journalled = 0
        self.max_choices = max_choices
        self.max_tool_calls = max_tool_calls
        self._on_cap = on_cap
        #: choice -> the keys of its tool calls (the choices opened so far are its keys): a dict, not a
        #: set, which for n keys holds 4-8n slots of 16 bytes (~100 bytes a tool call).
        self._opened: dict[int, dict[int, None]] = {}
        #: The caps already hit: ("choices",) and ("tools", choice).
        self._capped: set[tuple[Any, ...]] = set()
        #: Cap hits not reported yet, for want of a frame: the next write that has one reports them.
        self._pending: list[tuple[Literal["choices-capped", "tool-calls-capped"], str]] = []
        #: Called with (path, value, frame) for a value `append` refuses because it is not text.
        self.rejected: Callable[[Path, Any, int], None] | None = None

    def flush_caps(self, frame: int) -> None:
        """Report the cap hits still waiting for a frame at `frame` (and at the end of the stream)."""
        pending, self._pending = self._pending, []
        for code, message in pending:
            if self._on_cap is not None:
                self._on_cap(code, frame, message)

    def _admits(self, path: Path, frame: int | None) -> bool:
        """May `path` be created? Not when it opens a choice or a tool call past the caps."""
        if frame is not None and self._pending:
            self.flush_caps(frame)
        choice = path[0]
        if type(choice) is not int:
            return True
        calls = self._opened.get(choice)
        if calls is None:
            if len(self._opened) >= self.max_choices:
                self._cap(("choices",), "choices-capped", frame,
                          f"the stream opened more than max_choices={self.max_choices} choices; choice {choice} "
                          "and every further new choice were dropped")
                return False
            calls = self._opened[choice] = {}
        if len(path) > 2 and path[1] == "tool":
            key = path[2]
            if key not in calls:
                if len(calls) >= self.max_tool_calls:
                    self._cap(("tools", choice), "tool-calls-capped", frame,
                              f"choice {choice} opened more than max_tool_calls={self.max_tool_calls} tool calls; "
                              f"tool call {key} and every further new call of that choice were dropped")
                    return False
                calls[key] = None
        return True

    def opens_choice(self, choice: int, frame: int) -> bool:
        """Is choice `choice` open, or may it open now? False past `max_choices` (the cap reported at
        `frame`): a dialect asks before it keeps state of its own for a choice the merger drops."""
        return self._admits((choice, "role"), frame)

    def _cap(self, what: tuple[Any, ...], code: Literal["choices-capped", "tool-calls-capped"], frame: int | None,
             message: str) -> None:
        if what not in self._capped:
            self._capped.add(what)
            if frame is None:
                self._pending.append((code, message))
            elif self._on_cap is not None:
                self._on_cap(code, frame, message)

    def append(self, path: Path, text: str | None, frame: int) -> None:
        if type(text) is not str:
            if text is not None and self.rejected is not None:
                self.rejected(path, text, frame)
            return
        if not text:
            return
        buffer = self.texts.get(path)
        if buffer is None:
            if not self._admits(path, frame):
                return
            buffer = self.texts[path] = TextBuffer(path, self.journal)
        elif type(buffer) is not TextBuffer:
            buffer = self._writable(path, buffer)
        buffer.add(text, frame)

    def append_whole(self, path: Path, text: str | None, frame: int) -> None:
        """APPEND of a text that arrives whole, in one frame (a Gemini function call's args): the same
        as `append`, held in a `WholeText` when it is the path's first text."""
        if type(text) is not str or not text or path in self.texts:
            self.append(path, text, frame)
            return
        if not self._admits(path, frame):
            return
        self.texts[path] = WholeText(path, text, frame)
        if self.journal is not None:
            self.journal.append(("append", path, text, frame))

    def replace_text(self, path: Path, pieces: Iterable[tuple[str, int]]) -> TextBuffer:
        """REPLACE for text: the vendor's final, authoritative text (TGI `generated_text`, LM Studio
        `chat.end`, a Responses `.done`, llama.cpp text rebuilt from token bytes) takes the place
        of the streamed join. Returns the new buffer.

        Each piece keeps its frame (provenance). The replacement is not journalled
        (a live consumer already received the streamed pieces and the result holds
        the final text); appends after it are.
        """
        if path not in self.texts and not self._admits(path, None):
            buffer: TextBuffer = _Dropped(self, path)
        else:
            buffer = self.texts[path] = TextBuffer(path, None)
        for text, frame in pieces:
            buffer.add(text, frame)
        if type(buffer) is not _Dropped:
            buffer._journal = self.journal
        return buffer

    def buffer(self, path: Path) -> TextBuffer:
        """The APPEND buffer at `path` (created empty), for a dialect's hot path."""
        buffer = self.texts.get(path)
        if buffer is None:
            if not self._admits(path, None):
                return _Dropped(self, path)
            buffer = self.texts[path] = TextBuffer(path, self.journal)
        elif type(buffer) is not TextBuffer:
            buffer = self._writable(path, buffer)
        return buffer

    def _writable(self, path: Path, held: TextBuffer) -> TextBuffer:
        """A `TextBuffer` in the place of a read-only text (a `WholeText`, the shared empty text)."""
        buffer = self.texts[path] = held.grown(self.journal) if type(held) is WholeText else \
            TextBuffer(path, self.journal)
        return buffer

    def set_once(self, path: Path, value: Any, frame: int) -> Any:
        """Keep the first non-empty value; return the value now held (or None)."""
        slot = self.values.get(path)
        if slot is not None:
            return slot[0]
        if value in EMPTY_VALUES:
            return None
        if type(value) is not str and path[-1] in _STRING_FIELDS:
            if self.rejected is not None:
                self.rejected(path, value, frame)
            return None
        if not self._admits(path, frame):
            return None
        self.values[path] = (value, frame, frame)
        if self.journal is not None:
            self.journal.append(("set", path, value, frame))
            if path[-1] == "name":
                self.names_journalled += 1
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
            if not self._admits(path, frame):
                return
            self.values[path] = (value, frame, frame)
        else:
            self.values[path] = (value, slot[1], frame)
        if self.journal is not None:
            self.journal.append(("set", path, value, frame))
            if path[-1] == "name":
                self.names_journalled += 1

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

    def parse(self, path: Path, frame: int, *, as_text: bool = False) -> ParsedArguments:
        """PARSE-AT-END: parse the buffer at `path` (an absent buffer is `{}`); `as_text`: arguments that are
        text, not JSON (a tool whose input is free text), whose value is the text as it is."""
        buffer = self.texts.get(path)  # as it is: a WholeText is read, not grown
        if buffer is None or buffer is NO_TEXT:
            if buffer is None and not self._admits(path, None):
                return ParsedArguments("" if as_text else {})  # a call past the cap: nothing to parse or report
            parsed = ParsedArguments("" if as_text else {})
            if buffer is None and self.journal is not None:  # (else parsed before: journalled then)
                self.journal.append(("parsed", path, parsed, frame))
            self.texts[path] = NO_TEXT  # the path now holds a text (an empty one), as an append makes it
            return parsed
        if buffer.parsed is None:
            buffer.parsed = ParsedArguments(buffer.text()) if as_text else \
                parse_arguments(buffer.text(), buffer.fragments)
            if self.journal is not None:
                self.journal.append(("parsed", path, buffer.parsed, frame))
        return buffer.parsed

    def drain(self) -> list[tuple[str, Path, Any, int]]:
        if not self.journal:
            return []
        out = self.journal[:]
        self.journal.clear()  # buffers hold this same list
        return out
