"""SSE framing vectors, written from the WHATWG rules (dialects.md section 1)
and the streamfold framing brief, independently of the implementation.

Spec: https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
Trap ids (F1..F11) refer to dialects.md section 6.

streamfold deliberately differs from a browser in two documented ways:
every block with at least one line becomes a Frame (even without data), and
a block still open at close() is reported with terminated=False instead of
being discarded.
"""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from framing_helpers import (
    BOM,
    assert_raw_is_slice_of_input,
    bytewise,
    codes,
    feed_all,
    line_number_at,
    split_at,
)
from streamfold import Frame, FrameIssue, SSEParser


def parse(data: bytes, **kwargs) -> list[Frame]:
    return feed_all(SSEParser, [data], **kwargs)


def only(data: bytes, **kwargs) -> Frame:
    frames = parse(data, **kwargs)
    assert len(frames) == 1, frames
    return frames[0]


# ==========================================================================
# Line endings
# ==========================================================================


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_each_line_ending_alone_gives_same_event(eol):
    # WHATWG: end-of-line = ( cr lf / cr / lf )
    data = b"event: e" + eol + b"data: a" + eol + b"data: b" + eol + eol
    f = only(data)
    assert (f.event, f.data, f.offset, f.line, f.raw, f.terminated) == ("e", "a\nb", 0, 1, data, True)
    assert f.issues == ()


def test_bom_then_crlf():
    # dialects.md 1.1 rule 1: one U+FEFF at the very start is dropped; the brief:
    # it still counts in offsets, so the first line has offset 3, line 1.
    data = BOM + b"data: x\r\n\r\ndata: y\r\n\r\n"
    f0, f1 = parse(data)
    assert (f0.data, f0.offset, f0.line, f0.raw) == ("x", 3, 1, b"data: x\r\n\r\n")
    assert (f1.data, f1.offset, f1.line, f1.raw) == ("y", 3 + 11, 3, b"data: y\r\n\r\n")
    assert f0.issues == () and f1.issues == ()


def test_only_one_bom_is_stripped():
    # "A BOM anywhere else is ordinary data": a second BOM becomes part of the
    # field name "\ufeffdata", which is an unknown field.
    data = BOM + BOM + b"data: x\n\n"
    f = only(data)
    assert f.offset == 3 and f.line == 1
    assert f.raw == BOM + b"data: x\n\n"
    assert f.data is None
    assert codes(f) == ["unknown-field"]


def test_bom_inside_data_is_kept():
    f = only(b"data: " + BOM + b"x\n\n")
    assert f.data == "\ufeffx"
    assert f.issues == ()


def test_lone_cr_line_endings():
    # Classic Mac line endings: every CR ends a line, even with no LF anywhere.
    data = b"event: e\rdata: a\rdata: b\r\rdata: c\r\r"
    f0, f1 = parse(data)
    assert (f0.event, f0.data, f0.raw, f0.line) == ("e", "a\nb", b"event: e\rdata: a\rdata: b\r\r", 1)
    assert (f1.event, f1.data, f1.raw, f1.line, f1.offset) == (None, "c", b"data: c\r\r", 5, 26)
    # The final CR is a complete terminator at end of stream: the block did get its blank line.
    assert f0.terminated and f1.terminated


def test_mixed_line_endings_in_one_stream():
    # "one stream can mix them" (EventSource/eventsource#326)
    data = b"data: a\r\ndata: b\rdata: c\n\r\ndata: d\n\r"
    f0, f1 = parse(data)
    assert f0.data == "a\nb\nc"
    assert f0.raw == b"data: a\r\ndata: b\rdata: c\n\r\n"
    assert (f1.data, f1.line, f1.offset, f1.raw, f1.terminated) == ("d", 5, 27, b"data: d\n\r", True)


def test_cr_then_lf_of_blank_line_is_one_crlf_not_two_line_ends():
    # "data: x\r" followed by "\n": the LF completes the CRLF of the *data* line;
    # it is not a blank line, so nothing is dispatched until the real blank line.
    f = only(b"data: x\r\ndata: y\r\n\r\n")
    assert f.data == "x\ny"


