"""A folded capture as rows of flat tables, the one relational form of results.

    rows = tables(result, "db#3", capture=CaptureInfo(source="store", ttft=0.21))
    rows["captures"][0]["finish_reason"], rows["findings"], rows["tool_calls"]

`SCHEMA` declares every table once: its columns in order, each with a type of
the closed vocabulary `TYPES` (which maps one to one to an Arrow type, so a
fleet writes the rows to Parquet without guessing), whether it may be null,
and one line saying what it holds. `docs/tables.md` is generated from it; the
capture store's summary columns are a projection of the `captures` row
(`store/summary.py`). JSON text appears only where no column fits: a
vendor's own usage object, a finding's details, parsed tool arguments (any
JSON value) and `native`.

Change a column and `TABLES_SCHEMA_VERSION` changes with it: readers of
stored tables tell the versions apart by it.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ._json import dumps_compact
from .dialects.registry import spec_of
from .findings import BINARY_TRANSPORTS, Diagnostic, StreamError
from .outcomes import OUTCOME_CLASSES, outcome_class
from .result import Result

__all__ = ["ARROW_TYPES", "SCHEMA", "TABLES_SCHEMA_VERSION", "TYPES", "CaptureInfo", "Column", "Row", "Table",
           "table_docs", "table_rows", "tables", "unreadable_rows", "unreadable_tables", "value_fits"]

#: The version of `SCHEMA`: bumped whenever a table or a column is added, renamed, retyped or dropped.
TABLES_SCHEMA_VERSION = 3

#: Each column type and the Arrow type it is written as.
ARROW_TYPES: Mapping[str, str] = {
    "bool": "bool",
    "int64": "int64",
    "float64": "float64",
    "string": "string",
    # JSON text, as Arrow's canonical JSON extension type (string storage: a reader that does not know it
    # reads a string).
    "json": "extension<arrow.json>",
    "list<string>": "list<string>",
    "list<int64>": "list<int64>",
    "timestamp[us, UTC]": "timestamp[us, tz=UTC]",
}
TYPES = tuple(ARROW_TYPES)


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: str
    nullable: bool
    description: str


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    description: str
    columns: tuple[Column, ...]
    #: Only made when asked for (`tables(..., frames=True)`).
    on_request: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)


def _table(name: str, description: str, *columns: tuple[str, str, bool, str], on_request: bool = False) -> Table:
    return Table(name, description, tuple(Column(*column) for column in columns), on_request)


_ID = ("capture_id", "string", False,
       "The capture's id, as the caller named it (the store's `PATH#ID`, a path, a fleet key).")
_CHOICE = ("choice", "int64", False, "The choice's index.")
_FRAME_FIELDS = (("frame", "int64", True, "The frame it points at, if any."),
                 ("offset", "int64", True, "Its byte offset in the stream body, if known."),
                 ("line", "int64", True, "Its 1-based line in the stream body, if known."))

SCHEMA: Mapping[str, Table] = {table.name: table for table in (
    _table("captures", "One row per capture: how the stream ended and what the reply says about itself.",
           _ID,
           ("source", "string", True, "What the input was: `store`, `har`, `raw`, `curl-verbose`, ..."),
           ("location", "string", True, "Where to open the capture again (a path, the store's `PATH#ID`, a URL)."),
           ("entry", "string", True, "Which capture of `location` it is, when it holds many: a HAR or cassette "
                                     "entry's index, a JSONL line, a Parquet row."),
           ("method", "string", True, "The request's HTTP method."),
           ("url", "string", True, "The request's URL (credentials redacted by the store)."),
           ("host", "string", True, "The host of `url`: the API or gateway the request went to."),
           ("request_model", "string", True, "The model the request asked for."),
           ("started_at", "timestamp[us, UTC]", True, "When the request was sent."),
           ("status", "int64", True, "The HTTP status of the response."),
           ("outcome", "string", True,
            "How the exchange ended as recorded: `complete`, `client-cut`, `upstream-cut`, `failed`."),
           ("outcome_class", "string", False,
            "How the stream ended, the recording and the fold together (see *Outcome classes* below)."),
           ("read_error", "string", True,
            "Why the capture could not be read or folded (its class is then `unreadable`)."),
           ("transport", "string", False, "The framing: `sse`, `ndjson`, `json-array`, `aws-eventstream`, ..."),
           ("dialect", "string", False, "The vendor dialect the fold read, or `unknown`."),
           ("complete", "bool", False, "A terminal frame was seen and the server sent no error."),
           ("model", "string", True, "The model the reply reports."),
           ("response_id", "string", True, "The reply's own id (`chatcmpl-...`, `msg_...`)."),
           ("frames_total", "int64", False, "Frames in the stream."),
           ("frames_data", "int64", False, "Frames that carried data."),
           ("frames_comments", "int64", False, "Frames without data (comments, keep-alives)."),
           ("frames_invalid", "int64", False, "Frames whose data did not decode."),
           ("choice_count", "int64", False, "Rows of this capture in `choices`."),
           ("tool_call_count", "int64", False, "Rows of this capture in `tool_calls`."),
           ("error_count", "int64", False, "Rows of this capture in `findings` of kind `error`."),
           ("diagnostic_count", "int64", False, "Rows of this capture in `findings` of kind `diagnostic`."),
           ("finish_reason", "string", True, "The first finish reason a choice has, in choice order."),
           ("finding_codes", "list<string>", False,
            "The codes of the errors, then the diagnostics, each once, in the order first seen."),
           ("body_bytes", "int64", True, "Bytes of the stream body as recorded."),
           ("read_count", "int64", True, "Reads the body arrived in, when arrival times were recorded."),
           ("ttfb", "float64", True, "Seconds from the request to the body's first byte, if known."),
           ("ttft", "float64", True, "Seconds from the request to the first text (content, reasoning, refusal or "
                                      "tool arguments), if known."),
           ("duration", "float64", True,
            "Seconds from the request (its time unknown: the first byte) to the last frame, if known."),
           ("opaque_count", "int64", False,
            "Opaque values the reply carries whole (signatures, encrypted reasoning: a client sends them back "
            "unchanged with the next request)."),
           ("opaque_dropped", "int64", False,
            "Opaque values the stream started but never completed (an Anthropic thinking block whose signature "
            "never arrived: the next request fails with it); 0 where a dialect's opaque values arrive whole."),
           ("native", "json", True, "What the dialect's export needs beyond the reply (JSON result's `native`)."),
           ("lanes", "json", True, "The replies the capture interleaves, when it holds several (Realtime responses, "
                                   "WebSocket `stream_id`s, agents), one of them folded (JSON result's `lanes`)."),
           ("fingerprint", "string", True, "What identifies these bytes of the capture (a fleet folds a capture "
                                           "again only when its fingerprint changed).")),
    _table("choices", "One row per choice of the reply.",
           _ID, _CHOICE,
           ("role", "string", True, "The role the stream gave it."),
           ("content", "string", False, "The visible reply, joined."),
           ("reasoning", "string", True, "Reasoning or thinking text, joined; null when the stream had none."),
           ("refusal", "string", True, "The refusal text, if any."),
           ("finish_reason", "string", True, "`stop`, `length`, `tool_calls`, `content_filter`, `error`, or null."),
           ("finish_reason_raw", "string", True, "The vendor's own finish reason."),
           ("tool_call_count", "int64", False, "Rows of this choice in `tool_calls`."),
           ("block_types", "list<string>", False, "Each block's type (`text`, `reasoning`, `tool_call`, ...)."),
           ("block_indexes", "list<int64>", False, "Each block's index."),
           ("block_first_frames", "list<int64>", False, "The first frame that fed each block."),
           ("block_last_frames", "list<int64>", False, "The last frame that fed each block.")),
    _table("tool_calls", "One row per tool call, in the order of their identity in the stream.",
           _ID, _CHOICE,
           ("position", "int64", False, "The call's place among its choice's tool calls (the JSON's `index`)."),
           ("key", "int64", False, "The dialect's key for the call in the stream (OpenAI `index`, block index)."),
           ("id", "string", True, "The call's id."),
           ("name", "string", True, "The tool's name."),
           ("arguments", "string", False, "Every argument fragment joined, exactly as streamed."),
           ("parsed", "json", True, "The parsed (or recovered) arguments; null when `error` is set."),
           ("error", "string", True, "Why the arguments did not parse, with the position in `arguments`.")),
    _table("findings", "One row per error and per diagnostic, each pointing at a frame where it can.",
           _ID,
           ("kind", "string", False, "`error` (went wrong in the stream) or `diagnostic` (suspicious)."),
           ("position", "int64", False, "Its place among the capture's findings of its kind."),
           ("code", "string", False, "The stable finding code (docs: findings)."),
           ("severity", "string", False, "`error`, `warning` or `info` (every error is `error`)."),
           *_FRAME_FIELDS,
           ("message", "string", False, "What happened, for a person."),
           ("raw", "string", True, "An error's offending text, as received."),
           ("details", "json", True, "A diagnostic's details for programs, if it has any.")),
    _table("usage", "One row per capture whose reply reported token usage.",
           _ID,
           ("input_tokens", "int64", True, "Tokens of the prompt."),
           ("output_tokens", "int64", True, "Tokens generated."),
           ("reasoning_tokens", "int64", True, "Of the output, tokens of reasoning."),
           ("cache_read_tokens", "int64", True, "Of the input, tokens read from the prompt cache."),
           ("total_tokens", "int64", True, "The total the vendor reported."),
           ("raw", "json", True, "The vendor's own usage object, as last sent.")),
    _table("frames", "One row per frame of the stream (made only when asked: it is the largest table).",
           _ID,
           ("frame", "int64", False, "The frame's index."),
           ("offset", "int64", False, "Byte offset of the frame's first byte in the stream body."),
           ("line", "int64", True, "Its 1-based line; null on a binary transport."),
           ("kind", "string", False, "What its payload is: `json`, `done`, `comment`, `empty`, `glued`, `invalid`."),
           ("event", "string", True, "Its SSE event name."),
           ("event_id", "string", True, "Its SSE `id`."),
           ("bytes", "int64", False, "Its length in bytes on the wire."),
           ("terminated", "bool", False, "False for a final frame the stream never finished."),
           ("issue_codes", "list<string>", False, "The codes of what the framer noticed on it."),
           on_request=True),
)}


@dataclass(frozen=True, slots=True)
class CaptureInfo:
    """What the caller knows of a capture beyond its bytes; fills the nullable columns of `captures`."""

    source: str | None = None
    location: str | None = None
    method: str | None = None
    url: str | None = None
    entry: str | None = None
    request_model: str | None = None
    #: Seconds since the epoch, or an aware datetime.
    started_at: float | datetime.datetime | None = None
    status: int | None = None
    outcome: str | None = None
    ttfb: float | None = None
    ttft: float | None = None
    duration: float | None = None
    body_bytes: int | None = None
    read_count: int | None = None
    fingerprint: str | None = None


#: A row as a tuple: its table's values in the order of its columns (`Table.names`).
Row = tuple[Any, ...]


def tables(result: Result, capture_id: str, *, capture: CaptureInfo | None = None,
           frames: bool = False) -> dict[str, list[dict[str, Any]]]:
    """The rows of every table for one folded capture (`frames` too when asked), each row with
    exactly its table's columns, in their order."""
    return _as_dicts(table_rows(result, capture_id, capture=capture, frames=frames))


