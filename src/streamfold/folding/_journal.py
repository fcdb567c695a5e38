"""What `Folder.feed()` returns, made from the journal the merger and the report
write in the order things happened: only canonical paths become events (a
dialect's own paths stay private), and every finding is one. The order does not
depend on how the bytes were chunked.

Made when read. Making an event added 40-70 % to the fold of the frame that
caused it (a frozen dataclass's `__init__` sets each field through
`object.__setattr__`), and most Folders' events are never read:
`feed()` returns an `Events` over the chunk's journal entries, whose values
are made the first time it is read. The hot ones are made as twins without the
frozen `__setattr__`, then given their class (`_twin`): the same frozen value
at less than half the cost.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import fields
from typing import Any, overload

from ..events import Event, Finding, FinishReason, TextDelta, ToolCallDelta, ToolCallDone, UsageUpdate
from ..merge import Merger
from ..result import TEXT_FIELDS

__all__ = ["NO_EVENTS", "Events", "JournalReader"]

Entry = tuple[str, tuple[Any, ...], Any, int]


class Events(Sequence[Event]):
    """What one `Folder.feed()` or `finish()` call completed, in stream order: a read-only sequence
    that equals the list of the same events (`events == [TextDelta(...)]`; `events + more` is a list).

    Its events are made the first time it is read (iterated, indexed, measured, compared or printed),
    however late: a caller that never reads what `feed()` returns pays for none. `Events(iterable)`
    holds the given ones.
    """

    __slots__ = ("_journal", "_list", "_reader", "_start")

    def __init__(self, events: Iterable[Event] = ()) -> None:
        self._list: list[Event] | None = list(events)
        self._journal: list[Entry] = []
        self._reader: JournalReader | None = None
        self._start = 0

    @classmethod
    def _unread(cls, journal: list[Entry], reader: JournalReader, start: int) -> Events:
        events = cls.__new__(cls)
        events._list, events._journal, events._reader, events._start = None, journal, reader, start
        return events

    def _events(self) -> list[Event]:
        made = self._list
        if made is None:  # (the entries are kept: another thread may be reading them)
            assert self._reader is not None
            made = self._list = _events_of(self._journal, self._reader, self._start)
        return made

    def __len__(self) -> int:
        return len(self._events())

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        return self._events()[index]

    def __iter__(self) -> Iterator[Event]:
        return iter(self._events())

    def __reversed__(self) -> Iterator[Event]:
        return reversed(self._events())

    def __contains__(self, value: object) -> bool:
        return value in self._events()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Events):
            return self._events() == other._events()
        if isinstance(other, list):
            return self._events() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # (as a list's)

    def __add__(self, other: Sequence[Event]) -> list[Event]:
        if isinstance(other, (Events, list)):
            return [*self._events(), *other]
        return NotImplemented

    def __radd__(self, other: Sequence[Event]) -> list[Event]:
        if isinstance(other, list):
            return [*other, *self._events()]
        return NotImplemented

    def __repr__(self) -> str:
        return repr(self._events())

    def __reduce__(self) -> tuple[type[Events], tuple[list[Event]]]:
        return Events, (self._events(),)


class JournalReader:
    """A Folder's reader of its merger's journal: each drain becomes an unread `Events`. It numbers the
    entries from the start of the stream and keeps each tool call's names by number, so an event made
    late carries the name its call had at that event's place, as one made at once does."""

    __slots__ = ("_drained", "_names", "_names_seen")

    def __init__(self) -> None:
        self._drained = 0
        self._names_seen = 0
        #: (choice, "tool", key) -> ([entry number, ...], [name, ...]) in the order set (a stream may set a
        #: name at every frame: the one before an entry is found by bisection)
        self._names: dict[tuple[Any, ...], tuple[list[int], list[Any]]] = {}

    def read(self, merger: Merger) -> Events:
        journal = merger.drain()
        if not journal:
            return NO_EVENTS
        start = self._drained
        self._drained += len(journal)
        if merger.names_journalled != self._names_seen:  # (only then: a walk of every entry costs ~5 % of a fold)
            self._names_seen = merger.names_journalled
            for number, (op, path, value, _) in enumerate(journal, start):
                if op == "set" and type(path[0]) is int and len(path) == 4 and path[1] == "tool" \
                        and path[3] == "name":
                    numbers, names = self._names.setdefault(path[:3], ([], []))
                    numbers.append(number)
                    names.append(value)
        return Events._unread(journal, self, start)

    def name(self, call: tuple[Any, ...], number: int) -> Any:
        """The name of tool call `call` as set before entry `number`."""
        history = self._names.get(call)
        if history is None:
            return None
        numbers, names = history
        before = bisect_left(numbers, number)
        return names[before - 1] if before else None


NO_EVENTS = Events()


def _twin(cls: Any) -> Any:
    """A class with the slots of dataclass `cls` and no frozen `__setattr__`: a value made as one, its
    slots set, then given `cls` as its class, is `cls`'s frozen value (the layouts are the same)."""
    return type(f"_{cls.__name__}Twin", (), {"__slots__": tuple(field.name for field in fields(cls))})


_TextDeltaTwin, _ToolCallDeltaTwin, _UsageUpdateTwin = _twin(TextDelta), _twin(ToolCallDelta), _twin(UsageUpdate)


def _events_of(journal: list[Entry], reader: JournalReader, start: int) -> list[Event]:
    events: list[Event] = []
    append = events.append
    for number, (op, path, value, frame) in enumerate(journal, start):  # (by op: the merger writes only these)
        if op == "append":
            if type(path[0]) is not int:
                continue
            if len(path) == 2 and path[1] in TEXT_FIELDS:
                event = _TextDeltaTwin()
                event.frame = frame
                event.choice = path[0]
                event.field = path[1]
                event.text = value
                event.__class__ = TextDelta
                append(event)
            elif len(path) == 4 and path[1] == "tool" and path[3] == "arguments":
                event = _ToolCallDeltaTwin()
                event.frame = frame
                event.choice = path[0]
                event.tool_call = path[2]
                event.name = reader.name(path[:3], number)
                event.arguments = value
                event.__class__ = ToolCallDelta
                append(event)
        elif op == "set":
            if path == ("usage",):
                event = _UsageUpdateTwin()
                event.frame = frame
                event.raw = value
                event.__class__ = UsageUpdate
                append(event)
            elif type(path[0]) is int and len(path) == 2 and path[1] == "finish_reason":
                append(FinishReason(frame, path[0], value))
        elif op == "finding":
            append(Finding(frame, value))
        elif op == "parsed" and type(path[0]) is int and len(path) == 4 and path[1] == "tool":
            append(ToolCallDone(frame, path[0], path[2], reader.name(path[:3], number), value.value, value.error))
    return events
