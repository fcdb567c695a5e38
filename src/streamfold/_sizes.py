"""Sizes as people write them and read them: `64MiB` -> bytes for an option, and bytes -> `64 MiB` for a
message. Shared by the fronts (the page's `--max-size`, the command line's `--max-inflated`) and the
input readers' notes, so every limit is spelled the same way."""

from __future__ import annotations

import math
import re

__all__ = ["format_size", "parse_size"]

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """'64MiB', '64M', '1.5GiB', '65536' -> bytes (K, M, G, T are powers of 1024)."""
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"not a size: {text!r} (try 64MiB, 512KiB or a number of bytes)")
    number, unit = float(match.group(1)), match.group(2).lower()
    size = int(number * 1024 ** " kmgt".index(unit or " "))
    if size < 1:
        raise ValueError(f"the size must be at least one byte, got {text!r}")
    return size


def format_size(size: int, *, compact: bool = False) -> str:
    """1536 -> '1.5 KiB' ('2KiB' with compact: rounded up, no space, as the size options take it)."""
    units = ("B", "KiB", "MiB", "GiB", "TiB")
    value, unit = float(size), 0
    while value >= 1024 and unit < len(units) - 1:
        value, unit = value / 1024, unit + 1
    if compact:
        return f"{math.ceil(value)}{units[unit]}"
    return f"{value:.0f} {units[unit]}" if value == int(value) else f"{value:.1f} {units[unit]}"
