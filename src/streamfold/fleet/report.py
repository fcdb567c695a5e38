"""The questions users ask of a fleet, each one SQL query over the views of `query.open_fleet`.

    with open_fleet("fleet/") as db:
        for report in REPORTS:
            columns, rows = run_report(db, report)

`REPORTS` is closed and its values are pure: `streamfold fleet report` prints
them with their SQL, the page shows the same ones, and docs/fleet-queries.md
is built from them. No report takes user text: a filter the page adds is a
parameter, never part of the SQL.

"The model" is the one the reply reports, else the one the request asked for;
"the gateway" is the request's host. A rate is a share of the group's
captures (or tool calls), rounded to four places.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

from .query import rows_of

__all__ = ["REPORTS", "Report", "report_named", "run_report"]


@dataclass(frozen=True, slots=True)
class Report:
    #: What `--only` takes.
    name: str
    title: str
    #: One sentence: what it answers, its terms defined.
    question: str
    sql: str
    #: What to say when it has no rows.
    when_empty: str


_MODEL = "coalesce(model, request_model)"
#: Captures that are streams: an unreadable capture or a body that is no stream has no end to count.
_STREAMS = "outcome_class NOT IN ('unreadable', 'not-a-stream')"

REPORTS: tuple[Report, ...] = (
    Report(
        "outcomes", "How streams ended",
        "How each stream ended (its outcome class: complete, client-cut, upstream-cut, errored, damaged, "
        "arguments-invalid, short, not-a-stream, unreadable), by dialect, model and gateway; `share` is of the "
        "group's captures.",
        f"""SELECT dialect, {_MODEL} AS model, host, outcome_class, count(*) AS captures,
       round(count(*) / sum(count(*)) OVER (PARTITION BY dialect, {_MODEL}, host), 4) AS share
FROM captures
GROUP BY dialect, {_MODEL}, host, outcome_class
ORDER BY dialect, model NULLS LAST, host NULLS LAST, captures DESC, outcome_class""",
        "The fleet has no captures."),
    Report(
        "tool-arguments", "Tool-argument failures",
        "Of the tool calls each model made through each gateway, how many had arguments that are not valid "
        "JSON (`tool_calls.error` set).",
        f"""SELECT {_MODEL} AS model, host, count(*) AS tool_calls,
       count(*) FILTER (WHERE t.error IS NOT NULL) AS failed,
       round(count(*) FILTER (WHERE t.error IS NOT NULL) / count(*), 4) AS failed_rate
FROM tool_calls AS t JOIN captures AS c USING (capture_id)
GROUP BY {_MODEL}, host
ORDER BY failed DESC, tool_calls DESC, model NULLS LAST, host NULLS LAST""",
        "No capture has a tool call."),
    Report(
        "truncation", "Truncation and missing usage",
        "Of the streams each provider (dialect and gateway) sent, how many were cut (client-cut or upstream-cut) "
        "and how many reported no token usage; unreadable captures and bodies that are no stream are left out.",
        f"""SELECT c.dialect, host, count(*) AS streams,
       count(*) FILTER (WHERE outcome_class IN ('client-cut', 'upstream-cut')) AS cut,
       round(count(*) FILTER (WHERE outcome_class IN ('client-cut', 'upstream-cut')) / count(*), 4) AS cut_rate,
       count(*) FILTER (WHERE outcome_class = 'client-cut') AS client_cut,
       count(*) FILTER (WHERE outcome_class = 'upstream-cut') AS upstream_cut,
       count(*) FILTER (WHERE u.capture_id IS NULL) AS missing_usage,
       round(count(*) FILTER (WHERE u.capture_id IS NULL) / count(*), 4) AS missing_usage_rate
FROM captures AS c LEFT JOIN usage AS u USING (capture_id)
WHERE {_STREAMS}
GROUP BY c.dialect, host
ORDER BY streams DESC, c.dialect, host NULLS LAST""",
        "The fleet has no streams."),
    Report(
        "latency", "Time to first byte and first token",
        "Per model, the seconds from the request to the body's first byte (ttfb) and to the first text (ttft), "
        "p50 and p95 (interpolated), over the captures recorded with arrival times, and the stalls in them "
        "(`stall` findings: a gap between frames over the threshold).",
        f"""SELECT {_MODEL} AS model, count(*) AS timed,
       round(quantile_cont(ttfb, 0.5), 3) AS ttfb_p50, round(quantile_cont(ttfb, 0.95), 3) AS ttfb_p95,
       round(quantile_cont(ttft, 0.5), 3) AS ttft_p50, round(quantile_cont(ttft, 0.95), 3) AS ttft_p95,
       count(*) FILTER (WHERE coalesce(s.stalls, 0) > 0) AS stalled, coalesce(sum(s.stalls), 0) AS stalls
FROM captures AS c
LEFT JOIN (SELECT capture_id, count(*) AS stalls FROM findings WHERE code = 'stall' GROUP BY capture_id) AS s
  USING (capture_id)
WHERE ttfb IS NOT NULL OR ttft IS NOT NULL
GROUP BY {_MODEL}
ORDER BY timed DESC, model NULLS LAST""",
        "No capture had arrival times."),
    Report(
        "opaque-state", "Opaque state carried and dropped",
        "Which replies carried opaque state a client must send back (signatures, encrypted reasoning: "
        "`opaque_count`), and which streams started a value and never completed it (`opaque_dropped`: a thinking "
        "block whose signature never arrived, as when the stream was cut inside it or a gateway lost the delta), "
        "by dialect, model and gateway.",
        f"""SELECT dialect, {_MODEL} AS model, host, count(*) AS captures,
       count(*) FILTER (WHERE opaque_count > 0) AS carrying, sum(opaque_count) AS opaque_values,
       count(*) FILTER (WHERE opaque_dropped > 0) AS dropping, sum(opaque_dropped) AS dropped_values
FROM captures
GROUP BY dialect, {_MODEL}, host
HAVING sum(opaque_count) + sum(opaque_dropped) > 0
ORDER BY dropping DESC, carrying DESC, dialect, model NULLS LAST, host NULLS LAST""",
        "No capture carried opaque state."),
    Report(
        "findings", "Top finding codes",
        "The 20 finding codes found most often, with the captures they were found in and one of them to open "
        "(the first by id: its `location` and `entry`).",
        """SELECT f.code, f.kind, f.findings, f.captures, f.example AS capture_id, c.location, c.entry
FROM (SELECT code, kind, count(*) AS findings, count(DISTINCT capture_id) AS captures, min(capture_id) AS example
      FROM findings GROUP BY code, kind) AS f
LEFT JOIN captures AS c ON c.capture_id = f.example
ORDER BY f.findings DESC, f.code, f.kind
LIMIT 20""",
        "No capture has a finding."),
)


def report_named(name: str) -> Report:
    """The report called `name` (KeyError for none)."""
    for report in REPORTS:
        if report.name == name:
            return report
    raise KeyError(name)


def run_report(db: duckdb.DuckDBPyConnection, report: Report) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The column names and rows of `report` over the fleet `db` (`query.open_fleet`)."""
    return rows_of(db, report.sql)
