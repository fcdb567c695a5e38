"""Runs with `id:` and `retry:` lines give the frames the line parser gives.

`SSERunParser` keeps blocks of one layout of simple fields (a `data:` line, maybe an `event:`,
`id:` and `retry:` line) as runs whose records are made only when read, and whose `data:` and
`event:` lines the fold reads straight from the bytes. So every SSE capture, with `id:` and
`retry:` lines put into its blocks in any order and holding any value (NUL, invalid UTF-8, no
space, non-digits), and then mutated, must frame to the same `Frame`s, every field, and the same
WHATWG last-event-id, as `SSEParser` gives, whatever the chunking; and what the fold reads of a
run must be what its records say.
"""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from framing_helpers import split_at
from mutations import CAPTURES, FUZZ, mutated
from streamfold import Folder, Frame, fold
from streamfold.framing._records import FrameRun, make_frame
from streamfold.framing._runs import DataRun, SSERunParser
from streamfold.framing.sse import SSEParser

SSE = {name: data for name, data in CAPTURES.items() if name.endswith(".sse")}
_IDS = st.one_of(st.integers(0, 10**6).map(lambda n: b"%d" % n),
                 st.sampled_from([b"", b" two spaces", b"\x00", b"\xff", b"caf\xc3\xa9", b"a:b", b"evt-1"]))
_RETRIES = st.sampled_from([b"3000", b"0", b"", b"3e3", b"\xd9\xa3", b"9" * 4301, b" 5"])


@st.composite
def with_fields(draw: st.DrawFn) -> bytes:
    """An SSE capture whose blocks each get `id:` (and maybe `retry:`) lines, at one place in every
    block, with values that are mostly plain and sometimes what the line parser reports."""
    data = SSE[draw(st.sampled_from(sorted(SSE)))]
    first, retry = draw(st.booleans()), draw(st.integers(0, 3))
    space = draw(st.sampled_from([b" ", b" ", b""]))
    odd = draw(st.integers(0, 1))
    blocks = []
    for number, block in enumerate(data.split(b"\n\n")):
        if not block:
            blocks.append(block)
            continue
        value = draw(_IDS) if odd and draw(st.integers(0, 9)) == 0 else b"%d" % number
        lines = block.split(b"\n")
        lines.insert(0 if first else len(lines), b"id:" + space + value)
        if retry == 1 or (retry == 2 and number == 0):
            lines.insert(draw(st.integers(0, len(lines))), b"retry: " + (draw(_RETRIES) if odd else b"3000"))
        blocks.append(b"\n".join(lines))
    return b"\n\n".join(blocks)


def _plain(data: bytes) -> tuple[list[Frame], str]:
    parser = SSEParser()
    frames = parser.feed(data) + parser.close()
    return frames, parser.last_event_id


def _by_runs(chunks: list[bytes]) -> tuple[list[Frame], str, int]:
    """The frames, the last event id and how many frames came in runs; each run's fold view
    (its data and event lines) checked against its records on the way."""
    parser = SSERunParser()
    output = [item for chunk in chunks for item in parser.feed_records(chunk)] + parser.close_records()
    frames, in_runs = [], 0
    for item in output:
        if not isinstance(item, FrameRun):
            frames.append(make_frame(item))
            continue
        records = list(item.records())
        assert [make_frame(item.record(record[0])) for record in reversed(records)] == [
            make_frame(record) for record in reversed(records)]
        if isinstance(item, DataRun):
            for record, piece, event in zip(records, item.pieces(), item.event_lines() or [None] * item.count, strict=True):
                if not record[10]:  # no finding: the fold's view is the record's
                    assert piece[5:].removeprefix(b" ") == record[4].encode()
                    assert (event is None) == (record[3] is None) and item.event(record[0]) == record[3]
        frames += [make_frame(record) for record in records]
        in_runs += item.count
    return frames, parser.last_event_id, in_runs


@FUZZ
@given(with_fields(), st.randoms(use_true_random=False))
def test_runs_with_id_and_retry_lines_frame_as_the_line_parser(data: bytes, rng: random.Random) -> None:
    frames, last_id = _plain(data)
    whole, whole_id, _ = _by_runs([data])
    assert (whole, whole_id) == (frames, last_id)
    cuts = sorted(rng.randrange(len(data) + 1) for _ in range(rng.randint(1, 6)))
    chunked, chunked_id, _ = _by_runs(split_at(data, cuts))
    assert (chunked, chunked_id) == (frames, last_id)
    # Fed a block at a time no run forms: the fold (its findings of ids and retries too) is the same.
    folder = Folder()
    for block in data.split(b"\n\n"):
        folder.feed(block + b"\n\n")
    assert folder.close() == fold(data + b"\n\n")


@FUZZ
@given(mutated(sources=SSE), st.data())
def test_mutated_captures_with_ids_frame_as_the_line_parser(data: bytes, draw: st.DataObject) -> None:
    marked = b"\n\n".join(b"id: %d\n" % number + block if block else block
                          for number, block in enumerate(data.split(b"\n\n")))
    assert _by_runs([marked])[:2] == _plain(marked)


def test_a_stream_with_ids_folds_in_runs_and_keeps_its_ids() -> None:
    data = b"".join(b'id: e%d\nevent: message\ndata: {"jsonrpc": "2.0", "method": "notifications/progress", '
                    b'"params": {"progress": %d}}\n\n' % (n, n) for n in range(40))
    frames, last_id = _plain(data)
    whole, whole_id, in_runs = _by_runs([data])
    assert in_runs == 40 and (whole, whole_id) == (frames, last_id) and last_id == "e39"
    assert [frame.id for frame in fold(data).frames] == [f"e{n}" for n in range(40)]
