"""The fold's fast ways must never change a result.

Runs of frames are folded from their bytes (`DataRun` for SSE, `LineRun` for
NDJSON: no record per frame), and each dialect's hot payload shapes are
decoded into msgspec Structs (`Dialect.fold_fast`). Feeding a stream one frame
per `feed()` takes neither: every frame becomes a record and every payload a
dict for `fold`. So a stream folded whole and the same stream fed frame by
frame must give equal results, frames and findings, for OpenAI chat,
Anthropic, Responses, Gemini, Ollama and Cohere streams that mix the hot shapes with
the ones the fast way must refuse; and any chunking must fold alike.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamfold
from feeding import plain_frames
from streamfold import Folder, fold
from streamfold.dialects.anthropic import Anthropic
from streamfold.dialects.openai_chat import OpenAIChat
from streamfold.dialects.openai_chat import fold as openai_chat_fold
from streamfold.dialects.registry import spec_of
from streamfold.events import Finding
from streamfold.framing._records import FrameStore, make_frame
from streamfold.framing._runs import DataRun, LineRun
from streamfold.framing._runs import NDJSONRunParser as NDJSONParser
from streamfold.framing._runs import SSERunParser as SSEParser

_HEAD = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1732920327, "model": "gpt-4o",
         "service_tier": "default", "system_fingerprint": "fp_1"}


def _chunk(choices: list[Any], **extra: Any) -> dict[str, Any]:
    return {**_HEAD, "choices": choices, "usage": None, "obfuscation": "xY", **extra}


def _choice(delta: dict[str, Any], index: int = 0, finish: Any = None) -> dict[str, Any]:
    return {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}


def _tool(index: Any, arguments: Any = None, **fields: Any) -> dict[str, Any]:
    function = {"arguments": arguments} if arguments is not None else {}
    if "name" in fields:
        function["name"] = fields.pop("name")
    return {"index": index, "function": function, **fields}


# Payload builders: most are the hot shapes, the rest are what the fast way must refuse.
_TEXTS = st.sampled_from(["Hi", " there", "", " 🚀", "é\"\\\n", "\u2028", "<think>", " {\"a\":"])
_ARGUMENTS = st.sampled_from(["{", "\"city\"", ": \"Oslo\"", "}", "", "{\"a\":1}", "ü"])


@st.composite
def payloads(draw: st.DrawFn) -> bytes:
    kind = draw(st.integers(0, 24))
    text, arguments = draw(_TEXTS), draw(_ARGUMENTS)
    index = draw(st.sampled_from([0, 0, 0, 1]))
    tool = draw(st.sampled_from([0, 0, 1, 2]))
    value: Any
    if kind <= 5:
        value = _chunk([_choice({"content": text}, index)])
    elif kind <= 9:
        value = _chunk([_choice({"tool_calls": [_tool(tool, arguments)]}, finish=draw(st.sampled_from([None, ""])))])
    elif kind == 10:
        role = draw(st.sampled_from(["assistant", "assistant", "user", ""]))
        value = _chunk([_choice({"role": role, "content": draw(st.sampled_from(["", text]))}, index,
                                finish=draw(st.sampled_from([None, ""])))])
    elif kind == 11:
        value = _chunk([_choice({"tool_calls": [_tool(tool, "", id=f"call_{tool}", type="function", name="f")]})])
    elif kind == 12:
        value = _chunk([_choice({draw(st.sampled_from(["reasoning_content", "reasoning"])): text}, index)])
    elif kind == 13:
        value = _chunk([_choice({"reasoning_content": text, "reasoning": draw(_TEXTS)}, index)])
    elif kind == 14:
        value = _chunk([_choice({}, index, finish=draw(st.sampled_from(["stop", "", "tool_calls", "length"])))])
    elif kind == 15:
        value = _chunk([], usage={"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8})
    elif kind == 16:
        value = _chunk([])
    elif kind == 17:
        value = _chunk([_choice({"content": text}, 0), _choice({"content": text}, 1)])
    elif kind == 18:
        value = draw(st.sampled_from([
            _chunk([_choice({"content": text}, index)], x_groq={"id": "req_1"}),
            _chunk([_choice({"content": text}, index)], error={"message": "overloaded"}),
            {"object": "error", "message": "boom", "code": 500},
            _chunk([_choice({"content": [{"type": "text", "text": text}]}, index)]),
            _chunk([_choice({"content": text, "refusal": "no"}, index)]),
            _chunk([_choice({"tool_calls": {"index": tool, "function": {"arguments": arguments}}})]),
            _chunk([_choice({"tool_calls": [_tool(tool, arguments, name="f")]})]),
            _chunk([_choice({"tool_calls": [_tool(tool, arguments, id="call_other")]})]),
            _chunk([_choice({"tool_calls": [{"function": {"arguments": arguments}}]})]),
            _chunk([{"index": index, "delta": {"content": text}, "usage": {"total_tokens": 9}}]),
            _chunk([{"delta": {"content": text}}]),
            _chunk([_choice({"content": text}, index)], model=None, id=""),
        ]))
    else:
        value = _chunk([_choice({"content": text}, index)])
    body = json.dumps(value, ensure_ascii=draw(st.booleans())).encode()
    odd = draw(st.integers(0, 12))
    if odd <= 5 or type(value) is not dict:
        return body
    # Raw oddities msgspec and `json` treat differently, in a field the fold does not read or in one it does.
    member = [b'"extra":"\xff"', b'"id":"\xc3\x28"', b'"obfuscation":"\xed\xa0\x80"', b'"extra":NaN',
              b'"obfuscation":"\\ud800"', b'"created":1e999', b'"choices":[]',
              b'"created":123456789012345678901234567890', b'"x":1'][odd - 4 if odd < 13 else 0]
    return body[:-1] + b"," + member + b"}"


@st.composite
def streams(draw: st.DrawFn) -> list[bytes]:
    """A stream as its frames (each with its blank line)."""
    first = json.dumps(_chunk([_choice({"role": "assistant", "content": ""})])).encode()
    bodies = ([first] if draw(st.booleans()) else []) + draw(st.lists(payloads(), min_size=8, max_size=60))
    frames = [(b"data: " if draw(st.booleans()) or i % 7 else b"data:") + body + b"\n\n"
              for i, body in enumerate(bodies)]
    if draw(st.booleans()):
        frames.insert(draw(st.integers(0, len(frames))), draw(st.sampled_from(
            [b": keep-alive\n\n", b"data: [DONE]\n\n", b"data: {\"choices\": [\n\n", b"event: ping\ndata: {}\n\n"])))
    if draw(st.booleans()):
        frames.append(b"data: [DONE]\n\n")
    return frames


def _frame_by_frame(frames: list[bytes]) -> streamfold.Result:
    folder = Folder()
    for frame in frames:
        folder.feed(frame)
    return folder.close()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(streams())
def test_a_stream_folded_whole_equals_it_fed_frame_by_frame(frames: list[bytes]) -> None:
    whole = fold(b"".join(frames))
    assert whole == _frame_by_frame(frames)
    assert whole.to_dict() == _frame_by_frame(frames).to_dict()


def test_the_fast_ways_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The equalities above only mean something if the fast ways run: count them."""
    calls = {"fast": 0, "slow": 0}
    fast, slow = OpenAIChat.fold_fast, OpenAIChat.fold

    def counting_fast(self: OpenAIChat, chunk: Any, frame: int, event: bytes | None) -> bool:
        calls["fast"] += 1
        return fast(self, chunk, frame, event)

    def counting_slow(self: OpenAIChat, chunk: Any, frame: int) -> None:
        calls["slow"] += 1
        slow(self, chunk, frame)

    monkeypatch.setattr(OpenAIChat, "fold_fast", counting_fast)
    monkeypatch.setattr(OpenAIChat, "fold", counting_slow)
    head = [json.dumps(_chunk([_choice({"role": "assistant", "content": ""})])).encode(),
            json.dumps(_chunk([_choice({"tool_calls": [_tool(0, "", id="call_0", type="function", name="f")]})])).encode()]
    body = [json.dumps(_chunk([_choice({"content": "a"})])).encode()] * 50
    body += [json.dumps(_chunk([_choice({"tool_calls": [_tool(0, "{}"[i % 2])]})])).encode() for i in range(2)]
    data = b"".join(b"data: " + payload + b"\n\n" for payload in head + body) + b"data: [DONE]\n\n"
    result = fold(data)
    assert result.choices[0].content == "a" * 50
    assert result.choices[0].tool_calls[0].parsed == {}
    assert calls == {"fast": 52, "slow": 2}


