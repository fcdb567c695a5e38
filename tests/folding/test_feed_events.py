"""`feed()` returns an `Events` whose values are made when it is first read, the hot ones as twins
then given their class (folding/_journal.py). They must be the plain events: each made at once by its
dataclass's constructor, a tool call's name tracked in a dict as the journal goes (`_plain_events`,
the way `feed()` made them before), whenever they are read and however the bytes came: over the
corpus, chunked, and the mutated corpus."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import random
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feeding import chunkings
from mutations import CAPTURES, FUZZ, mutated
from streamfold import Event, Events, Finding, FinishReason, Folder, TextDelta, ToolCallDelta, ToolCallDone, UsageUpdate
from streamfold.folding._journal import JournalReader
from streamfold.merge import Merger
from streamfold.result import TEXT_FIELDS

Journal = list[tuple[str, tuple[Any, ...], Any, int]]


class _Recording(JournalReader):
    """A reader that keeps a copy of every journal it reads, for the model."""

    def __init__(self) -> None:
        super().__init__()
        self.journals: list[Journal] = []

    def read(self, merger: Merger) -> Events:
        if merger.journal:
            self.journals.append(list(merger.journal))
        return super().read(merger)


def _plain_events(journals: list[Journal]) -> list[Event]:
    """The model: every event made at once by its constructor, names as the journal sets them."""
    names: dict[tuple[Any, ...], Any] = {}
    events: list[Event] = []
    for op, path, value, frame in (entry for journal in journals for entry in journal):
        if op == "finding":
            events.append(Finding(frame, value))
            continue
        call = path[:3] if type(path[0]) is int and len(path) == 4 and path[1] == "tool" else None
        if op == "append" and type(path[0]) is int and len(path) == 2 and path[1] in TEXT_FIELDS:
            events.append(TextDelta(frame, path[0], path[1], value))
        elif op == "append" and call is not None and path[3] == "arguments":
            events.append(ToolCallDelta(frame, path[0], path[2], names.get(call), value))
        elif op == "parsed" and call is not None:
            events.append(ToolCallDone(frame, path[0], path[2], names.get(call), value.value, value.error))
        elif op == "set" and call is not None and path[3] == "name":
            names[call] = value
        elif op == "set" and path == ("usage",):
            events.append(UsageUpdate(frame, value))
        elif op == "set" and type(path[0]) is int and len(path) == 2 and path[1] == "finish_reason":
            events.append(FinishReason(frame, path[0], value))
    return events


def _same_value(made: Event, plain: Event) -> None:
    """`made` is the value `plain` is: its class, fields, repr, and frozen."""
    assert type(made) is type(plain)
    assert made == plain and repr(made) == repr(plain)
    assert dataclasses.astuple(made) == dataclasses.astuple(plain)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.frame = 0  # type: ignore[misc]


def _check_fed(data: bytes, chunks: Sequence[bytes], seed: int) -> None:
    """Fed `chunks`, each `Events` read at once or only after close() (as `seed` picks): the events are
    the model's, in order, and each feed's are those of its own journal."""
    folder = Folder()
    reader = folder._journal = _Recording()
    rng = random.Random(seed)
    returned: list[tuple[Events, list[Event] | None]] = []
    for chunk in [*chunks, None]:
        events = folder.feed(chunk) if chunk is not None else folder.finish()
        returned.append((events, list(events) if rng.random() < 0.5 else None))
    folder.close()
    made = [event for events, _ in returned for event in events]
    plain = _plain_events(reader.journals)
    assert made == plain, f"{len(data)} bytes in {len(chunks)} chunks"
    for one, other in zip(made, plain):
        _same_value(one, other)
    for events, read_at_once in returned:  # read late, the same values as read at once
        if read_at_once is not None:
            assert list(events) == read_at_once and all(a is b for a, b in zip(events, read_at_once))


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_the_events_of_every_capture_are_the_plain_ones_however_fed_and_read(name: str) -> None:
    data = CAPTURES[name]
    for way, chunks in chunkings(data, seeds=(len(data),)):
        if way == "byte by byte" and len(data) > 4096:
            continue  # (the random chunkings have short chunks enough)
        _check_fed(data, chunks, seed=len(chunks))


@settings(FUZZ, max_examples=40)
@given(mutated(), st.lists(st.integers(1, 600), min_size=1, max_size=8), st.integers(0, 1 << 16))
def test_the_events_of_mutated_captures_are_the_plain_ones(data: bytes, sizes: list[int], seed: int) -> None:
    chunks, at = [], 0
    while at < len(data):
        chunks.append(data[at : at + sizes[len(chunks) % len(sizes)]])
        at += len(chunks[-1])
    _check_fed(data, chunks, seed)


_TOOL = (b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,%s'
         b'"function":{%s"arguments":"%s"}}]}}]}\n\n')


def test_a_tool_call_event_read_late_carries_the_name_its_call_had_at_its_frame() -> None:
    """The name comes in the second fragment: the first fragment's event has none, read at once or
    after everything (the name is looked up by the event's place in the journal, not at reading)."""
    first = _TOOL % (b"", b"", b'{\\"a\\"')
    second = _TOOL % (b'"id":"call_1","type":"function",', b'"name":"f",', b": 1}")
    for late in (False, True):
        folder = Folder()
        fed = [folder.feed(first), folder.feed(second + b"data: [DONE]\n\n"), folder.finish()]
        if not late:
            fed = [Events(list(events)) for events in fed]
        folder.close()
        calls = [(type(event).__name__, event.frame, event.name) for events in fed for event in events
                 if isinstance(event, (ToolCallDelta, ToolCallDone))]
        assert calls == [("ToolCallDelta", 0, None), ("ToolCallDelta", 1, "f"), ("ToolCallDone", 2, "f")], late


def test_events_behave_as_the_list_of_the_same_events() -> None:
    folder = Folder()
    events = folder.feed(b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}'
                         b'\n\ndata: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"!"}}]}'
                         b'\n\n')
    hi, bang = TextDelta(0, 0, "content", "Hi"), TextDelta(1, 0, "content", "!")
    assert isinstance(events, Sequence) and not isinstance(events, list)
    assert events == [hi, bang] and [hi, bang] == events and events != [hi] and events != (hi, bang)
    assert events == Events([hi, bang]) and bool(events) and len(events) == 2
    assert events[0] == hi and events[-1] == bang and events[1:] == [bang] and list(reversed(events)) == [bang, hi]
    assert bang in events and events.index(bang) == 1 and events.count(hi) == 1
    # (the + of a list is what is held here)
    assert events + [hi] == [hi, bang, hi] and [bang] + events == [bang, hi, bang]  # noqa: RUF005
    assert events + events == [hi, bang, hi, bang]
    gathered: list[Event] = []
    gathered += events
    assert gathered == [hi, bang]
    assert repr(events) == repr([hi, bang])
    assert pickle.loads(pickle.dumps(events)) == events and copy.copy(events) == events
    with pytest.raises(TypeError):
        hash(events)
    nothing = folder.feed(b"data: ")  # nothing completed
    assert not nothing and nothing == [] and len(nothing) == 0 and list(nothing) == []
    assert dataclasses.replace(events[0], text="Ho") == TextDelta(0, 0, "content", "Ho")
    assert dataclasses.asdict(events[0]) == {"frame": 0, "choice": 0, "field": "content", "text": "Hi"}
