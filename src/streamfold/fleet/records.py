"""Captures that arrive as records: a JSONL line, a Parquet row, a stored exchange.

A capture record (one JSON object a line, or one Parquet row with these columns):

    {"id": "req-42",                       optional; else the line or row number names it
     "body": "data: {...}\\n\\n",          the stream body as text, or
     "body_base64": "ZGF0YTog...",         as base64 (bytes that are not UTF-8, binary framings)
     "arrivals": [[0, 0.41], [118, 0.52]], optional: each read's body offset and its seconds after the request
     "method": "POST", "url": "https://api.openai.com/v1/chat/completions",
     "request_model": "gpt-5",             (or "model")
     "started_at": 1765078200.5,           seconds since the epoch, or ISO 8601 text
     "status": 200, "outcome": "complete",
     "response_headers": {"content-type": "text/event-stream"}}   or a list of [name, value] pairs

A record that is not JSON, or has no body, or a body that is not base64, is a
row with its `read_error` (an `unreadable` capture), never the end of the input.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pyarrow.parquet as pq

from .._json import loads_utf8
from ..store.bulk import exchange_rows, iter_exchanges
from ..store.reader import StoredExchange
from ..store.rows import DamagedCaptureError
from .batch import INPUT_SCHEMA
from .text import row_text

__all__ = ["Done", "empty_record", "is_records_line", "jsonl_records", "parquet_records", "store_records",
           "stored_fingerprint"]


class Done:
    """The captures a fleet holds (id -> fingerprint), counting the ones a reader skips as already folded."""

    def __init__(self, folded: Mapping[str, str | None]) -> None:
        self._folded = folded
        self.skipped = 0

    def holds(self, capture_id: str, fingerprint: str) -> bool:
        held = capture_id in self._folded and self._folded[capture_id] == fingerprint
        self.skipped += held
        return held


def empty_record(capture_id: str, kind: str) -> dict[str, Any]:
    return {**_EMPTY, "capture_id": capture_id, "kind": kind}


#: Every column null (`Schema.names` builds its list anew on each call).
_EMPTY = dict.fromkeys(INPUT_SCHEMA.names)


def is_records_line(line: bytes) -> bool:
    """Whether a file's first line is a capture record (and not, say, an NDJSON stream's first chunk)."""
    if line.lstrip(b" \t\r\n\xef\xbb\xbf")[:1] != b"{":
        return False  # an SSE stream, a HAR (`{` then a line break), a log: no parse attempt that must fail
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and ("body" in value or "body_base64" in value)


def jsonl_records(key: str, open_: Callable[[], Any], done: Done,
                  fingerprint: str) -> Iterator[dict[str, Any]]:
    with open_() as handle:
        for number, line in enumerate(handle, 1):
            if not line or line.isspace():
                continue
            # A change detector, not a seal: SHA-1 is the fastest digest OpenSSL offers on every CPU (twice
            # BLAKE2b's speed here on a record's 5 KB), and a fleet hashes every line it reads.
            print_ = hashlib.sha1(line, usedforsecurity=False).hexdigest()[:20]
            error: str | None
            try:
                value = _record_value(line)
            except (ValueError, RecursionError) as exc:
                value, error = None, f"line {number} is not JSON: {exc}"
            else:
                error = None if isinstance(value, dict) else f"line {number} is not a JSON object"
            record = _record(key, str(number), value if error is None else {}, print_)
            if error is not None:
                record["read_error"] = error
            if not done.holds(record["capture_id"], print_):
                yield record


def _record_value(line: bytes) -> Any:
    """A JSONL line's value: the core's decoder reads a record's long body several times faster than `json`,
    which reads what it refuses (and words the error)."""
    try:
        return loads_utf8(line)
    except ValueError:
        return json.loads(line)


def parquet_records(key: str, open_: Callable[[], Any], done: Done,
                    fingerprint: str) -> Iterator[dict[str, Any]]:
    with open_() as handle:
        file = pq.ParquetFile(handle)
        names = set(file.schema_arrow.names)
        if "body" not in names and "body_base64" not in names:
            raise ValueError(f"has no `body` column (its columns: {', '.join(sorted(names)[:12])})")
        row = 0
        for batch in file.iter_batches(batch_size=1024):
            for value in batch.to_pylist():
                record = _record(key, str(row), value, f"{fingerprint}:{row}")
                row += 1
                if not done.holds(record["capture_id"], record["fingerprint"]):
                    yield record


def _record(key: str, entry: str, value: Mapping[str, Any], fingerprint: str) -> dict[str, Any]:
    name, key = value.get("id"), row_text(key)
    capture_id = (f"{key}#{row_text(str(name))}" if isinstance(name, (str, int)) and not isinstance(name, bool)
                  else f"{key}:{entry}")
    record = empty_record(capture_id, "body")
    record.update(location=key, entry=entry, fingerprint=fingerprint, source="records")
    problems: list[str] = []
    record["data"] = _body(value, problems)
    record["method"] = _text(value.get("method"))
    record["url"] = _text(value.get("url"))
    record["request_model"] = _text(value.get("request_model") or value.get("model"))
    record["started_at"] = _time(value.get("started_at"), problems)
    status = value.get("status")
    record["status"] = status if isinstance(status, int) and not isinstance(status, bool) else None
    record["outcome"] = _text(value.get("outcome"))
    record["response_headers"] = _headers(value.get("response_headers"))
    record["request_headers"] = _headers(value.get("request_headers"))
    arrivals = value.get("arrivals")
    if arrivals is not None:
        pairs = _arrivals(arrivals)
        if pairs is None:
            problems.append("`arrivals` is not a list of [offset, seconds] pairs (left out)")
        else:
            record["read_offsets"], record["read_times"] = [p[0] for p in pairs], [p[1] for p in pairs]
    if record["data"] is None:
        record["read_error"] = "; ".join(problems) or "the record has no `body` or `body_base64`"
    return record


def _body(value: Mapping[str, Any], problems: list[str]) -> bytes | None:
    body, encoded = value.get("body"), value.get("body_base64")
    if isinstance(body, str):
        return body.encode("utf-8", "surrogatepass")
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    if isinstance(encoded, (str, bytes)):
        try:
            return base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as exc:
            problems.append(f"`body_base64` is not base64 ({exc})")
            return None
    if body is not None or encoded is not None:
        problems.append("`body` is not text")
    return None


def _text(value: Any) -> str | None:
    return row_text(value) if isinstance(value, str) else None


def _time(value: Any, problems: list[str]) -> datetime.datetime | None:
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return datetime.datetime.fromtimestamp(value, datetime.timezone.utc)
        if isinstance(value, datetime.datetime):
            return value if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc)
        if isinstance(value, str):
            parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.timezone.utc)
    except (ValueError, OverflowError, OSError):
        problems.append(f"`started_at` {str(value)[:40]!r} is not a time (left out)")
    return None


def _headers(value: Any) -> list[dict[str, str]] | None:
    if isinstance(value, dict):
        pairs = list(value.items())
    elif isinstance(value, list):
        pairs = [tuple(pair) for pair in value if isinstance(pair, (list, tuple)) and len(pair) == 2]
    else:
        return None
    return [{"name": row_text(name), "value": row_text(text)} for name, text in pairs
            if isinstance(name, str) and isinstance(text, str)]


def _arrivals(value: Any) -> list[tuple[int, float]] | None:
    if not isinstance(value, list):
        return None
    pairs = []
    for pair in value:
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[0], int)
                and not isinstance(pair[0], bool) and isinstance(pair[1], (int, float))
                and not isinstance(pair[1], bool) and 0 <= pair[0] < 2**63):
            return None
        pairs.append((pair[0], float(pair[1])))
    return pairs


def stored_fingerprint(ended_at: float | None, body_bytes: int | None) -> str:
    """A stored exchange's fingerprint: an ended one never changes, so when it ended and its size say it."""
    return f"{ended_at}:{body_bytes}"


