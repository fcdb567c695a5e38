"""The Realtime fast way must never change a result.

A stretch of received text messages in a WebSocket JSONL capture becomes one `MessageLineRun`
(the envelopes decoded in one call into Structs), and its text deltas are decoded into
`openai_realtime.fast.TextDelta` and appended by `OpenAIRealtime.fold_fast_run`. The plain framer
(`WebSocketParser`) makes a record of every line and `fold` gets every event as a dict. So a
capture folded with runs must equal it folded by the plain framer, frames and findings included,
over captures that mix the hot shape with everything the fast way must refuse (sent, binary and
odd lines, lanes, odd times and opcodes, events of other responses, other modalities, deltas
before their item), however it is chunked; and so must the mutated Realtime captures.
"""

from __future__ import annotations

import json
import random
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from feeding import assert_same_fold, fold_in_random_chunks, plain_frames
from mutations import CAPTURES, FUZZ, mutated
from streamfold import Result, fold
from streamfold.dialects.openai_realtime import OpenAIRealtime
from streamfold.framing import WebSocketParser, _fold_framers
from streamfold.framing._websocket_runs import MessageLineRun
from streamfold.framing.websocket import message_line

_TEXTS = st.sampled_from(["Hi", " there", "", " 🚀", "é\"\\\n", "\u2028"])
_REALTIME = {name: data for name, data in CAPTURES.items() if "/openai-realtime/" in name}
_IDS = {"response_id": "resp_1", "item_id": "item_1", "output_index": 0, "content_index": 0}


def _event(kind: str, number: int = 0, **fields: Any) -> bytes:
    return message_line("receive", json.dumps({"type": kind, "event_id": f"event_{number}", **fields}),
                        1764633600.0 + number / 100)


def _delta(text: str, number: int = 0, **fields: Any) -> bytes:
    return _event("response.output_text.delta", number, **{**_IDS, "delta": text, **fields})


_HEAD = [_event("response.created", 0, response={"object": "realtime.response", "id": "resp_1",
                                                 "status": "in_progress", "output": []}),
         _event("response.output_item.added", 1, response_id="resp_1", output_index=0,
                item={"id": "item_1", "object": "realtime.item", "type": "message", "role": "assistant"})]
_TAIL = [_event("response.output_text.done", 90, **_IDS, text="…"),
         _event("response.done", 91, response={"object": "realtime.response", "id": "resp_1", "status": "completed",
                                               "output": [], "usage": {"total_tokens": 9}})]
_DATA = json.dumps({"type": "response.output_text.delta", "event_id": "e", **_IDS, "delta": "x"})

#: Lines the fast way must refuse (or take as plain), each for a reason of its own.
_ODD_LINES = [
    message_line("send", json.dumps({"type": "response.create"})),
    message_line("receive", "aGk=", opcode=2),  # a binary message
    *(b"".join(message_line("receive", json.dumps({"type": "response.output_text.delta", "stream_id": lane, **_IDS,
                                                   "delta": "x"})) for lane in lanes)
      for lanes in (["s1"], ["s1", "s2"])),  # one lane, or a second one that is not folded
    message_line("receive", _DATA),  # no time: still plain
    *(line.encode() + b"\n" for line in [
        '{"type":"receive","time":1.5,"opcode":1,"data":"{}","extra":1}',
        '{"type":"receive","time":NaN,"opcode":1,"data":"{}"}', '{"type":"receive","time":1e999,"data":"{}"}',
        '{"type":"receive","time":true,"data":"{}"}', '{"type":"receive","time":null,"data":"{}"}',
        '{"type":"receive","time":7,"data":' + json.dumps(_DATA) + "}",
        '{"type":"receive","opcode":1.0,"data":"{}"}', '{"type":"send","type":"receive","data":"{}"}',
        '{"type":"receive","type":"send","data":"{}"}', '{"type":"receive","data":"{\\"a\\":\\"\\ud800\\"}"}',
        '{"type":"receive","data":"\\ud800"}', '{"type":"receive","data":"{\\"a\\":NaN}"}',
        '{"type":"receive","data":"not json"}', '{"type":"receive","data":7}', "not a line", "[1,2]", "   ",
        '{"type":"receive","data":"' + json.dumps(_DATA)[1:-1] + '"}\r']),
    b'{"type":"receive","data":"\xff"}\n',
    b"\n",
    _delta("x", response_id="resp_2"),  # another response
    _delta("x", item_id="item_2"),  # an item that has had no text yet
    _delta("x", extra=1),
    _event("response.output_audio_transcript.delta", 5, **_IDS, delta="heard"),  # another modality
    _event("response.text.delta", 5, **_IDS, delta="beta"),
    _event("error", 5, error={"type": "invalid_request_error", "message": "boom"}),
    _event("response.done", 5, response={"object": "realtime.response", "id": "resp_1", "status": "completed"}),
]


