"""Text a stream lost: where in the reply each frame that did not decode would have put
its text, and what of that text can still be read from its broken JSON.

A frame that does not decode (`invalid-json`, a frame cut by `max_frame_size`, a damaged
AWS event-stream message) is kept aside and the rest folds, so the reply reads as if the
frame never came. `lost_text` says where it came: the length the reply had when the frame
arrived (the end of the last piece a frame before it appended, read from the reply's
provenance: no second fold), and the text its dialect's text field holds up to where the
JSON breaks off (`{"delta":{"content":"Hel` gives `Hel`), marked partial. What the
fronts do with it is theirs (the CLI marks the reply, the page too); the JSON contract
does not change.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

from ..decoding import PayloadKind
from ..dialects import DIALECTS
from ..result import Result

__all__ = ["LostText", "lost_text", "salvage_text"]

#: Why a frame did not decode, in the words a marker says, by its error's code.
REASONS = {"invalid-json": "invalid JSON", "frame-too-large": "too large, cut", "crc-mismatch": "damaged (CRC)",
           "truncated-message": "cut off", "bad-headers": "bad headers", "bad-prelude": "damaged"}
#: Where a choice's index sits in a broken OpenAI-style or Gemini payload.
_CHOICE = re.compile(r'"(?:choices|candidates)"\s*:\s*\[\s*\{[^{}]*?"index"\s*:\s*(\d+)')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


@dataclass(frozen=True, slots=True)
class LostText:
    """One frame that did not decode, placed in a choice's reply."""

    choice: int
    #: Characters of the choice's content before the frame's place (its length when the frame came).
    offset: int
    frame: int
    #: Why it did not decode, in a few words ("invalid JSON").
    reason: str
    #: The text its broken JSON still shows (up to where it breaks off), or None when none was found.
    partial: str | None

    def to_dict(self) -> dict[str, object]:
        return {"choice": self.choice, "offset": self.offset, "frame": self.frame, "reason": self.reason,
                "partial": self.partial}


def lost_text(result: Result) -> list[LostText]:
    """Every frame of `result` that did not decode, in stream order, placed in its choice's reply.
    Linear in the frames (a binary search in the reply's pieces for each frame that did not decode)."""
    kinds = result.frame_kinds
    errors: dict[int, str] = {}
    for error in result.errors:
        if error.frame is not None and error.frame not in errors and error.code in REASONS:
            errors[error.frame] = error.code
    keys = (DIALECTS.get(result.dialect) or DIALECTS["unknown"]).text_keys
    found = []
    # Every frame that did not decode, its error's words when it has one (past `max_findings_per_code`
    # the errors are counted, not kept: those frames' data did not parse as JSON). A damaged message
    # whose payload still read decoded after all: nothing of it was lost.
    for frame in (index for index, kind in enumerate(kinds) if kind is PayloadKind.INVALID):
        code = errors.get(frame, "invalid-json")
        data = result.frames[frame].data or ""
        matched = _CHOICE.search(data)
        choice = int(matched.group(1)) if matched else (result.choices[0].index if result.choices else 0)
        found.append(LostText(choice, _offset(result, choice, frame), frame, REASONS[code], salvage_text(data, keys)))
    return found


def _offset(result: Result, choice: int, frame: int) -> int:
    """The length of the choice's content before `frame`: the end of the last piece an earlier frame appended."""
    source = result.sources.get((choice, "content"))
    if source is None:
        return 0
    before = bisect_left(source.frames, frame)
    return source.ends[before - 1] if before else 0


def salvage_text(data: str, keys: tuple[str, ...]) -> str | None:
    """The string value of the first of `keys` found in broken JSON `data`, read up to its closing
    quote or to where the data ends (an escape cut in half is dropped); None when no key holds a string."""
    for key in keys:
        matched = re.search(r'"' + re.escape(key) + r'"\s*:\s*"', data)
        if matched is not None:
            return _string_from(data, matched.end())
    return None


def _string_from(data: str, start: int) -> str:
    out: list[str] = []
    at = start
    while at < len(data):
        char = data[at]
        if char == '"':
            break
        if char != "\\":
            out.append(char)
            at += 1
            continue
        escape = data[at + 1 : at + 2]
        if escape == "u":
            digits = data[at + 2 : at + 6]
            if len(digits) < 4 or not all(c in "0123456789abcdefABCDEF" for c in digits):
                break
            out.append(chr(int(digits, 16)))
            at += 6
        elif escape in _ESCAPES:
            out.append(_ESCAPES[escape])
            at += 2
        else:
            break
    # A surrogate pair sent as two \u escapes joins into its character; a lone half becomes U+FFFD.
    return "".join(out).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
