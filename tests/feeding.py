"""One helper feeds every layer the same bytes whole, one byte at a time, in
random chunkings and cut at every third of the way, and insists they agree (the
model is h11's `tests/test_io.py` `tr()`). Not a test module.

    frames = tr_framer(SSEParser, data)     # the frames, the same however fed
    result = tr_fold(data)                  # the Result, its trace and feed() events, the same however fed
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

from streamfold import Event, Folder, Frame, Result, fold
from streamfold.framing import Framer

__all__ = ["assert_same_fold", "chunkings", "fold_in_random_chunks", "tr_fold", "tr_framer"]


def chunkings(data: bytes, *, seeds: tuple[int, ...] = (1, 2, 3)) -> Iterator[tuple[str, list[bytes]]]:
    """(name, chunks) for each way of feeding `data`: whole, byte by byte, random sizes (1 byte to
    4 KiB, one chunking per seed), and in three pieces."""
    yield "whole", [data]
    yield "byte by byte", [data[i : i + 1] for i in range(len(data))]
    for seed in seeds:
        rng = random.Random(seed)
        chunks, at = [], 0
        while at < len(data):
            size = rng.choice((1, 2, 3, 7, 64, 511, 4096))
            chunks.append(data[at : at + size])
            at += size
        yield f"random (seed {seed})", chunks
    third = len(data) // 3
    yield "thirds", [data[:third], data[third : 2 * third], data[2 * third :]]


def tr_framer(parser_cls: type[Framer], data: bytes, **options: Any) -> list[Frame]:
    """The frames of `data`, checked to be the same for every chunking."""
    reference: list[Frame] | None = None
    for name, chunks in chunkings(data):
        parser = parser_cls(**options)
        frames: list[Frame] = []
        for chunk in chunks:
            frames += parser.feed(chunk)
        frames += parser.close()
        assert [frame.index for frame in frames] == list(range(len(frames))), name
        if reference is None:
            reference = frames
        else:
            assert frames == reference, f"{parser_cls.__name__} fed {name} differs from fed whole"
    assert reference is not None
    return reference


def tr_fold(data: bytes, **options: Any) -> Result:
    """`fold(data)`, checked against a Folder fed every chunking: the same Result, the same trace
    (frames, kinds, provenance), and the same events put end to end (every other feed's read only
    after close(): they are made when read); and `fold(data, trace=False)` gives the same value."""
    reference = fold(data, **options)
    kinds = [kind.value for kind in reference.frame_kinds]
    # The counts are kept as the fold goes; they are those of the kinds.
    assert dict(reference.frame_counts) == {
        "total": len(kinds), "data": len(kinds) - kinds.count("comment"), "comments": kinds.count("comment"),
        "invalid": kinds.count("invalid")}
    # Without a trace, the same value.
    assert fold(data, trace=False, **options).to_dict() == reference.to_dict()
    events_reference: list[Event] | None = None
    for name, chunks in chunkings(data):
        folder = Folder(**options)
        fed: list[Sequence[Event]] = []
        for number, chunk in enumerate(chunks):
            returned = folder.feed(chunk)
            fed.append(list(returned) if number % 2 else returned)
        fed.append(folder.finish())
        result = folder.close()
        events = [event for returned in fed for event in returned]
        assert result == reference, f"fed {name}, the Result differs from fold()"
        assert list(result.frames) == list(reference.frames), f"fed {name}, the frames differ"
        assert list(result.frame_kinds) == list(reference.frame_kinds), f"fed {name}, the kinds differ"
        assert _provenance(result) == _provenance(reference), f"fed {name}, the provenance differs"
        if events_reference is None:
            events_reference = events
        else:
            assert events == events_reference, f"fed {name}, the events differ"
    return reference


def _provenance(result: Result) -> dict[tuple[int, str], tuple[list[int], list[int]]]:
    return {key: (list(source.frames), list(source.ends)) for key, source in result.sources.items()}


def fold_in_random_chunks(data: bytes, rng: random.Random, **options: Any) -> Result:
    """A Folder (of `options`) fed `data` in chunks whose sizes `rng` draws (a byte to 64 KiB), closed: how a
    fast way's runs are cut by the network."""
    folder, position = Folder(**options), 0
    while position < len(data):
        step = rng.choice([1, 7, 64, 333, 4096, 1 << 16])
        folder.feed(data[position : position + step])
        position += step
    return folder.close()


def assert_same_fold(fast: Result, plain: Result, *, frames: bool = False) -> None:
    """Two folds of the same bytes (a fast way's and the plain way's) agree: the Result, its native snapshot
    and its JSON; with `frames`, its frames and their kinds too."""
    assert fast == plain and fast.native == plain.native and fast.to_dict() == plain.to_dict()
    if frames:
        assert list(fast.frames) == list(plain.frames)
        assert list(fast.frame_kinds) == list(plain.frame_kinds)


def plain_frames(monkeypatch: Any, dialect: type[Any]) -> list[int]:
    """The frames `dialect`'s plain `fold` folds from now on, in order (the fast way takes the others):
    what a test of a fast way counts to know it ran."""
    frames: list[int] = []
    slow = dialect.fold

    def counting(self: Any, value: Any, frame: int) -> None:
        frames.append(frame)
        slow(self, value, frame)

    monkeypatch.setattr(dialect, "fold", counting)
    return frames

