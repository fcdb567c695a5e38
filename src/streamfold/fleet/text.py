"""Text a fleet's tables can hold, and the path such text names.

    row_text("/data/caf\\udce9/a.sse")  # -> "/data/caf\\\\xe9/a.sse"
    path_of("/data/caf\\\\xe9/a.sse")    # -> "/data/caf\\udce9/a.sse", when that file is there

Arrow and DuckDB hold only UTF-8. A Python string may carry lone surrogates: a
file name's bytes that are not UTF-8 (kept as U+DC80-U+DCFF), a JSON record's
lone `\\uD800` escape. In a table they are the `\\xNN` escapes of their bytes,
as `ls -b` shows such a name; a location written so is read back to the path.
"""

from __future__ import annotations

import os
import re

__all__ = ["path_of", "row_text"]

_ESCAPE = re.compile(rb"\\x([0-9a-f]{2})")


def row_text(text: str) -> str:
    """`text` as a table holds it: itself when it is UTF-8, else with each lone surrogate as the escapes of its
    bytes (a path's byte as itself, any other surrogate as its three CESU-8 bytes)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "backslashreplace")


def path_of(text: str) -> str:
    """The path a table's `location` names: itself, or, when no such file exists, the path whose bytes its
    `\\xNN` escapes stand for (`row_text` wrote a name that is not UTF-8 so)."""
    local = text.removeprefix("file://")
    if "\\x" not in local or os.path.lexists(local):
        return text
    return os.fsdecode(_ESCAPE.sub(lambda match: bytes([int(match[1], 16)]), local.encode("utf-8")))
