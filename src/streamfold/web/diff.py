"""What `POST /api/diff` returns: two captures folded by the core and compared
at the level a person debugs, the reply (text, reasoning, tool calls, usage,
finish reason, findings) and the frames (which ones differ).

    {
      "left":  {"result": to_dict(), "size": body bytes, "input_size": bytes, "source": "har", ...},
      "right": {...},
      "fields": [{"section", "label", "left", "right", "same", "prefix", "suffix"}, ...],
      "frames": {"left_total", "right_total", "hunks_total", "hunks": [...]}
    }

Each side may be what a person has at hand (a HAR, curl output, a log), loaded
as the CLI and the fold endpoint load it (its result carries the notes on the
input); the stream bodies are compared, over the fields `services.diff` lists.

Field values are display text (JSON for structured values) or null when the
side has no such field; `prefix`/`suffix` are the lengths, in UTF-16 units,
of what two different texts share at their start and end, so the page can
mark just the middle that differs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..result import Result
from ..services import load
from ..services.diff import compare, frame_opcodes
from ..services.rows import frame_rows

__all__ = ["MAX_FRAMES_PER_HUNK", "MAX_HUNKS", "diff_captures"]

#: Hunks listed in full; the rest are counted (a capture against an unrelated one differs everywhere).
MAX_HUNKS = 200
#: Frames shown on each side of a hunk.
MAX_FRAMES_PER_HUNK = 5
#: Raw text shown per frame in a hunk.
MAX_RAW_CHARS = 4000


def diff_captures(left: bytes, right: bytes, *, dialect: str | None = None, transport: str | None = None,
                  max_inflated: int | None = None) -> dict[str, Any]:
    """Raises `InputError` when a side cannot be used (say, a HAR without a streamed entry).
    `max_inflated`: as for `services.load`, per side."""
    sides = [load(data, dialect=dialect, transport=transport, max_inflated=max_inflated) for data in (left, right)]
    left_result, right_result = (side.result for side in sides)
    shown = [{"result": side.result.to_dict(), "size": len(side.capture.body), "input_size": side.input_size,
              "source": side.capture.source} for side in sides]
    return {
        "left": shown[0],
        "right": shown[1],
        "fields": _field_diffs(left_result, right_result),
        "frames": _frame_diffs(left_result, right_result),
    }


# -- result level (what is compared is `services.diff`'s; this is how the page shows it) ----

def _field_diffs(left: Result, right: Result) -> list[dict[str, Any]]:
    return [_field(found.section, found.label, _display(found.left), _display(found.right))
            for found in compare(left, right)]


def _field(section: str, label: str, left: str | None, right: str | None) -> dict[str, Any]:
    same = left == right
    prefix = suffix = 0
    if not same and left is not None and right is not None:
        prefix_chars = _common_prefix(left, right)
        suffix_chars = _common_prefix(left[prefix_chars:][::-1], right[prefix_chars:][::-1])
        prefix = _utf16_length(left[:prefix_chars])
        suffix = _utf16_length(left[len(left) - suffix_chars:]) if suffix_chars else 0
    return {"section": section, "label": label, "left": left, "right": right, "same": same,
            "prefix": prefix, "suffix": suffix}


def _display(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2)


def _common_prefix(one: str, other: str) -> int:
    """Length of the common start, by halving (C-speed slices instead of a Python loop per character)."""
    low, high = 0, min(len(one), len(other))
    while low < high:
        middle = (low + high + 1) // 2
        if one[low:middle] == other[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


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
