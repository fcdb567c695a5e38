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

from ._json import documents, loads

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
    documents = _documents(joined)
    if documents is not None and len(documents) > 1:
        texts = [joined[start:stop] for _, start, stop in documents]
        if all(text == texts[0] for text in texts):
            return ParsedArguments(documents[0][0], recovery="identical-copies", copies=len(documents))
    pieces = [piece for piece, _ in (fragments() if callable(fragments) else fragments) if piece.strip()]
    if len(pieces) > 1 and all(b.startswith(a) for a, b in itertools.pairwise(pieces)):
        try:
            return ParsedArguments(loads(pieces[-1]), recovery="cumulative", copies=len(pieces))
        except ValueError:
            pass
    if documents:
        if len(documents) > 1 and _extends(documents, joined):
            return ParsedArguments(documents[-1][0], recovery="cumulative", copies=len(documents))
        return ParsedArguments(documents[0][0], recovery="first-document", copies=len(documents))
    if isinstance(failure, json.JSONDecodeError):
        return ParsedArguments(None, failure.msg, failure.pos)
    return ParsedArguments(None, str(failure), None)  # pragma: no cover - json raises JSONDecodeError


def _documents(joined: str) -> list[tuple[Any, int, int]] | None:
    """All documents back to back in `joined` as (value, start, stop), or None: trailing garbage
    after at least one document still leaves them usable for (3)."""
    found, whole = documents(joined)
    return found if whole or found else None


def _extends(documents: list[tuple[Any, int, int]], joined: str) -> bool:
    """Each document's text extends the previous one's (a chain of snapshots)."""
    texts = [joined[start:stop] for _, start, stop in documents]
    return all(b.startswith(a[:-1]) for a, b in itertools.pairwise(texts))
