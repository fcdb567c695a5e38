"""What keeps a fold's cost in proportion to its input: the limits a user sets, checked
once, and the slices `fold()` feeds a whole capture in."""

from __future__ import annotations

from collections.abc import Callable, Iterator

__all__ = ["check_limits", "slices"]

# fold() feeds a whole capture in slices of this size: the intermediate lists stay small, so
# the cost per frame stays flat however large the capture (one giant feed was 2.4x slower at 1M).
_FOLD_SLICE = 1024 * 1024
# ... unless it is made of small frames that are records (not runs): a slice's records are all
# made before they are stored (~600 bytes each), so a slice holds about this many at most
# (110k for a MiB of 9-byte stray lines).
_SMALL_SLICE = 64 * 1024
_RECORDS_PER_SLICE = 4096
# Line ends in the first 8 KiB past which a capture's frames are taken for small ones (32 bytes a
# line end or fewer, where an OpenAI chunk is ~150 and an Anthropic `event:` + `data:` block ~50;
# stray lines and bare `data: {` are 5-9). At 64 bytes Anthropic streams were cut at 64 KiB for
# nothing (their blocks are runs, not records): 7% of a 1k-frame fold. Only a sample: counting line
# ends is a byte-by-byte loop in C, and over 64 KiB it cost a 1k-frame fold 5%.
_SAMPLE = 8 * 1024
_SMALL_FRAMES = 256


def check_limits(**limits: object) -> None:
    """Each limit is an int >= 0 (a wrong one is misuse: ValueError)."""
    for name, limit in limits.items():
        if type(limit) is not int or limit < 0:
            raise ValueError(f"{name} must be an int >= 0, got {limit!r}")


def slices(data: bytes, records: Callable[[], int]) -> Iterator[tuple[int, bytes]]:
    """`data` in slices, each with where it ends: 1 MiB, or 64 KiB after a slice that made many
    records (`records()` counts those made so far). The first is 64 KiB when its first 8 KiB has
    the line ends of small frames, which may be records; a stream of ordinary frames is not cut
    there (one slice more cost a 1k-frame fold 3%)."""
    small_frames = (len(data) > _SMALL_SLICE
                    and data.count(b"\n", 0, _SAMPLE) + data.count(b"\r", 0, _SAMPLE) > _SMALL_FRAMES)
    start, size = 0, _SMALL_SLICE if small_frames else _FOLD_SLICE
    while start < len(data):
        made = records()
        yield min(start + size, len(data)), data[start : start + size]
        start += size
        made = records() - made
        size = _FOLD_SLICE if made * _FOLD_SLICE < size * _RECORDS_PER_SLICE else _SMALL_SLICE
