"""Chunking invariance, fuzzing and linearity for all three framers.

A sans-I/O framer must give the same frames however the network cut the
bytes (F3, F4, F9 in dialects.md section 6). Every corpus input is checked
three ways (h11's `tr()` idea): whole, one byte at a time, and under
Hypothesis-drawn random chunkings. The fuzz tests then check that no input
makes a parser raise, and compare SSEParser and NDJSONParser with the
whole-input reference models in framing_helpers.py.
"""

from __future__ import annotations

import json
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from framing_helpers import (
    BOM,
    assert_raw_is_slice_of_input,
    bytewise,
    feed_all,
    line_number_at,
    reference_ndjson,
    reference_sse,
    split_at,
    sse_projection,
)
from streamfold import JSONArrayParser, NDJSONParser, SSEParser

PARSERS = [SSEParser, NDJSONParser, JSONArrayParser]
FUZZ = settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])

# ==========================================================================
# Corpora of tricky inputs
# ==========================================================================

SSE_CORPUS = {
    "bom-crlf": BOM + b"data: a\r\n\r\ndata: b\r\n\r\n",
    "partial-bom-is-not-a-bom": b"\xef\xbbdata: x\n\n",
    "lone-cr": b"event: e\rdata: a\rdata: b\r\rdata: c\r\r",
    "mixed-endings": b"data: a\r\ndata: b\rdata: c\n\r\ndata: d\n\r",
    "crlf-everywhere": b"id: 1\r\ndata: x\r\n\r\n\r\n: c\r\n\r\nretry: 5\r\n\r\n",
    "stray-blank-lines": b"\n\r\n\rdata: a\n\n\n\ndata: b\r\r\r\n",
    "heartbeats": b": OPENROUTER PROCESSING\n\n:\n\nevent: ping\n\ndata: {}\n\n: keep-alive\n\n",
    "multibyte": 'data: {"t":"a😀b中文é"}\r\n\r\ndata: 😀\n\n'.encode(),
    "unicode-breaks": 'data: {"t":"\u2028\u2029\u0085\x0b\x0c\x1c"}\n\n'.encode(),
    "invalid-utf8": b"data: a\xffb\r\n\r\ndata: \xe2\x82\ndata: \xf0\x9f\x98\r\n\r\n: \xc3\n\n",
    "bad-id-retry": b"id: a\x00b\ndata: x\n\nretry: 12a\nretry: 1500\n\nid\n\n",
    "unknown-fields": b"Data: x\ndata : y\nerror: {}\n\ndata:no-space\ndata:  two\n\n",
    "unterminated-done": b'data: {"a":1}\n\ndata: [DONE]\n',
    "ends-in-cr": b"data: x\r\rdata: y\r",
    "whatwg-examples": b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata\n\ndata\ndata\n\ndata:",
    "openai-like": (
        b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
        b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
        b"data: [DONE]\n\n"
    ),
}

NDJSON_CORPUS = {
    "lf": b'{"a":1}\n{"a":2}\n',
    "crlf": b'{"a":1}\r\n{"a":2}\r\n',
    "bom": BOM + b'{"a":1}\n',
    "blank-lines": b'\n\n{"a":1}\n   \n\t\r\n{"a":2}\n\r\n',
    "no-final-newline": b'{"a":1}\n{"done":true}',
    "ends-in-cr": b'{"a":1}\r\n{"b":2}\r',
    "multibyte": '{"t":"😀中é"}\n{"t":"\u2028\u0085"}\n'.encode(),
    "invalid-utf8": b'{"t":"\xff"}\n{"t":"\xe2\x82"}\n',
    "lone-cr-inside": b'{"t":1}\r{"t":2}\n',
    "junk": b'{"error":"boom"}\nnot json\n',
    "crlf-blank-lines": b'{"a":1}\r\n\r\n{"b":2}\r\n',
    "whitespace-only-tail": b'{"a":1}\n  \t',
    "bom-then-blank": BOM + b'\n{"a":1}\n',
    "partial-bom": b'\xef\xbb{"a":1}\n',
    "long-and-short": b'{"a":"' + b"z" * 300 + b'"}\n{}\n',
}

