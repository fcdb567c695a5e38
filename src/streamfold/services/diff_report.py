"""What `streamfold diff` reports, as one object: `diff --json` prints it, and the
text output is made from it. Schema 1, stable (fields may be added, none removed
or changed):

    {
      "schema": 1,
      "same": false,                       # no field and no frame differs (notes do not count)
      "a": {"file": "a.sse", "kind": "stream", "dialect": "openai-chat", "transport": "sse",
            "complete": true, "model": "gpt-4.1-mini", "frames": 41},
      "b": {"file": "b.json", "kind": "response", "dialect": "openai-chat", "transport": null,
            "complete": null, "model": null, "frames": null},        # a non-streaming response
      "frames": {"alike": 39,                                     # null when B is a response
                 "changed": [{"a": 3, "b": 3, "a_summary": "content \\" the\\"", "b_summary": "..."}],
                 "only_a": [{"frame": 40, "summary": "..."}], "only_b": [...]},
      "differences": [{"path": "content", "a": "...", "b": "...",
                       "first_difference": {"character": 12, "line": 1, "column": 13},
                       "frames": {"a": 3, "b": 3}}],
      "notes": [{"path": "tool_calls[0].arguments", "a": "{\\"a\\":1}", "b": "{\\"a\\": 1}",
                 "note": "equal as JSON values: only the whitespace differs"}]
    }

A difference's `path` is the field compared (`services.diff`): "content",
"choices[1].content", "tool_calls[0].parsed", "finish_reason", "usage", "errors",
...; `a` and `b` its values (JSON: text, numbers, objects, null where a side has
none). `first_difference` (texts only, else null): the first differing
character, and its line and column (from 1). `frames` (texts only: the reply,
reasoning, refusal, a tool call's arguments): the frame of each side that
produced the text at that character (its last character when the text ends
there), null when there is none or the side is a response.
"""

from __future__ import annotations

from typing import Any

from ..result import Result
from .diff import FieldDiff, Summary, compare, diff_frames
from .rows import frame_summaries

__all__ = ["SCHEMA", "diff_report", "first_difference"]

SCHEMA = 1

#: The fields whose values are texts a frame can be named for, as `Result.frame_producing_char` names them.
_TEXTS = ("content", "reasoning", "refusal")


def diff_report(a: Result, b: Result | Summary, *, a_name: str, b_name: str) -> dict[str, Any]:
    """Capture A against B (a capture, or a non-streaming response read as a `Summary`)."""
    differences: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for found in compare(a, b):
        if found.note is not None:
            notes.append({"path": found.key, "a": found.left, "b": found.right, "note": found.note})
        elif not found.same:
            at = first_difference(found.left, found.right)
            producers = {"a": _frame(a, found, found.left, at),
                         "b": None if isinstance(b, Summary) else _frame(b, found, found.right, at)}
            differences.append({"path": found.key, "a": found.left, "b": found.right, "first_difference": at,
                                "frames": producers})
    frames = None if isinstance(b, Summary) else _frames(a, b)
    same = not differences and (frames is None or not (frames["changed"] or frames["only_a"] or frames["only_b"]))
    if isinstance(b, Summary):  # a response tells none of the stream's facts
        side_b = {**_side(b.result, b_name, "response"), "transport": None, "complete": None, "model": None,
                  "frames": None}
    else:
        side_b = _side(b, b_name, "stream")
    return {"schema": SCHEMA, "same": same, "a": _side(a, a_name, "stream"), "b": side_b, "frames": frames,
            "differences": differences, "notes": notes}


def first_difference(left: Any, right: Any) -> dict[str, int] | None:
    """Where two different texts first differ: {"character", "line", "column"} (line and column from 1)."""
    if not isinstance(left, str) or not isinstance(right, str) or left == right:
        return None
    at = next((i for i, (x, y) in enumerate(zip(left, right)) if x != y), min(len(left), len(right)))
    before = left[:at]
    return {"character": at, "line": before.count("\n") + 1, "column": at - (before.rfind("\n") + 1) + 1}


def _side(result: Result, name: str, kind: str) -> dict[str, Any]:
    return {"file": name, "kind": kind, "dialect": result.dialect, "transport": result.transport,
            "complete": result.complete, "model": result.model, "frames": len(result.frames)}


def _frame(result: Result, found: FieldDiff, value: Any, at: dict[str, int] | None) -> int | None:
    """The frame that produced `value` (a text of `found`'s field) at the first difference."""
    if at is None or not isinstance(value, str) or not value:
        return None
    if found.field in _TEXTS:
        field = found.field
    elif found.field == "arguments" and found.tool is not None:
        field = f"tool:{found.tool}"
    else:
        return None
    frame = result.frame_producing_char(min(at["character"], len(value) - 1), choice=found.choice or 0,
                                        field=field)
    return None if frame is None else frame.index


def _frames(a: Result, b: Result) -> dict[str, Any]:
    found = diff_frames(a, b)
    a_pairs, b_pairs = (frame_summaries(a, (one for one, _ in found.changed)),
                        frame_summaries(b, (other for _, other in found.changed)))
    return {"alike": found.same,
            "changed": [{"a": one, "b": other, "a_summary": a_summary, "b_summary": b_summary}
                        for (one, other), a_summary, b_summary in zip(found.changed, a_pairs, b_pairs)],
            "only_a": [{"frame": index, "summary": summary}
                       for index, summary in zip(found.only_a, frame_summaries(a, found.only_a))],
            "only_b": [{"frame": index, "summary": summary}
                       for index, summary in zip(found.only_b, frame_summaries(b, found.only_b))]}
