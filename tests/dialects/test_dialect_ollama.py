"""Ollama dialect rules, traps and diagnostics (reference §4.5, B3, F11).

ollama-python has no stream accumulator (and is not a dependency), so exports are
checked here against the response types of ollama/ollama `api/types.go` at `fb30760`
(the snapshot the reference quotes): `ChatResponse`, `GenerateResponse`, `Message`,
`ToolCall`, `ToolCallFunction`, `Metrics`, `Logprob`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamfold import Result, fold
from streamfold.dialects import detect, spec_of
from streamfold.dialects.ollama import Ollama

CAPTURES = sorted((Path(__file__).resolve().parents[1] / "captures" / "ollama").glob("*.ndjson"))
assert CAPTURES

# api/types.go: JSON names and Go kinds of each response type's fields.
METRICS = {"total_duration": int, "load_duration": int, "prompt_eval_count": int, "prompt_eval_duration": int,
           "eval_count": int, "eval_duration": int}
LOGPROBS = {"logprobs": list}
CHAT_RESPONSE = {"model": str, "remote_model": str, "remote_host": str, "created_at": str, "message": dict,
                 "done": bool, "done_reason": str, "_debug_info": dict, **LOGPROBS, **METRICS}
GENERATE_RESPONSE = {"model": str, "remote_model": str, "remote_host": str, "created_at": str, "response": str,
                     "thinking": str, "done": bool, "done_reason": str, "context": list, "tool_calls": list,
                     "_debug_info": dict, **LOGPROBS, **METRICS}
MESSAGE = {"role": str, "content": str, "thinking": str, "images": list, "tool_calls": list, "tool_name": str,
           "tool_call_id": str}
TOOL_CALL = {"id": str, "function": dict}
TOOL_CALL_FUNCTION = {"index": int, "name": str, "arguments": dict}
# Fields without `omitempty`: always present in what the server marshals.
REQUIRED = {"chat": {"model", "created_at", "message", "done"}, "generate": {"model", "created_at", "response", "done"},
            "message": {"role", "content"}, "function": {"index", "name", "arguments"}}


def check_fields(value: dict[str, Any], fields: dict[str, type], required: set[str], what: str) -> None:
    assert set(value) <= set(fields), f"{what}: fields not in api/types.go: {set(value) - set(fields)}"
    assert required <= set(value), f"{what}: missing {required - set(value)}"
    for name, item in value.items():
        assert type(item) is fields[name], f"{what}.{name} is {type(item).__name__}, not {fields[name].__name__}"


def check_ollama_response(exported: dict[str, Any]) -> None:
    """The exported object has exactly the shape `api.ChatResponse` or `api.GenerateResponse` marshals to."""
    if "message" in exported:
        check_fields(exported, CHAT_RESPONSE, REQUIRED["chat"], "ChatResponse")
        check_fields(exported["message"], MESSAGE, REQUIRED["message"], "Message")
        calls = exported["message"].get("tool_calls", [])
    else:
        check_fields(exported, GENERATE_RESPONSE, REQUIRED["generate"], "GenerateResponse")
        calls = exported.get("tool_calls", [])
    for call in calls:
        check_fields(call, TOOL_CALL, {"function"}, "ToolCall")
        check_fields(call["function"], TOOL_CALL_FUNCTION, REQUIRED["function"], "ToolCallFunction")
    json.dumps(exported)  # plain JSON all the way down


def nd(*lines: Any) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def chat(content: str = "", done: bool = False, **message: Any) -> dict[str, Any]:
    return {"model": "qwen3:8b", "created_at": "2026-03-02T10:00:00.1Z",
            "message": {"role": "assistant", "content": content, **message}, "done": done}


def done(reason: str | None = "stop", **fields: Any) -> dict[str, Any]:
    line = {**chat(done=True), **fields}
    if reason is not None:
        line["done_reason"] = reason
    return line


def generate(response: str = "", done: bool = False, **fields: Any) -> dict[str, Any]:
    return {"model": "llama3.2:3b", "created_at": "2026-03-02T10:00:00.1Z", "response": response, "done": done, **fields}


def tool(name: str, arguments: Any, index: int = 0, id: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"function": {"index": index, "name": name, "arguments": arguments}}
    if id is not None:
        out["id"] = id
    return out


def codes(result: Result) -> list[str]:
    return [d.code for d in result.diagnostics]


# -- every capture's export has the shape of the non-streaming response --------------------


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_exports_have_the_fields_of_api_types_go(path: Path) -> None:
    result = fold(path.read_bytes())
    exported = result.export()
    check_ollama_response(exported)
    assert exported["done"] is result.complete  # these captures end with a done line exactly when complete
    assert exported["model"] == result.model
    text = exported["message"]["content"] if "message" in exported else exported["response"]
    assert text == result.choices[0].content


def test_chat_export_carries_thinking_tool_calls_and_metrics() -> None:
    result = fold((Path(__file__).resolve().parents[1] / "captures" / "ollama" / "b3-chat-thinking-tool-call.ndjson").read_bytes())
    assert result.export() == {
        "model": "qwen3:8b", "created_at": "2026-03-02T10:00:00.455Z",
        "message": {"role": "assistant", "content": "", "thinking": "User asks for weather; I should call get_weather.",
                    "tool_calls": [{"id": "call_k3p0", "function": {"index": 0, "name": "get_weather",
                                                                    "arguments": {"city": "Oslo"}}}]},
        "done": True, "done_reason": "stop", "total_duration": 612004311, "load_duration": 21750098,
        "prompt_eval_count": 188, "prompt_eval_duration": 98102004, "eval_count": 37, "eval_duration": 480011202}


def test_generate_export_carries_context() -> None:
    result = fold((Path(__file__).resolve().parents[1] / "captures" / "ollama" / "generate-stream.ndjson").read_bytes())
    exported = result.export()
    assert exported["response"].startswith("The Great Wall") and exported["done_reason"] == "stop"
    assert exported["context"][:3] == [128006, 9125, 128007] and "message" not in exported


# -- text, reasoning, tool calls -------------------------------------------------------------


def test_chat_content_and_thinking_append() -> None:
    result = fold(nd(chat(thinking="Let me "), chat(thinking="think."), chat("Hi"), chat(" there"), done()))
    choice = result.choices[0]
    assert (choice.role, choice.content, choice.reasoning) == ("assistant", "Hi there", "Let me think.")
    assert [b.type for b in choice.blocks] == ["reasoning", "text"]
    assert result.complete and result.model == "qwen3:8b"


def test_role_comes_from_a_plain_content_line() -> None:
    result = fold(nd(chat("Hi"), chat("!"), done()))
    assert (result.choices[0].role, result.choices[0].content) == ("assistant", "Hi!")


def test_generate_response_and_thinking_append() -> None:
    result = fold(nd(generate(thinking="hm"), generate("Hel"), generate("lo"), generate(done=True, done_reason="stop")))
    assert (result.choices[0].content, result.choices[0].reasoning) == ("Hello", "hm")
    assert "response" in result.export()


def test_tool_calls_are_whole_with_object_arguments_serialised() -> None:
    result = fold(nd(chat(tool_calls=[tool("get_weather", {"city": "Oslo", "unit": "°C"}, 0, "call_a"),
                                      tool("get_time", {}, 1, "call_b")]), done()))
    calls = result.choices[0].tool_calls
    assert [(c.id, c.name, c.arguments, c.parsed) for c in calls] == [
        ("call_a", "get_weather", '{"city":"Oslo","unit":"°C"}', {"city": "Oslo", "unit": "°C"}),
        ("call_b", "get_time", "{}", {})]
    # B3: done_reason stays "stop" when tools were called.
    assert (result.choices[0].finish_reason, result.choices[0].finish_reason_raw) == ("tool_calls", "stop")


def test_a_repeated_call_is_kept_once() -> None:
    same = tool("lookup", {"q": "x"}, 0, "call_a")
    result = fold(nd(chat(tool_calls=[same]), chat(tool_calls=[same]), done()))
    assert len(result.choices[0].tool_calls) == 1
    (finding,) = [d for d in result.diagnostics if d.code == "tool-call-repeated"]
    assert finding.frame == 1 and finding.details["changed"] is False


def test_a_reused_index_with_another_id_is_another_call() -> None:
    result = fold(nd(chat(tool_calls=[tool("read", {"p": "a"}, 0, "call_a")]),
                     chat(tool_calls=[tool("read", {"p": "b"}, 0, "call_b")]), done()))
    assert [c.parsed for c in result.choices[0].tool_calls] == [{"p": "a"}, {"p": "b"}]
    assert "tool-call-repeated" not in codes(result)


def test_without_ids_the_same_index_and_call_is_a_repeat_but_new_arguments_are_a_new_call() -> None:
    result = fold(nd(chat(tool_calls=[tool("read", {"p": "a"})]), chat(tool_calls=[tool("read", {"p": "a"})]),
                     chat(tool_calls=[tool("read", {"p": "b"})]), done()))
    assert [c.parsed for c in result.choices[0].tool_calls] == [{"p": "a"}, {"p": "b"}]
    assert codes(result).count("tool-call-repeated") == 1


def test_the_same_id_with_new_arguments_keeps_the_last_version() -> None:
    result = fold(nd(chat(tool_calls=[tool("f", {"v": 1}, 0, "call_a")]),
                     chat(tool_calls=[tool("f", {"v": 2}, 0, "call_a")]), done()))
    (only,) = result.choices[0].tool_calls
    assert only.parsed == {"v": 2}
    assert [d.details["changed"] for d in result.diagnostics if d.code == "tool-call-repeated"] == [True]


def test_string_arguments_are_taken_as_sent() -> None:
    result = fold(nd(chat(tool_calls=[tool("f", '{"a": 1}')]), done()))
    assert result.choices[0].tool_calls[0].arguments == '{"a": 1}'
    assert result.choices[0].tool_calls[0].parsed == {"a": 1}


def test_generate_tool_calls_at_the_top_level() -> None:
    result = fold(nd(generate(tool_calls=[tool("f", {"a": 1}, 0, "call_x")]), generate(done=True, done_reason="stop")))
    assert result.choices[0].tool_calls[0].parsed == {"a": 1}
    exported = result.export()
    assert exported["tool_calls"][0]["function"]["arguments"] == {"a": 1}
    check_ollama_response(exported)


# -- the done line, finish reasons, usage --------------------------------------------------------


@pytest.mark.parametrize(("raw", "normalised"), [("stop", "stop"), ("length", "length"), ("load", "incomplete"),
                                                 ("unload", "incomplete"), ("weird", "other")])
def test_done_reasons(raw: str, normalised: str) -> None:
    choice = fold(nd(chat("x"), done(raw))).choices[0]
    assert (choice.finish_reason, choice.finish_reason_raw) == (normalised, raw)


def test_a_done_line_without_done_reason_has_no_finish_reason() -> None:
    result = fold(nd(chat("x"), done(None)))
    assert result.complete and result.choices[0].finish_reason is None


def test_the_done_line_is_terminal() -> None:
    result = fold(nd(chat("a"), done(), chat("b")))
    assert result.choices[0].content == "a" and result.complete
    (finding,) = [d for d in result.diagnostics if d.code == "frame-after-terminal"]
    assert finding.frame == 2


def test_usage_comes_from_the_done_line_metrics() -> None:
    result = fold(nd(chat("a"), done(prompt_eval_count=12, eval_count=3, eval_duration=99)))
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.total_tokens) == (12, 3, 15)
    assert result.usage.raw == {"prompt_eval_count": 12, "eval_count": 3, "eval_duration": 99}
    cached = fold(nd(chat("a"), done(eval_count=3)))  # prompt_eval_count left out: the prompt was cached
    assert cached.usage is not None
    assert (cached.usage.input_tokens, cached.usage.output_tokens, cached.usage.total_tokens) == (None, 3, None)
    assert fold(nd(chat("a"), done())).usage is None


def test_logprobs_are_extended_for_export() -> None:
    first = {"token": "Hi", "logprob": -0.01}
    last = {"token": "!", "logprob": -0.3}
    result = fold(nd({**chat("Hi"), "logprobs": [first]}, {**done(), "logprobs": [last]}))
    assert result.export()["logprobs"] == [first, last]


def test_remote_model_and_host_are_kept() -> None:
    line = {**chat("a"), "remote_model": "gpt-oss:120b", "remote_host": "https://ollama.com:443"}
    exported = fold(nd(line, done())).export()
    assert (exported["remote_model"], exported["remote_host"]) == ("gpt-oss:120b", "https://ollama.com:443")
    check_ollama_response(exported)


# -- errors and cut streams ---------------------------------------------------------------------------


def test_an_error_line_is_an_in_stream_error() -> None:
    result = fold(nd(chat("Hel"), {"error": "model runner has unexpectedly stopped"}))
    assert not result.complete
    (error,) = result.errors
    assert error.code == "in-stream-error" and error.frame == 1 and "unexpectedly stopped" in error.message
    assert json.loads(error.raw or "") == {"error": "model runner has unexpectedly stopped"}
    assert (result.choices[0].content, result.choices[0].finish_reason) == ("Hel", "error")
    assert "missing-terminal" not in codes(result)
    assert result.export()["done"] is False


def test_a_cut_stream_is_incomplete() -> None:
    result = fold(nd(chat("Hel"), chat("lo")))
    assert not result.complete and result.choices[0].finish_reason is None
    (finding,) = [d for d in result.diagnostics if d.code == "missing-terminal"]
    assert '"done": true' in finding.message


def test_a_line_cut_in_the_middle_is_invalid_json_and_the_rest_folds() -> None:
    result = fold(nd(chat("Hel")) + b'{"model":"qwen3:8b","message":{"role":"assis')
    assert result.choices[0].content == "Hel"
    assert [e.code for e in result.errors] == ["invalid-json"]
    assert {"missing-terminal", "unterminated-final-frame"} <= set(codes(result))


# -- detection, bad shapes, summaries ------------------------------------------------------------------


def test_detection() -> None:
    assert detect(chat("x")) is Ollama
    assert detect(generate("x")) is Ollama
    assert not Ollama.claims({"response": "x"})  # Cloudflare Workers AI has no `done`
    assert not Ollama.claims({"error": "boom"})
    assert not Ollama.claims({"message": "x", "done": True})


def test_wrong_shapes_are_diagnostics() -> None:
    result = fold(nd(chat("a"), [1, 2], chat("b", tool_calls=["x", {"function": "f"}]), done()), dialect="ollama")
    assert result.choices[0].content == "ab" and result.choices[0].tool_calls == ()
    assert codes(result) == ["unexpected-payload", "unexpected-payload"]


def test_summaries() -> None:
    assert spec_of(Ollama).summary(chat("hi", thinking="t")) == 'thinking "t", content "hi"'
    assert spec_of(Ollama).summary(done(prompt_eval_count=3, eval_count=2)) == "done (stop), eval 3+2 tokens"
    assert spec_of(Ollama).summary(chat(tool_calls=[tool("f", {"a": 1})])) == 'tool f {"a":1}'
    assert spec_of(Ollama).summary({"error": "boom"}) == 'error "boom"'
    assert spec_of(Ollama).summary(chat()) == "(empty line)"


# -- the Result read back from JSON ---------------------------------------------------------------
