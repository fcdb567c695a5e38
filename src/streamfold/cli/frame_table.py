"""`streamfold frames`' table, printed as the frames fold: one line per row, written
as each slice of the capture settles its frames, so the first rows of a 100k-frame
capture show at once and no row is kept once printed.

The columns are sized before the first row: the index, line and offset columns
for the largest values the capture can hold (`services.rows.RowBounds`), the
event column for the first rows' events (at most 24 characters; longer ones end
in "…"). The summary takes the rest of the terminal's width and ends in "…" when
it is longer. A `whole` table (off a terminal, or `frames --wide`) cuts nothing:
each event and summary is written whole, however long. Lines have no trailing
spaces.

Stream content is untrusted: control characters (and bidirectional-text controls)
in an event or summary are shown as escapes (`\\x1b`, `\\n`, `\\u202e`), never
written to the terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from rich.cells import cell_len, set_cell_size
from rich.color import ColorSystem
from rich.console import Console
from rich.style import Style

from ..findings import BINARY_TRANSPORTS
from ..services.rows import RowBounds

__all__ = ["FrameTable", "plain"]

_KIND_STYLE = {"invalid": "bold red", "glued": "yellow", "comment": "dim", "done": "green", "empty": "yellow"}
_EVENT_CAP = 24
# "invalid (cut)": the longest kind, with the mark of a frame the stream ended inside.
_KIND_WIDTH = 13
_MIN_SUMMARY = 20
_GAP = "  "

_ESCAPES = {code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_ESCAPES.update({0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"})
_ESCAPES.update({code: f"\\u{code:04x}" for code in (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))})


def plain(text: str) -> str:
    """`text` with its control characters as escapes (a no-op, and fast, for printable ASCII)."""
    if text.isascii() and text.isprintable():
        return text
    return text.translate(_ESCAPES)


def _fit(text: str, width: int) -> str:
    """`text` in at most `width` terminal cells, ending in "…" when it had to be cut."""
    if len(text) <= width and (text.isascii() or cell_len(text) <= width):
        return text
    return set_cell_size(text, width - 1) + "…"


class FrameTable:
    """Prints rows as they come (`add(rows, bounds)`), the header before the first."""

    def __init__(self, console: Console, out: TextIO | None = None, *, whole: bool = False) -> None:
        self.width = console.width
        self.whole = whole
        self.out = out if out is not None else sys.stdout
        self._colour = console.color_system is not None and not console.no_color
        self._widths: tuple[int, ...] | None = None

    def _style(self, name: str) -> Callable[[str], str]:
        if not self._colour or not name:
            return lambda text: text
        start, _, stop = Style.parse(name).render("\0", color_system=ColorSystem.STANDARD).partition("\0")
        return lambda text: f"{start}{text}{stop}" if text else text

    def add(self, rows: list[dict[str, Any]], bounds: RowBounds) -> None:
        if self._widths is None:
            self._start(rows, bounds)
        self._write([self._row(row) for row in rows])

    def _start(self, rows: list[dict[str, Any]], bounds: RowBounds) -> None:
        lines = bounds.transport not in BINARY_TRANSPORTS  # a binary stream has no lines
        event = max([len("event"), *(cell_len(plain(row["event"] or "")) for row in rows)])
        event = event if self.whole else min(_EVENT_CAP, event)
        numbers = (len(str(max(bounds.index - 1, 0))), len(str(bounds.line)), len(str(bounds.offset)))
        index, line, offset = (max(len(header), width) for header, width in zip(("#", "line", "offset"), numbers))
        self._widths = (index, line, offset, event)
        dim, self._issue = self._style("dim"), self._style("yellow")
        self._kinds = {kind: self._style(_KIND_STYLE.get(kind, ""))(kind) + " " * (_KIND_WIDTH - len(kind))
                       for kind in (*_KIND_STYLE, "json")}
        fixed = index + (len(_GAP) + line if lines else 0) + len(_GAP) + offset + len(_GAP) + event
        self._summary = max(_MIN_SUMMARY, self.width - fixed - len(_GAP) - _KIND_WIDTH - len(_GAP))
        # Where a row goes: "{index}  {line}  {offset}  " with the line and offset dim.
        place = [f"{{0:>{index}}}", *([dim(f"{{1:>{line}}}")] if lines else []), dim(f"{{2:>{offset}}}")]
        self._place = _GAP.join(place) + _GAP
        header = _GAP.join([f"{'#':>{index}}", *([f"{'line':>{line}}"] if lines else []), f"{'offset':>{offset}}",
                            f"{'event':<{event}}", f"{'kind':<{_KIND_WIDTH}}", "summary"])
        self._write([self._style("bold dim")(header)])

    def _row(self, row: dict[str, Any]) -> str:
        width = self._widths[3]  # type: ignore[index]
        event = row["event"] or ""
        if not (event.isascii() and event.isprintable() and len(event) <= width):
            event = plain(event)
            if cell_len(event) <= width:
                event = set_cell_size(event, width)
            elif not self.whole:
                event = _fit(event, width)
        kind = self._kinds.get(row["kind"]) if row["terminated"] else None
        if kind is None:
            name = row["kind"] + ("" if row["terminated"] else " (cut)")
            kind = self._style(_KIND_STYLE.get(row["kind"], ""))(name) + " " * (_KIND_WIDTH - len(name))
        summary = plain(row["summary"])
        fit = (lambda text: text) if self.whole else (lambda text: _fit(text, self._summary))
        if row["issues"]:
            issues = ", ".join(row["issues"]) + " "
            summary = fit(issues + summary)
            cut = min(len(issues), len(summary))
            summary = self._issue(summary[:cut]) + summary[cut:]
        else:
            summary = fit(summary)
        return (self._place.format(row["index"], row["line"], row["offset"])
                + f"{event:<{width}}{_GAP}{kind}{_GAP}{summary}").rstrip()

    def _write(self, lines: list[str]) -> None:
        text = "\n".join(lines) + "\n"
        try:
            self.out.write(text)
        except UnicodeEncodeError:  # a lone surrogate from the stream: shown as a replacement character
            self.out.write(text.encode("utf-8", "replace").decode("utf-8"))
        self.out.flush()
