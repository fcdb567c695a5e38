"""Events come as SSE frames complete, whatever the line ends (LF, CRLF, CR only).

A frame is complete when the line end of its blank line arrives. For "\\r"
(and the CR of "\\r\\n") that is the CR itself: "a single U+000D CARRIAGE
RETURN (CR) character" ends a line, and an LF after it is only the rest of a
CRLF. So the frame's events come with the CR, even at the end of a chunk;
only the frame's raw waits for the next byte (or the end of the stream) to
say whether it ends "\\r" or "\\r\\n". Nothing else may hold a frame back: not
the transport sniff (which once waited for an LF, up to 64 KiB), not the
deferral of small chunks.
"""

from __future__ import annotations

import json
import random
from itertools import accumulate

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from feeding import tr_fold
from framing_helpers import split_at
from streamfold import Folder, SSEParser, TextDelta, fold
from streamfold.framing._runs import SSERunParser

WORDS = ["The", " tower", " is", " 330", " metres", " tall", "."]


def chat_frame(i: int, word: str, end: bytes) -> bytes:
    chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "m",
             "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]}
    return b": ping" + end + b"data: " + json.dumps(chunk).encode() + end + b"id: " + str(i).encode() + end + end


def stream(end: bytes) -> tuple[bytes, list[int]]:
    """A chat stream with `end` line ends, and where each frame's blank line starts (its line end's first byte)."""
    data, completes = b"", []
    for i, word in enumerate(WORDS):
        data += chat_frame(i, word, end)
        completes.append(len(data) - len(end))
    data += b"data: [DONE]" + end + end
    return data, completes


def feed_and_watch(chunks: list[bytes]) -> tuple[dict[str, int], Folder]:
    """Feed chunk by chunk; return, for each text delta, how many bytes had been fed when it came."""
    folder, fed, arrived = Folder(), 0, {}
    for chunk in chunks:
        fed += len(chunk)
        for event in folder.feed(chunk):
            if isinstance(event, TextDelta):
                arrived[event.text] = fed
    return arrived, folder


def chunkings(data: bytes, completes: list[int]) -> dict[str, list[bytes]]:
    rng = random.Random(7)
    return {
        "frame by frame": split_at(data, [at + 1 for at in completes]),
        "byte by byte": [data[i : i + 1] for i in range(len(data))],
        "cut at each blank line's line end": split_at(data, [at + 1 for at in completes] + completes),
        "random": split_at(data, [rng.randrange(len(data)) for _ in range(30)]),
        "one chunk of 64 KiB and more": [data + b": pad\r" * 12000],
    }


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_each_event_comes_when_its_blank_line_ends(end: bytes) -> None:
    data, completes = stream(end)
    for name, chunks in chunkings(data, completes).items():
        arrived, folder = feed_and_watch(chunks)
        assert list(arrived) == WORDS, name
        ends = list(accumulate(len(chunk) for chunk in chunks))
        for word, at in zip(WORDS, completes, strict=True):
            # With the chunk that holds the first byte of the blank line's line end, not later.
            assert arrived[word] == next(end for end in ends if end > at), (name, word)
        result = folder.close()
        assert result.choices[0].content == "".join(WORDS) and result.complete, name
        assert result == fold(b"".join(chunks)), name


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_the_fold_does_not_depend_on_the_chunking(end: bytes) -> None:
    data, _ = stream(end)
    result = tr_fold(data)
    assert result.choices[0].content == "".join(WORDS) and result.complete
    assert [frame.id for frame in result.frames] == [*(str(i) for i in range(len(WORDS))), None]


def test_a_cr_only_stream_is_sniffed_at_its_first_line_end() -> None:
    # The sniff waited for an LF: a CR-only stream gave nothing until 64 KiB had come.
    folder = Folder()
    first = chat_frame(0, "Hi", b"\r")
    assert len(first) > 16 and b"\n" not in first
    assert [event.text for event in folder.feed(first) if isinstance(event, TextDelta)] == ["Hi"]
    assert folder.transport == "sse"


