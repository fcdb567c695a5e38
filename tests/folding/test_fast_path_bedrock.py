"""Bedrock's fast way must never change a result.

A stretch of plain event messages becomes one `MessageRun` (walked prelude to prelude, both
CRCs checked, each header block parsed once), and its text deltas are decoded into
`bedrock.fast.TextBlockDelta` and appended by `Bedrock.fold_fast_run`. The plain framer
(`EventStreamParser`) makes a record of every message and `fold` gets every payload as a dict.
So a stream folded with runs must equal it folded by the plain framer, frames and findings
included, over streams that mix the hot shape with everything the fast way must refuse
(damaged CRCs, lost sync, exceptions, odd headers, empty or invalid payloads, other deltas),
however it is chunked; and so must the mutated Bedrock captures.
"""

from __future__ import annotations

import json
import random
import struct
import zlib
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventstream_helpers import event, exception, header, message
from feeding import assert_same_fold, fold_in_random_chunks, plain_frames
from mutations import CAPTURES, FUZZ, mutated
from streamfold import Result, fold
from streamfold.dialects.bedrock import Bedrock
from streamfold.framing import EventStreamParser, _fold_framers
from streamfold.framing._eventstream_runs import MessageRun

_TEXTS = st.sampled_from(["Hi", " there", "", " 🚀", "é\"\\\n", "\u2028"])
_BEDROCK = {name: data for name, data in CAPTURES.items() if "/bedrock/" in name and name.endswith(".bin")}
_HEADERS = {":event-type": "contentBlockDelta", ":content-type": "application/json", ":message-type": "event"}


def _raw_message(block: bytes, payload: bytes, *, crc_flip: int = 0) -> bytes:
    """A message with this header block as it is (a malformed one too), its CRC flipped by `crc_flip`."""
    prelude = struct.pack(">II", 16 + len(block) + len(payload), len(block))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + block + payload
    return body + struct.pack(">I", zlib.crc32(body) ^ crc_flip)


def _text_delta(text: str, index: int = 0, **extra: Any) -> dict[str, Any]:
    return {"contentBlockIndex": index, "delta": {"text": text}, "p": "abcdefgh", **extra}


_PLAIN_BLOCK = b"".join(header(name, value) for name, value in _HEADERS.items())
_DELTA = json.dumps(_text_delta("a")).encode()

#: Messages the fast way must refuse (or take as plain: another header beside the three), each
#: for a reason of its own.
_ODD_MESSAGES = [
    event("contentBlockDelta", _text_delta("a", 1)),  # a block not opened as text
    event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{\"a\":"}}}),
    event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "r"}}}),
    event("contentBlockDelta", _text_delta("a", extra=1)),
    event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "a", "citation": {"title": "t"}}}),
    event("contentBlockStop", {"contentBlockIndex": 0}),
    event("messageStop", {"stopReason": "end_turn"}),
    exception("throttlingException", "slow down"),
    message({":message-type": "error", ":error-code": "E", ":error-message": "boom"}, b""),
    _raw_message(_PLAIN_BLOCK, _DELTA, crc_flip=1),  # a message CRC mismatch, its JSON still valid
    b"\x00\x00\x00\x40garbage",  # lost sync, then found again
    message(_HEADERS, b""),  # an empty payload
    message({":event-type": "contentBlockDelta"}, _DELTA),  # no `:message-type`
    message({":message-type": "event"}, _DELTA),  # no `:event-type`
    message({**_HEADERS, ":date": 1700000000000}, _DELTA),
    message({**_HEADERS, ":event-type": "newEvent"}, _DELTA),
    message({**_HEADERS, ":message-type": "exception"}, _DELTA),
    message({**_HEADERS, ":event-type": ""}, _DELTA),
    _raw_message(_PLAIN_BLOCK[:-3] + b"\x0b", _DELTA),  # a header value of unknown type
    *(message(_HEADERS, payload) for payload in [
        b'{"contentBlockIndex":0,"delta":{"text":"\xff"}}', b'{"contentBlockIndex":0,"delta":{"text":"\\ud800"}}',
        b'{"contentBlockIndex":0,"delta":{"text":NaN}}',
        b'{"contentBlockIndex":0,"contentBlockIndex":1,"delta":{"text":"a"}}',
        b'{"contentBlockIndex":0,"delta":{"text":"a"},"p":"\xc3\x28"}', b"[" * 300 + b"]" * 300,
        b'{"contentBlockIndex":100000000000000000000000,"delta":{"text":"a"}}', b'{"contentBlockIndex":0', b"null"]),
]


