"""A query's answer written out: CSV, JSON, JSON lines or Parquet, and the values
DuckDB gives Python turned into what those formats hold.

A `json` column (`native`, `parsed`, `details`) is written as the JSON value it
holds, not as a string of it; a timestamp as ISO 8601; a list or a struct in CSV
as JSON text. JSON has no NaN or infinity: such a double is written as null.
"""

from __future__ import annotations

import base64
import csv
import datetime
import decimal
import json
import math
import uuid
from collections.abc import Iterable, Sequence
from typing import IO, Any

from .._json import dumps_strict

__all__ = ["FORMATS", "cell_text", "json_value", "write_rows"]

#: What `fleet query --format` takes; `table` is the command line's own (rich), `parquet` needs a file.
FORMATS = ("table", "csv", "json", "jsonl", "parquet")


def json_value(value: Any, json_text: bool = False) -> Any:
    """`value`, as DuckDB returns it, as a JSON value; `json_text`: it is a JSON column's text."""
    if json_text and isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, decimal.Decimal):
        return json_value(float(value))
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict):  # a struct, or a map (whose keys may be of any type)
        return {str(json_value(key)): json_value(inner) for key, inner in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(inner) for inner in value]
    return str(value)


def cell_text(value: Any, json_text: bool = False) -> str:
    """`value` as one CSV or table cell: a scalar as itself, a list or a struct as JSON text, null as ''."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    converted = json_value(value, json_text)
    if isinstance(converted, str):
        return converted
    return dumps_strict(converted, separators=(",", ":"))


def write_rows(out: IO[str], fmt: str, columns: Sequence[str], types: Sequence[str],
               rows: Iterable[Sequence[Any]]) -> None:
    """Write `rows` to `out` as `fmt` (csv, json, jsonl); `types` are DuckDB's names of the columns' types."""
    json_columns = [kind == "JSON" for kind in types]
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([cell_text(value, is_json) for value, is_json in zip(row, json_columns, strict=True)]
                         for row in rows)
        return
    objects = ({name: json_value(value, is_json) for name, value, is_json in zip(columns, row, json_columns,
                                                                                   strict=True)} for row in rows)
    if fmt == "jsonl":
        for value in objects:
            out.write(dumps_strict(value) + "\n")
        return
    if fmt != "json":
        raise ValueError(f"no such format: {fmt!r}")
    out.write("[")
    written = False
    for value in objects:
        out.write(("," if written else "") + "\n  " + dumps_strict(value))
        written = True
    out.write("\n]\n" if written else "]\n")
