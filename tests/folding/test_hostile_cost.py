"""Bounded cost on hostile input: what a stream can make the fold allocate or repeat is
bounded by its size and the limits (max_findings_per_code, max_choices, max_tool_calls).
The bounds are asserted structurally (sizes, counts, operations), not by timing."""

from __future__ import annotations

import json
import random
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from feeding import tr_fold
from streamfold import Folder, Result, fold
from streamfold.dialects._calls import CallIndex
from streamfold.dialects.openai_chat.tools import ChoiceState
from streamfold.framing import NDJSONParser, SSEParser
from streamfold.framing._records import PackedRun, expand
from streamfold.merge import Merger, TextBuffer, ToolPath, WholeText


def _sse(*payloads: Any) -> bytes:
    return b"".join(b"data: " + (p if isinstance(p, bytes) else json.dumps(p).encode()) + b"\n\n" for p in payloads)


def _roundtrip(result: Result) -> None:
    assert Result.from_dict(json.loads(json.dumps(result.to_dict()))) == result


# -- Gemini partialArgs: an index far past the array's end -------------------------------


def _gemini_call(*fragments: dict[str, Any], more: bool) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"partialArgs": list(fragments), "willContinue": more}}]}}]}


def test_gemini_huge_index_is_placed_at_the_end_with_a_finding() -> None:
    data = _sse(
        {"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "f", "willContinue": True}}]}}]},
        _gemini_call({"jsonPath": "$.a[0]", "stringValue": "x"}, more=True),
        _gemini_call({"jsonPath": "$.a[10000000]", "stringValue": "y", "willContinue": True}, more=True),
        _gemini_call({"jsonPath": "$.a[10000000]", "stringValue": "z"},
                     {"jsonPath": "$.a[3]", "numberValue": 3}, more=False),
        {"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP"}]})
    result = tr_fold(data)
    call = result.choices[0].tool_calls[0]
    # Nothing allocated for the index: its value went at the array's end, and the string continued there.
    assert call.parsed == {"a": ["x", "yz", None, 3]}
    assert len(call.arguments) < 40
    found = [d for d in result.diagnostics if d.code == "unexpected-payload"]
    assert len(found) == 1
    assert found[0].frame == 2
    assert found[0].details["index"] == 10000000 and found[0].details["placed"] == 1
    _roundtrip(result)


def test_gemini_small_gap_is_still_filled() -> None:
    data = _sse(
        _gemini_call({"jsonPath": "$.a[2]", "stringValue": "c"}, {"jsonPath": "$.a[0]", "stringValue": "a"}, more=False),
        {"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP"}]})
    result = fold(data)
    assert result.choices[0].tool_calls[0].parsed == {"a": ["a", None, "c"]}
    assert not [d for d in result.diagnostics if d.code == "unexpected-payload"]


# -- distinct tool calls cost the same each, in every dialect ----------------------------


def _line_events(action: Callable[[], object]) -> int:
    """Python line events `action` runs: a deterministic count of the work done."""
    count = 0

    def trace(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        action()
    finally:
        sys.settrace(None)
    return count


def _tools_openai_chat(n: int) -> bytes:
    return _sse(*({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": i, "id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]}
        for i in range(n)), b"[DONE]")


def _tools_gemini(n: int) -> bytes:
    return _sse(*({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "f", "args": {"i": i}}}]}}]} for i in range(n)))


def _tools_ollama(n: int) -> bytes:
    return b"".join(json.dumps({"model": "q", "message": {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "f", "arguments": {"i": i}}}]}, "done": False}).encode() + b"\n" for i in range(n))


def _tools_cohere(n: int) -> bytes:
    out = [{"type": "message-start", "id": "m", "delta": {"message": {"role": "assistant"}}}]
    for i in range(n):
        out += [{"type": "tool-call-start", "index": i, "delta": {"message": {"tool_calls": {
                    "id": f"t{i}", "type": "function", "function": {"name": "f", "arguments": ""}}}}},
                {"type": "tool-call-delta", "index": i, "delta": {"message": {"tool_calls": {
                    "function": {"arguments": "{}"}}}}},
                {"type": "tool-call-end", "index": i}]
    return _sse(*out)


@pytest.mark.parametrize("make", [_tools_openai_chat, _tools_gemini, _tools_ollama, _tools_cohere],
                         ids=["openai-chat", "gemini", "ollama", "cohere"])
def test_distinct_tool_calls_cost_the_same_each(make: Callable[[int], bytes]) -> None:
    small, large = make(150), make(600)
    assert len(fold(large).choices[0].tool_calls) == 600
    ratio = _line_events(lambda: fold(large)) / _line_events(lambda: fold(small))
    # Linear work gives ~4; a scan of the earlier calls per call gave 6-10 at these sizes.
    assert ratio < 4.6, ratio


