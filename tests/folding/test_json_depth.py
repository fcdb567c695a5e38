"""The nesting cap's fast check equals the plain count it stands in for.

`_json._deeper_than_max` decides, in steps that run in C, whether a document
nests deeper than `MAX_DEPTH`; `nesting_error` then finds the position the
plain way. Here the plain way is written out once more, bracket by bracket,
and the two must agree on every JSON document, however its strings hide
brackets, quotes and escapes.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from streamfold._json import MAX_DEPTH, _deeper_than_max, nesting_error, too_deep_bytes


def _plain_max_depth(text: str) -> int:
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
    return deepest


TRICKY = st.text(alphabet='[]{}"\\ab\n\u00e9\U0001f600', max_size=12)
VALUES = st.recursive(st.none() | st.integers() | TRICKY,
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TRICKY, inner, max_size=3),
                      max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(VALUES, st.integers(min_value=0, max_value=MAX_DEPTH + 3), st.sampled_from(["[", '{"k[\\"":']))
def test_the_fast_check_is_the_plain_count(value: object, depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    text = opener * depth + json.dumps(value) + closer * depth
    deepest = _plain_max_depth(text)
    assert _deeper_than_max(text) == (deepest > MAX_DEPTH)
    assert (nesting_error(text) is not None) == (deepest > MAX_DEPTH)
    # The check the fold makes on a run's UTF-8 bytes, without their text.
    assert too_deep_bytes(text.encode()) == (deepest > MAX_DEPTH)
    assert too_deep_bytes(json.dumps(json.loads(text), ensure_ascii=False).encode()) == (deepest > MAX_DEPTH)
