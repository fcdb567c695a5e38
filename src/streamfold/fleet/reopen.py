"""A fleet's capture opened again from where its `captures` row says it came from.

    reopened = reopen(row)          # row: a `captures` row's source, location, entry, fingerprint
    reopened.capture                # the `Capture` the fold read, read afresh
    reopened.data                   # a file's own bytes (the page shows a log's lines), else None

The row is the fleet's own: nothing here takes a path from anyone else. Each input
kind is read again by the function `fleet fold` read it with (`sources.expand`
for the file and its fingerprint, `records` for a JSONL line or a Parquet row,
`batch` for the capture a record or a stored exchange makes), so a capture
reopens as it was folded. A location that is gone, or whose bytes changed since
the fold (its fingerprint differs), is a `ReopenError` saying so: the row would
describe other bytes than the ones shown.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..services.capture import Capture, InputError
from ..services.inputs import read_capture
from ..store import StoreError, get_exchange
from .batch import body_capture
from .records import Done, jsonl_records, parquet_records, stored_fingerprint
from .sources import Input, expand, told
from .text import path_of

__all__ = ["ReopenError", "Reopened", "reopen"]


class ReopenError(InputError):
    """The capture cannot be opened again, and why: `gone` (its location is no longer there), `changed`
    (its bytes differ from the ones folded), `unreadable` (it cannot be read, or names no capture)."""

    def __init__(self, message: str, *, why: Literal["gone", "changed", "unreadable"] = "unreadable") -> None:
        super().__init__(message)
        self.why = why


@dataclass(frozen=True, slots=True)
class Reopened:
    capture: Capture
    #: The file's own bytes when the capture is a file (or an entry of one), for the page's file view.
    data: bytes | None = None


def reopen(row: Mapping[str, Any], *, entry: str | None = None, max_size: int | None = None) -> Reopened:
    """The capture of `row` (a `captures` row: `capture_id`, `source`, `location`, `entry`, `fingerprint`),
    read again. `entry`: another entry of the same file (a HAR's, a cassette's) instead of the row's;
    `max_size`: the largest body inflated. Raises `ReopenError`."""
    location = row.get("location")
    if not location:
        raise ReopenError(f"the fleet does not say where capture {row.get('capture_id')!r} came from")
    location = path_of(location)
    if row.get("source") == "store":
        return Reopened(_stored(location, row.get("fingerprint"), max_size))
    item = _input(location)
    if row.get("source") == "records":
        return Reopened(body_capture(_record(item, row)))
    _check(item, row.get("fingerprint"))
    try:
        data = item.read()
    except OSError as exc:
        raise ReopenError(f"{location} cannot be read: {exc.strerror or exc}") from None
    # Another entry may have no stream: the reader's own sentence says so.
    return Reopened(read_capture(data, entry=entry or row.get("entry"), max_inflated=max_size), data)


def _input(location: str) -> Input:
    inputs, failures = expand([location])
    if failures or len(inputs) != 1 or inputs[0].key not in (location, location.removeprefix("file://")):
        reason = failures[0].reason if failures else "it is no longer one file"
        gone = bool(failures) and "no such file" in reason
        raise ReopenError(f"{location} cannot be opened again: {reason}"
                          f"{' (moved or deleted since the fleet was folded)' if gone else ''}",
                          why="gone" if gone else "unreadable")
    try:
        return told(inputs[0])
    except OSError as exc:
        raise ReopenError(f"{location} cannot be opened again: {exc.strerror or exc}", why="unreadable") from None


def _check(item: Input, fingerprint: str | None) -> None:
    if fingerprint is not None and item.fingerprint != fingerprint:
        raise ReopenError(f"{item.key} changed since the fleet was folded (then {fingerprint}, now "
                          f"{item.fingerprint}): what it holds now is not what the fleet's rows say; fold it again "
                          f"with streamfold fleet fold {shlex.quote(item.key)} --out DIR", why="changed")


def _record(item: Input, row: Mapping[str, Any]) -> dict[str, Any]:
    """The JSONL line or Parquet row `row` came from, as `fleet fold` read it."""
    entry, fingerprint = row.get("entry"), row.get("fingerprint")
    opener, read = item.open, parquet_records
    if item.kind != "parquet":
        read = jsonl_records
        if entry is not None and entry.isdigit():
            opener = lambda: _only_line(item.open(), int(entry))
    try:
        record = next((found for found in read(item.key, opener, Done({}), item.fingerprint)
                       if found["entry"] == entry), None)
    except (OSError, ValueError) as exc:
        raise ReopenError(f"{item.key} cannot be read again: {exc}") from None
    if record is None or (fingerprint is not None and record["fingerprint"] != fingerprint):
        noun = "row" if item.kind == "parquet" else "line"
        raise ReopenError(f"{item.key} changed since the fleet was folded: its {noun} {entry} is not the record "
                          f"the fleet's rows describe; fold it again with streamfold fleet fold "
                          f"{shlex.quote(item.key)} --out DIR", why="changed")
    if record["data"] is None:
        raise ReopenError(f"{item.key} record {entry} has no body: {record['read_error']}")
    return record


@contextlib.contextmanager
def _only_line(handle: Any, number: int) -> Iterator[Iterator[bytes]]:
    """`handle`'s lines with every one but line `number` blank: `jsonl_records` numbers the lines as they
    come and skips blank ones, so it reads that one record without parsing the others."""
    with handle:
        yield (line if at == number else b"" for at, line in enumerate(itertools.islice(handle, number), 1))


def _stored(location: str, fingerprint: str | None, max_size: int | None) -> Capture:
    path, _, number = location.rpartition("#")
    if not (path and number.isascii() and number.isdigit()):
        raise ReopenError(f"{location!r} names no stored capture (PATH#ID)")
    if not os.path.isfile(path):
        raise ReopenError(f"{location} cannot be opened again: its store {path} is gone (moved or deleted since "
                          "the fleet was folded)", why="gone")
    try:
        exchange = get_exchange(path, int(number))
    except StoreError as exc:
        raise ReopenError(f"{location} cannot be opened again: {exc}") from None
    now = stored_fingerprint(exchange.ended_at, len(exchange.body))
    if fingerprint is not None and now != fingerprint:
        raise ReopenError(f"{location} changed since the fleet was folded (then {fingerprint}, now {now}); fold "
                          f"its store again with streamfold fleet fold {shlex.quote(path)} --out DIR", why="changed")
    return exchange.capture() if max_size is None else exchange.capture(max_size)