_E1 = '{\r\n  "candidates": [ { "content": { "parts": [ { "text": "I\'ll fetch" } ], "role": "model" } } ]\r\n}'
_E2 = '{\r\n  "usageMetadata": { "promptTokenCount": 31 }\r\n}'
JSONARRAY_CORPUS = {
    "gemini-crlf": f"[{_E1}\r\n,\r\n{_E2}\r\n]".encode(),
    "compact": b'[{"a":1},{"b":2},{"c":3}]',
    "braces-in-strings": rb'[{"t":"}{][,"},{"t":"q\"}\""},{"t":"bs\\"}]',
    "nested": b'[{"a":{"b":[1,{"c":"]"}],"d":{}}}]',
    "multibyte": '[{"t":"😀"},\r\n{"t":"中文"}]'.encode(),
    "bom-and-ws": BOM + b'\r\n  [ {"a":1} , {"b":2} ]\r\n',
    "empty": b"[\r\n]",
    "unterminated": b'[{"a":1},\r\n{"b":"par',
    "junk": b'[{"a":1},\r\nnot json,\r\n{"b":2}]',
    "bare-error-object": b'{\n  "error": {\n    "code": 400\n  }\n}\n',
    "escapes": rb'[{"t":"\\\"}"},{"u":"\u007d\\\\"}]',
    "crlf-separators": b'[{"a":1}\r\n,\r\n{"b":2}\r\n]\r\n',
    "cr-only": b'[{\r"a": 1\r},\r{"b": 2\r}\r]',
    "deep": b"[" + b'{"a":' * 50 + b"1" + b"}" * 50 + b"]",
    "invalid-utf8": b'[{"t":"\xff"},\r\n{"u":"\xe2\x82"}]',
}

CASES = (
    [pytest.param(SSEParser, data, id=f"sse-{name}") for name, data in SSE_CORPUS.items()]
    + [pytest.param(NDJSONParser, data, id=f"ndjson-{name}") for name, data in NDJSON_CORPUS.items()]
    + [pytest.param(JSONArrayParser, data, id=f"jsonarray-{name}") for name, data in JSONARRAY_CORPUS.items()]
)


@pytest.mark.parametrize("cls, data", CASES)
def test_whole_equals_byte_at_a_time(cls, data):
    whole = feed_all(cls, [data])
    assert feed_all(cls, bytewise(data)) == whole


@pytest.mark.parametrize("cls, data", CASES)
@FEW
@given(draw=st.data())
def test_whole_equals_random_chunkings(cls, data, draw):
    points = draw.draw(st.lists(st.integers(0, len(data)), max_size=12), label="split points")
    assert feed_all(cls, split_at(data, points)) == feed_all(cls, [data])


@pytest.mark.parametrize("cls, data", CASES)
def test_raw_is_a_slice_of_the_input(cls, data):
    frames = feed_all(cls, [data])
    assert_raw_is_slice_of_input(data, frames)
    if cls is not NDJSONParser:  # NDJSON: how a lone CR counts is left open
        assert [f.line for f in frames] == [line_number_at(data, f.offset) for f in frames]


@pytest.mark.parametrize("data", SSE_CORPUS.values(), ids=SSE_CORPUS.keys())
def test_sse_corpus_matches_reference_model(data):
    frames = feed_all(SSEParser, [data])
    assert [sse_projection(f) for f in frames] == [sse_projection(f) for f in reference_sse(data)]


def test_corpus_split_at_every_single_offset():
    # Exhaustive two-piece splits for the shorter inputs (the F4 and F3 traps live
    # at exactly one offset each).
    for cases in (
        [(SSEParser, d) for d in SSE_CORPUS.values()],
        [(NDJSONParser, d) for d in NDJSON_CORPUS.values()],
        [(JSONArrayParser, d) for d in JSONARRAY_CORPUS.values()],
    ):
        for cls, data in cases:
            whole = feed_all(cls, [data])
            for i in range(1, len(data)):
                assert feed_all(cls, [data[:i], data[i:]]) == whole, (cls.__name__, data, i)


# ==========================================================================
# Fuzzing
# ==========================================================================

ALPHABET = [
    b"data:", b"event:", b"id:", b"\r", b"\n", b":", b" ", b"{", b"}", b"\xff", b"\xe2\x82", b"[DONE]",
    # a few more pieces that reach other rules
    b"\r\n", b"\x00", BOM, "😀".encode(), b'"', b"\\", b"[", b"]", b",", b"x",
]  # fmt: skip
alphabet_bytes = st.lists(st.sampled_from(ALPHABET), max_size=40).map(b"".join)
any_input = st.one_of(st.binary(max_size=400), alphabet_bytes)


