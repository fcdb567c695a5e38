"""Issue 20, part 3, group C: the sites that went quadratic in the number of candidates, tool keys or
data parts (gemini, gemini-interactions, vercel-ui, cohere-v1), and the shapes whose fold peaked above
20x the input (Gemini candidates and parts, vercel-data annotations, Anthropic block indexes). Each
small instance folds to what it folded to before (worked out by hand here), however it is fed; what a
bound leaves out is a located finding. Cost and memory are measured by benchmarks/hostile/hostile_c.py."""

from __future__ import annotations

import json
from typing import Any

from feeding import tr_fold
from streamfold import Folder, Result, fold
from streamfold.dialects.anthropic.blocks import TOOL_USE_START
from streamfold.dialects.gemini.state import MAX_PARTS


def _sse(*payloads: Any, events: list[str] | None = None) -> bytes:
    named = events or [""] * len(payloads)
    return b"".join((f"event: {event}\n" if event else "").encode() + b"data: " + json.dumps(payload).encode()
                    + b"\n\n" for event, payload in zip(named, payloads))


def _lines(*payloads: Any) -> bytes:
    return b"".join(json.dumps(payload).encode() + b"\n" for payload in payloads)


def _codes(result: Result) -> list[str]:
    return [finding.code for finding in (*result.errors, *result.diagnostics)]


def _roundtrip(result: Result, *, exports: bool = True) -> None:
    again = Result.from_dict(json.loads(json.dumps(result.to_dict(), allow_nan=False)))
    assert again == result
    if exports:
        assert again.export() == result.export()


def _folded(data: bytes, **options: Any) -> Folder:
    folder = Folder(**options)
    folder.feed(data)
    folder.close()
    return folder


# -- Gemini: many candidates ---------------------------------------------------------------


def _candidate(index: int, text: str | None = "a", finish: str | None = "STOP") -> dict[str, Any]:
    candidate: dict[str, Any] = {"index": index}
    if text is not None:
        candidate["content"] = {"role": "model", "parts": [{"text": text}]}
    if finish is not None:
        candidate["finishReason"] = finish
    return candidate


def _gemini(*candidates: dict[str, Any]) -> dict[str, Any]:
    return {"candidates": list(candidates)}


def test_gemini_candidates_past_max_choices_hold_no_state_but_still_end_the_reply() -> None:
    data = _sse(*(_gemini(_candidate(index, f"t{index}")) for index in range(6)))
    result = tr_fold(data, max_choices=3)
    assert [(c.index, c.content, c.finish_reason) for c in result.choices] == [
        (0, "t0", "stop"), (1, "t1", "stop"), (2, "t2", "stop")]
    assert result.complete
    (capped,) = result.diagnostics
    assert (capped.code, capped.frame) == ("choices-capped", 3)
    assert [candidate["index"] for candidate in result.native["candidates"]] == [0, 1, 2]
    _roundtrip(result)
    # A dropped candidate that never ends keeps the reply open, as any candidate does.
    unended = tr_fold(data + _sse(_gemini(_candidate(7, "late", None))), max_choices=3)
    assert not unended.complete and "missing-terminal" in _codes(unended)
    assert [c.content for c in unended.choices] == ["t0", "t1", "t2"]
    # What the dialect keeps per candidate: nothing for those the merger drops (a Candidate each cost ~2 KB).
    many = _sse(*(_gemini(_candidate(index)) for index in range(200)))
    assert len(_folded(many, max_choices=3)._dialect._candidates) == 3  # type: ignore[union-attr]
    assert fold(many, max_choices=3).complete


def test_gemini_an_error_goes_to_the_candidates_open_when_it_came() -> None:
    error = {"error": {"code": 500, "message": "boom", "status": "INTERNAL"}}
    data = _sse(_gemini(_candidate(0, "a", None)), _gemini(_candidate(1, "b", None)), _gemini(_candidate(0, None)),
                error, _gemini(_candidate(2, "c")), {"error": {"code": 503, "message": "again"}},
                _gemini(_candidate(1, None)))
    result = tr_fold(data)
    # 0 ended before the errors, 2 started after the first and ended before the second; 1 was open for both.
    assert [(c.index, c.content, c.finish_reason) for c in result.choices] == [
        (0, "a", "stop"), (1, "b", "error"), (2, "c", "stop")]
    assert [(e.code, e.frame) for e in result.errors] == [("in-stream-error", 3), ("in-stream-error", 5)]
    assert not result.complete
    merger = _folded(data)._merger
    assert merger.get((1, "error")) == "again" and merger.frames_of((1, "error")) == (3, 5)
    assert merger.get((0, "error")) is None and merger.get((2, "error")) is None
    # With no candidate open, the error is choice 0's.
    late = tr_fold(_sse(_gemini(_candidate(0)), error))
    assert [(c.content, c.finish_reason) for c in late.choices] == [("a", "error")]


