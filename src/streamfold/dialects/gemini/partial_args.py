"""Vertex streamed function-call arguments: `partialArgs` fragments, each a value
at a JSONPath (RFC 9535) into the arguments object, assembled into that object.

A call that sets `willContinue: true` goes on in the next chunks; a string
fragment with `willContinue: true` leaves its string open, so the next fragment
at the same path appends to it. The dialect serialises the assembled object
once, when the call says it is finished.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..._json import MAX_DEPTH

if TYPE_CHECKING:
    from .state import StreamedCall

__all__ = ["apply_fragment", "parse_json_path"]

# JSONPath (RFC 9535) segments Vertex uses in partialArgs: .name, [0], ['name'], ["name"].
_PATH_SEGMENT = re.compile(
    r"""\.([^.\[\]'"]+)|\[\s*(\d+)\s*\]|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*"((?:[^"\\]|\\.)*)"\s*\]""")


def apply_fragment(call: StreamedCall, fragment: dict[str, Any]) -> bool:
    """Fold one `partialArgs` fragment into the call's arguments. False (and nothing changed)
    when its `jsonPath` is not a path into the arguments; a fragment without a value is skipped."""
    json_path = fragment.get("jsonPath")
    keys = parse_json_path(json_path) if type(json_path) is str else None
    if not keys or len(keys) >= MAX_DEPTH:
        return False  # no path, or one that would build arguments deeper than any document may nest
    assert type(json_path) is str
    if "stringValue" in fragment:
        value: Any = fragment["stringValue"]
        if json_path in call.continuing:
            held = _get_path(call.args, keys)
            if type(held) is str and type(value) is str:
                value = held + value  # APPEND to the string the previous fragment left open
    elif "numberValue" in fragment:
        value = fragment["numberValue"]
    elif "boolValue" in fragment:
        value = fragment["boolValue"]
    elif "nullValue" in fragment:
        value = None
    else:
        return True
    if type(value) is dict or type(value) is list:
        return False  # each fragment is one scalar: a container here would nest past the path
    _set_path(call.args, keys, value)
    if fragment.get("willContinue") is True:
        call.continuing.add(json_path)
    else:
        call.continuing.discard(json_path)
    return True


def parse_json_path(path: str) -> list[str | int] | None:
    """`$.a.b[0]['c d']` -> ["a", "b", 0, "c d"]; None when it is not such a path."""
    text = path.strip()
    if text.startswith("$"):
        text = text[1:]
    elif text and text[0] not in ".[":
        text = "." + text  # a bare member name, as some gateways send
    keys: list[str | int] = []
    position = 0
    while position < len(text):
        match = _PATH_SEGMENT.match(text, position)
        if match is None:
            return None
        member, number, single, double = match.groups()
        if number is not None:
            keys.append(int(number))
        else:
            name = member if member is not None else (single if single is not None else double)
            keys.append(re.sub(r"\\(.)", r"\1", name) if member is None else name)
        position = match.end()
    return keys


def _get_path(root: Any, keys: list[str | int]) -> Any:
    node = root
    for key in keys:
        found = (type(key) is int and type(node) is list and key < len(node)) or (
            type(key) is str and type(node) is dict and key in node)
        if not found:
            return None
        node = node[key]
    return node


def _set_path(root: dict[str, Any], keys: list[str | int], value: Any) -> None:
    node: Any = root
    for position, key in enumerate(keys):
        last = position == len(keys) - 1
        following = None if last else keys[position + 1]
        fresh: Any = value if last else ([] if type(following) is int else {})
        if type(key) is int:
            if type(node) is not list:
                return  # the path contradicts what was built so far
            while len(node) <= key:
                node.append(None)
            if last or type(node[key]) not in (dict, list):
                node[key] = fresh
            node = node[key]
        else:
            if type(node) is not dict:
                return
            if last or type(node.get(key)) not in (dict, list):
                node[key] = fresh
            node = node[key]
