"""SSE framing against a plain reading of the WHATWG spec, on random streams.

`spec_parse` below is written from the spec's "Interpreting an event stream"
section, one quoted rule at a time, and shares no code with streamfold. Random
streams (comments, `retry`, `id`, `event`, `data`, unknown fields, CR/LF/CRLF
line ends, a BOM, invalid UTF-8, a final line without a line end) are fed to
both framers (`SSEParser`, and the fold's `SSERunParser`) whole and in random
chunks, and must give exactly the spec's events, last event ID and
reconnection time.

streamfold reports more than a browser dispatches (every block is a frame,
even without data; a last block without its blank line is a frame with
terminated=False); `spec_parse` also records those blocks, from the same
buffers the spec keeps, so the frames are compared whole.

https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from framing_helpers import split_at
from streamfold import SSEParser
from streamfold.framing._runs import SSERunParser

SPEC = settings(deadline=None, max_examples=400, suppress_health_check=[HealthCheck.too_slow])


@dataclass
class Block:
    """What the spec's buffers held for one block (the lines up to a blank line)."""

    event: str | None = None
    data: list[str] = field(default_factory=list)
    id: str | None = None
    retry: int | None = None
    comments: list[str] = field(default_factory=list)


@dataclass
class SpecResult:
    #: The MessageEvents dispatched: (type, data, lastEventId).
    events: list[tuple[str, str, str]]
    #: Every block with at least one line: (event, data, id, retry, comments, terminated).
    blocks: list[tuple[str | None, str | None, str | None, int | None, tuple[str, ...], bool]]
    last_event_id: str
    reconnection_time: int | None


def spec_parse(stream: bytes) -> SpecResult:
    # "Streams must be decoded using the UTF-8 decode algorithm." (It removes one
    # leading BOM: "One leading U+FEFF BYTE ORDER MARK character must be ignored if
    # any are present." Invalid bytes become U+FFFD.)
    text = stream.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    events: list[tuple[str, str, str]] = []
    blocks: list[tuple[str | None, str | None, str | None, int | None, tuple[str, ...], bool]] = []
    data_buffer = ""
    event_type_buffer = ""
    last_event_id_buffer = ""
    reconnection_time: int | None = None
    block = Block()
    lines_in_block = 0

    def record(terminated: bool) -> None:
        blocks.append((block.event, "\n".join(block.data) if block.data else None, block.id, block.retry,
                       tuple(block.comments), terminated))

    pos = 0
    while True:
        # "Lines must be separated by either a U+000D CARRIAGE RETURN U+000A LINE FEED
        # (CRLF) character pair, a single U+000A LINE FEED (LF) character, or a single
        # U+000D CARRIAGE RETURN (CR) character."
        ends = [at for at in (text.find("\r", pos), text.find("\n", pos)) if at >= 0]
        if not ends:
            # "Once the end of the file is reached, any pending data must be discarded.
            # (If the file ends in the middle of an event, before the final empty line,
            # the incomplete event is not dispatched.)" The text after the last line
            # end is not a line: nothing of it is interpreted.
            break
        end = min(ends)
        line = text[pos:end]
        pos = end + 2 if text.startswith("\r\n", end) else end + 1
        if line == "":
            # "If the line is empty (a blank line): Dispatch the event, as defined below."
            if lines_in_block:
                record(True)
            block, lines_in_block = Block(), 0
            # "1. Set the last event ID string of the event source to the value of the
            # last event ID buffer."
            last_event_id = last_event_id_buffer
            # "2. If the data buffer is an empty string, set the data buffer and the
            # event type buffer to the empty string and return."
            if data_buffer == "":
                event_type_buffer = ""
                continue
            # "3. If the data buffer's last character is a U+000A LINE FEED (LF)
            # character, then remove the last character from the data buffer."
            if data_buffer.endswith("\n"):
                data_buffer = data_buffer[:-1]
            # "...Initialize event's type attribute to "message", its data attribute to
            # data ... its lastEventId attribute to the last event ID string"; "If the
            # event type buffer has a value other than the empty string, change the type
            # of the newly created event to equal the value of the event type buffer."
            events.append((event_type_buffer or "message", data_buffer, last_event_id))
            # "7. Set the data buffer and the event type buffer to the empty string."
            data_buffer = event_type_buffer = ""
            continue
        lines_in_block += 1
        if line.startswith(":"):
            # "If the line starts with a U+003A COLON character (:): Ignore the line."
            # (streamfold keeps it as a comment, without one leading space.)
            comment = line[1:]
            block.comments.append(comment[1:] if comment.startswith(" ") else comment)
            continue
        if ":" in line:
            # "Collect the characters on the line before the first U+003A COLON character
            # (:), and let field be that string. Collect the characters on the line after
            # the first U+003A COLON character (:), and let value be that string. If value
            # starts with a U+0020 SPACE character, remove it from value."
            name, value = line.split(":", 1)
            if value.startswith(" "):
                value = value[1:]
        else:
            # "...using the whole line as the field name, and the empty string as the field value."
            name, value = line, ""
        if name == "event":
            # "Set the event type buffer to field value."
            event_type_buffer = value
            block.event = value
        elif name == "data":
            # "Append the field value to the data buffer, then append a single U+000A
            # LINE FEED (LF) character to the data buffer."
            data_buffer += value + "\n"
            block.data.append(value)
        elif name == "id":
            # "If the field value does not contain U+0000 NULL, then set the last event
            # ID buffer to the field value. Otherwise, ignore the field."
            if "\x00" not in value:
                last_event_id_buffer = value
                block.id = value
        elif name == "retry":
            # "If the field value consists of only ASCII digits, then interpret the field
            # value as an integer in base ten, and set the event stream's reconnection
            # time to that integer. Otherwise, ignore the field." (An empty value is no
            # integer.)
            if value and all("0" <= c <= "9" for c in value):
                reconnection_time = int(value)
                block.retry = int(value)
        # "Otherwise: The field is ignored."
    if lines_in_block:
        record(False)  # streamfold's addition: the last block's complete lines, not dispatched
    return SpecResult(events, blocks, last_event_id_buffer, reconnection_time)