def test_openai_chat_tool_keys_take_the_index_unless_taken() -> None:
    state = ChoiceState(TextBuffer((0, "content")))
    assert [state.new_tool(p) for p in (0, 5, 5, -1, 2, 7, 6)] == [0, 5, 6, 7, 2, 8, 9]
    assert state.tool_keys == [0, 5, 6, 7, 2, 8, 9]


def test_whole_calls_repeated_after_many_others_are_still_found() -> None:
    lines = [{"model": "q", "message": {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "f", "arguments": {"i": i}}}]}, "done": False} for i in range(50)]
    lines.append(lines[7])
    lines.append({"model": "q", "message": {"role": "assistant", "content": "", "tool_calls": [
        {"id": "late", "function": {"name": "f", "arguments": {"i": 9}}}]}, "done": False})
    result = tr_fold(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    assert len(result.choices[0].tool_calls) == 50
    repeated = [d for d in result.diagnostics if d.code == "tool-call-repeated"]
    assert [(d.frame, d.details["tool_call"]) for d in repeated] == [(50, 7), (51, 9)]


def test_whole_gemini_calls_peak_under_20x_their_input() -> None:
    # The cap raised past the size, so it does not hide the growth. Before: 26.7x (3.2 KB a call:
    # a list per call twice in the dedupe index, a TextBuffer with two arrays for args that arrive
    # whole, a block dict per part, a sources dict, sets of keys, the last 1 MiB slice held); now ~15x.
    data = _tools_gemini(5000)
    tracemalloc.start()
    try:
        result = fold(data, max_tool_calls=10**6)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    calls = result.choices[0].tool_calls
    assert len(calls) == 5000 and calls[4999].parsed == {"i": 4999} and calls[4999].arguments == '{"i":4999}'
    assert peak < 20 * len(data), peak / len(data)


def test_call_index_finds_what_a_scan_finds() -> None:
    # One key per content is held as an int, more as a sorted list: `first` is still the scan's answer.
    rng = random.Random(7)
    index, held = CallIndex(), {}
    for step in range(3000):
        key = rng.randrange(40)
        if key in held:
            index.remove(key, *held.pop(key))
        if rng.random() < 0.7:
            held[key] = (rng.randrange(4), rng.random() < 0.3)
            index.add(key, *held[key])
        content, has_id = rng.randrange(4), rng.random() < 0.5
        scan = [k for k, (c, i) in sorted(held.items()) if c == content and (not has_id or not i)]
        assert index.first(content, has_id) == (scan[0] if scan else None), step


def test_whole_text_grows_into_a_buffer_when_appended_to() -> None:
    whole, merger = Merger(journal=True), Merger(journal=True)
    path: ToolPath = (0, "tool", 0, "arguments")
    whole.append_whole(path, '{"a":', 3)
    merger.append(path, '{"a":', 3)
    assert type(whole.texts[path]) is WholeText
    assert whole.texts[path].fragments() == [('{"a":', 3)] and whole.frames_of(path) == (3, 3)
    assert whole.texts[path].frame_at(4) == 3 and whole.texts[path].frame_at(5) is None
    for m in (whole, merger):
        m.append_whole(path, "1}", 5)  # not its first text: a plain append
    assert type(whole.texts[path]) is TextBuffer
    for m in (whole, merger):
        assert m.texts[path].fragments() == [('{"a":', 3), ("1}", 5)]
        assert m.parse(path, 5).value == {"a": 1} and m.frames_of(path) == (3, 5)
    assert whole.drain() == merger.drain()


def test_a_text_parsed_before_anything_is_appended_is_one_shared_empty_text() -> None:
    merger = Merger(journal=True)
    first, second, third = ((0, "tool", key, "arguments") for key in range(3))
    for path in (first, second, third):
        assert merger.parse(path, 1).value == {}
    assert merger.texts[first] is merger.texts[second]  # one empty text, not a buffer per call
    assert merger.parse(first, 2).value is not merger.parse(second, 2).value  # each parse its own {}
    assert merger.texts[first].text() == "" and merger.texts[first].frame_at(0) is None
    merger.append(third, '{"a":', 4)
    merger.buffer(second).add("[1]", 5)  # a dialect's hot path: the buffer it is given is its own
    assert type(merger.texts[third]) is TextBuffer and type(merger.texts[second]) is TextBuffer
    assert merger.parse(second, 5).value == [1] and merger.parse(first, 5).value == {}
    assert merger.texts[first].text() == "" and merger.frames_of(second) == (5, 5)
    # Each path's first parse is journalled once, as when each had a buffer of its own.
    assert [(op, path[2]) for op, path, *_ in merger.drain()] == [
        ("parsed", 0), ("parsed", 1), ("parsed", 2), ("append", 2), ("append", 1), ("parsed", 1)]


def test_tool_calls_sent_without_arguments_keep_their_own_arguments_and_sources() -> None:
    events = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}]
    for ident in ("a", "b", "c"):
        events += [{"type": "TOOL_CALL_START", "toolCallId": ident, "toolCallName": "f"},
                   {"type": "TOOL_CALL_END", "toolCallId": ident}]
    events.append({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})
    result = tr_fold(b"".join(json.dumps(event).encode() + b"\n" for event in events))
    calls = result.choices[0].tool_calls
    assert [(call.id, call.arguments, call.parsed) for call in calls] == [(i, "", {}) for i in "abc"]
    assert calls[0].parsed is not calls[1].parsed and not result.diagnostics
    assert list(result.sources) == [(0, "tool:0"), (0, "tool:1"), (0, "tool:2")]
    assert all(result.sources[key].frame_at(0) is None and not result.sources[key].frames for key in result.sources)
    _roundtrip(result)


