"""Frames as rows a person reads: what `streamfold frames`, the web page and
`diff` show for each frame. Front-neutral (no terminal, no HTML)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..decoding import PayloadKind, decode_frame
from ..dialects import DIALECTS, Dialect, for_transport
from ..framing import Frame
from ..result import Result

__all__ = ["frame_rows", "frame_summary"]


def frame_rows(result: Result) -> Iterable[dict[str, Any]]:
    """One record per frame: what `frames --jsonl` prints and the table shows."""
    errors = {error.frame: error.message for error in result.errors if error.frame is not None}
    for frame, kind in zip(result.frames, result.frame_kinds):
        yield {"index": frame.index, "line": frame.line, "offset": frame.offset, "event": frame.event,
               "kind": kind.value, "terminated": frame.terminated,
               "summary": _summary(_summarizer(result), frame, kind, errors),
               "issues": [issue.code for issue in frame.issues]}


def frame_summary(result: Result, index: int) -> str:
    """A frame in one line: the dialect's summary of its payload, or what it is instead."""
    errors = {error.frame: error.message for error in result.errors if error.frame is not None}
    return _summary(_summarizer(result), result.frames[index], result.frame_kinds[index], errors)


def _summarizer(result: Result) -> type[Dialect]:
    """Who reads the frames: the carrier that owns the transport (Bedrock's event-stream messages
    wrap the vendor's events), else the Result's dialect."""
    return for_transport(result.transport) or DIALECTS.get(result.dialect) or DIALECTS["unknown"]


def _summary(dialect: type[Dialect], frame: Frame, kind: PayloadKind, errors: dict[int, str]) -> str:
    if kind is PayloadKind.JSON:
        return dialect.summarize(decode_frame(frame).value)
    if kind is PayloadKind.COMMENT:
        return " | ".join(f": {comment}" for comment in frame.comments) or (
            f"event {frame.event!r} without data" if frame.event is not None else "no data")
    if kind is PayloadKind.DONE:
        return "[DONE]"
    if kind is PayloadKind.GLUED:
        return f"{len(decode_frame(frame).value)} JSON documents glued together"
    return errors.get(frame.index, frame.data or "")
