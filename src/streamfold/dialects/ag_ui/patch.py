"""RFC 6902 JSON Patch, applied the way AG-UI's `STATE_DELTA` asks: atomically (all the operations
or none), to a copy, so a patch that fails leaves the state as it was. JSON Pointers are RFC 6901
(`~1` is `/`, `~0` is `~`; `-` appends to an array)."""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["PatchError", "apply_patch"]


class PatchError(ValueError):
    """An operation that does not apply; its message says which and why."""


def apply_patch(document: Any, operations: object) -> Any:
    """`document` with every operation of `operations` applied, as a new value (the input is left alone)."""
    if type(operations) is not list:
        raise PatchError("the patch is not an array of operations")
    result = copy.deepcopy(document)
    for number, operation in enumerate(operations):
        try:
            result = _apply(result, operation)
        except PatchError as error:
            raise PatchError(f"operation {number} ({_describe(operation)}): {error}") from None
    return result


def _describe(operation: object) -> str:
    if type(operation) is dict:
        return f"{operation.get('op')} {operation.get('path')}"
    return "not an object"


def _apply(document: Any, operation: object) -> Any:
    if type(operation) is not dict:
        raise PatchError("an operation must be an object")
    op, path = operation.get("op"), operation.get("path")
    if type(path) is not str:
        raise PatchError("`path` is not a string")
    if op in ("add", "replace", "test") and "value" not in operation:
        raise PatchError("`value` is missing")
    if op == "add":
        return _add(document, path, copy.deepcopy(operation["value"]))
    if op == "remove":
        return _remove(document, path)[0]
    if op == "replace":
        return _replace(document, path, copy.deepcopy(operation["value"]))
    if op in ("move", "copy"):
        source = operation.get("from")
        if type(source) is not str:
            raise PatchError("`from` is not a string")
        if op == "move":
            if path.startswith(source + "/"):
                raise PatchError("a value cannot move into itself")
            document, value = _remove(document, source)
        else:
            value = copy.deepcopy(_get(document, source))
        return _add(document, path, value)
    if op == "test":
        if _get(document, path) != operation["value"]:
            raise PatchError("the value differs")
        return document
    raise PatchError(f"unknown op {op!r}")


def _tokens(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"{path!r} is not a JSON Pointer")
    return [token.replace("~1", "/").replace("~0", "~") for token in path[1:].split("/")]


def _index(container: list[Any], token: str, *, end_ok: bool) -> int:
    if token == "-" and end_ok:
        return len(container)
    if not token.isdigit() or (token != "0" and token.startswith("0")):
        raise PatchError(f"{token!r} is not an array index")
    index = int(token)
    if index > len(container) or (index == len(container) and not end_ok):
        raise PatchError(f"index {index} is out of range")
    return index


def _get(document: Any, path: str) -> Any:
    for token in _tokens(path):
        if type(document) is dict:
            if token not in document:
                raise PatchError(f"no member {token!r}")
            document = document[token]
        elif type(document) is list:
            document = document[_index(document, token, end_ok=False)]
        else:
            raise PatchError(f"{token!r} is inside a scalar")
    return document


def _parent(document: Any, path: str) -> tuple[Any, str]:
    tokens = _tokens(path)
    if not tokens:
        raise PatchError("the root has no parent")
    parent_path = "".join("/" + token.replace("~", "~0").replace("/", "~1") for token in tokens[:-1])
    return _get(document, parent_path), tokens[-1]


def _add(document: Any, path: str, value: Any) -> Any:
    if path == "":
        return value
    parent, token = _parent(document, path)
    if type(parent) is dict:
        parent[token] = value
    elif type(parent) is list:
        parent.insert(_index(parent, token, end_ok=True), value)
    else:
        raise PatchError(f"{token!r} is inside a scalar")
    return document


def _remove(document: Any, path: str) -> tuple[Any, Any]:
    if path == "":
        return None, document
    parent, token = _parent(document, path)
    if type(parent) is dict:
        if token not in parent:
            raise PatchError(f"no member {token!r}")
        return document, parent.pop(token)
    if type(parent) is list:
        return document, parent.pop(_index(parent, token, end_ok=False))
    raise PatchError(f"{token!r} is inside a scalar")


def _replace(document: Any, path: str, value: Any) -> Any:
    """Replace in place (a member keeps its position among its siblings)."""
    if path == "":
        return value
    parent, token = _parent(document, path)
    if type(parent) is dict:
        if token not in parent:
            raise PatchError(f"no member {token!r}")
        parent[token] = value
    elif type(parent) is list:
        parent[_index(parent, token, end_ok=False)] = value
    else:
        raise PatchError(f"{token!r} is inside a scalar")
    return document
