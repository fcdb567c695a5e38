"""Comparing two replies: the one list of fields that `streamfold diff`,
`streamfold check` and the web page's diff compare, and the frames that differ.

A side is a fold (`summary_of_result`) or a non-streaming response body read
back by the dialect that knows it (`summary_of_response`, the reverse of
`export`). A response tells fewer facts than a fold (no frames, no findings,
one choice, no tool-call ids), so only the fields both sides can tell are
compared. Each front shows the differences its own way; what is compared,
and how each value is taken from a Result, is decided here only.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any

from .._codes import CODES, Kind
from .._json import loads
from ..decoding import PayloadKind
from ..dialects import SPECS
from ..findings import Diagnostic, StreamError
from ..result import Choice, Result, ToolCall, Usage

__all__ = ["CHOICE_FIELDS", "RESULT_FIELDS", "STREAM_FIELDS", "TOOL_FIELDS", "Field", "FieldDiff", "FrameDiff",
           "Summary", "UnreadableReplyError", "compare", "diff_frames", "diff_results", "frame_opcodes",
           "read_response", "response_summary", "summary_of_response", "summary_of_result"]


# -- the fields -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Field:
    """One fact compared: `key` names it (in `streamfold diff` and in `Summary.knows`), `label` is
    how the page titles it; an `optional` field is listed only when a side has a value for it."""

    key: str
    label: str
    value: Callable[[Any], Any]
    optional: bool = False
    #: Text that holds JSON (tool arguments): two texts of one JSON value are alike, with a note.
    json_text: bool = False


def _counts(result: Result) -> str:
    counts = result.frame_counts
    return (f"{counts['total']} frames: {counts['data']} data, {counts['comments']} comments, "
            f"{counts['invalid']} invalid")


def _raw_finish(choice: Choice) -> str | None:
    """The vendor's own finish reason, when it is not the normalised one."""
    raw = choice.finish_reason_raw
    return None if raw in (None, choice.finish_reason) else raw


def _parsed(call: ToolCall) -> Any:
    """The arguments as the client would use them: parsed, or the raw text when they do not parse."""
    return call.parsed if call.error is None else call.arguments