def _line(draw: st.DrawFn, number: int) -> bytes:
    if draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(_ODD_LINES))
    return _delta(draw(_TEXTS), number)


@st.composite
def realtime_captures(draw: st.DrawFn) -> bytes:
    body = [_line(draw, number) for number in range(2, draw(st.integers(10, 40)))]
    return b"".join(_HEAD + body + _TAIL[: draw(st.integers(0, 2))])


def _plain(data: bytes, **options: Any) -> Result:
    """The fold by the plain framer: a record per line, no run, so no fast fold either."""
    with mock.patch.dict(_fold_framers.FOLD_FRAMERS, {"websocket": WebSocketParser}):
        return fold(data, transport="websocket", **options)




@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(realtime_captures(), st.randoms(use_true_random=False))
def test_a_realtime_capture_folded_with_runs_equals_the_plain_fold(data: bytes, rng: random.Random) -> None:
    whole = fold(data, transport="websocket")
    assert whole.dialect == "openai-realtime"
    assert_same_fold(whole, _plain(data), frames=True)
    assert_same_fold(fold_in_random_chunks(data, rng, transport="websocket"), whole)


@pytest.mark.parametrize("odd", _ODD_LINES)
def test_each_line_the_fast_way_refuses_folds_as_the_plain_fold_does(odd: bytes) -> None:
    plain = [_delta(text, number) for number, text in enumerate("abcdefghi", 2)]
    data = b"".join(_HEAD + plain + [odd] + plain + _TAIL)
    whole = fold(data, transport="websocket")
    assert_same_fold(whole, _plain(data), frames=True)
    assert_same_fold(fold_in_random_chunks(data, random.Random(len(odd)), transport="websocket"), whole)


@settings(FUZZ, max_examples=FUZZ.max_examples // 3,
          suppress_health_check=[*FUZZ.suppress_health_check, HealthCheck.large_base_example])
@given(mutated(sources=_REALTIME), st.randoms(use_true_random=False))
def test_mutated_realtime_captures_fold_alike_with_runs_or_without(data: bytes, rng: random.Random) -> None:
    data = b"".join([data if data.endswith(b"\n") else data + b"\n"] * rng.randint(1, 3))  # so that runs form
    whole = fold(data, transport="websocket")
    assert_same_fold(whole, _plain(data), frames=True)
    assert fold_in_random_chunks(data, rng, transport="websocket") == whole


def test_the_fast_ways_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The equalities above only mean something if runs form and the fast fold takes the deltas."""
    runs, run_init = [0], MessageLineRun.__init__

    def counting_run(self: MessageLineRun, *args: Any) -> None:
        runs[0] += 1
        run_init(self, *args)

    plain = plain_frames(monkeypatch, OpenAIRealtime)
    monkeypatch.setattr(MessageLineRun, "__init__", counting_run)
    data = b"".join(_HEAD + [_delta("a", number) for number in range(2, 52)] + _TAIL)
    result = fold(data)
    assert result.dialect == "openai-realtime" and result.choices[0].content == "a" * 50
    # The first delta opens the item's text (`fold`); the other 49 are appended the fast way.
    assert (len(plain), runs[0]) == (len(_HEAD) + 1 + len(_TAIL), 1)
