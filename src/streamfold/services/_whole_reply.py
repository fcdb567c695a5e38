"""A non-streaming reply given where a stream was expected: a ChatCompletion,
an Anthropic Message, a Responses object, a Gemini GenerateContentResponse,
an Ollama `/api/chat` reply, `streamfold export`'s own output. Read by the
dialect that knows it (`diff.summary_of_response`, the reader `check` and
`diff` use) and shown as the reply, with a note that it was not a stream."""

from __future__ import annotations

import dataclasses
from typing import Any

from .._json import loads
from ..findings import Severity
from ..merge import ToolPath, WholeText
from ..result import TEXT_FIELDS, Result
from ..trace import Trace
from .capture import Note
from .diff import summary_of_response

__all__ = ["read_whole_reply"]

# A body larger than this is not parsed whole to look for a reply (a stream that big is a stream).
_MAX_BODY = 64 * 1024 * 1024
# The fold's findings that only say it did not read the object as a stream.
_STREAM_ONLY = frozenset({"unknown-dialect", "unexpected-payload", "missing-terminal", "unterminated-final-frame"})


def read_whole_reply(body: bytes, result: Result) -> tuple[Result, Note] | None:
    """The reply `body` holds when it is one JSON object (a stream has more than one event) that a
    dialect reads as a non-streaming reply; else None. The fold's frames are kept."""
    value = _one_object(body)
    if value is None or value.get("done") is False:
        return None  # no object at all, or one chunk of a cut Ollama stream
    try:
        summary = summary_of_response(value)
    except ValueError:
        return None
    read = summary.result
    model, reply_id = value.get("model", value.get("modelVersion")), value.get("id", value.get("responseId"))
    note = Note("not-a-stream", f"the input is one non-streaming reply of the {read.dialect} dialect (one JSON "
                                "object), not a stream: it was read as the reply by that dialect's reader, so "
                                "it has no deltas and no arrival times", Severity.INFO)
    kept = tuple(d for d in result.diagnostics if d.code not in _STREAM_ONLY)
    if result.dialect == read.dialect and result.choices:
        # The dialect folded the object as a one-chunk stream (Gemini, Ollama, llama.cpp replies are shaped
        # as their chunks): that fold is the reply, with its provenance and what `export` needs.
        return dataclasses.replace(result, complete=result.complete or _finished(read), diagnostics=kept), note
    return dataclasses.replace(
        # Complete when the reply says how it ended (a lone chunk of a cut stream does not).
        result, dialect=read.dialect, complete=result.complete or _finished(read), choices=read.choices,
        usage=read.usage, model=model if isinstance(model, str) else result.model,
        id=reply_id if isinstance(reply_id, str) else result.id, diagnostics=kept, native=None,
        trace=_trace(read, result)), note


def _finished(read: Result) -> bool:
    return any(choice.finish_reason for choice in read.choices)


def _trace(read: Result, folded: Result) -> Trace | None:
    """The fold's frames, with the reply's provenance: every character of the reply came from the
    one frame that holds the object (`blame` says so)."""
    if folded.trace is None:
        return None
    keys = {choice.index: tuple(call.key for call in choice.tool_calls) for choice in read.choices}
    return dataclasses.replace(folded.trace, sources=_sources(read, folded.trace), tool_keys=keys)


def _sources(read: Result, folded: Trace) -> dict[tuple[int, str], WholeText]:
    if not folded.frames:
        return {}
    frame = len(folded.frames) - 1
    sources: dict[tuple[int, str], WholeText] = {}
    for choice in read.choices:
        for field in TEXT_FIELDS:
            text = getattr(choice, field)
            if text:
                sources[(choice.index, field)] = WholeText((choice.index, field), text, frame)
        for call in choice.tool_calls:
            if call.arguments:
                path: ToolPath = (choice.index, "tool", call.key, "arguments")
                sources[(choice.index, f"tool:{call.key}")] = WholeText(path, call.arguments, frame)
    return sources


def _one_object(body: bytes) -> dict[str, Any] | None:
    if len(body) > _MAX_BODY or not body[:4096].lstrip().startswith(b"{"):
        return None
    text = body.strip()
    try:
        # The fold's decoding: NaN and Infinity become null, lone surrogates U+FFFD (the fold of the
        # same bytes says so, `non-strict-json`), so the reply read here is strict JSON too.
        value = loads(text.decode("utf-8", "replace"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
