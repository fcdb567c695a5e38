"""One check that a Result is a value, shared by every layer's tests. Not a test module.

Read back from its JSON, a Result is equal to itself, says the same JSON, and
exports the same native object, key order included (as `streamfold export`
prints it); a dialect that cannot export refuses alike before and after.
"""

from __future__ import annotations

import json
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