def test_a_fragment_without_index_continues_the_call_a_fast_fragment_extended() -> None:
    """Found by the test above: the fast way must leave `last_tool` as `fold` leaves it."""
    chunks = [_chunk([_choice({"role": "assistant", "content": ""})])]
    chunks += [_chunk([_choice({"tool_calls": [_tool(1, "{")]})]),
               _chunk([_choice({"tool_calls": [_tool(0, "", id="call_0", type="function", name="f")]})])]
    chunks += [_chunk([_choice({"tool_calls": [_tool(1, "")]})])] * 8
    chunks += [_chunk([_choice({"tool_calls": [{"function": {"arguments": "}"}}]})])]
    frames = [b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks]
    whole = fold(b"".join(frames))
    assert whole == _frame_by_frame(frames)
    calls = {call.id: call.arguments for call in whole.choices[0].tool_calls}
    assert calls[None] == "{}" and calls["call_0"] == ""


def test_a_stream_of_another_shape_pauses_the_fast_decoder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Groq's x_groq on every chunk fails the Struct: after a few misses the Folder stops paying
    for them, and tries again later, less and less often."""
    attempts = {"n": 0}
    decode = openai_chat_fold._FAST_SHAPES
    assert decode is not None

    def counting_decode(data: bytes) -> Any:
        attempts["n"] += 1
        return decode(data)

    monkeypatch.setattr(openai_chat_fold, "_FAST_SHAPES", counting_decode)
    chunks = [_chunk([_choice({"role": "assistant", "content": ""})], x_groq={"id": "r"})]
    chunks += [_chunk([_choice({"content": "x"})], x_groq={"id": "r"})] * 2000
    data = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    result = fold(data)
    assert result.choices[0].content == "x" * 2000
    # 17 misses, a pause of 256 frames, 17 more, 512, 17, 1024: about 3 x 17 tries in 2000 frames.
    assert 17 * 3 <= attempts["n"] <= 17 * 4


def test_the_fast_decoder_is_tried_again_after_a_different_stretch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Anthropic thinking deltas (not the text shape) before a long text: the text still goes fast."""
    events = [("message_start", {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": [],
        "usage": {"input_tokens": 3, "output_tokens": 1}}}),
              ("content_block_start", {"type": "content_block_start", "index": 0,
                                       "content_block": {"type": "thinking", "thinking": ""}})]
    events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "thinking_delta", "thinking": "hm"}})] * 300
    events += [("content_block_stop", {"type": "content_block_stop", "index": 0}),
               ("content_block_start", {"type": "content_block_start", "index": 1,
                                        "content_block": {"type": "text", "text": ""}})]
    events += [("content_block_delta", {"type": "content_block_delta", "index": 1,
                                        "delta": {"type": "text_delta", "text": "a"}})] * 3000
    events += [("message_stop", {"type": "message_stop"})]
    data = b"".join(f"event: {name}\ndata: {json.dumps(value)}\n\n".encode() for name, value in events)
    plain = plain_frames(monkeypatch, Anthropic)
    result = fold(data)
    assert result.choices[0].content == "a" * 3000 and result.choices[0].reasoning == "hm" * 300
    # Paused during the thinking (made plain to test it); the text went the fast way again.
    monkeypatch.setattr(Anthropic, "fold_fast_run", _thinking_refused(Anthropic.fold_fast_run))
    plain.clear()
    assert fold(data) == result
    assert sum(frame > 305 for frame in plain) < 500  # of the 3000 text deltas


