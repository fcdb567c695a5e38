"""How much of a long reply `show` prints: a text field (the reply, the reasoning, the
refusal, a tool call's arguments) longer than `HEAD + TAIL` characters is shown as its
first `HEAD` and last `TAIL` characters with a dim line between them that says how many
were left out; `show --full` prints it all. A terminal takes ~100 s to lay out the
15 million characters of a 500 MB capture's reply, and nobody reads them there:
`show --json` and `export` (the contracts) always carry everything.
"""

from __future__ import annotations

from rich.text import Text

__all__ = ["HEAD", "TAIL", "clip", "clipped_runs"]

#: Characters shown from the start of a long field (about 250 lines of 80).
HEAD = 20_000
#: Characters shown from its end (where a reply says how it ended).
TAIL = 5_000


def clip(text: str, full: bool, style: str = "") -> Text:
    """`text` as a Text: all of it with `full` or when short, else its head, a marker line, its tail."""
    if full or len(text) <= HEAD + TAIL:
        return Text(text, style=style)
    shown = Text(text[:HEAD], style=style)
    shown.append(marker(len(text) - HEAD - TAIL))
    shown.append(text[-TAIL:], style=style)
    return shown


def marker(hidden: int) -> Text:
    """The line that stands for `hidden` characters left out."""
    return Text(f"\n… {hidden:,} characters not shown (--full prints all)\n", style="dim")


def clipped_runs(length: int, full: bool) -> list[tuple[int, int]]:
    """The [start, end) ranges of a field of `length` characters that are shown."""
    if full or length <= HEAD + TAIL:
        return [(0, length)]
    return [(0, HEAD), (length - TAIL, length)]
