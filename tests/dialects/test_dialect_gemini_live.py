"""The Gemini Live API (`gemini-live`, issue 26 part 5): the first turn folded (its text, or the output
transcription of an audio turn), function calls and their cancellations, `interrupted`, `turnComplete` as the
finish, later turns listed; JSON in binary WebSocket messages read as text."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from feeding import tr_fold
from replay_helpers import by_name, fold_plan
from streamfold import Folder, fold
from streamfold.dialects import detect, spec_of
from streamfold.dialects.gemini import Gemini
from streamfold.dialects.gemini_live import GeminiLive
from streamfold.framing.websocket import message_line
from streamfold.replay import parse_fault, plan_response
from streamfold.replay.faults import refusal


def lines(*messages: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(message).encode() + b"\n" for message in messages)


def text(*pieces: str) -> dict[str, Any]:
    return {"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": piece} for piece in pieces]}}}


SETUP: dict[str, Any] = {"setupComplete": {}}
DONE: dict[str, Any] = {"serverContent": {"turnComplete": True}}


@pytest.mark.parametrize("value", [
    SETUP, DONE, {"serverContent": {"generationComplete": True}, "usageMetadata": {"totalTokenCount": 3}},
    {"toolCall": {"functionCalls": []}}, {"goAway": {"timeLeft": "5s"}}])
def test_claims_live_messages(value: dict[str, Any]) -> None:
    assert detect(value) is GeminiLive and not Gemini.claims(value)


@pytest.mark.parametrize("value", [
    {"usageMetadata": {"totalTokenCount": 3}}, {"candidates": [], "usageMetadata": {}},
    {"serverContent": {}, "candidates": []}, {"setupComplete": True}, {"type": "session.created", "event_id": "e"}])
def test_claims_no_other_message(value: dict[str, Any]) -> None:
    assert not GeminiLive.claims(value)


def test_a_text_turn_folds_clean_in_every_chunking() -> None:
    result = tr_fold(lines(SETUP, text("Hel", "lo"), text("!"), DONE))
    assert (result.dialect, result.complete, result.choices[0].content) == ("gemini-live", True, "Hello!")
    assert result.choices[0].finish_reason == "stop" and not result.diagnostics and not result.errors


def test_json_in_binary_websocket_messages_folds_as_text_and_other_bytes_are_said() -> None:
    def binary(value: Any) -> bytes:
        return message_line("receive", base64.b64encode(json.dumps(value).encode()).decode(), opcode=2)

    audio = message_line("receive", base64.b64encode(b"\x00\x01RIFF").decode(), opcode=2)
    result = tr_fold(binary(SETUP) + binary(text("Hi")) + audio + binary(DONE))
    assert (result.transport, result.dialect, result.choices[0].content) == ("websocket", "gemini-live", "Hi")
    assert result.complete and [d.code for d in result.diagnostics] == ["websocket-binary"]


def test_the_turn_waits_on_a_tool_call_and_output_after_it_resumes_it() -> None:
    call = {"toolCall": {"functionCalls": [{"id": "c1", "name": "lookup", "args": {"q": "x"}}]}}
    paused = fold(lines(SETUP, call))
    assert paused.complete and paused.choices[0].finish_reason == "tool_calls"
    assert paused.choices[0].finish_reason_raw == "toolCall" and paused.choices[0].tool_calls[0].parsed == {"q": "x"}
    resumed = fold(lines(SETUP, call, text("Found it.")))
    assert not resumed.complete and [d.code for d in resumed.diagnostics] == ["missing-terminal"]
    ended = fold(lines(SETUP, call, DONE))
    assert ended.choices[0].finish_reason == "tool_calls"  # nothing after the call: the client must answer it


def test_two_calls_of_one_id_stay_two_calls() -> None:
    calls = [{"id": "c1", "name": "a", "args": {"n": 1}}, {"id": "c1", "name": "b", "args": {"n": 2}},
             {"name": "c", "args": {}}]
    result = fold(lines(SETUP, {"toolCall": {"functionCalls": calls}}, DONE))
    assert [(call.name, call.parsed) for call in result.choices[0].tool_calls] == [("a", {"n": 1}), ("b", {"n": 2}),
                                                                                   ("c", {})]


def test_another_turn_can_be_the_lane_followed() -> None:
    folder = Folder("gemini-live")
    folder._dialect.lane = "2"  # (until the lane is an option of its own: issue 26 part 11)
    folder.feed(lines(SETUP, text("One."), DONE, text("Two."), DONE))
    result = folder.close()
    assert result.choices[0].content == "Two." and result.complete
    assert [d.code for d in result.diagnostics] == ["live-other-turns"] and "turn 1" in result.diagnostics[0].message
    assert result.native["turn"] == 2 and result.native["other_turns"] == [1]


def test_a_bare_error_object_is_an_in_stream_error() -> None:
    result = fold(lines(SETUP, text("a"), {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}))
    assert [error.code for error in result.errors] == ["in-stream-error"] and not result.complete


def test_every_turn_complete_reason_is_normalised() -> None:
    types = pytest.importorskip("google.genai.types")
    dialect = GeminiLive()
    assert {reason: dialect.normalise_finish(reason.value, False) for reason in types.TurnCompleteReason
            if dialect.normalise_finish(reason.value, False) == "other"} == {}
    assert dialect.normalise_finish("GENERATED_AUDIO_SAFETY", False) == "content_filter"


def test_the_frames_table_says_what_a_message_carries() -> None:
    summary = spec_of("gemini-live").summary
    audio = {"serverContent": {"modelTurn": {"parts": [{"inlineData": {"data": "AAEC"}}, {"inlineData": {"data": "AA=="}}]}}}
    assert summary(audio) == "audio (3 bytes), audio (1 bytes)"
    assert summary({"serverContent": {"turnComplete": True}, "usageMetadata": {}}) == "turnComplete, usageMetadata"
    assert summary({"toolCall": {"functionCalls": [{"name": "f"}]}}) == "toolCall f" and summary([]) == "not a Live message"


def test_there_is_no_non_streaming_object_to_export() -> None:
    with pytest.raises(NotImplementedError):
        fold(lines(SETUP, text("a"), DONE)).export()


def test_the_replay_server_breaks_it_as_the_api_would() -> None:
    recording = by_name("gemini-live/tool-call-then-answer")
    errored = fold_plan(plan_response(recording, [parse_fault("error-event:3")]))
    assert [error["code"] for error in errored["errors"]] == ["in-stream-error"] and not errored["complete"]
    cut = fold_plan(plan_response(recording, [parse_fault("no-terminal")]))
    assert not cut["complete"] and "missing-terminal" in [d["code"] for d in cut["diagnostics"]]
    assert cut["usage"] is not None  # the last message's usage stays, its end taken out
    refused = plan_response(recording, [parse_fault("http-error:503")])
    assert refused.status == 503 and json.loads(refused.body)["error"]["status"] == "UNAVAILABLE"
    sentence = refusal([parse_fault("cumulative-args")], transport="ndjson", dialect="gemini-live", frames=6)
    assert sentence is not None and "whole" in sentence
