"""Anthropic's legacy Text Completions (`/v1/complete`): its own dialect, where it was read as Messages
(`anthropic`), every piece of text dropped and a false `missing-terminal` said (issue 26, part 9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from feeding import tr_fold
from replay_helpers import by_name, fold_plan
from streamfold import fold
from streamfold.dialects import detect, spec_of
from streamfold.dialects.anthropic import Anthropic
from streamfold.dialects.anthropic_completions import AnthropicCompletions
from streamfold.replay import parse_fault, plan_response
from streamfold.replay.faults import refusal

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "anthropic-completions"
SPEC = spec_of("anthropic-completions")


def completion(text: str, stop_reason: str | None = None, **extra: object) -> bytes:
    payload = {"type": "completion", "id": "compl_1", "completion": text, "stop_reason": stop_reason,
               "model": "claude-2.1", **extra}
    return b"event: completion\ndata: " + json.dumps(payload).encode() + b"\n\n"


@pytest.mark.parametrize("value", [
    {"type": "completion", "completion": " Hi", "stop_reason": None, "model": "claude-2.1", "id": "compl_1"},
    {"completion": " Hi", "stop_reason": None, "model": "claude-instant-1.2", "log_id": "x"}])
def test_claims_the_completion_event_with_or_without_its_type(value: dict[str, object]) -> None:
    assert detect(value) is AnthropicCompletions and not Anthropic.claims(value)


@pytest.mark.parametrize("value", [
    {"type": "completion", "completion": 3, "stop_reason": None}, {"type": "message_start", "completion": "x"},
    {"completion": "x"}, {"object": "text_completion", "choices": [{"text": "x", "index": 0}]}, {"type": "ping"}])
def test_claims_nothing_else(value: dict[str, object]) -> None:
    assert not AnthropicCompletions.claims(value)


def test_the_stream_that_was_read_as_messages_folds_clean_in_every_chunking() -> None:
    data = completion(" Hello") + b'event: ping\ndata: {"type": "ping"}\n\n' + completion(" there!") + \
        completion("", "stop_sequence", stop="\n\nHuman:")
    result = tr_fold(data)
    assert (result.dialect, result.complete, result.model, result.id) == ("anthropic-completions", True, "claude-2.1",
                                                                         "compl_1")
    assert result.choices[0].content == " Hello there!" and result.choices[0].finish_reason == "stop"
    assert not result.errors and not result.diagnostics


def test_a_completion_after_the_stop_reason_still_folds() -> None:
    result = fold(completion(" a", "max_tokens") + completion(" b"))
    assert result.choices[0].content == " a b" and result.complete and not result.diagnostics


def test_an_error_without_its_type_is_an_in_stream_error() -> None:
    result = fold(completion(" a") + b'data: {"error": {"type": "api_error", "message": "boom"}}\n\n')
    assert [error.code for error in result.errors] == ["in-stream-error"] and "boom" in result.errors[0].message
    assert result.choices[0].finish_reason == "error" and not result.complete


def test_a_payload_of_another_shape_is_named_once_and_ignored() -> None:
    result = fold(completion(" a") + b'data: {"other": 1}\n\ndata: {"other": 2}\n\n' + completion("", "stop_sequence"))
    assert [diagnostic.code for diagnostic in result.diagnostics] == ["unexpected-payload"]
    assert result.choices[0].content == " a" and result.complete


@pytest.mark.parametrize("path", sorted(CAPTURES.glob("*.sse")), ids=lambda path: path.stem)
def test_the_export_is_a_completion_that_reads_back_as_the_result(path: Path) -> None:
    result = fold(path.read_bytes())
    exported = result.export()
    assert exported["type"] == "completion" and exported["completion"] == result.choices[0].content
    assert exported["stop_reason"] == result.choices[0].finish_reason_raw and exported["model"] == result.model
    facts = SPEC.read_response(exported)
    assert facts is not None and facts["content"] == result.choices[0].content
    assert SPEC.read_response({"type": "message", "content": []}) is None


def test_the_replay_server_breaks_it_as_the_api_would() -> None:
    recording = by_name("anthropic-completions/text-stop-sequence")
    errored = fold_plan(plan_response(recording, [parse_fault("error-event:4")]))
    assert [error["code"] for error in errored["errors"]] == ["in-stream-error"] and not errored["complete"]
    cut = fold_plan(plan_response(recording, [parse_fault("no-terminal")]))
    assert not cut["complete"] and "missing-terminal" in [d["code"] for d in cut["diagnostics"]]
    assert cut["choices"][0]["content"] == " Here are three colours: red, green and blue."
    refused = plan_response(recording, [parse_fault("http-error:529")])
    assert refused.status == 529 and json.loads(refused.body)["error"]["type"] == "overloaded_error"
    assert "error-response" in [d["code"] for d in fold_plan(refused)["diagnostics"]]
    sentence = refusal([parse_fault("cumulative-args")], transport="sse", dialect="anthropic-completions", frames=13)
    assert sentence is not None and "no tool calls" in sentence
