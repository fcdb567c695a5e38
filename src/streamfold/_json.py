"""The JSON decoder of the core: msgspec when installed, else the standard library.

msgspec was measured against orjson on chat chunks (benchmarks/README.md):
0.68 µs against 0.88 µs per chunk, and orjson silently turns integers above
64 bits into floats where `json` keeps them exact, which would make a result
depend on what is installed. Results must not depend on it, so a document
msgspec rejects is tried again with `json` (msgspec refuses NaN, Infinity and
lone surrogates, which `json` accepts), and error messages always come from
`json`, whose wording and positions are stable.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["FAST_DECODER", "loads", "loads_utf8", "strict_error"]

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
    """Decode one JSON document; raise `json.JSONDecodeError` if it is not one."""
    try:
        return _fast_loads(text)
    except ValueError:
        try:
            return _std_loads(text)
        except RecursionError:
            raise json.JSONDecodeError("document nested too deeply to decode", text, 0) from None


def strict_error(text: str) -> json.JSONDecodeError | None:
    """The standard library's error for `text`, or None if it decodes."""
    try:
        _std_loads(text)
    except json.JSONDecodeError as exc:
        return exc
    except RecursionError:
        return json.JSONDecodeError("document nested too deeply to decode", text, 0)
    return None
