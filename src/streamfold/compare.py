"""Comparisons against the reference fold: what a client built (`check`) and
another capture or a non-streaming response (`diff`).

`check` reports the first divergence with its character offset, the frame
that produced the reference character there, and a probable cause in plain
words, found by trying the mistakes clients really make: frames dropped,
the last frame lost, glued frames skipped, reasoning mixed into the reply,
text doubled, tool-call arguments merged across calls.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from .decoding import PayloadKind
from .result import Result
from .merge import Merger
from .findings import Report
from .dialects import DIALECTS

__all__ = ["Divergence", "FrameDiff", "check_reply", "diff_frames", "diff_results", "frame_opcodes", "read_response", "reply_of",
           "summary_of_response", "summary_of_result"]

# Keys that differ between two runs of the same request and say nothing about the reply.
_VOLATILE = frozenset({"id", "created", "created_at", "obfuscation", "p", "system_fingerprint", "responseId",
                       "sequence_number", "item_id", "createTime", "x_groq"})


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where a client's output first differs from the reference, and why it probably does."""

    field: str
    offset: int
    expected: str
    got: str
    frame: int | None
    line: int | None
    cause: str

    def message(self) -> str:
        where = f" (frame {self.frame}, line {self.line})" if self.frame is not None else ""
        return (f"{self.field} differs at character {self.offset}{where}: the reference has {self.expected!r}, "
                f"the client has {self.got!r}. Probable cause: {self.cause}")


def read_response(value: Any) -> dict[str, Any]:
    """The facts of a non-streaming reply: plain text, or a vendor's response body or message,
    read by the dialect that knows it (the reverse of its `export`). Finish reason and usage
    come normalised by that dialect, as a fold's are."""
    if isinstance(value, str):
        return {"content": value, "tool_calls": None}
    for dialect_class in DIALECTS.values():
        found = dialect_class.read_response(value)
        if found is not None:
            dialect = dialect_class(Merger(), Report([]))
            raw_finish = found.get("finish_reason")
            found["finish_reason"] = (None if raw_finish is None else
                                      dialect.normalise_finish(str(raw_finish), bool(found.get("tool_calls"))))
            usage = dialect.normalise_usage(found.get("usage")) if found.get("usage") is not None else None
            found["usage"] = None if usage is None else (usage["input_tokens"], usage["output_tokens"])
            return found
    raise ValueError(f"no dialect reads this as a reply: {type(value).__name__} with keys "
                     f"{sorted(value)[:10] if isinstance(value, dict) else '-'}")


def reply_of(value: Any) -> dict[str, Any]:
    """The comparable parts of what a client built: {"content", "tool_calls" [(name, arguments)] or None}."""
    found = read_response(value)
    return {"content": found["content"], "tool_calls": found.get("tool_calls")}


def check_reply(result: Result, expected_value: Any, *, choice: int = 0) -> list[Divergence]:
    """Compare what a client built with the reference fold; an empty list means they agree."""
    client = reply_of(expected_value)
    reference = result.choice(choice)
    divergences: list[Divergence] = []
    content = reference.content if reference else ""
    if client["content"] != content:
        divergences.append(_text_divergence(result, choice, content, client["content"]))
    if client["tool_calls"] is not None and reference is not None:
        divergences.extend(_tool_divergences(result, choice, client["tool_calls"]))
    return divergences


def _text_divergence(result: Result, choice: int, reference: str, client: str) -> Divergence:
    at = next((i for i, (a, b) in enumerate(zip(reference, client)) if a != b), min(len(reference), len(client)))
    frame = result.frame_producing_char(at, choice=choice, field="content") if at < len(reference) else None
    return Divergence("content", at, reference[at : at + 20], client[at : at + 20],
                      frame.index if frame else None, frame.line if frame else None,
                      _text_cause(result, choice, reference, client))


def _text_cause(result: Result, choice: int, reference: str, client: str) -> str:
    runs = result.text_runs(choice=choice, field="content")
    dropped = _dropped_frames(reference, runs, client)
    if dropped is not None and dropped:
        frames = ", ".join(str(f) for f in dropped[:8]) + ("…" if len(dropped) > 8 else "")
        glued = {d.frame for d in result.diagnostics if d.code == "glued-frames"}
        last_frames = {run[2] for run in runs[-len(dropped):]}
        if set(dropped) <= glued:
            return (f"the client lost the text of frame(s) {frames}, which hold two JSON documents each (a lost "
                    "blank line glued them): it parsed each frame as one document and dropped it")
        if set(dropped) == last_frames and client == reference[: len(client)]:
            return (f"the client lost the last frame(s) {frames}: it stopped reading before the stream ended "
                    "(a final frame without its blank line, or the finish_reason taken as the end)")
        return f"the client dropped frame(s) {frames}; everything else matches"
    found = result.choice(choice)
    reasoning = found.reasoning if found is not None else None
    if reasoning and reasoning[:40] in client:
        return "the client mixed the reasoning into the reply text (read reasoning_content/reasoning as content)"
    if len(client) > len(reference) and all(piece in client for piece in (reference[:20], reference[-20:])):
        return "the client's text is longer: it appended something twice (a cumulative resend or a repeated frame)"
    if client and reference.startswith(client):
        return "the client's text stops early: the end of the stream was lost"
    return "the client's text differs here; look at this frame's raw bytes (streamfold frames)"