def random_chunks(draw, data: bytes) -> list[bytes]:
    return split_at(data, draw.draw(st.lists(st.integers(0, len(data)), max_size=10), label="split points"))


@pytest.mark.parametrize("cls", PARSERS)
@FUZZ
@given(data=any_input, draw=st.data())
def test_no_input_makes_a_parser_raise(cls, data, draw):
    # h11's fuzzing invariant: garbage from the peer is reported, never raised.
    frames = feed_all(cls, random_chunks(draw, data))
    assert_raw_is_slice_of_input(data, frames)


@pytest.mark.parametrize("cls", PARSERS)
@FUZZ
@given(data=alphabet_bytes, draw=st.data())
def test_fuzzed_chunking_invariance(cls, data, draw):
    assert feed_all(cls, random_chunks(draw, data)) == feed_all(cls, [data])


@FUZZ
@given(data=any_input, draw=st.data())
def test_sse_matches_reference_model(data, draw):
    frames = feed_all(SSEParser, random_chunks(draw, data))
    assert [sse_projection(f) for f in frames] == [sse_projection(f) for f in reference_sse(data)]


@FUZZ
@given(data=any_input)
def test_sse_raw_offsets_and_lines_are_consistent(data):
    frames = feed_all(SSEParser, [data])
    assert_raw_is_slice_of_input(data, frames)
    for f in frames:
        assert f.line == line_number_at(data, f.offset)
        assert f.raw[:1] not in (b"\r", b"\n"), "a frame never starts with a blank line"


@FUZZ
@given(data=alphabet_bytes, draw=st.data())
def test_ndjson_matches_reference_model(data, draw):
    frames = feed_all(NDJSONParser, random_chunks(draw, data))
    model = reference_ndjson(data)
    # Line numbers are only compared without lone CRs: NDJSON ends lines on LF
    # only, and the brief does not say how a lone CR inside a line is counted.
    lone_cr = b"\r" in data.replace(b"\r\n", b"")

    def proj(f):
        return (f.index, f.offset, None if lone_cr else f.line, f.data, f.raw, f.terminated)

    assert [proj(f) for f in frames] == [proj(f) for f in model]


sized_bytes = st.lists(st.sampled_from([*ALPHABET, b"x" * 16, b"data: " + b"y" * 30]), max_size=30).map(b"".join)


@FUZZ
@given(body=sized_bytes, bom=st.booleans(), limit=st.integers(8, 64), draw=st.data())
def test_sse_max_frame_size_matches_reference_model(body, bom, limit, draw):
    data = BOM + body if bom else body
    # "a block whose bytes exceed it produces ONE frame with data=None, raw = its
    # first max_frame_size bytes at most, and a frame-too-large issue; parsing
    # resumes normally with the next block." Blocks within 2 bytes of the limit
    # are only checked loosely (whether the dispatching terminator counts is a
    # detail the brief leaves open).
    frames = feed_all(SSEParser, random_chunks(draw, data), max_frame_size=limit)
    model = reference_sse(data)
    assert len(frames) == len(model)
    for f, m in zip(frames, model):
        assert (f.index, f.offset, f.line) == (m.index, m.offset, m.line)
        if len(m.raw) > limit + 2:
            assert f.data is None
            assert "frame-too-large" in [i.code for i in f.issues]
            assert 0 < len(f.raw) <= limit and m.raw.startswith(f.raw)
        elif len(m.raw) <= limit - 2:
            assert sse_projection(f) == sse_projection(m)


@pytest.mark.parametrize("cls", [NDJSONParser, JSONArrayParser])
@FUZZ
@given(body=sized_bytes, limit=st.integers(8, 64), draw=st.data())
def test_max_frame_size_fuzz_ndjson_and_json_array(cls, body, limit, draw):
    # Same max_frame_size contract as SSE: no raw over the limit, oversized
    # frames have data=None, and chunking does not change anything.
    whole = feed_all(cls, [body], max_frame_size=limit)
    assert feed_all(cls, random_chunks(draw, body), max_frame_size=limit) == whole
    assert_raw_is_slice_of_input(body, whole)
    for f in whole:
        assert len(f.raw) <= limit + 2  # +2: leave the terminator question open
        if "frame-too-large" in [i.code for i in f.issues]:
            assert f.data is None