def test_sources_are_the_texts_and_calls_of_the_result() -> None:
    data = _sse({"candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}}]},
                *({"candidates": [{"content": {"role": "model", "parts": [
                    {"functionCall": {"name": "f", "args": {"i": i}}}]}}]} for i in range(2)))
    result = fold(data)
    assert list(result.sources) == [(0, "content"), (0, "tool:0"), (0, "tool:1")] and len(result.sources) == 3
    assert result.sources[(0, "tool:1")].frame_at(0) == 2 and result.sources[(0, "content")].frame_at(1) == 0
    for missing in ((0, "reasoning"), (0, "tool:01"), (0, "tool:2"), (0, "tool:-1"), (1, "content"), "x", (0,)):
        assert result.sources.get(missing) is None


# -- findings collapse per code ---------------------------------------------------------


def test_findings_past_the_cap_are_counted_and_listed_as_ranges() -> None:
    data = b"Data: x\n\n" * 40 + _sse({"object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}, b"[DONE]") + b"Data: y\n\n" * 3
    result = tr_fold(data, max_findings_per_code=10)
    unknown = [d for d in result.diagnostics if d.code == "unknown-field"]
    assert [d.frame for d in unknown] == list(range(10))
    (summary,) = [d for d in result.diagnostics if d.code == "findings-collapsed"]
    assert summary.frame == 10
    assert summary.details == {"code": "unknown-field", "count": 43, "listed": 10,
                               "frames": [[10, 39], [42, 44]]}
    assert result.choices[0].content == "hi"
    _roundtrip(result)


def test_errors_collapse_too() -> None:
    result = tr_fold(b"data: {\n\n" * 30, max_findings_per_code=4)
    assert len(result.errors) == 4
    (summary,) = [d for d in result.diagnostics if d.code == "findings-collapsed"]
    assert summary.details["code"] == "invalid-json" and summary.details["count"] == 30
    assert summary.details["frames"] == [[4, 29]]
    _roundtrip(result)


def test_default_cap_keeps_a_hundred() -> None:
    result = fold(b"Data: x\n\n" * 1000)
    assert len(result.diagnostics) == 101
    assert result.diagnostics[-1].details["count"] == 1000


# -- caps on choices and tool calls -----------------------------------------------------


def test_choices_past_the_cap_are_dropped_with_one_finding() -> None:
    data = _sse(*({"choices": [{"index": i, "delta": {"content": "a"}}]} for i in range(12)),
                {"choices": [{"index": 1, "delta": {"content": "b"}}]})
    result = tr_fold(data, max_choices=5)
    assert [c.index for c in result.choices] == [0, 1, 2, 3, 4]
    assert result.choices[1].content == "ab"
    (capped,) = [d for d in result.diagnostics if d.code == "choices-capped"]
    assert capped.frame == 5
    _roundtrip(result)


@pytest.mark.parametrize("make, first_dropped", [(_tools_openai_chat, 3), (_tools_gemini, 3), (_tools_cohere, 10)],
                         ids=["openai-chat", "gemini", "cohere"])
def test_tool_calls_past_the_cap_are_dropped_with_one_finding(make: Callable[[int], bytes], first_dropped: int) -> None:
    result = tr_fold(make(8), max_tool_calls=3)
    assert len(result.choices[0].tool_calls) == 3
    (capped,) = [d for d in result.diagnostics if d.code == "tool-calls-capped"]
    assert capped.frame == first_dropped
    _roundtrip(result)


def test_anthropic_tool_calls_past_the_cap() -> None:
    events = [("message_start", {"type": "message_start", "message": {
        "id": "m", "type": "message", "role": "assistant", "model": "c", "content": [], "usage": {}}})]
    for i in range(6):
        events += [("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                       "type": "tool_use", "id": f"t{i}", "name": "f", "input": {}}}),
                   ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                       "type": "input_json_delta", "partial_json": "{}"}}),
                   ("content_block_stop", {"type": "content_block_stop", "index": i})]
    events += [("message_stop", {"type": "message_stop"})]
    data = b"".join(f"event: {name}\ndata: {json.dumps(value)}\n\n".encode() for name, value in events)
    result = tr_fold(data, max_tool_calls=2)
    assert [c.key for c in result.choices[0].tool_calls] == [0, 1]
    assert [d.code for d in result.diagnostics] == ["tool-calls-capped"]


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="max_choices"):
        Folder(max_choices=-1)


