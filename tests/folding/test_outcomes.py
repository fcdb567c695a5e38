"""The outcome class (`streamfold.outcomes`): one word for how a stream ended, the recording and the fold
together, worst first."""

from __future__ import annotations

import pytest

from streamfold import fold
from streamfold.outcomes import OUTCOME_CLASSES, outcome_class
from streamfold.services.load import load
from streamfold.tables import CaptureInfo, tables, unreadable_tables

CHUNK = b'data: {"id":"c","model":"m","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}\n\n'
TEXT = CHUNK % (b'{"content":"Hi"}', b"null")
STOP = CHUNK % (b"{}", b'"stop"')
LENGTH = CHUNK % (b"{}", b'"length"')
BAD_ARGS = CHUNK % (b'{"tool_calls":[{"index":0,"id":"t","function":{"name":"f","arguments":"{\\"a\\":"}}]}',
                    b'"tool_calls"')
DONE = b"data: [DONE]\n\n"


@pytest.mark.parametrize(("body", "recorded", "status", "expected"), [
    (TEXT + STOP + DONE, None, None, "complete"),
    (TEXT + STOP + DONE, "complete", 200, "complete"),
    (TEXT + LENGTH + DONE, None, None, "short"),
    (BAD_ARGS + DONE, None, None, "arguments-invalid"),
    (TEXT + b"data: {oops\n\n" + STOP + DONE, None, None, "damaged"),
    (TEXT, None, None, "upstream-cut"),
    (TEXT, "upstream-cut", 200, "upstream-cut"),
    # The recording's word on who cut wins over the fold's, which cannot tell.
    (TEXT, "client-cut", 200, "client-cut"),
    (TEXT + STOP + DONE, None, 500, "errored"),
    (b"", "failed", None, "errored"),
    (TEXT + b'data: {"error":{"message":"overloaded","type":"server_error"}}\n\n', None, None, "errored"),
    # Worse classes first: a cut stream with bad arguments is cut.
    (BAD_ARGS, None, None, "upstream-cut"),
])
def test_each_class(body: bytes, recorded: str | None, status: int | None, expected: str) -> None:
    assert outcome_class(fold(body), recorded=recorded, status=status) == expected


def test_bodies_that_are_no_stream() -> None:
    assert outcome_class(load(b"<!doctype html><html><title>Bad gateway</title></html>").result) == "not-a-stream"
    assert outcome_class(load(b'{"error":{"message":"no","type":"invalid_request_error"}}').result) == "errored"
    assert outcome_class(load(b"").result) == "upstream-cut"


def test_the_class_is_in_the_captures_row_and_every_class_is_documented() -> None:
    row = tables(fold(TEXT + LENGTH + DONE), "x", capture=CaptureInfo(outcome="complete"))["captures"][0]
    assert (row["outcome_class"], row["read_error"]) == ("short", None)
    assert (*OUTCOME_CLASSES,)[::8] == ("unreadable", "complete")


def test_an_unreadable_capture_is_one_row_saying_why() -> None:
    rows = unreadable_tables("a.har#3", "the HAR is not JSON", capture=CaptureInfo(location="a.har", entry="3"))
    (row,) = rows["captures"]
    assert (row["outcome_class"], row["read_error"], row["location"], row["entry"], row["dialect"],
            row["frames_total"], row["finding_codes"]) == ("unreadable", "the HAR is not JSON", "a.har", "3",
                                                           "unknown", 0, [])
    assert all(rows[name] == [] for name in ("choices", "tool_calls", "findings", "usage"))

