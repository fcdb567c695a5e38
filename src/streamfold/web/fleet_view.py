"""The fleet behind `streamfold web --fleet DIR`: its reports, its charts, the captures a filter
keeps, and one capture opened again and folded as the page folds any.

    GET /api/fleet                      {"fleet": name, "captures": N, "filters": {name: [[value, count], ...]},
                                         "reports": [{name, title, question, sql, columns, rows, more}]}:
                                        `fleet report`'s canned questions (`fleet.report.REPORTS`)
    GET /api/fleet/captures?dialect=&model=&outcome=&finding=&offset=&limit=
                                        {"total", "offset", "limit", "rows": [...], "outcomes": [[class, count]],
                                         "latency": {"ttfb": histogram, "ttft": histogram}}
    GET /api/fleet/fold?id=CAPTURE_ID   the fold view (with frames=range: NDJSON, as POST /api/fold), plus
                                        "fleet": the capture's row (where it came from, its class)
    GET /api/fleet/body?id=CAPTURE_ID   its stream body, for the page's diff

Every value a filter takes is a DuckDB parameter, never SQL text. A capture is
named by its `capture_id` in the fleet only: where to read it is the fleet's own
row (`fleet.reopen`). Everything here blocks (DuckDB, reading files); the app
runs it in its threadpool. A `fleet fold` that adds to the fleet shows at the
next request: the views are made again when its ledger changed.
"""

from __future__ import annotations

import datetime
import decimal
import os
import shlex
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..outcomes import OUTCOME_CLASSES
from ..result import Result
from ..services.load import fold_capture
from .file_view import SpanMap
from .fold_view import build_fold_view, loaded_view
from .refusal import ApiError, TooLargeError, too_large_message

if TYPE_CHECKING:
    from ..fleet.report import Report

#: A DuckDB connection: the page names no fleet library itself (they are the fleet extra's, imported by
#: `streamfold.fleet` when --fleet is given).
Connection = Any

__all__ = ["DEFAULT_PAGE", "FILTERS", "MAX_PAGE", "FleetFilters", "FleetSource", "fleet_filters"]

DEFAULT_PAGE = 100
MAX_PAGE = 500
#: Values a filter lists, most frequent first, and rows a report shows.
_LISTED = 200
_REPORT_ROWS = 200
_MAX_VALUE = 1000
_MAX_OFFSET = 10**12
_HISTOGRAM_BINS = 12

#: Each filter: its query parameter, what the page calls it, and the condition it puts on `captures`.
FILTERS: dict[str, tuple[str, str]] = {
    "dialect": ("dialect", "dialect = ?"),
    # The model the reply reports; when it reports none, the one the request asked for.
    "model": ("model", "coalesce(model, request_model) = ?"),
    "outcome": ("outcome class", "outcome_class = ?"),
    "finding": ("finding code", "list_contains(finding_codes, ?)"),
}

#: The SQL of each filter's listed values (`captures` has one value a row; a capture's codes are a list).
_VALUES = {
    "dialect": "SELECT dialect AS value, count(*) AS n FROM captures GROUP BY ALL",
    "model": "SELECT coalesce(model, request_model) AS value, count(*) AS n FROM captures GROUP BY ALL",
    "outcome": "SELECT outcome_class AS value, count(*) AS n FROM captures GROUP BY ALL",
    "finding": "SELECT code AS value, count(*) AS n FROM (SELECT unnest(finding_codes) AS code FROM captures) "
               "GROUP BY ALL",
}

#: The columns of a listed capture.
_LISTED_COLUMNS = ("capture_id, source, location, entry, started_at, method, url, host, status, outcome_class, "
                   "read_error, dialect, coalesce(model, request_model) AS model, frames_total, finding_codes, ttfb, "
                   "ttft, body_bytes")


@dataclass(frozen=True)
class FleetFilters:
    """The filter values given (None: not filtered)."""

    dialect: str | None = None
    model: str | None = None
    outcome: str | None = None
    finding: str | None = None

    def where(self) -> tuple[str, list[str]]:
        """The WHERE clause (with `?` for each value) and its parameters."""
        given = [(FILTERS[name][1], value) for name, value in vars(self).items() if value is not None]
        if not given:
            return "", []
        return " WHERE " + " AND ".join(condition for condition, _ in given), [value for _, value in given]


