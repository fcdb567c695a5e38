"""The JSON decoder of the core: orjson when installed, else the standard library.

Results must not depend on which one is present, so a document orjson
rejects is tried again with `json` (orjson refuses a few things `json`
accepts: NaN, integers above 64 bits, lone surrogates), and error messages
always come from `json`, whose wording and positions are stable.
"""

from __future__ import annotations

import json
from typing import Any, Callable

__all__ = ["FAST_DECODER", "loads", "strict_error"]

_std_loads: Callable[[str], Any] = json.loads

try:
    import orjson

    _fast_loads: Callable[[str], Any] = orjson.loads
    FAST_DECODER = "orjson"
except ImportError:  # pragma: no cover - exercised by the no-orjson CI leg
    _fast_loads = _std_loads
    FAST_DECODER = "json"


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
