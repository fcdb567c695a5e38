"""The table schema (`streamfold.tables`): declared once, and its rows say exactly what `to_dict()` says,
on every capture the suite holds."""

from __future__ import annotations

import datetime
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from streamfold import fold
from streamfold._json import dumps_compact
from streamfold.dialects import opaque_state
from streamfold.dialects.registry import spec_of
from streamfold.result import SCHEMA as RESULT_SCHEMA
from streamfold.services.capture import InputError
from streamfold.services.load import load
from streamfold.tables import ARROW_TYPES, SCHEMA, TABLES_SCHEMA_VERSION, TYPES, CaptureInfo, tables, value_fits

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(path for folder in ("captures", "inputs") for path in (ROOT / "tests" / folder).rglob("*")
               if path.is_file() and path.suffix != ".md")
assert len(FILES) > 300


def test_the_schema_is_declared_once_with_known_types_and_unique_names() -> None:
    assert list(SCHEMA) == ["captures", "choices", "tool_calls", "findings", "usage", "frames"]
    assert isinstance(TABLES_SCHEMA_VERSION, int) and set(ARROW_TYPES) == set(TYPES)
    # The vocabulary is closed and used: every type names a column's type.
    assert {column.type for table in SCHEMA.values() for column in table.columns} == set(TYPES)
    for table in SCHEMA.values():
        assert len(set(table.names)) == len(table.names), table.name
        assert table.names[0] == "capture_id" and not table.columns[0].nullable
        for column in table.columns:
            assert column.type in TYPES, (table.name, column.name)
            assert column.description.endswith((".", ")")) and "\n" not in column.description, column.name
    assert [table.name for table in SCHEMA.values() if table.on_request] == ["frames"]


def check_rows(rows: dict[str, list[dict[str, Any]]]) -> None:
    """Every row holds exactly its table's columns, each a value of the declared type (None only where
    the column may be null)."""
    for name, table_rows in rows.items():
        columns = SCHEMA[name].columns
        for row in table_rows:
            assert tuple(row) == SCHEMA[name].names, name
            for column in columns:
                value = row[column.name]
                if value is None:
                    assert column.nullable, (name, column.name)
                else:
                    assert value_fits(column.type, value), (name, column.name, value)