def fleet_filters(**values: str | None) -> FleetFilters:
    """The filters of a request, checked (an empty text is no filter)."""
    checked: dict[str, str | None] = {}
    for name, value in values.items():
        if name not in FILTERS:
            raise ApiError(400, f"unknown filter {name!r}; known: {', '.join(FILTERS)}")
        if value is not None and len(value) > _MAX_VALUE:
            raise ApiError(400, f"a {FILTERS[name][0]} to filter by is at most {_MAX_VALUE} characters")
        checked[name] = value or None
    return FleetFilters(**checked)


def page_bounds(offset: str, limit: str) -> tuple[int, int]:
    if not (offset.isascii() and offset.isdigit() and len(offset) <= 13 and int(offset) <= _MAX_OFFSET):
        raise ApiError(400, f"offset must be a number of captures to skip (0 or more), got {offset[:40]!r}")
    if not (limit.isascii() and limit.isdigit() and len(limit) <= 4 and 1 <= int(limit) <= MAX_PAGE):
        raise ApiError(400, f"limit must be a number of captures from 1 to {MAX_PAGE}, got {limit[:40]!r}")
    return int(offset), int(limit)


class FleetSource:
    """The fleet directory at `path` (`streamfold fleet fold`'s output). Its DuckDB views are made once and
    again whenever a run commits more (the ledger changed); the server's threads take turns on them."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.name = os.path.basename(os.path.normpath(self.path)) or self.path
        self._lock = threading.Lock()
        self._opened: tuple[tuple[int, int] | None, Connection] | None = None
        self._summary: tuple[tuple[int, int] | None, dict[str, Any]] | None = None

    def check(self) -> None:
        """Raises `FleetError` (its sentence) when the directory is no fleet."""
        with self._db():
            pass

    def summary(self) -> dict[str, Any]:
        """Reports and filter values, kept until a run commits more (the reports read every table)."""
        stamp = self._stamp()
        kept = self._summary
        if kept is not None and kept[0] == stamp:
            return kept[1]
        with self._db() as db:
            (total,) = db.execute("SELECT count(*) FROM captures").fetchone() or (0,)
            filters = {name: [[_plain(value), count] for value, count in db.execute(
                f"{sql} ORDER BY n DESC, value NULLS LAST LIMIT {_LISTED}").fetchall() if value is not None]
                for name, sql in _VALUES.items()}
            from ..fleet.report import REPORTS

            reports = [_report(db, report) for report in REPORTS]
        summary = {"fleet": self.name, "captures": total, "filters": filters, "reports": reports,
                   "outcome_classes": list(OUTCOME_CLASSES)}
        self._summary = (stamp, summary)
        return summary

    def captures(self, filters: FleetFilters, offset: int, limit: int) -> dict[str, Any]:
        where, parameters = filters.where()
        with self._db() as db:
            # The kept rows once (the views read the Parquet files at every query), the values as parameters.
            db.execute(f"CREATE TEMP TABLE kept AS SELECT {_LISTED_COLUMNS} FROM captures{where}", parameters)
            (total,) = db.execute("SELECT count(*) FROM kept").fetchone() or (0,)
            columns, rows = _rows(db, "SELECT * FROM kept ORDER BY started_at DESC NULLS LAST, capture_id "
                                      "LIMIT ? OFFSET ?", [limit, offset])
            found = dict(db.execute("SELECT outcome_class, count(*) FROM kept GROUP BY ALL").fetchall())
            latency = {name: _histogram(db, name) for name in ("ttfb", "ttft")}
        outcomes = [[name, found[name]] for name in OUTCOME_CLASSES if name in found]
        outcomes += [[name, count] for name, count in found.items() if name not in OUTCOME_CLASSES]
        return {"total": total, "offset": offset, "limit": limit,
                "rows": [dict(zip(columns, row)) for row in rows], "outcomes": outcomes, "latency": latency}

    def row(self, capture_id: str) -> dict[str, Any]:
        with self._db() as db:
            columns, rows = _rows(db, f"SELECT {_LISTED_COLUMNS}, fingerprint FROM captures WHERE capture_id = ?",
                                  [capture_id])
        if not rows:
            raise ApiError(404, f"this fleet holds no capture {capture_id[:200]!r}")
        return dict(zip(columns, rows[0]))

    def view(self, capture_id: str, *, dialect: str | None, transport: str | None, entry: str | None,
             max_size: int, lane: str | None = None, frames: str = "all",
             progress: Callable[[int, int], None] | None = None,
             keep: Callable[[Result, bytes, Sequence[float], SpanMap], str] | None = None) -> dict[str, Any]:
        """The capture folded as the page folds any, plus "fleet" (its row). Raises `InputError` (a
        `ReopenError` when its location is gone or changed) or `ApiError`."""
        from ..fleet.reopen import reopen  # the fleet extra, there when --fleet was given

        row = self.row(capture_id)
        reopened = reopen(row, entry=entry, max_size=max_size)
        if len(reopened.capture.body) > max_size:
            raise TooLargeError(f"{too_large_message(len(reopened.capture.body), max_size)} (with --fleet "
                                f"{shlex.quote(self.path)})")
        if reopened.data is not None:
            view = build_fold_view(reopened.data, dialect=dialect, transport=transport, frames=frames,
                                   progress=progress, keep=keep, capture=reopened.capture, lane=lane)
        else:
            loaded = fold_capture(reopened.capture, dialect=dialect, transport=transport, progress=progress,
                                  lane=lane)
            view = loaded_view(loaded, None, frames=frames, keep=keep)
        view["fleet"] = {key: value for key, value in row.items() if key != "fingerprint"}
        return view

    def body(self, capture_id: str, max_size: int) -> bytes:
        """The capture's stream body, read again (the page's diff posts it). Raises as `view`."""
        from ..fleet.reopen import reopen

        return reopen(self.row(capture_id), max_size=max_size).capture.body

    @contextmanager
    def _db(self) -> Iterator[Connection]:
        """The fleet's views, made again when a run committed more, one call at a time (a DuckDB cursor would
        not see the empty tables `open_fleet` registers for a table no run wrote). Raises `FleetError`."""
        from ..fleet.query import open_fleet

        stamp = self._stamp()
        with self._lock:
            if self._opened is None or self._opened[0] != stamp:
                if self._opened is not None:
                    self._opened[1].close()
                self._opened = (stamp, open_fleet(self.path))
            db = self._opened[1]
            try:
                yield db
            finally:
                db.execute("DROP TABLE IF EXISTS kept")

    def _stamp(self) -> tuple[int, int] | None:
        """What changes when a run commits: the ledger's size and time (None: there is none yet)."""
        try:
            status = os.stat(os.path.join(self.path, "_fleet", "ledger.jsonl"))
        except OSError:
            return None
        return status.st_mtime_ns, status.st_size