def test_crlf_split_across_feeds_is_one_terminator():
    # F4: CRLF split across reads (rexxars/eventsource-parser#17, psf/requests#3980):
    # a parser that forgets the CR sees "\n" as an empty line and dispatches
    # half an event.
    chunks = [b"data: x\r", b"\ndata: y\r", b"\n\r", b"\n", b"data: z\r\n\r\n"]
    frames = feed_all(SSEParser, chunks)
    assert [f.data for f in frames] == ["x\ny", "z"]
    joined = b"".join(chunks)
    assert frames[0].raw == b"data: x\r\ndata: y\r\n\r\n"
    assert (frames[1].offset, frames[1].line) == (len(frames[0].raw), 4)
    assert frames == parse(joined)


def test_frame_waits_for_possible_lf_after_final_cr():
    # raw runs "through the terminator of the blank line"; when a read ends in
    # the blank line's CR, an LF may still follow and belong to that terminator,
    # so the frame cannot be complete yet.
    p = SSEParser()
    assert p.feed(b"data: x\r\n\r") == []
    (f,) = p.feed(b"\n")
    assert f.raw == b"data: x\r\n\r\n" and f.terminated
    assert p.close() == []


def test_empty_feed_is_a_noop_even_with_a_pending_cr():
    # feed(b"") is not end of stream (unlike h11's receive_data(b"")).
    p = SSEParser()
    assert p.feed(b"data: x\r") == []
    assert p.feed(b"") == []
    frames = p.feed(b"\n\n") + p.close()
    assert [(f.data, f.raw) for f in frames] == [("x", b"data: x\r\n\n")]


def test_lines_are_not_split_on_other_unicode_line_breaks():
    # F7: str.splitlines() also splits on these; SSE splits on CR, LF, CRLF only.
    text = 'data: {"t":"a\u2028b\u2029c\u0085d\x0be\x0cf\x1cg\x1dh\x1ei"}'
    f = only(text.encode() + b"\n\n")
    assert f.data == text[len("data: ") :]
    assert f.issues == ()


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"])
def test_each_unicode_line_break_is_ordinary_data(sep):
    f = only(f"data: a{sep}b\n\n".encode())
    assert f.data == f"a{sep}b"


# ==========================================================================
# Field parsing
# ==========================================================================


@pytest.mark.parametrize(
    "data, expected",
    [
        (b"data: x\n\n", "x"),
        (b"data:x\n\n", "x"),  # TGI style: no space; conforms to the spec
        (b"data:  x\n\n", " x"),  # "remove that one space and nothing more"
        (b"data:\tx\n\n", "\tx"),  # only U+0020 is removed, a tab is kept
        (b"data: x \n\n", "x "),  # trailing space kept
        (b"data:\n\n", ""),
        (b"data: \n\n", ""),
        (b"data\n\n", ""),  # no colon: whole line is the name, value is ""
        (b"data\ndata\n\n", "\n"),  # WHATWG example: "a single newline character"
        (b"data: a\ndata\n\n", "a\n"),  # bare data adds an empty line
        (b"data: a:b: c\n\n", "a:b: c"),  # only the first colon splits
        (b"data::\n\n", ":"),
        (b"data: : not a comment\n\n", ": not a comment"),
        (b"data: YHOO\ndata: +2\ndata: 10\n\n", "YHOO\n+2\n10"),  # WHATWG "stock" example
        (b'data: {"a":\ndata: 1}\n\n', '{"a":\n1}'),  # multi-line JSON data
    ],
)
def test_data_field_values(data, expected):
    f = only(data)
    assert f.data == expected
    assert f.issues == ()
    assert f.raw == data


@pytest.mark.parametrize(
    "data, event, payload",
    [
        (b"event: ping\n\n", "ping", None),  # F8: a named event with no data is still a frame
        (b"event:\n\n", "", None),
        (b"event\n\n", "", None),
        (b"event:  sp\ndata: x\n\n", " sp", "x"),
        (b"event: a\nevent: b\ndata: x\n\n", "b", "x"),  # last event line wins
        (b"data: x\n\n", None, "x"),  # no event line -> None (not "message")
        (b"data: x\nevent: late\n\n", "late", "x"),  # order inside the block does not matter
    ],
)
def test_event_field(data, event, payload):
    f = only(data)
    assert (f.event, f.data) == (event, payload)
    assert f.issues == ()


