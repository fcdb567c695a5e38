"""Issue 20 part 3, group A: the repros of openai-responses and ag-ui that raised, bombed or went
quadratic, each now a located finding (or a plain fold) with the rest of the stream folded, the
same however the bytes are fed. Their cost is measured in benchmarks/hostile/hostile_a.py."""

from __future__ import annotations

import json
from typing import Any

import pytest

from feeding import tr_fold
from streamfold import Result
from streamfold.dialects import spec_of
from streamfold.dialects.ag_ui import AGUI
from streamfold.dialects.ag_ui.patch import ALLOWANCE_FLOOR, MAX_STATE_DEPTH, PatchError, State


def _codes(result: Result) -> list[str]:
    return [finding.code for finding in (*result.errors, *result.diagnostics)]


def _strict(result: Result) -> None:
    """Every output is strict JSON, and the Result survives it."""
    encoded = json.dumps(result.to_dict(), allow_nan=False)
    assert Result.from_dict(json.loads(encoded)) == result
    json.dumps(result.export(), allow_nan=False)


# -- openai-responses ----------------------------------------------------------------------


def _responses(*events: dict[str, Any]) -> bytes:
    every = [{"type": "response.created", "response": {"id": "r", "object": "response", "status": "in_progress",
                                                       "model": "m", "output": []}}, *events]
    return b"".join(f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': number})}\n\n".encode()
                    for number, event in enumerate(every))


_SHELL = {"type": "response.output_item.added", "output_index": 1,
          "item": {"type": "shell_call", "id": "sh_1", "call_id": "call_1", "action": {"commands": []}}}
