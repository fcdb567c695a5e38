"""The columns of `exchanges` as readers read them: each with the SQLite types
it may hold, checked by SQLite itself in the same query that reads it (a
`CASE` naming the first column that holds something else), so a damaged value
(text where a time belongs, a number where a body belongs) is a `StoreError`
naming the file and the capture, never a `TypeError` from deep inside a front,
and checking 100k rows costs no Python loop.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .schema import StoreError

__all__ = ["DamagedCaptureError", "checked_select", "damage_of", "findings_of", "pairs_of"]

_INTEGER, _REAL, _TEXT, _BLOB = ("integer",), ("integer", "real"), ("text",), ("blob",)

#: Each column a reader reads, the storage classes (`typeof`) it may hold, and whether it may be NULL.
_TYPES: Mapping[str, tuple[tuple[str, ...], bool]] = {
    "id": (_INTEGER, False), "started_at": (_REAL, False), "method": (_TEXT, False), "url": (_TEXT, False),
    "request_headers": (_TEXT, False), "request_body": (_BLOB, False), "redacted": (_INTEGER, False),
    "status": (_INTEGER, True), "response_headers": (_TEXT, True), "response_at": (_REAL, True),
    "outcome": (_TEXT, True), "error": (_TEXT, True), "ended_at": (_REAL, True), "body_bytes": (_INTEGER, True),
    "read_count": (_INTEGER, True), "transport": (_TEXT, True), "dialect": (_TEXT, True),
    "complete": (_INTEGER, True), "ttft": (_REAL, True), "duration": (_REAL, True), "frames": (_INTEGER, True),
    "finish_reason": (_TEXT, True), "findings": (_TEXT, True), "host": (_TEXT, True),
    "request_model": (_TEXT, True), "model": (_TEXT, True), "response_id": (_TEXT, True),
    "outcome_class": (_TEXT, True), "ttfb": (_REAL, True), "summarized_by": (_TEXT, True),
}


class DamagedCaptureError(StoreError):
    """One stored capture cannot be read (its row or its reads are damaged); the others may still be."""

    def __init__(self, path: str, exchange_id: int, what: str) -> None:
        super().__init__(f"the capture store {path!r} is damaged: {what}")
        self.exchange_id = exchange_id


def checked_select(columns: Sequence[str], expressions: Mapping[str, str] | None = None) -> str:
    """The select list for `columns` (each read as `expressions[name]` when given, e.g. a COALESCE), and
    last, the name of the first column whose value has a type it may not hold (NULL when none has)."""
    expressions = expressions or {}
    checks = []
    for name in columns:
        classes, nullable = _TYPES[name]
        allowed = ", ".join(f"'{kind}'" for kind in (*classes, *(("null",) if nullable else ())))
        checks.append(f"WHEN typeof({expressions.get(name, name)}) NOT IN ({allowed}) THEN '{name}'")
    return ", ".join(expressions.get(name, name) for name in columns) + f", CASE {' '.join(checks)} END"


def damage_of(path: str, row: Sequence[Any]) -> None:
    """Raise `DamagedCaptureError` when the row read with `checked_select` (its id first) holds a value of the
    wrong type."""
    if row[-1] is not None:
        raise DamagedCaptureError(
            path, row[0], f"capture #{row[0]} holds a value of the wrong type in its column {row[-1]!r}")


def pairs_of(path: str, exchange_id: int, name: str, text: str | None) -> tuple[tuple[str, str], ...]:
    """The header pairs a JSON column holds."""
    if not text:
        return ()
    try:
        pairs = json.loads(text)
        return tuple((str(key), str(value)) for key, value in pairs)
    except (ValueError, TypeError, RecursionError):  # not JSON, or not a list of pairs
        raise DamagedCaptureError(
            path, exchange_id, f"capture #{exchange_id} has {name} that are not a JSON list of [name, value] pairs"
        ) from None


def findings_of(path: str, exchange_id: int, text: str | None) -> list[str] | None:
    """The finding codes of the summary's `findings` column, None when it has no summary."""
    if text is None:
        return None
    try:
        codes = json.loads(text)
    except (ValueError, RecursionError):
        codes = None
    if not isinstance(codes, list) or not all(isinstance(code, str) for code in codes):
        raise DamagedCaptureError(
            path, exchange_id, f"capture #{exchange_id} has findings that are not a JSON list of codes")
    return codes