# -- memory: records packed back into their bytes ----------------------------------------


def test_packed_frames_are_the_framers_frames() -> None:
    block = (b"Data: x\n\n: keep-alive\n\nid: 7\nretry: 5x\ndata: {\n\n"
             b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
    data = block * 3000 + b"event: e\r\ndata: [DONE]\r\n\r\nDa"
    result = fold(data)
    parser = SSEParser()
    frames = expand(parser.feed_records(data) + parser.close_records())
    assert list(result.frames) == frames
    assert result.frame_counts["total"] == len(frames) >= 12000


def test_stray_lines_are_packed_and_peak_memory_stays_bounded() -> None:
    data = b"Data: x\n\n" * 20_000
    folder = Folder(events=False)
    tracemalloc.start()
    try:
        for start in range(0, len(data), 4096):
            folder.feed(data[start : start + 4096])
        result = folder.close()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    slots = folder._frames._slots
    assert sum(type(slot) is tuple for slot in slots) < 5000
    assert any(isinstance(slot, PackedRun) for slot in slots)
    assert len(result.diagnostics) == 101 and result.diagnostics[-1].details["count"] == 20_000
    # Before: 90x (a record, an issue and a Diagnostic per 9-byte frame); now ~22x at this size, most
    # of it the records not packed yet (up to 4096), ~9x for a long stream.
    assert peak < 40 * len(data), peak / len(data)


def test_packed_ndjson_frames_are_the_framers_frames() -> None:
    line = b'{"model":"q","message":{"role":"assistant","content":"a"},"done":false}\n'
    data = (b"x\n\n {\"a\":1}\r\n" + line) * 3000 + b"\xff\xfe\n{"
    folder = Folder(transport="ndjson")
    folder.feed(data)
    result = folder.close()
    parser = NDJSONParser()
    assert list(result.frames) == expand(parser.feed_records(data) + parser.close_records())
    assert any(isinstance(slot, PackedRun) for slot in folder._frames._slots)
    assert result.choices[0].content == "a" * 3000


_CAPTURES = sorted(p for p in (Path(__file__).parent.parent / "captures").rglob("*.*")
                   if p.suffix not in (".json", ".md"))


@pytest.mark.parametrize("caps", [{"max_choices": 0}, {"max_tool_calls": 1, "max_findings_per_code": 0}],
                         ids=["no-choices", "one-call-no-findings"])
def test_tiny_caps_never_raise_and_do_not_depend_on_chunking(caps: dict[str, int]) -> None:
    assert _CAPTURES
    for path in _CAPTURES:
        data = path.read_bytes()
        result = fold(data, **caps)
        assert Result.from_dict(result.to_dict()) == result, path
        folder = Folder(**caps)
        for start in range(0, len(data), 7):
            folder.feed(data[start : start + 7])
        assert folder.close() == result, path


def _responses_rotated_terminal(n: int) -> bytes:
    """n streamed items, function calls and messages by turns; the terminal output has a reasoning
    item first and new ids on every item (a gateway's), so no item matches by place or id."""
    def item(i: int, item_id: str) -> dict[str, Any]:
        if i % 2:
            return {"type": "message", "id": item_id, "role": "assistant", "content": []}
        return {"type": "function_call", "id": item_id, "call_id": f"call{i}", "name": "f", "arguments": "{}"}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {"id": "r", "output": []}}]
    events += [{"type": "response.output_item.added", "output_index": i, "item": item(i, f"it{i}")} for i in range(n)]
    output = [{"type": "reasoning", "id": "rs", "summary": []}, *(item(i, f"new{i}") for i in range(n))]
    events.append({"type": "response.completed", "response": {"id": "r", "status": "completed", "output": output}})
    return _sse(*events)


def test_a_terminal_output_of_unmatched_items_costs_the_same_each() -> None:
    small, large = _responses_rotated_terminal(150), _responses_rotated_terminal(600)
    assert fold(large).dialect == "openai-responses"
    ratio = _line_events(lambda: fold(large)) / _line_events(lambda: fold(small))
    assert ratio < 4.6, ratio