def streamfold_parse(parser_cls: type[SSEParser], chunks: list[bytes]) -> SpecResult:
    parser = parser_cls()
    frames = [frame for chunk in chunks for frame in parser.feed(chunk)] + parser.close()
    events, last_id, retry = [], "", None
    for frame in frames:
        if frame.id is not None:
            last_id = frame.id
        if frame.retry is not None:
            retry = frame.retry
        if frame.terminated and frame.data is not None:
            events.append((frame.event or "message", frame.data, last_id))
    blocks = [(f.event, f.data, f.id, f.retry, f.comments, f.terminated) for f in frames]
    assert parser.last_event_id == last_id
    return SpecResult(events, blocks, parser.last_event_id, retry)


# -- random streams ---------------------------------------------------------------

_VALUE_PIECES = [b"a", b"Z", b" ", b"  ", b":", b"1", b"07", b"x y", b"\xc3\xa9", b"\xe2\x80\xa8", b"\xff", b"\xc3",
                 b"\x00", b"{\"k\":1}", b"data:", b"\xef\xbb\xbf"]
value = st.lists(st.sampled_from(_VALUE_PIECES), max_size=4).map(b"".join)
digits = st.integers(0, 10**12).map(lambda n: str(n).encode())
line_end = st.sampled_from([b"\n", b"\r", b"\r\n"])
line = st.one_of(
    value.map(lambda v: b":" + v),  # a comment
    st.tuples(st.sampled_from([b"retry:", b"retry: ", b"retry:  "]), st.one_of(digits, value)).map(b"".join),
    st.tuples(st.sampled_from([b"id:", b"id: ", b"id"]), value).map(lambda p: p[0] + (p[1] if p[0] != b"id" else b"")),
    st.tuples(st.sampled_from([b"event:", b"event: "]), value).map(b"".join),
    st.tuples(st.sampled_from([b"data:", b"data: ", b"data"]), value)
    .map(lambda p: p[0] + (p[1] if p[0] != b"data" else b"")),
    st.tuples(st.sampled_from([b"Data:", b"data :", b"foo:", b"retry", b"\xef\xbb\xbfdata:"]), value).map(b"".join),
    st.just(b""),  # a blank line
)
# Long regions of simple blocks with LF line ends, where SSERunParser takes its runs.
simple_run = st.tuples(st.sampled_from([b"data: {\"n\":1}\n\n", b"event: e\ndata: 2\n\n", b"data:x\n\n"]),
                       st.integers(8, 20)).map(lambda p: p[0] * p[1])


@st.composite
def sse_stream(draw: st.DrawFn) -> bytes:
    parts = [draw(st.sampled_from([b"", b"", b"\xef\xbb\xbf", b"\xef\xbb\xbf\xef\xbb\xbf"]))]
    for _ in range(draw(st.integers(0, 12))):
        if draw(st.integers(0, 9)) == 0:
            parts.append(draw(simple_run))
        else:
            parts.append(draw(line) + draw(line_end))
    if draw(st.booleans()):
        parts.append(draw(line))  # a final line without a line end
    return b"".join(parts)


def chunked(draw: st.DataObject, data: bytes) -> list[bytes]:
    return split_at(data, draw.draw(st.lists(st.integers(0, len(data)), max_size=12), label="cuts"))


@SPEC
@given(stream=sse_stream(), draw=st.data())
@example(stream=b"data: a\n\n: keep-alive", draw=None)  # a comment on the unterminated last line
@example(stream=b"data: a\n\nretry: 5", draw=None)  # a retry on it
@example(stream=b"id: 1\ndata: a\r\rid: 2\rdata: b", draw=None)
@example(stream=b"data: a\r\n\r", draw=None)  # the stream ends on the CR of a CRLF that never completes
def test_streamfold_frames_what_the_spec_says(stream: bytes, draw: st.DataObject | None) -> None:
    want = spec_parse(stream)
    chunkings = [[stream], [stream[i : i + 1] for i in range(len(stream))]]
    if draw is not None:
        chunkings.append(chunked(draw, stream))
    for parser_cls in (SSEParser, SSERunParser):
        for chunks in chunkings:
            got = streamfold_parse(parser_cls, chunks)
            assert got.events == want.events, (parser_cls.__name__, chunks)
            assert got.blocks == want.blocks, (parser_cls.__name__, chunks)
            assert (got.last_event_id, got.reconnection_time) == (want.last_event_id, want.reconnection_time)


def test_the_reference_reads_the_specs_examples() -> None:
    # The spec's own examples, so that the reference is checked too.
    assert spec_parse(b"data: YHOO\ndata: +2\ndata: 10\n\n").events == [("message", "YHOO\n+2\n10", "")]
    stream = b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n"
    assert spec_parse(stream).events == [("message", "first event", "1"), ("message", "second event", "")]
    assert spec_parse(b"data\n\ndata\ndata\n\ndata:").events == [("message", "", ""), ("message", "\n", "")]
    assert spec_parse(b"data:test\n\ndata: test\n\n").events == [("message", "test", "")] * 2
    assert spec_parse(b"retry: 10\n: x\nretry: 2").reconnection_time == 10
