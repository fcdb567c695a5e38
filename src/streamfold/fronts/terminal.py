"""What the commands that print share, whichever front they belong to (the command line's, the fleet's):
whether stdout is a terminal, and a stream's text made safe to print on one."""

from __future__ import annotations

import os
import sys

from rich.cells import cell_len, set_cell_size

__all__ = ["fit_width", "on_terminal", "plain"]


def on_terminal() -> bool:
    """Whether stdout is a terminal: off one (a pipe, a file), text is written whole, never wrapped or cut.
    TTY_COMPATIBLE=1 or 0 says it instead, as it does to rich (a recorder of terminal output, a test)."""
    said = os.environ.get("TTY_COMPATIBLE")
    return said == "1" if said in ("0", "1") else sys.stdout.isatty()


_ESCAPES = {code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_ESCAPES.update({0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"})
_ESCAPES.update({code: f"\\u{code:04x}" for code in (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))})


def plain(text: str) -> str:
    """`text` with its control characters (and the bidirectional overrides) as escapes: a stream's bytes
    are not the terminal's to obey. A no-op, and fast, for printable ASCII."""
    if text.isascii() and text.isprintable():
        return text
    return text.translate(_ESCAPES)


def fit_width(text: str, width: int) -> str:
    """`text` in at most `width` terminal cells, ending in "…" when it had to be cut."""
    if len(text) <= width and (text.isascii() or cell_len(text) <= width):
        return text
    return set_cell_size(text, width - 1) + "…"
