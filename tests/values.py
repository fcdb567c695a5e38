"""One check that a Result is a value, and one that a value is strict JSON, shared by every layer's
tests. Not a test module.

Read back from its JSON, a Result is equal to itself, says the same JSON, and
exports the same native object, key order included (as `streamfold export`
prints it); a dialect that cannot export refuses alike before and after.
"""

from __future__ import annotations

import json
import math
from typing import Any

from streamfold import Result


def _export_or_refusal(result: Result) -> Any:
    try:
        exported = result.export()
    except NotImplementedError as exc:
        return NotImplementedError, str(exc)
    return exported, json.dumps(exported)


def assert_a_value(result: Result) -> Result:
    """Round-trip `result` through JSON, assert it stayed the same, return the copy."""
    back = Result.from_dict(json.loads(json.dumps(result.to_dict())))
    assert back == result
    assert back.to_dict() == result.to_dict()
    assert _export_or_refusal(back) == _export_or_refusal(result)
    return back


def not_strict(value: Any) -> list[tuple[str, Any]]:
    """Where `value` (a to_dict()) holds a string no UTF-8 encoder writes, or a float JSON has not."""
    found: list[tuple[str, Any]] = []
    stack: list[tuple[Any, str]] = [(value, "$")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                found.append((path, item[:40]))
        elif isinstance(item, float) and not math.isfinite(item):
            found.append((path, item))
        elif isinstance(item, dict):
            for key, inner in item.items():
                stack.append((key, path + "{key}"))
                stack.append((inner, f"{path}.{key}"))
        elif isinstance(item, (list, tuple)):
            stack.extend((inner, f"{path}[{position}]") for position, inner in enumerate(item))
    return found