def unreadable_tables(capture_id: str, reason: str, *, capture: CaptureInfo | None = None,
                      frames: bool = False) -> dict[str, list[dict[str, Any]]]:
    """The rows of a capture that could not be read or folded: one `captures` row saying why (`read_error`),
    class `unreadable`, with what is known of where it came from; no rows in the other tables."""
    return _as_dicts(unreadable_rows(capture_id, reason, capture=capture, frames=frames))


def table_rows(result: Result, capture_id: str, *, capture: CaptureInfo | None = None,
               frames: bool = False) -> dict[str, list[Row]]:
    """`tables()` with each row a tuple in its table's column order: what a fleet makes into Arrow columns
    (a dict a row costs a fleet a tenth of the fold)."""
    out: dict[str, list[Row]] = {
        "captures": [_capture_row(result, capture_id, capture or CaptureInfo())],
        "choices": [], "tool_calls": [], "findings": [],
        "usage": [] if result.usage is None else [_usage_row(result, capture_id)],
    }
    for choice in result.choices:
        blocks = choice.blocks
        out["choices"].append((
            capture_id, choice.index, choice.role, choice.content, choice.reasoning, choice.refusal,
            choice.finish_reason, choice.finish_reason_raw, len(choice.tool_calls),
            [block.type for block in blocks], [block.index for block in blocks],
            [block.frames[0] for block in blocks], [block.frames[1] for block in blocks]))
        if choice.tool_calls:
            out["tool_calls"].extend([
                (capture_id, choice.index, call.index, call.key, call.id, call.name, call.arguments,
                 None if call.error is not None else dumps_compact(call.parsed), call.error)
                for call in choice.tool_calls])
    if result.errors or result.diagnostics:
        out["findings"].extend([_finding_row(capture_id, position, error)
                                for position, error in enumerate(result.errors)])
        out["findings"].extend([_finding_row(capture_id, position, diagnostic)
                                for position, diagnostic in enumerate(result.diagnostics)])
    if frames:
        out["frames"] = _frame_rows(result, capture_id)
    return out


