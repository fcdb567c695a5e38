"""The AG-UI and Vercel UI fast ways must never change a result.

In a run of SSE frames, an AG-UI message's content (`ag_ui.fast.MessageContent`) and a UI message
stream's text or reasoning delta (`vercel_ui.fast.PartDelta`) are decoded into Structs and
appended by the dialect's `fold_fast_run`. Fed one frame per `feed()`, no run forms and `fold` gets
every payload as a dict. So a stream folded whole must equal it fed frame by frame, over streams
that mix the hot shape with everything the fast way must refuse (content for what never started
or has ended, after the run's end or error, other fields, odd text), however it is chunked; and
so must the mutated captures of both dialects.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from feeding import assert_same_fold, fold_in_random_chunks, plain_frames
from mutations import CAPTURES, FUZZ, mutated
from streamfold import Folder, Result, fold
from streamfold.dialects.ag_ui import AGUI
from streamfold.dialects.vercel_ui import VercelUI

_TEXTS = ["Hi", " there", "", " 🚀", "é\"\\\n", "\u2028"]
_ODD_TEXTS = [b'"\xff"', b'"\\ud800"', b"NaN", b"7", b"null", b'"' + b"x" * 600 + b'"']


def _sse(value: dict[str, Any] | bytes) -> bytes:
    return b"data: " + (value if type(value) is bytes else json.dumps(value).encode()) + b"\n\n"


def _content(text: str, message: str = "m1", kind: str = "TEXT_MESSAGE_CONTENT", **extra: Any) -> bytes:
    return _sse({"type": kind, "messageId": message, "delta": text, **extra})


_AG_UI_HEAD = [_sse({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}),
               _sse({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"})]
_AG_UI_TAIL = [_sse({"type": "TEXT_MESSAGE_END", "messageId": "m1"}),
               _sse({"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"})]
_AG_UI_ODD = [
    _content("x", "m2"),  # never started
    _content("x", kind="REASONING_MESSAGE_CONTENT"),  # a reasoning message never started
    _sse({"type": "REASONING_MESSAGE_START", "messageId": "r1"}) + _content("think", "r1", "REASONING_MESSAGE_CONTENT"),
    # A second assistant message open beside the first: their contents interleave in one buffer.
    _sse({"type": "TEXT_MESSAGE_START", "messageId": "m3", "role": "assistant"}) + _content("other", "m3"),
    _content("more", "m3"),
    _content("x", timestamp=1764633600000),
    _content("x", rawEvent={"a": 1}),
    _content("x", timestamp=1.5),
    _sse({"type": "TEXT_MESSAGE_END", "messageId": "m1"}),  # later content comes after its end
    _sse({"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}),
    _sse({"type": "RUN_ERROR", "message": "boom"}),
    _sse({"type": "TEXT_MESSAGE_START", "messageId": "u1", "role": "user"}) + _content("echo", "u1"),
    _sse({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "m1", "role": "user", "content": "hi"}]}),
    _sse({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "delta": "chunk"}),
    *(_sse(b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":' + text + b"}") for text in _ODD_TEXTS),
    _sse(b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","messageId":"m2","delta":"dup"}'),
]

_VERCEL_HEAD = [_sse({"type": "start", "messageId": "msg_1"}), _sse({"type": "text-start", "id": "t1"})]
_VERCEL_TAIL = [_sse({"type": "text-end", "id": "t1"}), _sse({"type": "finish", "finishReason": "stop"}),
                b"data: [DONE]\n\n"]
_VERCEL_ODD = [
    _sse({"type": "text-delta", "id": "t2", "delta": "x"}),  # never started
    _sse({"type": "reasoning-delta", "id": "t1", "delta": "x"}),
    _sse({"type": "reasoning-start", "id": "r1"}) + _sse({"type": "reasoning-delta", "id": "r1", "delta": "hm"}),
    # A second text part open beside the first: their deltas interleave in one buffer.
    _sse({"type": "text-start", "id": "t3"}) + _sse({"type": "text-delta", "id": "t3", "delta": "other"}),
    _sse({"type": "text-delta", "id": "t3", "delta": "more"}),
    _sse({"type": "text-delta", "id": "t1", "delta": "x", "providerMetadata": {"a": {"b": 1}}}),
    _sse({"type": "text-end", "id": "t1"}),  # later deltas are for a part that ended
    _sse({"type": "text-start", "id": "t1"}),  # the same id again: a new part
    _sse({"type": "error", "errorText": "boom"}),
    _sse({"type": "finish"}),
    *(_sse(b'{"type":"text-delta","id":"t1","delta":' + text + b"}") for text in _ODD_TEXTS),
    _sse(b'{"type":"text-delta","id":"t1","id":"t2","delta":"dup"}'),
    _sse(b'{"type":"text-delta","id":7,"delta":"x"}'),
]

_DIALECTS = {"ag-ui": (_AG_UI_HEAD, _AG_UI_TAIL, _AG_UI_ODD, lambda text: _content(text)),
             "vercel-ui": (_VERCEL_HEAD, _VERCEL_TAIL, _VERCEL_ODD,
                           lambda text: _sse({"type": "text-delta", "id": "t1", "delta": text}))}
_CAPTURED = {name: data for name, data in CAPTURES.items() if "/ag-ui/" in name or "/vercel-ui/" in name}


@st.composite
def ui_streams(draw: st.DrawFn) -> tuple[str, list[bytes]]:
    name = draw(st.sampled_from(sorted(_DIALECTS)))
    head, tail, odd, hot = _DIALECTS[name]
    body = [draw(st.sampled_from(odd)) if draw(st.integers(0, 4)) == 0 else hot(draw(st.sampled_from(_TEXTS)))
            for _ in range(draw(st.integers(8, 40)))]
    return name, head + body + tail[: draw(st.integers(0, len(tail)))]


def _frame_by_frame(frames: list[bytes]) -> Result:
    folder = Folder()
    for frame in frames:
        folder.feed(frame)
    return folder.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(ui_streams(), st.randoms(use_true_random=False))
def test_a_ui_stream_folded_whole_equals_it_fed_frame_by_frame(stream: tuple[str, list[bytes]],
                                                               rng: random.Random) -> None:
    name, frames = stream
    whole = fold(b"".join(frames))
    assert whole.dialect == name
    assert_same_fold(whole, _frame_by_frame(frames))
    assert_same_fold(fold_in_random_chunks(b"".join(frames), rng), whole)


@pytest.mark.parametrize(("name", "odd"), [(name, odd) for name, (_, _, odds, _) in _DIALECTS.items() for odd in odds])
def test_each_payload_the_fast_way_refuses_folds_as_fed_frame_by_frame(name: str, odd: bytes) -> None:
    head, tail, _, hot = _DIALECTS[name]
    plain = [hot(text) for text in "abcdefghi"]
    frames = head + plain + [odd] + plain + tail
    whole = fold(b"".join(frames))
    assert whole.dialect == name
    assert_same_fold(whole, _frame_by_frame(frames))


@settings(FUZZ, max_examples=FUZZ.max_examples // 3)
@given(mutated(sources=_CAPTURED), st.randoms(use_true_random=False))
def test_mutated_ui_captures_fold_alike_however_chunked(data: bytes, rng: random.Random) -> None:
    data = b"".join([data] * rng.randint(1, 4))  # each capture's frames repeated, so that runs form
    blocks = [block + b"\n\n" for block in data.split(b"\n\n")]
    assert fold(data + b"\n\n") == _frame_by_frame(blocks)


@pytest.mark.parametrize("name", sorted(_DIALECTS))
def test_the_fast_ways_are_taken(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The equalities above only mean something if the fast fold takes the hot payloads."""
    dialect = {"ag-ui": AGUI, "vercel-ui": VercelUI}[name]
    plain = plain_frames(monkeypatch, dialect)
    head, tail, _, hot = _DIALECTS[name]
    result = fold(b"".join(head + [hot("a")] * 50 + tail))
    hot_frames = range(len(head), len(head) + 50)
    assert result.choices[0].content == "a" * 50 and not set(plain) & set(hot_frames)