def rebuilt(rows: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The `to_dict()` the rows hold, put back together from them alone."""
    capture = rows["captures"][0]
    calls: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for call in rows["tool_calls"]:
        calls[call["choice"]].append({
            "index": call["position"], "id": call["id"], "name": call["name"], "arguments": call["arguments"],
            "parsed": None if call["parsed"] is None else json.loads(call["parsed"]), "error": call["error"],
            "key": call["key"]})
    choices = [{
        "index": row["choice"], "role": row["role"], "content": row["content"], "reasoning": row["reasoning"],
        "refusal": row["refusal"], "tool_calls": calls[row["choice"]], "finish_reason": row["finish_reason"],
        "finish_reason_raw": row["finish_reason_raw"],
        "blocks": [{"type": kind, "index": index, "frames": [first, last]} for kind, index, first, last in zip(
            row["block_types"], row["block_indexes"], row["block_first_frames"], row["block_last_frames"],
            strict=True)]} for row in rows["choices"]]
    usage = [{key: (None if value is None else json.loads(value)) if key == "raw" else value
              for key, value in row.items() if key != "capture_id"} for row in rows["usage"]]
    errors = [{"frame": row["frame"], "offset": row["offset"], "line": row["line"], "code": row["code"],
               "message": row["message"], "raw": row["raw"]} for row in rows["findings"] if row["kind"] == "error"]
    diagnostics = []
    for row in (row for row in rows["findings"] if row["kind"] == "diagnostic"):
        diagnostic = {"code": row["code"], "severity": row["severity"], "frame": row["frame"],
                      "offset": row["offset"], "line": row["line"], "message": row["message"]}
        if row["details"] is not None:
            diagnostic["details"] = json.loads(row["details"])
        diagnostics.append(diagnostic)
    out = {
        "schema": RESULT_SCHEMA, "transport": capture["transport"], "dialect": capture["dialect"],
        "complete": capture["complete"], "model": capture["model"], "id": capture["response_id"],
        "frames": {"total": capture["frames_total"], "data": capture["frames_data"],
                   "comments": capture["frames_comments"], "invalid": capture["frames_invalid"]},
        "choices": choices, "usage": usage[0] if usage else None, "errors": errors, "diagnostics": diagnostics,
    }
    if capture["native"] is not None:
        out["native"] = json.loads(capture["native"])
    if capture["lanes"] is not None:
        out["lanes"] = json.loads(capture["lanes"])
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda path: str(path.relative_to(ROOT / "tests")))
def test_the_tables_hold_what_to_dict_holds(path: Path) -> None:
    try:
        result = load(path.read_bytes()).result
    except InputError:
        result = fold(path.read_bytes())  # an input no reader takes is still a stream of bytes to fold
    rows = tables(result, str(path), frames=True)
    check_rows(rows)
    assert rebuilt(rows) == json.loads(json.dumps(result.to_dict()))
    capture = rows["captures"][0]
    assert [capture["choice_count"], capture["tool_call_count"], capture["error_count"],
            capture["diagnostic_count"]] == [len(rows["choices"]), len(rows["tool_calls"]),
                                             sum(row["kind"] == "error" for row in rows["findings"]),
                                             sum(row["kind"] == "diagnostic" for row in rows["findings"])]
    assert [row["frame"] for row in rows["frames"]] == list(range(capture["frames_total"]))
    assert all(len(rows[name]) == 0 or {row["capture_id"] for row in rows[name]} == {str(path)} for name in rows)


def test_one_small_capture_row_by_row() -> None:
    body = (b'data: {"id":"c1","model":"m-1","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}\n\n'
            b'data: {"id":"c1","model":"m-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1",'
            b'"function":{"name":"f","arguments":"{\\"a\\": 1}"}}]},"finish_reason":"tool_calls"}]}\n\n'
            b'data: {"id":"c1","model":"m-1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,'
            b'"total_tokens":5}}\n\n'
            b'data: {oops\n\n')
    started = datetime.datetime(2026, 12, 7, 2, 30, tzinfo=datetime.timezone.utc)
    info = CaptureInfo(source="store", location="db#7", method="POST", url="https://api.example.com:8443/v1/chat",
                       request_model="m", started_at=started.timestamp(), status=200, outcome="client-cut",
                       ttfb=0.5, ttft=1, duration=2.25, body_bytes=len(body), read_count=4)
    rows = tables(fold(body), "db#7", capture=info, frames=True)
    check_rows(rows)
    assert rows["captures"] == [{
        "capture_id": "db#7", "source": "store", "location": "db#7", "entry": None, "method": "POST",
        "url": "https://api.example.com:8443/v1/chat", "host": "api.example.com", "request_model": "m",
        "started_at": started, "status": 200, "outcome": "client-cut", "outcome_class": "client-cut",
        "read_error": None, "transport": "sse",
        "dialect": "openai-chat", "complete": False, "model": "m-1", "response_id": "c1", "frames_total": 4,
        "frames_data": 4, "frames_comments": 0, "frames_invalid": 1, "choice_count": 1, "tool_call_count": 1,
        "error_count": 1, "diagnostic_count": 1, "finish_reason": "tool_calls",
        "finding_codes": ["invalid-json", "missing-terminal"], "body_bytes": len(body), "read_count": 4,
        "ttfb": 0.5, "ttft": 1.0, "duration": 2.25, "opaque_count": 0, "opaque_dropped": 0, "native": '{"created":null}',
        "lanes": None, "fingerprint": None}]
    assert rows["choices"] == [{
        "capture_id": "db#7", "choice": 0, "role": "assistant", "content": "Hi", "reasoning": None, "refusal": None,
        "finish_reason": "tool_calls", "finish_reason_raw": "tool_calls", "tool_call_count": 1,
        "block_types": ["text", "tool_call"], "block_indexes": [0, 0], "block_first_frames": [0, 1],
        "block_last_frames": [0, 1]}]
    assert rows["tool_calls"] == [{
        "capture_id": "db#7", "choice": 0, "position": 0, "key": 0, "id": "call_1", "name": "f",
        "arguments": '{"a": 1}', "parsed": '{"a":1}', "error": None}]
    assert rows["usage"] == [{"capture_id": "db#7", "input_tokens": 3, "output_tokens": 2, "reasoning_tokens": None,
                              "cache_read_tokens": None, "total_tokens": 5,
                              "raw": '{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}'}]
    assert [(row["kind"], row["position"], row["code"], row["severity"], row["frame"], row["line"])
            for row in rows["findings"]] == [("error", 0, "invalid-json", "error", 3, 7),
                                             ("diagnostic", 0, "missing-terminal", "warning", 3, 7)]
    assert rows["frames"][3] == {"capture_id": "db#7", "frame": 3, "offset": len(body) - 13, "line": 7,
                                 "kind": "invalid", "event": None, "event_id": None, "bytes": 13, "terminated": True,
                                 "issue_codes": []}
    assert "frames" not in tables(fold(body), "db#7")


def test_opaque_state_carried_and_dropped() -> None:
    """A thinking block's signature comes last, just before the block stops: cut before it, the block is
    there without it (dropped); a redacted thinking block's data comes whole in its start."""
    thinking = (ROOT / "tests/captures/anthropic/a3-a6-thinking-then-tool-use.sse").read_bytes()
    redacted = (ROOT / "tests/captures/anthropic/a6-redacted-thinking.sse").read_bytes()
    cut = thinking[:thinking.index(b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
                                   b"\"delta\":{\"type\":\"signature_delta\"")]

    def counts(body: bytes) -> tuple[int, int]:
        row = tables(fold(body), "c")["captures"][0]
        return row["opaque_count"], row["opaque_dropped"]

    assert counts(thinking) == (1, 0)
    assert counts(redacted) == (2, 0)
    assert counts(cut) == (0, 1)
    assert counts(b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n') == (0, 0)


def test_the_opaque_count_is_every_opaque_value_of_every_capture() -> None:
    """`opaque_count` skips the export of a reply that cannot hold opaque state (DialectSpec.may_hold_opaque):
    on every capture the suite holds, it still counts what `dialects.opaque_state` finds."""
    counted = 0
    for path in FILES:
        try:
            result = load(path.read_bytes()).result
        except InputError:
            result = fold(path.read_bytes())
        expected = len(opaque_state(result))
        capture = tables(result, str(path))["captures"][0]
        assert capture["opaque_count"] == expected, path
        assert capture["opaque_dropped"] == _dropped_by_the_export(result), path
        counted += expected
    assert counted >= 10


def _dropped_by_the_export(result: Any) -> int:
    try:
        spec = spec_of(result.dialect)
        return spec.opaque_dropped(result.export())
    except (KeyError, NotImplementedError):
        return 0


@pytest.mark.parametrize("value", [
    {"a": [1, 2.5, None, True], "é": "\u2028</script>\x00"}, 1e16, 1e-05, 2**70, -0.0, [], {}, "\ud800 lone",
    {"nested": {"deep": [{"x": 0.1}]}}])
def test_json_columns_hold_the_value_they_were_given(value: Any) -> None:
    """The tables' JSON text (`_json.dumps_compact`) reads back as the value, with or without msgspec (the
    standard library writes what msgspec refuses, such as a lone surrogate)."""
    text = dumps_compact(value)
    assert json.loads(text) == value
    assert ", " not in text and ": " not in text  # compact
    assert "\\u" not in text.replace("\\u0000", "")  # UTF-8 kept, only control characters escaped