@pytest.mark.parametrize(
    "line",
    [
        b"Data: x",  # field names are case-sensitive
        b"DATA: x",
        b"data : x",  # name is "data " (with the space)
        b" data: x",  # name is " data"
        b"date: x",
        b'error: {"message":"boom"}',  # F5: old llama.cpp error field
        b"{",
        b"[DONE]",  # bare sentinel without "data:" is a field named "[DONE]"
    ],
)
def test_unknown_field_is_ignored_with_issue(line):
    f = only(line + b"\n\n")
    assert f.data is None and f.event is None and f.id is None and f.retry is None
    assert codes(f) == ["unknown-field"]
    assert (f.issues[0].line, f.issues[0].offset) == (1, 0)


def test_unknown_field_issue_points_at_its_line():
    data = b"data: ok\r\nData: nope\r\nevent: e\r\n\r\n"
    f = only(data)
    assert (f.data, f.event) == ("ok", "e")
    (issue,) = f.issues
    assert isinstance(issue, FrameIssue)
    assert (issue.code, issue.line, issue.offset) == ("unknown-field", 2, 10)
    assert isinstance(issue.message, str)


def test_unknown_field_in_later_block_has_stream_offsets():
    data = b": hi\n\ndata: a\nevent : x\n\n"
    _f0, f1 = parse(data)
    (issue,) = f1.issues
    assert (issue.code, issue.line, issue.offset) == ("unknown-field", 4, data.index(b"event :"))


# -- id ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, expected_id",
    [
        (b"id: 1\ndata: x\n\n", "1"),
        (b"id:1\n\n", "1"),
        (b"id:  7\n\n", " 7"),
        (b"id:\n\n", ""),  # empty id sets the buffer to ""
        (b"id\n\n", ""),
        (b"id: 1\nid: 2\n\n", "2"),  # last one wins
        (b"data: x\n\n", None),  # no id field in this block
    ],
)
def test_id_field(data, expected_id):
    f = only(data)
    assert f.id == expected_id
    assert f.issues == ()


def test_id_with_nul_is_ignored_with_issue():
    # WHATWG: "If the field value does not contain U+0000 NULL, then set the
    # last event ID buffer to the field value. Otherwise, ignore the field."
    p = SSEParser()
    frames = p.feed(b"data: a\nid: x\x00y\n\n")
    frames += p.close()
    (f,) = frames
    assert f.id is None
    assert f.data == "a"
    (issue,) = f.issues
    assert (issue.code, issue.line, issue.offset) == ("invalid-id", 2, 8)
    assert p.last_event_id == ""


def test_id_with_nul_does_not_replace_earlier_valid_id_in_block():
    f = only(b"id: 1\nid: 2\x00\n\n")
    assert f.id == "1"
    assert codes(f) == ["invalid-id"]


def test_last_event_id_persists_across_blocks():
    # "The buffer is not reset by dispatch and persists across events."
    p = SSEParser()
    assert p.last_event_id == ""
    steps = [
        (b"id: 1\ndata: a\n\n", "1", "1"),
        (b"data: b\n\n", None, "1"),  # no id line: Frame.id None, buffer kept
        (b"id: x\x00\ndata: c\n\n", None, "1"),  # invalid id: ignored
        (b"id: 2\n\n", "2", "2"),  # id-only block
        (b"id\ndata: d\n\n", "", ""),  # empty id resets the buffer to ""
    ]
    for chunk, frame_id, buffer in steps:
        (f,) = p.feed(chunk)
        assert f.id == frame_id
        assert p.last_event_id == buffer
    assert p.close() == []
    assert p.last_event_id == ""


# -- retry ------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, expected",
    [
        (b"retry: 1500\n\n", 1500),
        (b"retry:0\n\n", 0),
        (b"retry: 007\n\n", 7),  # base-ten integer of the digits
        (b"retry: 10\nretry: 20\n\n", 20),  # each valid field sets the reconnection time
    ],
)
def test_valid_retry(data, expected):
    f = only(data)
    assert f.retry == expected
    assert f.issues == ()
    assert f.data is None


@pytest.mark.parametrize(
    "value",
    [
        b"12a",
        b"-1",
        b"+5",  # int() accepts a sign
        b"1.5",
        b" 15",  # "retry:  15": value " 15" has a leading space
        b"15 ",  # int() accepts surrounding spaces
        b"1_000",  # int() accepts underscores
        b"0x10",
        "١٢".encode(),  # Arabic-Indic digits: int() accepts them, but they are not ASCII digits
        "１２".encode(),  # fullwidth digits: same trap
        "²".encode(),  # str.isdigit() is True, int() raises
    ],
)
def test_retry_must_be_only_ascii_digits(value):
    # WHATWG: "If the field value consists of only ASCII digits, then interpret
    # the field value as an integer in base ten ... Otherwise, ignore the field."
    f = only(b"retry: " + value + b"\n\n")
    assert f.retry is None
    (issue,) = f.issues
    assert (issue.code, issue.line, issue.offset) == ("invalid-retry", 1, 0)


