"""How a stream ended, as one word a fleet can group by: the outcome class.

    outcome_class(result, recorded="client-cut")   # -> "client-cut"

The recording knows what the network did (the client closed, the upstream
failed); the fold knows what the stream said (a terminal frame, an error
event, arguments that do not parse, the length limit). The class puts the
two together, the first that applies in the order of `OUTCOME_CLASSES`:
what went worst is what a person asking "how did it end?" wants to hear.
"""

from __future__ import annotations

from collections.abc import Mapping

from .result import Result

__all__ = ["OUTCOME_CLASSES", "outcome_class"]

#: Each class, worst first, and what it means (docs/tables.md shows this table).
OUTCOME_CLASSES: Mapping[str, str] = {
    "unreadable": "The capture could not be read or folded; `read_error` says why.",
    "not-a-stream": "The body is no stream: an HTML page, binary bytes or an error reply (nothing was folded).",
    "client-cut": "The client closed the stream before its end (as the recording saw it).",
    "errored": "The server answered with an error: an HTTP status of 400 or more, an error event in the stream, "
               "or the recording's request failed.",
    "upstream-cut": "The stream stopped before its end (no terminal frame, or nothing at all) and the client did "
                    "not cut it.",
    "damaged": "It ended, but frames were lost on the way: a frame did not decode or the framing broke "
               "(an error finding).",
    "arguments-invalid": "It ended cleanly, but a tool call's arguments are not valid JSON.",
    "short": "Clean, but the reply stopped at the length limit (finish reason `length`).",
    "complete": "The reply ended as its dialect ends one, with nothing wrong found.",
}

#: Codes of the notes that say the body was not folded as a stream (`services._wrong_input`).
_NOT_A_STREAM = frozenset({"html-page", "not-text"})
_NO_CODES: frozenset[str] = frozenset()


def outcome_class(result: Result, *, recorded: str | None = None, status: int | None = None) -> str:
    """The class of `OUTCOME_CLASSES` for a folded capture. `recorded`: how the recording says the exchange
    ended (the store's `complete`, `client-cut`, `upstream-cut`, `failed`), `status`: its HTTP status."""
    # Each test asked only when there is something to test (a fleet asks this of millions of clean replies).
    codes = {diagnostic.code for diagnostic in result.diagnostics} if result.diagnostics else _NO_CODES
    if codes & _NOT_A_STREAM:
        return "not-a-stream"
    if recorded == "client-cut":
        return "client-cut"
    if (recorded == "failed" or (status is not None and status >= 400) or "error-response" in codes
            or (result.errors and any(error.code == "in-stream-error" for error in result.errors))):
        return "errored"
    if not result.complete:
        return "upstream-cut"
    if result.errors:
        return "damaged"
    short = False
    for choice in result.choices:
        for call in choice.tool_calls:
            if call.error is not None:
                return "arguments-invalid"
        short = short or choice.finish_reason == "length"
    return "short" if short else "complete"