def unreadable_rows(capture_id: str, reason: str, *, capture: CaptureInfo | None = None,
                    frames: bool = False) -> dict[str, list[Row]]:
    """`unreadable_tables()` with each row a tuple in its table's column order."""
    row = list(_capture_row(_NOTHING, capture_id, capture or CaptureInfo()))
    for name, value in (("transport", "unknown"), ("outcome_class", "unreadable"), ("read_error", reason)):
        row[_CAPTURE_COLUMN[name]] = value
    out: dict[str, list[Row]] = {"captures": [tuple(row)], "choices": [], "tool_calls": [], "findings": [],
                                 "usage": []}
    if frames:
        out["frames"] = []
    return out


def _as_dicts(rows: dict[str, list[Row]]) -> dict[str, list[dict[str, Any]]]:
    return {name: [dict(zip(_NAMES[name], row, strict=True)) for row in table] for name, table in rows.items()}


_NAMES = {name: table.names for name, table in SCHEMA.items()}
_CAPTURE_COLUMN = {name: position for position, name in enumerate(_NAMES["captures"])}
_NOTHING = Result("unknown", "unknown", False, None, None, {}, (), None, (), ())


def _capture_row(result: Result, capture_id: str, info: CaptureInfo) -> Row:
    counts = result.frame_counts
    errors, diagnostics = result.errors, result.diagnostics
    # Loops, not generators: a fleet makes this row millions of times, mostly for replies with one choice
    # and no findings, where a generator's set-up costs more than its work.
    codes = dict.fromkeys([error.code for error in errors] + [diagnostic.code for diagnostic in diagnostics]
                          ) if errors or diagnostics else {}
    calls, finish_reason = 0, None
    for choice in result.choices:
        calls += len(choice.tool_calls)
        if finish_reason is None and choice.finish_reason:
            finish_reason = choice.finish_reason
    opaque_count, opaque_dropped = _opaque_counts(result)
    return (
        capture_id, info.source, info.location, info.entry, info.method, info.url, _host(info.url),
        info.request_model, _timestamp(info.started_at), info.status, info.outcome,
        outcome_class(result, recorded=info.outcome, status=info.status), None,
        result.transport, result.dialect, result.complete, result.model, result.id,
        counts.get("total", 0), counts.get("data", 0), counts.get("comments", 0), counts.get("invalid", 0),
        len(result.choices), calls, len(errors), len(diagnostics), finish_reason, [str(code) for code in codes],
        info.body_bytes, info.read_count, _float(info.ttfb), _float(info.ttft), _float(info.duration),
        opaque_count, opaque_dropped,
        None if result.native is None else dumps_compact(result.native),
        dumps_compact([lane.to_dict() for lane in result.lanes]) if result.lanes else None, info.fingerprint,
    )