# -- Gemini: many parts ----------------------------------------------------------------------


def _alternating(count: int) -> list[dict[str, Any]]:
    return [{"text": "b", "thought": True} if i % 2 else {"text": "a"} for i in range(count)]


def test_gemini_parts_past_the_cap_extend_the_last_runs_and_say_so() -> None:
    code = {"executableCode": {"language": "PYTHON", "code": "x"}}
    # 998 alternating runs and a code part, then a text run that is part 1000: the cap is reached.
    parts = [*_alternating(MAX_PARTS - 2), code, *_alternating(6), code, {"text": "z"}]
    data = _sse({"candidates": [{"content": {"role": "model", "parts": parts[:600]}}]},
                {"candidates": [{"content": {"role": "model", "parts": parts[600:]}, "finishReason": "STOP"}]})
    result = tr_fold(data)
    choice = result.choices[0]
    # The text is whole: every text and thought fragment is in the reply.
    assert (choice.content, choice.reasoning) == ("a" * 502 + "z", "b" * 502)
    assert (choice.finish_reason, result.complete) == ("stop", True)
    (capped,) = result.diagnostics
    assert (capped.code, capped.frame, capped.details) == ("parts-capped", 1, {"choice": 0, "max_parts": MAX_PARTS})
    listed = result.native["candidates"][0]["parts"]
    assert len(listed) == MAX_PARTS and len(choice.blocks) == MAX_PARTS
    # The last thought run (997) and text run (999) took what came after the cap; the second code part is out.
    assert listed[-3:] == [{"thought": [498, 502]}, {"whole": code}, {"text": [499, 503]}]
    exported = result.export()["candidates"][0]["content"]["parts"]
    assert exported[-3:] == [{"text": "bbbb", "thought": True}, code, {"text": "aaaz"}]
    _roundtrip(result)


def test_gemini_parts_under_the_cap_fold_as_before() -> None:
    data = _sse({"candidates": [{"content": {"role": "model", "parts": _alternating(5)}, "finishReason": "STOP"}]})
    result = tr_fold(data)
    assert (result.choices[0].content, result.choices[0].reasoning) == ("aaa", "bb")
    assert result.native["candidates"][0]["parts"] == [
        {"text": [0, 1]}, {"thought": [0, 1]}, {"text": [1, 2]}, {"thought": [1, 2]}, {"text": [2, 3]}]
    assert not result.diagnostics


# -- gemini-interactions: many tool keys --------------------------------------------------------


def test_gemini_interactions_call_steps_keep_their_order_and_ids() -> None:
    events = [{"event_type": "interaction.created", "interaction": {"id": "i1", "status": "in_progress"}}]
    for index in range(4):
        events.append({"event_type": "step.start", "index": index,
                       "step": {"type": "function_call", "id": f"c{index}", "name": f"f{index}", "arguments": {}}})
        events.append({"event_type": "step.delta", "index": index,
                       "delta": {"type": "arguments_delta", "arguments": f'{{"n": {index}}}'}})
    events.append({"event_type": "step.delta", "index": 1, "delta": {"type": "arguments_delta", "arguments": " "}})
    events.append({"event_type": "step.delta", "index": 9, "delta": {"type": "arguments_delta", "arguments": "{}"}})
    events.append({"event_type": "interaction.completed", "interaction": {"id": "i1", "status": "requires_action"}})
    result = tr_fold(_sse(*events))
    calls = result.choices[0].tool_calls
    assert [(c.key, c.id, c.name, c.parsed) for c in calls] == [
        (0, "c0", "f0", {"n": 0}), (1, "c1", "f1", {"n": 1}), (2, "c2", "f2", {"n": 2}), (3, "c3", "f3", {"n": 3}),
        (9, None, None, {})]
    assert result.native["call_ids"] == ["c0", "c1", "c2", "c3", None]
    assert (result.choices[0].finish_reason, result.complete) == ("tool_calls", True)
    _roundtrip(result)


# -- vercel-ui: data parts by id ----------------------------------------------------------------


