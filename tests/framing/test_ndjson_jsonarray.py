"""NDJSON and streamed-JSON-array framing vectors, plus `sniff`.

Written from dialects.md section 2.1 (NDJSON), 2.2 (streamed JSON array),
section 3 (working out the dialect), the Gemini example of section 4.4, and
the streamfold framing brief, independently of the implementation.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from framing_helpers import BOM, assert_raw_is_slice_of_input, bytewise, codes, feed_all
from streamfold import JSONArrayParser, NDJSONParser, sniff


def nd(data: bytes) -> list:
    return feed_all(NDJSONParser, [data])


def ja(data: bytes) -> list:
    return feed_all(JSONArrayParser, [data])


def assert_plain(frames) -> None:
    """NDJSON and JSON-array frames carry no SSE fields."""
    for f in frames:
        assert (f.event, f.id, f.retry, f.comments) == (None, None, None, ())


# ==========================================================================
# NDJSON (dialects.md 2.1)
# ==========================================================================

OLLAMA_LINES = [
    b'{"model":"llama3.2","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":"Hel"},"done":false}',
    b'{"model":"llama3.2","created_at":"2026-01-01T00:00:01Z","message":{"role":"assistant","content":"lo"},"done":false}',
    b'{"model":"llama3.2","created_at":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}',
]


def test_ndjson_each_line_is_a_frame():
    data = b"\n".join(OLLAMA_LINES) + b"\n"
    frames = nd(data)
    assert [f.data for f in frames] == [line.decode() for line in OLLAMA_LINES]
    assert [f.raw for f in frames] == [line + b"\n" for line in OLLAMA_LINES]
    assert [f.line for f in frames] == [1, 2, 3]
    assert [f.offset for f in frames] == [0, len(OLLAMA_LINES[0]) + 1, len(OLLAMA_LINES[0]) + len(OLLAMA_LINES[1]) + 2]
    assert all(f.terminated and f.issues == () for f in frames)
    assert_plain(frames)
    assert b"".join(f.raw for f in frames) == data


def test_ndjson_trailing_cr_is_stripped_from_text_but_kept_in_raw():
    # "Split on \n at the byte level and strip a trailing \r."
    frames = nd(b'{"a":1}\r\n{"a":2}\r\n')
    assert [(f.data, f.raw, f.line) for f in frames] == [
        ('{"a":1}', b'{"a":1}\r\n', 1),
        ('{"a":2}', b'{"a":2}\r\n', 2),
    ]


def test_ndjson_blank_and_whitespace_only_lines_are_skipped_but_counted():
    data = b'\n{"a":1}\n\n   \n\t\r\n{"a":2}\n\r\n'
    f0, f1 = nd(data)
    assert (f0.data, f0.offset, f0.line) == ('{"a":1}', 1, 2)
    assert (f1.data, f1.offset, f1.line) == ('{"a":2}', data.index(b'{"a":2}'), 6)


def test_ndjson_last_line_without_newline_is_reported_at_close():
    # "The last line may have no terminator."
    p = NDJSONParser()
    (first,) = p.feed(b'{"a":1}\n{"done":true}')
    assert first.data == '{"a":1}' and first.terminated
    (last,) = p.close()
    assert (last.index, last.data, last.raw, last.terminated, last.offset) == (
        1,
        '{"done":true}',
        b'{"done":true}',
        False,
        8,
    )


def test_ndjson_whitespace_only_tail_is_not_a_frame():
    assert [f.data for f in nd(b'{"a":1}\n   ')] == ['{"a":1}']


def test_ndjson_frame_is_returned_by_the_feed_that_completes_the_line():
    p = NDJSONParser()
    assert p.feed(b'{"a":') == []
    (f,) = p.feed(b"1}\n{")
    assert f.data == '{"a":1}'
    assert p.feed(b"}") == []
    (g,) = p.close()
    assert (g.data, g.terminated) == ("{}", False)


def test_ndjson_crlf_split_across_feeds():
    p = NDJSONParser()
    assert p.feed(b'{"a":1}\r') == []
    (f,) = p.feed(b"\n")
    assert (f.data, f.raw, f.terminated) == ('{"a":1}', b'{"a":1}\r\n', True)
    assert p.close() == []


def test_ndjson_lines_are_split_on_lf_only():
    # U+2028/U+2029/U+0085 may appear raw in JSON strings (F7); a lone CR is not an
    # NDJSON line end either.
    text = '{"t":"a\u2028b\u2029c\u0085d"}'
    (f,) = nd(text.encode() + b"\n")
    assert f.data == text
    (g,) = nd(b"a\rb\n")
    assert g.data == "a\rb"


def test_ndjson_bom_is_stripped_but_counts_in_offsets():
    (f,) = nd(BOM + b'{"a":1}\n')
    assert (f.data, f.offset, f.line, f.raw) == ('{"a":1}', 3, 1, b'{"a":1}\n')


def test_ndjson_invalid_utf8():
    data = b'{"a":1}\n{"t":"\xff"}\n'
    _f0, f1 = nd(data)
    assert f1.data == '{"t":"\ufffd"}'
    (issue,) = f1.issues
    assert (issue.code, issue.offset, issue.line) == ("invalid-utf8", data.index(b"\xff"), 2)


def test_ndjson_error_and_junk_lines_are_frames_like_any_other():
    # Errors arrive as an ordinary line with HTTP 200 (ollama docs/api/errors.mdx);
    # framing does not judge the JSON.
    frames = nd(b'{"error":"model \'x\' not found"}\nnot json at all\n')
    assert [f.data for f in frames] == ['{"error":"model \'x\' not found"}', "not json at all"]


def test_ndjson_multibyte_split_at_every_offset():
    data = '{"t":"😀中"}\n{"t":"é"}\n'.encode()
    expected = nd(data)
    assert [f.data for f in expected] == ['{"t":"😀中"}', '{"t":"é"}']
    for i in range(1, len(data)):
        assert feed_all(NDJSONParser, [data[:i], data[i:]]) == expected, f"split at {i}"


# ==========================================================================
# Streamed JSON array (dialects.md 2.2, Gemini without alt=sse)
# ==========================================================================

# dialects.md section 4.4, "The same reply without alt=sse", verbatim.
GEMINI_E1 = """{
  "candidates": [ { "content": { "parts": [ { "text": "I'll fetch" } ], "role": "model" } } ],
  "modelVersion": "gemini-2.5-flash"
}"""
GEMINI_E2 = """{
  "candidates": [ { "content": { "parts": [ { "text": " the forecast." } ], "role": "model" },
                    "finishReason": "STOP" } ],
  "usageMetadata": { "promptTokenCount": 31, "candidatesTokenCount": 6, "totalTokenCount": 37 }
}"""


def gemini_body(eol: str) -> tuple[bytes, str, str]:
    e1, e2 = GEMINI_E1.replace("\n", eol), GEMINI_E2.replace("\n", eol)
    return f"[{e1}{eol},{eol}{e2}{eol}]".encode(), e1, e2


@pytest.mark.parametrize("eol", ["\r\n", "\n"], ids=["CRLF", "LF"])
def test_gemini_array_example(eol):
    body, e1, e2 = gemini_body(eol)
    p = JSONArrayParser()
    frames = p.feed(body) + p.close()
    assert [f.data for f in frames] == [e1, e2]
    assert [f.raw for f in frames] == [e1.encode(), e2.encode()]
    assert [f.offset for f in frames] == [1, 1 + len(e1) + 2 * len(eol) + 1]
    assert [f.line for f in frames] == [1, 6]
    assert all(f.terminated and f.issues == () for f in frames)
    assert_plain(frames)
    assert json.loads(frames[1].data)["candidates"][0]["finishReason"] == "STOP"
    assert p.saw_end is True


def test_gemini_array_split_at_every_byte():
    # F9: network reads split objects anywhere (symfony/ai#1988, agentjido/req_llm#720)
    body, _e1, _e2 = gemini_body("\r\n")
    expected = ja(body)
    for i in range(1, len(body)):
        assert feed_all(JSONArrayParser, [body[:i], body[i:]]) == expected, f"split at {i}"
    assert feed_all(JSONArrayParser, bytewise(body)) == expected


def test_gemini_array_crlf_between_elements_split_across_feeds():
    body, _e1, _e2 = gemini_body("\r\n")
    cut = body.index(b"\r\n,") + 1  # between the CR and the LF of the separator
    assert feed_all(JSONArrayParser, [body[:cut], body[cut:]]) == ja(body)


TRICKY_ELEMENTS = [
    r'{"t": "}{][,"}',  # braces and brackets inside a string
    r'{"t": "quote \"}\" here"}',  # escaped quotes around a brace
    r'{"t": "ends in backslash \\"}',  # \\ then the closing quote: string ends here
    r'{"t": "\\\"}"}',  # escaped backslash, escaped quote, brace, end
    r'{"t": "\u007d not a brace"}',
    '{"nested": {"a": [1, {"b": "]"}, []], "c": {}}}',
    '{"emoji": "😀", "cjk": "中文", "ls": "\u2028"}',
    '{\r\n  "pretty": [\r\n    1,\r\n    2\r\n  ]\r\n}',
]


@pytest.mark.parametrize("element", TRICKY_ELEMENTS)
def test_strings_with_braces_and_escapes_do_not_confuse_the_scanner(element):
    json.loads(element)  # the vector itself must be valid JSON
    body = f'[{element},\r\n{{"next": true}}]'.encode()
    p = JSONArrayParser()
    frames = p.feed(body) + p.close()
    assert [f.data for f in frames] == [element, '{"next": true}']
    assert frames[0].raw == element.encode()
    assert frames[1].offset == body.index(b'{"next"')
    assert p.saw_end


@pytest.mark.parametrize("element", TRICKY_ELEMENTS)
def test_tricky_elements_byte_at_a_time(element):
    body = f'[{element},{{"next": true}}]'.encode()
    assert feed_all(JSONArrayParser, bytewise(body)) == ja(body)


def test_compact_array_without_whitespace():
    frames = ja(b'[{"a":1},{"b":2},{"c":3}]')
    assert [f.data for f in frames] == ['{"a":1}', '{"b":2}', '{"c":3}']
    assert [f.offset for f in frames] == [1, 9, 17]


def test_element_is_returned_by_the_feed_that_closes_it():
    p = JSONArrayParser()
    assert p.feed(b'[{"a":') == []
    (f,) = p.feed(b"1}")  # no need to wait for the separator
    assert f.data == '{"a":1}'
    assert p.saw_end is False
    assert p.feed(b"\r\n,\r\n") == []
    (g,) = p.feed(b'{"b":2}')
    assert g.index == 1
    assert p.feed(b"\r\n]") == []
    assert p.saw_end is True
    assert p.close() == []


@pytest.mark.parametrize("data", [b"[]", b"[\r\n]", b"  \n[ ]\n", BOM + b"[]"])
def test_empty_array(data):
    p = JSONArrayParser()
    assert p.feed(data) + p.close() == []
    assert p.saw_end is True


def test_bracket_inside_a_string_is_not_the_end():
    p = JSONArrayParser()
    frames = p.feed(b'[{"t": "]"}')
    assert [f.data for f in frames] == ['{"t": "]"}']
    assert p.saw_end is False


def test_bom_and_whitespace_before_the_array():
    data = BOM + b'\r\n [{"a":1}]'
    (f,) = ja(data)
    assert (f.data, f.offset, f.line) == ('{"a":1}', data.index(b"{"), 2)


def test_unterminated_element_at_close():
    data = b'[{"a": 1},\r\n{"b": "par'
    p = JSONArrayParser()
    frames = p.feed(data)
    assert [f.data for f in frames] == ['{"a": 1}']
    (partial,) = p.close()
    assert (partial.index, partial.data, partial.raw, partial.terminated) == (1, '{"b": "par', b'{"b": "par', False)
    assert (partial.offset, partial.line) == (data.index(b'{"b"'), 2)
    assert p.saw_end is False


def test_unterminated_nested_element_at_close():
    (f,) = ja(b'[{"a": {"b": 1}')
    assert (f.data, f.terminated) == ('{"a": {"b": 1}', False)


def test_array_cut_after_an_element_has_no_partial_frame():
    p = JSONArrayParser()
    frames = p.feed(b'[{"a":1},\r\n') + p.close()
    assert [(f.data, f.terminated) for f in frames] == [('{"a":1}', True)]
    assert p.saw_end is False


def test_junk_between_elements_becomes_its_own_frame():
    # "Non-JSON junk between elements becomes a frame whose data is the junk text
    # (so it later fails to decode)."
    frames = ja(b'[{"a":1},\r\nnot json,\r\n{"b":2}]')
    assert frames[0].data == '{"a":1}'
    assert frames[-1].data == '{"b":2}'
    junk = frames[1:-1]
    assert len(junk) == 1
    assert "not json" in junk[0].data
    assert "{" not in junk[0].data
    with pytest.raises(ValueError):
        json.loads(junk[0].data)


def test_junk_on_the_same_line_does_not_swallow_the_next_element():
    # The junk is *between* elements: the element after it is still "one frame
    # with data = the element's exact source text", and the closing "]" is still
    # seen (saw_end), since "separators, whitespace and brackets belong to no frame".
    p = JSONArrayParser()
    frames = p.feed(b'[{"a":1}, oops, {"b":2}]') + p.close()
    datas = [f.data for f in frames]
    assert datas[0] == '{"a":1}' and datas[-1] == '{"b":2}'
    (junk,) = datas[1:-1]
    assert "oops" in junk and "{" not in junk
    assert p.saw_end is True


def test_junk_before_the_closing_bracket_does_not_hide_it():
    p = JSONArrayParser()
    frames = p.feed(b'[{"a":1}, oops]') + p.close()
    assert frames[0].data == '{"a":1}'
    (junk,) = frames[1:]
    assert "oops" in junk.data and "]" not in junk.data
    assert p.saw_end is True


def test_pretty_printed_error_object_without_array():
    # Gemini errors "replace the whole array when they occur before streaming
    # starts" (dialects.md 2.2): the body is one pretty-printed object.
    err = '{\n  "error": {\n    "code": 400,\n    "message": "bad",\n    "status": "INVALID_ARGUMENT"\n  }\n}'
    (f,) = ja(err.encode() + b"\n")
    assert f.data == err
    assert json.loads(f.data)["error"]["code"] == 400


def test_json_array_invalid_utf8_in_string():
    data = b'[{"t": "\xff"}]'
    (f,) = ja(data)
    assert f.data == '{"t": "\ufffd"}'
    assert f.raw == b'{"t": "\xff"}'
    assert "invalid-utf8" in codes(f)
    assert min(i.offset for i in f.issues if i.code == "invalid-utf8") == data.index(b"\xff")


def test_json_array_invalid_utf8_issue_line_counts_lone_cr():
    # "CR, LF and CRLF each end exactly one line"; the issue's line is the line of
    # the bad byte (here line 2 of a CR-only pretty-printed element).
    (f,) = ja(b'[{\r"t": "\xff"\r}]')
    assert [(i.code, i.line) for i in f.issues] == [("invalid-utf8", 2)]


@pytest.mark.parametrize(
    "cls, data",
    [
        (NDJSONParser, b'{"a":"' + b"x" * 40 + b'"}\n{"b":1}\n'),
        (JSONArrayParser, b'[{"a":"' + b"x" * 40 + b'"},{"b":1}]'),
    ],
    ids=["ndjson", "jsonarray"],
)
def test_max_frame_size_applies_however_the_bytes_arrive(cls, data):
    # Same API as SSEParser(max_frame_size=N): a frame over the limit gives
    # data=None, a frame-too-large issue and raw of at most the limit, and the
    # result must not depend on whether the long frame arrived in one read.
    whole = feed_all(cls, [data], max_frame_size=16)
    assert [f.data for f in whole] == [None, '{"b":1}']
    assert "frame-too-large" in codes(whole[0]) and len(whole[0].raw) <= 16
    assert feed_all(cls, bytewise(data), max_frame_size=16) == whole


@pytest.mark.parametrize("eol", ["\r\n", "\n"])
def test_json_array_raw_is_input_slice(eol):
    body, _, _ = gemini_body(eol)
    assert_raw_is_slice_of_input(body, ja(body))


# ==========================================================================
# API (same contract as SSEParser)
# ==========================================================================


@pytest.mark.parametrize("cls", [NDJSONParser, JSONArrayParser])
def test_feed_after_close_raises_runtime_error(cls):
    p = cls()
    p.close()
    with pytest.raises(RuntimeError):
        p.feed(b"{}")


@pytest.mark.parametrize("cls", [NDJSONParser, JSONArrayParser])
def test_feed_str_raises_type_error(cls):
    with pytest.raises(TypeError):
        cls().feed('{"a": 1}\n')


@pytest.mark.parametrize("cls", [NDJSONParser, JSONArrayParser])
def test_feed_empty_bytes_is_a_noop(cls):
    p = cls()
    assert p.feed(b"") == []
    assert p.close() == []


# ==========================================================================
# sniff (dialects.md section 3 and the brief)
# ==========================================================================


@pytest.mark.parametrize(
    "head, expected",
    [
        # "[" -> json-array
        (b"[", "json-array"),
        (b'[{"candidates"', "json-array"),
        (b"\r\n  [", "json-array"),
        (BOM + b"[", "json-array"),
        (BOM + b" \n[{", "json-array"),
        # a first line that is a complete object -> ndjson
        (b'{"model":"llama3","done":false}\n', "ndjson"),
        (b'{"a":1}\n{"a":2}\n', "ndjson"),
        (b'{"a":1}\r\n', "ndjson"),
        (b'{"text":"}{"}\n', "ndjson"),  # braces inside a string
        (b'{"text":"a\\"}"}\n', "ndjson"),  # escaped quote, then a brace inside the string
        (BOM + b'{"a":1}\n', "ndjson"),
        # "{" whose first line is not a complete object -> pretty-printed -> json-array
        (b'{\n  "error": {\n    "code": 400\n  }\n}\n', "json-array"),
        (b"{\r\n", "json-array"),
        (b'{"a":\n1}\n', "json-array"),
        # SSE field or comment lines
        (b"data: {}\n\n", "sse"),
        (b"data:{}\n", "sse"),
        (b"event: message_start\n", "sse"),
        (b"id: 1\n", "sse"),
        (b"retry: 100\n", "sse"),
        (b": keep-alive\n\n", "sse"),
        (b":\n", "sse"),
        (BOM + b"data: x\n\n", "sse"),
        (b"\r\n\r\ndata: x\n\n", "sse"),
    ],
)
def test_sniff_decides(head, expected):
    assert sniff(head) == expected
    assert sniff(head, final=True) == expected


@pytest.mark.parametrize(
    "head",
    [
        b"",
        b"  \r\n\t",
        BOM,
        b"\xef",  # could still be a BOM, and BOM + "[" is a json-array
        b"\xef\xbb",
        b"{",
        b'{"a": 1, "b"',
        b'{"a":1}',  # complete object, but is a newline next? ("{...} then newline")
    ],
)
def test_sniff_needs_more_bytes(head):
    assert sniff(head) is None
    assert sniff(head, final=False) is None


@pytest.mark.parametrize(
    "head, expected",
    [
        (b"", "sse"),  # "With final=True it always decides (default 'sse')"
        (b"  \n", "sse"),
        (BOM, "sse"),
        (b"hello", "sse"),
        (b"data: x", "sse"),
        (b"[", "json-array"),
        (b'{\n  "a": 1\n}', "json-array"),
        (b'{"a":1}\n', "ndjson"),
    ],
)
def test_sniff_final_always_decides(head, expected):
    assert sniff(head, final=True) == expected


# ==========================================================================
# Deep nesting: framing must not recurse (json.loads raises RecursionError)
# ==========================================================================

DEPTH = 10_000
DEEP = '{"a":' + "[" * DEPTH + "]" * DEPTH + "}"


def test_json_array_deeply_nested_element_does_not_raise():
    frames = ja(f"[{DEEP},{{\"b\":1}}]".encode())
    assert [f.data for f in frames] == [DEEP, '{"b":1}']


def test_ndjson_deeply_nested_line_does_not_raise():
    assert [f.data for f in nd(DEEP.encode() + b"\n")] == [DEEP]


def test_sniff_deeply_nested_first_line_does_not_raise():
    # A complete object on its own line is ndjson, however deep it is; sniff
    # must not let json's RecursionError escape.
    assert sniff(DEEP.encode() + b"\n") == "ndjson"


SNIFF_PIECES = [BOM, b"\xef", b"\xbb", b"\xbf", b"{", b"}", b"[", b"]", b"\n", b"\r", b" ", b"data:", b"event:", b":", b'"', b"a", b"1", b",", b"\\", b"\xff"]
sniff_input = st.one_of(st.binary(max_size=64), st.lists(st.sampled_from(SNIFF_PIECES), max_size=20).map(b"".join))


@settings(deadline=None, max_examples=500)
@given(sniff_input)
@example(BOM + b"[{}]")
@example(BOM + b'\n{"a":1}\n')
def test_sniff_never_raises_and_never_changes_its_mind(head):
    # None means "more bytes are needed", so a decision taken on a prefix must
    # be the decision for the whole input.
    verdict = sniff(head, final=True)
    assert verdict in ("sse", "ndjson", "json-array")
    for k in range(len(head) + 1):
        early = sniff(head[:k])
        assert early in (None, verdict), f"sniff({head[:k]!r}) = {early!r} but the full input gives {verdict!r}"
