"""A vendor's normal shape is noted, not warned about. LM Studio parses tool calls after it has
generated them, so its Responses stream gives a call's arguments whole in
`response.function_call_arguments.done` with no delta: the stream is complete and the openai SDK
reads them (info). A text part that was never streamed stays a warning: the reply was not streamed."""

from __future__ import annotations

import json
from typing import Any

from feeding import tr_fold
from streamfold import Severity


def sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': n})}\n\n"
                   for n, e in enumerate(events)).encode()


def response(status: str) -> dict[str, Any]:
    return {"id": "resp_lms", "object": "response", "model": "qwen3-4b", "status": status, "output": [], "usage": None}


def test_arguments_whole_in_their_done_event_are_an_info_note() -> None:
    call = {"id": "fc_z9", "type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "",
            "status": "in_progress"}
    data = sse({"type": "response.created", "response": response("in_progress")},
               {"type": "response.output_item.added", "output_index": 0, "item": call},
               {"type": "response.function_call_arguments.done", "item_id": "fc_z9", "output_index": 0,
                "arguments": '{"location":"San Francisco"}'},
               {"type": "response.output_item.done", "output_index": 0,
                "item": {**call, "arguments": '{"location":"San Francisco"}', "status": "completed"}},
               {"type": "response.completed", "response": {**response("completed"), "output": [
                   {**call, "arguments": '{"location":"San Francisco"}', "status": "completed"}]}})
    result = tr_fold(data)
    assert [c.parsed for c in result.choices[0].tool_calls] == [{"location": "San Francisco"}]
    assert [(d.code, d.severity) for d in result.diagnostics] == [("done-without-deltas", Severity.INFO)]


def test_a_text_part_only_in_its_done_event_is_still_a_warning() -> None:
    item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
    data = sse({"type": "response.created", "response": response("in_progress")},
               {"type": "response.output_item.added", "output_index": 0, "item": item},
               {"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0,
                "text": "Hello."},
               {"type": "response.completed", "response": response("completed")})
    result = tr_fold(data)
    assert result.choices[0].content == "Hello."
    assert ("done-without-deltas", Severity.WARNING) in [(d.code, d.severity) for d in result.diagnostics]
