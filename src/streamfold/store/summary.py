"""The summary the store keeps in columns of `exchanges` (what the capture list
shows): a projection of the `captures` row of `streamfold.tables`, so the store
and a fleet's tables say the same thing about a capture. Folding is the
caller's (`summarizer.py`); this module only projects."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import __version__
from .._json import dumps_strict
from ..tables import TABLES_SCHEMA_VERSION

__all__ = ["OUTCOMES", "SUMMARIZED_BY", "SUMMARY_COLUMNS", "Summary", "column_values", "summary_of"]

#: How an exchange ended. NULL in the store while it is in flight.
OUTCOMES = ("complete", "client-cut", "upstream-cut", "failed")

#: The columns of `exchanges` a summary fills, in the order of `column_values`.
SUMMARY_COLUMNS = ("transport", "dialect", "complete", "ttft", "duration", "frames", "finish_reason", "findings",
                   "ttfb", "model", "response_id", "outcome_class", "summarized_by")

#: What makes the summaries this code writes (`summarized_by`): a reader compares it with its own to tell
#: whether a stored summary says what folding the body again would (a fold or a table of another version
#: may not).
SUMMARIZED_BY = f"streamfold {__version__} tables {TABLES_SCHEMA_VERSION}"


@dataclass(frozen=True, slots=True)
class Summary:
    body_bytes: int
    read_count: int
    transport: str
    dialect: str
    complete: bool
    ttft: float | None
    duration: float | None
    frames: int
    finish_reason: str | None
    #: The codes of the errors and diagnostics `show` reports, each once, in the order first seen.
    findings: tuple[str, ...]
    #: Time to first byte, from the request (`services.timing`); `ttft` is from the request too.
    ttfb: float | None = None
    #: The model and the id the reply reports.
    model: str | None = None
    response_id: str | None = None
    #: How the stream ended, the recording and the fold together (`streamfold.outcomes`).
    outcome_class: str | None = None
    #: What made the summary (`SUMMARIZED_BY` of the streamfold that folded it).
    summarized_by: str | None = None


def summary_of(capture: Mapping[str, Any]) -> Summary:
    """The store's summary of one `captures` row (`streamfold.tables`)."""
    return Summary(capture["body_bytes"] or 0, capture["read_count"] or 0, capture["transport"], capture["dialect"],
                   capture["complete"], capture["ttft"], capture["duration"], capture["frames_total"],
                   capture["finish_reason"],
                   # Every stored capture has this note (which exchange it is): the list would say it on each row.
                   tuple(code for code in capture["finding_codes"] if code != "input-store"), capture["ttfb"],
                   capture["model"], capture["response_id"], capture["outcome_class"], SUMMARIZED_BY)


def column_values(summary: Summary) -> tuple[Any, ...]:
    """The values of `SUMMARY_COLUMNS` as SQLite keeps them."""
    return (summary.transport, summary.dialect, int(summary.complete), summary.ttft, summary.duration, summary.frames,
            summary.finish_reason, dumps_strict(list(summary.findings), ensure_ascii=True), summary.ttfb,
            summary.model, summary.response_id, summary.outcome_class, summary.summarized_by)