def test_retry_with_thousands_of_digits_does_not_raise():
    # Python 3.11+ int() refuses strings over 4300 digits (ValueError), but the
    # value is "made only of ASCII digits". The parser must not raise; the brief
    # asks for the integer (a capped/ignored value with an issue is tolerated here).
    p = SSEParser()
    frames = p.feed(b"retry: " + b"9" * 5000 + b"\ndata: x\n\n") + p.close()
    (f,) = frames
    assert f.data == "x"
    assert f.retry == 10**5000 - 1 or (f.retry is None and "invalid-retry" in codes(f))


def test_invalid_retry_does_not_undo_an_earlier_valid_one():
    f = only(b"retry: 10\nretry: x\n\n")
    assert f.retry == 10
    assert [(i.code, i.line, i.offset) for i in f.issues] == [("invalid-retry", 2, 10)]


def test_empty_retry_is_not_a_number():
    # Not an integer either way; whether it also raises an issue is left open.
    assert only(b"retry:\n\n").retry is None


# -- comments ---------------------------------------------------------------


@pytest.mark.parametrize(
    "data, comments",
    [
        (b": keep-alive\n\n", ("keep-alive",)),  # DeepSeek / vLLM heartbeat
        (b": OPENROUTER PROCESSING\n\n", ("OPENROUTER PROCESSING",)),
        (b":\n\n", ("",)),  # llama.cpp colon-only ping (F2)
        (b":no-space\n\n", ("no-space",)),
        (b":  two\n\n", (" two",)),  # only ONE leading space is removed
        (b":\tx\n\n", ("\tx",)),
        (b"::\n\n", (":",)),
        (b": a\n: b\n\n", ("a", "b")),
    ],
)
def test_comment_only_block_is_a_frame(data, comments):
    f = only(data)
    assert f.comments == comments
    assert isinstance(f.comments, tuple)
    assert (f.data, f.event, f.id, f.retry) == (None, None, None, None)
    assert f.issues == ()
    assert f.raw == data


def test_comments_inside_an_event_block_do_not_touch_data():
    # "starts with ':' : a comment; ignore the whole line"
    f = only(b": a\ndata: x\n: c\ndata: y\n\n")
    assert f.data == "x\ny"
    assert f.comments == ("a", "c")


# -- blocks without data are frames too --------------------------------------


@pytest.mark.parametrize(
    "data, fields",
    [
        (b"event: ping\n\n", {"event": "ping"}),
        (b"id: 42\n\n", {"id": "42"}),
        (b"retry: 3000\n\n", {"retry": 3000}),
        (b": ping\n\n", {"comments": ("ping",)}),
    ],
)
def test_block_without_data_is_a_frame_with_data_none(data, fields):
    # WHATWG would dispatch nothing ("if the data buffer is empty ... return"),
    # but streamfold lists every block with at least one line.
    f = only(data)
    assert f.data is None
    for name, value in fields.items():
        assert getattr(f, name) == value
    assert f.terminated


# ==========================================================================
# Blank lines and dispatch
# ==========================================================================


def test_three_consecutive_blank_lines():
    # The 2nd and 3rd blank lines dispatch an empty buffer: nothing, and they
    # belong to no frame.
    data = b"data: a\n\n\n\ndata: b\n\n"
    f0, f1 = parse(data)
    assert (f0.data, f0.raw) == ("a", b"data: a\n\n")
    assert (f1.data, f1.raw, f1.offset, f1.line) == ("b", b"data: b\n\n", 11, 5)


def test_leading_blank_lines_belong_to_no_frame():
    data = b"\r\n\r\n: hi\r\n\r\n"
    f = only(data)
    assert (f.offset, f.line, f.raw, f.comments) == (4, 3, b": hi\r\n\r\n", ("hi",))


@pytest.mark.parametrize("data", [b"", b"\n", b"\r\n\r\n\n\r", BOM, BOM + b"\n\n"])
def test_stream_of_only_blank_lines_has_no_frames(data):
    assert parse(data) == []