def _usage(usage: Usage | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    return {name: value for name, value in usage.to_dict().items() if name != "raw" and value is not None}


def _findings(findings: Iterable[StreamError | Diagnostic]) -> str:
    """One line per finding of the stream: code and frame, when it has one (messages quote positions,
    which move between captures). Notes on the input are left out: two files of one stream (a HAR and a curl
    dump) carry different ones."""
    return "\n".join(finding.code if finding.frame is None else f"{finding.code} (frame {finding.frame})"
                     for finding in findings if finding.code not in CODES or CODES[finding.code].kind is not Kind.NOTE)


#: Facts of the whole stream (section "stream"); a value function takes the Result.
STREAM_FIELDS = (
    Field("dialect", "dialect", lambda result: result.dialect),
    Field("transport", "transport", lambda result: result.transport),
    Field("complete", "complete", lambda result: result.complete),
    Field("model", "model", lambda result: result.model),
    Field("frames", "frames", _counts),
)
#: Facts of each choice (section "choice N"); a value function takes the Choice.
CHOICE_FIELDS = (
    Field("content", "content", lambda choice: choice.content),
    Field("reasoning", "reasoning", lambda choice: choice.reasoning),
    Field("refusal", "refusal", lambda choice: choice.refusal),
    Field("finish_reason", "finish reason", lambda choice: choice.finish_reason),
    Field("finish_reason_raw", "finish reason (raw)", _raw_finish, optional=True),
)
#: Facts of each tool call (section "choice N · tool call K"); a value function takes the ToolCall.
TOOL_FIELDS = (
    Field("name", "name", lambda call: call.name),
    Field("id", "id", lambda call: call.id),
    Field("arguments", "arguments (raw join)", lambda call: call.arguments, json_text=True),
    Field("parsed", "parsed", _parsed),
    Field("error", "arguments error", lambda call: call.error, optional=True),
)
#: Facts after the choices, with their sections; a value function takes the Result.
RESULT_FIELDS = (
    ("usage", Field("usage", "usage", lambda result: _usage(result.usage))),
    ("findings", Field("errors", "errors", lambda result: _findings(result.errors))),
    ("findings", Field("diagnostics", "diagnostics", lambda result: _findings(result.diagnostics))),
)


# -- the sides -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Summary:
    """One side of a comparison: a Result, and which of its facts it can tell."""

    result: Result
    #: The keys of the fields this side can tell; None: every field.
    knows: frozenset[str] | None = None
    #: The choices it can tell; None: all of them.
    choices: frozenset[int] | None = None

    def tells(self, item: Field) -> bool:
        return self.knows is None or item.key in self.knows

    @property
    def tells_calls(self) -> bool:
        """Whether it says which tool calls there were."""
        return self.knows is None or "name" in self.knows


def summary_of_result(result: Result) -> Summary:
    """A fold, which tells every field."""
    return Summary(result)


def summary_of_response(value: Any, *, choice: int = 0, calls_when_absent: bool = True) -> Summary:
    """The facts a non-streaming reply tells (a ChatCompletion, an Anthropic Message, a Responses
    object, a message dict, or plain text), as choice `choice`.

    A reply that says nothing of tool calls has none (`calls_when_absent`) or, for a client's output
    that may have left them out, tells nothing about them. Raises ValueError when no dialect reads it.
    """
    found = read_response(value)
    calls = found.get("tool_calls")
    knows: set[str] = {key for key in ("content", "reasoning", "finish_reason", "usage") if key in found}
    if calls is not None or calls_when_absent:
        knows |= {"name", "parsed"}
    ids = found.get("tool_call_ids") or ()
    tool_calls = tuple(_response_call(position, name, arguments, ids[position] if position < len(ids) else None)
                       for position, (name, arguments) in enumerate(calls or ()))
    usage = found.get("usage")
    result = Result(
        transport="json", dialect=found.get("dialect", "unknown"), complete=True, model=None, id=None,
        frame_counts={"total": 0, "data": 0, "comments": 0, "invalid": 0},
        choices=(Choice(choice, "assistant", found.get("content") or "", found.get("reasoning"), None, tool_calls,
                        found.get("finish_reason"), None, ()),),
        usage=None if usage is None else Usage(usage.get("input_tokens"), usage.get("output_tokens"),
                                               usage.get("reasoning_tokens"), usage.get("cache_read_tokens"),
                                               usage.get("total_tokens"), raw=None),
        errors=(), diagnostics=())
    return Summary(result, frozenset(knows), frozenset({choice}))


def _response_call(position: int, name: Any, arguments: str, call_id: str | None) -> ToolCall:
    if not arguments.strip():
        return ToolCall(position, call_id, name, arguments, {}, None, position)  # as a fold parses no arguments
    try:
        return ToolCall(position, call_id, name, arguments, loads(arguments), None, position)
    except ValueError as exc:
        return ToolCall(position, call_id, name, arguments, None, str(exc), position)


def read_response(value: Any) -> dict[str, Any]:
    """The facts of a non-streaming reply: plain text, or a vendor's response body or message,
    read by the dialect that knows it (the reverse of its `export`): {"content", "reasoning",
    "tool_calls" [(name, arguments text)] or None, "tool_call_ids" [id or None] (when the reply
    names its calls), "finish_reason" (absent when the reply has none to tell), "usage", "dialect"}, finish
    reason and usage normalised by that dialect as a fold's are (usage as `Usage` fields)."""
    if isinstance(value, str):
        return {"content": value, "tool_calls": None}
    failed: UnreadableReplyError | None = None
    for spec in SPECS:
        name = spec.name
        try:
            found = spec.read_response(value)
            if found is None:
                continue
            dialect = spec.fold()
            if "finish_reason" in found:  # absent: the reply has no finish reason to tell (a UIMessage)
                raw_finish = found["finish_reason"]
                found["finish_reason"] = (None if raw_finish is None else
                                          dialect.normalise_finish(str(raw_finish), bool(found.get("tool_calls"))))
            found["usage"] = dialect.normalise_usage(found.get("usage")) if found.get("usage") is not None else None
            found["dialect"] = name
            return _checked(found)
        except (TypeError, AttributeError, KeyError, IndexError, ValueError, RecursionError) as exc:
            # A body of this dialect's shape with a value of the wrong type: another dialect may still read it.
            failed = failed or UnreadableReplyError(f"it is shaped like a reply of the {name} dialect, but a value "
                                                    f"in it has the wrong type: {exc}")
    if failed is not None:
        raise failed
    raise ValueError(f"no dialect reads this as a reply: {type(value).__name__} with keys "
                     f"{sorted(map(str, value))[:10] if isinstance(value, dict) else '-'}")


def response_summary(data: bytes) -> tuple[Summary | None, str | None]:
    """A side given as bytes (`streamfold diff`'s B, either side of the page's diff): the facts of the
    non-streaming response body a dialect reads, or None when it is to be read as a capture; and why
    a JSON object shaped like a reply could not be read as one (then it is read as a capture too)."""
    if data.lstrip().startswith(b"data:"):
        return None, None
    try:
        value = loads(data.decode("utf-8"))  # NaN and lone surrogates made strict, as in a fold
    except ValueError:
        return None, None
    if not isinstance(value, dict):
        return None, None
    try:
        return summary_of_response(value), None
    except UnreadableReplyError as exc:
        return None, str(exc)
    except ValueError:
        return None, None  # JSON, but no reply: maybe a HAR, or an error body, read as a capture


class UnreadableReplyError(ValueError):
    """A body of a dialect's shape (a ChatCompletion, a Message, ...) with a value of the wrong type."""


def _checked(found: dict[str, Any]) -> dict[str, Any]:
    """The facts a dialect read, their types held: text is text, tool calls are (name, arguments text),
    usage is an object; raises ValueError naming the fact that is not."""
    for key in ("content", "reasoning"):
        if found.get(key) is not None and not isinstance(found[key], str):
            raise ValueError(f"its {key} is {type(found[key]).__name__}, not text")
    calls = found.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, (list, tuple)) or not all(isinstance(call, (list, tuple)) and len(call) == 2
                                                           for call in calls):
            raise ValueError("its tool calls are not a list of calls")
        found["tool_calls"] = [(name if name is None or isinstance(name, str) else json.dumps(name),
                                arguments if isinstance(arguments, str) else json.dumps(arguments))
                               for name, arguments in calls]
    ids = found.get("tool_call_ids")
    if ids is not None:
        if not isinstance(ids, (list, tuple)) or len(ids) != len(calls or ()):
            raise ValueError("its tool call ids are not one per call")
        found["tool_call_ids"] = [call_id if isinstance(call_id, str) else None for call_id in ids]
    if found.get("usage") is not None and not isinstance(found["usage"], dict):
        raise ValueError(f"its usage is {type(found['usage']).__name__}, not an object")
    return found


