"""`assert_reply`: what a client under test built, held to streamfold's reference.

The reference is a `Result` with its frames (a fold of the bytes that were
served), so a failure names the frame responsible; `check_reply` finds the
divergences and their probable causes. What the client built may be an
SDK's final object (`ChatCompletion`, Anthropic `Message`, Responses
`Response`, google-genai `GenerateContentResponse`), its dict, or its text.
"""

from __future__ import annotations

import os
from typing import Any

from ..result import Result
from ..services.check import check_reply
from ..services.load import fold_capture, load
from ..store import parse_ref, read_stored

__all__ = ["ReplyMismatchError", "assert_reply", "reference"]


class ReplyMismatchError(AssertionError):
    """The client's reply differs from the reference. `divergences` holds each difference found."""

    def __init__(self, message: str, divergences: list[Any]) -> None:
        super().__init__(message)
        self.divergences = divergences


def reference(expected: Any) -> Result:
    """The reference Result: a Result as it is; the `result` of a served request's reference; else the fold
    of a capture's bytes, of the file at a path, or of a stored capture (`DB.sqlite#ID`). A Result read back
    from JSON has no frames, so a mismatch against it cannot name one."""
    if isinstance(expected, Result):
        return expected
    held = getattr(expected, "result", None)
    if isinstance(held, Result):
        return held
    if isinstance(expected, (bytes, bytearray)):
        return load(bytes(expected)).result
    if isinstance(expected, (str, os.PathLike)):
        path = os.fspath(expected)
        stored = parse_ref(path)
        if stored is not None:
            return fold_capture(read_stored(*stored)).result
        with open(path, "rb") as file:
            return load(file.read()).result
    raise TypeError(f"expected must be a streamfold Result, a capture's bytes or a path, got {type(expected).__name__}")


def assert_reply(actual: Any, expected: Any, *, choice: int = 0) -> None:
    """Fail (`ReplyMismatchError`, an AssertionError) unless `actual` — what the client built — agrees with the
    reference `expected`: the reply text, each tool call's name and parsed arguments, and every opaque value
    the next request must send back (signatures, encrypted reasoning). The message gives the first
    divergence, the frame responsible and a probable cause, then how many more there are."""
    result = reference(expected)
    try:
        divergences = check_reply(result, actual, choice=choice)
    except ValueError as exc:
        raise TypeError(f"assert_reply cannot read what the client built: {exc}") from None
    if not divergences:
        return
    first, rest = divergences[0], divergences[1:]
    more = f"\n(and {len(rest)} more: " + "; ".join(d.field for d in rest) + ")" if rest else ""
    raise ReplyMismatchError(f"the client's reply differs from streamfold's reference ({result.dialect}): "
                        f"{first.message()}{more}", divergences)
