"""What framing noticed inside a frame becomes a finding: its code's registered
kind says whether it is an error (bytes lost or damaged) or a diagnostic, and
its default severity how much it matters. Errors the transport carried (an AWS
exception message, llama.cpp's `error:` field) go to the dialect as in-stream
errors; the rule that recognises the latter is its dialect's (`Dialect.carried_error`).
"""

from __future__ import annotations

from collections.abc import Callable

from .._codes import CODES, Kind
from ..decoding import Payload
from ..dialects import carried_error
from ..findings import Report
from ..framing import FrameIssue

__all__ = ["report_frame_issues", "report_lenient"]

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
