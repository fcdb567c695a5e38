"""llama.cpp `/completion`, TGI `generate_stream`, LM Studio `/api/v1/chat` and
Cloudflare Workers AI (reference §4.8; traps F5, B5, B6, B7): each test builds
the smallest stream that shows one rule, trap or diagnostic."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamfold import Folder, Result, TextDelta, fold
from streamfold.dialects import detect, spec_of
from streamfold.dialects.cloudflare import Cloudflare
from streamfold.dialects.llama_cpp import LlamaCpp
from streamfold.dialects.lmstudio import LMStudio
from streamfold.dialects.tgi import TGI

CAPTURES = Path(__file__).resolve().parents[1] / "captures"


def sse(*events: Any, prefix: bytes = b"data: ", named: bool = False, done: bool = False) -> bytes:
    out = b""
    for event in events:
        if named and isinstance(event, dict):
            out += f"event: {event['type']}\n".encode()
        out += prefix + json.dumps(event, ensure_ascii=False).encode() + b"\n\n"
    return out + (b"data: [DONE]\n\n" if done else b"")


def codes(result: Result) -> list[str]:
    return [d.code for d in result.diagnostics]


# -- detection: each claims its own payloads and nobody else's -------------------------

SAMPLES: dict[str, list[Any]] = {
    "llama-cpp": [{"content": "Oslo", "tokens": [46510], "stop": False},
                  {"index": 0, "content": "", "tokens": [], "stop": True, "stop_type": "eos"},
                  {"content": "", "stop": False, "prompt_progress": {"total": 12, "cache": 0, "processed": 6, "time_ms": 8.1}}],
    "tgi": [{"index": 1, "token": {"id": 1, "text": "Oslo", "logprob": -0.3, "special": False}, "generated_text": None, "details": None},
            {"error": "Request failed during generation: Server error: boom", "error_type": "generation"}],
    "lmstudio": [{"type": "chat.start", "model_instance_id": "qwen/qwen3-8b"}, {"type": "message.delta", "content": "x"},
                 {"type": "reasoning.delta", "content": "x"}, {"type": "chat.end", "result": {}}],
    "cloudflare": [{"response": "Hi", "p": "abcdef"}, {"response": "", "usage": {"prompt_tokens": 1, "completion_tokens": 1}}],
}
OTHERS: list[Any] = [
    {"model": "llama3", "created_at": "2026-03-02T10:00:00Z", "response": "Hi", "done": False},  # Ollama /api/generate
    {"model": "llama3", "created_at": "2026-03-02T10:00:00Z", "response": "", "done": True, "done_reason": "stop"},
    {"model": "qwen3", "created_at": "2026-03-02T10:00:00Z", "message": {"role": "assistant", "content": "x"}, "done": False},
    {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "x"}}]},  # OpenAI
    {"object": "text_completion", "choices": [{"text": "x", "index": 0}]},
    {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},  # Responses
    {"type": "message_start", "message": {}}, {"type": "error", "error": {"type": "overloaded_error", "message": "x"}},  # Anthropic
    {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "x"}}}},  # Cohere
    {"candidates": [{"content": {"parts": [{"text": "x"}]}}]},  # Gemini
    {"error": {"code": 500, "message": "x", "type": "server_error"}},  # a generic error envelope
    {"type": ["chat.start"]}, {"token": "x", "generated_text": None}, {"response": 5}, [], "x", None,
]
DIALECT_CLASSES = {"llama-cpp": LlamaCpp, "tgi": TGI, "lmstudio": LMStudio, "cloudflare": Cloudflare}


@pytest.mark.parametrize("name", list(SAMPLES))
def test_each_dialect_claims_its_own_payloads_only(name: str) -> None:
    dialect = DIALECT_CLASSES[name]
    for payload in SAMPLES[name]:
        assert dialect.claims(payload), payload
        found = detect(payload)
        assert found is not None and found.name == name, payload
    for other_name, payloads in SAMPLES.items():
        if other_name != name:
            assert not any(dialect.claims(p) for p in payloads), other_name
    for payload in OTHERS:
        assert not dialect.claims(payload), payload


# -- llama.cpp ------------------------------------------------------------------------


def part(content: str, **extra: Any) -> dict[str, Any]:
    return {"content": content, "tokens": [1], "stop": False, **extra}


def final(**extra: Any) -> dict[str, Any]:
    return {"content": "", "tokens": [], "stop": True, "stop_type": "eos", "stopping_word": "", "tokens_predicted": 4,
            "tokens_evaluated": 12, "tokens_cached": 15, "truncated": False,
            "timings": {"prompt_n": 1, "prompt_ms": 9.1, "predicted_n": 4, "predicted_ms": 61.7}, **extra}


@pytest.mark.parametrize(("stop", "normalised"), [
    ({"stop_type": "eos"}, "stop"), ({"stop_type": "word", "stopping_word": "\n\n"}, "stop"),
    ({"stop_type": "limit"}, "length"), ({"stop_type": "none"}, "other"),
    ({"stop_type": None, "stopped_eos": False, "stopped_word": False, "stopped_limit": True}, "length"),
    ({"stop_type": None, "stopped_eos": True, "stopped_word": False, "stopped_limit": False}, "stop")])
def test_llamacpp_stop_type_and_the_old_stopped_flags(stop: dict[str, Any], normalised: str) -> None:
    choice = fold(sse(part("Hi"), final(**stop))).choices[0]
    assert choice.finish_reason == normalised
    assert choice.finish_reason_raw == (stop["stop_type"] or next(k for k, v in stop.items() if v is True))


def test_llamacpp_usage_from_the_final_event_with_timings_raw() -> None:
    result = fold(sse(part("Hi"), final(model="gemma-3-4b-it", timings={"cache_n": 11, "prompt_n": 1})))
    usage = result.usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens, usage.cache_read_tokens) == (12, 4, 16, 11)
    assert usage.raw["timings"] == {"cache_n": 11, "prompt_n": 1} and result.model == "gemma-3-4b-it"


def test_llamacpp_stop_event_is_terminal_and_a_later_done_is_harmless() -> None:
    result = fold(sse(part("Hi"), final(), done=True))
    assert result.complete and codes(result) == []
    late = fold(sse(part("Hi"), final(), part(" again")))
    assert late.choices[0].content == "Hi" and "frame-after-terminal" in codes(late)


def test_llamacpp_done_without_a_stop_event_is_tolerated() -> None:
    result = fold(sse(part("Hi"), done=True))
    assert result.complete and result.choices[0].finish_reason is None


def test_llamacpp_cut_stream_says_how_it_should_have_ended() -> None:
    result = fold(sse(part("Hi")))
    (finding,) = [d for d in result.diagnostics if d.code == "missing-terminal"]
    assert "`stop: true`" in finding.message and not result.complete


def test_llamacpp_f5_error_field_ends_choice_zero_with_the_error() -> None:
    result = fold(sse(part("Hel"), part("lo")) + b'error: {"code":500,"message":"slot unavailable","type":"server_error"}\n\n')
    choice = result.choices[0]
    assert (choice.content, choice.finish_reason, choice.finish_reason_raw) == ("Hello", "error", None)
    assert [e.code for e in result.errors] == ["in-stream-error"] and not result.complete
    assert "missing-terminal" not in codes(result) and "unknown-field" not in codes(result)


def test_llamacpp_f5_error_field_before_any_data_waits_for_the_dialect() -> None:
    result = fold(b'error: {"code":500,"message":"boom","type":"server_error"}\n\n' + sse(part("x")))
    assert result.dialect == "llama-cpp" and result.choices[0].finish_reason == "error" and not result.complete


def test_llamacpp_data_error_event() -> None:
    result = fold(sse(part("def"), {"error": {"code": 500, "message": "Compute error.", "type": "server_error"}}))
    (error,) = result.errors
    assert "Compute error." in error.message and "(server_error)" in error.message and error.frame == 1
    assert result.choices[0].finish_reason == "error"


def probs(raw: bytes) -> list[dict[str, Any]]:
    return [{"id": 1, "token": raw.decode("utf-8", "replace"), "bytes": list(raw), "logprob": -0.1, "top_logprobs": []}]


def test_llamacpp_b7_text_is_rebuilt_from_bytes_with_per_frame_provenance() -> None:
    pieces = [b"Caf", b"\xc3", b"\xa9 ", b"\xf0\x9f", b"\x98\x80", b"!"]
    events = [part(p.decode("utf-8", "replace"), completion_probabilities=probs(p)) for p in pieces]
    result = fold(sse(*events, final()))
    assert result.choices[0].content == "Café 😀!"
    assert "text-rebuilt-from-bytes" in codes(result)
    # Each character comes from the frame whose bytes completed it.
    assert [result.frame_producing_char(i).index for i in range(7)] == [0, 0, 0, 2, 2, 4, 5]  # type: ignore[union-attr]


def test_llamacpp_b7_without_bytes_keeps_the_text_and_says_so() -> None:
    result = fold(sse(part("Caf"), part("\ufffd"), part("\ufffd"), final()))
    assert result.choices[0].content == "Caf\ufffd\ufffd"
    (finding,) = [d for d in result.diagnostics if d.code == "replacement-char-in-text"]
    assert finding.frame == 1 and "n_probs" in finding.message


def test_llamacpp_b7_one_fragment_without_bytes_is_enough_to_keep_the_text() -> None:
    events = [part("Caf", completion_probabilities=probs(b"Caf")), part("\ufffd", completion_probabilities=probs(b"\xc3")),
              part("\ufffd ok")]
    result = fold(sse(*events, final()))
    assert result.choices[0].content == "Caf\ufffd\ufffd ok" and "replacement-char-in-text" in codes(result)


def test_llamacpp_b7_bytes_that_do_not_spell_the_text_are_not_used() -> None:
    events = [part("Hello", completion_probabilities=probs(b"Bye")), part("\ufffd", completion_probabilities=probs(b"\xc3"))]
    result = fold(sse(*events, final()))
    assert result.choices[0].content == "Hello\ufffd"
    (finding,) = [d for d in result.diagnostics if d.code == "replacement-char-in-text"]
    assert "do not spell" in finding.message


def test_llamacpp_b7_probabilities_repeated_on_the_final_event_are_not_counted_twice() -> None:
    pieces = [b"\xc3", b"\xa9"]
    events = [part("\ufffd", completion_probabilities=probs(p)) for p in pieces]
    everything = probs(b"\xc3") + probs(b"\xa9")
    result = fold(sse(*events, final(completion_probabilities=everything)))
    assert result.choices[0].content == "é"


def test_llamacpp_text_without_replacement_characters_is_never_rebuilt() -> None:
    events = [part("Hello", completion_probabilities=probs(b"Bye"))]
    result = fold(sse(*events, final()))
    assert result.choices[0].content == "Hello" and codes(result) == []


def test_llamacpp_export_is_the_final_object_with_the_whole_content() -> None:
    result = fold((CAPTURES / "llama-cpp" / "completion-example.sse").read_bytes())
    out = result.export()
    assert out["content"] == "Oslo is cold." and out["stop"] is True and out["stop_type"] == "eos"
    assert out["tokens_predicted"] == 4 and out["timings"]["predicted_n"] == 4
    rebuilt = fold((CAPTURES / "llama-cpp" / "b7-split-emoji-rebuilt-from-bytes.sse").read_bytes()).export()
    assert rebuilt["content"] == "It is raining in Bergen 🌧 again."


# -- TGI ----------------------------------------------------------------------------------


def token(text: str, special: bool = False, generated: str | None = None, details: Any = None, index: int = 1) -> dict[str, Any]:
    return {"index": index, "token": {"id": 7, "text": text, "logprob": -0.1, "special": special},
            "generated_text": generated, "details": details, "top_tokens": None}


DETAILS = {"finish_reason": "eos_token", "generated_tokens": 3, "input_length": 9, "seed": None}


def test_tgi_special_tokens_are_not_content_and_not_streamed_as_deltas() -> None:
    data = sse(token("<|im_start|>", special=True), token("Hi"), token("!"),
               token("<|im_end|>", special=True, generated="Hi!", details=DETAILS), prefix=b"data:")
    folder = Folder()
    events = folder.feed(data)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hi", "!"]
    result = folder.close()
    assert result.choices[0].content == "Hi!" and result.complete
    (finding,) = [d for d in result.diagnostics if d.code == "special-token-skipped"]
    assert finding.severity == "info" and finding.frame == 0  # reported once, at the first special token


@pytest.mark.parametrize(("raw", "normalised"), [("eos_token", "stop"), ("stop_sequence", "stop"), ("length", "length")])
def test_tgi_finish_reasons(raw: str, normalised: str) -> None:
    result = fold(sse(token("Hi", generated="Hi", details={**DETAILS, "finish_reason": raw}), prefix=b"data:"))
    assert (result.choices[0].finish_reason, result.choices[0].finish_reason_raw) == (normalised, raw)


def test_tgi_generated_text_replaces_a_join_that_differs() -> None:
    result = fold(sse(token("caf"), token("\ufffd"), token("", generated="café", details=DETAILS), prefix=b"data:"))
    assert result.choices[0].content == "café"
    (finding,) = [d for d in result.diagnostics if d.code == "final-text-mismatch"]
    assert "`generated_text` is kept" in finding.message and finding.details["field"] == "content"
    assert result.frame_producing_char(0).index == 2  # type: ignore[union-attr]


def test_tgi_a_matching_generated_text_changes_nothing() -> None:
    result = fold(sse(token("Oslo"), token(" is cold.", generated="Oslo is cold.", details=DETAILS), prefix=b"data:"))
    assert codes(result) == [] and result.frame_producing_char(5).index == 1  # type: ignore[union-attr]


def test_tgi_the_last_event_is_terminal() -> None:
    result = fold(sse(token("Hi", generated="Hi", details=DETAILS), token(" more"), prefix=b"data:"))
    assert result.choices[0].content == "Hi" and "frame-after-terminal" in codes(result)
    cut = fold(sse(token("Hi"), prefix=b"data:"))
    assert not cut.complete and "missing-terminal" in codes(cut)


def test_tgi_error_event_and_an_error_only_stream() -> None:
    result = fold(sse(token("Once"), {"error": "Request failed during generation: Server error: OOM", "error_type": "generation"},
                      prefix=b"data:"))
    assert result.choices[0].finish_reason == "error" and not result.complete
    assert "(generation)" in result.errors[0].message
    alone = fold(sse({"error": "Input validation error: `inputs` must have less than 4096 tokens", "error_type": "validation"},
                     prefix=b"data:"))
    assert alone.dialect == "tgi" and [e.code for e in alone.errors] == ["in-stream-error"] and not alone.complete


def test_tgi_usage_from_details() -> None:
    usage = fold(sse(token("Hi", generated="Hi", details=DETAILS), prefix=b"data:")).usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (9, 3, 12)


def test_tgi_export_is_the_generate_response() -> None:
    out = fold((CAPTURES / "tgi" / "generate-stream-example.sse").read_bytes()).export()
    assert out["generated_text"] == "Oslo is cold."
    details = out["details"]
    assert (details["finish_reason"], details["generated_tokens"], details["prefill"]) == ("eos_token", 3, [])
    assert [t["text"] for t in details["tokens"]] == ["Oslo", " is cold.", "</s>"]
    plain = fold((CAPTURES / "tgi" / "b6-special-eos-without-details.sse").read_bytes()).export()
    assert plain == {"generated_text": "The capital of Norway is Oslo."}


# -- LM Studio ----------------------------------------------------------------------------


def lms(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


STATS = {"input_tokens": 20, "total_output_tokens": 9, "reasoning_output_tokens": 4, "tokens_per_second": 40.0,
         "time_to_first_token_seconds": 0.2}


def chat_end(*output: dict[str, Any]) -> dict[str, Any]:
    return lms("chat.end", result={"model_instance_id": "qwen/qwen3-8b", "output": list(output), "stats": STATS})


def test_lmstudio_b5_error_is_not_terminal() -> None:
    result = fold(sse(lms("chat.start", model_instance_id="qwen/qwen3-8b"), lms("message.delta", content="Hel"),
                      lms("error", error={"type": "internal_error", "message": "MCP server went away"}),
                      lms("message.delta", content="lo"), chat_end({"type": "message", "content": "Hello"}), named=True))
    choice = result.choices[0]
    assert choice.content == "Hello" and choice.finish_reason == "error" and not result.complete
    (error,) = result.errors
    assert error.frame == 2 and "MCP server went away" in error.message and "chat.end" in error.message
    assert "missing-terminal" not in codes(result) and "final-text-mismatch" not in codes(result)


def test_lmstudio_chat_end_is_authoritative() -> None:
    result = fold(sse(lms("message.delta", content="Hello"), lms("reasoning.delta", content="hmm"),
                      chat_end({"type": "reasoning", "content": "hmm"}, {"type": "message", "content": "Hello there"}),
                      named=True))
    assert result.choices[0].content == "Hello there" and result.choices[0].reasoning == "hmm"
    (finding,) = [d for d in result.diagnostics if d.code == "final-text-mismatch"]
    assert finding.frame == 2 and finding.details == {"field": "content"}


def test_lmstudio_tool_call_arguments_come_whole_and_a_second_copy_replaces() -> None:
    info = {"type": "plugin", "plugin_id": "mcp/playwright"}
    result = fold(sse(lms("tool_call.start", tool="browser_navigate", provider_info=info),
                      lms("tool_call.arguments", tool="browser_navigate", arguments={"url": "https://a.example"}),
                      lms("tool_call.arguments", tool="browser_navigate", arguments={"url": "https://lmstudio.ai"}),
                      lms("tool_call.result", tool="browser_navigate", arguments={"url": "https://lmstudio.ai"}, output="ok"),
                      lms("message.delta", content="Done."), named=True))
    (call,) = result.choices[0].tool_calls
    assert (call.id, call.name, call.arguments) == (None, "browser_navigate", '{"url":"https://lmstudio.ai"}')
    out = result.export()  # no chat.end: rebuilt from the fold
    assert out["output"][0] == {"type": "tool_call", "tool": "browser_navigate", "arguments": {"url": "https://lmstudio.ai"},
                                "provider_info": info, "output": "ok"}
    assert "missing-terminal" in codes(result)


def test_lmstudio_a_tool_call_only_in_chat_end_is_added() -> None:
    result = fold(sse(lms("message.delta", content="Hi"),
                      chat_end({"type": "tool_call", "tool": "model_search", "arguments": {"limit": 1}, "output": "[]"},
                               {"type": "message", "content": "Hi"}), named=True))
    (call,) = result.choices[0].tool_calls
    assert (call.name, call.parsed) == ("model_search", {"limit": 1})
    (finding,) = [d for d in result.diagnostics if d.code == "final-text-mismatch"]
    assert finding.details == {"field": "tool_calls"}


def test_lmstudio_usage_and_export() -> None:
    result = fold((CAPTURES / "lmstudio" / "mcp-tool-call.sse").read_bytes())
    usage = result.usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens, usage.total_tokens) == (329, 268, 5, 597)
    out = result.export()
    assert [item["type"] for item in out["output"]] == ["reasoning", "tool_call", "message"]
    assert out["response_id"] == result.id and out["stats"] == usage.raw


def test_lmstudio_progress_and_markers_are_silent_unknown_types_noted() -> None:
    result = fold(sse(lms("model_load.start", model_instance_id="m"), lms("model_load.progress", progress=0.5),
                      lms("prompt_processing.progress", progress=1.0), lms("message.start"), lms("message.delta", content="x"),
                      lms("message.end"), lms("brand.new"), chat_end({"type": "message", "content": "x"}), named=True))
    assert codes(result) == ["unexpected-payload"] and result.complete


def test_lmstudio_data_after_chat_end_is_listed_not_folded() -> None:
    result = fold(sse(lms("message.delta", content="x"), chat_end({"type": "message", "content": "x"}),
                      lms("message.delta", content="y"), named=True))
    assert result.choices[0].content == "x" and "frame-after-terminal" in codes(result)


# -- Cloudflare Workers AI ----------------------------------------------------------------


def test_cloudflare_padding_is_ignored_and_done_is_terminal() -> None:
    result = fold(sse({"response": "Hel", "p": "abcdefgh"}, {"response": "lo", "p": "ab"}, done=True))
    assert result.choices[0].content == "Hello" and result.complete and codes(result) == []
    assert result.choices[0].finish_reason is None


def test_cloudflare_cut_before_done() -> None:
    result = fold(sse({"response": "Hel", "p": "x"}))
    assert not result.complete and "missing-terminal" in codes(result)


def test_cloudflare_flat_whole_tool_calls_with_object_arguments() -> None:
    result = fold(sse({"response": "", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                                                      {"name": "get_time", "arguments": {"tz": "CET"}}]},
                      {"response": "", "usage": {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320}}, done=True))
    calls = result.choices[0].tool_calls
    assert [(c.name, c.arguments, c.parsed) for c in calls] == [
        ("get_weather", '{"city":"Oslo"}', {"city": "Oslo"}), ("get_time", '{"tz":"CET"}', {"tz": "CET"})]
    usage = result.usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (300, 20, 320)


def test_cloudflare_partial_tool_calls_keyed_by_index_and_the_null_closer_skipped() -> None:
    result = fold((CAPTURES / "cloudflare" / "tool-call-partials.sse").read_bytes())
    (call,) = result.choices[0].tool_calls
    assert call.parsed == {"city": "Oslo"} and codes(result) == []


def test_cloudflare_top_level_finish_reason_and_errors() -> None:
    result = fold(sse({"response": "x", "finish_reason": "length"}, done=True))
    assert result.choices[0].finish_reason == "length"
    failed = fold(sse({"response": "x"}, {"response": "", "errors": [{"code": 3040, "message": "Capacity temporarily exceeded"}]}))
    assert failed.choices[0].finish_reason == "error" and "(3040)" in failed.errors[0].message


def test_cloudflare_export_is_the_rest_envelope() -> None:
    out = fold((CAPTURES / "cloudflare" / "usage-at-end.sse").read_bytes()).export()
    result = fold((CAPTURES / "cloudflare" / "usage-at-end.sse").read_bytes())
    assert out["success"] is True and out["errors"] == [] and out["messages"] == []
    assert out["result"]["response"] == result.choices[0].content
    assert out["result"]["usage"] == result.usage.raw  # type: ignore[union-attr]
    calls = fold((CAPTURES / "cloudflare" / "tool-call-partials.sse").read_bytes())
    exported = calls.export()["result"]["tool_calls"]
    assert [(c["name"], c["arguments"]) for c in exported] == [(c.name, c.parsed) for c in calls.choices[0].tool_calls]
    failed = fold(sse({"response": "x"}, {"response": "", "errors": [{"code": 3040, "message": "Capacity temporarily exceeded"}]}))
    assert failed.export()["success"] is False


@pytest.mark.parametrize("dialect", [LlamaCpp, TGI, LMStudio, Cloudflare])
def test_summaries_never_raise(dialect: Any) -> None:
    for payload in [p for samples in SAMPLES.values() for p in samples] + OTHERS:
        assert isinstance(spec_of(dialect).summary(payload), str)


@pytest.mark.parametrize("name", ["llama-cpp", "tgi", "lmstudio", "cloudflare"])
def test_wrong_shapes_never_raise(name: str) -> None:
    junk = [{"content": 5, "stop": True, "completion_probabilities": [{"bytes": [999]}]}, {"token": [], "generated_text": 3},
            {"type": "tool_call.arguments", "arguments": None}, {"type": "chat.end", "result": {"output": [5, {"type": ["x"]}]}},
            {"response": "", "tool_calls": [5, {"function": "x"}, {"index": "a"}]}, {"error": [1]}, 7, [1]]
    result = fold(sse(*junk), dialect=name)
    assert result.dialect == name
    json.dumps(result.to_dict())


# -- the Result read back from JSON ---------------------------------------------------------------

LOCAL_CAPTURES = sorted(p for name in ("llama-cpp", "tgi", "lmstudio", "cloudflare")
                        for p in (CAPTURES / name).glob("*.sse"))
