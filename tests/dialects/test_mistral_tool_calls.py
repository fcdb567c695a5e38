"""Native Mistral (`api.mistral.ai/v1/chat/completions`) never sends a tool call's `index`: each
call arrives whole in one delta with its id, so keying it by its id is right, and it is noted at
info level, not warned about. A missing index stays a warning where it is really ambiguous: a
fragment with no id, or a call whose arguments come in pieces."""

from __future__ import annotations

import json
from typing import Any

from feeding import tr_fold
from streamfold import Result, Severity


def sse(*chunks: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"id": "1772cc6652d045cea54561b172507402", "object": "chat.completion.chunk", "created": 1724786774,
            "model": "mistral-small-latest",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **extra}


def call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "function": {"name": name, "arguments": arguments}}


def missing_index(result: Result) -> list[tuple[Severity, int]]:
    return [(d.severity, d.details["tool_call"]) for d in result.diagnostics if d.code == "tool-call-missing-index"]


def test_mistral_whole_tool_calls_without_index_are_keyed_by_id_and_not_a_warning() -> None:
    usage = {"prompt_tokens": 96, "total_tokens": 119, "completion_tokens": 23}
    result = tr_fold(sse(
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": None, "tool_calls": [call("qDEcl0n92", "get_weather", '{"city": "San Francisco"}'),
                                               call("Zx81kPq0a", "get_weather", {"city": "Paris"})]},
              "tool_calls", usage=usage)))
    choice = result.choices[0]
    assert [(c.id, c.name, c.parsed) for c in choice.tool_calls] == [
        ("qDEcl0n92", "get_weather", {"city": "San Francisco"}), ("Zx81kPq0a", "get_weather", {"city": "Paris"})]
    assert choice.finish_reason == "tool_calls"
    # Noted once, at info level: the openai SDK's accumulator would still raise on it.
    assert missing_index(result) == [(Severity.INFO, 0)]
    assert [d for d in result.diagnostics if d.severity is not Severity.INFO] == []


def test_a_missing_index_on_a_fragment_without_id_is_still_a_warning() -> None:
    result = tr_fold(sse(chunk({"tool_calls": [call("call_1", "f", '{"a"')]}),
                         chunk({"tool_calls": [{"function": {"arguments": ": 1}"}}]}, "tool_calls")))
    (tool,) = result.choices[0].tool_calls
    assert tool.parsed == {"a": 1}
    assert missing_index(result) == [(Severity.WARNING, 0)]


def test_a_call_streamed_in_pieces_without_index_is_a_warning_even_with_its_id() -> None:
    result = tr_fold(sse(chunk({"tool_calls": [call("call_1", "f", '{"a": ')]}),
                         chunk({"tool_calls": [call("call_1", "f", "1}")]}, "tool_calls")))
    assert [c.parsed for c in result.choices[0].tool_calls] == [{"a": 1}]
    assert missing_index(result) == [(Severity.WARNING, 0)]
