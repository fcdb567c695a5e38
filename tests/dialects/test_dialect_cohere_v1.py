"""Cohere v1 chat (legacy `/v1/chat`, NDJSON, `event_type`): detection, the merge rules of each event type of the
cohere SDK's `StreamedChatResponse` union, the export (`NonStreamedChatResponse`), and the real recorded stream."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from streamfold import Folder, Result, fold
from streamfold.dialects import detect, spec_of
from streamfold.dialects.cohere_v1 import CohereV1

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "cohere"
REAL = Path(os.environ.get("STREAMFOLD_REALWORLD", "/work/shared/realworld")) / "cases" / "cohere_v1_ndjson_legacy.stream"
START = {"is_finished": False, "event_type": "stream-start", "generation_id": "gen-1"}


def ndjson(*events: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in events)


def text(piece: str) -> dict[str, Any]:
    return {"is_finished": False, "event_type": "text-generation", "text": piece}


def end(finish: str = "COMPLETE", **response: Any) -> dict[str, Any]:
    return {"is_finished": True, "event_type": "stream-end", "finish_reason": finish,
            "response": {"generation_id": "gen-1", **response}}


def chunk(**delta: Any) -> dict[str, Any]:
    return {"is_finished": False, "event_type": "tool-calls-chunk", "tool_call_delta": delta}


def codes(result: Result) -> set[str]:
    return {f.code for f in (*result.errors, *result.diagnostics)}


@pytest.mark.parametrize("kind", ["stream-start", "search-queries-generation", "search-results", "text-generation",
                                  "citation-generation", "tool-calls-generation", "tool-calls-chunk", "stream-end",
                                  "debug"])
def test_claims_every_event_type_of_the_sdk_union(kind: str) -> None:
    assert detect({"event_type": kind, "is_finished": False}) is CohereV1


def test_v2_events_are_not_claimed() -> None:
    assert detect({"type": "content-delta", "index": 0}) is not CohereV1


def test_the_real_recorded_stream_folds_clean_and_agrees_with_its_final_response() -> None:
    if not REAL.exists():
        pytest.skip("the realworld corpus is not on this machine")
    data = REAL.read_bytes()
    result = fold(data)
    assert (result.dialect, result.transport, result.complete) == ("cohere-v1", "ndjson", True)
    assert codes(result) == set()
    final = json.loads(data.splitlines()[-1])["response"]
    assert result.choices[0].content == final["text"]
    assert result.id == final["generation_id"] and result.choices[0].finish_reason == "stop"
    assert result.usage is not None and (result.usage.input_tokens, result.usage.output_tokens) == (69, 116)
    exported = result.export()
    assert exported["text"] == final["text"] and exported["chat_history"] == final["chat_history"]
    assert exported["response_id"] == final["response_id"]


def test_text_appends_and_the_final_text_agrees() -> None:
    result = fold(ndjson(START, text("Hel"), text("lo"), end(text="Hello")))
    assert result.choices[0].content == "Hello" and codes(result) == set()


def test_a_final_text_that_differs_replaces_the_join_and_says_so() -> None:
    result = fold(ndjson(START, text("Hel"), end(text="Hello")))
    assert result.choices[0].content == "Hello"
    (finding,) = [d for d in result.diagnostics if d.code == "final-text-mismatch"]
    assert finding.frame == 2


def test_an_empty_final_text_keeps_the_streamed_one() -> None:
    result = fold(ndjson(START, text("Hi"), end(text="")))
    assert result.choices[0].content == "Hi" and codes(result) == set()


def test_tool_call_chunks_fold_to_a_parsed_call_and_the_plan_is_reasoning() -> None:
    result = fold((CAPTURES / "v1-tool-calls-chunks.ndjson").read_bytes())
    choice = result.choices[0]
    (call,) = choice.tool_calls
    assert (call.name, call.parsed) == ("get_weather", {"city": "Oslo", "unit": "celsius"})
    assert choice.content == "" and choice.reasoning == "I will look up the weather in Oslo."
    exported = result.export()
    assert exported["text"] == "I will look up the weather in Oslo."  # as the non-streaming reply has it
    assert exported["tool_calls"] == [{"name": "get_weather", "parameters": {"city": "Oslo", "unit": "celsius"}}]


def test_whole_tool_calls_fill_calls_that_never_streamed() -> None:
    generation = {"is_finished": False, "event_type": "tool-calls-generation", "text": "Plan.",
                  "tool_calls": [{"name": "a", "parameters": {"x": 1}}, {"name": "b", "parameters": {}}]}
    result = fold(ndjson(START, generation, end(text="Plan.")))
    choice = result.choices[0]
    assert [(c.name, c.parsed) for c in choice.tool_calls] == [("a", {"x": 1}), ("b", {})]
    assert choice.reasoning == "Plan." and choice.content == ""
    assert codes(result) == set()


def test_whole_tool_calls_that_disagree_with_the_chunks_replace_them() -> None:
    generation = {"is_finished": False, "event_type": "tool-calls-generation",
                  "tool_calls": [{"name": "a", "parameters": {"x": 2}}]}
    result = fold(ndjson(START, chunk(index=0, name="a"), chunk(index=0, parameters='{"x": 1}'), generation, end()))
    assert result.choices[0].tool_calls[0].parsed == {"x": 2}
    assert "done-mismatch" in codes(result)


def test_cut_parameters_are_reported_not_silently_empty() -> None:
    result = fold(ndjson(START, chunk(index=0, name="a"), chunk(index=0, parameters='{"x": ')))
    (call,) = result.choices[0].tool_calls
    assert call.error is not None and call.arguments == '{"x": '
    assert {"tool-args-invalid", "missing-terminal"} <= codes(result)


def test_citations_and_search_results_are_exported() -> None:
    result = fold((CAPTURES / "v1-search-citations-final-text.ndjson").read_bytes())
    exported = result.export()
    assert exported["citations"][0]["document_ids"] == ["doc_0"]
    assert exported["search_queries"][0]["text"] == "capital of Norway"
    assert exported["documents"][0]["id"] == "doc_0"
    assert exported["finish_reason"] == "MAX_TOKENS"


@pytest.mark.parametrize(("raw", "normalised"), [("COMPLETE", "stop"), ("MAX_TOKENS", "length"),
                                                  ("ERROR_LIMIT", "length"), ("ERROR_TOXIC", "content_filter")])
def test_finish_reasons(raw: str, normalised: str) -> None:
    choice = fold(ndjson(START, text("x"), end(raw, text="x"))).choices[0]
    assert (choice.finish_reason, choice.finish_reason_raw) == (normalised, raw)


def test_an_error_finish_is_an_in_stream_error_and_keeps_the_text() -> None:
    result = fold(ndjson(START, text("par"), end("ERROR", text="par")))
    assert "in-stream-error" in codes(result) and result.choices[0].content == "par"


def test_an_unknown_event_type_line_is_named_not_folded() -> None:
    result = fold(ndjson(START, text("x"), {"event_type": "hologram", "is_finished": False}, end(text="x")))
    assert result.choices[0].content == "x"
    assert "unexpected-payload" in codes(result)


def test_byte_by_byte_is_the_same() -> None:
    data = (CAPTURES / "v1-tool-calls-chunks.ndjson").read_bytes()
    folder = Folder()
    for i in range(len(data)):
        folder.feed(data[i:i + 1])
    assert folder.close() == fold(data)


@pytest.mark.parametrize(("event", "line"), [
    (text("Hi"), 'text "Hi"'),
    (chunk(index=0, parameters='{"a"'), 'tool-calls-chunk [0] parameters "{\\"a\\""'),
    (chunk(text="Plan"), 'tool-calls-chunk plan "Plan"'),
    (end("COMPLETE"), "stream-end finish COMPLETE"),
])
def test_summary_lines(event: dict[str, Any], line: str) -> None:
    assert spec_of(CohereV1).summary(event) == line
