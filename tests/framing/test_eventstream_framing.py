"""AWS event-stream framing: lengths, both CRCs, headers, resync, and agreement with botocore's parser."""

from __future__ import annotations

import itertools
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eventstream_helpers import event, exception, message
from streamfold import fold, sniff
from streamfold.framing import EventStreamParser

STREAM = b"".join([
    event("messageStart", {"role": "assistant", "p": "abcdefghij"}),
    event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hei, "}, "p": "ab"}),
    event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "verden ✓"}, "p": "abcd"}),
    event("contentBlockStop", {"contentBlockIndex": 0}),
    event("messageStop", {"stopReason": "end_turn"}),
    event("metadata", {"usage": {"inputTokens": 12, "outputTokens": 4, "totalTokens": 16}, "metrics": {"latencyMs": 210}}),
])


def parse(data: bytes, chunk: int | None = None, **kwargs: int) -> list:
    parser = EventStreamParser(**kwargs)
    frames = []
    if chunk is None:
        frames += parser.feed(data)
    else:
        for i in range(0, len(data), chunk):
            frames += parser.feed(data[i : i + chunk])
    return frames + parser.close()


def test_messages_become_frames_with_event_headers_and_payload() -> None:
    frames = parse(STREAM)
    assert [f.event for f in frames] == ["messageStart", "contentBlockDelta", "contentBlockDelta",
                                         "contentBlockStop", "messageStop", "metadata"]
    assert frames[2].data == '{"contentBlockIndex": 0, "delta": {"text": "verden \\u2713"}, "p": "abcd"}'
    assert dict(frames[0].headers)[":message-type"] == "event"
    assert all(f.issues == () and f.line == 0 for f in frames)
    assert b"".join(f.raw for f in frames) == STREAM
    assert [f.offset for f in frames] == [sum(len(g.raw) for g in frames[:i]) for i in range(len(frames))]


def test_any_chunking_gives_the_same_frames() -> None:
    whole = parse(STREAM)
    for size in (1, 2, 3, 7, 12, 13, 100):
        assert parse(STREAM, size) == whole


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=len(STREAM)), max_size=20))
def test_random_chunkings(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    edges = [0, *points, len(STREAM)]
    parser = EventStreamParser()
    frames = [f for a, b in itertools.pairwise(edges) for f in parser.feed(STREAM[a:b])] + parser.close()
    assert frames == parse(STREAM)


def test_every_header_type() -> None:
    ident = uuid.UUID("12345678-1234-5678-1234-567812345678")
    data = message({"t": True, "f": False, "n": 2**40, "b": b"\x00\x01", "s": "x", "u": ident}, b"{}")
    (frame,) = parse(data)
    assert dict(frame.headers) == {"t": True, "f": False, "n": 2**40, "b": b"\x00\x01", "s": "x", "u": str(ident)}


def test_bad_message_crc_is_flagged_and_the_rest_decodes() -> None:
    broken = bytearray(STREAM)
    second = len(event("messageStart", {"role": "assistant", "p": "abcdefghij"}))
    broken[second + 40] ^= 0xFF  # inside the second message's payload
    frames = parse(bytes(broken))
    assert len(frames) == 6
    assert [i.code for i in frames[1].issues] == ["crc-mismatch"]
    assert all(f.issues == () for f in frames[2:])


def test_bad_prelude_resyncs_at_the_next_valid_message() -> None:
    first = event("messageStart", {"role": "assistant"})
    garbage = b"\x00\x00\x01\x00garbage-bytes-here"
    frames = parse(first + garbage + STREAM)
    assert frames[1].issues[0].code == "bad-prelude" and frames[1].raw == garbage
    assert [f.event for f in frames[2:]] == [f.event for f in parse(STREAM)]
    assert parse(first + garbage + STREAM, 1) == frames


def test_truncated_last_message() -> None:
    frames = parse(STREAM[:-10])
    assert frames[-1].issues[0].code == "truncated-message" and not frames[-1].terminated
    assert len(frames) == 6


def test_oversized_message_is_dropped_with_a_located_error() -> None:
    big = event("contentBlockDelta", {"delta": {"text": "x" * 5000}})
    frames = parse(big + STREAM, 64, max_frame_size=1000)
    assert frames[0].issues[0].code == "frame-too-large"
    assert [f.event for f in frames[1:]] == [f.event for f in parse(STREAM)]


def test_exception_messages_are_in_stream_errors() -> None:
    frames = parse(exception("throttlingException", "Too many requests"))
    assert frames[0].event == "throttlingException"
    assert frames[0].issues[0].code == "eventstream-exception"
    result = fold(event("messageStart", {"role": "assistant"}) + exception("throttlingException", "Too many requests"))
    assert [e.code for e in result.errors] == ["in-stream-error"]
    assert "throttlingException" in result.errors[0].message and not result.complete


def test_sniff_recognises_the_prelude() -> None:
    assert sniff(STREAM[:12]) == "aws-eventstream"
    assert sniff(STREAM[:5]) is None
    assert sniff(b'\x00\x00\x00\x10garbage!', final=True) != "aws-eventstream"


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    frames = parse(data)
    assert sum(len(f.raw) for f in frames) <= len(data)
    fold(data, transport="aws-eventstream")


def test_agrees_with_botocore() -> None:
    eventstream = pytest.importorskip("botocore.eventstream")
    buffer = eventstream.EventStreamBuffer()
    buffer.add_data(STREAM)
    theirs = [(message.headers, message.payload) for message in buffer]
    ours = [(dict(f.headers), f.data.encode()) for f in parse(STREAM)]
    assert [h for h, _ in theirs] == [h for h, _ in ours]
    assert [p for _, p in theirs] == [p for _, p in ours]
