"""From the bytes a person has to an annotated `Result`: the one way every front
(`show`, `frames`, `export`, `blame`, `check`, `diff`, the web page) reads a capture.

`load` unwraps the input (HAR, curl output, a log, ...), folds the stream
body, and annotates the Result the same way for all of them: the notes on
the input and the transport first in its diagnostics, the stalls (when the
input had arrival times) last. A body that is no stream (nothing, an HTML
page, bytes that are not text) is said in one finding and not folded, unless
a transport or dialect was forced; one non-streaming reply is read as the
reply by its dialect. `annotate` is that last step alone, for a
fold that was not made from bytes at once (`streamfold tail`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..findings import Diagnostic
from ..folding import fold
from ..result import Result
from ._whole_reply import read_whole_reply
from ._wrong_input import NOT_A_STREAM, recognise
from .inputs import Capture, read_capture, transport_notes
from .rows import RowBounds, fold_rows
from .timing import DEFAULT_STALL, Timing, analyse

__all__ = ["Loaded", "Progress", "annotate", "ended_by_finish_reason", "fold_capture", "load"]

#: `progress(done, total)`: bytes of the stream body folded so far, and its size.
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Loaded:
    """A capture read, folded and annotated."""

    #: The stream body and what the input said about it (source, reads, headers, status).
    capture: Capture
    #: What the input readers and the transport checks found, as findings that point at no frame.
    notes: tuple[Diagnostic, ...]
    #: The fold, with `notes` first in its diagnostics and the stalls last.
    result: Result
    #: When the input had arrival times (curl --trace-time, a timestamped log).
    timing: Timing | None
    #: Bytes of the input as given (a HAR or a curl dump is larger than the body it holds).
    input_size: int
    #: Seconds the core took: reading the input, folding, timing.
    fold_seconds: float


def load(data: bytes, *, input_format: str = "auto", entry: str | None = None, dialect: str | None = None,
         transport: str | None = None, stall: float = DEFAULT_STALL, progress: Progress | None = None,
         max_inflated: int | None = None, refuse_larger: bool = False,
         rows: Callable[[list[dict[str, Any]], RowBounds], None] | None = None, lane: str | None = None) -> Loaded:
    """Read `data` as `input_format` (detected by default), fold its stream body, annotate the result.
    `max_inflated`, `refuse_larger`: the most bytes a gzip body is inflated to, and whether a larger
    one is refused instead of cut (see `read_capture`); `rows`: called with the rows of the frames as
    they fold, to show them as they come (see `rows.fold_rows`); `lane`: the lane to fold (`fold()`'s).

    Raises `InputError` when the input cannot be used (say, a HAR without a streamed entry).
    """
    started = time.perf_counter()
    capture = read_capture(data, input_format=input_format, entry=entry, max_inflated=max_inflated,
                           refuse_larger=refuse_larger)
    return fold_capture(capture, dialect=dialect, transport=transport, stall=stall, progress=progress, rows=rows,
                        input_size=len(data), started=started, lane=lane)


def fold_capture(capture: Capture, *, dialect: str | None = None, transport: str | None = None,
                 stall: float = DEFAULT_STALL, progress: Progress | None = None,
                 rows: Callable[[list[dict[str, Any]], RowBounds], None] | None = None,
                 input_size: int | None = None, started: float | None = None, lane: str | None = None) -> Loaded:
    """`load` for a capture already read (a stored one, `streamfold.store`): fold and annotate it."""
    started = time.perf_counter() if started is None else started
    input_size = len(capture.body) if input_size is None else input_size
    wrong = recognise(capture.body, source=capture.source, input_size=input_size)
    forced = bool(dialect or transport)
    if forced and wrong is not None and wrong.code != "empty-input":
        wrong = None  # told what to read it as: it is folded as that
    folded = wrong is None or wrong.code not in NOT_A_STREAM
    if rows is None or not folded:
        result = fold(capture.body if folded else b"", dialect=dialect, transport=transport, progress=progress,
                      lane=lane, request_headers=capture.request_headers)
    else:
        result = fold_rows(capture.body, rows, dialect=dialect, transport=transport, progress=progress, lane=lane,
                           request_headers=capture.request_headers)
    whole = None if forced or not folded else read_whole_reply(capture.body, result)
    if whole is not None:
        result = whole[0]
    elif capture.handed_out:
        result = ended_by_finish_reason(result)
    checks = transport_notes(capture, result.transport if folded else None)
    notes = tuple(note.diagnostic() for note in (
        *capture.notes, *((wrong,) if wrong is not None else ()), *((whole[1],) if whole is not None else ()),
        *(note for note in checks if folded or note.code == "http-status")))  # not folded: the rest is moot
    timing = analyse(result, capture.reads, start=capture.started, stall=stall) if capture.reads else None
    return Loaded(capture, notes, annotate(result, notes, timing), timing, input_size,
                  time.perf_counter() - started)


def ended_by_finish_reason(result: Result) -> Result:
    """An SDK hands out no end-of-stream marker (`data: [DONE]`), so chunks it printed or an app logged never
    carry one: the reply ended when every choice has its finish reason, and only a reply without one is
    called cut (`missing-terminal`)."""
    ended = bool(result.choices) and not result.errors and all(c.finish_reason for c in result.choices)
    if not ended:
        return result
    return dataclasses.replace(result, complete=True,
                               diagnostics=tuple(d for d in result.diagnostics if d.code != "missing-terminal"))


def annotate(result: Result, notes: Iterable[Diagnostic] = (), timing: Timing | None = None) -> Result:
    """`result` with `notes` before its diagnostics and the stalls of `timing` after them."""
    before = tuple(notes)
    after = timing.stalls if timing is not None else ()
    if not before and not after:
        return result
    return dataclasses.replace(result, diagnostics=(*before, *result.diagnostics, *after))