def test_frame_is_returned_by_the_feed_that_completes_it():
    p = SSEParser()
    assert p.feed(b"data: a\n") == []
    (f,) = p.feed(b"\ndata: b")
    assert f.data == "a"
    assert p.feed(b"\n") == []
    (g,) = p.feed(b"\n")
    assert (g.index, g.data) == (1, "b")
    assert p.close() == []


# ==========================================================================
# End of stream (F1)
# ==========================================================================


def test_final_event_without_blank_line_is_reported_at_close_not_feed():
    # F1: llama-server sends the last event without "\n\n" (darshi1337/apogee#139).
    p = SSEParser()
    assert p.feed(b"data: x\n") == []
    (f,) = p.close()
    assert (f.data, f.raw, f.terminated, f.index) == ("x", b"data: x\n", False, 0)


def test_done_with_single_newline_at_eof():
    p = SSEParser()
    (first,) = p.feed(b'data: {"a":1}\n\ndata: [DONE]\n')
    assert first.terminated and first.data == '{"a":1}'
    (done,) = p.close()
    assert (done.index, done.data, done.raw, done.offset, done.line) == (1, "[DONE]", b"data: [DONE]\n", 15, 3)
    assert done.terminated is False


@pytest.mark.parametrize(
    "data, payload",
    [
        (b"data: [DONE]\r", "[DONE]"),  # trailing CR is a complete line ending at EOF
        (b"data: [DONE]\r\n", "[DONE]"),
        (b"data: a\ndata: b\n", "a\nb"),
    ],
)
def test_unterminated_final_block_variants(data, payload):
    f = only(data)
    assert (f.data, f.raw, f.terminated) == (payload, data, False)


def close_with_issues(data: bytes, **kwargs) -> tuple[list[Frame], tuple[FrameIssue, ...]]:
    p = SSEParser(**kwargs)
    frames = p.feed(data) + p.close()
    return frames, p.stream_issues


@pytest.mark.parametrize("line", [b"data: [DONE]", b"data", b"retry: 5", b": keep-alive", b"id: 7", b"event: x",
                                  b"Data: x", BOM[:2]])
def test_final_line_without_line_end_is_discarded_and_reported(line):
    # "Once the end of the file is reached, any pending data must be discarded."
    # Nothing of the line is interpreted: no frame, comment, retry or id; close() says where it was.
    p = SSEParser()
    frames = p.feed(b"id: 1\ndata: a\n\n" + line) + p.close()
    assert [(f.data, f.terminated) for f in frames] == [("a", True)]
    assert p.last_event_id == "1"
    (issue,) = p.stream_issues
    assert (issue.code, issue.offset, issue.line) == ("unterminated-final-line", 15, 4)
    assert f"its {len(line)} bytes" in issue.message


def test_final_line_without_line_end_is_not_part_of_the_open_block():
    frames, issues = close_with_issues(b"data: a\nretry: 5\n:c\ndata: b")
    (f,) = frames
    assert (f.data, f.retry, f.comments, f.raw, f.terminated) == ("a", 5, ("c",), b"data: a\nretry: 5\n:c\n", False)
    (issue,) = issues
    assert (issue.code, issue.offset, issue.line, issue.text) == ("unterminated-final-line", 20, 4, "data: b")
    frames, issues = close_with_issues(b"data: a\nretry: 9")
    assert [(f.data, f.retry) for f in frames] == [("a", None)] and len(issues) == 1


def test_nothing_is_discarded_when_the_stream_ends_with_a_line_end():
    for data in (b"data: a\n", b"data: a\r", b"data: a\r\n", b"data: a\n\n", b""):
        assert close_with_issues(data)[1] == ()


def test_blank_line_ending_in_cr_at_eof_does_dispatch():
    # The final CR ends the blank line: the block has its dispatching blank line.
    f = only(b"data: x\r\r")
    assert f.terminated is True and f.raw == b"data: x\r\r"


def test_id_of_block_flushed_at_close_updates_last_event_id():
    # last_event_id is the WHATWG *buffer*: the id line was processed, so the
    # buffer holds it even though the block never got its blank line.
    p = SSEParser()
    assert p.feed(b"id: 1\ndata: a\n\nid: 5\ndata: x") != []
    (f,) = p.close()
    assert (f.id, f.terminated) == ("5", False)
    assert p.last_event_id == "5"


def test_close_with_nothing_pending_returns_nothing():
    p = SSEParser()
    assert p.close() == []
    p = SSEParser()
    assert len(p.feed(b"data: x\n\n")) == 1
    assert p.close() == []


