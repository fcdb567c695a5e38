"""What `POST /api/diff` returns: two captures folded by the core and compared
at the level a person debugs, the reply (text, reasoning, tool calls, usage,
finish reason, findings) and the frames (which ones differ).

    {
      "left":  {"result": to_dict(), "size": body bytes, "input_size": bytes, "source": "har", "response": false},
      "right": {...},
      "fields": [{"section", "label", "left", "right", "same", "note", "prefix", "suffix", "marks"}, ...],
      "frames": {"compared": true, "left_total", "right_total", "hunks_total", "hunks": [...]}
    }

Each side may be what a person has at hand (a HAR, curl output, a log), loaded
as the CLI and the fold endpoint load it (its result carries the notes on the
input), or a non-streaming response body ("stream": false), read as
`streamfold diff` reads its B (`services.diff.response_summary`): then only
the fields a response tells are compared, and no frames ("response": true,
"compared": false). The fields are `services.diff`'s, so page and CLI agree.

Field values are display text (JSON for structured values) or null when the
side has no such field; tool arguments are compared as JSON values, not as
their text: two texts of one value are `same`, and `note` says why ("equal as
JSON values: only the whitespace differs"; null otherwise); `prefix`/`suffix` are the lengths, in UTF-16 units,
of what two different texts share at their start and end (never cutting a
word), so the page can shorten them; `marks` {"left", "right"} are the
[start, end] spans, UTF-16 units, of the whole tokens (words, runs of
spaces, single punctuation) that differ, zero-width where the other side
has something this one lacks.
"""

from __future__ import annotations

import difflib
import re
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

from .._json import dumps_strict
from .._text import common_prefix_length
from ..result import Result
from ..services.diff import Summary, compare, frame_opcodes, response_summary
from ..services.load import fold_capture
from ..services.rows import frame_rows
from .fold_view import read_posted

__all__ = ["MAX_FRAMES_PER_HUNK", "MAX_HUNKS", "diff_captures"]

#: Hunks listed in full; the rest are counted (a capture against an unrelated one differs everywhere).
MAX_HUNKS = 200
#: Frames shown on each side of a hunk.
MAX_FRAMES_PER_HUNK = 5
#: Raw text shown per frame in a hunk.
MAX_RAW_CHARS = 4000
#: Tokens per side above which the differing middle is marked whole instead of token by token.
MAX_DIFF_TOKENS = 5000

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def diff_captures(left: bytes, right: bytes, *, dialect: str | None = None, transport: str | None = None,
                  max_inflated: int | None = None) -> dict[str, Any]:
    """Raises `InputError` when a side cannot be used (say, a HAR without a streamed entry).
    `max_inflated`: the page's request limit, per side (as `fold_view.read_posted` holds it)."""
    sides: list[Summary | Result] = []
    shown: list[dict[str, Any]] = []
    for data in (left, right):
        response, _ = response_summary(data)
        if response is not None:
            sides.append(response)
            shown.append({"result": response.result.to_dict(), "size": len(data), "input_size": len(data),
                          "source": "response", "response": True})
            continue
        side = fold_capture(read_posted(data, max_size=max_inflated), dialect=dialect, transport=transport,
                            input_size=len(data))
        sides.append(side.result)
        shown.append({"result": side.result.to_dict(), "size": len(side.capture.body), "input_size": side.input_size,
                      "source": side.capture.source, "response": False})
    one, other = sides
    frames = (_frame_diffs(one, other) if isinstance(one, Result) and isinstance(other, Result) else
              {"compared": False, "left_total": len(_result(one).frames), "right_total": len(_result(other).frames),
               "hunks_total": 0, "hunks": []})
    return {"left": shown[0], "right": shown[1], "fields": _field_diffs(one, other), "frames": frames}


def _result(side: Summary | Result) -> Result:
    return side.result if isinstance(side, Summary) else side


# -- result level (what is compared is `services.diff`'s; this is how the page shows it) ----

def _field_diffs(left: Summary | Result, right: Summary | Result) -> list[dict[str, Any]]:
    return [_field(found.section, found.label, _display(found.left), _display(found.right), found.note)
            for found in compare(left, right)]


def _field(section: str, label: str, left: str | None, right: str | None, note: str | None = None
           ) -> dict[str, Any]:
    same = note is not None or left == right
    prefix = suffix = 0
    marks: dict[str, list[list[int]]] = {"left": [], "right": []}
    if not same and left is not None and right is not None:
        prefix_chars = _word_start(left, right, common_prefix_length(left, right))
        suffix_chars = common_prefix_length(left[prefix_chars:][::-1], right[prefix_chars:][::-1])
        suffix_chars = _word_start(left[::-1], right[::-1], suffix_chars)
        prefix = _utf16_length(left[:prefix_chars])
        suffix = _utf16_length(left[len(left) - suffix_chars:]) if suffix_chars else 0
        marks = _token_marks(left, right, prefix_chars, suffix_chars)
    return {"section": section, "label": label, "left": left, "right": right, "same": same, "note": note,
            "prefix": prefix, "suffix": suffix, "marks": marks}