def _thinking_refused(fast_run: Any) -> Any:
    """`fold_fast_run` that refuses every thinking delta, as if its shape were not the fast one."""
    def run(self: Anthropic, pieces: Any, position: int, start: int, frame: int, events: Any) -> int:
        if b'"thinking_delta"' in pieces[position]:
            return 0
        end = next((at for at in range(position, len(pieces)) if b'"thinking_delta"' in pieces[at]), len(pieces))
        return fast_run(self, pieces[:end], position, start, frame, events)
    return run


# -- runs of frames kept as bytes -------------------------------------------------


def _records_by_lines(data: bytes) -> list[Any]:
    """The records the line-by-line path makes (one byte at a time never forms a run)."""
    parser = SSEParser()
    records: list[Any] = []
    for i in range(len(data)):
        records.extend(parser.feed_records(data[i : i + 1]))
    records.extend(parser.close_records())
    assert all(type(record) is tuple for record in records)
    return records


def test_a_run_reads_back_the_records_of_the_line_by_line_path() -> None:
    blocks = [b"data: {\"n\": %d}" % i for i in range(30)]
    blocks[4] = b"data:{\"tight\": true}"
    blocks[9] = b"data: {\"bad\": \"\xff\xfe\"}"  # invalid UTF-8: its record carries the finding
    blocks[12] = b"data: [DONE]"
    blocks[20] = b"data: "
    blocks[21] = b"data:"
    data = b"\n\n".join(blocks) + b"\n\n"
    parser = SSEParser()
    output = parser.feed_records(data)
    runs = [item for item in output if isinstance(item, DataRun)]
    assert len(runs) == 1 and runs[0].count == 30
    store = FrameStore()
    store.add_run(runs[0])
    expected = [make_frame(record) for record in _records_by_lines(data)]
    assert [make_frame(record) for record in store] == expected
    order = list(range(30))
    random.Random(7).shuffle(order)
    for index in order:  # random access indexes the run as far as it must
        assert make_frame(store[index]) == expected[index]
    assert make_frame(store[-1]) == expected[-1]
    assert [make_frame(record) for record in store[3:6]] == expected[3:6]
    assert expected[9].issues[0].code == "invalid-utf8"
    with pytest.raises(IndexError):
        store[30]


def test_runs_and_records_keep_their_order_in_the_store() -> None:
    data = b"".join(b"data: %d\n\n" % i for i in range(20)) + b": ping\n\n" + b"".join(
        b"data: %d\n\n" % i for i in range(20, 45)) + b"event: x\ndata: 1\n\n"
    result = fold(data)
    assert [frame.index for frame in result.frames] == list(range(47))
    assert result.frames[20].comments == ("ping",) and result.frames[46].event == "x"
    assert result.frames == _frame_by_frame([block + b"\n\n" for block in data.split(b"\n\n")[:-1]]).frames


# -- event-named streams (Anthropic) ------------------------------------------------