# -- comparing ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FieldDiff:
    """One field of both sides: `key` as `streamfold diff` names it ("content", "choices[1].content",
    "tool_calls[0].parsed", "usage"), `section` and `label` as the page groups and titles it;
    `field` is the `Field.key`, with the choice and the tool call's position when it has them."""

    key: str
    section: str
    label: str
    left: Any
    right: Any
    field: str
    choice: int | None = None
    tool: int | None = None
    #: Why two different values are alike (two texts of one JSON value), when they are.
    note: str | None = None

    @property
    def same(self) -> bool:
        return self.note is not None or bool(self.left == self.right)


def compare(left: Summary | Result, right: Summary | Result, *, only: Collection[str] | None = None,
            ) -> list[FieldDiff]:
    """Every field both sides tell (restricted to the keys in `only`), same or not, in page order."""
    a = left if isinstance(left, Summary) else Summary(left)
    b = right if isinstance(right, Summary) else Summary(right)
    out: list[FieldDiff] = []

    def add(item: Field, key: str, section: str, one: Any, other: Any, choice: int | None = None,
            tool: int | None = None) -> None:
        if not (a.tells(item) and b.tells(item)) or (only is not None and item.key not in only):
            return
        left_value = None if one is None else item.value(one)
        right_value = None if other is None else item.value(other)
        if item.optional and left_value is None and right_value is None:
            return
        note = _same_json(left_value, right_value) if item.json_text and left_value != right_value else None
        out.append(FieldDiff(key, section, item.label, left_value, right_value, item.key, choice, tool, note))

    for item in STREAM_FIELDS:
        add(item, item.key, "stream", a.result, b.result)
    left_choices = {choice.index: choice for choice in a.result.choices}
    right_choices = {choice.index: choice for choice in b.result.choices}
    for index in sorted(left_choices.keys() | right_choices.keys()):
        if any(side.choices is not None and index not in side.choices for side in (a, b)):
            continue
        prefix = "" if index == 0 else f"choices[{index}]."
        one, other = left_choices.get(index), right_choices.get(index)
        for item in CHOICE_FIELDS:
            add(item, prefix + item.key, f"choice {index}", one, other, index)
        calls = zip_longest(one.tool_calls if one else (), other.tool_calls if other else ())
        for position, (call, other_call) in enumerate(calls):
            for item in TOOL_FIELDS:
                add(item, f"{prefix}tool_calls[{position}].{item.key}", f"choice {index} · tool call {position}",
                    call, other_call, index, position)
    for section, item in RESULT_FIELDS:
        add(item, item.key, section, a.result, b.result)
    return out