# ==========================================================================
# WHATWG spec examples
# ==========================================================================


def test_whatwg_example_stock():
    # "The following event stream, once followed by a blank line: ... would cause
    # an event message with the interface MessageEvent to be dispatched on the
    # EventSource object. The event's data attribute would contain the string
    # 'YHOO\n+2\n10' (where \n represents a newline)."
    f = only(b"data: YHOO\ndata: +2\ndata: 10\n\n")
    assert f.data == "YHOO\n+2\n10"
    assert f.event is None


def test_whatwg_example_comment_ids_and_leading_space():
    # "The first block has just a comment, and will fire nothing. The second block
    # ... data 'first event', and will then set the last event ID to '1' ...
    # The third block fires an event with data 'second event', and also has an
    # 'id' field, this time with no value, which resets the last event ID to the
    # empty string ... the last block just fires an event with the data
    # ' third event' (with a single leading space character). Note that the last
    # still has to end with a blank line."
    p = SSEParser()
    data = b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n"
    frames = p.feed(data)
    assert [(f.comments, f.data, f.id) for f in frames] == [
        (("test stream",), None, None),
        ((), "first event", "1"),
        ((), "second event", ""),
    ]
    assert p.last_event_id == ""
    (last,) = p.close()
    assert (last.data, last.id, last.terminated) == (" third event", None, False)


def test_whatwg_example_empty_data_and_single_newline():
    # "The first block fires events with the data set to the empty string, as
    # would the last block if it was followed by a blank line. The middle block
    # fires an event with the data set to a single newline character. The last
    # block is discarded because it is not followed by a blank line."
    # (Its one line has no line end either, so streamfold too makes no frame of it.)
    frames = parse(b"data\n\ndata\ndata\n\ndata:")
    assert [(f.data, f.terminated) for f in frames] == [("", True), ("\n", True)]


def test_whatwg_example_space_after_colon_is_optional():
    # "The following stream fires two identical events: data:test / data: test"
    f0, f1 = parse(b"data:test\n\ndata: test\n\n")
    assert f0.data == f1.data == "test"


# ==========================================================================
# UTF-8 (F3)
# ==========================================================================

EMOJI_EVENT = 'data: {"t":"a😀b"}\n\n'.encode()  # U+1F600 is 4 bytes
CJK_EVENT = 'data: {"t":"中文"}\n\n'.encode()  # 3 bytes each


@pytest.mark.parametrize("data", [EMOJI_EVENT, CJK_EVENT], ids=["emoji", "cjk"])
def test_multibyte_char_split_at_every_byte_offset(data):
    # F3: a UTF-8 sequence split across reads (api7/aisix#111, danielmiessler/Fabric#2203)
    expected = parse(data)
    assert expected[0].data == data[len("data: ") : -2].decode()
    assert expected[0].issues == ()
    for i in range(1, len(data)):
        assert feed_all(SSEParser, [data[:i], data[i:]]) == expected, f"split at {i}"


@pytest.mark.parametrize("data", [EMOJI_EVENT, CJK_EVENT], ids=["emoji", "cjk"])
def test_multibyte_char_split_at_every_pair_of_offsets(data):
    expected = parse(data)
    for i, j in itertools.combinations(range(1, len(data)), 2):
        assert feed_all(SSEParser, split_at(data, [i, j])) == expected, f"split at {i},{j}"
    assert feed_all(SSEParser, bytewise(data)) == expected


def test_invalid_utf8_byte_becomes_replacement_char_with_issue():
    f = only(b"data: a\xffb\n\n")
    assert f.data == "a\ufffdb"
    (issue,) = f.issues
    assert (issue.code, issue.offset, issue.line) == ("invalid-utf8", 7, 1)


def test_invalid_utf8_offset_is_a_stream_offset():
    data = BOM + b"data: ok\r\n\r\n: note\r\ndata: \xc3(\r\n\r\n"
    f0, f1 = parse(data)
    assert f0.issues == ()
    assert f1.data == "\ufffd("
    (issue,) = f1.issues
    assert (issue.code, issue.offset, issue.line) == ("invalid-utf8", data.index(b"\xc3"), 4)


def test_truncated_sequence_at_end_of_line_does_not_eat_the_newline():
    # "\xe2\x82" is the start of a 3-byte sequence cut short by the LF: one U+FFFD
    # (maximal subpart), and the next line is intact.
    f = only(b"data: \xe2\x82\ndata: x\n\n")
    assert f.data == "\ufffd\nx"
    assert codes(f) == ["invalid-utf8"]
    assert f.issues[0].offset == 6


