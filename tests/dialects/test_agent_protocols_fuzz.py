"""The `mcp` and `ag-ui` dialects never raise on payloads shaped like theirs but wrong in every way
hypothesis finds (a wrong type anywhere, an id that is an object, a patch that is a string, messages
in any order): the fold, its JSON, its export and the frames table's summaries all come out."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamfold
from streamfold.dialects import spec_of

KEYS = ["jsonrpc", "id", "method", "params", "result", "error", "code", "message", "data", "content", "type", "text",
        "isError", "structuredContent", "progressToken", "progress", "total", "level", "messageId", "toolCallId",
        "toolCallName", "parentMessageId", "delta", "role", "threadId", "runId", "outcome", "usage", "snapshot",
        "messages", "stepName", "name", "value", "op", "path", "from", "toolCalls", "function", "arguments",
        "inputTokens", "outputTokens", "event"]
VALUES = ["2.0", "notifications/progress", "notifications/message", "tools/call", "sampling/createMessage", "text",
          "image", "RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
          "TEXT_MESSAGE_END", "TEXT_MESSAGE_CHUNK", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
          "TOOL_CALL_CHUNK", "TOOL_CALL_RESULT", "STATE_SNAPSHOT", "STATE_DELTA", "MESSAGES_SNAPSHOT",
          "REASONING_MESSAGE_CONTENT", "REASONING_START", "STEP_STARTED", "STEP_FINISHED", "assistant", "user",
          "tool", "reasoning", "add", "remove", "replace", "move", "copy", "test", "/", "/a", "/a/-", "/0", "m1",
          "c1", "", "{", '{"a": 1}', "success", "interrupt"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 5), st.sampled_from(VALUES), st.text(max_size=6))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)), max_leaves=30)
messages = st.one_of(st.dictionaries(st.sampled_from(KEYS), values, max_size=7),
                     st.lists(st.dictionaries(st.sampled_from(KEYS), values, max_size=5), max_size=3))


@pytest.mark.parametrize("dialect", ["mcp", "ag-ui"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payloads=st.lists(messages, min_size=1, max_size=10),
       events=st.lists(st.sampled_from([None, None, "message", "error", "other"]), min_size=10, max_size=10),
       ids=st.lists(st.one_of(st.none(), st.text(max_size=4)), min_size=10, max_size=10))
def test_a_wrong_payload_never_raises(dialect: str, payloads: list[Any], events: list[str | None],
                                      ids: list[str | None]) -> None:
    body = "".join((f"event: {event}\n" if event else "") + (f"id: {ident}\n" if ident is not None else "")
                   + f"data: {json.dumps(payload)}\n\n" for payload, event, ident in zip(payloads, events, ids))
    for forced in (dialect, None):
        result = streamfold.fold(body.encode(), dialect=forced)
        json.dumps(result.to_dict())
        if result.dialect == dialect:  # (unforced, the payloads may be no dialect's: `unknown` has no export)
            json.dumps(result.export())
        for payload in payloads:
            assert isinstance(spec_of(dialect).summary(payload), str)
            spec_of(dialect).read_response(payload)