def _delta(draw: st.DrawFn) -> bytes:
    if draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(_ODD_MESSAGES))
    return event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": draw(_TEXTS)},
                                       "p": "abcdefgh"[: draw(st.integers(0, 8))]})


@st.composite
def bedrock_streams(draw: st.DrawFn) -> bytes:
    head = [event("messageStart", {"role": "assistant", "p": "ab"})]
    if draw(st.booleans()):
        head.append(event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": ""}}))
    body = [_delta(draw) for _ in range(draw(st.integers(8, 40)))]
    tail = [event("contentBlockStop", {"contentBlockIndex": 0}), event("messageStop", {"stopReason": "end_turn"}),
            event("metadata", {"usage": {"inputTokens": 3, "outputTokens": 9, "totalTokens": 12}})]
    return b"".join(head + body + tail[: draw(st.integers(0, 3))])


def _plain(data: bytes, **options: Any) -> Result:
    """The fold by the plain framer: a record per message, no run, so no fast fold either."""
    with mock.patch.dict(_fold_framers.FOLD_FRAMERS, {"aws-eventstream": EventStreamParser}):
        return fold(data, **options)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(bedrock_streams(), st.randoms(use_true_random=False))
def test_a_bedrock_stream_folded_with_runs_equals_the_plain_fold(data: bytes, rng: random.Random) -> None:
    whole = fold(data)
    assert whole.dialect == "bedrock"
    assert_same_fold(whole, _plain(data), frames=True)
    assert_same_fold(fold_in_random_chunks(data, rng), whole)


@pytest.mark.parametrize("odd", _ODD_MESSAGES)
def test_each_message_the_fast_way_refuses_folds_as_the_plain_fold_does(odd: bytes) -> None:
    plain = [event("contentBlockDelta", _text_delta(text)) for text in "abcdefghi"]
    data = event("messageStart", {"role": "assistant"}) + b"".join(plain) + odd + b"".join(plain) + \
        event("messageStop", {"stopReason": "end_turn"})
    whole = fold(data)
    assert_same_fold(whole, _plain(data), frames=True)
    assert_same_fold(fold_in_random_chunks(data, random.Random(len(odd))), whole)


@settings(FUZZ, max_examples=FUZZ.max_examples // 3,
          suppress_health_check=[*FUZZ.suppress_health_check, HealthCheck.large_base_example])
@given(mutated(sources=_BEDROCK), st.randoms(use_true_random=False))
def test_mutated_bedrock_captures_fold_alike_with_runs_or_without(data: bytes, rng: random.Random) -> None:
    data = b"".join([data] * rng.randint(1, 3))  # each capture's messages repeated, so that runs form
    whole = fold(data)
    assert_same_fold(whole, _plain(data), frames=True)
    assert fold_in_random_chunks(data, rng) == whole


def test_the_fast_ways_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The equalities above only mean something if runs form and the fast fold takes the deltas."""
    runs, run_init = [0], MessageRun.__init__

    def counting_run(self: MessageRun, *args: Any) -> None:
        runs[0] += 1
        run_init(self, *args)

    plain = plain_frames(monkeypatch, Bedrock)
    monkeypatch.setattr(MessageRun, "__init__", counting_run)
    deltas = [event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "a"}, "p": "x" * i})
              for i in range(50)]
    data = event("messageStart", {"role": "assistant"}) + b"".join(deltas) + event("messageStop", {"stopReason": "end_turn"})
    result = fold(data)
    assert result.choices[0].content == "a" * 50 and result.complete
    # messageStart, the first delta (it opens the text block) and messageStop are `fold`'s; the other 49 the fast way's.
    assert (len(plain), runs[0]) == (3, 1)
