"""Rows copied from Chrome DevTools' EventStream tab (Network → the request →
EventStream, rows selected and copied): one event a line, its columns
separated by tabs: `type`, `data`, `time` (`message\\t{"id":…}\\t14:20:01.123`),
or with the `id` column first when it is shown; a header row (`Type Data
Time`, `Id Type Data Time`) may come first. What DevTools puts on the
clipboard is not documented; these are the forms read. Each row becomes an
SSE event (its `event:` the type unless it is `message`, the default) and
its time the event's arrival time."""

from __future__ import annotations

import re

from ..findings import Severity
from ._logs import Clock
from .capture import Capture, Note

__all__ = ["from_devtools", "looks_like_devtools"]

_TIME = re.compile(r"\A\d{1,2}:\d\d:\d\d(?:[.,]\d+)?\Z")
_HEADER = re.compile(r"\A(?:id\t)?type\tdata\ttime\Z", re.IGNORECASE)
_SAMPLE_ROWS = 8


def looks_like_devtools(body: bytes) -> bool:
    """Whether the first lines are EventStream rows: 3 or 4 tab-separated columns ending in a time of day."""
    if not _may_hold_rows(body):  # most inputs are told here, without decoding them
        return False
    lines = [line for line in body[:16384].decode("utf-8", "replace").lstrip("\ufeff").splitlines()
             if line.strip()][: _SAMPLE_ROWS + 1]
    if lines and _HEADER.match(lines[0].strip()):
        lines = lines[1:]
    return bool(lines) and all(_row(line) is not None for line in lines[:-1] or lines)


def _may_hold_rows(body: bytes) -> bool:
    """Whether the start has a tab: a row has two at least."""
    return b"\t" in body[:16384]


def _row(line: str) -> tuple[str | None, str, str, str] | None:
    """(id, type, data, time) of a row, or None when the line is not one."""
    cells = line.rstrip("\r\n").split("\t")
    if len(cells) < 3 or not _TIME.match(cells[-1].strip()):
        return None
    if len(cells) == 3:
        return None, cells[0].strip(), cells[1], cells[2].strip()
    if len(cells) == 4 and not cells[1].startswith(("{", "[")):
        return cells[0].strip(), cells[1].strip(), cells[2], cells[3].strip()
    # More tabs: they belong to the data (a type has none, an id is shown before it only with 4 columns).
    return None, cells[0].strip(), "\t".join(cells[1:-1]), cells[-1].strip()


def from_devtools(body: bytes) -> Capture:
    """The rows as an SSE body with their times as reads; a line that is not a row is left out and said."""
    clock = Clock()
    out = bytearray()
    reads: list[tuple[int, float]] = []
    skipped: list[int] = []
    rows = 0
    for number, line in enumerate(body.decode("utf-8", "replace").lstrip("\ufeff").splitlines(), 1):
        if not line.strip() or (rows == 0 and not skipped and _HEADER.match(line.strip())):
            continue
        row = _row(line)
        if row is None:
            skipped.append(number)
            continue
        rows += 1
        event_id, kind, data, stamp = row
        seconds = clock.read(stamp, number)
        if seconds is not None:
            reads.append((len(out), seconds))
        event = "".join((f"id: {event_id}\n" if event_id else "",
                         f"event: {kind}\n" if kind and kind != "message" else "",
                         *(f"data: {part}\n" for part in (data.split("\n") or [""])), "\n"))
        out += event.encode("utf-8")
    message = (f"Chrome DevTools EventStream rows: {rows} event(s) rebuilt as SSE, their times kept as arrival "
               "times (DevTools gives events that came in one read the same time); lines and byte offsets in the "
               "findings refer to the rebuilt stream")
    notes = [Note("input-devtools", message)]
    if skipped:
        shown = ", ".join(str(n) for n in skipped[:8]) + (", …" if len(skipped) > 8 else "")
        notes.append(Note("input-devtools", f"{len(skipped)} line(s) that are not EventStream rows (type, data, "
                                            f"time separated by tabs) were left out: line {shown}",
                          Severity.WARNING))
    notes.extend(clock.notes())
    return Capture(bytes(out), "devtools", reads=tuple(reads) or None, notes=tuple(notes))