def _word_start(one: str, other: str, shared: int) -> int:
    """`shared` (a common prefix's length) moved back to the start of the word it cuts, if it cuts one."""
    def word(text: str, position: int) -> bool:
        return 0 <= position < len(text) and (text[position].isalnum() or text[position] == "_")
    if not (word(one, shared) or word(other, shared)):
        return shared
    while shared > 0 and word(one, shared - 1):
        shared -= 1
    return shared


def _token_marks(left: str, right: str, prefix: int, suffix: int) -> dict[str, list[list[int]]]:
    """The differing tokens of the middles (between the shared start and end), as spans in UTF-16 units."""
    middles = (left[prefix:len(left) - suffix], right[prefix:len(right) - suffix])
    tokens = [[match.span() for match in _TOKEN.finditer(middle)] for middle in middles]
    if max(len(tokens[0]), len(tokens[1])) > MAX_DIFF_TOKENS:
        pairs = [[(0, len(middles[0]))], [(0, len(middles[1]))]]
    else:
        words = [[middle[a:b] for a, b in spans] for middle, spans in zip(middles, tokens)]
        pairs = [[], []]
        matcher = difflib.SequenceMatcher(a=words[0], b=words[1], autojunk=False)
        for tag, a1, a2, b1, b2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            for side, (low, high) in enumerate(((a1, a2), (b1, b2))):
                spans = tokens[side]
                start = spans[low][0] if low < len(spans) else len(middles[side])
                pairs[side].append((start, spans[high - 1][1] if high > low else start))
    out: dict[str, list[list[int]]] = {}
    for name, text, spans, middle in (("left", left, pairs[0], middles[0]), ("right", right, pairs[1], middles[1])):
        merged: list[list[int]] = []
        for start, end in spans:
            # Two changed runs with only spaces between read as one change.
            if merged and not middle[merged[-1][1]:start].strip():
                merged[-1][1] = end
            else:
                merged.append([start, end])
        base = _utf16_length(text[:prefix])
        astral = [match.start() for match in _ASTRAL.finditer(middle)]
        out[name] = [[base + start + bisect_left(astral, start), base + end + bisect_left(astral, end)]
                     for start, end in merged]
    return out


def _display(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return dumps_strict(value, indent=2)



def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


# -- frame level --------------------------------------------------------------

def _frame_diffs(left: Result, right: Result) -> dict[str, Any]:
    """The runs of frames that differ (aligned as `streamfold diff` aligns them), with the frames to show."""
    opcodes = frame_opcodes(left, right)
    left_rows = _rows_by_index(left, opcodes, left_side=True)
    right_rows = _rows_by_index(right, opcodes, left_side=False)
    hunks = []
    for op, a, b, c, d in opcodes[:MAX_HUNKS]:
        hunks.append({
            "op": op, "left": [a, b], "right": [c, d],
            "left_frames": [left_rows[i] for i in range(a, min(b, a + MAX_FRAMES_PER_HUNK))],
            "right_frames": [right_rows[i] for i in range(c, min(d, c + MAX_FRAMES_PER_HUNK))],
        })
    return {"left_total": len(left.frames), "right_total": len(right.frames),
            "hunks_total": len(opcodes), "hunks": hunks}


def _rows_by_index(result: Result, opcodes: Sequence[tuple[str, int, int, int, int]],
                   *, left_side: bool) -> dict[int, dict[str, Any]]:
    """The frames a listed hunk shows, as {index, line, offset, kind, summary, raw}."""
    wanted: set[int] = set()
    for _, a, b, c, d in opcodes[:MAX_HUNKS]:
        low, high = (a, b) if left_side else (c, d)
        wanted.update(range(low, min(high, low + MAX_FRAMES_PER_HUNK)))
    rows: dict[int, dict[str, Any]] = {}
    if not wanted:
        return rows
    for row in frame_rows(result):
        if row["index"] in wanted:
            raw = result.frames[row["index"]].raw.decode("utf-8", "replace")
            rows[row["index"]] = {"index": row["index"], "line": row["line"], "offset": row["offset"],
                                  "kind": row["kind"], "summary": row["summary"],
                                  "raw": raw[:MAX_RAW_CHARS], "raw_truncated": len(raw) > MAX_RAW_CHARS}
    return rows