def _same_json(left: Any, right: Any) -> str | None:
    """Why two texts are alike as JSON (one value, written with other spacing or key order), or None."""
    if not isinstance(left, str) or not isinstance(right, str):
        return None
    try:
        # Written out again, not compared with ==: 1, 1.0 and true are one value to Python, not to JSON.
        one, other = (json.dumps(loads(text)) for text in (left, right))
        if one == other:
            return "equal as JSON values: only the whitespace differs"
        one, other = (json.dumps(loads(text), sort_keys=True) for text in (left, right))
    except (ValueError, RecursionError):
        return None
    return "equal as JSON values: only the whitespace and the order of keys differ" if one == other else None


def diff_results(left: Summary | Result, right: Summary | Result) -> list[tuple[str, Any, Any]]:
    """The fields that differ, as (key, left value, right value)."""
    return [(found.key, found.left, found.right) for found in compare(left, right) if not found.same]


# -- frames ---------------------------------------------------------------------------

# Keys that differ between two runs of the same request and say nothing about the reply.
_VOLATILE = frozenset({"id", "created", "created_at", "obfuscation", "p", "system_fingerprint", "responseId",
                       "sequence_number", "item_id", "createTime", "x_groq"})


@dataclass(frozen=True, slots=True)
class FrameDiff:
    """Frames of A and B aligned by payload (ids, timestamps and padding ignored)."""

    same: int
    changed: list[tuple[int, int]] = field(default_factory=list)
    only_a: list[int] = field(default_factory=list)
    only_b: list[int] = field(default_factory=list)


def frame_opcodes(a: Result, b: Result) -> list[tuple[str, int, int, int, int]]:
    """The runs of frames that differ, as difflib opcodes ("replace", "delete", "insert") over A and B.

    Frames are compared by what they carried, ids, timestamps and padding
    ignored, so two captures of the same reply align. The common start and end
    are trimmed first: SequenceMatcher is slow on long equal runs.
    """
    left, right = _signatures(a), _signatures(b)
    start = 0
    while start < min(len(left), len(right)) and left[start] == right[start]:
        start += 1
    end = 0
    while end < min(len(left), len(right)) - start and left[-1 - end] == right[-1 - end]:
        end += 1
    matcher = difflib.SequenceMatcher(a=left[start : len(left) - end], b=right[start : len(right) - end],
                                      autojunk=False)
    return [(tag, a1 + start, a2 + start, b1 + start, b2 + start)
            for tag, a1, a2, b1, b2 in matcher.get_opcodes() if tag != "equal"]


def diff_frames(a: Result, b: Result) -> FrameDiff:
    result = FrameDiff(len(a.frames))
    for tag, a1, a2, b1, b2 in frame_opcodes(a, b):
        if tag == "replace":
            pairs = min(a2 - a1, b2 - b1)
            result.changed.extend(zip(range(a1, a1 + pairs), range(b1, b1 + pairs)))
            result.only_a.extend(range(a1 + pairs, a2))
            result.only_b.extend(range(b1 + pairs, b2))
        elif tag == "delete":
            result.only_a.extend(range(a1, a2))
        else:
            result.only_b.extend(range(b1, b2))
    same = len(a.frames) - len(result.changed) - len(result.only_a)
    return FrameDiff(same, result.changed, result.only_a, result.only_b)


def _signatures(result: Result) -> list[str]:
    signatures = []
    for index, kind in enumerate(result.frame_kinds):
        if kind is PayloadKind.JSON:
            signatures.append(json.dumps(_strip(result.payload(index).value), sort_keys=True))
        else:
            signatures.append(f"{kind.value}:{result.frames[index].data}")
    return signatures


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value
