"""Responses through gateways that rotate item ids: the terminal `response.output` is matched to
the streamed items by output_index (its place in the list), as the openai SDK's
ResponseStreamState does, and by id or call_id only when no item of its type is at that index.

OpenRouter gives the reasoning item a new id in `response.completed`; GitHub Copilot gives every
event a new id. Matched by id, the reply or the reasoning was folded twice (output-from-terminal).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from feeding import tr_fold

SUMMARY = "**Counting letters**"
TEXT = "There are 3 r's."


def sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"data: {json.dumps({**event, 'sequence_number': seq})}\n\n"
                   for seq, event in enumerate(events)).encode()


def reasoning_item(item_id: str, done: bool) -> dict[str, Any]:
    return {"id": item_id, "type": "reasoning", "summary": [{"type": "summary_text", "text": SUMMARY}] if done else []}


def message_item(item_id: str, done: bool) -> dict[str, Any]:
    content = [{"type": "output_text", "text": TEXT, "annotations": []}] if done else []
    return {"id": item_id, "type": "message", "role": "assistant", "status": "completed" if done else "in_progress",
            "content": content}


def stream(ids: Any, response_ids: Any, at: int = 1) -> bytes:
    """A reasoning item then a message (at output_index `at`), each id drawn from `ids` where a real
    stream names one."""
    def response(status: str, output: list[Any]) -> dict[str, Any]:
        return {"id": next(response_ids), "object": "response", "model": "gpt-5", "status": status, "output": output,
                "usage": {"input_tokens": 5, "output_tokens": 9, "total_tokens": 14} if output else None}
    part = {"type": "output_text", "text": "", "annotations": []}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response("in_progress", [])},
        {"type": "response.output_item.added", "output_index": 0, "item": reasoning_item(next(ids), False)},
        {"type": "response.reasoning_summary_part.added", "item_id": next(ids), "output_index": 0,
         "summary_index": 0, "part": {"type": "summary_text", "text": ""}},
        {"type": "response.reasoning_summary_text.delta", "item_id": next(ids), "output_index": 0,
         "summary_index": 0, "delta": SUMMARY},
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning_item(next(ids), True)},
        {"type": "response.output_item.added", "output_index": at, "item": message_item(next(ids), False)},
        {"type": "response.content_part.added", "item_id": next(ids), "output_index": at, "content_index": 0,
         "part": part},
        *({"type": "response.output_text.delta", "item_id": next(ids), "output_index": at, "content_index": 0,
           "delta": piece} for piece in ("There are ", "3 r's.")),
        {"type": "response.output_text.done", "item_id": next(ids), "output_index": at, "content_index": 0,
         "text": TEXT},
        {"type": "response.output_item.done", "output_index": at, "item": message_item(next(ids), True)},
    ]
    events.append({"type": "response.completed", "response": response(
        "completed", [reasoning_item(next(ids), True), message_item(next(ids), True)])})
    return sse(events)


def assert_folded_once(data: bytes) -> None:
    result = tr_fold(data)
    choice = result.choices[0]
    assert choice.content == TEXT
    assert choice.reasoning == SUMMARY
    assert [block.type for block in choice.blocks] == ["reasoning", "text"]
    assert "output-from-terminal" not in {d.code for d in result.diagnostics}
    assert len(result.export()["output"]) == 2


def test_every_event_with_a_new_item_id_folds_each_item_once() -> None:
    # GitHub Copilot: a fresh id on every event, the response id too.
    ids = (f"id-{n}" for n in itertools.count(3))
    assert_folded_once(stream(ids, (f"id-{n}" for n in itertools.count(100))))


def test_a_reasoning_item_renamed_in_the_terminal_output_is_not_counted_twice() -> None:
    # OpenRouter: the reasoning item's id in `response.completed` is not the streamed one.
    ids = iter(["rs_a", "rs_a", "rs_a", "rs_a", "msg_b", "msg_b", "msg_b", "msg_b", "msg_b", "msg_b",
                "rs_renamed", "msg_b"])
    assert_folded_once(stream(ids, itertools.repeat("resp_1")))


def test_a_skipped_output_index_still_matches_the_items_in_order() -> None:
    # An output_index the stream never used (an empty `.added`): `response.output` has no hole.
    ids = (f"id-{n}" for n in itertools.count(3))
    assert_folded_once(stream(ids, itertools.repeat("resp_1"), at=2))


def test_an_item_the_stream_never_had_is_still_added_from_the_terminal_output() -> None:
    # Matching by place does not swallow a final item of another type: it is found by id or added.
    ids = iter(["rs_a"] * 4 + ["msg_b"] * 6 + ["rs_a", "msg_b"])
    data = stream(ids, itertools.repeat("resp_1"))
    head, _, end = data.rpartition(b"data: ")
    event = json.loads(end)
    call = {"id": "fc_c", "type": "function_call", "call_id": "call_c", "name": "f", "arguments": "{}",
            "status": "completed"}
    event["response"]["output"] = [reasoning_item("rs_a", True), call, message_item("msg_b", True)]
    result = tr_fold(head + b"data: " + json.dumps(event).encode() + b"\n\n")
    choice = result.choices[0]
    assert (choice.content, choice.reasoning) == (TEXT, SUMMARY)
    assert [(call.id, call.name) for call in choice.tool_calls] == [("call_c", "f")]
    assert [d.code for d in result.diagnostics if d.code == "output-from-terminal"] == ["output-from-terminal"]
