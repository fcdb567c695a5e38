"""MCP's fast way must never change a result.

A notification in a run is decoded into `mcp.fast.Notification`, its `params` kept as the JSON
text they came as until the native snapshot decodes them (`MCP.fold_fast_run`). Fed one frame per
`feed()`, no run forms and every payload is a dict for `fold`. So a stream folded whole and fed
frame by frame must give equal results, native snapshots included, over streams that mix the
hot shape with everything the fast way must refuse (params that are not UTF-8, nest past the
cap, hold NaN or a lone surrogate; requests, responses, other event names, a batch); and the
mutated MCP captures must fold alike however they are chunked.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from feeding import plain_frames
from mutations import CAPTURES, FUZZ, mutated
from streamfold import Folder, Result, fold

_TEXTS = st.sampled_from(["Working", "", " 🚀", "é\"\\\n", "\u2028", "50%"])
_ODD_PARAMS = st.sampled_from([
    b'{"progressToken":"t","progress":NaN}', b'{"message":"\\ud800"}', b'{"message":"\xff"}',
    b'{"n":100000000000000000000000000000}', b'{"a":1,"a":2}', b"[" * 300 + b"]" * 300,
    b'{"deep":' + b"[" * 254 + b"]" * 254 + b"}", b'{"long":"' + b"x" * 600 + b'"}', b"null", b"[]", b'"text"'])
_MCP = {name: data for name, data in CAPTURES.items() if "/mcp/" in name}


def _notification(draw: st.DrawFn, step: int) -> bytes:
    value: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/progress",
                             "params": {"progressToken": "tok", "progress": step, "total": 40, "message": draw(_TEXTS)}}
    kind = draw(st.integers(0, 16))
    if kind == 9:
        value.update(method="notifications/message", params={"level": "info", "data": {"rows": [1, {"a": None}]}})
    elif kind == 10:
        del value["params"]
    elif kind == 11:
        value["id"] = step  # a request from the server
    elif kind == 12:
        value["jsonrpc"] = "1.0"
    elif kind == 13:
        return b'{"jsonrpc":"2.0","method":"notifications/x","params":' + draw(_ODD_PARAMS) + b"}"
    elif kind == 14:
        return json.dumps([value, {"jsonrpc": "2.0", "method": "notifications/y"}]).encode()  # a batch
    elif kind == 15:
        value["method"] = 7
    return json.dumps(value, ensure_ascii=draw(st.booleans())).encode()


@st.composite
def mcp_streams(draw: st.DrawFn) -> list[bytes]:
    """An MCP stream as its SSE blocks: notifications, then the response."""
    ids, events = draw(st.booleans()), draw(st.sampled_from(["none", "message", "mixed"]))
    bodies = [_notification(draw, step) for step in range(draw(st.integers(8, 40)))]
    bodies.append(b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}')
    frames = []
    for number, body in enumerate(bodies):
        head = b"id: s1-%d\n" % number if ids else b""
        if events == "message" or (events == "mixed" and draw(st.integers(0, 5)) == 0):
            head += draw(st.sampled_from([b"event: message\n", b"event:message\n", b"event: note\n"]))
        frames.append(head + b"data: " + body + b"\n\n")
    return frames


def _frame_by_frame(frames: list[bytes]) -> Result:
    folder = Folder()
    for frame in frames:
        folder.feed(frame)
    return folder.close()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(mcp_streams(), st.randoms(use_true_random=False))
def test_an_mcp_stream_folded_whole_equals_it_fed_frame_by_frame(frames: list[bytes], rng: random.Random) -> None:
    whole = fold(b"".join(frames))
    assert whole.dialect == "mcp"
    plain = _frame_by_frame(frames)
    assert whole == plain and whole.native == plain.native and whole.to_dict() == plain.to_dict()
    data, folder, position = b"".join(frames), Folder(), 0
    while position < len(data):
        step = rng.choice([1, 7, 64, 333, 4096, 1 << 16])
        folder.feed(data[position : position + step])
        position += step
    assert folder.close() == whole


@FUZZ
@given(mutated(sources=_MCP), st.randoms(use_true_random=False))
def test_mutated_mcp_captures_fold_alike_however_chunked(data: bytes, rng: random.Random) -> None:
    # Each capture's blocks repeated, so that runs form.
    data = b"".join([data] * rng.randint(1, 8))
    blocks = [block + b"\n\n" for block in data.split(b"\n\n")]
    assert fold(data + b"\n\n") == _frame_by_frame(blocks)


def test_a_run_of_notifications_is_kept_in_the_dialects_own_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The equality above only means something if the fast way runs: `fold` sees only the first frame
    (it tells the dialect) and the response."""
    from streamfold.dialects.mcp import MCP

    plain = plain_frames(monkeypatch, MCP)
    messages = [{"jsonrpc": "2.0", "method": "notifications/progress",
                 "params": {"progressToken": "t", "progress": step, "message": "é"}} for step in range(40)]
    messages.append({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "done"}]}})
    data = (json.dumps(message, ensure_ascii=False).encode() for message in messages)
    result = fold(b"".join(b"event: message\ndata: " + payload + b"\n\n" for payload in data))
    assert result.dialect == "mcp" and result.choices[0].content == "done" and plain == [0, 40]  # detection, the response
    assert [entry["params"]["progress"] for entry in result.native["notifications"]] == list(range(40))