def _opaque_counts(result: Result) -> tuple[int, int]:
    """`opaque_count` and `opaque_dropped`."""
    try:
        spec = spec_of(result.dialect)
    except KeyError:  # `unknown`
        return 0, 0
    if not spec.holds_opaque(result):  # no export to build: most replies hold no opaque state
        return 0, 0
    try:
        exported = result.export()
    except NotImplementedError:
        return 0, 0
    return len(spec.opaque_state(exported)), spec.opaque_dropped(exported)


def _usage_row(result: Result, capture_id: str) -> Row:
    usage = result.usage
    assert usage is not None
    return (capture_id, usage.input_tokens, usage.output_tokens, usage.reasoning_tokens, usage.cache_read_tokens,
            usage.total_tokens, None if usage.raw is None else dumps_compact(usage.raw))


def _finding_row(capture_id: str, position: int, finding: StreamError | Diagnostic) -> Row:
    if isinstance(finding, StreamError):
        kind, severity, raw, details = "error", "error", finding.raw, None
    else:
        kind, severity, raw = "diagnostic", finding.severity.value, None
        details = dumps_compact(finding.details) if finding.details else None
    return (capture_id, kind, position, str(finding.code), severity, finding.frame, finding.offset, finding.line,
            finding.message, raw, details)


