"""Gemini dialect rules, traps and diagnostics, each on the smallest stream that shows it.

Reference §4.4 and traps G1-G8, O9, U1, F6, F9; the captures in captures/gemini/ hold the
realistic versions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamfold import Folder, Result, fold
from streamfold.dialects import detect, spec_of
from streamfold.dialects.gemini import Gemini
from values import assert_a_value

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "gemini"


def sse(*chunks: Any) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)


def array(*chunks: Any) -> bytes:
    return ("[" + ",\r\n".join(json.dumps(c, indent=2) for c in chunks) + "]").encode()


def chunk(*parts: Any, finish: str | None = None, index: int | None = None, usage: Any = None,
          **candidate_fields: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, **candidate_fields}
    if finish:
        candidate["finishReason"] = finish
    if index is not None:
        candidate["index"] = index
    out: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-2.5-flash", "responseId": "r1"}
    if usage is not None:
        out["usageMetadata"] = usage
    return out


def text(value: str, **fields: Any) -> dict[str, Any]:
    return {"text": value, **fields}


def call(name: str, args: Any = None, **fields: Any) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name, **fields}
    if args is not None:
        function["args"] = args
    return {"functionCall": function}


def codes(result: Result) -> list[str]:
    return [d.code for d in result.diagnostics]


def summary(result: Result) -> dict[str, Any]:
    """What must not depend on the transport."""
    data = result.to_dict()
    return {"complete": data["complete"], "model": data["model"], "id": data["id"], "usage": data["usage"],
            "choices": [{k: v for k, v in c.items() if k != "blocks"} for c in data["choices"]],
            "blocks": [[(b["type"], b["index"]) for b in c["blocks"]] for c in data["choices"]],
            "errors": [e["code"] for e in data["errors"]], "diagnostics": [d["code"] for d in data["diagnostics"]]}


# -- transports and identity ---------------------------------------------------------


def test_sse_and_json_array_of_the_same_reply_fold_identically() -> None:
    ours = fold((CAPTURES / "g4-o9-weather-thought-call.sse").read_bytes())
    theirs = fold((CAPTURES / "f9-weather-thought-call-array.json").read_bytes())
    assert (ours.transport, theirs.transport) == ("sse", "json-array")
    assert ours.dialect == theirs.dialect == "gemini"
    assert summary(ours) == summary(theirs)
    assert ours.export() == theirs.export()


def test_a_json_array_split_anywhere_folds_the_same() -> None:
    data = (CAPTURES / "f9-weather-thought-call-array.json").read_bytes()
    whole = fold(data)
    for size in (1, 7, 64):
        folder = Folder()
        for start in range(0, len(data), size):
            folder.feed(data[start:start + size])
        assert folder.close() == whole


def test_absent_candidate_index_is_zero_and_given_indexes_are_kept() -> None:
    result = fold(sse(chunk(text("a")), chunk(text("b"), index=2), chunk(text("c"), finish="STOP"),
                      chunk(finish="STOP", index=2)))
    assert [(c.index, c.content) for c in result.choices] == [(0, "ac"), (2, "b")]
    assert result.export()["candidates"][1]["index"] == 2


def test_model_version_and_response_id_are_model_and_id() -> None:
    result = fold(sse({"candidates": [{"content": {"parts": [text("hi")]}, "finishReason": "STOP"}],
                       "modelVersion": "gemini-2.0-flash-001", "responseId": "AbCd"}))
    assert (result.model, result.id) == ("gemini-2.0-flash-001", "AbCd")
    assert result.choices[0].role is None  # no role was sent; the export says "model"
    assert result.export()["candidates"][0]["content"]["role"] == "model"


def test_detection() -> None:
    assert detect({"candidates": []}) is Gemini
    assert detect({"usageMetadata": {"promptTokenCount": 3}}) is Gemini
    assert detect({"promptFeedback": {"blockReason": "SAFETY"}}) is Gemini
    assert detect({"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}}) is Gemini
    assert not Gemini.claims({"object": "chat.completion.chunk", "choices": []})
    assert not Gemini.claims({"error": {"message": "x", "type": "server_error"}})
    assert not Gemini.claims([{"candidates": []}])


# -- parts ----------------------------------------------------------------------------


def test_text_and_thought_parts_append_to_content_and_reasoning_as_blocks() -> None:
    result = fold(sse(chunk(text("Plan: ", thought=True)), chunk(text("look it up.", thought=True)),
                      chunk(text("Hello")), chunk(text(", world"), text("!")), chunk(finish="STOP")))
    choice = result.choices[0]
    assert (choice.content, choice.reasoning) == ("Hello, world!", "Plan: look it up.")
    assert [(b.type, b.index, b.frames) for b in choice.blocks] == [("reasoning", 0, (0, 1)), ("text", 1, (2, 3))]
    parts = result.export()["candidates"][0]["content"]["parts"]
    assert parts == [{"text": "Plan: look it up.", "thought": True}, {"text": "Hello, world!"}]
    frame = result.frame_producing_char(7, field="content")
    assert frame is not None and frame.index == 3


def test_empty_and_null_texts_change_nothing() -> None:
    result = fold(sse(chunk(text(""), text("a")), chunk({"text": None}), chunk(text("b"), finish="STOP")))
    assert result.choices[0].content == "ab"
    assert result.choices[0].reasoning is None


def test_function_calls_are_whole_one_part_one_call() -> None:
    result = fold(sse(chunk(call("get_weather", {"city": "Oslo"}), call("get_weather", {"city": "Bergen"})),
                      chunk(call("get_time"), finish="STOP")))
    calls = result.choices[0].tool_calls
    assert [(c.index, c.name, c.arguments, c.parsed) for c in calls] == [
        (0, "get_weather", '{"city":"Oslo"}', {"city": "Oslo"}),
        (1, "get_weather", '{"city":"Bergen"}', {"city": "Bergen"}),
        (2, "get_time", "", {})]
    assert [b.type for b in result.choices[0].blocks] == ["tool_call"] * 3
    assert result.choices[0].finish_reason == "tool_calls"


def test_a_repeated_call_with_the_same_id_is_kept_once() -> None:
    same = call("lookup", {"q": "x"}, id="c1")
    result = fold(sse(chunk(same), chunk(same), chunk(finish="STOP")))
    (only,) = result.choices[0].tool_calls
    assert (only.id, only.arguments) == ("c1", '{"q":"x"}')
    (finding,) = [d for d in result.diagnostics if d.code == "tool-call-repeated"]
    assert finding.frame == 1 and finding.details == {"choice": 0, "tool_call": 0, "changed": False}


def test_a_repeated_call_without_ids_is_kept_once_but_different_args_are_another_call() -> None:
    result = fold(sse(chunk(call("lookup", {"q": "x"})), chunk(call("lookup", {"q": "x"})),
                      chunk(call("lookup", {"q": "y"})), chunk(finish="STOP")))
    assert [c.parsed for c in result.choices[0].tool_calls] == [{"q": "x"}, {"q": "y"}]
    assert codes(result).count("tool-call-repeated") == 1


def test_a_call_resent_with_the_same_id_and_new_args_keeps_the_last_version() -> None:
    result = fold(sse(chunk(call("lookup", {"q": "draft"}, id="c1")), chunk(call("lookup", {"q": "final"}, id="c1")),
                      chunk(finish="STOP")))
    (only,) = result.choices[0].tool_calls
    assert (only.arguments, only.parsed) == ('{"q":"final"}', {"q": "final"})
    frame = result.frame_producing_char(0, field="tool:0")
    assert frame is not None and frame.index == 1
    (finding,) = [d for d in result.diagnostics if d.code == "tool-call-repeated"]
    assert finding.details["changed"] is True
    assert result.export()["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"id": "c1", "name": "lookup", "args": {"q": "final"}}}]


def test_whole_parts_are_kept_as_explicit_blocks_for_export() -> None:
    code = {"executableCode": {"language": "PYTHON", "code": "print(2**10)"}}
    outcome = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1024\n"}}
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    result = fold(sse(chunk(text("Let me compute it.")), chunk(code), chunk(outcome), chunk(text("It is 1024.")),
                      chunk(image, finish="STOP")))
    choice = result.choices[0]
    assert choice.content == "Let me compute it.It is 1024."
    assert [b.type for b in choice.blocks] == ["text", "executable_code", "code_execution_result", "text", "inline_data"]
    parts = result.export()["candidates"][0]["content"]["parts"]
    assert parts == [{"text": "Let me compute it."}, code, outcome, {"text": "It is 1024."}, image]


# -- thought signatures (G5) -------------------------------------------------------------


def test_thought_signatures_stay_with_the_part_they_rode_on() -> None:
    result = fold(sse(chunk(text("thinking", thought=True)),
                      chunk({**call("f", {"a": 1}), "thoughtSignature": "U0lHMQ=="}),
                      chunk(text("done")), chunk(text("", thoughtSignature="U0lHMg=="), finish="STOP")))
    parts = result.export()["candidates"][0]["content"]["parts"]
    assert parts == [{"text": "thinking", "thought": True},
                     {"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "U0lHMQ=="},
                     {"text": "done", "thoughtSignature": "U0lHMg=="}]


def test_a_signature_on_an_empty_part_after_a_call_is_its_own_part() -> None:
    result = fold(sse(chunk(call("f", {})), chunk({"text": "", "thoughtSignature": "U0lH"}, finish="STOP")))
    parts = result.export()["candidates"][0]["content"]["parts"]
    assert parts[1] == {"text": "", "thoughtSignature": "U0lH"}
    assert result.choices[0].content == ""


def test_two_differently_signed_text_runs_stay_two_parts() -> None:
    result = fold(sse(chunk(text("a", thoughtSignature="QQ==")), chunk(text("b", thoughtSignature="Qg==")),
                      chunk(finish="STOP")))
    assert result.export()["candidates"][0]["content"]["parts"] == [
        {"text": "a", "thoughtSignature": "QQ=="}, {"text": "b", "thoughtSignature": "Qg=="}]


# -- usage (G1) and finish reasons -----------------------------------------------------------


def test_cumulative_usage_is_replaced_never_summed() -> None:
    def usage(n: int) -> dict[str, int]:
        return {"promptTokenCount": 10, "candidatesTokenCount": n, "totalTokenCount": 10 + n}
    result = fold(sse(chunk(text("a"), usage=usage(1)), chunk(text("b"), usage=usage(2)),
                      chunk(text("c"), finish="STOP", usage=usage(3))))
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.total_tokens) == (10, 3, 13)
    assert result.usage.raw == usage(3)


def test_usage_normalisation() -> None:
    raw = {"promptTokenCount": 100, "cachedContentTokenCount": 60, "candidatesTokenCount": 20,
           "thoughtsTokenCount": 30, "toolUsePromptTokenCount": 5, "totalTokenCount": 155}
    result = fold(sse(chunk(text("x"), finish="STOP", usage=raw)))
    assert result.usage is not None
    assert result.usage.to_dict() == {"input_tokens": 105, "output_tokens": 50, "reasoning_tokens": 30,
                                      "cache_read_tokens": 60, "total_tokens": 155, "raw": raw}
    only_prompt = fold(sse(chunk(text("x"), usage={"promptTokenCount": 7})))
    assert only_prompt.usage is not None
    assert (only_prompt.usage.output_tokens, only_prompt.usage.total_tokens) == (None, None)


@pytest.mark.parametrize(("raw", "normalised"), [
    ("STOP", "stop"), ("MAX_TOKENS", "length"), ("SAFETY", "content_filter"), ("RECITATION", "content_filter"),
    ("BLOCKLIST", "content_filter"), ("PROHIBITED_CONTENT", "content_filter"), ("SPII", "content_filter"),
    ("IMAGE_SAFETY", "content_filter"), ("IMAGE_OTHER", "content_filter"), ("MALFORMED_FUNCTION_CALL", "incomplete"),
    ("OTHER", "incomplete"), ("CONTINUATION", "incomplete"), ("FINISH_REASON_UNSPECIFIED", "other")])
def test_finish_reasons_are_normalised(raw: str, normalised: str) -> None:
    choice = fold(sse(chunk(text("x"), finish=raw))).choices[0]
    assert (choice.finish_reason, choice.finish_reason_raw) == (normalised, raw)


def test_stop_after_a_call_in_another_chunk_is_tool_calls_and_the_reply_is_over() -> None:
    folder = Folder()
    folder.feed(sse(chunk(call("f", {"x": 1}))))
    folder.feed(sse(chunk(text(""), finish="STOP")))
    # G4: a trailing chunk after the finish still folds.
    folder.feed(sse({"usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2, "totalTokenCount": 6},
                     "modelVersion": "gemini-2.5-flash"}))
    result = folder.close()
    assert result.complete
    assert result.choices[0].finish_reason == "tool_calls"
    assert result.usage is not None and result.usage.total_tokens == 6
    assert "missing-terminal" not in codes(result) and "frame-after-terminal" not in codes(result)


def test_no_finish_reason_means_the_stream_was_cut() -> None:
    result = fold(sse(chunk(text("Once upon"))))
    assert not result.complete
    (finding,) = [d for d in result.diagnostics if d.code == "missing-terminal"]
    assert "finishReason" in finding.message


def test_the_reply_is_over_only_when_every_candidate_finished() -> None:
    result = fold(sse(chunk(text("a")), chunk(text("b"), index=1), chunk(finish="STOP")))
    assert not result.complete
    done = fold(sse(chunk(text("a")), chunk(text("b"), index=1), chunk(finish="STOP"), chunk(finish="STOP", index=1)))
    assert done.complete


def test_finish_reason_conflict_and_content_after_finish() -> None:
    result = fold(sse(chunk(text("a"), finish="STOP"), chunk(text("b"), finish="MAX_TOKENS")))
    choice = result.choices[0]
    assert (choice.content, choice.finish_reason) == ("ab", "length")
    assert {"finish-reason-conflict", "content-after-finish"} <= set(codes(result))


def test_continuation_is_incomplete_and_a_next_hop_is_not_content_after_finish() -> None:
    hop = sse(chunk(text("part one"), finish="CONTINUATION", continuationToken="dG9rZW4="))
    one = fold(hop)
    assert one.complete and one.choices[0].finish_reason == "incomplete"
    assert "reply-continues" in codes(one)
    assert one.export()["candidates"][0]["continuationToken"] == "dG9rZW4="
    both = fold(hop + sse(chunk(text(", part two"), finish="STOP")))
    assert both.choices[0].content == "part one, part two"
    assert both.choices[0].finish_reason == "stop"
    assert not {"content-after-finish", "finish-reason-conflict"} & set(codes(both))


# -- blocked prompts (G7) and errors ------------------------------------------------------------


def test_a_blocked_prompt_finishes_choice_zero_as_content_filter() -> None:
    feedback = {"blockReason": "OTHER", "blockReasonMessage": "The prompt was blocked."}
    result = fold(sse({"promptFeedback": feedback, "modelVersion": "gemini-2.5-flash",
                       "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9}}))
    (choice,) = result.choices
    # OTHER as a finishReason is `incomplete`; as a blockReason it is a content filter.
    assert (choice.finish_reason, choice.finish_reason_raw, choice.content) == ("content_filter", "OTHER", "")
    assert result.complete
    (finding,) = [d for d in result.diagnostics if d.code == "prompt-blocked"]
    assert finding.details == {"reason": "OTHER"} and "The prompt was blocked." in finding.message
    exported = result.export()
    assert "candidates" not in exported and exported["promptFeedback"] == feedback


def test_prompt_feedback_without_a_block_is_only_kept() -> None:
    result = fold(sse({**chunk(text("ok"), finish="STOP"), "promptFeedback": {"safetyRatings": []}}))
    assert result.choices[0].finish_reason == "stop" and "prompt-blocked" not in codes(result)


@pytest.mark.parametrize("body", [
    sse(chunk(text("Hel")), {"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}}),
    array(chunk(text("Hel")), {"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}}),
])
def test_an_error_element_fails_the_unfinished_candidates(body: bytes) -> None:
    result = fold(body)
    assert not result.complete
    (error,) = result.errors
    assert error.code == "in-stream-error" and error.frame == 1 and "(500 INTERNAL)" in error.message
    assert json.loads(error.raw or "") == {"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}}
    assert (result.choices[0].content, result.choices[0].finish_reason) == ("Hel", "error")
    assert "missing-terminal" not in codes(result)


def test_raw_error_json_without_data_lines_in_sse_is_an_error() -> None:
    body = sse(chunk(text("Hel"))) + b'{\n  "error": {\n    "code": 429,\n    "message": "Quota exceeded",\n' \
        b'    "status": "RESOURCE_EXHAUSTED"\n  }\n}\n\n'
    result = fold(body)
    (error,) = result.errors
    assert error.frame == 1 and "Quota exceeded" in error.message and "without `data:`" in error.message
    assert result.choices[0].finish_reason == "error" and not result.complete


def test_a_whole_error_body_is_detected_as_gemini() -> None:
    result = fold(b'{\n  "error": {\n    "code": 400,\n    "message": "API key not valid.",\n'
                  b'    "status": "INVALID_ARGUMENT"\n  }\n}\n')
    assert result.dialect == "gemini" and [e.code for e in result.errors] == ["in-stream-error"]


# -- citations (G6) and other candidate fields ------------------------------------------------


def test_citation_sources_and_citations_are_both_read_and_deduped() -> None:
    a = {"startIndex": 0, "endIndex": 10, "uri": "https://a.example"}
    b = {"startIndex": 11, "endIndex": 20, "uri": "https://b.example"}
    api = fold(sse(chunk(text("x"), citationMetadata={"citationSources": [a]}),
                   chunk(text("y"), finish="STOP", citationMetadata={"citationSources": [a, b]})))
    assert api.export()["candidates"][0]["citationMetadata"] == {"citationSources": [a, b]}
    vertex = fold(sse(chunk(text("x"), finish="STOP", citationMetadata={"citations": [{**b, "title": "B"}]})))
    assert vertex.export()["candidates"][0]["citationMetadata"] == {"citations": [{**b, "title": "B"}]}


def test_replace_and_extend_candidate_fields_for_export() -> None:
    first = [{"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"}]
    last = [{"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "LOW"}]
    token = {"token": "a", "logProbability": -0.1}
    result = fold(sse(chunk(text("a"), safetyRatings=first, logprobsResult={"chosenCandidates": [token]}),
                      chunk(text("b"), finish="STOP", safetyRatings=last, finishMessage="done", avgLogprobs=-0.2,
                            logprobsResult={"chosenCandidates": [token]})))
    candidate = result.export()["candidates"][0]
    assert candidate["safetyRatings"] == last and candidate["finishMessage"] == "done"
    assert candidate["avgLogprobs"] == -0.2
    assert candidate["logprobsResult"]["chosenCandidates"] == [token, token]


# -- Vertex streamed function-call arguments ----------------------------------------------------


def partial(*fragments: dict[str, Any], more: bool = True, **fields: Any) -> dict[str, Any]:
    function: dict[str, Any] = {**fields, "partialArgs": list(fragments)}
    if more:
        function["willContinue"] = True
    return {"functionCall": function}


def test_partial_args_are_assembled_into_one_call() -> None:
    result = fold(sse(
        chunk({"functionCall": {"name": "book", "willContinue": True}, "thoughtSignature": "U0lH"}),
        chunk(partial({"jsonPath": "$.who.name", "stringValue": "Ada ", "willContinue": True})),
        chunk(partial({"jsonPath": "$.who.name", "stringValue": "Lovelace"}, {"jsonPath": "$.seats", "numberValue": 2})),
        chunk(partial({"jsonPath": "$.tags[1]", "stringValue": "b"}, {"jsonPath": "$.tags[0]", "stringValue": "a"},
                      {"jsonPath": "$['vip guest']", "boolValue": False}, {"jsonPath": "$.note", "nullValue": "NULL_VALUE"},
                      more=False)),
        chunk(finish="STOP")))
    (only,) = result.choices[0].tool_calls
    assert only.name == "book"
    assert only.parsed == {"who": {"name": "Ada Lovelace"}, "seats": 2, "tags": ["a", "b"], "vip guest": False,
                           "note": None}
    assert [b.frames for b in result.choices[0].blocks] == [(0, 3)]
    assert result.choices[0].finish_reason == "tool_calls"
    part = result.export()["candidates"][0]["content"]["parts"][0]
    assert part == {"functionCall": {"name": "book", "args": only.parsed}, "thoughtSignature": "U0lH"}
    assert codes(result) == []


def test_a_string_without_will_continue_before_it_replaces() -> None:
    result = fold(sse(chunk({"functionCall": {"name": "f", "willContinue": True}}),
                      chunk(partial({"jsonPath": "$.a", "stringValue": "one"})),
                      chunk(partial({"jsonPath": "$.a", "stringValue": "two"}, more=False)), chunk(finish="STOP")))
    assert result.choices[0].tool_calls[0].parsed == {"a": "two"}


def test_a_streamed_call_that_never_finishes_is_closed_and_reported() -> None:
    result = fold(sse(chunk({"functionCall": {"name": "f", "willContinue": True}}),
                      chunk(partial({"jsonPath": "$.a", "stringValue": "par", "willContinue": True}))))
    assert result.choices[0].tool_calls[0].parsed == {"a": "par"}
    assert "streamed-call-unfinished" in codes(result)


def test_a_new_named_call_closes_an_open_streamed_call() -> None:
    result = fold(sse(chunk({"functionCall": {"name": "f", "willContinue": True}}),
                      chunk(partial({"jsonPath": "$.a", "numberValue": 1})),
                      chunk(call("g", {"b": 2})), chunk(finish="STOP")))
    assert [(c.name, c.parsed) for c in result.choices[0].tool_calls] == [("f", {"a": 1}), ("g", {"b": 2})]
    assert "streamed-call-unfinished" in codes(result)


def test_a_bad_json_path_is_reported_and_skipped() -> None:
    result = fold(sse(chunk({"functionCall": {"name": "f", "willContinue": True}}),
                      chunk(partial({"jsonPath": "$..x", "stringValue": "v"}, {"jsonPath": "$.y", "numberValue": 3},
                                    more=False)), chunk(finish="STOP")))
    assert result.choices[0].tool_calls[0].parsed == {"y": 3}
    assert "unexpected-payload" in codes(result)


# -- bad input never raises ------------------------------------------------------------------------


def test_wrong_shapes_are_diagnostics() -> None:
    result = fold(sse(chunk(text("a")), {"candidates": {"0": 1}}, chunk({"functionCall": "f"}), chunk({"functionCall": {}}),
                      {"candidates": ["x", {"index": "1", "content": {"parts": "no"}}]}, chunk(text("b"), finish="STOP")),
                  dialect="gemini")
    assert result.choices[0].content == "ab"
    assert codes(result).count("unexpected-payload") == 3
    assert fold(b"data: 42\n\n", dialect="gemini").diagnostics[0].code == "unexpected-payload"


def test_summaries() -> None:
    assert spec_of(Gemini).summary(chunk(text("hi"), finish="STOP", usage={"totalTokenCount": 5})) == \
        'text "hi", finish STOP, usage total 5'
    assert spec_of(Gemini).summary(chunk(text("x", thought=True), call("f", {"a": 1}, id="c"), index=1)) == \
        '[1] thought "x", [1] call f {"a":1}'
    assert spec_of(Gemini).summary({"promptFeedback": {"blockReason": "SAFETY"}}) == "prompt blocked SAFETY"
    assert spec_of(Gemini).summary({"error": {"code": 500}}).startswith("error ")
    assert spec_of(Gemini).summary([1]) == "[1]"


def test_data_without_the_space_is_read_and_noted_for_google_genai() -> None:
    result = fold(sse(chunk(text("hi"), finish="STOP")).replace(b"data: ", b"data:"))
    assert result.choices[0].content == "hi"
    assert codes(result) == ["data-without-space"]
    assert "data-without-space" not in codes(fold(sse(chunk(text("hi"), finish="STOP"))))


# -- the Result read back from JSON ---------------------------------------------------------------

ROUND_TRIP: dict[str, bytes] = {
    **{p.name: p.read_bytes() for p in sorted(CAPTURES.iterdir()) if p.suffix in (".sse", ".json")
       and not p.name.endswith(".expect.json")},
    # What the captures do not hold: whole parts, kept fields, logprobs, a streamed call left open.
    "whole-parts-fields-logprobs": sse(
        chunk(text("Let me compute it."), safetyRatings=[{"category": "X", "probability": "LOW"}],
              logprobsResult={"chosenCandidates": [{"token": "a"}], "topCandidates": [{"candidates": []}]}),
        chunk({"executableCode": {"language": "PYTHON", "code": "print(1)"}, "thoughtSignature": "U0lH"}),
        chunk(text("1", thought=True), finish="STOP", avgLogprobs=-0.5, index=1), chunk(text("x"), finish="STOP")),
    "streamed-call-left-open": sse(
        chunk({"functionCall": {"name": "book", "willContinue": True}}),
        chunk({"functionCall": {"partialArgs": [{"jsonPath": "$.a", "stringValue": "x"}], "willContinue": True}})),
}


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_a_result_read_back_from_json_is_equal_and_exports_the_same(name: str) -> None:
    result = fold(ROUND_TRIP[name])
    assert result.dialect == "gemini"
    assert_a_value(result)