# ==========================================================================
# Generated well-formed streams (round trips)
# ==========================================================================

line_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=12)
sse_event = st.fixed_dictionaries(
    {
        "comments": st.lists(line_text, max_size=2),
        "event": st.none() | line_text,
        "id": st.none() | line_text.filter(lambda s: "\x00" not in s),
        "retry": st.none() | st.integers(0, 10**12),
        "data": st.lists(line_text, max_size=3),
        "stray_blanks": st.integers(0, 2),
    }
)


def serialize_event(ev: dict, eol: bytes) -> tuple[bytes, tuple[str, ...]]:
    """The event's lines (each followed by eol) and the comments it carries."""
    comments = tuple(ev["comments"])
    lines = [b": " + c.encode() for c in comments]
    if ev["event"] is not None:
        lines.append(b"event: " + ev["event"].encode())
    if ev["id"] is not None:
        lines.append(b"id: " + ev["id"].encode())
    if ev["retry"] is not None:
        lines.append(b"retry: " + str(ev["retry"]).encode())
    lines += [b"data: " + d.encode() for d in ev["data"]]
    if not lines:  # a block needs at least one line: use a bare ":" ping
        lines, comments = [b":"], ("",)
    return b"".join(line + eol for line in lines), comments


@settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=st.lists(sse_event, max_size=5),
    eol=st.sampled_from([b"\n", b"\r\n", b"\r"]),
    bom=st.booleans(),
    last_unterminated=st.booleans(),
    draw=st.data(),
)
def test_generated_sse_streams_round_trip(events, eol, bom, last_unterminated, draw):
    stream = BOM if bom else b""
    expected = []
    last_event_id = ""
    for n, ev in enumerate(events):
        stream += eol * ev["stray_blanks"]
        offset = len(stream)
        raw, comments = serialize_event(ev, eol)
        terminated = not (last_unterminated and n == len(events) - 1)
        if terminated:
            raw += eol
        stream += raw
        if ev["id"] is not None:
            last_event_id = ev["id"]
        expected.append(
            {
                "index": n,
                "offset": offset,
                "line": line_number_at(stream, offset),
                "event": ev["event"],
                "data": "\n".join(ev["data"]) if ev["data"] else None,
                "id": ev["id"],
                "retry": ev["retry"],
                "comments": comments,
                "raw": raw,
                "terminated": terminated,
                "issues": (),
            }
        )
    parser = SSEParser()
    frames = []
    for chunk in random_chunks(draw, stream):
        frames += parser.feed(chunk)
    frames += parser.close()
    fields = ["index", "offset", "line", "event", "data", "id", "retry", "comments", "raw", "terminated", "issues"]
    assert [{k: getattr(f, k) for k in fields} for f in frames] == expected
    assert parser.last_event_id == last_event_id


json_scalar = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
json_object = st.dictionaries(
    st.text(max_size=6),
    st.recursive(json_scalar, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=4), kids, max_size=3), max_leaves=8),
    max_size=4,
)  # fmt: skip


@settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    objects=st.lists(json_object, max_size=5),
    eol=st.sampled_from([b"\n", b"\r\n"]),
    blank=st.sampled_from([b"", b"\n", b"  \n"]),
    draw=st.data(),
)
def test_generated_ndjson_round_trip(objects, eol, blank, draw):
    # ensure_ascii=False keeps U+2028/U+0085 raw in the line, as Node and Python servers do.
    texts = [json.dumps(o, ensure_ascii=False) for o in objects]
    stream = b"".join(blank + t.encode() + eol for t in texts)
    frames = feed_all(NDJSONParser, random_chunks(draw, stream))
    assert [f.data for f in frames] == texts
    assert [json.loads(f.data) for f in frames] == objects
    assert [f.raw for f in frames] == [t.encode() + eol for t in texts]
    assert all(f.terminated and f.issues == () for f in frames)


@settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    objects=st.lists(json_object, max_size=5),
    indent=st.sampled_from([None, 2]),
    crlf=st.booleans(),
    sep=st.sampled_from([",", ", ", ",\r\n", "\r\n,\r\n", "\n,\n"]),
    draw=st.data(),
)
def test_generated_json_array_round_trip(objects, indent, crlf, sep, draw):
    texts = [json.dumps(o, ensure_ascii=False, indent=indent) for o in objects]
    if crlf:
        texts = [t.replace("\n", "\r\n") for t in texts]
    stream = ("[" + sep.join(texts) + "]").encode()
    parser = JSONArrayParser()
    frames = []
    for chunk in random_chunks(draw, stream):
        frames += parser.feed(chunk)
    frames += parser.close()
    assert [f.data for f in frames] == texts
    assert [json.loads(f.data) for f in frames] == objects
    assert_raw_is_slice_of_input(stream, frames)
    assert [f.line for f in frames] == [line_number_at(stream, f.offset) for f in frames]
    assert parser.saw_end