def test_vercel_ui_data_parts_are_replaced_by_type_and_id_as_the_sdk_does() -> None:
    chunks = [{"type": "start", "messageId": "m"},
              {"type": "data-weather", "id": "w", "data": {"t": 1}},
              {"type": "data-weather", "id": "v", "data": {"t": 2}},
              {"type": "data-other", "id": "w", "data": "other type, same id"},
              {"type": "data-weather", "data": "no id"},
              {"type": "data-weather", "id": None, "data": "null id: never reconciled"},
              {"type": "data-weather", "id": None, "data": "null id again"},
              {"type": "data-weather", "id": ["w"], "data": "an array id is no string: never equal"},
              {"type": "data-weather", "id": ["w"], "data": "nor is this one"},
              {"type": "data-weather", "id": "w", "data": {"t": 3}},
              {"type": "data-weather", "id": "x", "data": "transient", "transient": True},
              {"type": "finish"}]
    result = tr_fold(_sse(*chunks) + b"data: [DONE]\n\n")
    assert [part["part"] for part in result.native["parts"]] == [
        {"type": "data-weather", "id": "w", "data": {"t": 3}},
        {"type": "data-weather", "id": "v", "data": {"t": 2}},
        {"type": "data-other", "id": "w", "data": "other type, same id"},
        {"type": "data-weather", "data": "no id"},
        {"type": "data-weather", "id": None, "data": "null id: never reconciled"},
        {"type": "data-weather", "id": None, "data": "null id again"},
        {"type": "data-weather", "id": ["w"], "data": "an array id is no string: never equal"},
        {"type": "data-weather", "id": ["w"], "data": "nor is this one"}]
    assert result.complete and not result.diagnostics
    _roundtrip(result)


# -- cohere-v1: many tool indexes ----------------------------------------------------------------


def test_cohere_v1_tool_indexes_keep_their_keys_order_and_positions() -> None:
    def chunk(**delta: Any) -> dict[str, Any]:
        return {"event_type": "tool-calls-chunk", "tool_call_delta": delta}

    data = _lines({"event_type": "stream-start", "generation_id": "g"},
                  chunk(index=3, name="late", parameters='{"a":'), chunk(index=0, name="first", parameters="{}"),
                  chunk(index=3, parameters="1}"), chunk(parameters=""), chunk(name="x", parameters="  "),
                  {"event_type": "tool-calls-generation", "tool_calls": [
                      {"name": "late", "parameters": {"a": 1}}, {"name": "first", "parameters": {"b": 2}}]},
                  {"event_type": "stream-end", "finish_reason": "COMPLETE"})
    result = tr_fold(data)
    calls = result.choices[0].tool_calls
    # Keys in the order they came (3, then 0); a chunk without an index goes to the last key; the whole
    # calls are matched by position: position 1 is key 0, whose streamed `{}` is replaced by {"b": 2}.
    assert [(c.key, c.name, c.parsed) for c in calls] == [(0, "first", {"b": 2}), (3, "late", {"a": 1})]
    assert [(d.code, d.frame, d.details.get("tool_call")) for d in result.diagnostics] == [
        ("tool-call-missing-index", 5, 0), ("done-mismatch", 6, 0)]
    assert result.complete
    _roundtrip(result)


# -- vercel-data: data and annotation parts --------------------------------------------------------


def test_vercel_data_items_are_gathered_as_ai4_gathers_them() -> None:
    lines = ['f:{"messageId":"m"}', '2:[{"status":"a"}]', '8:[{"n":1},{"n":2}]', '0:"hi"', '2:[{"status":"b"}]',
             'h:{"sourceType":"url","id":"s","url":"https://x"}', '8:{"not":"an array"}',
             'd:{"finishReason":"stop","usage":{"promptTokens":1,"completionTokens":1}}']
    result = tr_fold(("\n".join(lines) + "\n").encode())
    assert result.choices[0].content == "hi" and result.complete
    assert result.native == {
        "steps": 1, "data": [{"status": "a"}, {"status": "b"}], "annotations": [{"n": 1}, {"n": 2}, {"not": "an array"}],
        "parts": [["h", {"sourceType": "url", "id": "s", "url": "https://x"}]]}
    (finding,) = result.diagnostics
    assert (finding.code, finding.frame) == ("unexpected-payload", 6)
    assert "kept as one item" in finding.message
    _roundtrip(result, exports=False)  # the data stream has no non-streaming twin to export


# -- Anthropic: huge and sparse block indexes ------------------------------------------------------


_MESSAGE_START = {"type": "message_start", "message": {
    "id": "m", "type": "message", "role": "assistant", "model": "c", "content": [], "stop_reason": None,
    "usage": {"input_tokens": 1, "output_tokens": 1}}}