def test_the_frame_a_final_cr_completes_gets_its_lf_when_it_comes() -> None:
    # "data: x\r\n\r" then "\n": the frame's events come with the CR; its raw, with the LF.
    frame = chat_frame(0, "Hi", b"\r\n")
    folder = Folder()
    assert [e.text for e in folder.feed(frame[:-1]) if isinstance(e, TextDelta)] == ["Hi"]
    assert folder.frames[-1].raw == frame[:-1]
    assert folder.feed(frame[-1:]) == []
    assert folder.frames[-1].raw == frame and len(folder.frames) == 1
    # A CR-only frame: the next byte says its raw ends at the CR.
    folder = Folder()
    cr = chat_frame(0, "Hi", b"\r")
    assert [e.text for e in folder.feed(cr) if isinstance(e, TextDelta)] == ["Hi"]
    assert [e.text for e in folder.feed(chat_frame(1, "!", b"\r")) if isinstance(e, TextDelta)] == ["!"]
    assert [frame.raw for frame in folder.frames] == [cr, chat_frame(1, "!", b"\r")]
    result = folder.close()  # the stream ends on a CR: the last frame's raw is complete as it is
    assert [frame.raw for frame in result.frames] == [cr, chat_frame(1, "!", b"\r")]
    assert result.choices[0].content == "Hi!"


def test_a_cr_that_ends_a_data_line_completes_nothing() -> None:
    folder = Folder()
    assert folder.feed(b'data: {"object":"chat.completion.chunk","choices":[]}\r') == []
    assert len(folder.frames) == 0
    folder.feed(b"\r")
    assert len(folder.frames) == 1


def test_a_frame_the_lf_would_make_too_large_is_not_folded_early() -> None:
    data = b"data: " + b"x" * 50 + b"\r\n\r"
    for max_frame_size in (len(data) - 1, len(data), len(data) + 1):
        folder = Folder(max_frame_size=max_frame_size)
        folder.feed(data)
        early = len(folder.frames)
        folder.feed(b"\n")
        whole = fold(data + b"\n", max_frame_size=max_frame_size)
        assert list(folder.close().frames) == list(whole.frames)
        assert early == (1 if max_frame_size >= len(data) + 1 else 0)


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([b"data: a", b"data: b", b": c", b"id: 1", b"retry: 9", b"\r", b"\n", b"\r\n",
                                 b"\r\r", b"event: e"]), max_size=16).map(b"".join), st.data())
def test_held_frame_is_the_frame_the_next_bytes_give(data: bytes, draw: st.DataObject) -> None:
    # Whenever a framer says a held CR completed a frame, the next feed (or close) gives that
    # frame first, the same but for an LF at the end of its raw.
    chunks = split_at(data, draw.draw(st.lists(st.integers(0, len(data)), max_size=8)))
    for parser_cls in (SSEParser, SSERunParser):
        parser = parser_cls()
        held = None
        for chunk in [*chunks, None]:
            records = list(parser.feed_records(chunk) if chunk is not None else parser.close_records())
            if held is not None:
                first = records[0]
                assert type(first) is tuple
                assert first[:8] == held[:8] and first[9:] == held[9:]
                assert first[8] in (held[8], held[8] + b"\n")
                assert first[8] == held[8] + b"\n" or chunk is None or not chunk.startswith(b"\n")
            held = parser.held_frame() if chunk is not None else None


@settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([b"\n", b"\r\n", b"\r"]), min_size=4 * len(WORDS) + 2, max_size=4 * len(WORDS) + 2),
       st.lists(st.integers(0, 2000), max_size=20))
def test_mixed_line_ends_in_random_chunks_fold_as_whole(ends: list[bytes], cuts: list[int]) -> None:
    # Each line end drawn on its own (a CR followed by an LF line end is one CRLF, as the spec says).
    lines, _ = stream(b"\n")
    pieces = lines.split(b"\n")[:-1]
    data = b"".join(piece + end for piece, end in zip(pieces, ends, strict=True))
    whole = fold(data)
    folder, events = Folder(), []
    for chunk in split_at(data, cuts):
        events += folder.feed(chunk)
    events += folder.finish()
    result = folder.close()
    assert result == whole and list(result.frames) == list(whole.frames)
    assert "".join(event.text for event in events if isinstance(event, TextDelta)) == whole.choices[0].content