# ==========================================================================
# Linearity and bounded memory (no timing assertions)
# ==========================================================================

MIB = 1024 * 1024


def chunks_of(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


BIG = b"x" * (8 * MIB)
LARGE_INPUTS = [
    pytest.param(SSEParser, b"data: " + BIG + b"\n\n", 8 * MIB, id="sse"),
    pytest.param(NDJSONParser, b'{"t":"' + BIG + b'"}\n', 8 * MIB + 8, id="ndjson"),
    pytest.param(JSONArrayParser, b'[{"t":"' + BIG + b'"}]', 8 * MIB + 8, id="jsonarray"),
]


@pytest.mark.parametrize("cls, data, data_len", LARGE_INPUTS)
def test_8_mib_frame_in_4_kib_chunks(cls, data, data_len):
    # A parser that rescans or re-decodes its whole pending buffer on every read
    # does 2048 passes over up to 8 MiB here (quadratic); a linear one finishes
    # in well under a second.
    (f,) = feed_all(cls, chunks_of(data, 4096))
    assert len(f.data) == data_len
    assert f.terminated and f.issues == ()


ONE_BYTE_INPUTS = [
    pytest.param(SSEParser, b"data: " + b"y" * 128_000 + b"\n\n", 1, id="sse-one-long-line"),
    pytest.param(SSEParser, b"".join(b'data: {"i":%d}\r\n\r\n' % i for i in range(8000)), 8000, id="sse-many-events"),
    pytest.param(SSEParser, b": keep-alive\n\n" * 12_000, 12_000, id="sse-heartbeats"),
    pytest.param(SSEParser, b"\r\n" * 60_000 + b"data: x\r\n\r\n", 1, id="sse-stray-blank-lines"),
    pytest.param(SSEParser, b"data: x\r" + b"\r" * 100_000, 1, id="sse-lone-crs"),
    pytest.param(NDJSONParser, b'{"t":"' + b"y" * 128_000 + b'"}\n', 1, id="ndjson-one-long-line"),
    pytest.param(JSONArrayParser, b'[{"t":"' + b"y" * 128_000 + b'"}]', 1, id="jsonarray-one-long-element"),
    pytest.param(
        JSONArrayParser,
        b"[" + b",\r\n".join(b'{"i":%d}' % i for i in range(10000)) + b"]",
        10000,
        id="jsonarray-many-elements",
    ),
]


@pytest.mark.parametrize("cls, data, n_frames", ONE_BYTE_INPUTS)
def test_200_kb_one_byte_at_a_time(cls, data, n_frames):
    frames = feed_all(cls, bytewise(data))
    assert len(frames) == n_frames
    assert all(f.terminated and f.issues == () for f in frames)


@pytest.mark.parametrize(
    "head, chunk",
    [
        pytest.param(b"data: ", b"x" * 4096, id="one-long-line"),
        pytest.param(b"", b"data: " + b"x" * 4089 + b"\n", id="many-data-lines"),
        pytest.param(b"", b": " + b"c" * 4092 + b"\r\n", id="many-comment-lines"),
        pytest.param(b"", b"Data: " + b"u" * 4088 + b"\r\n", id="many-unknown-fields"),
    ],
)
def test_oversized_block_is_not_buffered_whole(head, chunk):
    # "The parser never holds more than about max_frame_size bytes of one block."
    assert len(chunk) == 4096
    limit = 64 * 1024
    p = SSEParser(max_frame_size=limit)
    frames = p.feed(head)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(2048):  # 8 MiB in one block
            frames += p.feed(chunk)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    frames += p.feed(b"\n\ndata: ok\n\n") + p.close()
    assert peak - before < 16 * limit, f"parser held {peak - before} bytes for a {limit}-byte limit"
    assert [f.data for f in frames] == [None, "ok"]
    assert "frame-too-large" in [i.code for i in frames[0].issues]
    assert len(frames[0].raw) <= limit
