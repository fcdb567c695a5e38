"""RFC 6902 JSON Patch, applied the way AG-UI's `STATE_DELTA` asks: atomically (all the operations
or none), so a patch that fails leaves the state as it was. JSON Pointers are RFC 6901 (`~1` is
`/`, `~0` is `~`; `-` appends to an array).

Strategy. A run's state is patched in place (`State`), each operation costing what it touches,
never the whole state: copying the state for every patch made a stream of small patches
quadratic. Atomicity comes from an undo log: every change is written down with what undoes it,
and a failing operation undoes the patch's changes in reverse. Removing an object member only
marks it until the patch is over (the marks are dropped on failure, the members deleted on
success), so a failed patch puts no member back out of its place among its siblings.

Values come into the state from the stream's own payloads, which nothing else holds: they are
adopted, not copied (a `copy` operation copies, as it must). Two bounds keep what a stream can
make the state cost in proportion to the stream (`PatchLimitError`, reported as `state-capped`):
- copying: `copy` makes values the stream never sent (each one doubling the state grows it
  exponentially), and a `move` deeper into the state walks the value it moves. Both draw on an
  allowance: `ALLOWANCE_FLOOR` values, plus one for each value and `GRANT_PER_OPERATION` for each
  operation the state events brought. A patch that would draw more is not applied.
- nesting: the state nests at most `MAX_STATE_DEPTH` levels, as deep as a `STATE_SNAPSHOT` can
  carry it (a `move` into a member nests a value one level deeper per operation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..._json import MAX_DEPTH

__all__ = ["ALLOWANCE_FLOOR", "GRANT_PER_OPERATION", "MAX_STATE_DEPTH", "PatchError", "PatchLimitError", "State",
           "apply_patch"]

#: Levels of nesting the state may have: what a STATE_SNAPSHOT's `snapshot` can carry (one level
#: of the event's own object is above it).
MAX_STATE_DEPTH = MAX_DEPTH - 1
#: Values any run may copy, whatever its size (a small legitimate stream is never refused).
ALLOWANCE_FLOOR = 1024
#: Values each operation of a STATE_DELTA adds to the allowance (each value it carries adds one more).
GRANT_PER_OPERATION = 4
_T = TypeVar("_T")
#: An array index has at most this many digits (and `int()` of a long digit string is refused).
_MAX_INDEX_DIGITS = 18


class PatchError(ValueError):
    """An operation that does not apply; its message says which and why."""


class PatchLimitError(PatchError):
    """A patch that would take the state past a bound (`MAX_STATE_DEPTH`, the copy allowance)."""


def apply_patch(document: Any, operations: object) -> Any:
    """`document` with every operation of `operations` applied, as a new value (the input is left
    alone). The fold patches its state in place (`State`); this is that, on a copy."""
    state = State()
    state.value = _clone(document, {}, None)[0]
    state.allowance = 1 << 62  # a caller's own document: no stream to bound it by
    state.patch(operations)
    return state.value


class State:
    """The state of an AG-UI run: the last STATE_SNAPSHOT with every STATE_DELTA applied."""

    __slots__ = ("allowance", "value")

    def __init__(self) -> None:
        self.value: Any = None
        #: Values the next patches may still copy (or walk to move deeper).
        self.allowance = ALLOWANCE_FLOOR

    def snapshot(self, value: Any) -> None:
        """STATE_SNAPSHOT: `value` (the event's own, adopted) is the state."""
        self.allowance += _measure(value)[0]
        self.value = value

    def patch(self, operations: object) -> None:
        """STATE_DELTA: apply every operation, or none (raises PatchError, PatchLimitError for a bound)."""
        if type(operations) is not list:
            raise PatchError("the patch is not an array of operations")
        for operation in operations:
            self.allowance += GRANT_PER_OPERATION + (
                _measure(operation["value"])[0] if type(operation) is dict and "value" in operation else 0)
        # (the caller says why a patch without a snapshot starts from {})
        patch = _Patch({} if self.value is None else self.value, self.allowance)
        for number, operation in enumerate(operations):
            try:
                patch.apply(operation)
            except PatchError as error:
                patch.undo()
                self.allowance = patch.allowance  # what was walked stays spent: a refused patch is no free retry
                raise type(error)(f"operation {number} ({_describe(operation)}): {error}") from None
        patch.commit()
        self.value, self.allowance = patch.root, patch.allowance


def _describe(operation: object) -> str:
    if type(operation) is dict:
        return f"{operation.get('op')} {operation.get('path')}"
    return "not an object"


def _measure(value: Any, limit: int | None = None) -> tuple[int, int]:
    """How many JSON values `value` holds (itself included) and how deep it nests (0: a scalar, 1: a flat
    array or object). Raises PatchLimitError when it holds more than `limit`."""
    count, height, stack = 1, 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if type(node) is not dict and type(node) is not list:
            continue
        height = max(height, level)
        children = node.values() if type(node) is dict else node
        count += len(children)
        if limit is not None and count > limit:
            raise PatchLimitError(f"walking more than the stream's allowance of {limit} values")
        stack.extend((child, level + 1) for child in children if type(child) is dict or type(child) is list)
    return count, height


def _clone(value: Any, removed: dict[tuple[int, str], Any], limit: int | None) -> tuple[Any, int, int]:
    """A deep copy of `value` without the members marked removed, its height and the values copied.
    Raises PatchLimitError past `limit` values."""
    copied = 0

    def clone(node: Any) -> tuple[Any, int]:
        nonlocal copied
        copied += 1
        if limit is not None and copied > limit:
            raise PatchLimitError(f"copying more than the stream's allowance of {limit} values")
        if type(node) is dict:
            out: dict[str, Any] = {}
            height = 0
            for key, child in node.items():
                if removed and (id(node), key) in removed:
                    continue
                out[key], below = clone(child)
                height = max(height, below)
            return out, height + 1
        if type(node) is list:
            items, height = [], 0
            for child in node:
                copy, below = clone(child)
                items.append(copy)
                height = max(height, below)
            return items, height + 1
        return node, 0

    copy, height = clone(value)
    return copy, height, copied


def _tokens(path: object, what: str = "path") -> list[str]:
    if type(path) is not str:
        raise PatchError(f"`{what}` is not a string")
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"{path!r} is not a JSON Pointer")
    return [token.replace("~1", "/").replace("~0", "~") for token in path[1:].split("/")]