def store_records(path: str, done: Done) -> Iterator[dict[str, Any]]:
    """The ended exchanges of a capture store not folded yet; one in flight is left for a later run. The
    store is listed without reading a body (`store.bulk.exchange_rows`): an ended exchange never changes, so
    its end time and size are its fingerprint, and only the exchanges a fleet does not hold with that
    fingerprint are read, through one connection. A damaged exchange is an unreadable row; the rest go on."""
    wanted: dict[int, str] = {}
    label = row_text(path)  # the store's path as the tables hold it; `path` itself is opened
    for row in exchange_rows(path):
        if row["in_flight"]:
            continue
        fingerprint = stored_fingerprint(row["ended_at"], row["body_bytes"])
        if not done.holds(f"{label}#{row['id']}", fingerprint):
            wanted[row["id"]] = fingerprint
    ids, start = list(wanted), 0
    while start < len(ids):
        try:
            for stored in iter_exchanges(path, ids[start:]):
                start += 1
                yield _stored_record(label, stored, wanted[stored.id])
        except DamagedCaptureError as exc:
            damaged, start = ids[start], start + 1
            record = empty_record(f"{label}#{damaged}", "stored")
            record.update(read_error=str(exc), source="store", location=f"{label}#{damaged}", entry=str(damaged),
                          fingerprint=wanted[damaged])
            yield record


def _stored_record(path: str, stored: StoredExchange, fingerprint: str) -> dict[str, Any]:
    record = empty_record(f"{path}#{stored.id}", "stored")
    record.update(
        data=stored.body, source="store", location=f"{path}#{stored.id}", entry=str(stored.id),
        fingerprint=fingerprint, method=stored.method, url=stored.url, request_model=stored.request_model,
        started_at=datetime.datetime.fromtimestamp(stored.started_at, datetime.timezone.utc),
        status=stored.status, outcome=stored.outcome, error=stored.error,
        request_headers=[{"name": name, "value": value} for name, value in stored.request_headers],
        response_headers=[{"name": name, "value": value} for name, value in stored.response_headers],
        read_offsets=[offset for offset, _ in stored.reads], read_times=[at for _, at in stored.reads])
    return record
