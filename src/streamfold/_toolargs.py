"""PARSE-AT-END for tool-call arguments, with the recovery of trap O8.

Arguments are appended raw while streaming and parsed once. An empty or
all-whitespace buffer is `{}` (trap A2). When the join does not parse, the
cause is often a provider re-sending what it already sent (DeepSeek and
Qianfan send cumulative arguments, gateways repeat the whole arguments in a
final chunk: NousResearch/hermes-agent#35718, elizaOS/eliza#16973). Recovery,
in order: (1) the join is K identical copies of one document: take one;
(2) every fragment extends the previous one (cumulative): take the last;
(3) take the first complete document. The raw join is always kept, and the
fix applied is named so the report can say so; nothing is silently `{}`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ._json import iter_documents, loads

__all__ = ["ParsedArguments", "parse_arguments"]


@dataclass(frozen=True, slots=True)
class ParsedArguments:
    value: Any
    #: The decoder's message when nothing could be parsed (value is then None).
    error: str | None = None
    #: Character position of the error in the joined arguments.
    position: int | None = None
    #: "identical-copies", "cumulative" or "first-document" when recovered.
    recovery: str | None = None
    #: How many documents the join held when recovered.
    copies: int = 1

    @property
    def clean(self) -> bool:
        """Parsed as sent: nothing to report."""
        return self.error is None and self.recovery is None


Fragments = Sequence[tuple[str, int]] | Callable[[], Sequence[tuple[str, int]]]


def parse_arguments(joined: str, fragments: Fragments) -> ParsedArguments:
    """Parse the joined arguments; `fragments`, (piece, frame) in arrival order or a function
    giving them, are only read when the join does not parse."""
    if not joined.strip():
        return ParsedArguments({})
    try:
        return ParsedArguments(loads(joined))
    except ValueError as exc:
        failure = exc
    scan = _Scan(joined)
    if scan.count > 1 and scan.identical:
        return ParsedArguments(scan.first, recovery="identical-copies", copies=scan.count)
    pieces = [piece for piece, _ in (fragments() if callable(fragments) else fragments) if piece.strip()]
    if len(pieces) > 1 and all(b.startswith(a) for a, b in itertools.pairwise(pieces)):
        try:
            return ParsedArguments(loads(pieces[-1]), recovery="cumulative", copies=len(pieces))
        except ValueError:
            pass
    if scan.count:
        if scan.count > 1 and scan.extends:
            return ParsedArguments(scan.last, recovery="cumulative", copies=scan.count)
        return ParsedArguments(scan.first, recovery="first-document", copies=scan.count)
    if isinstance(failure, json.JSONDecodeError):
        return ParsedArguments(None, failure.msg, failure.pos)
    return ParsedArguments(None, str(failure), None)  # pragma: no cover - json raises JSONDecodeError


class _Scan:
    """What the recovery asks of the documents back to back in the join (trailing garbage after
    them is no matter), read in one pass that holds only the first and the last: a join of 100k
    `{}` is not 100k values in memory at once."""

    __slots__ = ("count", "extends", "first", "identical", "last")

    def __init__(self, joined: str) -> None:
        self.count = 0
        self.first: Any = None
        self.last: Any = None
        #: Every document's text is the first one's (K copies of one document).
        self.identical = True
        #: Every document's text extends the previous one's (a chain of snapshots).
        self.extends = True
        first_text = previous = ""
        for value, start, stop in iter_documents(joined):
            text = joined[start:stop]
            if self.count == 0:
                self.first, first_text = value, text
            else:
                self.identical = self.identical and text == first_text
                self.extends = self.extends and text.startswith(previous[:-1])
            self.last, previous = value, text
            self.count += 1