def _index(container: list[Any], token: str, *, end_ok: bool) -> int:
    if token == "-" and end_ok:
        return len(container)
    # ASCII digits only ("²".isdigit() is true), no leading zero, and not so many that int() refuses them.
    if not (token.isascii() and token.isdigit()) or (token != "0" and token.startswith("0")):
        raise PatchError(f"{token[:40]!r} is not an array index")
    if len(token) > _MAX_INDEX_DIGITS or int(token) > len(container) or (int(token) == len(container)
                                                                          and not end_ok):
        raise PatchError(f"index {token[:40]} is out of range")
    return int(token)


class _Patch:
    """One patch being applied to `root` in place, with what undoes it."""

    def __init__(self, root: Any, allowance: int) -> None:
        self.root = root
        #: Reversed in order by `undo`: ("set", container, key, old) | ("del", dict, key) |
        #: ("pop", list, index) | ("insert", list, index, value) | ("root", old root).
        self.log: list[tuple[Any, ...]] = []
        #: (id(object), member) -> object: members removed, deleted at `commit`.
        self.removed: dict[tuple[int, str], dict[str, Any]] = {}
        #: id(object) -> how many of its members are marked removed.
        self.marked: dict[int, int] = {}
        #: Values the patch may still copy or walk.
        self.allowance = allowance
        #: The members added to an object, in order, and whether one of them had been removed in the patch:
        #: `commit` then puts them last in that order, as removing and adding them would have.
        self.appended: list[tuple[dict[str, Any], str]] = []
        self.readded = False

    # -- reading ----------------------------------------------------------------------

    def _has(self, node: dict[str, Any], token: str) -> bool:
        return token in node and not (self.removed and (id(node), token) in self.removed)

    def _get(self, tokens: list[str]) -> Any:
        node = self.root
        for token in tokens:
            if type(node) is dict:
                if not self._has(node, token):
                    raise PatchError(f"no member {token[:40]!r}")
                node = node[token]
            elif type(node) is list:
                node = node[_index(node, token, end_ok=False)]
            else:
                raise PatchError(f"{token[:40]!r} is inside a scalar")
        return node

    def _equal(self, held: Any, value: Any) -> bool:
        """`held` (in the state) equals `value`, the members marked removed not counted; in the time
        `value` takes to walk, however large `held` is."""
        if not self.removed:
            return bool(held == value)
        if type(held) is dict:
            if type(value) is not dict or len(held) - self.marked.get(id(held), 0) != len(value):
                return False
            return all(self._has(held, key) and self._equal(held[key], child) for key, child in value.items())
        if type(held) is list:
            return type(value) is list and len(held) == len(value) and all(map(self._equal, held, value))
        return bool(held == value)

    # -- changing -----------------------------------------------------------------------

    def _mark(self, parent: dict[str, Any], token: str, removed: bool) -> None:
        key = (id(parent), token)
        if removed:
            self.removed[key] = parent
            self.marked[id(parent)] = self.marked.get(id(parent), 0) + 1
        elif self.removed.pop(key, None) is not None:
            self.marked[id(parent)] -= 1

    def _place(self, tokens: list[str], value: Any, height: int, *, replace: bool) -> None:
        """add (or replace) `value`, of nesting `height`, at `tokens`."""
        if len(tokens) + height > MAX_STATE_DEPTH:
            raise PatchLimitError(f"the state would nest {len(tokens) + height} levels deep, past {MAX_STATE_DEPTH}")
        if not tokens:
            self.log.append(("root", self.root))
            self.root = value
            return
        parent, token = self._get(tokens[:-1]), tokens[-1]
        if type(parent) is dict:
            if self._has(parent, token):
                self.log.append(("set", parent, token, parent[token]))  # in its place among its siblings
            elif replace:
                raise PatchError(f"no member {token[:40]!r}")
            elif token in parent:
                # Removed earlier in the patch, now added again: a member once more, which goes last (as a
                # remove and an add do) when the patch commits; until then it keeps its place, so undoing
                # the patch moves nothing.
                self._mark(parent, token, False)
                self.log.append(("set", parent, token, parent[token]))
                self.readded = True
                self.appended.append((parent, token))
            else:
                self.log.append(("del", parent, token))
                self.appended.append((parent, token))
            parent[token] = value
        elif type(parent) is list:
            index = _index(parent, token, end_ok=not replace)
            if replace:
                self.log.append(("set", parent, index, parent[index]))
                parent[index] = value
            else:
                parent.insert(index, value)
                self.log.append(("pop", parent, index))
        else:
            raise PatchError(f"{token[:40]!r} is inside a scalar")

    def _remove(self, tokens: list[str]) -> Any:
        """remove the value at `tokens`, and return it."""
        if not tokens:
            self.log.append(("root", self.root))
            value, self.root = self.root, None
            return value
        parent, token = self._get(tokens[:-1]), tokens[-1]
        if type(parent) is dict:
            if not self._has(parent, token):
                raise PatchError(f"no member {token[:40]!r}")
            self._mark(parent, token, True)
            return parent[token]
        if type(parent) is list:
            index = _index(parent, token, end_ok=False)
            value = parent.pop(index)
            self.log.append(("insert", parent, index, value))
            return value
        raise PatchError(f"{token[:40]!r} is inside a scalar")

    def apply(self, operation: object) -> None:
        if type(operation) is not dict:
            raise PatchError("an operation must be an object")
        op = operation.get("op")
        tokens = _tokens(operation.get("path"))
        if op in ("add", "replace", "test") and "value" not in operation:
            raise PatchError("`value` is missing")
        if op == "add" or op == "replace":
            value = operation["value"]  # the payload's own: adopted (see the module's docstring)
            self._place(tokens, value, _measure(value)[1], replace=op == "replace")
        elif op == "remove":
            self._remove(tokens)
        elif op == "move":
            source = _tokens(operation.get("from"), "from")
            if len(tokens) > len(source) and tokens[:len(source)] == source:
                raise PatchError("a value cannot move into itself")
            held = self._get(source)
            # Moved no deeper, it nests no deeper than it did; moved deeper, it is walked (and paid for).
            height = 0
            if len(tokens) > len(source):
                walked, height = self._paid(lambda: _measure(held, self.allowance))
                self.allowance -= walked
            value = self._remove(source)
            self._place(tokens, value, height, replace=False)
        elif op == "copy":
            held = self._get(_tokens(operation.get("from"), "from"))
            value, height, copied = self._paid(lambda: _clone(held, self.removed, self.allowance))
            self.allowance -= copied
            self._place(tokens, value, height, replace=False)
        elif op == "test":
            if not self._equal(self._get(tokens), operation["value"]):
                raise PatchError("the value differs")
        else:
            raise PatchError(f"unknown op {str(op)[:40]!r}")

    def _paid(self, walk: Callable[[], _T]) -> _T:
        """`walk()`, bounded by the allowance; when it goes past it, the allowance is spent."""
        try:
            return walk()
        except PatchLimitError:
            self.allowance = 0
            raise

    def undo(self) -> None:
        """Put the state back as it was before the patch."""
        for entry in reversed(self.log):
            kind = entry[0]
            if kind == "set":
                entry[1][entry[2]] = entry[3]
            elif kind == "del":
                del entry[1][entry[2]]
            elif kind == "pop":
                entry[1].pop(entry[2])
            elif kind == "insert":
                entry[1].insert(entry[2], entry[3])
            else:
                self.root = entry[1]
        self._forget()

    def commit(self) -> None:
        """Every operation applied: delete the members marked removed (and put the members added again
        last, in the order they were added)."""
        for (_, token), parent in self.removed.items():
            del parent[token]
        if self.readded:
            for parent, token in self.appended:
                if token in parent:
                    parent[token] = parent.pop(token)
        self._forget()

    def _forget(self) -> None:
        self.log.clear()
        self.removed.clear()
        self.marked.clear()
        self.appended.clear()
        self.readded = False
