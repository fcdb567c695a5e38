"""What an SSE block collects line by line, kept without an object per line: a block of a
million `data:` or comment lines, or of a million lines with an issue, is one frame, and an
object per line (50 bytes and more) would cost many times the bytes it came from.

Lines of text are joined in groups as they come (`join_tail`: every `GROUP` lines become one
string); a record holds many comments as one string, split again when a `Frame` is made
(`comments_of`); `CappedIssues` keeps the first `MAX_LISTED_ISSUES` issues of each code and
counts the rest in one more issue of that code.
"""

from __future__ import annotations

from typing import AnyStr

from .frame import MAX_LISTED_ISSUES, FrameIssue

__all__ = ["GROUP", "CappedIssues", "comments_for_record", "comments_of", "join_tail"]

#: Lines collected before they are joined into one group (an object per line lives this long at most).
GROUP = 1024
# More comments than this in a block are held in its record as one string (see `comments_of`).
_LOOSE_COMMENTS = 64


def join_tail(lines: list[AnyStr], groups: int, separator: AnyStr) -> int:
    """Join the lines after the first `groups` items of `lines` (each a group of lines joined already)
    into one more group; returns the new count of groups. `separator.join(lines)` stays the same."""
    lines[groups:] = [separator.join(lines[groups:])]
    return groups + 1


def comments_for_record(comments: list[str], groups: int) -> tuple[str, ...] | str:
    """A block's comments (as `join_tail` keeps them) as a record's comments slot holds them: a tuple
    when they are few, else joined (a comment holds no LF, so `comments_of` splits them back exactly)."""
    if not groups and len(comments) <= _LOOSE_COMMENTS:
        return tuple(comments)
    return "\n".join(comments)


def comments_of(slot: tuple[str, ...] | str) -> tuple[str, ...]:
    """A record's comments slot as the `Frame.comments` tuple."""
    return tuple(slot.split("\n")) if isinstance(slot, str) else slot


class CappedIssues:
    """A frame's issues in order, up to `MAX_LISTED_ISSUES` of each code; past that, each further one
    of the code is counted, and `listed()` ends with one issue per such code, at the first one not
    listed, saying how many there were."""

    __slots__ = ("_counts", "_more", "kept")

    def __init__(self) -> None:
        self.kept: list[FrameIssue] = []
        self._counts: dict[str, int] = {}
        #: code -> (the first issue not listed, how many were not listed)
        self._more: dict[str, tuple[FrameIssue, int]] = {}

    def __bool__(self) -> bool:
        return bool(self.kept)

    def add(self, issue: FrameIssue) -> None:
        count = self._counts.get(issue.code, 0)
        if count < MAX_LISTED_ISSUES:
            self._counts[issue.code] = count + 1
            self.kept.append(issue)
            return
        first, more = self._more.get(issue.code, (issue, 0))
        self._more[issue.code] = (first, more + 1)

    def extend(self, issues: tuple[FrameIssue, ...]) -> None:
        for issue in issues:
            self.add(issue)

    def listed(self) -> tuple[FrameIssue, ...]:
        summaries = [FrameIssue(code, first.offset, first.line,
                                f"{more} more `{code}` issues in this frame from line {first.line} on (byte "
                                f"{first.offset}), counted, not listed: at most {MAX_LISTED_ISSUES} of one code "
                                "are listed per frame; the first of them: " + first.message, first.text)
                     for code, (first, more) in self._more.items()]
        return (*self.kept, *summaries)
