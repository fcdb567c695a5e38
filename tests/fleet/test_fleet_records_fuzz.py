"""Capture records are untrusted: any line of a JSONL file, any value in any field, gives exactly one
`captures` row (unreadable with its reason when it must be), and never an exception or a row that says
streamfold failed (that would be a bug the fleet caught)."""

from __future__ import annotations

import base64
import functools
import json
from pathlib import Path

import pyarrow as pa
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from streamfold.fleet.batch import INPUT_SCHEMA, fold_batch
from streamfold.fleet.records import Done, jsonl_records

# Text with lone surrogates too: JSON's `\uD800` escapes decode to them, and Arrow holds only UTF-8.
TEXT = st.text(st.characters() | st.characters(categories=["Cs"]), max_size=20)
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                    max_leaves=12)
FIELDS = ("id", "body", "body_base64", "arrivals", "method", "url", "model", "request_model", "started_at", "status",
          "outcome", "response_headers", "request_headers")
BODY = st.sampled_from([b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n", b"", b"\xff\x00",
                        b"{\"type\":\"message_start\"}\n"])
RECORD = st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=8)


def _line(value: object, body: bytes, encoded: bool) -> bytes:
    if isinstance(value, dict) and "body" not in value and "body_base64" not in value:
        value = {**value, ("body_base64" if encoded else "body"):
                 base64.b64encode(body).decode() if encoded else body.decode("utf-8", "replace")}
    return json.dumps(value).encode() + b"\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(st.tuples(RECORD, BODY, st.booleans()).map(lambda t: _line(*t)),
                                st.binary(max_size=40).map(lambda raw: raw.replace(b"\n", b" ") + b"\n")),
                      min_size=1, max_size=6))
def test_any_line_is_one_row_and_nothing_raises(tmp_path: Path, lines: list[bytes]) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"".join(lines))
    records = list(jsonl_records(str(path), functools.partial(path.open, "rb"), Done({}), "f"))
    assert len(records) == sum(1 for line in lines if line.strip())
    folded = fold_batch(pa.Table.from_pylist(records, schema=INPUT_SCHEMA))
    assert folded.num_rows == len(records)
    errors = [error for error in folded.column("read_error").to_pylist() if error]
    assert not any("bug in streamfold" in error for error in errors), errors


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.dictionaries(st.sampled_from(("id", "method", "url", "model", "outcome", "started_at")), TEXT,
                            min_size=1),
       headers=st.dictionaries(TEXT, TEXT, max_size=3))
@example(text={"url": "https://h.example/\udcff", "id": "\ud800"}, headers={"x-\udfff": "\udc80"})  # pa.array raised
def test_any_text_in_a_text_field_is_kept_as_utf8(tmp_path: Path, text: dict[str, str],
                                                  headers: dict[str, str]) -> None:
    """Each text field and header, lone surrogates and all: the record folds (as Ray's engine folds it, from an
    Arrow table of the records) and the rows hold UTF-8."""
    path = tmp_path / "records.jsonl"
    line = {**text, "response_headers": headers, "body": BODY_TEXT}
    path.write_bytes(json.dumps(line).encode() + b"\n")
    records = list(jsonl_records(str(path), functools.partial(path.open, "rb"), Done({}), "f"))
    folded = fold_batch(pa.Table.from_pylist(records, schema=INPUT_SCHEMA))
    assert folded.num_rows == 1 and folded.column("outcome_class")[0].as_py() != "unreadable"
    for name in ("capture_id", "method", "url", "outcome"):
        value = folded.column(name)[0].as_py()
        assert value is None or isinstance(value.encode("utf-8"), bytes)  # raises for a lone surrogate


BODY_TEXT = 'data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
