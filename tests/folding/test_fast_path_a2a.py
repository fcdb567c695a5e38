"""A2A's fast way must never change a result.

In a run of SSE frames, an A2A 0.3 artifact update that appends to the last open artifact is
decoded into `a2a.fast.ArtifactChunk` (its parts kept as JSON until `fold_fast_run` decodes them) and
added by `A2A.fold_fast_run`. Fed one frame per `feed()`, no run forms and `fold` gets every payload as
a dict. So a stream folded whole must equal it fed frame by frame, native snapshot included, over
streams that mix the hot shape with everything the fast way must refuse (a new, replaced or
closed artifact, another task, a Message reply, odd parts, other members), however it is chunked;
and so must the mutated A2A captures.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from feeding import assert_same_fold, plain_frames
from mutations import CAPTURES, FUZZ, mutated
from streamfold import Folder, Result, fold
from streamfold.dialects.a2a import A2A

_TASK, _CONTEXT = "task-1", "ctx-1"
_TEXTS = ["Hi", " there", "", " 🚀", "é\"\\\n", "\u2028"]


def _sse(result: dict[str, Any] | bytes, *, spaced: bool = False) -> bytes:
    # Compact, as the SDKs write it (what `fold_fast_run` reads by its text alone), or with json.dumps' spaces.
    body = result if type(result) is bytes else json.dumps({"jsonrpc": "2.0", "id": 1, "result": result},
                                                           separators=None if spaced else (",", ":")).encode()
    return b"data: " + body + b"\n\n"


def _chunk(text: str, artifact: str = "a1", append: Any = True, *, spaced: bool = False, **extra: Any) -> bytes:
    return _sse({"kind": "artifact-update", "taskId": extra.pop("task", _TASK), "contextId": _CONTEXT,
                 "artifact": {"artifactId": artifact, "parts": [{"kind": "text", "text": text}]},
                 "append": append, **extra}, spaced=spaced)


def _raw_parts(parts: bytes) -> bytes:
    return _sse(b'{"jsonrpc":"2.0","id":1,"result":{"kind":"artifact-update","taskId":"task-1","artifact":'
                b'{"artifactId":"a1","parts":' + parts + b'},"append":true}}')


_HEAD = [_sse({"id": _TASK, "contextId": _CONTEXT, "status": {"state": "submitted"}, "kind": "task"}),
         _chunk("", append=False)]
_TAIL = [_sse({"taskId": _TASK, "contextId": _CONTEXT, "status": {"state": "completed"}, "final": True,
               "kind": "status-update"})]
_ODD = [
    _chunk("x", append=False),  # replaces the artifact
    _chunk("x", "a2"),  # an append to an artifact no chunk opened
    _chunk("x", "a2", append=False),  # a second artifact: later appends to a1 are not to the last one
    _chunk("x", lastChunk=True),  # closes it: later appends come after its last chunk
    _chunk("x", task="task-2"),
    _chunk("x", append=None),
    _chunk("x", metadata={"a": 1}),
    _sse({"kind": "artifact-update", "taskId": _TASK, "append": True,
          "artifact": {"artifactId": "a1", "name": "answer", "parts": [{"kind": "text", "text": "x"}]}}),
    _sse({"kind": "message", "messageId": "m1", "role": "agent", "parts": [{"kind": "text", "text": "msg"}]}),
    _sse({"taskId": _TASK, "contextId": _CONTEXT, "status": {"state": "working"}, "kind": "status-update"}),
    _sse({"artifactUpdate": {"taskId": _TASK, "artifact": {"artifactId": "a1", "parts": [{"text": "v1"}]},
                             "append": True}}),  # an A2A 1.0 event in a 0.3 stream
    _raw_parts(b'[{"text":"order","kind":"text"},{"kind":"data","data":{"n":1}},{"kind":"file","file":{}}]'),
    *(_raw_parts(parts) for parts in [b'[{"kind":"text","text":"\xff"}]', b'[{"kind":"text","text":"\\ud800"}]',
                                      b'[{"kind":"text","text":NaN}]', b'{"kind":"text"}', b"[]", b"null",
                                      b"[" * 300 + b"]" * 300, b'[{"kind":"text","text":7}]',
                                      b'[{"kind":"text","text":"' + b"x" * 600 + b'"}]']),
    # One text part's opening and closing around what is not one string, or is one in a disguise.
    *(_raw_parts(parts) for parts in [b'[{"kind":"text","text":"a\\"}]"}]', b'[{"kind":"text","text":"a" }]',
                                      b'[{"kind":"text","text":"a"},{"kind":"text","text":"b"}]',
                                      b'[{"kind":"text","text":"a","metadata":{}}]', b'[{"kind":"text","text":null}]',
                                      b'[{"kind":"text","text":"a\\u00e9\\n"}]', b'[{"kind":"text","text":""}]']),
]
_CAPTURED = {name: data for name, data in CAPTURES.items() if "/a2a/" in name}


@st.composite
def a2a_streams(draw: st.DrawFn) -> list[bytes]:
    body = [draw(st.sampled_from(_ODD)) if draw(st.integers(0, 4)) == 0
            else _chunk(draw(st.sampled_from(_TEXTS)), spaced=draw(st.booleans()))
            for _ in range(draw(st.integers(8, 40)))]
    return _HEAD + body + _TAIL[: draw(st.integers(0, 1))]


def _frame_by_frame(frames: list[bytes]) -> Result:
    folder = Folder()
    for frame in frames:
        folder.feed(frame)
    return folder.close()


def _same(fast: Result, plain: Result) -> None:
    assert_same_fold(fast, plain)
    assert json.dumps(fast.native) == json.dumps(plain.native)  # the parts' members in their order too


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(a2a_streams(), st.randoms(use_true_random=False))
def test_an_a2a_stream_folded_whole_equals_it_fed_frame_by_frame(frames: list[bytes], rng: random.Random) -> None:
    data = b"".join(frames)
    whole = fold(data)
    assert whole.dialect == "a2a"
    _same(whole, _frame_by_frame(frames))
    folder, position = Folder(), 0
    while position < len(data):
        step = rng.choice([1, 7, 64, 333, 4096, 1 << 16])
        folder.feed(data[position : position + step])
        position += step
    _same(folder.close(), whole)


@pytest.mark.parametrize("odd", _ODD)
def test_each_payload_the_fast_way_refuses_folds_as_fed_frame_by_frame(odd: bytes) -> None:
    plain = [_chunk(text) for text in "abcdefghi"]
    frames = _HEAD + plain + [odd] + plain + _TAIL
    _same(fold(b"".join(frames)), _frame_by_frame(frames))


@settings(FUZZ, max_examples=FUZZ.max_examples // 3)
@given(mutated(sources=_CAPTURED), st.randoms(use_true_random=False))
def test_mutated_a2a_captures_fold_alike_however_chunked(data: bytes, rng: random.Random) -> None:
    data = b"".join([data] * rng.randint(1, 3))  # each capture's frames repeated, so that runs form
    blocks = [block + b"\n\n" for block in data.split(b"\n\n")]
    assert fold(data + b"\n\n") == _frame_by_frame(blocks)


def test_the_fast_way_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The equalities above only mean something if the fast fold takes the appends."""
    plain = plain_frames(monkeypatch, A2A)
    # Compact chunks (their text read alone) and spaced ones (their parts read whole), in turn.
    result = fold(b"".join(_HEAD + [_chunk("a", spaced=index % 2 == 1) for index in range(50)] + _TAIL))
    appends = range(len(_HEAD), len(_HEAD) + 50)
    assert result.choices[0].content == "a" * 50 and not set(plain) & set(appends)
    assert result.native["artifacts"][0]["parts"][1:] == [{"kind": "text", "text": "a"}] * 50
