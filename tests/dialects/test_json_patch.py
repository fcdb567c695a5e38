"""The JSON Patch the `ag-ui` dialect applies to STATE_DELTA, against RFC 6902's own examples (Appendix A)
and its atomicity."""

from __future__ import annotations

from typing import Any

import pytest

from streamfold.dialects.ag_ui.patch import PatchError, apply_patch

# (document, patch, result) from RFC 6902 Appendix A.
APPLIES: list[tuple[Any, list[dict[str, Any]], Any]] = [
    ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}], {"baz": "qux", "foo": "bar"}),
    ({"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/1", "value": "qux"}], {"foo": ["bar", "qux", "baz"]}),
    ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"}),
    ({"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}], {"foo": ["bar", "baz"]}),
    ({"baz": "qux", "foo": "bar"}, [{"op": "replace", "path": "/baz", "value": "boo"}], {"baz": "boo", "foo": "bar"}),
    ({"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
     [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
     {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}}),
    ({"foo": ["all", "grass", "cows", "eat"]}, [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
     {"foo": ["all", "cows", "eat", "grass"]}),
    ({"baz": "qux", "foo": ["a", 2, "c"]},
     [{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}],
     {"baz": "qux", "foo": ["a", 2, "c"]}),
    ({"foo": "bar"}, [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
     {"foo": "bar", "child": {"grandchild": {}}}),
    ({"foo": ["bar"]}, [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}], {"foo": ["bar", ["abc", "def"]]}),
    ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": 10}], {"/": 9, "~1": 10}),
    ({"foo": 1}, [{"op": "copy", "from": "/foo", "path": "/bar"}], {"foo": 1, "bar": 1}),
    ({"a": 1}, [{"op": "replace", "path": "", "value": [1]}], [1]),
]

FAILS: list[tuple[Any, list[dict[str, Any]]]] = [
    ({"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}]),  # A.9
    ({"foo": "bar"}, [{"op": "add", "path": "/baz/bat", "value": "qux"}]),  # A.12
    ({"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/3", "value": 1}]),
    ({"foo": ["bar"]}, [{"op": "remove", "path": "/foo/01"}]),
    ({"foo": 1}, [{"op": "nope", "path": "/foo"}]),
    ({"foo": {"a": 1}}, [{"op": "move", "from": "/foo", "path": "/foo/b"}]),
]


@pytest.mark.parametrize(("document", "patch", "expected"), APPLIES)
def test_the_rfc_examples_apply(document: Any, patch: list[dict[str, Any]], expected: Any) -> None:
    before = repr(document)
    assert apply_patch(document, patch) == expected
    assert repr(document) == before  # the input is left alone


@pytest.mark.parametrize(("document", "patch"), FAILS)
def test_what_does_not_apply_raises_patch_error(document: Any, patch: list[dict[str, Any]]) -> None:
    with pytest.raises(PatchError):
        apply_patch(document, patch)


def test_a_patch_is_atomic() -> None:
    state = {"count": 1}
    with pytest.raises(PatchError, match="operation 1"):
        apply_patch(state, [{"op": "replace", "path": "/count", "value": 2}, {"op": "remove", "path": "/gone"}])
    assert state == {"count": 1}


def test_replace_keeps_a_members_place() -> None:
    assert list(apply_patch({"a": 1, "b": 2, "c": 3}, [{"op": "replace", "path": "/a", "value": 0}])) == ["a", "b", "c"]