def _frame_rows(result: Result, capture_id: str) -> list[Row]:
    binary = result.transport in BINARY_TRANSPORTS
    kinds = [kind.value for kind in result.frame_kinds]
    return [(capture_id, frame.index, frame.offset, None if binary else frame.line, kinds[frame.index], frame.event,
             frame.id, len(frame.raw), frame.terminated, [issue.code for issue in frame.issues])
            for frame in result.frames]


@functools.lru_cache(maxsize=1024)  # a fleet's captures come from a handful of endpoints
def _host(url: str | None) -> str | None:
    if not url:
        return None
    try:
        return urlsplit(url).hostname
    except ValueError:  # an unparsable URL (a bad port, a bracket) names no host
        return None


def _float(value: float | None) -> float | None:
    return None if value is None else float(value)


def _timestamp(value: float | datetime.datetime | None) -> datetime.datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.timezone.utc)
    return datetime.datetime.fromtimestamp(value, datetime.timezone.utc)


_PYTHON_TYPES: Mapping[str, type] = {"bool": bool, "int64": int, "float64": float, "string": str, "json": str}
_INT64 = range(-(2**63), 2**63)


def value_fits(type_: str, value: Any) -> bool:
    """Whether `value` (not None) is a value of the column type `type_` as rows hold it."""
    if type_.startswith("list<"):
        item = type_[5:-1]
        return type(value) is list and all(value_fits(item, element) for element in value)
    if type_ == "timestamp[us, UTC]":
        return isinstance(value, datetime.datetime) and value.utcoffset() == datetime.timedelta(0)
    if type_ == "int64":
        return type(value) is int and value in _INT64
    return type(value) is _PYTHON_TYPES[type_]


def table_docs() -> str:
    """Every table and column of `SCHEMA` as Markdown (docs/tables.md is built from it)."""
    parts = [f"Tables schema version: **{TABLES_SCHEMA_VERSION}**.\n"]
    for table in SCHEMA.values():
        parts.append(f"## `{table.name}`\n\n{table.description}\n")
        parts.append("| Column | Type | Null | What it holds |\n|---|---|---|---|")
        parts.extend(f"| `{column.name}` | `{column.type}` | {'yes' if column.nullable else 'no'} | "
                     f"{column.description} |" for column in table.columns)
        parts.append("")
    parts.append("## Types\n\n| Type | Arrow type |\n|---|---|")
    parts.extend(f"| `{name}` | `{arrow}` |" for name, arrow in ARROW_TYPES.items())
    parts.append("\n## Outcome classes\n\n`captures.outcome_class` is the first of these that applies, worst first."
                 "\n\n| Class | Meaning |\n|---|---|")
    parts.extend(f"| `{name}` | {meaning} |" for name, meaning in OUTCOME_CLASSES.items())
    parts.append("\nA `json` column holds JSON text; its Arrow type stores it as a string, so a reader that "
                 "does not know the extension reads a string.")
    return "\n".join(parts) + "\n"