def _report(db: Connection, report: Report) -> dict[str, Any]:
    from ..fleet.report import run_report

    answer: dict[str, Any] = {"name": report.name, "title": report.title, "question": report.question,
                              "sql": report.sql, "when_empty": report.when_empty}
    try:
        columns, rows = run_report(db, report)
    except Exception as exc:  # duckdb.Error, imported lazily: one report that fails is said, the others shown
        return {**answer, "error": f"{type(exc).__name__}: {exc}"}
    return {**answer, "columns": columns, "rows": [[_plain(value) for value in row] for row in rows[:_REPORT_ROWS]],
            "more": len(rows) > _REPORT_ROWS}


def _histogram(db: Connection, column: str) -> dict[str, Any]:
    """The kept captures by `column` (seconds) in equal bins from 0, and how many have it at all."""
    count, highest = db.execute(f"SELECT count({column}), max({column}) FROM kept").fetchone() or (0, None)
    if not count or highest is None:
        return {"count": 0, "bins": []}
    (counts,) = db.execute(f"SELECT histogram({column}, equi_width_bins(0.0, greatest(?, 1e-3), ?, true)) FROM kept",
                           [float(highest), _HISTOGRAM_BINS]).fetchone() or ({},)
    bins, low = [], 0.0
    for high, number in sorted(counts.items()):
        bins.append([low, float(high), number])
        low = float(high)
    return {"count": count, "bins": bins}


def _rows(db: Connection, sql: str,
          parameters: list[Any] | None = None) -> tuple[list[str], list[list[Any]]]:
    relation = db.execute(sql, parameters) if parameters is not None else db.execute(sql)
    columns = [description[0] for description in relation.description or ()]
    return columns, [[_plain(value) for value in row] for row in relation.fetchall()]


def _plain(value: Any) -> Any:
    """A DuckDB value as JSON has it: a time as ISO 8601 text, a decimal as a number, bytes as text."""
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, (datetime.date, datetime.time, datetime.timedelta)):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    return value
