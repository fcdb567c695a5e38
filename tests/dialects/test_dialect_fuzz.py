"""Every dialect, forced onto random payloads built from every vendor's keys:
bad input is a diagnostic, never an exception (the rule the whole core keeps)."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamfold
from streamfold.dialects import DIALECTS

KEYS = ["type", "object", "choices", "delta", "content", "text", "index", "id", "model", "role", "finish_reason",
        "tool_calls", "function", "name", "arguments", "usage", "error", "message", "candidates", "parts",
        "functionCall", "args", "thought", "finishReason", "usageMetadata", "promptFeedback", "done", "done_reason",
        "response", "thinking", "content_block", "partial_json", "stop_reason", "output_index", "item", "item_id",
        "sequence_number", "contentBlockIndex", "start", "toolUse", "input", "stopReason", "token", "special",
        "generated_text", "details", "stop", "result", "output", "reasoning_content", "citations", "p", "bytes",
        "messageStart", "contentBlockDelta", "output_text", "summary_index", "content_index", "annotation"]
VALUES = ["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
          "message_stop", "response.output_text.delta", "response.completed", "response.function_call_arguments.delta",
          "response.output_item.added", "content-delta", "tool-call-start", "message-end", "chat.completion.chunk",
          "text_completion", "text_delta", "input_json_delta", "tool_use", "text", "thinking", "STOP", "stop",
          "tool_calls", "function_call", "", "null", "[DONE]", "{", '{"a": 1}']

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 5), st.sampled_from(VALUES), st.text(max_size=8))
payloads = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)), max_leaves=25)


def sse(values: list[Any], events: list[str | None]) -> bytes:
    out = []
    for value, event in zip(values, events):
        head = f"event: {event}\n" if event else ""
        out.append(f"{head}data: {json.dumps(value)}\n\n")
    return "".join(out).encode()


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(st.dictionaries(st.sampled_from(KEYS), payloads, max_size=6), min_size=1, max_size=8),
       events=st.lists(st.one_of(st.none(), st.sampled_from(VALUES)), min_size=8, max_size=8),
       done=st.booleans())
def test_a_forced_dialect_never_raises_on_vendor_shaped_garbage(dialect: str, values: list[Any], events: list[str | None],
                                                               done: bool) -> None:
    data = sse(values, events) + (b"data: [DONE]\n\n" if done else b"")
    for transport in ("sse", "ndjson"):
        body = data if transport == "sse" else b"".join(json.dumps(v).encode() + b"\n" for v in values)
        result = streamfold.fold(body, dialect=dialect, transport=transport)
        json.dumps(result.to_dict())
        with contextlib.suppress(NotImplementedError):
            json.dumps(result.export())
        for choice in result.choices:
            for index in range(len(choice.content)):
                assert result.frame_producing_char(index, choice=choice.index) is not None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(st.dictionaries(st.sampled_from(KEYS), payloads, max_size=6), min_size=1, max_size=6))
def test_detection_never_raises_on_vendor_shaped_garbage(values: list[Any]) -> None:
    # Every dialect's `claims` sees every payload during detection: `{"type": []}` once raised there.
    result = streamfold.fold(sse(values, [None] * len(values)))
    json.dumps(result.to_dict())


def test_an_unhashable_type_is_not_claimed() -> None:
    for payload in ({"type": []}, {"type": {}}, {"type": ["message_start"]}):
        assert streamfold.fold(b"data: " + json.dumps(payload).encode() + b"\n\n").dialect == "unknown"
