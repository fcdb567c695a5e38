"""Comparing texts: how far two start alike (a dialect's re-sent text against what it folded, the diff's
fields)."""

from __future__ import annotations

__all__ = ["common_prefix_length"]


def common_prefix_length(one: str, other: str) -> int:
    """Length of the common start, by halving (C-speed slices instead of a Python loop per character)."""
    low, high = 0, min(len(one), len(other))
    while low < high:
        middle = (low + high + 1) // 2
        if one[low:middle] == other[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low
