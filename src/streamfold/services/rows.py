"""Frames as rows a person reads: what `streamfold frames`, the web page and
`diff` show for each frame. Front-neutral (no terminal, no HTML).

`frame_rows(result)` lists the rows of a fold; `fold_rows(body, on_rows)`
folds a body slice by slice and hands out the rows of the frames each slice
settled, so a front can show the first rows of a 100k-frame capture before
the rest is folded (the rows are `frame_rows`' of the final Result).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..decoding import PayloadKind, decode_frame
from ..dialects import DIALECTS, for_transport, spec_of
from ..findings import StreamError
from ..folding import Folder, Phase
from ..framing import Frame
from ..result import Result

__all__ = ["RowBounds", "fold_rows", "frame_rows", "frame_summaries", "frame_summary"]

#: The first slice `fold_rows` folds is small, so the first rows come at once; then larger ones.
_FIRST_SLICE = 16 * 1024
_SLICE = 256 * 1024


@dataclass(frozen=True, slots=True)
class RowBounds:
    """What the rows of a body can hold at most, known before it is folded (a table's column widths)."""

    transport: str
    index: int
    line: int
    offset: int


def frame_rows(result: Result, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
    """One record per frame (of frames `start` to `stop`): what `frames --jsonl` prints and the table shows."""
    rows = _Rows(_summarizer(result.transport, result.dialect), result.errors)
    frames, kinds = result.frames, result.frame_kinds
    stop = len(frames) if stop is None else min(stop, len(frames))
    for index in range(max(0, start), stop):
        yield rows.row(frames[index], kinds[index])


def frame_summary(result: Result, index: int) -> str:
    """A frame in one line: the dialect's summary of its payload, or what it is instead."""
    return frame_summaries(result, (index,))[0]


def frame_summaries(result: Result, indexes: Iterable[int]) -> list[str]:
    """`frame_summary` of each of `indexes`, the summarizer set up once."""
    rows = _Rows(_summarizer(result.transport, result.dialect), result.errors)
    return [rows.summary(result.frames[index], result.frame_kinds[index]) for index in indexes]


def fold_rows(body: bytes, on_rows: Callable[[list[dict[str, Any]], RowBounds], None], *,
              dialect: str | None = None, transport: str | None = None,
              progress: Callable[[int, int], None] | None = None,
              slices: tuple[int, int] = (_FIRST_SLICE, _SLICE), lane: str | None = None,
              request_headers: Sequence[tuple[str, str]] = ()) -> Result:
    """Fold `body`, calling `on_rows(rows, bounds)` with the rows of the frames each slice settled
    (in order, every frame once, as `frame_rows` of the Result makes them), and return the Result.
    Rows wait while no dialect has claimed a payload (the dialect summarizes them). `slices`: the
    size of the first slice and of the others, in bytes."""
    folder = Folder(dialect, transport=transport, events=False, lane=lane, request_headers=request_headers)
    sent, bounds, rows = 0, None, None
    start, (size, later) = 0, slices
    while start < len(body):
        folder.feed(body[start : start + size])
        start, size = start + size, later
        if progress is not None:
            progress(min(start, len(body)), len(body))
        if folder.phase in (Phase.SNIFF, Phase.DETECT):
            continue
        settled, kinds, errors = folder.settled()
        if settled <= sent:
            continue
        if rows is None:
            assert folder.transport is not None
            bounds = _bounds(body, folder.transport)
            rows = _Rows(_summarizer(folder.transport, folder.dialect), errors)
        rows.more_errors(errors)
        assert bounds is not None
        on_rows([rows.row(frame, kinds[frame.index]) for frame in folder.frames[sent:settled]], bounds)
        sent = settled
    result = folder.close()
    if sent < len(result.frames) or bounds is None:
        on_rows(list(frame_rows(result, sent)), bounds or _bounds(body, result.transport))
    return result


def _bounds(body: bytes, transport: str) -> RowBounds:
    """The largest index, line and offset a frame of `body` may have: every text frame ends a line
    (or, in a JSON array, holds a `{`); an event-stream message is 16 bytes or more."""
    lines = body.count(b"\n") + (body.count(b"\r") if b"\r" in body else 0) + 1
    index = {"json-array": body.count(b"{") + body.count(b"[") + 1, "aws-eventstream": len(body) // 16 + 1}
    return RowBounds(transport, min(index.get(transport, lines), len(body)), lines, len(body))


class _Rows:
    """Makes the rows of one stream: its summarizer and its errors by frame, set up once."""

    def __init__(self, summarize: Callable[[object], str], errors: Sequence[StreamError]) -> None:
        self.summarize = summarize
        self.errors: dict[int, str] = {}
        self._seen = 0
        self.more_errors(errors)

    def more_errors(self, errors: Sequence[StreamError]) -> None:
        """Take the errors added since the last call (a frame's last error is the one a row says)."""
        for error in errors[self._seen :]:
            if error.frame is not None:
                self.errors[error.frame] = error.message
        self._seen = len(errors)

    def row(self, frame: Frame, kind: PayloadKind) -> dict[str, Any]:
        return {"index": frame.index, "line": frame.line, "offset": frame.offset, "event": frame.event,
                "kind": kind.value, "terminated": frame.terminated, "summary": self.summary(frame, kind),
                "issues": [issue.code for issue in frame.issues]}

    def summary(self, frame: Frame, kind: PayloadKind) -> str:
        if kind is PayloadKind.JSON:
            return self.summarize(decode_frame(frame).value)
        if kind is PayloadKind.COMMENT:
            return " | ".join(f": {comment}" for comment in frame.comments) or (
                f"event {frame.event!r} without data" if frame.event is not None else "no data")
        if kind is PayloadKind.DONE:
            return "[DONE]"
        if kind is PayloadKind.GLUED:
            return f"{len(decode_frame(frame).value)} JSON documents glued together"
        return self.errors.get(frame.index, frame.data or "")


def _summarizer(transport: str | None, dialect: str | None) -> Callable[[object], str]:
    """Who reads the frames: the carrier that owns the transport (Bedrock's event-stream messages
    wrap the vendor's events), else the stream's dialect."""
    reader = (for_transport(transport) if transport else None) or DIALECTS.get(dialect or "") or DIALECTS["unknown"]
    return spec_of(reader).summary
