"""What of an AG-UI run has started and not ended (messages, tool calls, reasoning, steps), each by its
kind and id, and the `@ag-ui/client` verifier's two ordering findings: an event for something that
never started (folded, as a lenient client does: it starts it) and one after its end (not folded)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...findings import Report

__all__ = ["Lifecycle"]


class Lifecycle:
    """Open and ended things, keyed by (kind, id): "text message", "tool call", "step", ..."""

    def __init__(self, report: Report) -> None:
        self.report = report
        #: What started and has not ended -> the frame it started at.
        self.open: dict[tuple[str, str], int] = {}
        #: kind -> the ids of what ended (a set per kind, not a tuple per thing: a run may end many thousands).
        self.closed: dict[str, set[str]] = {}

    def ended(self, what: str, ident: str) -> bool:
        return ident in self.closed.get(what, ())

    def start(self, what: str, ident: str, frame: int) -> None:
        """`what` `ident` starts (again, if it had ended)."""
        self.open[(what, ident)] = frame
        self.closed.get(what, set()).discard(ident)

    def ongoing(self, what: str, ident: str, frame: int, kind: str) -> bool:
        """Is `what` open for an event of `kind`? Reports it when it is not: after its end, False (not
        folded); never started, True (it is started here)."""
        if (what, ident) in self.open:
            return True
        if self.ended(what, ident):
            self.report.diagnostic(
                "event-after-end", frame, f"frame {frame} ({kind}) for {what} {ident!r} comes after its end: the "
                "verifier rejects it, and a client that appends it corrupts what was complete; not folded",
                once=("after", what, ident))
            return False
        self.report.diagnostic(
            "event-before-start", frame, f"frame {frame} ({kind}) is for {what} {ident!r}, which never started: "
            "the verifier rejects it; folded as if it had started", once=("before", what, ident))
        self.start(what, ident, frame)
        return True

    def end(self, what: str, ident: str, frame: int, kind: str) -> bool:
        """`what` `ident` ends; False when it had ended already (reported)."""
        if not self.ongoing(what, ident, frame, kind):
            return False
        del self.open[(what, ident)]
        self.closed.setdefault(what, set()).add(ident)
        return True