@st.composite
def anthropic_streams(draw: st.DrawFn) -> list[bytes]:
    """An Anthropic stream as its frames, mostly text deltas, with what the fast way must refuse."""
    events: list[tuple[bytes | None, Any]] = [
        (b"message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": [],
            "stop_reason": None, "usage": {"input_tokens": 3, "output_tokens": 1}}})]
    for _ in range(draw(st.integers(8, 50))):
        kind = draw(st.integers(0, 24))
        text = draw(_TEXTS)
        index = draw(st.sampled_from([0, 0, 0, 1, 2]))
        delta = {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}
        if kind <= 11:
            events.append((b"content_block_delta", delta))
        elif kind == 12:
            events.append((draw(st.sampled_from([b"content_block_start", b"message_delta", None])), delta))
        elif kind == 13:
            events.append((b"content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": draw(st.sampled_from([
                                                       {"type": "text", "text": ""},
                                                       {"type": "thinking", "thinking": ""}]))}))
        elif kind == 14:
            events.append((b"content_block_stop", {"type": "content_block_stop", "index": index}))
        elif kind == 15:
            events.append((b"ping", {"type": "ping"}))
        elif kind == 16:
            events.append((b"content_block_delta", {**delta, "extra": 1}))
        elif kind == 17:
            events.append((b"content_block_delta", {"type": "content_block_delta", "index": index,
                                                    "delta": {"type": "thinking_delta", "thinking": text}}))
        elif kind == 18:
            events.append((b"content_block_delta", {**delta, "index": True}))
        elif kind == 19:
            events.append((b"content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": draw(st.sampled_from([
                                                       {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
                                                       {"type": "server_tool_use", "id": "srvtoolu_1",
                                                        "name": "web_search", "input": {}}]))}))
        elif kind in (20, 21):
            events.append((b"content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                "type": "input_json_delta", "partial_json": draw(_ARGUMENTS)}}))
        elif kind == 22:
            events.append((b"content_block_delta", {"type": "content_block_delta", "index": index,
                                                    "delta": {"type": "signature_delta", "signature": "sig"}}))
        else:
            events.append((b"content_block_delta", delta))
    events += [(b"message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                   "usage": {"output_tokens": 9}}),
               (b"message_stop", {"type": "message_stop"})]
    if draw(st.booleans()):
        events.insert(1, (b"content_block_start", {"type": "content_block_start", "index": 0,
                                                   "content_block": {"type": "text", "text": ""}}))
    frames = []
    for name, value in events:
        body = json.dumps(value, ensure_ascii=draw(st.booleans())).encode()
        odd = draw(st.integers(0, 30))
        if odd == 0:
            body = body[:-1] + b',"x":"\xff"}'  # invalid UTF-8 where the fold does not read
        head = b"" if name is None else (b"event: " if odd != 1 else b"event:") + name + b"\n"
        if odd == 2 and name is not None:
            head = b"event: \xc3\x28\n"  # an event name that is not UTF-8
        frames.append(head + (b"data: " if odd != 3 else b"data:") + body + b"\n\n")
    return frames


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(anthropic_streams())
def test_an_anthropic_stream_folded_whole_equals_it_fed_frame_by_frame(frames: list[bytes]) -> None:
    whole = fold(b"".join(frames))
    assert whole.dialect == "anthropic"
    assert whole == _frame_by_frame(frames)


def test_anthropic_thinking_text_and_tool_input_all_go_the_fast_way(monkeypatch: pytest.MonkeyPatch) -> None:
    def event(name: str, **value: Any) -> bytes:
        return f"event: {name}\ndata: {json.dumps({'type': name, **value})}\n\n".encode()

    def delta(index: int, kind: str, field: str, piece: str) -> bytes:
        return event("content_block_delta", index=index, delta={"type": kind, field: piece})

    frames = [event("message_start", message={"id": "msg_1", "type": "message", "role": "assistant",
                                              "model": "claude-x", "content": [], "usage": {"input_tokens": 1}}),
              event("content_block_start", index=0, content_block={"type": "thinking", "thinking": ""})]
    frames += [delta(0, "thinking_delta", "thinking", "hm ")] * 40
    frames += [event("content_block_stop", index=0),
               event("content_block_start", index=1, content_block={"type": "text", "text": ""})]
    frames += [delta(1, "text_delta", "text", "ok ")] * 40
    frames += [event("content_block_stop", index=1),
               event("content_block_start", index=2, content_block={"type": "tool_use", "id": "toolu_1",
                                                                    "name": "f", "input": {}})]
    frames += [delta(2, "input_json_delta", "partial_json", piece) for piece in ['{"a"', ": ", "1", "}"] * 10]
    frames += [event("content_block_stop", index=2),
               event("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 9}),
               event("message_stop")]
    plain = plain_frames(monkeypatch, Anthropic)
    whole = fold(b"".join(frames))
    deltas = [frame for frame, data in enumerate(frames) if data.startswith(b"event: content_block_delta")]
    assert len(deltas) == 120 and not set(plain) & set(deltas)  # none of the 120 deltas took the plain way
    assert whole == _frame_by_frame(frames)
    choice = whole.choices[0]
    assert choice.reasoning == "hm " * 40 and choice.content == "ok " * 40
    assert choice.tool_calls[0].arguments == '{"a": 1}' * 10 and choice.tool_calls[0].parsed == {"a": 1}


def test_an_event_run_reads_back_the_records_and_event_names_of_the_line_by_line_path() -> None:
    blocks = [b"event: content_block_delta\ndata: {\"n\": %d}" % i for i in range(20)]
    blocks[3] = b"event:tight\ndata:{\"n\": 3}"
    blocks[5] = "event: é\ndata: {\"n\": 5}".encode()
    blocks[8] = b"event: x\ndata: {\"bad\": \"\xfe\"}"
    blocks[11] = b"event: \ndata: "
    data = b"\n\n".join(blocks) + b"\n\n"
    output = SSEParser().feed_records(data)
    assert len(output) == 1 and isinstance(output[0], DataRun) and output[0].lines_per_frame == 3
    store = FrameStore()
    store.add_run(output[0])
    expected = [make_frame(record) for record in _records_by_lines(data)]
    assert [make_frame(record) for record in store] == expected
    assert [store.event(i) for i in range(20)] == [frame.event for frame in expected]
    output[0].release()
    assert [store.event(i) for i in reversed(range(20))] == [frame.event for frame in reversed(expected)]
    assert expected[5].event == "é" and expected[3].event == "tight" and expected[11].data == ""
    # An event name that is not UTF-8 keeps the region off the run: the fold would not see its finding.
    blocks[5] = b"event: \xff\ndata: {\"n\": 5}"
    data = b"\n\n".join(blocks) + b"\n\n"
    output = SSEParser().feed_records(data)
    assert all(type(item) is tuple for item in output)
    assert [make_frame(record) for record in output] == [make_frame(record) for record in _records_by_lines(data)]


@st.composite
def responses_streams(draw: st.DrawFn) -> list[bytes]:
    """A Responses stream, mostly text deltas in sequence, with what the fast way must refuse."""
    seq = iter(range(10_000))
    item = {"id": "msg_1", "type": "message", "status": "in_progress", "content": [], "role": "assistant"}
    events: list[tuple[bytes | None, Any]] = [
        (b"response.created", {"type": "response.created", "sequence_number": next(seq), "response": {
            "id": "resp_1", "object": "response", "status": "in_progress", "model": "gpt-x", "output": []}}),
        (b"response.output_item.added", {"type": "response.output_item.added", "sequence_number": next(seq),
                                         "output_index": 0, "item": item}),
        (b"response.content_part.added", {"type": "response.content_part.added", "sequence_number": next(seq),
                                          "item_id": "msg_1", "output_index": 0, "content_index": 0,
                                          "part": {"type": "output_text", "annotations": [], "text": ""}})]
    for _ in range(draw(st.integers(8, 40))):
        kind = draw(st.integers(0, 20))
        delta = {"type": "response.output_text.delta", "sequence_number": next(seq), "item_id": "msg_1",
                 "output_index": 0, "content_index": 0, "delta": draw(_TEXTS), "logprobs": [], "obfuscation": "a"}
        name: bytes | None = b"response.output_text.delta"
        if kind == 9:
            delta["sequence_number"] += draw(st.sampled_from([1, -2, 0]))
        elif kind == 10:
            delta["content_index"] = 1
        elif kind == 11:
            name = draw(st.sampled_from([None, b"message", b"response.refusal.delta"]))
        elif kind == 12:
            delta["extra"] = True
        elif kind in (14, 15):  # reasoning summary and function arguments, items 1 and 2
            index = 1 if kind == 14 else 2
            delta = {"type": "response.reasoning_summary_text.delta" if index == 1 else
                     "response.function_call_arguments.delta", "sequence_number": delta["sequence_number"],
                     "item_id": f"item_{index}", "output_index": index, "delta": draw(_ARGUMENTS)}
            if index == 1:
                delta["summary_index"] = draw(st.sampled_from([0, 0, 1]))
            name = draw(st.sampled_from([delta["type"].encode(), delta["type"].encode(), None]))
        elif kind == 16:
            index = draw(st.sampled_from([1, 2]))
            events.append((b"response.output_item.added", {
                "type": "response.output_item.added", "sequence_number": delta["sequence_number"],
                "output_index": index, "item": {"id": f"item_{index}", "type": "reasoning", "summary": []}
                if index == 1 else {"id": f"item_{index}", "type": "function_call", "call_id": "call_1",
                                    "name": "f", "arguments": ""}}))
            continue
        elif kind in (17, 18):  # reasoning text of item 1, a refusal part of item 0
            delta = {"type": "response.reasoning_text.delta" if kind == 17 else "response.refusal.delta",
                     "sequence_number": delta["sequence_number"], "item_id": "item", "output_index": 18 - kind,
                     "content_index": kind - 17, "delta": draw(_TEXTS)}
            name = delta["type"].encode()
        elif kind == 13:
            events.append((b"response.content_part.added", {
                "type": "response.content_part.added", "sequence_number": delta["sequence_number"],
                "item_id": "msg_1", "output_index": 0, "content_index": 1,
                "part": {"type": "output_text", "annotations": [], "text": ""}}))
            continue
        events.append((name, delta))
    events.append((b"response.completed", {"type": "response.completed", "sequence_number": next(seq),
                                           "response": {"id": "resp_1", "status": "completed", "output": []}}))
    return [(b"" if name is None else b"event: " + name + b"\n") + b"data: " + json.dumps(value).encode() + b"\n\n"
            for name, value in events]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(responses_streams())
def test_a_responses_stream_folded_whole_equals_it_fed_frame_by_frame(frames: list[bytes]) -> None:
    whole = fold(b"".join(frames))
    assert whole.dialect == "openai-responses"
    assert whole == _frame_by_frame(frames)


def test_reasoning_text_and_summary_deltas_of_one_item_stay_apart_the_fast_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reasoning item's text part 0 and summary part 0 share an output index and a part number: deltas that
    alternate between them, in one run, each go to its own (the fast loop's shortcut names the kind too)."""
    from streamfold.dialects.openai_responses import OpenAIResponses

    seq = iter(range(10_000))

    def event(value: dict[str, Any]) -> bytes:
        value = {"type": value.pop("type"), "sequence_number": next(seq), **value}
        return b"event: " + value["type"].encode() + b"\ndata: " + json.dumps(value).encode() + b"\n\n"

    def delta(summary: bool, text: str) -> bytes:
        if summary:
            return event({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0,
                          "summary_index": 0, "delta": text})
        return event({"type": "response.reasoning_text.delta", "item_id": "rs_1", "output_index": 0,
                      "content_index": 0, "delta": text})

    frames = [event({"type": "response.created", "response": {"id": "resp_1", "object": "response",
                                                               "status": "in_progress", "model": "o-x", "output": []}}),
              event({"type": "response.output_item.added", "output_index": 0,
                     "item": {"id": "rs_1", "type": "reasoning", "summary": []}}),
              event({"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "output_index": 0,
                     "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
              delta(True, "S"), delta(False, "T")]
    head = len(frames)
    frames += [delta(index % 3 == 0, "st"[index % 3 != 0]) for index in range(30)]
    frames.append(event({"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
                                                                    "output": []}}))
    expected = _frame_by_frame(frames)
    plain = plain_frames(monkeypatch, OpenAIResponses)
    whole = fold(b"".join(frames))
    assert whole == expected
    assert not set(plain) & set(range(head, head + 30))  # every alternating delta went the fast way
    (item,) = whole.export()["output"]
    assert item["summary"][0]["text"] == "S" + "s" * 10 and item["content"][0]["text"] == "T" + "t" * 20


# -- NDJSON (Ollama) ----------------------------------------------------------------


@st.composite
def ollama_streams(draw: st.DrawFn) -> list[bytes]:
    """An Ollama stream as its lines, mostly text, with what the fast way must refuse."""
    chat = draw(st.booleans())
    lines: list[Any] = []
    for i in range(draw(st.integers(8, 50))):
        kind = draw(st.integers(0, 14))
        text = draw(_TEXTS)
        line: dict[str, Any] = {"model": "qwen3:8b", "created_at": f"2026-03-02T10:00:{i:02d}Z", "done": False}
        if chat:
            line["message"] = {"role": "assistant", "content": text}
        else:
            line["response"] = text
        if kind == 9:
            (line["message"] if chat else line).update(thinking=draw(_TEXTS))
        elif kind == 10:
            line["logprobs"] = [{"token": "a", "logprob": -0.1}]
        elif kind == 11:
            line["extra"] = 1
        elif kind == 12:
            line["created_at"] = 17
        elif kind == 13 and chat:
            line["message"]["tool_calls"] = [{"function": {"name": "f", "arguments": {"a": 1}}}]
        elif kind == 14:
            line["message" if chat else "response"] = None
        lines.append(line)
    lines.append({"model": "qwen3:8b", "created_at": "2026-03-02T10:01:00Z", "done": True, "done_reason": "stop",
                  **({"message": {"role": "assistant", "content": ""}} if chat else {"response": ""}),
                  "eval_count": 7})
    out = []
    for line in lines:
        body = json.dumps(line, ensure_ascii=draw(st.booleans())).encode()
        if draw(st.integers(0, 30)) == 0:
            body = body[:-1] + b',"x":"\xff"}'
        out.append(body + b"\n")
    return out


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(ollama_streams())
def test_an_ollama_stream_folded_whole_equals_it_fed_line_by_line(lines: list[bytes]) -> None:
    whole = fold(b"".join(lines))
    assert whole.dialect == "ollama" and whole.transport == "ndjson"
    assert whole == _frame_by_frame(lines)


def test_an_ollama_run_is_folded_in_its_own_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ollama folds a run of text lines in `fold_fast_run`, not line by line: `fold` sees only the lines
    it refuses (the first two, which name the model and role, a thinking line does not stop it, and the
    last)."""
    from streamfold.dialects.ollama import Ollama

    folded = plain_frames(monkeypatch, Ollama)
    head = {"model": "qwen3:8b", "created_at": "2026-03-02T10:00:00Z"}
    lines = [{**head, "message": {"role": "assistant", "content": "a" if i % 7 else ""},
              "done": False} for i in range(40)]
    lines[20]["message"]["thinking"] = "hm"
    lines.append({**head, "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"})
    result = fold(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    assert result.choices[0].content == "a" * sum(1 for i in range(40) if i % 7)
    assert result.choices[0].reasoning == "hm" and result.choices[0].finish_reason == "stop"
    assert len(folded) <= 3 and folded[-1] == 40


def test_a_line_run_reads_back_the_records_of_the_line_path() -> None:
    lines = [b'{"n": %d}' % i for i in range(12)]
    lines[4] = b'{"bad": "\xff"}'
    lines[7] = b"not json"
    data = b"\n".join(lines) + b"\n"
    output = NDJSONParser().feed_records(data)
    assert len(output) == 1 and isinstance(output[0], LineRun)
    store = FrameStore()
    store.add_run(output[0])
    parser = NDJSONParser()
    expected: list[Any] = []
    for i in range(len(data)):
        expected.extend(parser.feed_records(data[i : i + 1]))
    expected = [make_frame(record) for record in expected]
    assert [make_frame(record) for record in store] == expected
    assert [make_frame(store[i]) for i in reversed(range(12))] == expected[::-1]
    assert expected[4].issues[0].code == "invalid-utf8"


# -- Gemini -------------------------------------------------------------------------


@st.composite
def gemini_streams(draw: st.DrawFn) -> list[bytes]:
    """A Gemini SSE stream, mostly text chunks, with what the fast way must refuse."""
    frames = []
    count = draw(st.integers(8, 50))
    for i in range(count):
        kind = draw(st.integers(0, 16))
        part: dict[str, Any] = {"text": draw(_TEXTS)}
        candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}}
        if draw(st.booleans()):
            candidate["index"] = 0
        if kind == 9:
            part["thought"] = True
        elif kind == 10:
            candidate["content"]["parts"] = [{"functionCall": {"name": "f", "args": {"a": i}}}]
        elif kind == 11:
            candidate["finishReason"] = draw(st.sampled_from(["STOP", "MAX_TOKENS"]))
        elif kind == 12:
            candidate["safetyRatings"] = [{"category": "HARM_CATEGORY_X", "probability": "NEGLIGIBLE"}]
        elif kind == 13:
            candidate["index"] = 1
        elif kind == 14:
            del candidate["content"]["role"]
            candidate["content"]["parts"] = [part, {"text": draw(_TEXTS)}]
        elif kind == 15:
            candidate["content"]["parts"] = []
        chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-2.5-flash", "responseId": "r1"}
        if draw(st.booleans()):
            chunk["usageMetadata"] = {"promptTokenCount": 3, "candidatesTokenCount": i, "totalTokenCount": 3 + i}
        if kind == 16:
            chunk["promptFeedback"] = {"blockReason": "OTHER"}
        body = json.dumps(chunk, ensure_ascii=draw(st.booleans())).encode()
        if draw(st.integers(0, 30)) == 0:
            body = body[:-1] + b',"x":"\xff"}'
        frames.append(b"data: " + body + b"\r\n\r\n" if draw(st.integers(0, 40)) == 0 else b"data: " + body + b"\n\n")
    return frames


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(gemini_streams(), st.randoms(use_true_random=False))
def test_a_gemini_stream_folded_whole_equals_it_fed_frame_by_frame(frames: list[bytes], rng: random.Random) -> None:
    data = b"".join(frames)
    whole = fold(data)
    assert whole.dialect == "gemini"
    assert whole == _frame_by_frame(frames)
    # Without events (what `fold` does), runs that end anywhere: Gemini's own loop, cut where the bytes are.
    folder, position = Folder(events=False), 0
    while position < len(data):
        step = rng.choice([1, 7, 64, 333, 4096])
        folder.feed(data[position : position + step])
        position += step
    assert folder.close() == whole


def test_gemini_text_chunks_go_the_fast_way_and_keep_the_usage_where_the_plain_fold_keeps_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from streamfold.dialects.gemini import Gemini

    def chunk(text: str, usage: int | None) -> bytes:
        value: dict[str, Any] = {"candidates": [{"content": {"parts": [{"text": text}], "role": "model"}}],
                                 "modelVersion": "gemini-2.5-flash", "responseId": "r1"}
        if usage is not None:
            value["usageMetadata"] = {"promptTokenCount": 3, "candidatesTokenCount": usage}
        return b"data: " + json.dumps(value).encode() + b"\n\n"

    frames = [chunk("a", None)] + [chunk("b", None if i % 3 else i) for i in range(1, 40)] + [chunk("", None)]
    expected = _frame_by_frame(frames)
    plain = plain_frames(monkeypatch, Gemini)
    result = fold(b"".join(frames))
    assert result == expected and result.choices[0].content == "a" + "b" * 39
    assert plain == [0]  # the first chunk opens the candidate; every later one is the fast way's
    assert result.usage is not None and result.usage.raw == {"promptTokenCount": 3, "candidatesTokenCount": 39}
    # The usage's first and last frames, as each chunk's own `replace` leaves them.
    folder = Folder(events=False)
    folder.feed(b"".join(frames))
    assert folder._merger.frames_of(("usage",)) == (3, 39)


# -- Cohere -------------------------------------------------------------------------


@st.composite
def cohere_streams(draw: st.DrawFn) -> list[bytes]:
    """A Cohere v2 stream, mostly content deltas, with what the fast way must refuse."""
    def event(value: dict[str, Any]) -> bytes:
        name = value["type"].encode() if draw(st.integers(0, 20)) else b"other"
        return b"event: " + name + b"\ndata: " + json.dumps(value).encode() + b"\n\n"

    frames = [event({"type": "message-start", "id": "m1", "delta": {"message": {"role": "assistant"}}}),
              event({"type": "content-start", "index": 0,
                     "delta": {"message": {"content": {"type": "text", "text": ""}}}})]
    for _ in range(draw(st.integers(8, 40))):
        kind = draw(st.integers(0, 12))
        content: dict[str, Any] = {"text": draw(_TEXTS)}
        value: dict[str, Any] = {"type": "content-delta", "index": draw(st.sampled_from([0, 0, 0, 1, None])),
                                 "delta": {"message": {"content": content}}}
        if kind == 9:
            content.pop("text")
            content["thinking"] = draw(_TEXTS)
        elif kind == 10:
            content["thinking"] = "both"
        elif kind == 11:
            value["logprobs"] = {"token_ids": [1]}
        elif kind == 12:
            frames.append(event({"type": "content-start", "index": 1,
                                 "delta": {"message": {"content": {"type": "thinking", "thinking": ""}}}}))
            continue
        if value["index"] is None:
            del value["index"]
        frames.append(event(value))
    frames.append(event({"type": "message-end", "delta": {"finish_reason": "COMPLETE",
                                                          "usage": {"tokens": {"output_tokens": 3}}}}))
    return frames


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(cohere_streams())
def test_a_cohere_stream_folded_whole_equals_it_fed_frame_by_frame(frames: list[bytes]) -> None:
    whole = fold(b"".join(frames))
    assert whole.dialect == "cohere"
    assert whole == _frame_by_frame(frames)


def _responses_text(count: int) -> list[bytes]:
    head = [{"type": "response.created", "response": {"id": "resp_1", "object": "response", "status": "in_progress",
                                                       "model": "gpt-x", "output": []}},
            {"type": "response.output_item.added", "output_index": 0, "item": {
                "id": "msg_1", "type": "message", "status": "in_progress", "content": [], "role": "assistant"}},
            {"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0, "content_index": 0,
             "part": {"type": "output_text", "annotations": [], "text": ""}}]
    deltas = [{"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0,
               "delta": "a", "logprobs": []}] * count
    events = [*head, *deltas, {"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
                                                                           "output": []}}]
    return [f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': number})}\n\n".encode()
            for number, event in enumerate(events)]


def _cohere_text(count: int) -> list[bytes]:
    events = [{"type": "message-start", "id": "m1", "delta": {"message": {"role": "assistant"}}},
              {"type": "content-start", "index": 0, "delta": {"message": {"content": {"type": "text", "text": ""}}}},
              *[{"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "a"}}}}] * count,
              {"type": "message-end", "delta": {"finish_reason": "COMPLETE"}}]
    return [f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode() for event in events]


# (Responses' first text delta goes to `fold`: it finds the segment the next ones extend.)
@pytest.mark.parametrize(("name", "make", "first"), [("openai-responses", _responses_text, 1), ("cohere", _cohere_text, 0)])
def test_a_run_of_text_deltas_is_folded_in_the_dialects_own_loop(name: str, make: Any, first: int,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Responses and Cohere fold their runs of text deltas in `fold_fast_run`: `fold` sees only the
    events around them."""
    spec = spec_of(name)
    plain = plain_frames(monkeypatch, spec.fold)
    frames = make(60)
    result = fold(b"".join(frames))
    assert result.dialect == name and result.choices[0].content == "a" * 60
    assert len(plain) == len(frames) - 60 + first and result == _frame_by_frame(frames)


# -- any chunking -------------------------------------------------------------------


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(st.one_of(streams(), anthropic_streams(), responses_streams(), gemini_streams(), ollama_streams(),
                 cohere_streams()), st.randoms(use_true_random=False))
def test_random_chunkings_agree(frames: list[bytes], rng: random.Random) -> None:
    """Runs form inside chunks and stop at their ends: any chunking folds alike."""
    data = b"".join(frames)
    folder = Folder()
    position = 0
    while position < len(data):
        step = rng.choice([1, 7, 64, 333, 4096, 1 << 16])
        folder.feed(data[position : position + step])
        position += step
    assert folder.close() == fold(data)


def _events(chunks: list[bytes]) -> list[Any]:
    folder = Folder()
    events = [event for chunk in chunks for event in folder.feed(chunk) if not isinstance(event, Finding)]
    folder.close()
    return events


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(st.one_of(streams(), anthropic_streams(), responses_streams(), gemini_streams(), ollama_streams(),
                 cohere_streams()))
def test_feed_events_do_not_depend_on_the_chunking(frames: list[bytes]) -> None:
    """What `feed()` returns, put end to end, is the same whether the stream came whole or frame by frame.
    (Found by this test: a tool call's name on a ToolCallDelta was the name known at the end of the chunk.)"""
    assert _events([b"".join(frames)]) == _events(frames)


_LINE_BYTES = st.binary(max_size=30).map(lambda raw: raw.replace(b"\n", b"").replace(b"\r", b""))


@st.composite
def raw_runs(draw: st.DrawFn) -> bytes:
    """Blocks shaped like a run (data lines, event and data lines, NDJSON lines) holding any bytes."""
    shape = draw(st.sampled_from(["data", "event", "ndjson"]))
    lines = []
    for _ in range(draw(st.integers(8, 30))):
        payload = draw(st.one_of(_LINE_BYTES, st.sampled_from([b'{"a": 1}', b" [DONE]", b"[DONE]", b"{", b"",
                                                                 b'{"choices": []}', b'{"type": "ping"}'])))
        if shape == "ndjson":
            lines.append((payload or b"{}") + b"\n")
        elif shape == "data":
            lines.append(b"data:" + payload + b"\n\n")
        else:
            lines.append(b"event:" + draw(_LINE_BYTES) + b"\ndata:" + payload + b"\n\n")
    return b"".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(raw_runs(), st.randoms(use_true_random=False))
def test_runs_of_any_bytes_fold_as_their_frames_do(data: bytes, rng: random.Random) -> None:
    """Whatever the lines of a run hold (invalid UTF-8, NUL, half JSON), the fold never raises and
    agrees with the byte-by-byte fold, which never forms a run."""
    whole = fold(data)
    folder = Folder()
    for i in range(len(data)):
        folder.feed(data[i : i + 1])
    assert folder.close() == whole
    for transport in ("sse", "ndjson"):
        chunked, forced = Folder(transport=transport), fold(data, transport=transport)
        position = 0
        while position < len(data):
            step = rng.choice([1, 5, 50, 500])
            chunked.feed(data[position : position + step])
            position += step
        assert chunked.close() == forced
