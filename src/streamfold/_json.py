"""The JSON decoder of the core: msgspec when installed, else the standard library.

msgspec was measured against orjson on chat chunks (benchmarks/README.md):
0.68 µs against 0.88 µs per chunk, and orjson silently turns integers above
64 bits into floats where `json` keeps them exact, which would make a result
depend on what is installed. Results must not depend on it, so a document
msgspec rejects is tried again with `json` (msgspec refuses NaN, Infinity and
lone surrogates, which `json` accepts), and error messages always come from
`json`, whose wording and positions are stable.

Nesting is capped at `MAX_DEPTH` levels: both decoders recurse, so without a
cap a document of a thousand `[` raises RecursionError, and a value that just
fits would make whatever walks it later (comparison, `json.dumps`, a copy)
depend on how deep the caller's stack already is. A deeper document is not
one this core takes: `loads` says so as a JSONDecodeError at the first `[` or
`{` over the cap, like any other invalid document.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

__all__ = ["FAST_DECODER", "MAX_DEPTH", "loads", "loads_utf8", "nesting_error", "strict_error", "too_deep_bytes"]

#: The deepest nesting of arrays and objects a document may have (real payloads nest under 20).
MAX_DEPTH = 256
TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"
# A string whole (so brackets inside it do not count), or one bracket.
_NESTING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')

_std_loads: Callable[[str], Any] = json.loads

try:
    import msgspec

    _fast_loads: Callable[[str], Any] = msgspec.json.Decoder().decode
    #: Decode JSON from UTF-8 bytes without making their text first. Raises
    #: ValueError for anything `loads` would not return as is (invalid UTF-8,
    #: NaN, ...): callers then take their general path, which explains it.
    loads_utf8: Callable[[bytes], Any] = msgspec.json.Decoder().decode
    FAST_DECODER = "msgspec"
except ImportError:  # exercised by test_results_do_not_depend_on_the_fast_decoder
    _fast_loads = _std_loads
    FAST_DECODER = "json"

    def loads_utf8(data: bytes) -> Any:
        return _std_loads(data.decode())


def loads(text: str) -> Any:
    """Decode one JSON document; raise `json.JSONDecodeError` if it is not one (or nests deeper
    than `MAX_DEPTH`)."""
    try:
        value = _fast_loads(text)
    except (ValueError, RecursionError):
        try:
            value = _std_loads(text)
        except RecursionError:
            raise json.JSONDecodeError(TOO_DEEP, text, nesting_error(text) or 0) from None
    if len(text) > MAX_DEPTH and (position := nesting_error(text)) is not None:
        raise json.JSONDecodeError(TOO_DEEP, text, position)
    return value


def nesting_error(text: str, start: int = 0, end: int | None = None) -> int | None:
    """The position of the first `[` or `{` of `text[start:end]` nested deeper than `MAX_DEPTH`
    (brackets inside strings do not count), or None."""
    stop = len(text) if end is None else end
    if stop - start <= MAX_DEPTH or text.count("[", start, stop) + text.count("{", start, stop) <= MAX_DEPTH:
        return None
    depth = 0
    for match in _NESTING.finditer(text, start, stop):
        bracket = text[match.start()]
        if bracket == "[" or bracket == "{":
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        elif bracket == "]" or bracket == "}":
            depth = max(depth - 1, 0)
    return None


def too_deep_bytes(data: bytes) -> bool:
    """`data` (UTF-8 JSON) nests deeper than `MAX_DEPTH`: decoders must not be given it as is."""
    return (len(data) > MAX_DEPTH and data.count(b"[") + data.count(b"{") > MAX_DEPTH
            and nesting_error(data.decode("utf-8", "replace")) is not None)


def strict_error(text: str) -> json.JSONDecodeError | None:
    """The standard library's error for `text`, or None if it decodes."""
    try:
        _std_loads(text)
    except json.JSONDecodeError as exc:
        return exc
    except RecursionError:
        return json.JSONDecodeError(TOO_DEEP, text, nesting_error(text) or 0)
    position = nesting_error(text)
    return None if position is None else json.JSONDecodeError(TOO_DEEP, text, position)