def _dropped_frames(reference: str, runs: list[tuple[int, int, int]], client: str) -> list[int] | None:
    """If `client` is the reference with some frames' text left out, which frames; else None."""
    dropped: list[int] = []
    position = 0
    for start, end, frame in runs:
        piece = reference[start:end]
        if client.startswith(piece, position):
            position += len(piece)
        else:
            dropped.append(frame)
    return dropped if position == len(client) else None


def _tool_divergences(result: Result, choice: int, client_calls: list[tuple[Any, str]]) -> list[Divergence]:
    reference = result.choice(choice)
    assert reference is not None
    found = []
    ours = [(call.name, call.arguments, call.parsed) for call in reference.tool_calls]
    if len(client_calls) != len(ours):
        joined = [name for name, _, _ in ours]
        cause = (f"the client has {len(client_calls)} tool call(s), the reference {len(ours)} ({', '.join(map(str, joined))})")
        if len(client_calls) < len(ours) and any(
                sum(1 for _, args, _ in ours if args and args in client_args) > 1 for _, client_args in client_calls):
            cause += ": the client merged separate calls' arguments into one (keyed by name, or a missing or reused index)"
        found.append(Divergence("tool_calls", 0, str(len(ours)), str(len(client_calls)), None, None, cause))
        return found
    for position, ((name, arguments, parsed), (client_name, client_arguments)) in enumerate(zip(ours, client_calls)):
        if client_name != name:
            found.append(Divergence(f"tool:{position} name", 0, str(name), str(client_name), None, None,
                                    "the client's tool name differs (names concatenated from repeated fragments?)"))
        if client_arguments == arguments or _same_json(client_arguments, parsed):
            continue
        at = next((i for i, (a, b) in enumerate(zip(arguments, client_arguments)) if a != b),
                  min(len(arguments), len(client_arguments)))
        frame = result.frame_producing_char(min(at, max(0, len(arguments) - 1)), choice=choice, field=f"tool:{position}")
        cause = "the client's arguments differ here"
        if client_arguments.startswith(arguments) and len(client_arguments) > len(arguments):
            cause = "the client's arguments run on past this call's: another call's fragments were appended to it"
        elif arguments.startswith(client_arguments):
            cause = "the client's arguments stop early: fragments after this point were lost"
        found.append(Divergence(f"tool:{position} arguments", at, arguments[at : at + 20], client_arguments[at : at + 20],
                                frame.index if frame else None, frame.line if frame else None, cause))
    return found


def _same_json(text: str, parsed: Any) -> bool:
    try:
        return bool(json.loads(text) == parsed) if text.strip() else parsed == {}
    except ValueError:
        return False



# -- diff -------------------------------------------------------------------------------


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


def summary_of_result(result: Result, choice: int = 0) -> dict[str, Any]:
    """The result-level facts `diff` compares, from a fold."""
    found = result.choice(choice)
    usage = result.usage
    return {
        "content": found.content if found else "",
        "reasoning": found.reasoning if found else None,
        "tool_calls": [(c.name, c.parsed if c.error is None else c.arguments) for c in found.tool_calls] if found else [],
        "finish_reason": found.finish_reason if found else None,
        "usage": None if usage is None else (usage.input_tokens, usage.output_tokens),
    }


def summary_of_response(value: Any) -> dict[str, Any]:
    """The same facts from a non-streaming response body (ChatCompletion, Message, Response, ...)."""
    found = read_response(value)
    out = dict(found)
    out["tool_calls"] = [(name, _maybe_json(arguments)) for name, arguments in found.get("tool_calls") or []]
    return out


def _maybe_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def diff_results(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """Result-level differences between two summaries (keys both sides have)."""
    return [(key, a.get(key), b.get(key)) for key in ("content", "reasoning", "tool_calls", "finish_reason", "usage")
            if key in a and key in b and a.get(key) != b.get(key)]