def test_invalid_utf8_in_comment_is_reported():
    f = only(b": \xfe\n\n")
    assert f.comments == ("\ufffd",)
    assert codes(f) == ["invalid-utf8"]


# ==========================================================================
# Offsets, lines, raw
# ==========================================================================

NO_STRAY_BLANKS = [
    BOM + b"data: a\r\n\r\n: c\r\nevent: e\r\ndata: b\r\n\r\n",
    b"data: a\rid: 1\r\r:x\rretry: 5\r\rdata: z",
    b"event: a\ndata: 1\n\ndata: 2\r\n\r\n: hb\r\rdata: 3\n",
    b'data: {"x":"\xe2\x80\xa8"}\r\n\r\ndata: \xf0\x9f\x98\x80\n\ndata: [DONE]\n\n',
]


@pytest.mark.parametrize("data", NO_STRAY_BLANKS)
def test_raws_reassemble_the_input_minus_bom(data):
    frames, issues = close_with_issues(data)
    body = data[3:] if data.startswith(BOM) else data
    # ...and minus a final line without a line end, which close() reports instead.
    discarded = b"" if not issues else data[issues[0].offset :]
    assert b"".join(f.raw for f in frames) + discarded == body
    assert_raw_is_slice_of_input(data, frames)


@pytest.mark.parametrize("data", NO_STRAY_BLANKS)
def test_offsets_and_lines(data):
    frames, issues = close_with_issues(data)
    offset = 3 if data.startswith(BOM) else 0
    for f in frames:
        assert f.offset == offset
        assert f.line == line_number_at(data, offset)
        offset += len(f.raw)
    for issue in issues:
        assert (issue.offset, issue.line) == (offset, line_number_at(data, offset))
        offset = len(data)
    assert offset == len(data)


def test_line_numbers_count_crlf_once_and_lone_cr_and_lf_once_each():
    data = b"data: 1\r\n\r\ndata: 2\r\rdata: 3\n\ndata: 4\n\r\n"
    assert [(f.data, f.line) for f in parse(data)] == [("1", 1), ("2", 3), ("3", 5), ("4", 7)]


# ==========================================================================
# max_frame_size
# ==========================================================================


def test_oversized_block_gives_one_frame_then_parsing_resumes():
    big = b"data: " + b"x" * 500 + b"\n\n"
    data = b"data: small\n\n" + big + b"event: e\ndata: after\n\n"
    frames = parse(data, max_frame_size=64)
    assert len(frames) == 3
    small, huge, after = frames
    assert small.data == "small" and small.issues == ()
    assert huge.data is None
    assert "frame-too-large" in codes(huge)
    assert (huge.offset, huge.line) == (13, 3)
    assert 0 < len(huge.raw) <= 64
    assert data[huge.offset : huge.offset + len(huge.raw)] == huge.raw
    assert (after.event, after.data, after.offset, after.line, after.issues) == (
        "e",
        "after",
        13 + len(big),
        5,
        (),
    )
    assert after.raw == b"event: e\ndata: after\n\n"


def test_oversized_block_of_many_short_lines():
    block = (b"data: " + b"y" * 20 + b"\n") * 20 + b"\n"
    frames = parse(block + b"data: ok\n\n", max_frame_size=64)
    assert [f.data for f in frames] == [None, "ok"]
    assert "frame-too-large" in codes(frames[0])
    assert len(frames[0].raw) <= 64


def test_oversized_block_same_frames_whatever_the_chunking():
    data = b"data: a\n\n" + b"data: " + b"z" * 300 + b"\r\n\r\n" + b"data: b\r\n\r\n"
    whole = parse(data, max_frame_size=64)
    assert [f.data for f in whole] == ["a", None, "b"]
    assert feed_all(SSEParser, split_at(data, range(0, len(data), 7)), max_frame_size=64) == whole
    assert feed_all(SSEParser, bytewise(data), max_frame_size=64) == whole


def test_oversized_unterminated_block_at_close():
    frames, issues = close_with_issues(b"data: ok\n\ndata: " + b"q" * 200 + b"\ndata: z", max_frame_size=64)
    assert [f.data for f in frames] == ["ok", None]
    assert "frame-too-large" in codes(frames[1])
    assert len(frames[1].raw) <= 64
    assert issues == ()  # the oversized frame says what was dropped


