"""OpenAI Chat dialect cases not covered by a capture file: each builds the
smallest stream that shows one rule or one diagnostic."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from streamfold import Result, fold

ROOT = Path(__file__).resolve().parents[2]
#: Every capture of the OpenAI chat and legacy completions dialects, and the examples.
CAPTURES = [path for path in sorted((ROOT / "tests" / "captures").rglob("*")) + sorted((ROOT / "examples").glob("*"))
            if path.is_file() and not path.name.endswith((".expect.json", ".md"))
            and fold(path.read_bytes()).dialect in ("openai-chat", "openai-completions")]
assert len(CAPTURES) > 30


def sse(*chunks: Any, done: bool = True) -> bytes:
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return body + (b"data: [DONE]\n\n" if done else b"")


def delta(content: Any = None, index: int = 0, finish: str | None = None, **fields: Any) -> dict[str, Any]:
    d = dict(fields)
    if content is not None:
        d["content"] = content
    return {"object": "chat.completion.chunk", "choices": [{"index": index, "delta": d, "finish_reason": finish}]}


def codes(result: Result) -> list[str]:
    return [d.code for d in result.diagnostics]


def test_refusal_is_kept_apart_from_content() -> None:
    result = fold(sse(delta(refusal="I can't"), delta(refusal=" help with that."), delta(finish="stop")))
    choice = result.choices[0]
    assert (choice.content, choice.refusal) == ("", "I can't help with that.")


def test_legacy_function_call() -> None:
    result = fold(sse(delta(function_call={"name": "lookup", "arguments": '{"q": '}),
                      delta(function_call={"arguments": '"x"}'}), delta(finish="function_call")))
    (call,) = result.choices[0].tool_calls
    assert (call.name, call.parsed) == ("lookup", {"q": "x"})
    assert result.choices[0].finish_reason == "tool_calls"
    assert result.choices[0].finish_reason_raw == "function_call"


def test_finish_reason_conflict_keeps_the_last_and_says_so() -> None:
    result = fold(sse(delta("a", finish="stop"), delta(finish="length")))
    assert result.choices[0].finish_reason == "length"
    (finding,) = [d for d in result.diagnostics if d.code == "finish-reason-conflict"]
    assert finding.frame == 1 and finding.details == {"choice": 0, "previous": "stop", "value": "length"}


def test_content_after_finish_is_folded_and_reported() -> None:
    result = fold(sse(delta("a", finish="stop"), delta("b")))
    assert result.choices[0].content == "ab"
    (finding,) = [d for d in result.diagnostics if d.code == "content-after-finish"]
    assert finding.frame == 1 and finding.details["finish_frame"] == 0


def test_frames_after_done_are_listed_not_folded() -> None:
    result = fold(sse(delta("a")) + sse(delta("b"), done=False))
    assert result.choices[0].content == "a" and result.complete
    (finding,) = [d for d in result.diagnostics if d.code == "frame-after-terminal"]
    assert finding.frame == 2 and finding.details["frames"] == [2]


def test_invalid_utf8_is_replaced_and_located() -> None:
    data = sse(delta("caf\u00e9")).replace("\u00e9".encode(), b"\xe9")
    data = data.replace(b"\\u00e9", b"\xe9")
    result = fold(data)
    (finding,) = [d for d in result.diagnostics if d.code == "invalid-utf8"]
    assert data[finding.offset : finding.offset + 1] == b"\xe9"  # type: ignore[index]
    assert result.choices[0].content == "caf\ufffd"


def test_a_new_id_at_the_same_index_after_complete_arguments_is_a_new_call() -> None:
    # ollama/ollama#15457: index always 0 for several whole calls.
    calls = [{"index": 0, "id": f"call_{p}", "type": "function",
              "function": {"name": "read", "arguments": json.dumps({"path": p})}} for p in "ab"]
    result = fold(sse(delta(tool_calls=[calls[0]]), delta(tool_calls=[calls[1]]), delta(finish="tool_calls")))
    assert [(c.id, c.parsed) for c in result.choices[0].tool_calls] == [("call_a", {"path": "a"}), ("call_b", {"path": "b"})]
    assert "tool-call-identity-changed" in codes(result)


def test_fragments_without_index_or_id_continue_the_open_call() -> None:
    result = fold(sse(delta(tool_calls=[{"id": "call_1", "function": {"name": "f", "arguments": '{"a"'}}]),
                      delta(tool_calls=[{"function": {"arguments": ": 1}"}}]), delta(finish="tool_calls")))
    (call,) = result.choices[0].tool_calls
    assert call.parsed == {"a": 1}
    assert "tool-call-missing-index" in codes(result)


def test_a_missing_tool_index_never_merges_two_named_calls() -> None:
    # SamSaffron/term-llm#314: defaulting the index to 0 merges separate calls.
    result = fold(sse(delta(tool_calls=[{"function": {"name": "f", "arguments": "{}"}},
                                        {"function": {"name": "g", "arguments": '{"x": 1}'}}]), delta(finish="tool_calls")))
    assert [(c.name, c.parsed) for c in result.choices[0].tool_calls] == [("f", {}), ("g", {"x": 1})]


def test_usage_is_replaced_never_summed() -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    result = fold(sse({**delta("a"), "usage": usage}, {**delta("b"), "usage": None},
                      {"object": "chat.completion.chunk", "choices": [], "usage": {**usage, "completion_tokens": 7, "total_tokens": 17}}))
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.total_tokens) == (10, 7, 17)


def test_groq_usage_under_x_groq() -> None:
    result = fold(sse({**delta("a", finish="stop"), "x_groq": {"id": "req_1", "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}}))
    assert result.usage is not None and result.usage.total_tokens == 4


def test_null_content_is_never_the_string_null() -> None:
    result = fold(sse(delta(None, role="assistant"), {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": None}}]}, delta("ok")))
    assert result.choices[0].content == "ok"


def test_wrong_shapes_are_diagnosed_not_raised() -> None:
    result = fold(sse(delta("a"), [1, 2], {"object": "chat.completion.chunk", "choices": {"0": 1}}, delta("b")))
    assert result.choices[0].content == "ab"
    assert codes(result).count("unexpected-payload") == 2


def test_the_native_snapshot_holds_the_envelope_fields_the_result_has_not() -> None:
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o", "created": 1732920327,
            "system_fingerprint": "fp_1", "service_tier": "default"}
    result = fold(sse({**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]},
                      {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    assert result.native == {"created": 1732920327, "system_fingerprint": "fp_1", "service_tier": "default"}
    exported = Result.from_dict(json.loads(json.dumps(result.to_dict()))).export()
    assert (exported["created"], exported["system_fingerprint"], exported["service_tier"]) == (1732920327, "fp_1",
                                                                                                "default")
    bare = fold(sse(delta("Hi", finish="stop")))
    assert bare.native == {"created": None}
    assert "system_fingerprint" not in bare.export() and "service_tier" not in bare.export()
