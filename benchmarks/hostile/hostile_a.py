"""Hostile cases of issue 20 part 3, group A: openai-responses and ag-ui.

  a-responses-command-index  a shell_call_command event whose command_index is N (the export padded a list that long)
  a-responses-new-parts      N output_text deltas, each opening a part (a new content_index scanned the item's parts)
  a-responses-replaced-parts N parts, each with a delta and a `.done` that differs (each rebuilt the shared text)
  a-responses-repeated-done  N parts, then N output_item.done of the item (each scanned all its parts)
  a-ag-ui-copy-doubling      N STATE_DELTAs copying the state's array into itself (the state doubled each time)
  a-ag-ui-append-results     N STATE_DELTAs `add /results/-` (each deep-copied the whole state)
  a-ag-ui-deep-move          N STATE_DELTAs moving a member one level deeper (the state nested past the recursion limit)
  a-ag-ui-tool-calls         N tool calls, start, args and end each (peak memory per input byte)
  a-ag-ui-tool-calls-bare    N tool calls, start and end each, NDJSON with short ids (the densest shape;
                             `max_tool_calls` lifted, so every call is held)

The cases that allocate without bound run under an address-space limit of 2 GiB, so the tree before
the fix fails with MemoryError instead of taking the machine's memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

#: Run a case under a 2 GiB address-space limit (Linux): a memory bomb fails with MemoryError.
BOUNDED = ("import resource\nresource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
           "result = streamfold.fold(data)")
#: The same, with `max_tool_calls` lifted: every call of the input is held (10,000 by default).
UNCAPPED = BOUNDED.replace("fold(data)", "fold(data, max_tool_calls=10**7)")


def _sse(events: list[dict[str, Any]], named: bool = False) -> bytes:
    return b"".join((f"event: {e['type']}\n" if named else "").encode()
                    + b"data: " + json.dumps(e, separators=(",", ":")).encode() + b"\n\n" for e in events)


def _responses(events: list[dict[str, Any]]) -> bytes:
    head = [{"type": "response.created", "response": {"id": "r", "object": "response", "status": "in_progress",
                                                      "model": "m", "output": []}}]
    done = [{"type": "response.completed", "response": {"id": "r", "object": "response", "status": "completed",
                                                         "model": "m", "output": []}}]
    every = head + events + done
    for number, event in enumerate(every):
        event["sequence_number"] = number
    return _sse(every, named=True)


def responses_command_index(n: int) -> bytes:
    return _responses([
        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "shell_call", "id": "sh"}},
        {"type": "response.shell_call_command.added", "output_index": 0, "command_index": n, "command": "ls"}])


_MESSAGE = {"type": "response.output_item.added", "output_index": 0,
            "item": {"type": "message", "id": "m", "role": "assistant", "content": []}}


def _delta(index: int) -> dict[str, Any]:
    return {"type": "response.output_text.delta", "output_index": 0, "item_id": "m", "content_index": index,
            "delta": "a"}


def responses_new_parts(n: int) -> bytes:
    return _responses([dict(_MESSAGE)] + [_delta(i) for i in range(n)])


def responses_replaced_parts(n: int) -> bytes:
    events = [dict(_MESSAGE)]
    for i in range(n):
        events += [_delta(i), {"type": "response.output_text.done", "output_index": 0, "item_id": "m",
                               "content_index": i, "text": "b"}]
    return _responses(events)


def responses_repeated_done(n: int) -> bytes:
    final = {"type": "response.output_item.done", "output_index": 0,
             "item": {"type": "message", "id": "m", "role": "assistant", "content": []}}
    return _responses([dict(_MESSAGE)] + [_delta(i) for i in range(n)] + [dict(final) for _ in range(n)])


_START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
_FINISH = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def ag_ui_copy_doubling(n: int) -> bytes:
    copy = {"type": "STATE_DELTA", "delta": [{"op": "copy", "from": "/a", "path": "/a/-"}]}
    return _sse([_START, {"type": "STATE_SNAPSHOT", "snapshot": {"a": [1, 2, 3, 4]}}] + [copy] * n + [_FINISH])


def ag_ui_append_results(n: int) -> bytes:
    return _sse([_START, {"type": "STATE_SNAPSHOT", "snapshot": {"results": []}}]
                + [{"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/results/-", "value": {"title": f"r{i}"}}]}
                   for i in range(n)] + [_FINISH])


def ag_ui_deep_move(n: int) -> bytes:
    deeper = {"type": "STATE_DELTA", "delta": [{"op": "move", "from": "/a", "path": "/b/a"},
                                               {"op": "move", "from": "/b", "path": "/a"},
                                               {"op": "add", "path": "/b", "value": {}}]}
    return _sse([_START, {"type": "STATE_SNAPSHOT", "snapshot": {"a": {}, "b": {}}}] + [deeper] * n + [_FINISH])


def ag_ui_tool_calls(n: int) -> bytes:
    events = [_START]
    for i in range(n):
        events += [{"type": "TOOL_CALL_START", "toolCallId": f"call_{i}", "toolCallName": "f"},
                   {"type": "TOOL_CALL_ARGS", "toolCallId": f"call_{i}", "delta": "{}"},
                   {"type": "TOOL_CALL_END", "toolCallId": f"call_{i}"}]
    return _sse([*events, _FINISH])


def ag_ui_tool_calls_bare(n: int) -> bytes:
    """The densest shape: NDJSON, short ids, no arguments (110 bytes a call)."""
    events = [_START]
    for i in range(n):
        events += [{"type": "TOOL_CALL_START", "toolCallId": str(i), "toolCallName": "f"},
                   {"type": "TOOL_CALL_END", "toolCallId": str(i)}]
    return b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in [*events, _FINISH])


Case = tuple[Callable[[int], bytes], str, dict[str, list[int]], str]
#: name -> (generator, what a unit is, sizes per scale, how it runs)
CASES: dict[str, Case] = {
    "a-responses-command-index": (responses_command_index, "index", {
        "small": [10**6, 10**8], "default": [10**6, 10**8, 4294967295], "large": [10**6, 10**8, 4294967295]},
        BOUNDED),
    "a-responses-new-parts": (responses_new_parts, "part", {
        "small": [4_000, 32_000], "default": [8_000, 32_000, 128_000], "large": [32_000, 128_000, 512_000]},
        BOUNDED),
    "a-responses-replaced-parts": (responses_replaced_parts, "part", {
        "small": [1_000, 8_000], "default": [2_000, 8_000, 32_000], "large": [8_000, 32_000, 128_000]}, BOUNDED),
    "a-responses-repeated-done": (responses_repeated_done, "part", {
        "small": [2_000, 8_000], "default": [4_000, 16_000, 64_000], "large": [16_000, 64_000, 256_000]}, BOUNDED),
    "a-ag-ui-copy-doubling": (ag_ui_copy_doubling, "patch", {
        "small": [20, 1_000], "default": [20, 1_000, 10_000], "large": [1_000, 10_000, 100_000]}, BOUNDED),
    "a-ag-ui-append-results": (ag_ui_append_results, "patch", {
        "small": [1_000, 4_000], "default": [2_000, 8_000, 32_000], "large": [8_000, 32_000, 128_000]}, BOUNDED),
    "a-ag-ui-deep-move": (ag_ui_deep_move, "patch", {
        "small": [100, 1_000], "default": [1_000, 10_000, 40_000], "large": [10_000, 40_000, 160_000]}, BOUNDED),
    # (Fewer than `max_tool_calls`, 10,000: past it, a call's fragments are dropped.)
    "a-ag-ui-tool-calls": (ag_ui_tool_calls, "call", {
        "small": [2_000, 9_000], "default": [2_000, 9_000], "large": [2_000, 9_000]}, BOUNDED),
    "a-ag-ui-tool-calls-bare": (ag_ui_tool_calls_bare, "call", {
        "small": [9_000, 40_000], "default": [9_000, 40_000, 160_000], "large": [9_000, 40_000, 160_000]},
        UNCAPPED),
}
