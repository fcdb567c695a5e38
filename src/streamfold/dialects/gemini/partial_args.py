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

__all__ = ["MAX_INDEX_GAP", "apply_fragment", "parse_json_path"]

#: How far past an array's end a fragment's index may point; the gap is filled with nulls.
#: An index further out (`$.a[100000000]`) is not a position a real stream reaches by
#: filling a gap: its value goes at the array's end instead (and a finding says so), so
#: the nulls a fragment adds stay bounded by this, whatever the index says.
MAX_INDEX_GAP = 16

# JSONPath (RFC 9535) segments Vertex uses in partialArgs: .name, [0], ['name'], ["name"].
_PATH_SEGMENT = re.compile(
    r"""\.([^.\[\]'"]+)|\[\s*(\d+)\s*\]|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*"((?:[^"\\]|\\.)*)"\s*\]""")


def apply_fragment(call: StreamedCall, fragment: dict[str, Any]) -> list[tuple[int, int]] | None:
    """Fold one `partialArgs` fragment into the call's arguments. None (and nothing changed)
    when its `jsonPath` is not a path into the arguments; a fragment without a value is skipped.
    Else the array indexes it asked for that were too far past the array's end, each with the
    position its value took instead (`MAX_INDEX_GAP`), the first time each was seen."""
    json_path = fragment.get("jsonPath")
    keys = parse_json_path(json_path) if type(json_path) is str else None
    if not keys or len(keys) >= MAX_DEPTH:
        return None  # no path, or one that would build arguments deeper than any document may nest
    assert type(json_path) is str
    moved = _bound_indexes(call, keys)
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
        return moved
    if type(value) is dict or type(value) is list:
        return None  # each fragment is one scalar: a container here would nest past the path
    _set_path(call.args, keys, value)
    if fragment.get("willContinue") is True:
        call.continuing.add(json_path)
    else:
        call.continuing.discard(json_path)
    return moved


def _bound_indexes(call: StreamedCall, keys: list[str | int]) -> list[tuple[int, int]]:
    """Replace, in `keys`, each index more than `MAX_INDEX_GAP` past its array's end by the
    position its first fragment took (the array's end then), so later fragments at the same
    path land there too. Returns the indexes newly moved, with where they went."""
    moved: list[tuple[int, int]] = []
    node: Any = call.args
    for position, key in enumerate(keys):
        if type(key) is int:
            length = len(node) if type(node) is list else 0
            if key > length + MAX_INDEX_GAP:
                where = (tuple(keys[:position]), key)
                placed = call.moved.get(where)
                if placed is None:
                    placed = call.moved[where] = length
                    moved.append((key, placed))
                keys[position] = key = placed
            found = type(node) is list and key < len(node)
        else:
            found = type(node) is dict and key in node
        node = node[key] if found else None
    return moved


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


def _set_path(root: dict[str, Any], keys: list[str | int], value: object) -> None:
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