_TEXT = ({"type": "response.output_item.added", "output_index": 0,
          "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}},
         {"type": "response.output_text.delta", "output_index": 0, "item_id": "msg_1", "content_index": 0,
          "delta": "Listing."})


@pytest.mark.parametrize("index", [100_000_000, 4_294_967_295])
def test_a_command_index_far_past_the_list_goes_at_its_end(index: int) -> None:
    # A 300-byte stream with this index made the export pad `action.commands` with that many slots.
    data = _responses(*_TEXT, _SHELL,
                      {"type": "response.shell_call_command.added", "output_index": 1, "command_index": 0,
                       "command": "ls"},
                      {"type": "response.shell_call_command.added", "output_index": 1, "command_index": index,
                       "command": "pw"},
                      {"type": "response.shell_call_command.delta", "output_index": 1, "command_index": index,
                       "delta": "d"})
    result = tr_fold(data)
    (moved,) = [d for d in result.diagnostics if d.code == "unexpected-payload"]
    assert moved.frame == 5 and moved.details == {"output_index": 1, "index": index, "placed": 1}
    assert result.export()["output"][1]["action"] == {"commands": ["ls", "pwd"]}
    assert result.choices[0].content == "Listing."  # the rest folds
    _strict(result)


def test_a_command_index_within_the_gap_leaves_nulls_and_a_taken_place_is_not_shared() -> None:
    data = _responses(_SHELL,
                      {"type": "response.shell_call_command.added", "output_index": 1, "command_index": 2,
                       "command": "b"},
                      {"type": "response.shell_call_command.added", "output_index": 1, "command_index": 1000,
                       "command": "far"},
                      {"type": "response.shell_call_command.added", "output_index": 1, "command_index": 3,
                       "command": "c"})
    result = tr_fold(data)
    # 1000 took position 3; the later index 3 does not write into it but goes at the end.
    assert result.export()["output"][0]["action"]["commands"] == [None, None, "b", "far", "c"]
    assert [d.details["placed"] for d in result.diagnostics if d.code == "unexpected-payload"] == [3, 4]


def test_many_parts_each_replaced_by_a_different_done_keep_their_places() -> None:
    # Interleaved parts whose `.done` differs: each REPLACE waits and the shared buffer is rebuilt once;
    # every part's text and provenance is where one rebuild per `.done` put it.
    events: list[dict[str, Any]] = [_TEXT[0]]
    for part in range(3):
        events.append({"type": "response.output_text.delta", "output_index": 0, "content_index": part,
                       "delta": f"<{part}a>"})
    for part in (1, 0):
        events.append({"type": "response.output_text.done", "output_index": 0, "content_index": part,
                       "text": f"[{part}]"})
    events.append({"type": "response.output_text.delta", "output_index": 0, "content_index": 1, "delta": "+"})
    events.append({"type": "response.output_text.done", "output_index": 0, "content_index": 2, "text": "{2}"})
    result = tr_fold(_responses(*events))
    assert result.choices[0].content == "[0][1]{2}+"
    assert result.text_runs(choice=0, field="content") == [(0, 3, 6), (3, 6, 5), (6, 9, 8), (9, 10, 7)]
    assert _codes(result).count("done-mismatch") == 3


# -- ag-ui ------------------------------------------------------------------------------------

_START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
_FINISH = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
_REPLY = ({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
          {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "Done."},
          {"type": "TEXT_MESSAGE_END", "messageId": "m"})


def _ag_ui(*events: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(event).encode() + b"\n\n" for event in (_START, *events, *_REPLY, _FINISH))


def _delta(*operations: dict[str, Any]) -> dict[str, Any]:
    return {"type": "STATE_DELTA", "delta": list(operations)}


def _values(value: Any) -> int:
    if type(value) is dict:
        return 1 + sum(map(_values, value.values()))
    if type(value) is list:
        return 1 + sum(map(_values, value))
    return 1


def _folded_the_rest(result: Result) -> None:
    assert result.choices[0].content == "Done." and result.complete


def test_a_copy_that_doubles_the_state_stops_at_the_allowance() -> None:
    # 40 copies of the array into itself (3 KB): 2**40 values for a client that applies them all.
    result = tr_fold(_ag_ui({"type": "STATE_SNAPSHOT", "snapshot": {"a": [1, 2, 3, 4]}},
                            *[_delta({"op": "copy", "from": "/a", "path": "/a/-"})] * 40))
    capped = [d for d in result.diagnostics if d.code == "state-capped"]
    assert capped and capped[0].frame == 9  # patches 1-7 applied: 5, 10, ... 640 values copied
    assert "allowance" in capped[0].message
    assert result.native is not None
    assert _values(result.native["state"]) < ALLOWANCE_FLOOR + 4 * 40 + 10
    _folded_the_rest(result)
    _strict(result)


def test_many_small_patches_apply_each_in_place() -> None:
    # 342 KB of `add /results/-` took 37 s when each patch deep-copied the state.
    patches = [_delta({"op": "add", "path": "/results/-", "value": {"title": f"r{i}"}}) for i in range(300)]
    result = tr_fold(_ag_ui({"type": "STATE_SNAPSHOT", "snapshot": {"results": []}}, *patches))
    assert _codes(result) == []
    assert result.export()["state"] == {"results": [{"title": f"r{i}"} for i in range(300)]}


def test_a_member_moved_deeper_at_every_patch_stops_at_the_bound() -> None:
    # Each patch nests /a one level deeper: a RecursionError past ~1,000 patches (150 KB).
    deeper = _delta({"op": "move", "from": "/a", "path": "/b/a"}, {"op": "move", "from": "/b", "path": "/a"},
                    {"op": "add", "path": "/b", "value": {}})
    result = tr_fold(_ag_ui({"type": "STATE_SNAPSHOT", "snapshot": {"a": {}, "b": {}}}, *[deeper] * 300))
    assert "state-capped" in _codes(result)
    _folded_the_rest(result)
    _strict(result)


def test_the_state_nests_no_deeper_than_a_snapshot_can() -> None:
    state = State()
    state.snapshot({})
    path = ""
    for _ in range(MAX_STATE_DEPTH - 1):
        state.patch([{"op": "add", "path": path + "/a", "value": {}}])
        path += "/a"
    with pytest.raises(PatchError, match="nest 256 levels"):
        state.patch([{"op": "add", "path": path + "/a", "value": {}}])
    with pytest.raises(PatchError, match="nest"):
        state.patch([{"op": "copy", "from": "", "path": "/b"}])


@pytest.mark.parametrize("index", ["²", "9" * 5000, "-1", "01"])
def test_an_index_that_is_no_array_index_fails_the_patch(index: str) -> None:
    # "²" passed isdigit() and int() raised ValueError; 5,000 digits are past int()'s limit.
    result = tr_fold(_ag_ui({"type": "STATE_SNAPSHOT", "snapshot": {"a": [1]}},
                            _delta({"op": "add", "path": f"/a/{index}", "value": 2})))
    assert _codes(result) == ["state-patch-failed"] and result.diagnostics[0].frame == 2
    assert result.export()["state"] == {"a": [1]}
    _folded_the_rest(result)


def test_a_failed_patch_leaves_every_member_in_its_place() -> None:
    snapshot = {"a": 1, "b": 2, "c": [1, 2]}
    result = tr_fold(_ag_ui({"type": "STATE_SNAPSHOT", "snapshot": snapshot},
                            _delta({"op": "remove", "path": "/a"}, {"op": "add", "path": "/a", "value": 3},
                                   {"op": "remove", "path": "/c/0"}, {"op": "test", "path": "/b", "value": 3})))
    assert _codes(result) == ["state-patch-failed"]
    assert json.dumps(result.export()["state"]) == json.dumps(snapshot)


def test_a_member_removed_and_added_again_goes_last_as_remove_and_add_do() -> None:
    result = tr_fold(_ag_ui({"type": "STATE_SNAPSHOT", "snapshot": {"a": 1, "b": 2}},
                            _delta({"op": "remove", "path": "/a"}, {"op": "test", "path": "", "value": {"b": 2}},
                                   {"op": "add", "path": "/a", "value": 3})))
    assert _codes(result) == []
    assert list(result.export()["state"].items()) == [("b", 2), ("a", 3)]


def test_a_messages_snapshot_without_role_folds() -> None:
    # The 70-byte stream raised KeyError: 'role' when the messages were built.
    snapshot = {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "m0"}, {"id": "m", "content": "x"}]}
    data = b"data: " + json.dumps({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "1234567"}]}).encode() + b"\n\n"
    assert len(data) == 70
    alone = tr_fold(data)
    assert alone.native == {"messages": [{"id": "1234567"}], "state": None, "events": []}
    (odd,) = [d for d in alone.diagnostics if d.code == "unexpected-payload"]
    assert odd.frame == 0 and odd.details == {"messages": 1}
    result = tr_fold(_ag_ui(snapshot, {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f",
                                       "parentMessageId": "m"}, {"type": "TOOL_CALL_END", "toolCallId": "c"}))
    # The streamed text of "m" joins the reply (its role is the stream's); the call opens a message of its own.
    assert result.choices[0].content == "Done." and [c.id for c in result.choices[0].tool_calls] == ["c"]
    assert spec_of(AGUI).read_response(result.export()) is not None
    _strict(result)


@pytest.mark.parametrize("message", [
    {"id": "a", "role": {"x": 1}, "content": "hi"},
    {"id": "a", "role": "assistant", "toolCalls": [{"id": "c", "function": "not an object"}]},
    {"id": "a", "role": ["assistant"], "toolCalls": 5},
])
def test_reading_back_a_run_with_mistyped_messages_does_not_raise(message: dict[str, Any]) -> None:
    read = spec_of(AGUI).read_response({"threadId": "t", "runId": "r", "messages": [message], "state": None})
    assert read is not None and read["content"] in ("", "hi")