def test_a_final_line_without_line_end_that_alone_is_too_large_is_discarded():
    # Only the discarded line made the block too large: the block's complete lines are its frame.
    frames, issues = close_with_issues(b"data: ok\n\nid: 3\ndata: " + b"q" * 200, max_frame_size=64)
    assert [(f.data, f.id, f.terminated, f.raw) for f in frames] == [("ok", None, True, b"data: ok\n\n"),
                                                                     (None, "3", False, b"id: 3\n")]
    (issue,) = issues
    assert (issue.code, issue.offset, issue.line) == ("unterminated-final-line", 16, 4)
    assert "its 206 bytes" in issue.message
    frames, issues = close_with_issues(b"data: " + b"q" * 200, max_frame_size=64)
    assert frames == [] and issues[0].offset == 0


def test_bom_before_an_oversized_first_block_whatever_the_chunking():
    # The BOM is stripped and counted in offsets also when the first block is
    # too large, and it is stripped only at the very start ("A BOM anywhere
    # else is ordinary data"): the BOM before the second block is part of the
    # field name "\ufeffdata". Same frames however the bytes arrive.
    data = BOM + b"data: " + b"x" * 100 + b"\n\n" + BOM + b"data: y\n\n"
    whole = parse(data, max_frame_size=64)
    huge, second = whole
    assert (huge.offset, huge.line, huge.data) == (3, 1, None)
    assert "frame-too-large" in codes(huge)
    assert huge.raw == data[3 : 3 + len(huge.raw)]
    assert (second.offset, second.data, codes(second)) == (111, None, ["unknown-field"])
    assert feed_all(SSEParser, split_at(data, range(0, len(data), 10)), max_frame_size=64) == whole
    assert feed_all(SSEParser, bytewise(data), max_frame_size=64) == whole


def test_raw_never_exceeds_max_frame_size():
    # raw is "the block's bytes from its first line through the terminator of the
    # blank line that dispatched it", and a block "whose bytes exceed" the limit
    # keeps "its first max_frame_size bytes at most". Here the block is 17 bytes
    # (16 of lines + the blank line's LF) against a limit of 16.
    data = b"data: 123456789\n\n"
    (f,) = parse(data, max_frame_size=16)
    assert len(f.raw) <= 16
    assert f.data is None and "frame-too-large" in codes(f)


def test_block_under_the_limit_is_untouched():
    data = b"data: " + b"x" * 20 + b"\n\n"  # 28 bytes, limit 64
    f = only(data, max_frame_size=64)
    assert f.data == "x" * 20 and f.issues == () and f.raw == data


def test_default_max_frame_size_allows_16_mib_minus_a_little():
    # "default is large, at least 16 MiB"
    payload = b"x" * (16 * 1024 * 1024 - 64)
    f = only(b"data: " + payload + b"\n\n")
    assert f.issues == ()
    assert len(f.data) == len(payload)


# ==========================================================================
# API
# ==========================================================================


def test_feed_after_close_raises_runtime_error():
    p = SSEParser()
    p.feed(b"data: x\n\n")
    p.close()
    with pytest.raises(RuntimeError):
        p.feed(b"data: y\n\n")


def test_feed_str_raises_type_error():
    p = SSEParser()
    with pytest.raises(TypeError):
        p.feed("data: x\n\n")


def test_feed_empty_bytes_returns_empty_list():
    p = SSEParser()
    assert p.feed(b"") == []
    assert p.close() == []


def test_frames_are_frozen_and_compare_by_value():
    a = only(b"data: x\n\n")
    b = only(b"data: x\n\n")
    assert a == b
    assert dataclasses.is_dataclass(a)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.data = "y"  # type: ignore[misc]
    assert isinstance(a.issues, tuple) and isinstance(a.comments, tuple)


def test_issues_are_frozen_records():
    (issue,) = only(b"Data: x\n\n").issues
    with pytest.raises(AttributeError):
        issue.code = "other"  # type: ignore[misc]


def test_two_parsers_do_not_share_state():
    p, q = SSEParser(), SSEParser()
    assert p.feed(b"id: 1\ndata: p") == []
    assert q.feed(b"data: q\n\n")[0].data == "q"
    (f,) = p.feed(b"\n\n")
    assert (f.data, f.index, f.id) == ("p", 0, "1")
    assert q.last_event_id == ""
