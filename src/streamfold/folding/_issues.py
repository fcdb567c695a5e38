"""What framing noticed inside a frame, and what the end of the stream says, become findings: a code's registered
kind says whether it is an error (bytes lost or damaged) or a diagnostic, and
its default severity how much it matters. Errors the transport carried (an AWS
exception message, llama.cpp's `error:` field) go to the dialect as in-stream
errors; the rule that recognises the latter is its dialect's (`Dialect.carried_error`).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice

from .._codes import CODES, Kind
from ..decoding import GluedDocuments, Payload
from ..dialects import Dialect, carried_error
from ..findings import Report, Severity
from ..framing import FrameIssue
from ..framing._records import FrameStore

__all__ = ["report_frame_issues", "report_lenient", "report_stream_end"]

#: (frame, message, raw, offset, line) of an error the transport carried.
StreamErrorSink = Callable[[int, str, "str | None", int, int], None]


def report_frame_issues(frame: int, issues: tuple[FrameIssue, ...], report: Report,
                        stream_error: StreamErrorSink) -> None:
    for issue in issues:
        if issue.code == "eventstream-exception":
            stream_error(frame, issue.message, issue.text or None, issue.offset, issue.line)
            continue
        if (carried := carried_error(issue)) is not None:
            stream_error(frame, carried[0], carried[1], issue.offset, issue.line)
            continue
        info = CODES.get(issue.code)
        if info is None:  # pragma: no cover - every framer's code is registered (test_findings_registry)
            raise AssertionError(f"unregistered frame issue {issue.code!r}")
        if info.kind is Kind.ERROR:
            report.error(info.code, frame, issue.message, offset=issue.offset, line=issue.line)
        else:
            report.diagnostic(info.code, frame, issue.message, offset=issue.offset, line=issue.line)


def report_lenient(frame: int, payload: Payload, report: Report) -> None:
    """A frame that is JSON only to lenient decoders (NaN, Infinity, 1e999, a lone surrogate):
    `payload.error` says what the decoding replaced."""
    report.diagnostic(
        "non-strict-json", frame,
        f"frame {frame} is JSON only to lenient decoders: {payload.error}, so that the result stays strict "
        "JSON and UTF-8 (JSON.parse and msgspec reject this frame; Python's json takes it)")


def report_stream_end(report: Report, frames: FrameStore, transport: str | None, dialect: Dialect,
                      after_terminal: list[int], *, has_data: bool) -> None:
    """What the end of the stream says: a last frame left open, data frames after the terminal
    frame (listed, not folded), no terminal frame at all."""
    if frames and not frames.terminated(-1):
        last = len(frames) - 1  # (its index: no Frame made, which would split a block's million comments)
        if transport == "sse":
            message = (f"the stream ended inside frame {last} (no blank line after it): a spec-exact "
                       "SSE client (a browser's EventSource, many SDKs) drops it; streamfold folded it")
            severity = Severity.WARNING
        else:
            message = f"the last frame ({last}) has no terminator: the capture may be cut"
            severity = Severity.INFO
        report.diagnostic("unterminated-final-frame", last, message, severity=severity)
    shown = dialect.reported
    if after_terminal:
        first = after_terminal[0]
        report.diagnostic(
            "frame-after-terminal", first,
            f"{len(after_terminal)} data frame(s) came after the terminal frame {dialect.terminal} "
            f"({shown.terminal_hint}), "
            f"starting with frame {first}; clients stop reading at the terminal frame, so they are listed "
            "but not folded", frames=list(after_terminal))
    if not dialect.ended and has_data and dialect.expects_end and not dialect.failed:
        report.diagnostic(
            "missing-terminal", len(frames) - 1 if frames else None,
            f"the stream ended without saying it was over ({shown.terminal_hint} for {shown.name}): "
            "it was probably cut off, so the reply may be truncated")


#: A `glued-frames` finding's documents in its details, and their starts in its message, at most (a frame can
#: hold a million; each is folded, and `count` counts them all).
_DOCUMENTS_LISTED = 100
_STARTS_LISTED = 20


def report_glued(report: Report, index: int, documents: GluedDocuments) -> None:
    """Frame `index` holds several JSON documents: a lost blank line (each is folded all the same)."""
    listed = list(islice(documents, _DOCUMENTS_LISTED))
    starts = ", ".join(str(start) for _, start in listed[:_STARTS_LISTED])
    if len(documents) > _STARTS_LISTED:
        starts += ", …"
    report.diagnostic(
        "glued-frames", index,
        f"frame {index} holds {len(documents)} JSON documents (at characters {starts} of its data): "
        "the blank line between frames was lost. Each was folded; a client that parses the frame as "
        "one document fails here",
        documents=[document for document, _ in listed], count=len(documents))


def report_invalid_json(report: Report, index: int, data: str, payload: Payload, terminated: bool) -> None:
    """Frame `index` is not JSON: kept aside, with what probably happened to it."""
    hint = ""
    if "data:" in data:
        hint = " It contains `data:`: a frame was probably cut and the next one glued onto it."
    elif not terminated:
        hint = " The stream ended inside this frame."
    report.error(
        "invalid-json", index,
        f"frame {index} is not valid JSON: {payload.error}: character {payload.position} "
        f"of its data; it is kept aside and the rest of the stream folds.{hint}",
        raw=data)