_MESSAGE_END = [{"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}},
                {"type": "message_stop"}]


def _anthropic(*events: dict[str, Any]) -> bytes:
    every = [_MESSAGE_START, *events, *_MESSAGE_END]
    return _sse(*every, events=[event["type"] for event in every])


def _tool_block(index: int, start: dict[str, Any], partial: str) -> list[dict[str, Any]]:
    return [{"type": "content_block_start", "index": index, "content_block": start},
            {"type": "content_block_delta", "index": index,
             "delta": {"type": "input_json_delta", "partial_json": partial}},
            {"type": "content_block_stop", "index": index}]


def test_anthropic_sparse_and_huge_block_indexes_fold_and_export_in_index_order() -> None:
    huge = 10**9
    data = _anthropic(
        *_tool_block(huge, {"type": "tool_use", "id": "t2", "name": "g", "input": {}}, '{"b": 2}'),
        {"type": "content_block_start", "index": 7, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 7, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 7},
        *_tool_block(5, {"type": "tool_use", "id": "t1", "name": "f", "input": {}, "caller": {"type": "direct"}},
                     '{"a": 1}'),
        *_tool_block(10**6, {"type": "tool_use", "id": "t0", "name": "f", "input": {}}, ""))
    result = tr_fold(data)
    choice = result.choices[0]
    assert [(c.key, c.id, c.name, c.parsed) for c in choice.tool_calls] == [
        (5, "t1", "f", {"a": 1}), (10**6, "t0", "f", {}), (huge, "t2", "g", {"b": 2})]
    assert choice.content == "Hi" and (choice.finish_reason, result.complete) == ("tool_calls", True)
    assert [(b.type, b.index) for b in choice.blocks] == [
        ("tool_call", 5), ("text", 7), ("tool_call", 10**6), ("tool_call", huge)]
    assert result.export()["content"] == [
        {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}, "caller": {"type": "direct"}},
        {"type": "text", "text": "Hi"},
        {"type": "tool_use", "id": "t0", "name": "f", "input": {}},
        {"type": "tool_use", "id": "t2", "name": "g", "input": {"b": 2}}]
    assert not result.diagnostics
    _roundtrip(result)
    # What a block holds: the usual tool_use start is not kept per block (its id and name are the merger's),
    # nor is its block value; a start with more fields is kept as sent.
    folder = _folded(data)
    blocks = folder._dialect._blocks  # type: ignore[union-attr]
    assert blocks[huge].start is TOOL_USE_START and blocks[10**6].start is TOOL_USE_START
    assert blocks[5].start == {"type": "tool_use", "id": "t1", "name": "f", "input": {}, "caller": {"type": "direct"}}
    assert folder._merger.get((0, "block", huge)) is folder._merger.get((0, "block", 10**6))


def test_anthropic_a_start_whose_id_the_merger_refuses_is_kept_as_sent() -> None:
    data = _anthropic(*_tool_block(3, {"type": "tool_use", "id": 42, "name": "f", "input": {}}, "{}"),
                      *_tool_block(4, {"type": "tool_use", "id": "t", "name": "f", "input": {}}, "{}"))
    result = tr_fold(data, max_tool_calls=1)
    assert [(c.key, c.id) for c in result.choices[0].tool_calls] == [(3, None)]
    assert "tool-calls-capped" in _codes(result) and "unexpected-payload" in _codes(result)
    # Block 3's id is not the merger's (refused) and block 4's call was dropped: both starts are as sent.
    assert result.native["content"] == [{"type": "tool_use", "id": 42, "name": "f", "input": 3},
                                        {"type": "tool_use", "id": "t", "name": "f", "input": 4}]
    _roundtrip(result)


def test_gemini_interactions_call_ids_follow_their_calls_when_steps_arrive_out_of_order() -> None:
    # The tool calls are ordered by step index; the ids the export pairs with them were in arrival order.
    def event(name: str, body: str) -> str:
        return f'event: {name}\ndata: {{"event_type":"{name}",{body}}}\n\n'

    data = (event("interaction.created", '"interaction":{"id":"v1_x","status":"in_progress","model":"m"}')
            + event("step.start", '"index":3,"step":{"type":"function_call","id":"call_b","name":"b","arguments":{}}')
            + event("step.start", '"index":1,"step":{"type":"function_call","id":"call_a","name":"a","arguments":{}}')
            + event("step.stop", '"index":3') + event("step.stop", '"index":1')
            + event("interaction.completed", '"interaction":{"id":"v1_x","status":"requires_action","model":"m"}')
            ).encode()
    result = tr_fold(data)
    assert result.dialect == "gemini-interactions"
    assert [call.name for call in result.choices[0].tool_calls] == ["a", "b"]
    assert [(step["name"], step["id"]) for step in result.export()["steps"]] == [("a", "call_a"), ("b", "call_b")]
